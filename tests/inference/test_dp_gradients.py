"""Expected edit counts and tilt derivatives of the DP equal finite differences."""
import math

import numpy as np
import pytest

from spacy_punctgen.inference.dp import inside_outside, log_prob

from spacy_punctgen.testing.problems import feasible_problem


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_counts_are_dlogZ_dlogphi(seed, r2l):
    g, heads, slots, cands, probs, phi, lat, cand_p = feasible_problem(seed, n=3, p_empty=0.3)
    res = inside_outside(lat, g, cand_p, phi, r2l)
    eps = 1e-6
    S = g.n_symbols
    for a in range(S):
        for b in range(S):
            for e in range(4):
                up, dn = phi.copy(), phi.copy()
                up[a, b, e] *= math.exp(eps)
                dn[a, b, e] *= math.exp(-eps)
                fd = (log_prob(lat, g, cand_p, up, r2l) - log_prob(lat, g, cand_p, dn, r2l)) / (2 * eps)
                assert res.counts[a, b, e] == pytest.approx(fd, abs=1e-7), (a, b, e)


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_marginals_are_dlogZ_dlogp(seed, r2l):
    g, heads, slots, cands, probs, phi, lat, cand_p = feasible_problem(seed, n=3)
    res = inside_outside(lat, g, cand_p, phi, r2l)
    eps = 1e-6
    for k in range(lat.n_candidates):
        up, dn = cand_p.copy(), cand_p.copy()
        up[k] *= math.exp(eps)
        dn[k] *= math.exp(-eps)
        fd = (log_prob(lat, g, up, phi, r2l) - log_prob(lat, g, dn, phi, r2l)) / (2 * eps)
        assert res.mu[k] == pytest.approx(fd, abs=1e-7)


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_tilt_derivatives(seed, r2l):
    g, heads, slots, cands, probs, phi, lat, cand_p = feasible_problem(seed, n=3, p_empty=0.3)
    rng = np.random.default_rng(100 + seed)
    tilt = (rng.random(lat.n_candidates) < 0.5).astype(float)
    res = inside_outside(lat, g, cand_p, phi, r2l, tilt=tilt)
    eps = 1e-5
    up = inside_outside(lat, g, cand_p * np.exp(eps * tilt), phi, r2l)
    dn = inside_outside(lat, g, cand_p * np.exp(-eps * tilt), phi, r2l)
    np.testing.assert_allclose(res.dmu, (up.mu - dn.mu) / (2 * eps), atol=1e-7)
    np.testing.assert_allclose(res.dcounts, (up.counts - dn.counts) / (2 * eps), atol=1e-7)
    # E[c] = d logZ / d λ
    fd = (up.logZ - dn.logZ) / (2 * eps)
    assert float(res.mu @ tilt) == pytest.approx(fd, abs=1e-7)
