"""The model's settings, one set of defaults for training, the component and the CLI.

Why one dataclass: ``punctgen train`` (:class:`~spacy_punctgen.training.train.TrainConfig`
extends this), the ``punctgen`` component (its ``[components.punctgen.model_settings]`` block)
and the CLI's flags all build a :class:`~spacy_punctgen.model.punct_model.PunctModel` from these
values, so they must not drift apart. The defaults are those every shipped model and every
tuned run of the workflow used.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from spacy_punctgen.errors import Errors

#: the channel: ``full`` (ATTACH + NOISYCHANNEL) or ``attach`` (no channel: paper §4's baseline)
CHANNELS = ("full", "attach")


@dataclass
class ModelSettings:
    channel: str = "full"
    direction: str = "r2l"  # the order of a node's dependents in the DP: l2r | r2l (training also takes auto)
    xi: float = 0.0  # the smoothing pairs' share of W_d (docs/model.md §5)
    min_count: int = 5  # marks and pairs seen fewer times fall back to <unk> / are not allowed
    pairs_mode: str = "halves"
    templates: Optional[List[str]] = None  # feature templates (None: the defaults, docs/features.md)
    psi_init: float = 1.0  # std of ψ's initial N(0, ·) (paper: 1)
    psi_keep_bias: float = 3.0  # added to the initial keep logits (start near the identity channel)
    psi_lr_scale: float = 10.0  # ψ's learning rate = lr * psi_lr_scale (ψ is small and dense)
    smooth_delta: float = 1e-3  # evaluation-time smoothing mass; 0 = off

    @classmethod
    def from_dict(cls, values: Optional[Dict[str, Any]]) -> "ModelSettings":
        """Settings from a config block (E008 for a key that is not a setting)."""
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(ModelSettings)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(Errors.E008.format(name="model_settings", allowed=sorted(known), value=unknown))
        return cls(**values)

    def model_dict(self) -> Dict[str, Any]:
        """The model's settings only (a subclass's other fields left out), JSON-ready."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(ModelSettings)}
        out["templates"] = list(out["templates"]) if out["templates"] else None
        return out


def default_model_settings() -> Dict[str, Any]:
    """The defaults as a config block."""
    return ModelSettings().model_dict()
