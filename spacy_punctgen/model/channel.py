"""NOISYCHANNEL parameters: one softmax over the 4 edits per bigram (docs/model.md §2).

Why logits: ``ψ[a, b, :]`` (float32, trained by Adam) are unconstrained; the DP
wants probabilities ``φ[a, b, e] = softmax_e ψ[a, b, e]`` in float64.  The
gradient of ``log p(x|T)`` wrt ψ follows from the expected edit counts ``c``
of the inside-outside pass (Eisner 2016): ``∂/∂ψ[a,b,e] = c[a,b,e] − φ[a,b,e]·Σ_e' c[a,b,e']``.
The same formula turns the tilted counts ``dc`` into ``∂E[c(T')]/∂ψ``.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.errors import Errors
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
    raise ValueError(Errors.E223.format(direction=direction))


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


# ---------------------------------------------------------------------------
# The channel's semantics, once (docs/model.md §2).  The compiled DP (cython_ext/dp.pyx)
# inverts the same machine; the brute-force tests check it against these functions.

#: What each edit does with the pending symbol ``a`` and the next underlying symbol ``b``:
#: (which of them is written to the surface, or None; which of them is left pending).
EDIT_RULES: Dict[int, Tuple[Optional[str], str]] = {
    KEEP: ("a", "b"),  # write a; b is pending
    ABSORB_LEFT: (None, "a"),  # b is absorbed into a
    ABSORB_RIGHT: (None, "b"),  # a is absorbed into b
    TRANSPOSE: ("b", "a"),  # write b; a stays pending (the pair is swapped)
}

#: A channel state: (pending symbol, or -1 before the first symbol is read; surface written so far).
State = Tuple[int, Tuple[int, ...]]


def apply_edit(edit: int, a: int, b: int) -> Tuple[Optional[int], int]:
    """``(written symbol or None, pending symbol)`` after ``edit`` on the bigram ``(a, b)``."""
    written, pending = EDIT_RULES[edit]
    pick = {"a": a, "b": b}
    return (pick[written] if written else None), pick[pending]


def channel_step(states: Dict[State, float], b: int, phi: np.ndarray, use_max: bool = False
                 ) -> Dict[State, float]:
    """Read one underlying symbol ``b`` from every state: one edit per bigram (pending -1:
    ``b`` becomes pending).  Equal states merge by sum (or by max: the best edit path)."""
    nxt: Dict[State, float] = {}

    def put(key: State, p: float) -> None:
        old = nxt.get(key)
        nxt[key] = p if old is None else (max(old, p) if use_max else old + p)

    for (a, out), p in states.items():
        if a < 0:
            put((b, out), p)
            continue
        for edit in EDITS:
            q = float(phi[a, b, edit])
            if q > 0.0:
                written, pending = apply_edit(edit, a, b)
                put((pending, out if written is None else out + (written,)), p * q)
    return nxt


def finish(states: Dict[State, float], r2l: bool, use_max: bool = False) -> Dict[Tuple[int, ...], float]:
    """The surface strings of the final states: the pending symbol is written last; R2L
    machines read and write reversed, so their strings are turned back."""
    out: Dict[Tuple[int, ...], float] = {}
    for (a, written), p in states.items():
        x = written + (a,) if a >= 0 else written
        if r2l:
            x = x[::-1]
        old = out.get(x)
        out[x] = p if old is None else (max(old, p) if use_max else old + p)
    return out


def channel_distribution(u: Sequence[int], phi: np.ndarray, r2l: bool, use_max: bool = False
                         ) -> Dict[Tuple[int, ...], float]:
    """``p(x | u)`` for every surface string ``x`` (symbol ids) the channel makes of ``u``
    (with ``use_max``: the probability of the best edit path).  Exponential in ``len(u)`` at
    worst: for tests, references and short strings."""
    u = tuple(int(s) for s in u)
    if not u:
        return {(): 1.0}
    states: Dict[State, float] = {(-1, ()): 1.0}
    for b in (u[::-1] if r2l else u):
        states = channel_step(states, b, phi, use_max)
    return finish(states, r2l, use_max)


def channel_prob(u: Sequence[int], x: Sequence[int], phi: np.ndarray, r2l: bool, use_max: bool = False) -> float:
    """``p(x | u)`` (or the best single edit path's probability with ``use_max``)."""
    return channel_distribution(u, phi, r2l, use_max).get(tuple(int(s) for s in x), 0.0)


#: per edit: whether it writes a, whether it writes b, whether b is left pending (the vectorised
#: channel samplers, here and in decode/sampling.py, index these by edit)
WRITES_A = np.array([EDIT_RULES[e][0] == "a" for e in range(N_EDITS)])
WRITES_B = np.array([EDIT_RULES[e][0] == "b" for e in range(N_EDITS)])
PENDS_B = np.array([EDIT_RULES[e][1] == "b" for e in range(N_EDITS)])


def sample_channel(u: Sequence[int], phi: np.ndarray, r2l: bool, uniforms: np.ndarray) -> np.ndarray:
    """One surface string per row of ``uniforms`` (``(c, len(u) - 1)``), drawn by running the
    channel on ``u`` with one edit per bigram: int64 ``(c, len(u))`` rows, padded with -1."""
    seq = np.asarray(u, dtype=np.int64)[::-1] if r2l else np.asarray(u, dtype=np.int64)
    c, L = uniforms.shape[0], len(seq)
    out = np.full((c, max(L, 1)), -1, dtype=np.int64)
    if L == 0:
        return out[:, :0]
    rows = np.arange(c)
    pending = np.full(c, seq[0], dtype=np.int64)
    pos = np.zeros(c, dtype=np.int64)
    for t in range(1, L):
        b = seq[t]
        cdf = np.cumsum(phi[pending, b], axis=1)
        e = np.argmax(uniforms[:, t - 1, None] * cdf[:, -1:] < cdf, axis=1)
        emit = WRITES_A[e] | WRITES_B[e]
        out[rows[emit], pos[emit]] = np.where(WRITES_A[e[emit]], pending[emit], b)
        pos += emit
        pending = np.where(PENDS_B[e], b, pending)
    out[rows, pos] = pending
    pos += 1
    if r2l:  # reverse each row's filled prefix
        idx = pos[:, None] - 1 - np.arange(L)[None, :]
        out = np.where(idx >= 0, np.take_along_axis(out, np.maximum(idx, 0), axis=1), -1)
    return out
