"""CPP and UPP trained on the sample's streams: the training documents have the test streams'
form, a saved model decodes the same, and the outputs are well-formed."""
import numpy as np
import pytest

from spacy_punctgen.evaluation.stream import sentence_streams
from spacy_punctgen.incremental.labels import PAPER
from spacy_punctgen.incremental.model import IncrementalPunctuator
from spacy_punctgen.incremental.tagger import PosTagger


def test_training_documents_are_the_test_streams(sample_docs):
    sentences, docs, _, _ = sample_docs
    streams = sentence_streams(sentences, 10, lower=True)
    assert [d.words for d in docs] == [s.words for s in streams]
    assert [d.gaps for d in docs] == [s.gold for s in streams]
    for d in docs:  # every training document's gold is reachable
        assert len(d.oracle(PAPER)) == 2 * len(d.words)


@pytest.fixture(params=["upp", "cpp"])
def trained(request, sample_model):
    return sample_model(request.param)


def test_trained_model_learns_and_round_trips(trained, sample_docs, tmp_path):
    _, docs, dev, _ = sample_docs
    assert trained.meta["best_epoch"] >= 1 and trained.meta["train_docs"] == len(docs)
    # on its own training streams it marks most sentence ends and attaches most words
    heads, marks = zip(*(trained.predict(d.words) for d in docs))
    gold_f = sum(m == 2 for d in docs for m in d.marks)
    hit_f = sum(g == p == 2 for d, ms in zip(docs, marks) for g, p in zip(d.marks, ms))
    assert hit_f > 0.5 * gold_f
    uas = np.mean([a == b for d, hs in zip(docs, heads) for a, b in zip(hs, d.train_heads(PAPER))])
    assert uas > 0.6
    trained.to_disk(tmp_path / "m")
    again = IncrementalPunctuator.from_disk(tmp_path / "m")
    for d in dev:
        assert again.predict(d.words) == trained.predict(d.words)
    assert trained.predict([]) == ([], [])
    gaps = trained.gaps(dev[0].words)
    assert len(gaps) == len(dev[0].words) and set(gaps) <= {"", ",", "."}


def test_tagger_learns_the_sample(sample_docs):
    _, docs, _, _ = sample_docs
    tagger = PosTagger(2 ** 16).fit([(d.words, d.upos) for d in docs], epochs=4)
    acc = np.mean([a == b for d in docs for a, b in zip(tagger(d.words), d.upos)])
    assert acc > 0.9


def test_a_broken_model_folder_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="E930"):
        IncrementalPunctuator.from_disk(tmp_path)
    with pytest.raises(ValueError, match="E921"):
        IncrementalPunctuator("crf")
