"""Restoration conditioned on the marks a text already has (decode/evidence.py): the free slots'
marginals given the observed ones, ``p(x_i | x_O, T)``, equal enumeration of every underlying
tree and channel path (one tree, and a mixture of trees reweighted by ``p(x_O | T_j)``); the
sampled decoders draw from the same distribution; impossible marks are dropped, not fatal."""
import copy
import itertools
from collections import Counter

import numpy as np
import pytest

from spacy_punctgen.decode.mbr import mixture_slot_marginals, restore_sentence, restore_sentences
from spacy_punctgen.testing.reference import brute_joint
from spacy_punctgen.testing.toy import toy_model, toy_sentences


@pytest.fixture(scope="module", params=["l2r", "r2l", "attach"])
def model(request):
    return toy_model(request.param)


def _observe(sent, mask, values):
    out = copy.deepcopy(sent)
    out.slots = [tuple(v) if o else () for o, v in zip(mask, values)]
    out.observed = tuple(mask)
    return out


def _conditional(joints, weights, mask, values):
    """Per slot, p(x_i | x_O) under the mixture Σ_j w_j p_j(x), by enumeration."""
    n = len(mask)
    out = [Counter() for _ in range(n)]
    total = 0.0
    for joint, w in zip(joints, weights):
        for x, p in joint.items():
            if all(x[i] == tuple(values[i]) for i in range(n) if mask[i]):
                total += w * p
                for i in range(n):
                    out[i][x[i]] += w * p
    return [{x: p / total for x, p in c.items() if p > 0} for c in out], total


def _masks(n_slots):
    return [m for m in itertools.product([False, True], repeat=n_slots) if any(m) and not all(m)]


@pytest.mark.parametrize("k", [0, 2, 3, 4])
def test_free_slots_given_the_observed_ones_equal_enumeration(model, k, monkeypatch):
    import spacy_punctgen.decode.marginal as marginal

    monkeypatch.setattr(marginal, "EXACT_PRUNE", 0.0)
    sent = toy_sentences()[k]
    joint = brute_joint(model, sent)
    rng = np.random.default_rng(k)
    support = [x for x, p in joint.items() if p > 1e-6]
    checked = 0
    for mask in _masks(len(sent.slots)):
        values = support[int(rng.integers(len(support)))]  # marks the model can make
        want, _ = _conditional([joint], [1.0], mask, values)
        got = mixture_slot_marginals(model, [_observe(sent, mask, values)])
        for i in (i for i, o in enumerate(mask) if not o):
            assert set(got[i]) == set(want[i]), (mask, i)
            for x, p in want[i].items():
                assert got[i][x] == pytest.approx(p, abs=1e-10), (mask, i, x)
        checked += 1
    assert checked >= 6


def test_the_conditioning_matters():
    """Not a vacuous check: on the toy sentence with quotes, an observed opening quote moves the
    closing quote's probability at the other slot."""
    model = toy_model("l2r")
    sent = toy_sentences()[0]  # He said “ hi ” .
    free = mixture_slot_marginals(model, [sent])
    given = mixture_slot_marginals(model, [_observe(sent, [False, False, True, False], sent.slots)])
    p_close = lambda m: sum(p for x, p in m[3].items() if "\u201d" in x)  # noqa: E731
    assert abs(p_close(given) - p_close(free)) > 0.05


def test_a_mixture_of_trees_is_reweighted_by_the_evidence(monkeypatch):
    import spacy_punctgen.decode.marginal as marginal

    monkeypatch.setattr(marginal, "EXACT_PRUNE", 0.0)
    model = toy_model("l2r")
    a = toy_sentences()[4]  # Yes , he left .
    b = copy.deepcopy(a)
    b.heads, b.deprels = [-1, 2, 0], ["root", "nsubj", "parataxis"]
    ja, jb = brute_joint(model, a), brute_joint(model, b)
    values = [(), (",",), (), ()]
    for mask in ([False, True, False, False], [True, True, False, False], [False, False, True, True]):
        want, _ = _conditional([ja, jb], [0.5, 0.5], mask, values)
        got = mixture_slot_marginals(model, [_observe(a, mask, values), _observe(b, mask, values)])
        for i in (i for i, o in enumerate(mask) if not o):
            for x, p in want[i].items():
                assert got[i].get(x, 0.0) == pytest.approx(p, abs=1e-10), (mask, i, x)


def test_sampled_decoders_draw_from_the_conditional():
    model = toy_model("r2l")
    sent = toy_sentences()[3]
    joint = brute_joint(model, sent)
    mask = [False, True, False, False, True]
    want, _ = _conditional([joint], [1.0], mask, sent.slots)
    obs = _observe(sent, mask, sent.slots)
    exact = restore_sentence(model, obs, method="marginal")
    slot = restore_sentence(model, obs, method="slot", n_samples=20000, seed=3)
    for i in (i for i, o in enumerate(mask) if not o):
        assert exact[i].prob == pytest.approx(want[i][exact[i].surface], abs=1e-5)
        assert slot[i].prob == pytest.approx(want[i].get(slot[i].surface, 0.0), abs=0.02)


def test_marks_the_model_cannot_make_are_dropped_not_fatal():
    model = toy_model("l2r")
    sent = toy_sentences()[1]  # apples , pears and plums .
    mask = [True, True, False, False, False]
    impossible = _observe(sent, mask, [("(",), (",",), (), (), ()])  # nothing opens a bracket at slot 0
    possible = _observe(sent, [False, True, False, False, False], [(), (",",), (), (), ()])
    got, want = restore_sentences(model, [impossible, possible])
    assert [c.surface for c in got][2:] == [c.surface for c in want][2:]
    unknown = _observe(sent, mask, [("\u2e2e",), (",",), (), (), ()])  # a mark the model never saw
    assert [c.surface for c in restore_sentence(model, unknown)][2:] == [c.surface for c in want][2:]


def test_a_mask_of_the_wrong_length_is_named():
    model = toy_model("l2r")
    sent = _observe(toy_sentences()[1], [True, False], [(), ()])
    with pytest.raises(ValueError, match="E191"):
        restore_sentence(model, sent)
