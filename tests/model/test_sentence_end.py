"""The sentence-end expert (spacy_punctgen/model/sentence_end.py): its features, what it learns,
the slot evidence restoration multiplies in, and its files."""
import json

import numpy as np
import pytest

from spacy_punctgen.model.lexical import CLASSES
from spacy_punctgen.model.sentence_end import (SENTENCE_END_CFG_FILE, SENTENCE_END_PARAMS_FILE, SentenceEndExpert,
                                               sentence_features)

QUESTIONS = [["where", "are", "you", "going", "tonight"], ["can", "you", "help", "me", "with", "this"],
             ["is", "it", "raining", "outside"], ["what", "time", "is", "it"], ["do", "you", "like", "tea"]]
STATEMENTS = [["i", "am", "going", "home"], ["the", "cat", "sat", "on", "the", "mat"], ["we", "like", "tea"],
              ["it", "is", "raining", "outside"], ["he", "left", "early", "today"]]


def test_features_of_a_hand_built_sentence():
    feats = sentence_features(["Where", "are", "you", "going"])
    for f in ("bias", "len=4", "w0=where", "w1=are", "w01=where|are", "w012=where|are|you", "wl=going",
              "wl2=you|going", "wl3=are|you|going", "sufl=ing", "bag=you", "wh0", "wh3", "wh_aux", "cap0"):
        assert f in feats
    assert "aux0" not in feats and "capl" not in feats and "titlecase" not in feats
    assert "aux0" in sentence_features(["is", "it", "raining"])
    assert "titlecase" in sentence_features(["Terms", "Of", "Use"])
    assert "digl" in sentence_features(["call", "me", "at", "5pm"])
    assert sentence_features([])[:2] == ["bias", "len=0"]


def test_the_bag_ignores_order_and_repeats():
    a = [f for f in sentence_features(["a", "b", "a"]) if f.startswith("bag=")]
    assert a == ["bag=a", "bag=b"]


@pytest.fixture(scope="module")
def trained():
    train = [(q, ["?"]) for q in QUESTIONS] * 20 + [(s, ["."]) for s in STATEMENTS] * 20
    dev = [(q, ["?"]) for q in QUESTIONS] + [(s, ["."]) for s in STATEMENTS]
    expert, info = SentenceEndExpert.fit(train, dev, epochs=3, length=4096)
    return expert, info


def test_fit_learns_the_sentence_type(trained):
    expert, info = trained
    p = expert.predict([["where", "is", "it"], ["i", "like", "it", "here"]])
    q, dot = CLASSES.index("?"), CLASSES.index(".")
    assert p[0, q] > p[0, dot] and p[1, dot] > p[1, q]
    assert np.allclose(p.sum(axis=1), 1.0)
    assert info["train_sentences"] == 200 and len(info["history"]) == 3
    assert expert.prior[q] == pytest.approx(101 / 208)  # add-one training frequencies


def test_slot_evidence_rows(trained):
    expert, _ = trained
    expert.inner_factor, expert.weight = 0.1, 0.5
    words = ["where", "is", "it"]
    (rows,) = expert.slot_evidence([words])
    assert rows.shape == (3, len(CLASSES))
    terminal = [CLASSES.index(c) for c in (".", "?", "!")]
    other = [i for i in range(len(CLASSES)) if i not in terminal]
    assert np.all(rows[:-1, terminal] == 0.1) and np.all(rows[:-1, other] == 1.0)
    want = (expert.predict([words])[0] / expert.prior) ** 0.5
    assert np.allclose(rows[-1], want)
    (at_one,) = expert.slot_evidence([words], weight=1.0)
    assert np.allclose(at_one[-1], want ** 2)
    assert [r.shape for r in expert.slot_evidence([[], ["yes"]])] == [(0, len(CLASSES)), (1, len(CLASSES))]


def test_files_round_trip(trained, tmp_path):
    expert, _ = trained
    expert.weight, expert.inner_factor = 0.75, 0.3
    expert.to_disk(tmp_path / "se")
    back = SentenceEndExpert.from_disk(tmp_path / "se")
    assert (back.weight, back.inner_factor, back.length) == (0.75, 0.3, expert.length)
    assert np.array_equal(back.prior, expert.prior)
    for k, v in expert.params().items():
        assert np.array_equal(back.params()[k], v)
    words = [["where", "is", "it"], ["we", "like", "tea"]]
    assert np.array_equal(back.predict(words), expert.predict(words))


def test_damaged_files_are_named(trained, tmp_path):
    expert, _ = trained
    expert.to_disk(tmp_path / "se")
    with pytest.raises(ValueError, match="E027.*does not hold"):
        SentenceEndExpert.from_disk(tmp_path / "nothing")
    (tmp_path / "se" / SENTENCE_END_PARAMS_FILE).write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="E027"):
        SentenceEndExpert.from_disk(tmp_path / "se")
    expert.to_disk(tmp_path / "se")
    cfg = json.loads((tmp_path / "se" / SENTENCE_END_CFG_FILE).read_text())
    for key, value, what in (("prior", [1.0], "prior"), ("inner_factor", 0.0, "inner_factor"),
                             ("weight", float("nan"), "weight"), ("classes", ["x"], "settings")):
        bad = dict(cfg, **{key: value})
        (tmp_path / "se" / SENTENCE_END_CFG_FILE).write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=f"E027.*{what}"):
            SentenceEndExpert.from_disk(tmp_path / "se")


@pytest.mark.parametrize("kwargs,code", [({"weight": -1.0}, "E026"), ({"inner_factor": 1.5}, "E026"),
                                         ({"inner_factor": 0}, "E026"), ({"length": 0}, "E026"),
                                         ({"weight": True}, "E026")])
def test_bad_arguments_are_refused(kwargs, code):
    with pytest.raises(ValueError, match=code):
        SentenceEndExpert(**kwargs)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="E028"):
        SentenceEndExpert.fit([([], ["."])])
    with pytest.raises(ValueError, match="E027"):
        SentenceEndExpert(length=16).predict("where is it")
    with pytest.raises(ValueError, match="E027"):
        SentenceEndExpert(length=16).predict(["where is it"])
