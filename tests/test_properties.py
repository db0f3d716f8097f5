"""Property-based tests (hypothesis): random projective forests, punctuation, candidates and
channels keep every invariant of the DP and the model.

* the DP equals brute-force enumeration (log p, marginals, best derivation);
* probabilities lie in (0, 1], marginals in [0, 1] and sum to 1 per node;
* Σ_x p(x|T) = 1 over every surface string, on tiny trees with the model's channel;
* the Viterbi derivation and every posterior sample reproduce x through the channel;
* nothing mutates its input arrays;
* on real sentences with random (also unseen) punctuation, the model's smoothed /
  back-off probabilities are finite and its best derivation reproduces x.
"""
import copy
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_punctgen.model.channel import bos_edit_mask, channel_probs
from spacy_punctgen.inference.dp import Grammar, build_lattice, inside_outside, log_prob, sample_posterior, viterbi
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.testing.reference import brute_force, channel_prob, underlying_slots
from spacy_punctgen.training.train import TrainConfig, train_model
from spacy_punctgen.data.underlying import underlying_sequences

from spacy_punctgen.testing.problems import PUNCTEMES

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample"
S = 4  # symbols: 0 = '^', 1..3 punctuation
POSSIBLE = []  # model examples the smoothed model could generate (checked below)
DP_SETTINGS = settings(max_examples=120, deadline=None, derandomize=True)


# ------------------------------------------------------------------ strategies
@st.composite
def projective_forests(draw, min_n=1, max_n=4):
    """Every ordered projective forest over n words is reachable: the sentence is tiled by
    top-level subtrees, and each subtree's head tiles its left and right parts the same way."""
    n = draw(st.integers(min_n, max_n))
    heads = [None] * n

    def subtree(lo, hi):
        h = draw(st.integers(lo, hi - 1))
        for r in tiles(lo, h) + tiles(h + 1, hi):
            heads[r] = h
        return h

    def tiles(lo, hi):
        roots, pos = [], lo
        while pos < hi:
            end = draw(st.integers(pos + 1, hi))
            roots.append(subtree(pos, end))
            pos = end
        return roots

    roots = tiles(0, n) if draw(st.booleans()) else [subtree(0, n)]
    for r in roots:
        heads[r] = -1
    return heads


def channel(seed, r2l, masked=True):
    rng = np.random.default_rng(seed)
    psi = rng.normal(0, 1.5, size=(S, S, 4))
    return channel_probs(psi, bos_edit_mask(S, r2l) if masked else None)


@st.composite
def problems(draw, max_n=3, max_slot=2, punctemes=PUNCTEMES, proper=False):
    """(grammar, heads, slots, node candidates, node probabilities, lattice, cand_p)."""
    heads = draw(projective_forests(max_n=max_n))
    n = len(heads)
    g = Grammar(S, punctemes)
    sym = st.integers(1, S - 1)
    slots = [[0] + draw(st.lists(sym, max_size=max_slot))] + [draw(st.lists(sym, max_size=max_slot))
                                                             for _ in range(n)]
    pairs = st.tuples(st.integers(0, len(punctemes) - 1), st.integers(0, len(punctemes) - 1))
    cands, probs = [], []
    for _ in range(n):
        extra = draw(st.sets(pairs, max_size=3)) - {(0, 0)}
        arr = np.array([(0, 0)] + sorted(extra), dtype=np.int64)
        w = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=len(arr), max_size=len(arr))))
        mass = 1.0 if proper else draw(st.floats(0.5, 1.0))  # < 1: like pairs pruned from W_d
        cands.append(arr)
        probs.append(w / w.sum() * mass)
    if draw(st.booleans()):  # half the time x = u of one derivation: a possible surface
        choice = [tuple(int(v) for v in c[draw(st.integers(0, len(c) - 1))]) for c in cands]
        slots = underlying_slots(heads, choice, g)
    lat = build_lattice(g, heads, slots, cands)
    cand_p = np.array([probs[int(w)][int(r)] for w, r in zip(lat.cand_node, lat.cand_row)])
    return g, heads, slots, cands, probs, lat, cand_p


# ------------------------------------------------------------------ DP properties
@DP_SETTINGS
@given(prob=problems(), seed=st.integers(0, 2**32 - 1), r2l=st.booleans(), masked=st.booleans())
def test_dp_equals_brute_force(prob, seed, r2l, masked):
    g, heads, slots, cands, probs, lat, cand_p = prob
    phi = channel(seed, r2l, masked)
    bf = brute_force(g, heads, slots, cands, probs, phi, r2l)
    res = inside_outside(lat, g, cand_p, phi, r2l)
    logbest, best = viterbi(lat, g, cand_p, phi, r2l)
    if bf["Z"] == 0.0:
        assert res.logZ == -math.inf and logbest == -math.inf and np.all(best == -1)
        return
    assert res.logZ == pytest.approx(math.log(bf["Z"]), abs=1e-9)
    assert log_prob(lat, g, cand_p, phi, r2l) == pytest.approx(res.logZ, abs=1e-12)
    for k in range(lat.n_candidates):
        assert res.mu[k] == pytest.approx(bf["marginals"][int(lat.cand_node[k])][int(lat.cand_row[k])], abs=1e-9)
    assert logbest == pytest.approx(math.log(bf["best"]), abs=1e-9)


@DP_SETTINGS
@given(prob=problems(max_n=5, max_slot=3), seed=st.integers(0, 2**32 - 1), r2l=st.booleans())
def test_probabilities_and_marginals_are_in_range(prob, seed, r2l):
    g, heads, slots, cands, probs, lat, cand_p = prob
    phi = channel(seed, r2l)
    res = inside_outside(lat, g, cand_p, phi, r2l)
    assert not math.isnan(res.logZ)
    if res.logZ == -math.inf:
        return
    assert res.logZ <= 1e-12  # p(x|T) in (0, 1]
    assert np.all(np.isfinite(res.mu)) and np.all(res.mu >= -1e-12) and np.all(res.mu <= 1 + 1e-9)
    np.testing.assert_allclose(np.add.reduceat(res.mu, lat.cand_ptr[:-1]), 1.0, atol=1e-9)
    assert np.all(np.isfinite(res.counts)) and np.all(res.counts >= -1e-12)


def surface_strings(max_len, symbols):
    """Every string over ``symbols`` of length ≤ max_len."""
    return [list(t) for k in range(max_len + 1) for t in itertools.product(symbols, repeat=k)]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(prob=problems(max_n=2, max_slot=0, punctemes=[(), (1,), (2,)], proper=True),
       seed=st.integers(0, 2**32 - 1), r2l=st.booleans())
def test_surface_probabilities_sum_to_one(prob, seed, r2l):
    g, heads, slots, cands, probs, _, _ = prob
    n = len(heads)
    phi = channel(seed, r2l)
    # one-token punctemes over symbols 1, 2: a slot's underlying string has at most n tokens,
    # the surface no more (the channel never inserts); symbol 3 is never generated
    strings = surface_strings(n, (1, 2))
    total = 0.0
    for xs in itertools.product(strings, repeat=n + 1):
        slots = [[0] + xs[0]] + [list(x) for x in xs[1:]]
        lat = build_lattice(g, heads, slots, cands)
        cp = np.array([probs[int(w)][int(r)] for w, r in zip(lat.cand_node, lat.cand_row)])
        lp = log_prob(lat, g, cp, phi, r2l)
        total += math.exp(lp) if lp > -math.inf else 0.0
    assert total == pytest.approx(1.0, abs=1e-9)


def _derivation_log_prob(g, heads, slots, cands, probs, rows, phi, r2l):
    choice = [tuple(int(v) for v in cands[w][r]) for w, r in enumerate(rows)]
    us = underlying_slots(heads, choice, g)
    chans = [channel_prob(u, x, phi, r2l, use_max=True) for u, x in zip(us, slots)]
    prior = math.prod(probs[w][r] for w, r in enumerate(rows))
    return prior, chans


@DP_SETTINGS
@given(prob=problems(max_n=4), seed=st.integers(0, 2**32 - 1), r2l=st.booleans())
def test_viterbi_and_samples_reproduce_the_surface_through_the_channel(prob, seed, r2l):
    g, heads, slots, cands, probs, lat, cand_p = prob
    phi = channel(seed, r2l)
    logbest, best = viterbi(lat, g, cand_p, phi, r2l)
    if logbest == -math.inf:
        with pytest.raises(ValueError, match="impossible"):
            sample_posterior(lat, g, cand_p, phi, r2l, 3, seed=seed)
        return
    rows = [int(lat.cand_row[k]) for k in best]
    prior, chans = _derivation_log_prob(g, heads, slots, cands, probs, rows, phi, r2l)
    assert all(c > 0 for c in chans)  # every slot of x is produced from the chosen u
    assert math.log(prior) + sum(math.log(c) for c in chans) == pytest.approx(logbest, abs=1e-9)
    samples = sample_posterior(lat, g, cand_p, phi, r2l, 20, seed=seed)
    assert samples.shape == (20, len(heads))
    for draw in samples:
        assert all(lat.cand_node[k] == w for w, k in enumerate(draw))
        rows = [int(lat.cand_row[k]) for k in draw]
        assert all(c > 0 for c in _derivation_log_prob(g, heads, slots, cands, probs, rows, phi, r2l)[1])
    assert np.array_equal(samples, sample_posterior(lat, g, cand_p, phi, r2l, 20, seed=seed))  # seeded


@DP_SETTINGS
@given(prob=problems(max_n=5), seed=st.integers(0, 2**32 - 1), r2l=st.booleans())
def test_nothing_mutates_its_inputs(prob, seed, r2l):
    g, heads, slots, cands, probs, lat, cand_p = prob
    phi = channel(seed, r2l)
    before = copy.deepcopy((heads, slots, cands, cand_p, phi, g.pm_ptr, g.pm_sym))
    lat_before = {k: v.copy() for k, v in vars(lat).items() if isinstance(v, np.ndarray)}
    build_lattice(g, heads, slots, cands)
    res = inside_outside(lat, g, cand_p, phi, r2l, tilt=np.linspace(0, 1, lat.n_candidates))
    log_prob(lat, g, cand_p, phi, r2l)
    viterbi(lat, g, cand_p, phi, r2l)
    if res.logZ > -math.inf:
        sample_posterior(lat, g, cand_p, phi, r2l, 5)
    after = (heads, slots, cands, cand_p, phi, g.pm_ptr, g.pm_sym)
    assert before[:2] == after[:2]
    for a, b in zip(before[2] + list(before[3:]), after[2] + list(after[3:])):
        assert np.array_equal(a, b)
    for k, v in lat_before.items():
        assert np.array_equal(v, getattr(lat, k)), k


# ------------------------------------------------------------------ model properties
@pytest.fixture(scope="module")
def trained():
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    test, _ = preprocess_file(SAMPLE / "en_sample-ud-test.conllu")
    cfg = TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0, direction="r2l", progress=False)
    model, _ = train_model(train, [], cfg)
    return model, test


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_model_on_random_punctuation(trained, data):
    model, test = trained
    s = copy.deepcopy(data.draw(st.sampled_from(test[:30])))
    tokens = st.sampled_from(model.inventory.symbols[2:] + ["\u203d", "\U0001F600", "\uff0c"])
    s.slots = [tuple(data.draw(st.one_of(st.just(list(x)), st.just([]), st.lists(tokens, min_size=1, max_size=1),
                                         st.lists(tokens, max_size=3))))
               for x in s.slots]
    frozen = copy.deepcopy(s)
    prep = model.prepare_eval([s])
    lp = model.log_probs(prep)[0]
    lp_backoff = model.log_probs(prep, backoff=True)[0]
    assert not math.isnan(lp) and lp <= 1e-12
    assert math.isfinite(lp_backoff) and lp_backoff <= 1e-12
    if lp > -math.inf:
        POSSIBLE.append(1)
        assert lp_backoff >= lp + math.log1p(-model.backoff_eps) - 1e-9
        best = model.best_underlying(prep[0])
        u = underlying_sequences(s.heads, best)
        u[0] = ["^"] + list(u[0])
        x = [["^"] + list(s.slots[0])] + [list(t) for t in s.slots[1:]]
        ids = model.inventory.symbol_id
        phi = model.phi()
        for ui, xi in zip(u, x):
            assert channel_prob([ids(t) for t in ui], [ids(t) for t in xi], phi, model.r2l) > 0
    assert s == frozen  # scoring never mutates the sentence


def test_random_punctuation_examples_were_often_possible(trained):
    """The property above is only meaningful if its derivation branch runs."""
    if not POSSIBLE:
        test_model_on_random_punctuation(trained)
    assert len(POSSIBLE) >= 10


@pytest.mark.parametrize("method", ["sample", "slot"])
def test_restored_punctuation_is_reproducible_and_generable(trained, method):
    """The decoders' output: seeded (same seed, same result); for the sentence-level sample
    decoder, a sampled sentence, hence one the model generates (p(x̂|T) > 0 with no smoothing)."""
    from spacy_punctgen.decode.mbr import restore_sentence

    model, test = trained
    for s in test[:8]:
        frozen = copy.deepcopy(s)
        got = restore_sentence(model, s, method=method, n_samples=200, seed=3)
        assert got == restore_sentence(model, s, method=method, n_samples=200, seed=3)
        assert len(got) == len(s.slots) and all(0.0 < c.prob <= 1.0 for c in got)
        restored = copy.deepcopy(s)
        restored.slots = [tuple(c.surface) for c in got]
        lp = model.log_prob(restored) if method == "sample" else model.log_probs(model.prepare_eval([restored]),
                                                                                  backoff=True)[0]
        assert math.isfinite(lp) and lp <= 1e-12
        assert s == frozen
