"""LazyAdam against thinc's dense Adam (the optimizer it replaces for θ)."""
import numpy as np
import pytest
from thinc.api import Adam

from spacy_punctgen.training.lazy_adam import LazyAdam


def _dense(theta, grads, lr, average):
    opt = Adam(lr, L2=0.0, grad_clip=0.0, use_averages=average)
    theta = theta.copy()
    for g in grads:
        theta, _ = opt((1, "theta"), theta, g.copy())
    return theta, (opt.averages[(1, "theta")].copy() if average else None)


def _lazy(theta, grads, lr, average, l2=0.0):
    opt = LazyAdam(theta.size, lr, average=average)
    theta = theta.copy()
    for g in grads:
        idx = np.flatnonzero(g)
        opt.step(theta, idx, g[idx], l2=l2)
    return theta, (opt.averages(theta) if average else (opt.sync(theta) or None))


@pytest.mark.parametrize("average", [False, True])
def test_dense_gradients_match_thinc(average):
    rng = np.random.default_rng(0)
    theta = rng.standard_normal(50).astype(np.float32)
    grads = [rng.standard_normal(50).astype(np.float32) for _ in range(40)]
    a, ea = _dense(theta, grads, 0.01, average)
    b, eb = _lazy(theta, grads, 0.01, average)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    if average:
        np.testing.assert_allclose(ea, eb, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("average", [False, True])
def test_sparse_gradients_follow_dense_adam(average):
    """Features used rarely: the deferred moment decay and momentum drift reproduce dense Adam
    (up to the bias-correction drift inside skipped windows, small after warm-up)."""
    rng = np.random.default_rng(1)
    F = 200
    theta = (rng.standard_normal(F) * 0.1).astype(np.float32)
    grads = []
    for t in range(600):
        g = np.zeros(F, dtype=np.float32)
        act = rng.random(F) < (0.5 if t < 100 else 0.05)
        g[act] = rng.standard_normal(int(act.sum())).astype(np.float32)
        grads.append(g)
    a, ea = _dense(theta, grads, 0.003, average)
    b, eb = _lazy(theta, grads, 0.003, average)
    moved = np.abs(a - theta)
    assert np.abs(a - b).max() < 0.02 * moved.max()
    if average:
        assert np.abs(ea - eb).max() < 0.02 * moved.max()
    # plain "touch only the active rows" Adam (no catch-up) is measurably further away
    opt = Adam(0.003)
    c = theta.copy()
    m = np.zeros(F, np.float32)
    v = np.zeros(F, np.float32)
    for t, g in enumerate(grads, 1):
        i = np.flatnonzero(g)
        m[i] = 0.9 * m[i] + 0.1 * g[i]
        v[i] = 0.999 * v[i] + 0.001 * g[i] ** 2
        c[i] -= 0.003 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * m[i] / (np.sqrt(v[i]) + 1e-8)
    assert np.abs(a - c).max() > 5 * np.abs(a - b).max()


def test_delayed_l2_pulls_unused_features_to_zero():
    theta = np.full(4, 1.0, dtype=np.float32)
    opt = LazyAdam(4, 0.01)
    for t in range(50):
        idx = np.array([0]) if t % 10 else np.array([0, 1])
        opt.step(theta, idx, np.zeros(idx.size), l2=0.1)
    opt.sync(theta)
    assert theta[0] < 1.0 and theta[1] < 1.0  # both regularised
    assert theta[2] == theta[3] == 1.0  # never used, never updated


def test_averages_need_average_flag():
    with pytest.raises(ValueError, match="average"):
        LazyAdam(3, 0.1).averages(np.zeros(3, np.float32))
