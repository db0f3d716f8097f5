"""Posterior samples T' ~ p(T'|T,x) match the exact marginals and joint posterior."""
import itertools
from collections import Counter

import numpy as np
import pytest

from spacy_punctgen.inference.dp import inside_outside, sample_posterior
from spacy_punctgen.testing.reference import channel_prob, underlying_slots

from spacy_punctgen.testing.problems import feasible_problem


def exact_joint(g, heads, slots, cands, probs, phi, r2l):
    joint = {}
    for rows in itertools.product(*[range(len(c)) for c in cands]):
        p = np.prod([probs[w][r] for w, r in enumerate(rows)])
        choice = [tuple(int(v) for v in cands[w][r]) for w, r in enumerate(rows)]
        for u, x in zip(underlying_slots(heads, choice, g), slots):
            p *= channel_prob(u, x, phi, r2l)
        if p > 0:
            joint[rows] = p
    z = sum(joint.values())
    return {k: v / z for k, v in joint.items()}


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_sampler_matches_exact_joint(seed, r2l):
    g, heads, slots, cands, probs, phi, lat, cand_p = feasible_problem(seed, n=1 + seed % 4, p_empty=0.3)
    n_samples = 20000
    draws = sample_posterior(lat, g, cand_p, phi, r2l, n_samples, seed=seed)
    assert draws.shape == (n_samples, lat.n)
    rows = [tuple(int(lat.cand_row[c]) for c in d) for d in draws]
    freq = Counter(rows)
    joint = exact_joint(g, heads, slots, cands, probs, phi, r2l)
    assert set(freq) <= set(joint)  # never draws an impossible tree
    for key, p in joint.items():
        sd = np.sqrt(p * (1 - p) / n_samples)
        assert abs(freq.get(key, 0) / n_samples - p) < 5 * sd + 1e-3, key
    # and per-node marginals from the outside pass
    mu = inside_outside(lat, g, cand_p, phi, r2l).mu
    counts = np.bincount(draws.ravel(), minlength=lat.n_candidates) / n_samples
    np.testing.assert_allclose(counts, mu, atol=0.02)


def test_sampler_is_deterministic_under_seed():
    g, heads, slots, cands, probs, phi, lat, cand_p = feasible_problem(3, n=3)
    a = sample_posterior(lat, g, cand_p, phi, True, 50, seed=7)
    b = sample_posterior(lat, g, cand_p, phi, True, 50, seed=7)
    assert np.array_equal(a, b)
