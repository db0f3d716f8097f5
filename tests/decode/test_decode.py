"""Restoration decoding: samples and exact slot marginals against brute-force enumeration of
every underlying tree T' and channel path; MBR choices; determinism; clear errors."""
from collections import Counter

import numpy as np
import pytest

from spacy_punctgen.inference.dp import ABSORB_LEFT, ABSORB_RIGHT, KEEP, TRANSPOSE
from spacy_punctgen.model.channel import channel_distribution, sample_channel
from spacy_punctgen.decode.mbr import (METHODS, SlotChoice, mbr_index, restore_sentence,
                                   restore_sentences, sample_punctuation, slot_marginals)
from spacy_punctgen.evaluation.metrics import edit_distance
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.testing.reference import brute_joint, joint_marginals
from spacy_punctgen.testing.toy import toy_inventory, toy_model, toy_sentences

N_BIG = 20000


@pytest.fixture(scope="module", params=["l2r", "r2l", "attach"])
def model(request):
    return toy_model(request.param)


@pytest.mark.parametrize("which", ["compiled", "reference"])
@pytest.mark.parametrize("prune", [0.0, None])
@pytest.mark.parametrize("k", [0, 2, 4])
def test_exact_marginals_match_brute_force(model, k, prune, which, monkeypatch):
    """The library's (compiled) slot marginals and the NumPy reference's, against brute force."""
    import spacy_punctgen.decode.marginal as marginal
    import spacy_punctgen.testing.exact_mbr as reference

    tol = 1e-12 if prune == 0.0 else 1e-5  # None: the default pruning of tiny states
    if prune is not None:
        monkeypatch.setattr(marginal, "EXACT_PRUNE", prune)
        monkeypatch.setattr(reference, "EXACT_PRUNE", prune)
    sent = toy_sentences()[k]
    joint = brute_joint(model, sent)
    assert sum(joint.values()) == pytest.approx(1.0, abs=1e-9)
    brute = joint_marginals(joint, len(sent.slots))
    exact = (slot_marginals if which == "compiled" else reference.slot_marginals)(model, sent)
    for i, (b, e) in enumerate(zip(brute, exact)):
        assert set(e) <= set(b), i
        if prune == 0.0:
            assert set(e) == {x for x in b if b[x] > 0}, i
        for x in set(b) | set(e):
            assert e.get(x, 0.0) == pytest.approx(b[x], abs=tol), (i, x)


@pytest.mark.parametrize("k", [0, 4])
def test_sample_frequencies_match_brute_force(model, k):
    sent = toy_sentences()[k]
    joint = brute_joint(model, sent)
    samples = sample_punctuation(model, sent, n_samples=N_BIG, seed=11)
    freq = Counter(tuple(x) for x in samples)
    assert set(freq) <= {x for x, p in joint.items() if p > 0}
    for x, p in joint.items():  # whole-sentence frequencies: the slots are drawn jointly
        sd = np.sqrt(p * (1 - p) / N_BIG)
        assert abs(freq[x] / N_BIG - p) <= 5 * sd + 1e-3, (x, freq[x] / N_BIG, p)


def test_channel_distribution_matches_the_inverted_automaton():
    """The channel run forward (model/channel.py) and the dense automaton that recognises a
    surface string (testing/reference.automaton, the machine the DP uses) agree on p(x | u)."""
    from spacy_punctgen.testing.reference import automaton

    rng = np.random.default_rng(0)
    logits = rng.normal(0, 1.5, size=(4, 4, 4))
    phi = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    for u in [(2,), (1, 2), (3, 3, 1), (1, 2, 3, 2)]:
        for r2l in (False, True):
            d = channel_distribution(u, phi, r2l)
            assert sum(d.values()) == pytest.approx(1.0)
            for x, p in d.items():
                alpha, mats, rho = automaton(x, 4, phi, r2l)
                v = alpha
                for s in u:
                    v = v @ mats[s]
                assert p == pytest.approx(float(v @ rho), abs=1e-12)


@pytest.mark.parametrize("edit,u,x", [
    (KEEP, (1, 2, 3), (1, 2, 3)),
    (ABSORB_LEFT, (1, 2, 3), (1,)),
    (ABSORB_RIGHT, (1, 2, 3), (3,)),
    (TRANSPOSE, (1, 2), (2, 1)),
])
def test_each_edit_does_what_its_name_says(edit, u, x):
    phi = np.zeros((4, 4, 4))
    phi[..., edit] = 1.0
    assert channel_distribution(u, phi, False) == {x: 1.0}
    rows = sample_channel(u, phi, False, np.full((3, len(u) - 1), 0.5))
    assert [tuple(int(v) for v in r if v >= 0) for r in rows] == [x] * 3


def test_mbr_beats_the_mode_on_a_hand_built_case():
    # the mode ε is far (3 edits) from both other strings; "A B C" is 1 edit from "A B D"
    support = [(), ("A", "B", "C"), ("A", "B", "D")]
    w = [0.34, 0.33, 0.33]
    assert mbr_index(support, support, w) == 1
    assert mbr_index(support, support, [0.6, 0.2, 0.2]) == 0


def test_marginal_and_slot_pick_the_brute_force_mbr_string(model):
    sent = toy_sentences()[2]
    brute = joint_marginals(brute_joint(model, sent), len(sent.slots))
    exact = restore_sentence(model, sent, method="marginal")
    slot = restore_sentence(model, sent, method="slot", n_samples=N_BIG, seed=5)
    assert len(exact) == len(slot) == len(sent.words) + 1
    for i, b in enumerate(brute):
        risk = {c: sum(p * edit_distance(c, s) for s, p in b.items()) for c in b}
        best = min(risk.values())
        assert risk[exact[i].surface] == pytest.approx(best, abs=1e-12), i
        assert exact[i].prob == pytest.approx(b[exact[i].surface], abs=1e-5)  # default pruning
        assert risk[slot[i].surface] <= best + 0.02, i  # sampling error only
        assert isinstance(slot[i], SlotChoice)


def test_sample_method_returns_a_sample_and_slot_risk_is_never_higher(model):
    sent = toy_sentences()[3]
    N = 150
    samples = sample_punctuation(model, sent, n_samples=N, seed=2)
    by_sent = [c.surface for c in restore_sentence(model, sent, method="sample", n_samples=N, seed=2)]
    by_slot = [c.surface for c in restore_sentence(model, sent, method="slot", n_samples=N, seed=2)]
    assert by_sent in [list(x) for x in samples]

    def risk(x):
        return sum(edit_distance(a, b) for s in samples for a, b in zip(x, s))

    assert risk(by_slot) <= risk(by_sent)
    assert risk(by_sent) == min(risk(s) for s in samples)


@pytest.mark.parametrize("method", METHODS)
def test_deterministic_under_a_seed(model, method):
    sents = toy_sentences()
    a = restore_sentences(model, sents, method=method, n_samples=200, seed=7)
    b = restore_sentences(model, sents, method=method, n_samples=200, seed=7)
    assert a == b
    assert [len(r) for r in a] == [len(s.words) + 1 for s in sents]
    for r in a:
        assert all(0.0 < c.prob <= 1.0 for c in r)


def test_seed_changes_samples(model):
    sent = toy_sentences()[3]
    assert sample_punctuation(model, sent, 200, seed=1) != sample_punctuation(model, sent, 200, seed=2)


def test_slots_of_the_input_are_ignored(model):
    sent = toy_sentences()[1]
    bare = PunctSentence(sent.words, sent.upos, sent.xpos, sent.deprels, sent.heads,
                         [()] * (len(sent.words) + 1))
    assert restore_sentence(model, bare, "slot", 100, 3) == restore_sentence(model, sent, "slot", 100, 3)


def _bad(words, heads):
    n = len(words)
    return PunctSentence(words, ["NOUN"] * n, ["_"] * n, ["dep"] * n, heads, [()] * (n + 1), sent_id="s9")


@pytest.mark.parametrize("sentence,match", [
    (_bad([], []), "s9.*no words"),
    (_bad(["a", "b"], [1, 0]), "s9.*heads"),  # cycle
    (_bad(["a", "b"], [-1, 5]), "s9.*heads"),  # out of range
    (_bad(["a", "b", "c", "d"], [2, -1, 1, 0]), "s9.*projective"),  # crossing arcs
])
def test_bad_sentences_are_clear_errors(model, sentence, match):
    with pytest.raises(ValueError, match=match):
        restore_sentence(model, sentence)


def test_bad_arguments(model):
    sent = toy_sentences()[0]
    with pytest.raises(ValueError, match="method"):
        restore_sentence(model, sent, method="viterbi")
    with pytest.raises(ValueError, match="n_samples"):
        restore_sentence(model, sent, method="slot", n_samples=0)


def test_inner_template_models_are_refused():
    from spacy_punctgen.features.templates import DEFAULT_TEMPLATES, FeatureConfig

    sents = toy_sentences()
    m = PunctModel(toy_inventory(sents), FeatureConfig(templates=list(DEFAULT_TEMPLATES) + ["inner"]))
    m.initialize(m.prepare_all(sents))
    with pytest.raises(ValueError, match="inner"):
        restore_sentence(m, sents[0])
