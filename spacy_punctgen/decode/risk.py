"""Minimum Bayes risk at one slot: token edit distances between punctuation strings (Myers'
bit-parallel algorithm, vectorised over many pairs), the risk's weights, the index of the least
risky candidate, and what a decoder returns per slot (:class:`SlotChoice`).

Every decoder (:mod:`.marginal`, :mod:`.sample_choice`, the reference
:mod:`spacy_punctgen.testing.exact_mbr`) scores its candidates with these functions, so that
their risks are the same integers and floats.
"""
from __future__ import annotations

import math
from typing import Dict, List, NamedTuple, Sequence, Tuple

import numpy as np

from spacy_punctgen.errors import Errors

#: edit distances: pairs per block × 64-bit words per pair, bounding the DP state (~8 arrays of this many words)
EDIT_BLOCK_WORDS = 1 << 17

Surface = Tuple[str, ...]


class SlotChoice(NamedTuple):
    """The decoded string of one slot and the model's probability of it at that slot
    (exact for ``"marginal"``, the sample frequency otherwise)."""

    surface: Tuple[str, ...]
    prob: float


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two token sequences (insert/delete/substitute = 1)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, ta in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, tb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ta != tb))
        prev = cur
    return prev[-1]


def _pad(strings: Sequence[Sequence[int]], lengths: np.ndarray, fill: int) -> np.ndarray:
    out = np.full((len(strings), max(int(lengths.max(initial=0)), 1)), fill, dtype=np.int64)
    for r, x in enumerate(strings):
        out[r, :len(x)] = x
    return out


def _myers(a: np.ndarray, la: np.ndarray, b: np.ndarray, lb: np.ndarray, n_sym: int) -> np.ndarray:
    """Levenshtein distances between the rows of ``a`` and of ``b`` (symbols ``0..n_sym-1``,
    lengths ``la``/``lb``, padded with ``n_sym``): Myers' bit-parallel algorithm (J. ACM 1999,
    block form, global alignment), each DP column of a pair in ``⌈max(la)/64⌉`` machine words,
    vectorised over all pairs."""
    r, c, W = len(la), len(lb), max(1, -(-int(la.max()) // 64))
    one, top = np.uint64(1), np.uint64(63)
    peq = np.zeros((r, n_sym + 1, W), dtype=np.uint64)  # bit p of peq[row, s]: a[row, p] == s
    rows = np.arange(r)
    for p in range(int(la.max())):
        on = rows[la > p]
        peq[on, a[on, p], p // 64] |= one << np.uint64(p % 64)
    pv = np.full((r, c, W), ~np.uint64(0), dtype=np.uint64)  # vertical deltas +1 (column 0: D[i][0] = i)
    mv = np.zeros((r, c, W), dtype=np.uint64)
    score = np.repeat(la[:, None], c, axis=1)  # D[la][t], tracked along the last row
    last = np.maximum(la - 1, 0)
    last_word, last_bit = last // 64, (last % 64).astype(np.uint64)[:, None]
    for t in range(int(lb.max(initial=0))):
        live = (lb > t)[None, :]
        eq_t = peq[:, b[:, t], :]
        h_p = np.ones((r, c), dtype=np.uint64)  # row 0: D[0][t] = t
        h_m = np.zeros((r, c), dtype=np.uint64)
        for w in range(W):
            p, m = pv[..., w], mv[..., w]
            xv = eq_t[..., w] | m
            eq = eq_t[..., w] | h_m
            xh = (((eq & p) + p) ^ p) | eq
            ph = m | ~(xh | p)
            mh = p & xh
            here = (last_word == w)[:, None] & live
            score += here * (((ph >> last_bit) & one).astype(np.int64) - ((mh >> last_bit) & one).astype(np.int64))
            out_p, out_m = ph >> top, mh >> top
            ph = (ph << one) | h_p
            mh = (mh << one) | h_m
            pv[..., w] = mh | ~(xv | ph)
            mv[..., w] = ph & xv
            h_p, h_m = out_p, out_m
    return np.where(la[:, None] == 0, lb[None, :], score)


def edit_matrix(A: Sequence[Sequence], B: Sequence[Sequence]) -> np.ndarray:
    """Token edit distances between every string of ``A`` and every string of ``B`` (int64
    ``(|A|, |B|)``), equal to :func:`metrics.edit_distance`'s.  Time ``O(|A|·|B|·max|b|·⌈max|a|/64⌉)``;
    memory bounded: pairs are taken in blocks of at most ``EDIT_BLOCK_WORDS`` machine words of state."""
    m, k = len(A), len(B)
    out = np.empty((m, k), dtype=np.int64)
    if m == 0 or k == 0:
        return out
    syms: Dict[object, int] = {}
    ea = [[syms.setdefault(t, len(syms)) for t in x] for x in A]
    eb = [[syms.setdefault(t, len(syms)) for t in x] for x in B]
    la = np.array([len(x) for x in ea], dtype=np.int64)
    lb = np.array([len(x) for x in eb], dtype=np.int64)
    a, b = _pad(ea, la, len(syms)), _pad(eb, lb, len(syms))
    order = np.argsort(la, kind="stable")  # blocks of rows with one word count
    words = np.maximum(1, -(-la[order] // 64))
    r0 = 0
    while r0 < m:
        W = int(words[r0])
        cols = min(k, max(1, EDIT_BLOCK_WORDS // W))
        rows = min(max(1, EDIT_BLOCK_WORDS // (cols * W)), int(np.searchsorted(words, W, side="right")) - r0)
        sel = order[r0:r0 + rows]
        for c0 in range(0, k, cols):
            out[sel[:, None], np.arange(c0, min(k, c0 + cols))[None, :]] = _myers(
                a[sel], la[sel], b[c0:c0 + cols], lb[c0:c0 + cols], len(syms))
        r0 += rows
    return out


def _myers_pairs(a: np.ndarray, la: np.ndarray, b: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Levenshtein distances of the row pairs ``(a[p], b[p])`` (int64, lengths ``la``/``lb`` at
    most 64, padding never equal to a symbol): Myers' algorithm in one machine word per pair,
    vectorised over the pairs."""
    P = len(la)
    one = np.uint64(1)
    bit = one << np.arange(a.shape[1], dtype=np.uint64)
    pv = np.full(P, ~np.uint64(0), dtype=np.uint64)
    mv = np.zeros(P, dtype=np.uint64)
    score = la.astype(np.int64)
    last_bit = np.maximum(la - 1, 0).astype(np.uint64)
    for t in range(int(lb.max(initial=0))):
        live = lb > t
        eq = np.bitwise_or.reduce(np.where(a == b[:, t:t + 1], bit, np.uint64(0)), axis=1)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        score += live * (((ph >> last_bit) & one).astype(np.int64) - ((mh >> last_bit) & one).astype(np.int64))
        ph = (ph << one) | one  # row 0: D[0][t] = t
        mh = mh << one
        pv = mh | ~(xv | ph)  # (a pair past its end no longer scores)
        mv = ph & xv
    return np.where(la == 0, lb, score)


_GATHER = 1 << 20  # pair_distances: symbols gathered at once


def pair_distances(pad: np.ndarray, lens: np.ndarray, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Edit distances of the strings ``pa[p]`` and ``pb[p]`` (rows of ``pad``, padded with -1, at
    most 64 long).  An empty string is as far as the other's length, a single symbol ``x`` is
    ``len(other) - [x in other]`` away; longer pairs go to :func:`_myers_pairs`, the longer string
    of each pair in the bits and its shorter one read symbol by symbol, grouped by that length."""
    la, lb = lens[pa], lens[pb]
    swap = la < lb
    lng, sht = np.where(swap, pb, pa), np.where(swap, pa, pb)
    L, S = lens[lng], lens[sht]
    d = L.copy()  # S == 0
    for k in np.unique(S[S > 0]):
        idx = np.flatnonzero(S == k)
        width = int(L[idx].max())
        step = max(1, _GATHER // width)  # at most about _GATHER symbols gathered at once
        for a in range(0, len(idx), step):
            sub = idx[a:a + step]
            if k == 1:
                d[sub] -= (pad[lng[sub], :width] == pad[sht[sub], :1]).any(axis=1)
            else:
                d[sub] = _myers_pairs(pad[lng[sub], :width], L[sub], pad[sht[sub], :k], S[sub])
    return d


def expected_distances(candidates: Sequence[Tuple], support: Sequence[Tuple], weights: Sequence[float]) -> np.ndarray:
    """Each candidate's expected edit distance ``Σ_s w(s)·d(c, s)`` (float64), one matrix-vector
    product over :func:`edit_matrix`.  ValueError for no candidates or no support."""
    if not len(candidates) or not len(support):
        raise ValueError(Errors.E124)
    if len(weights) != len(support):
        raise ValueError(Errors.E125.format(n_support=len(support), n_weights=len(weights)))
    syms: Dict[object, int] = {}
    enc = [[tuple(syms.setdefault(t, len(syms)) for t in x) for x in xs] for xs in (candidates, support)]
    return edit_matrix(enc[0], enc[1]).astype(np.float64) @ np.asarray(weights, dtype=np.float64)


def mbr_index(candidates: Sequence[Tuple], support: Sequence[Tuple], weights: Sequence[float]) -> int:
    """Index of the candidate with the least expected edit distance ``Σ_s w(s)·d(c, s)``
    (ties: the earliest candidate).  ValueError for no candidates or no support."""
    return int(np.argmin(expected_distances(candidates, support, weights)))


def risk_weights(marg: Dict[tuple, float], support: Sequence[tuple], empty_weight: float = 1.0) -> List[float]:
    """The support strings' weights in the MBR risk: their probabilities, the empty string's times
    ``empty_weight`` (1: the expected edit distance; below 1 a missed mark costs more than a
    spurious one, which trades precision for recall; :func:`check_empty_weight`)."""
    return [marg[x] * (empty_weight if len(x) == 0 else 1.0) for x in support]


def check_empty_weight(empty_weight, method: str = "marginal") -> float:
    """``empty_weight`` a finite number above 0 (E885); other than 1 only for the deterministic
    decoder, ``"marginal"`` (E886)."""
    if isinstance(empty_weight, bool) or not isinstance(empty_weight, (int, float)) \
            or not math.isfinite(empty_weight) or empty_weight <= 0:
        raise ValueError(Errors.E885.format(value=empty_weight))
    if empty_weight != 1 and method != "marginal":
        raise ValueError(Errors.E886.format(method=method))
    return float(empty_weight)
