"""``restore_mixtures`` (so ``restore_sentences`` and the component) decodes the sentences in runs of
about ``RESTORE_BATCH_WORDS`` words (issue 38): the priors of all sentences are no longer held at
once (a Doc of 100,000 words, ``nlp(text)``, held 140 MB of them and peaked at 780 MB), and the runs
change nothing in the results or in which sentence an error names."""
import tracemalloc
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_sentence
from spacy_punctgen.decode import mbr
from spacy_punctgen.decode.mbr import restore_mixtures, restore_sentences
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.testing.toy import toy_model, toy_sentences

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def _digest(choices):
    return [[(c.surface, c.prob) for c in sent] for sent in choices]


@pytest.fixture(scope="module")
def toy():
    return toy_model("r2l")


@pytest.mark.parametrize("method", ["marginal", "slot", "sample"])
def test_runs_change_no_result(toy, monkeypatch, method):
    sents = toy_sentences() * 3
    mixtures = [[s, s] for s in sents[:12]]
    kw = {} if method == "marginal" else {"n_samples": 50, "seed": 3}
    monkeypatch.setattr(mbr, "RESTORE_BATCH_WORDS", 10 ** 9)  # one run
    whole = _digest(restore_sentences(toy, sents, method=method, **kw))
    whole_mix = _digest(restore_mixtures(toy, mixtures, method=method, **kw))
    for words in (1, 7, 40):  # every sentence alone, and runs of a few
        monkeypatch.setattr(mbr, "RESTORE_BATCH_WORDS", words)
        assert _digest(restore_sentences(toy, sents, method=method, **kw)) == whole
        assert _digest(restore_mixtures(toy, mixtures, method=method, **kw)) == whole_mix


def test_an_error_names_the_sentence_by_its_place_in_the_call(toy, monkeypatch):
    monkeypatch.setattr(mbr, "RESTORE_BATCH_WORDS", 5)
    sents = (toy_sentences() * 2)[:6]
    bad = PunctSentence(words=["a", "b"], upos=["NOUN"] * 2, xpos=["_"] * 2, deprels=["root", "dep"],
                        heads=[-1, 5], slots=[()] * 3)
    calls = []
    monkeypatch.setattr(mbr, "marginal_slot_choices", lambda *a, **k: calls.append(1))
    with pytest.raises(ValueError, match=r"sentence #6"):
        restore_sentences(toy, sents + [bad])
    assert not calls  # refused before any decoding
    with pytest.raises(ValueError, match=r"\[E107\] sentence #3"):
        restore_mixtures(toy, [[s] for s in sents[:3]] + [[]])


def test_no_sentences_still_checks_the_model(toy):
    assert restore_sentences(toy, []) == []


def test_memory_does_not_grow_with_the_number_of_sentences():
    """Before: 31 MB for the sample's 4,400 words, 102 MB for four times as many (every prior at
    once); now about 20 MB for either (one run's priors, and the choices)."""
    model = PunctModel.from_disk(default_model_path("en"))
    sents = [p for name in ("train", "dev", "test")
             for ud in read_conllu(SAMPLE / f"en_sample-ud-{name}.conllu")
             for p in [preprocess_sentence(ud)[0]] if p is not None]
    restore_sentences(model, sents)  # the model's feature caches, once

    def peak(batch):
        tracemalloc.start()
        try:
            restore_sentences(model, batch)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    one, three = peak(sents), peak(sents * 3)
    assert three < 1.5 * one, (one / 2 ** 20, three / 2 ** 20)
