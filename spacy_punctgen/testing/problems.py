"""Seeded generators of tiny random DP problems (a grammar, a projective tree, surface slots,
candidate puncteme pairs and a channel) for the tests of :mod:`spacy_punctgen.inference.dp`."""
import math

import numpy as np

from spacy_punctgen.inference.dp import Grammar, build_lattice, log_prob, tree_structure

PUNCTEMES = [(), (1,), (2,), (1, 2), (2, 1), (1, 1), (3,), (3, 1)]


def random_projective_heads(rng, n):
    while True:
        heads = [int(h) for h in rng.integers(-1, n, size=n)]
        heads = [(-1 if h == i else h) for i, h in enumerate(heads)]
        if rng.random() < 0.8:  # usually a single root
            roots = [i for i, h in enumerate(heads) if h == -1]
            if len(roots) != 1:
                continue
        try:
            tree_structure(heads)
            return heads
        except ValueError:
            continue


def random_phi(rng, S, sharp=1.0):
    logits = rng.normal(0, sharp, size=(S, S, 4))
    e = np.exp(logits)
    return e / e.sum(-1, keepdims=True)


def random_problem(rng, n=None, S=4, max_cands=4, p_empty=0.5):
    n = n if n is not None else int(rng.integers(1, 4))
    g = Grammar(S, PUNCTEMES)
    heads = random_projective_heads(rng, n)
    slots = []
    for i in range(n + 1):
        m = 0 if rng.random() < p_empty else int(rng.integers(1, 3))
        x = [int(s) for s in rng.integers(1, S, size=m)]
        slots.append(([0] if i == 0 else []) + x)
    cands, probs = [], []
    n_pm = len(PUNCTEMES)
    for w in range(n):
        k = int(rng.integers(1, max_cands + 1))
        pairs = {(0, 0)}
        while len(pairs) < k:
            pairs.add((int(rng.integers(0, n_pm)), int(rng.integers(0, n_pm))))
        arr = np.array(sorted(pairs), dtype=np.int64)
        p = rng.random(len(arr)) + 0.05
        p = p / (p.sum() * (1.0 + 0.3 * rng.random()))  # some mass outside (like pruned pairs)
        cands.append(arr)
        probs.append(p)
    phi = random_phi(rng, S)
    lat = build_lattice(g, heads, slots, cands)
    cand_p = np.array([probs[int(w)][int(r)] for w, r in zip(lat.cand_node, lat.cand_row)])
    return g, heads, slots, cands, probs, phi, lat, cand_p


def feasible_problem(seed, **kw):
    """A random problem with p(x|T) > 0 in both channel directions."""
    rng = np.random.default_rng(seed)
    while True:
        prob = random_problem(rng, **kw)
        g, heads, slots, cands, probs, phi, lat, cand_p = prob
        if all(log_prob(lat, g, cand_p, phi, d) > -math.inf for d in (False, True)):
            return prob
