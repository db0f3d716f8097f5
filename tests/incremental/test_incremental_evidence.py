"""An incremental model's soft marks (incremental/evidence.py): the analysis is predict's, each row
is a distribution, and the scores are those the decoder compared when it chose the mark."""
import numpy as np
import pytest

from spacy_punctgen.incremental.evidence import mark_evidence, mark_evidence_windows
from spacy_punctgen.incremental.windows import predict_windows


@pytest.mark.parametrize("mode", ["upp", "cpp"])
def test_the_analysis_is_predicts_and_rows_are_distributions(sample_model, sample_docs, mode):
    model = sample_model(mode)
    for doc in sample_docs[3][:4]:
        ev = mark_evidence(model, doc.words)
        heads, marks = model.predict(doc.words)
        assert ev.heads == heads and ev.marks == marks
        assert ev.probs.shape == (len(doc.words), len(model.labels))
        assert np.allclose(ev.probs.sum(axis=1), 1.0) and (ev.probs >= 0).all()


@pytest.mark.parametrize("mode", ["upp", "cpp"])
def test_greedy_marks_win_their_rows(sample_model, sample_docs, mode):
    """Beam 1 takes the best legal action at each step; a mark that is not a full stop is always
    legal with the action that consumes the word, so the chosen mark scores at least as high as
    every such mark in its row (read at the wrong step or from the wrong columns, it would not)."""
    model = sample_model(mode)
    full = model.labels.is_full
    checked = 0
    for doc in sample_docs[3]:
        ev = mark_evidence(model, doc.words, beam=1)
        for i, m in enumerate(ev.marks):
            others = [ev.scores[i, k] for k in range(len(full)) if not full[k]]
            assert ev.scores[i, m] >= max(others) - 1e-6
            checked += 1
    assert checked > 100
    # and the rows are not all alike: the evidence says different things after different words
    assert np.ptp(ev.probs[:, 0]) > 0.1


def test_windows_give_predict_windows_analysis(sample_model, sample_docs):
    model = sample_model("upp")
    words = [w for doc in sample_docs[3] for w in doc.words]
    want = predict_windows(model, words, 40, 10)
    got = mark_evidence_windows(model, words, 40, 10)
    assert got.marks == want.marks and got.heads == want.heads
    assert got.probs.shape == (len(words), len(model.labels))
    # the rows of the first window's kept words are that window's decoding
    first = mark_evidence(model, words[:40])
    keep = want.starts[1]
    assert np.array_equal(got.probs[:keep], first.probs[:keep])


def test_empty_and_bad_windows(sample_model):
    model = sample_model("upp")
    ev = mark_evidence(model, [])
    assert ev.marks == [] and ev.probs.shape == (0, len(model.labels))
    with pytest.raises(ValueError, match="E934"):
        mark_evidence_windows(model, ["a", "b"], 1, 0)
