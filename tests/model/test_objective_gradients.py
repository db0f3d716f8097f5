"""The full objective's gradient wrt θ and ψ equals central finite differences (float64).

Objective (docs/model.md §4): Σ [log p(x|T) − ξ·E[c(T')]²] − ς‖(θ, ψ)‖², checked with ξ = 0
and ξ > 0, in the full model (L2R and R2L channel) and the ATTACH ablation.
"""
import numpy as np
import pytest

from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.testing.reference import reachable_surfaces, total_probability
from spacy_punctgen.testing.toy import punct_sentence as _S, three_word_tree, toy_inventory, toy_sentences


def _model(mode, direction, seed=0):
    sents = toy_sentences()
    model = PunctModel(toy_inventory(sents), mode=mode, direction=direction)
    preps = model.prepare_all(sents)
    model.initialize(preps, seed=seed, theta_scale=0.5, psi_scale=1.0)
    model.theta = model.theta.astype(np.float64)  # exact arithmetic for the check
    model.psi = model.psi.astype(np.float64)
    return model, preps


def _check(model, preps, xi, l2, n_theta=25, n_psi=25, seed=0):
    res = model.objective_and_gradient(preps, l2=l2, xi=xi)
    assert res.n_impossible == 0
    rng = np.random.default_rng(seed)

    def obj():
        return model.objective_and_gradient(preps, l2=l2, xi=xi).objective

    h = 1e-5
    active = np.flatnonzero(res.grad_theta)
    assert active.size > 0
    for j in rng.choice(active, size=min(n_theta, active.size), replace=False):
        old = model.theta[j]
        model.theta[j] = old + h
        up = obj()
        model.theta[j] = old - h
        down = obj()
        model.theta[j] = old
        fd = (up - down) / (2 * h)
        assert abs(fd - res.grad_theta[j]) <= 1e-6 * max(1.0, abs(fd)), (j, fd, res.grad_theta[j])
    if model.mode == "full":
        active = np.argwhere(res.grad_psi != 0)
        assert len(active) > 0
        for k in rng.choice(len(active), size=min(n_psi, len(active)), replace=False):
            idx = tuple(active[k])
            old = model.psi[idx]
            model.psi[idx] = old + h
            up = obj()
            model.psi[idx] = old - h
            down = obj()
            model.psi[idx] = old
            fd = (up - down) / (2 * h)
            assert abs(fd - res.grad_psi[idx]) <= 1e-6 * max(1.0, abs(fd)), (idx, fd, res.grad_psi[idx])
    else:
        assert res.grad_psi is None
    return res


@pytest.mark.parametrize("direction", ["l2r", "r2l"])
@pytest.mark.parametrize("xi", [0.0, 0.7])
def test_full_model_gradient(direction, xi):
    model, preps = _model("full", direction)
    res = _check(model, preps, xi=xi, l2=0.01)
    if xi > 0:
        assert res.expected_unmatched > 0  # the toy data has quotes and parentheses


@pytest.mark.parametrize("xi", [0.0, 0.7])
def test_attach_gradient(xi):
    model, preps = _model("attach", "l2r", seed=1)
    _check(model, preps, xi=xi, l2=0.01)


def test_xi_zero_is_plain_likelihood():
    model, preps = _model("full", "l2r", seed=2)
    res = model.objective_and_gradient(preps, l2=0.0, xi=0.0)
    lp = model.log_probs(preps)
    assert abs(res.objective - lp.sum()) < 1e-9
    assert abs(res.loglik - lp.sum()) < 1e-9
    l2 = 0.3
    res2 = model.objective_and_gradient(preps, l2=l2, xi=0.0)
    norm = float(model.theta @ model.theta + (model.psi ** 2).sum())
    assert abs(res2.objective - (lp.sum() - l2 * norm)) < 1e-9


def test_expected_unmatched_matches_bruteforce_tilt():
    """E[c] from the objective equals Σ μ·tilt, and ξ>0 lowers the objective by ξ·Σ E[c]²."""
    from spacy_punctgen.inference.dp import inside_outside

    model, preps = _model("full", "l2r", seed=3)
    xi = 0.5
    res = model.objective_and_gradient(preps, xi=xi)
    fwd, pos, _ = model.forward(preps)
    total, sq = 0.0, 0.0
    for prep, ps in zip(preps, pos):
        out = inside_outside(prep.lattice, model.grammar, np.exp(fwd.logp[ps]), model.phi(), model.r2l)
        ec = float(out.mu @ prep.tilt)
        total += ec
        sq += ec * ec
    assert abs(res.expected_unmatched - total) < 1e-9
    assert abs(res.objective - (res.loglik - xi * sq)) < 1e-9


def test_sparse_gradient_matches_dense():
    model, preps = _model("full", "l2r", seed=5)
    l2 = 0.2
    dense = model.objective_and_gradient(preps, l2=l2, xi=0.3)
    sp = model.objective_and_gradient(preps, l2=l2, xi=0.3, sparse=True)
    assert sp.grad_theta is None
    g = np.zeros_like(dense.grad_theta)
    np.add.at(g, sp.theta_idx, sp.theta_val)
    np.testing.assert_allclose(g - 2 * l2 * model.theta, dense.grad_theta, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sp.grad_psi, dense.grad_psi, rtol=1e-12, atol=1e-12)
    assert abs(sp.objective - dense.objective) < 1e-6 * abs(dense.objective)


def test_smoothing_keeps_a_distribution_and_rescues_impossible_sentences():
    """Smoothed evaluation: δ=0 is the plain model; δ>0 costs little on possible sentences
    and gives impossible ones (unseen pair, unseen punctuation type) finite probability."""

    model, preps = _model("attach", "l2r", seed=6)
    model.theta = model.theta.astype(np.float32)
    sents = toy_sentences()
    plain = model.log_probs(model.prepare_all(sents))
    model.smooth_delta = 0.0
    np.testing.assert_allclose(model.log_probs(model.prepare_eval(sents)), plain, rtol=0, atol=1e-12)
    model.smooth_delta = 1e-3
    smooth = model.log_probs(model.prepare_eval(sents))
    assert np.all(smooth < plain) and np.all(smooth > plain + 30 * np.log1p(-1e-3))
    odd = [
        # a colon where nsubj never had one, and an unseen type "@"
        _S(["He", "said", "hi"], ["PRON", "VERB", "INTJ"], [1, -1, 1], ["nsubj", "root", "ccomp"],
           [(), (":",), ("@",), (".",)]),
    ]
    assert not np.isfinite(model.log_probs(model.prepare_all(odd))[0])
    lp = model.log_probs(model.prepare_eval(odd))[0]
    assert np.isfinite(lp) and lp < -5
    res = model.perplexity(model.prepare_eval(odd))
    assert res["n_impossible"] == 0
    best = model.best_underlying(model.prepare_eval(odd)[0])
    assert ("<unk>",) in [p for lr in best for p in lr]


@pytest.mark.parametrize("mode,direction", [("full", "l2r"), ("full", "r2l"), ("attach", "l2r")])
def test_inner_features_keep_p_x_given_T_normalised(mode, direction):
    """With the surface-conditioned ``inner`` template, Σ_x p(x|T) = 1 over every x the
    model can produce (enumerated by brute force), i.e. the bottom-up story is proper."""
    from spacy_punctgen.features.templates import DEFAULT_TEMPLATES, FeatureConfig

    sents = toy_sentences()
    inv = toy_inventory(sents)
    model = PunctModel(inv, FeatureConfig(templates=list(DEFAULT_TEMPLATES) + ["inner"]), mode=mode,
                       direction=direction)
    model.initialize(model.prepare_all(sents), seed=7, theta_scale=1.0, psi_scale=1.0)
    base = three_word_tree()
    total = total_probability(model, base, reachable_surfaces(model, base))
    assert abs(total - 1.0) < 1e-9, total
