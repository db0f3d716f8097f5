"""NOISYCHANNEL parameters: one softmax over the 4 edits per bigram (docs/model.md §2).

Why logits: ``ψ[a, b, :]`` (float32, trained by Adam) are unconstrained; the DP
wants probabilities ``φ[a, b, e] = softmax_e ψ[a, b, e]`` in float64.  The
gradient of ``log p(x|T)`` wrt ψ follows from the expected edit counts ``c``
of the inside-outside pass (Eisner 2016): ``∂/∂ψ[a,b,e] = c[a,b,e] − φ[a,b,e]·Σ_e' c[a,b,e']``.
The same formula turns the tilted counts ``dc`` into ``∂E[c(T')]/∂ψ``.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from spacy_punctgen.inference.dp import ABSORB_LEFT, ABSORB_RIGHT, KEEP, TRANSPOSE

N_EDITS = 4
EDITS = (KEEP, ABSORB_LEFT, ABSORB_RIGHT, TRANSPOSE)
DIRECTIONS = ("l2r", "r2l")


def parse_direction(direction: str) -> str:
    """Normalise a direction name (``l2r``/``L``/``left`` or ``r2l``/``R``/``right``)."""
    d = str(direction).strip().lower()
    if d in ("l2r", "l", "left", "ltr", "left-to-right"):
        return "l2r"
    if d in ("r2l", "r", "right", "rtl", "right-to-left"):
        return "r2l"
    raise ValueError(f"channel direction must be 'l2r' or 'r2l', not {direction!r}")


def is_r2l(direction: str) -> bool:
    return parse_direction(direction) == "r2l"


def init_psi(n_symbols: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """Initial logits ``~ N(0, scale²)`` (paper: N(0, 1)), float32 ``[S, S, 4]``."""
    psi = rng.standard_normal((n_symbols, n_symbols, N_EDITS)) * scale
    return psi.astype(np.float32)


def bos_edit_mask(n_symbols: int, r2l: bool, bos: int = 0) -> np.ndarray:
    """Allowed edits (bool ``[S, S, 4]``): everything except those that delete or move ``^``.

    Every observed slot 0 starts with ``^``, so an edit that deletes ``^`` or emits a
    token before it would send probability to surfaces that never occur, and
    ``Σ_x p(x|T)`` would fall short of 1.  L2R reads ``^`` first, as the pending ``a`` of
    ``(^, b)``: absorb-right and transpose are forbidden there.  R2L reads ``^`` last,
    as the ``b`` of ``(a, ^)``: absorb-left and transpose are forbidden.
    """
    mask = np.ones((n_symbols, n_symbols, N_EDITS), dtype=bool)
    if r2l:
        mask[:, bos, ABSORB_LEFT] = False
        mask[:, bos, TRANSPOSE] = False
    else:
        mask[bos, :, ABSORB_RIGHT] = False
        mask[bos, :, TRANSPOSE] = False
    return mask


def channel_probs(psi: np.ndarray, mask: Optional[np.ndarray] = None) -> np.ndarray:
    """``φ = softmax(ψ)`` over the edit axis, float64; edits where ``mask`` is False get 0."""
    z = np.array(psi, dtype=np.float64)  # a copy: edited in place below
    if mask is not None:
        z[~np.broadcast_to(mask, z.shape)] = -np.inf
    if z.shape[-1] != N_EDITS:
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)
    # the 4 edits spelled out: the same values, bit for bit, as max/sum over the last axis,
    # ~5x faster (NumPy's reductions over a length-4 axis are slow; the trainer calls this
    # once per step)
    z -= np.maximum(np.maximum(z[..., 0], z[..., 1]), np.maximum(z[..., 2], z[..., 3]))[..., None]
    e = np.exp(z, out=z)
    tot = e[..., 0] + e[..., 1]
    tot += e[..., 2]
    tot += e[..., 3]
    e /= tot[..., None]
    return e


def identity_channel(n_symbols: int) -> np.ndarray:
    """The ATTACH ablation's channel: ``keep`` with probability 1."""
    phi = np.zeros((n_symbols, n_symbols, N_EDITS), dtype=np.float64)
    phi[..., KEEP] = 1.0
    return phi


def channel_grad(phi: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """∂/∂ψ of ``Σ c[a,b,e] log φ[a,b,e]`` for (possibly tilted / signed) counts ``c``."""
    counts = np.asarray(counts, dtype=np.float64)
    return counts - phi * counts.sum(axis=-1, keepdims=True)
