"""The Cython DP equals brute-force enumeration over every underlying tree and edit path."""
import itertools
import math

import numpy as np
import pytest

from spacy_punctgen.inference import _dp
from spacy_punctgen.inference.dp import inside_outside, log_prob, viterbi
from spacy_punctgen.testing.reference import brute_force, channel_prob, numpy_inside, underlying_slots

from spacy_punctgen.testing.problems import feasible_problem, random_problem


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_dp_equals_brute_force(seed, r2l):
    rng = np.random.default_rng(seed)
    g, heads, slots, cands, probs, phi, lat, cand_p = random_problem(rng)
    bf = brute_force(g, heads, slots, cands, probs, phi, r2l)
    res = inside_outside(lat, g, cand_p, phi, r2l)
    if bf["Z"] == 0.0:
        assert res.logZ == -math.inf
        return
    assert res.logZ == pytest.approx(math.log(bf["Z"]), abs=1e-10)
    assert log_prob(lat, g, cand_p, phi, r2l) == pytest.approx(res.logZ, abs=1e-12)
    assert numpy_inside(lat, g, cand_p, phi, r2l) == pytest.approx(res.logZ, abs=1e-10)
    # marginals per lattice candidate vs brute force (pruned candidates have marginal 0)
    for k in range(lat.n_candidates):
        w, row = int(lat.cand_node[k]), int(lat.cand_row[k])
        assert res.mu[k] == pytest.approx(bf["marginals"][w][row], abs=1e-10)
    kept = {(int(w), int(r)) for w, r in zip(lat.cand_node, lat.cand_row)}
    for w, m in enumerate(bf["marginals"]):
        for row, val in enumerate(m):
            if (w, row) not in kept:
                assert val == pytest.approx(0.0, abs=1e-12)
    logbest, best = viterbi(lat, g, cand_p, phi, r2l)
    assert logbest == pytest.approx(math.log(bf["best"]), abs=1e-10)
    chosen = tuple(int(lat.cand_row[b]) for b in best)
    assert chosen == tuple(bf["best_choice"])


@pytest.mark.parametrize("seed", range(30))
def test_impossible_surface_gives_minus_inf(seed):
    rng = np.random.default_rng(1000 + seed)
    g, heads, slots, cands, probs, phi, lat, cand_p = random_problem(rng)
    for r2l in (False, True):
        bf = brute_force(g, heads, slots, cands, probs, phi, r2l)
        res = inside_outside(lat, g, cand_p, phi, r2l)
        if bf["Z"] == 0.0:
            assert res.logZ == -math.inf
            assert viterbi(lat, g, cand_p, phi, r2l)[0] == -math.inf
        else:
            assert res.logZ == pytest.approx(math.log(bf["Z"]), abs=1e-10)


def _best_through(g, heads, slots, cands, probs, phi, r2l):
    """Per node and row of its candidates, the most probable joint derivation (underlying tree
    and one edit path per slot) that uses it, by enumeration."""
    best = [np.zeros(len(c)) for c in cands]
    for rows in itertools.product(*[range(len(c)) for c in cands]):
        prob = 1.0
        for w, r in enumerate(rows):
            prob *= probs[w][r]
        choice = [tuple(int(v) for v in cands[w][r]) for w, r in enumerate(rows)]
        for u, x in zip(underlying_slots(heads, choice, g), slots):
            prob *= channel_prob(u, x, phi, r2l, use_max=True)
        for w, r in enumerate(rows):
            best[w][r] = max(best[w][r], prob)
    return best


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(30))
def test_max_marginals_equal_brute_force(seed, r2l):
    """The max-product pass (its own arc loop, ``_trans_max``): every candidate's max-marginal is
    the best derivation through it over the best derivation, on possible sentences of 1 to 3
    words (1 word in every third case) whose slots hold up to 2 marks (so that keep and
    transposition arcs are crossed)."""
    n = 1 if seed % 3 == 0 else 2 + seed % 2
    g, heads, slots, cands, probs, phi, lat, cand_p = feasible_problem(7000 + seed, n=n, p_empty=0.3)
    through = _best_through(g, heads, slots, cands, probs, phi, r2l)
    top = max(float(b.max()) for b in through)
    logmax, mu, _, _, _ = _dp.run_dp(lat, g, cand_p, np.ascontiguousarray(phi, dtype=np.float64), r2l, "max",
                                     True, False)
    assert logmax == pytest.approx(math.log(top), abs=1e-10)
    for k in range(lat.n_candidates):
        w, row = int(lat.cand_node[k]), int(lat.cand_row[k])
        assert mu[k] == pytest.approx(through[w][row] / top, rel=1e-9, abs=1e-12)
