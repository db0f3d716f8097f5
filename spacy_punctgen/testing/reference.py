"""Slow, obviously-correct references for the Cython DP (tests and benchmarks use them).

* :func:`channel_prob` (from :mod:`spacy_punctgen.model.channel`, the channel's one
  definition) gives ``p(x | u)`` by running the channel forward over every edit path.
* :func:`brute_force` enumerates every underlying tree ``T'`` (one candidate pair per
  node) and every edit path: ``p(x|T)``, posterior marginals, the best derivation.
* :func:`numpy_inside` is docs/model.md §3's Algorithm 1 with dense automaton matrices
  ``M_i(σ)`` built explicitly, in plain NumPy (rescaled per node).
"""
from __future__ import annotations

import itertools
import math
from typing import Dict, List, Sequence, Tuple

import numpy as np

from spacy_punctgen.inference.dp import Grammar, Lattice
from spacy_punctgen.model.channel import EDITS, apply_edit, channel_distribution, channel_prob  # noqa: F401
from spacy_punctgen.data.underlying import underlying_sequences


def underlying_slots(heads: Sequence[int], choice: Sequence[Tuple[int, int]], grammar: Grammar) -> List[List[int]]:
    """u_i of every slot (symbol ids) for puncteme ids ``choice[w] = (l, r)``; slot 0 starts with '^'."""
    slots = underlying_sequences(heads, [(grammar.punctemes[l], grammar.punctemes[r]) for l, r in choice])
    slots[0] = [0] + slots[0]
    return slots


def brute_force(grammar: Grammar, heads, slot_syms, node_cands, node_p, phi, r2l, free=None):
    """Enumerate all T'. node_cands[w]: (c,2) pairs; node_p[w]: their probabilities.
    ``free`` (a bool per slot, or None): slots whose surface is not observed; each weighs the
    sum of ``p(x | u)`` over every surface ``x`` the channel makes of its ``u``, enumerated (in
    ``best`` too: the best derivation is over the underlying tree and the observed slots' edits).

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
        for i, (u, x) in enumerate(zip(us, slot_syms)):
            if free is not None and free[i]:
                lik *= sum(channel_distribution(u, phi, r2l).values())
                lik_max *= sum(channel_distribution(u, phi, r2l).values())  # summed out in max mode too
                continue
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
            M[0, st(sig, 0)] += 1.0  # nothing pending yet: σ becomes pending
            for k in range(m):
                for a in range(S):
                    for edit in EDITS:  # the channel's own rules (model/channel.py), inverted
                        written, pending = apply_edit(edit, a, sig)
                        if written is None:
                            M[st(a, k), st(pending, k)] += phi[a, sig, edit]
                        elif k + 1 < m and xs[k] == written:
                            M[st(a, k), st(pending, k + 1)] += phi[a, sig, edit]
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


# ---------------------------------------------------------------------------
# Brute-force surface distribution of a model (tests of decoding)


def brute_joint(model, sentence):
    """p(x | T) for every surface x, by enumerating all T' (model.node_distribution) and, per
    slot, every candidate surface string scored by the reference channel enumerator."""
    from collections import Counter

    n = len(sentence.words)
    dists = [model.node_distribution(sentence, w) for w in range(n)]
    sym = model.inventory.symbols
    sid = {s: i for i, s in enumerate(sym)}
    phi = model.phi()
    joint = Counter()
    for choice in itertools.product(*dists):
        prior = float(np.prod([c[2] for c in choice]))
        us = underlying_sequences(sentence.heads, [(c[0], c[1]) for c in choice])
        per_slot = []
        for i, u in enumerate(us):
            ids = ([0] if i == 0 else []) + [sid[t] for t in u]
            opts = {}
            alphabet = sorted(set(ids))
            for m in range(1, len(ids) + 1) if ids else [0]:
                for x in itertools.product(alphabet, repeat=m):
                    p = channel_prob(ids, x, phi, model.r2l)
                    if p > 0:
                        opts[tuple(sym[s] for s in (x[1:] if i == 0 else x))] = p
            per_slot.append(list(opts.items()))
        for combo in itertools.product(*per_slot):
            joint[tuple(x for x, _ in combo)] += prior * float(np.prod([p for _, p in combo]))
    return joint


def joint_marginals(joint, n_slots):
    """Per-slot marginals ``[Counter(surface string -> p)]`` of a :func:`brute_joint` distribution."""
    from collections import Counter

    out = [Counter() for _ in range(n_slots)]
    for x, p in joint.items():
        for i, xi in enumerate(x):
            out[i][xi] += p
    return out


# ---------------------------------------------------------------------------
# Σ_x p(x|T) by enumeration (tests that the model stays a distribution over surfaces)


def reachable_surfaces(model, base):
    """Every surface punctuation x (one tuple per slot) the model can produce for BASE's
    tree: each node's pairs, sprouted innermost first (right) / outermost first (left),
    then every channel output per slot.  A superset of the support, for Σ_x p(x|T)."""
    from spacy_punctgen.data.trees import forest
    from spacy_punctgen.model.channel import channel_distribution

    inv = model.inventory
    prep = model.prepare(base)
    tables = [model.extractor.rel_tables[int(r)] for r in prep.rel_ids]
    pm, sym, phi = inv.punctemes, inv.symbol_id, model.phi()
    fo = forest(base.heads)
    lo, hi = fo.first, fo.last
    n, n_slots = len(base.words), len(base.words) + 1
    slot_sets = [set() for _ in range(n_slots)]
    for choice in itertools.product(*[range(t.size) for t in tables]):
        u = [[] for _ in range(n_slots)]
        for w in sorted(range(n), key=lambda w: hi[w] - lo[w]):  # innermost first
            u[hi[w] + 1] += [sym(t) for t in pm[tables[w].pairs[choice[w]][1]]]
        for w in sorted(range(n), key=lambda w: -(hi[w] - lo[w])):  # outermost first
            u[lo[w]] += [sym(t) for t in pm[tables[w].pairs[choice[w]][0]]]
        for i in range(n_slots):
            x0 = ([0] if i == 0 else []) + u[i]
            for s in channel_distribution(x0, phi, model.r2l):
                slot_sets[i].add(tuple(inv.symbols[k] for k in (s[1:] if i == 0 else s)))
    return [list(xs) for xs in itertools.product(*[sorted(s) for s in slot_sets])]


def total_probability(model, base, surfaces) -> float:
    """Σ p(x|T) over SURFACES (:func:`reachable_surfaces`) for BASE's tree."""
    from spacy_punctgen.data.preprocess import PunctSentence

    total = 0.0
    for xs in surfaces:
        lp = model.log_prob(PunctSentence(words=list(base.words), upos=list(base.upos), xpos=list(base.xpos),
                                          deprels=list(base.deprels), heads=list(base.heads),
                                          slots=[tuple(s) for s in xs]))
        if np.isfinite(lp):
            total += np.exp(lp)
    return total
