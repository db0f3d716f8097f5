"""Slow, obviously-correct references for the Cython DP (tests and benchmarks use them).

* :func:`channel_prob` enumerates every edit path of the sliding-window channel.
* :func:`brute_force` enumerates every underlying tree ``T'`` (one candidate pair per
  node) and every edit path: ``p(x|T)``, posterior marginals, the best derivation.
* :func:`numpy_inside` is docs/model.md §3's Algorithm 1 with dense automaton matrices
  ``M_i(σ)`` built explicitly, in plain NumPy (rescaled per node).
"""
from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Dict, List, Sequence, Tuple

import numpy as np

from spacy_punctgen.inference.dp import ABSORB_LEFT, ABSORB_RIGHT, KEEP, TRANSPOSE, Grammar, Lattice
from spacy_punctgen.data.underlying import underlying_sequences


def channel_prob(u: Sequence[int], x: Sequence[int], phi: np.ndarray, r2l: bool, use_max: bool = False) -> float:
    """p(x | u) (or the best single edit path) by enumerating edit sequences."""
    u, x = tuple(u), tuple(x)
    if r2l:
        u, x = u[::-1], x[::-1]
    if not u:
        return 1.0 if not x else 0.0
    comb = max if use_max else (lambda a, b: a + b)

    @lru_cache(maxsize=None)
    def go(pos: int, pending: int, k: int) -> float:
        # pending symbol, next underlying index pos, surface tokens emitted k
        if pos == len(u):
            return 1.0 if (k == len(x) - 1 and x[k] == pending) else 0.0
        b = u[pos]
        ph = phi[pending, b]
        total = 0.0
        # keep: output pending, b pending
        opts = []
        if k < len(x) and x[k] == pending:
            opts.append(ph[KEEP] * go(pos + 1, b, k + 1))
        opts.append(ph[ABSORB_LEFT] * go(pos + 1, pending, k))
        opts.append(ph[ABSORB_RIGHT] * go(pos + 1, b, k))
        if k < len(x) and x[k] == b:
            opts.append(ph[TRANSPOSE] * go(pos + 1, pending, k + 1))
        for o in opts:
            total = comb(total, o)
        return total

    return go(1, u[0], 0)


def underlying_slots(heads: Sequence[int], choice: Sequence[Tuple[int, int]], grammar: Grammar) -> List[List[int]]:
    """u_i of every slot (symbol ids) for puncteme ids ``choice[w] = (l, r)``; slot 0 starts with '^'."""
    slots = underlying_sequences(heads, [(grammar.punctemes[l], grammar.punctemes[r]) for l, r in choice])
    slots[0] = [0] + slots[0]
    return slots


def brute_force(grammar: Grammar, heads, slot_syms, node_cands, node_p, phi, r2l):
    """Enumerate all T'. node_cands[w]: (c,2) pairs; node_p[w]: their probabilities.

    Returns dict with Z, marginals (list of arrays per node), best (max of joint
    derivation probability) and best_choice (row per node).
    """
    n = len(heads)
    Z = 0.0
    marg = [np.zeros(len(c)) for c in node_cands]
    best, best_choice = 0.0, None
    for rows in itertools.product(*[range(len(c)) for c in node_cands]):
        prior = 1.0
        choice = []
        for w, r in enumerate(rows):
            prior *= node_p[w][r]
            choice.append(tuple(int(v) for v in node_cands[w][r]))
        if prior == 0.0:
            continue
        us = underlying_slots(heads, choice, grammar)
        lik, lik_max = 1.0, 1.0
        for u, x in zip(us, slot_syms):
            lik *= channel_prob(u, x, phi, r2l)
            lik_max *= channel_prob(u, x, phi, r2l, use_max=True)
            if lik == 0.0:
                break
        Z += prior * lik
        for w, r in enumerate(rows):
            marg[w][r] += prior * lik
        if prior * lik_max > best:
            best, best_choice = prior * lik_max, rows
    if Z > 0:
        marg = [m / Z for m in marg]
    return {"Z": Z, "marginals": marg, "best": best, "best_choice": best_choice}


# ---------------------------------------------------------------------------
# Dense NumPy Algorithm 1


def automaton(x: Sequence[int], S: int, phi: np.ndarray, r2l: bool):
    """Dense (alpha, {σ: M(σ)}, rho) of the inverted channel for surface string x."""
    xs = list(x)[::-1] if r2l else list(x)
    m = len(xs)
    N = 1 + m * S

    def st(a, k):
        return 1 + k * S + a

    mats = np.zeros((S, N, N))
    if m:
        for sig in range(S):
            M = mats[sig]
            M[0, st(sig, 0)] += 1.0
            for k in range(m):
                for a in range(S):
                    src = st(a, k)
                    M[src, src] += phi[a, sig, ABSORB_LEFT]
                    M[src, st(sig, k)] += phi[a, sig, ABSORB_RIGHT]
                    if k + 1 < m and xs[k] == a:
                        M[src, st(sig, k + 1)] += phi[a, sig, KEEP]
                    if k + 1 < m and xs[k] == sig:
                        M[src, st(a, k + 1)] += phi[a, sig, TRANSPOSE]
    alpha = np.zeros(N)
    alpha[0] = 1.0
    rho = np.zeros(N)
    if m:
        rho[st(xs[m - 1], m - 1)] = 1.0
    else:
        rho[0] = 1.0
    if r2l:
        mats = np.transpose(mats, (0, 2, 1)).copy()
        alpha, rho = rho, alpha
    return alpha, mats, rho


def numpy_inside(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool) -> float:
    """log p(x|T) by docs/model.md §3 with dense matrices (reference for tests/benchmarks)."""
    S = grammar.n_symbols
    n = lat.n
    xp = lat.x_ptr
    autos = [automaton(lat.x_sym[xp[i]:xp[i + 1]], S, phi, r2l) for i in range(n + 1)]

    def M_of(i, pm):
        N = autos[i][0].shape[0]
        out = np.eye(N)
        for s in grammar.punctemes[pm]:
            out = out @ autos[i][1][s]
        return out

    IN: Dict[int, Tuple[np.ndarray, float]] = {}
    for w in lat.order:
        w = int(w)
        j = w
        ks = lat.kids[lat.kid_ptr[w]:lat.kid_ptr[w + 1]]
        nl = int(lat.nleft[w])
        left, right = ks[:nl], ks[nl:]
        v = autos[j][2].copy()
        scale = 0.0
        for c in reversed(left):
            mat, sc = IN[int(c)]
            v = mat @ v
            scale += sc
        h = autos[j + 1][0].copy()
        for c in right:
            mat, sc = IN[int(c)]
            h = h @ mat
            scale += sc
        core = np.outer(v, h)
        i, k = int(lat.first[w]), int(lat.last[w]) + 1
        total = np.zeros((autos[i][0].shape[0], autos[k][0].shape[0]))
        for c in range(lat.cand_ptr[w], lat.cand_ptr[w + 1]):
            total += cand_p[c] * (M_of(i, int(lat.cand_l[c])) @ core @ M_of(k, int(lat.cand_r[c])))
        mx = np.abs(total).max()
        if mx == 0:
            return -math.inf
        IN[w] = (total / mx, scale + math.log(mx))
    a0 = autos[0][0] @ autos[0][1][0]
    h = a0
    scale = 0.0
    for r in lat.roots:
        mat, sc = IN[int(r)]
        h = h @ mat
        scale += sc
    z = float(h @ autos[n][2])
    return scale + math.log(z) if z > 0 else -math.inf
