"""The ``punctgen`` component's thinc model, a registered architecture.

``[components.punctgen.thinc_model]`` of a pipeline's config names it::

    [components.punctgen.thinc_model]
    @architectures = "spacy_punctgen.PunctModel.v1"

It holds only the float32 parameters ``theta`` (F,) and ``psi`` (S, S, 4) of the component's
:class:`~spacy_punctgen.model.punct_model.PunctModel`, so that spaCy's optimizer (and its
parameter averages, via ``use_params``) updates them.  The math lives in the PunctModel (the
Cython DP), not in thinc layers; the component sets the arrays when it gets a model
(``initialize``, a ``model`` path, the shipped model or deserialisation).
"""
from __future__ import annotations

from typing import Any

from spacy import registry
from thinc.api import Model

PUNCT_MODEL_ARCHITECTURE = "spacy_punctgen.PunctModel.v1"


@registry.architectures(PUNCT_MODEL_ARCHITECTURE)
def build_punct_model() -> Model:
    """A thinc Model holding ``theta`` and ``psi``; its forward returns the two arrays, its
    backward adds the given gradients with ``inc_grad``."""
    return Model("punctgen_params", _params_forward, params={"theta": None, "psi": None})


def _params_forward(model: Model, X: Any, is_train: bool):
    params = (model.get_param("theta"), model.get_param("psi"))

    def backprop(d_params):
        d_theta, d_psi = d_params
        model.inc_grad("theta", d_theta)
        model.inc_grad("psi", d_psi)
        return X

    return params, backprop
