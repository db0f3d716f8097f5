"""The compiled training step computes what the NumPy
formulation computes: the lazy Adam step bit for bit, the ATTACH scores and gradient up to
float64 rounding, and a few training steps on the sample data give the same parameters."""
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.training.lazy_adam import LazyAdam
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.testing import numpy_attach, numpy_objective
from spacy_punctgen.testing.numpy_adam import adam_step

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.fixture(scope="module")
def sample():
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    train = train[:120]
    model = PunctModel(PunctInventory.from_sentences(train, min_count=2), direction="r2l")
    preps = model.prepare_all(train)
    model.initialize(preps, seed=0, theta_scale=0.3, psi_keep_bias=3.0)
    return model, preps


@pytest.mark.parametrize("average", [False, True])
def test_compiled_adam_step_is_bit_identical(average):
    rng = np.random.default_rng(1)
    F = 500
    theta_a = rng.standard_normal(F).astype(np.float32)
    theta_b = theta_a.copy()
    a = LazyAdam(F, 0.01, average=average)
    b = LazyAdam(F, 0.01, average=average)
    for step in range(40):
        idx = rng.integers(0, F, size=rng.integers(1, 200))  # repeats, gaps of many lengths
        grad = rng.standard_normal(idx.size)
        l2 = 1e-3 * (step % 3)
        a.step(theta_a, idx, grad, l2=l2)
        adam_step(b, theta_b, idx, grad, l2=l2)
    assert np.array_equal(theta_a, theta_b)
    assert np.array_equal(a.state, b.state) and np.array_equal(a.last, b.last)
    a.sync(theta_a)
    b.sync(theta_b)
    assert np.array_equal(theta_a, theta_b)


def test_compiled_attach_matches_numpy(sample):
    model, preps = sample
    batch = preps[:7]
    fast, backprop, pos_f, _ = model.begin_update(batch)
    slow, pos_s, _ = model.forward(batch, reference=True)
    assert np.array_equal(fast.node_off, slow.node_off)
    np.testing.assert_allclose(fast.logp, slow.logp, rtol=1e-12, atol=1e-12)
    G = np.random.default_rng(2).standard_normal(len(fast.logp))
    idx, val = backprop(G)
    assert len(np.unique(idx)) == len(idx) > 0
    want = np.zeros(model.n_features)
    np.add.at(want, *numpy_attach.backward_sparse(model.scorer, slow, G))
    got = np.zeros(model.n_features)
    got[idx] = val
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_objective_fast_matches_reference(sample):
    model, preps = sample
    for xi in (0.0, 0.5):
        a = model.objective_and_gradient(preps[:10], l2=0.01, xi=xi)
        b = numpy_objective.objective_and_gradient(model, preps[:10], l2=0.01, xi=xi)
        assert a.objective == pytest.approx(b.objective, rel=1e-12)
        np.testing.assert_allclose(a.grad_theta, b.grad_theta, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.grad_psi, b.grad_psi, rtol=1e-9, atol=1e-12)


def test_training_steps_give_the_same_parameters(sample):
    """25 lazy-Adam steps of 5 sentences: compiled path vs the NumPy path (≤ 1e-9 relative)."""
    model, preps = sample
    theta0, psi0 = model.theta.copy(), model.psi.copy()
    out = []
    for fast in (True, False):
        model.theta, model.psi = theta0.copy(), np.ascontiguousarray(psi0.copy())
        opt = LazyAdam(model.n_features, 0.01)
        opt_psi = LazyAdam(model.psi.size, 0.1)
        all_psi = np.arange(model.psi.size)
        for a in range(0, 125, 5):
            batch = preps[a % len(preps):a % len(preps) + 5]
            if fast:
                res = model.objective_and_gradient(batch, l2=0.05, xi=0.0, sparse=True)
                opt.step(model.theta, res.theta_idx, -res.theta_val, l2=0.05, unique=True)
                opt_psi.step(model.psi.reshape(-1), all_psi, -res.grad_psi.ravel(), unique=True)
            else:
                res = numpy_objective.objective_and_gradient(model, batch, l2=0.05, xi=0.0, sparse=True)
                adam_step(opt, model.theta, res.theta_idx, -res.theta_val, l2=0.05)
                adam_step(opt_psi, model.psi.reshape(-1), all_psi, -res.grad_psi.ravel())
        opt.sync(model.theta)
        opt_psi.sync(model.psi.reshape(-1))
        out.append((model.theta.copy(), model.psi.copy()))
    model.theta, model.psi = theta0, psi0
    (ta, pa), (tb, pb) = out
    assert not np.array_equal(ta, theta0)
    np.testing.assert_allclose(ta, tb, rtol=1e-9, atol=0)
    np.testing.assert_allclose(pa, pb, rtol=1e-9, atol=0)


@pytest.mark.parametrize("seed", range(4))
def test_channel_probs_bit_identical_to_axis_reductions(seed):
    from spacy_punctgen.model.channel import bos_edit_mask, channel_probs

    rng = np.random.default_rng(seed)
    psi = (rng.standard_normal((37, 37, 4)) * (0.5 + 3 * seed)).astype(np.float32)
    for mask in (None, bos_edit_mask(37, seed % 2 == 0)):
        z = np.asarray(psi, dtype=np.float64)
        if mask is not None:
            z = np.where(mask, z, -np.inf)
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        want = e / e.sum(axis=-1, keepdims=True)
        assert np.array_equal(channel_probs(psi, mask), want)
