"""Slots whose surface is not observed (``Lattice.free``, restoration conditioned on the marks a
text already has): the DP with free slots equals enumeration over every underlying tree, where
a free slot sums ``p(x | u)`` over every surface the channel makes of ``u`` (so it weighs 1)."""
import math

import numpy as np
import pytest

from spacy_punctgen.inference.dp import build_lattice, inside_outside, log_prob, posterior_marginals, viterbi
from spacy_punctgen.testing.problems import random_problem
from spacy_punctgen.testing.reference import brute_force


def _free_problem(seed):
    rng = np.random.default_rng(seed)
    g, heads, slots, cands, probs, phi, _, _ = random_problem(rng, p_empty=0.4)
    free = rng.random(len(heads) + 1) < 0.5
    lat = build_lattice(g, heads, slots, cands)
    lat_free = _with_free(g, heads, slots, cands, free)
    cand_p = np.array([probs[int(w)][int(r)] for w, r in zip(lat_free.cand_node, lat_free.cand_row)])
    return g, heads, slots, cands, probs, phi, lat, lat_free, cand_p, free


def _with_free(g, heads, slots, cands, free):
    from spacy_punctgen.inference.dp import build_lattice_tables
    ptr = np.zeros(len(cands) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in cands], out=ptr[1:])
    return build_lattice_tables(g, heads, slots, np.arange(len(heads)), ptr, np.concatenate(cands), free=free)


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_free_slots_equal_enumeration(seed, r2l):
    g, heads, slots, cands, probs, phi, _, lat, cand_p, free = _free_problem(seed)
    bf = brute_force(g, heads, slots, cands, probs, phi, r2l, free=free)
    logZ, mu = posterior_marginals(lat, g, cand_p, phi, r2l)
    if bf["Z"] == 0.0:
        assert logZ == -math.inf
        return
    assert logZ == pytest.approx(math.log(bf["Z"]), abs=1e-10)
    for k in range(lat.n_candidates):
        w, row = int(lat.cand_node[k]), int(lat.cand_row[k])
        assert mu[k] == pytest.approx(bf["marginals"][w][row], abs=1e-10)
    kept = {(int(w), int(r)) for w, r in zip(lat.cand_node, lat.cand_row)}
    for w, m in enumerate(bf["marginals"]):
        for row, val in enumerate(m):
            if (w, row) not in kept:
                assert val == pytest.approx(0.0, abs=1e-12)
    assert inside_outside(lat, g, cand_p, phi, r2l).logZ == pytest.approx(logZ, abs=1e-12)
    logbest, best = viterbi(lat, g, cand_p, phi, r2l)
    assert logbest == pytest.approx(math.log(bf["best"]), abs=1e-10)


@pytest.mark.parametrize("seed", range(10))
def test_every_slot_free_is_the_prior_mass(seed):
    rng = np.random.default_rng(seed)
    g, heads, slots, cands, probs, phi, _, _ = random_problem(rng)
    lat = _with_free(g, heads, slots, cands, np.ones(len(heads) + 1, bool))
    cand_p = np.array([probs[int(w)][int(r)] for w, r in zip(lat.cand_node, lat.cand_row)])
    assert lat.n_candidates == sum(len(c) for c in cands)  # nothing is pruned at a free slot
    logZ, mu = posterior_marginals(lat, g, cand_p, phi, False)
    assert logZ == pytest.approx(sum(math.log(p.sum()) for p in probs), abs=1e-10)
    for k in range(lat.n_candidates):
        w, row = int(lat.cand_node[k]), int(lat.cand_row[k])
        assert mu[k] == pytest.approx(probs[w][row] / probs[w].sum(), abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_no_free_slot_is_the_plain_lattice(seed):
    g, heads, slots, cands, probs, phi, lat, _, _, _ = _free_problem(seed)
    none_free = _with_free(g, heads, slots, cands, np.zeros(len(heads) + 1, bool))
    assert none_free.free is None
    for name in ("cand_l", "cand_r", "cand_node", "cand_row", "x_sym", "x_ptr"):
        np.testing.assert_array_equal(getattr(none_free, name), getattr(lat, name))
    cand_p = np.array([probs[int(w)][int(r)] for w, r in zip(lat.cand_node, lat.cand_row)])
    assert log_prob(none_free, g, cand_p, phi, True) == log_prob(lat, g, cand_p, phi, True)


def test_a_mask_of_the_wrong_length_is_refused():
    g, heads, slots, cands, *_ = _free_problem(0)
    with pytest.raises(ValueError, match="E190"):
        _with_free(g, heads, slots, cands, np.zeros(len(heads) + 3, bool))
