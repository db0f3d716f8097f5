"""Punctuation correction (spacy_punctgen/decode/correct.py): the noise model, the per-slot posterior
against brute-force enumeration, and corrections on toy and shipped models."""
import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.data.damage import ERROR_TYPES, DamageConfig, damage_sentences
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.correct import (FIRST, INTERIOR, LAST, SlotNoise, _position, correct_from_marginals,
                                           correct_sentences, correct_slot, correction_marginals)
from spacy_punctgen.evaluation.metrics import edit_distance
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.testing.reference import brute_joint, joint_marginals
from spacy_punctgen.testing.toy import three_word_tree, toy_model, toy_sentences

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample" / "en_sample-ud-test.conllu"


@pytest.fixture(scope="module")
def shipped():
    return PunctModel.from_disk(default_model_path("en"))


@pytest.fixture(scope="module")
def sample():
    return preprocess_file(SAMPLE)[0]


# ---------------------------------------------------------------- the noise model
@pytest.mark.parametrize("x", [(), (",",), (";",), (".",), ("\u201d", "."), (",", "\u201c"), ("(",), (")", ",", "."),
                               ("?", "\u201d")])
@pytest.mark.parametrize("pos", [FIRST, INTERIOR, LAST])
def test_noise_distribution_sums_to_one(x, pos):
    noise = SlotNoise({t: 0.1 + 0.1 * k for k, t in enumerate(ERROR_TYPES)})
    d = noise.distribution(x, pos)
    assert sum(d.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(p > 0 for p in d.values())


def test_noise_known_cases():
    r = {t: 0.0 for t in ERROR_TYPES}
    noise = SlotNoise({**r, "missing_final": 0.3, "quote_transposition": 0.5})
    assert noise.distribution((".",), LAST) == pytest.approx({(".",): 0.7, (): 0.3})
    assert noise.distribution((".",), INTERIOR) == {(".",): 1.0}  # only the last slot's final mark
    d = noise.distribution(("\u201d", "."), LAST)
    assert d == pytest.approx({("\u201d", "."): 0.35, (".", "\u201d"): 0.35, ("\u201d",): 0.3})
    spur = SlotNoise({**r, "spurious_comma": 0.2})
    assert spur.distribution((), INTERIOR) == pytest.approx({(): 0.8, (",",): 0.2})
    assert spur.distribution((), FIRST) == {(): 1.0}
    splice = SlotNoise({**r, "comma_splice": 0.4})
    assert splice.distribution((";",), INTERIOR) == pytest.approx({(";",): 0.6, (",",): 0.4})
    assert splice.prob((",",), (";",), INTERIOR) == pytest.approx((1 - splice.eps) * 0.4 + splice.eps)


def test_noise_fit_recovers_rates(sample):
    config = DamageConfig(missing_comma=0.3, spurious_comma=0.05, comma_splice=0.5, missing_final=0.2,
                          quote_transposition=0.4, dropped_quote=0.2)
    gold = sample * 6
    bad, report = damage_sentences(gold, seed=3, config=config)
    fitted = SlotNoise.fit(gold, bad)
    for t, rate in report.rates().items():
        assert fitted.rates[t] == pytest.approx(rate, abs=0.02), t


def test_noise_roundtrip_and_errors():
    noise = SlotNoise.from_config(eps=1e-3)
    assert SlotNoise.from_dict(noise.to_dict()) == noise
    with pytest.raises(ValueError, match="E825"):
        SlotNoise({"missing_comma": 2.0})
    with pytest.raises(ValueError, match="E826"):
        SlotNoise(noise.rates, eps=1.5)
    with pytest.raises(ValueError, match="E827"):
        SlotNoise.from_dict([1, 2])
    with pytest.raises(ValueError, match="E830"):
        correct_sentences(toy_model("l2r"), toy_sentences(), noise={"rates": {}})


# ---------------------------------------------------------------- against brute force
def _brute_choice(marg, y, pos, noise):
    """The per-slot MBR string under q ∝ p(x_i|T)·N(y|x_i), by enumeration (no pruning)."""
    post = {x: p * noise.prob(y, x, pos) for x, p in marg.items() if p > 0}
    if marg.get(y, 0.0) < noise.floor:
        post[y] = noise.floor * noise.prob(y, y, pos)
    z = sum(post.values())
    post = {x: w / z for x, w in post.items()}
    ranked = sorted(post.items(), key=lambda kv: (-kv[1], kv[0]))
    cands = [x for x, _ in ranked[:8]] + ([y] if y not in dict(ranked[:8]) else [])
    risks = [sum(w * edit_distance(c, s) for s, w in post.items()) for c in cands]
    return cands, risks, post


@pytest.mark.parametrize("direction", ["l2r", "r2l"])
def test_correction_matches_brute_force(direction):
    model = toy_model(direction, seed=5)
    sent = three_word_tree()
    brute = joint_marginals(brute_joint(model, sent), len(sent.slots))
    noise = SlotNoise({t: 0.2 for t in ERROR_TYPES}, eps=1e-3, floor=1e-2)
    ours = correction_marginals(model, [sent])[0]
    for i, b in enumerate(brute):
        for x, p in b.items():
            if p > 1e-6:
                assert ours[i].get(x, 0.0) == pytest.approx(p, rel=1e-6, abs=1e-9)
    observed = [s for s in itertools.islice(itertools.product(*[sorted(b, key=lambda x: -b[x])[:3] for b in brute]),
                                            30)]
    for ys in observed + [((), (), (",",), ())]:
        damaged = dataclasses.replace(sent, slots=list(ys))
        got = correct_sentences(model, [damaged], noise)[0]
        for i, (c, y) in enumerate(zip(got, ys)):
            pos = _position(i, len(sent.words))
            cands, risks, post = _brute_choice(dict(brute[i]), y, pos, noise)
            assert c.observed == y
            assert c.surface in cands
            assert risks[cands.index(c.surface)] == pytest.approx(min(risks), abs=1e-9)
            assert c.prob == pytest.approx(post[c.surface], rel=1e-5)


# ---------------------------------------------------------------- behaviour
def test_correct_toy_sentences_stay_when_errors_are_rare():
    model = toy_model("r2l")
    noise = SlotNoise({t: 1e-6 for t in ERROR_TYPES}, eps=1e-9, floor=1e-6)
    for sent, ch in zip(toy_sentences(), correct_sentences(model, toy_sentences(), noise)):
        assert [c.surface for c in ch] == [tuple(s) for s in sent.slots]
        assert min(c.prob for c in ch) > 0.99


def test_correct_sentences_stay_unchanged(shipped, sample):
    """Correct text: nearly every slot is left as it is, with high probability."""
    ch = correct_sentences(shipped, sample)
    flat = [c for sent in ch for c in sent]
    kept = [c for c in flat if c.surface == c.observed]
    assert len(kept) >= 0.98 * len(flat)
    assert np.median([c.prob for c in kept]) > 0.95


def test_removed_final_period_is_restored(shipped, sample):
    ending = [s for s in sample if s.slots[-1] == (".",)][:30]
    assert len(ending) >= 20
    damaged = [dataclasses.replace(s, slots=list(s.slots[:-1]) + [()]) for s in ending]
    ch = correct_sentences(shipped, damaged)
    restored = sum(sent[-1].surface == (".",) for sent in ch)
    assert restored >= 0.8 * len(ending)  # 21 of 25 with the shipped model and the default noise
    # the other slots are not touched by the missing period
    same = sum(c.surface == c.observed for sent in ch for c in sent[:-1])
    assert same >= 0.97 * sum(len(sent) - 1 for sent in ch)


def test_correction_repairs_damage_on_sample(shipped, sample):
    """On damaged sample sentences correction lowers the number of wrong slots."""
    bad, _ = damage_sentences(sample, seed=0, config=DamageConfig(missing_comma=0.5, missing_final=0.5,
                                                                  spurious_comma=0.03))
    ch = correct_from_marginals(bad, correction_marginals(shipped, bad), SlotNoise.from_config(
        DamageConfig(missing_comma=0.5, missing_final=0.5, spurious_comma=0.03)))
    wrong_before = sum(tuple(g) != tuple(o) for s, b in zip(sample, bad) for g, o in zip(s.slots, b.slots))
    wrong_after = sum(tuple(g) != c.surface for s, sent in zip(sample, ch) for g, c in zip(s.slots, sent))
    assert wrong_before > 20
    assert wrong_after < 0.7 * wrong_before


def test_correct_slot_observed_outside_marginal():
    noise = SlotNoise.from_config()
    c = correct_slot({(): 0.9, (",",): 0.1}, ("!", "!"), INTERIOR, noise)
    assert c.observed == ("!", "!")
    assert c.surface in ((), ("!", "!"))


def test_bad_slots_refused():
    s = toy_sentences()[0]
    bad = dataclasses.replace(s, slots=s.slots[:-1])
    with pytest.raises(ValueError, match="E822"):
        correct_sentences(toy_model("l2r"), [bad])
