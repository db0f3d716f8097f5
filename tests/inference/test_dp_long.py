"""Rescaling keeps 1,000-word sentences finite and equal to the dense reference."""
import math

import numpy as np

from spacy_punctgen.inference.dp import Grammar, build_lattice, inside_outside, viterbi
from spacy_punctgen.testing.reference import numpy_inside

from spacy_punctgen.testing.problems import PUNCTEMES, random_phi


def long_problem(n, seed=0):
    rng = np.random.default_rng(seed)
    # a right-branching chain with some left dependents: projective by construction
    heads = [-1] + [i - 1 for i in range(1, n)]
    for i in range(2, n, 7):
        heads[i - 1] = i  # word i-1 hangs left of i
        heads[i] = i - 2
    slots = [[0]] + [[int(s) for s in rng.integers(1, 3, size=int(rng.random() < 0.2))] for _ in range(n)]
    cands = [np.array([(0, 0), (1, 0), (0, 1), (1, 1), (2, 2), (2, 0), (0, 2), (6, 0)]) for _ in range(n)]
    g = Grammar(4, PUNCTEMES)
    lat = build_lattice(g, heads, slots, cands)
    p = np.full(lat.n_candidates, 0.15)
    return g, lat, p, random_phi(rng, 4)


def test_thousand_word_sentence_is_finite():
    g, lat, p, phi = long_problem(1000)
    for r2l in (False, True):
        res = inside_outside(lat, g, p, phi, r2l)
        assert math.isfinite(res.logZ) and res.logZ < -100  # far below float underflow of p itself
        assert np.all(np.isfinite(res.mu)) and np.all(np.isfinite(res.counts))
        sums = np.add.reduceat(res.mu, lat.cand_ptr[:-1])
        np.testing.assert_allclose(sums, 1.0, atol=1e-9)
        logbest, best = viterbi(lat, g, p, phi, r2l)
        assert math.isfinite(logbest) and logbest <= res.logZ and np.all(best >= 0)


def test_long_sentence_matches_dense_reference():
    g, lat, p, phi = long_problem(120, seed=3)
    for r2l in (False, True):
        ref = numpy_inside(lat, g, p, phi, r2l)
        assert inside_outside(lat, g, p, phi, r2l, grad=False).logZ == __import__("pytest").approx(ref, rel=1e-10)
