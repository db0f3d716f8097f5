"""A new, initialised model from gold sentences and :class:`ModelSettings`.

Why here: the ``punctgen`` component's ``initialize`` (``spacy train``) and ``punctgen train``
start a model the same way: inventory and feature dictionary from the training sentences, θ
and ψ drawn as the settings say.
"""
from __future__ import annotations

from typing import Any, Dict, Sequence

from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.features.templates import FeatureConfig
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.model.settings import ModelSettings


def initial_model(sents: Sequence[PunctSentence], settings: ModelSettings, meta: Dict[str, Any],
                  seed: int = 0) -> PunctModel:
    """A :class:`PunctModel` of ``sents``' inventory and features, initialised (``seed``) and ready
    to train; ``meta`` is recorded in it."""
    inventory = PunctInventory.from_sentences(sents, min_count=settings.min_count, pairs_mode=settings.pairs_mode)
    features = FeatureConfig(templates=list(settings.templates)) if settings.templates else FeatureConfig()
    pm = PunctModel(inventory, features, mode=settings.channel, direction=settings.direction, xi=settings.xi,
                    smooth_delta=settings.smooth_delta, meta=dict(meta))
    pm.initialize(pm.prepare_all(sents), seed=seed, psi_scale=settings.psi_init,
                  psi_keep_bias=settings.psi_keep_bias)
    return pm
