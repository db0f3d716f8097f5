"""The ``punctgen`` component's scorer, registered as ``spacy_punctgen.punct_scorer.v1``.

``[components.punctgen.scorer]`` of a pipeline's config names it::

    [components.punctgen.scorer]
    @scorers = "spacy_punctgen.punct_scorer.v1"

:meth:`PunctGen.score` (and so ``spacy train``'s evaluation and ``spacy evaluate``) calls it
with the component's model and restoration settings.  It reads the Examples' *reference*
Docs only (gold trees and punctuation) and reports

* ``punct_ppl``: the per-slot perplexity of the reference punctuation given the reference
  trees (the evaluation distribution of ``PunctModel.perplexity``);
* ``punct_lp``: ``-ln punct_ppl`` (higher is better: the one weighted in model selection);
* ``punct_aed``: the AED of restoring the reference punctuation from the reference trees.

All three are None when no reference Doc has a UD parse.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Iterable, Optional

from spacy import registry
from spacy.training import Example

from spacy_punctgen.pipeline.doc_convert import gold_sentences

PUNCT_SCORER = "spacy_punctgen.punct_scorer.v1"
SCORE_KEYS = ("punct_ppl", "punct_lp", "punct_aed")


def punct_score(examples: Iterable[Example], *, punct_model, quote_xpos: bool = False,
                restore_method: str = "marginal", n_samples: int = 1000, seed: int = 0,
                **kwargs: Any) -> Dict[str, Optional[float]]:
    """``punct_ppl``, ``punct_lp`` and ``punct_aed`` of ``punct_model`` on the Examples'
    reference Docs; the restoration uses :func:`spacy_punctgen.decode.mbr.restore_sentence`
    with ``restore_method``, ``n_samples`` and ``seed``.  Other keyword arguments (the rest
    of a component's settings) are ignored."""
    from spacy_punctgen.decode.mbr import restore_sentence
    from spacy_punctgen.evaluation.metrics import aed, gold_slots

    sents = gold_sentences([eg.reference for eg in examples], quote_xpos=quote_xpos)
    if not sents:
        return {key: None for key in SCORE_KEYS}
    ppl = punct_model.perplexity(punct_model.prepare_eval(sents))["perplexity_per_slot"]
    pred = [[tuple(choice.surface) for choice in restore_sentence(punct_model, s, method=restore_method,
                                                                   n_samples=n_samples, seed=seed)]
            for s in sents]
    return {"punct_ppl": ppl, "punct_lp": -math.log(ppl), "punct_aed": aed(gold_slots(sents), pred)["aed"]}


@registry.scorers(PUNCT_SCORER)
def make_punct_scorer() -> Callable[..., Dict[str, Optional[float]]]:
    return punct_score
