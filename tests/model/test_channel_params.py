"""Channel parameters ψ -> φ (softmax over the 4 edits per bigram) and their gradient."""
import numpy as np
import pytest

from spacy_punctgen.model.channel import (N_EDITS, channel_grad, channel_probs, identity_channel, init_psi,
                                    is_r2l, parse_direction)
from spacy_punctgen.inference.dp import ABSORB_LEFT, ABSORB_RIGHT, KEEP, TRANSPOSE


def test_edit_order_matches_dp():
    assert (KEEP, ABSORB_LEFT, ABSORB_RIGHT, TRANSPOSE) == (0, 1, 2, 3) and N_EDITS == 4


def test_channel_probs_is_a_softmax_per_bigram():
    rng = np.random.default_rng(0)
    psi = init_psi(5, rng, 3.0)
    assert psi.dtype == np.float32 and psi.shape == (5, 5, 4)
    phi = channel_probs(psi)
    assert phi.dtype == np.float64
    np.testing.assert_allclose(phi.sum(-1), 1.0, atol=1e-14)
    z = psi.astype(np.float64)
    want = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    np.testing.assert_allclose(phi, want, rtol=1e-12)
    big = np.full((1, 1, 4), 1e4, dtype=np.float32)  # no overflow
    np.testing.assert_allclose(channel_probs(big), 0.25)


def test_init_is_seeded_and_scalable():
    a = init_psi(4, np.random.default_rng(7), 1.0)
    b = init_psi(4, np.random.default_rng(7), 1.0)
    assert np.array_equal(a, b)
    assert np.all(init_psi(4, np.random.default_rng(7), 0.0) == 0)


def test_identity_channel():
    phi = identity_channel(3)
    assert phi.shape == (3, 3, 4)
    assert np.all(phi[..., KEEP] == 1) and np.all(phi[..., 1:] == 0)


def test_channel_grad_matches_finite_differences():
    """∂/∂ψ Σ c·log φ(ψ) = c − φ·Σ_e c, for arbitrary (also negative, tilted) counts."""
    rng = np.random.default_rng(1)
    psi = rng.normal(size=(3, 3, 4))
    counts = rng.normal(size=(3, 3, 4))

    def f(p):
        return float((counts * np.log(channel_probs(p))).sum())

    g = channel_grad(channel_probs(psi), counts)
    h = 1e-6
    for idx in np.ndindex(psi.shape):
        e = np.zeros_like(psi)
        e[idx] = h
        fd = (f(psi + e) - f(psi - e)) / (2 * h)
        assert abs(fd - g[idx]) < 1e-7
    # gradient of a softmax block sums to zero over the edits
    np.testing.assert_allclose(g.sum(-1), 0.0, atol=1e-12)


@pytest.mark.parametrize("name,want", [("l2r", "l2r"), ("L", "l2r"), ("left", "l2r"),
                                       ("R2L", "r2l"), ("r", "r2l"), ("right", "r2l")])
def test_parse_direction(name, want):
    assert parse_direction(name) == want
    assert is_r2l(name) == (want == "r2l")


def test_parse_direction_rejects_garbage():
    with pytest.raises(ValueError, match="direction"):
        parse_direction("up")


@pytest.mark.parametrize("r2l", [False, True])
def test_bos_edits_that_delete_or_move_caret_are_forbidden(r2l):
    from spacy_punctgen.model.channel import bos_edit_mask

    mask = bos_edit_mask(4, r2l)
    phi = channel_probs(np.random.default_rng(0).normal(size=(4, 4, 4)), mask)
    np.testing.assert_allclose(phi.sum(-1), 1.0)
    assert np.all(phi[~mask] == 0) and np.all(phi[mask] > 0)
    if r2l:  # ^ is read last, as b of (a, ^)
        assert not mask[2, 0, ABSORB_LEFT] and not mask[2, 0, TRANSPOSE] and mask[2, 0, ABSORB_RIGHT]
        assert mask[0, 2].all()
    else:  # ^ is read first, as a of (^, b)
        assert not mask[0, 2, ABSORB_RIGHT] and not mask[0, 2, TRANSPOSE] and mask[0, 2, ABSORB_LEFT]
        assert mask[2, 0].all()
    # the gradient formula still holds on the allowed edits
    counts = np.where(mask, np.random.default_rng(1).random((4, 4, 4)), 0.0)
    g = channel_grad(phi, counts)
    assert np.all(g[~mask] == 0)
