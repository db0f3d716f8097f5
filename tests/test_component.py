"""The punctgen spaCy component: factory, clear errors, analysis, round-trips."""
import math
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen.conllu_io import read_conllu
from spacy_punctgen.doc_convert import doc_from_ud
from spacy_punctgen.preprocess import preprocess_file
from spacy_punctgen.train import TrainConfig, train_model

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    dev, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    cfg = TrainConfig(epochs=2, sentences_per_epoch=0, direction="r2l", progress=False)
    model, _ = train_model(train, dev, cfg)
    out = tmp_path_factory.mktemp("model")
    model.to_disk(out)
    return out


@pytest.fixture(scope="module")
def nlp(model_dir):
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(model_dir)})
    return nlp


def gold_docs(nlp, n=12):
    return [doc_from_ud(nlp.vocab, ud) for ud in read_conllu(SAMPLE / "en_sample-ud-test.conllu")[:n]]


def test_factory_resolves_without_model():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen")
    with pytest.raises(ValueError, match="E003"):
        pipe(nlp("Hello world."))


def test_missing_parse_is_a_clear_error(nlp):
    with pytest.raises(ValueError, match="E001"):
        nlp("Hello, world.")


def test_non_ud_labels_are_a_clear_error(nlp):
    doc = Doc(nlp.vocab, words=["I", "sat", "on", "it", "."], heads=[1, 1, 1, 2, 1],
              deps=["nsubj", "ROOT", "prep", "pobj", "punct"], pos=["PRON", "VERB", "ADP", "PRON", "PUNCT"])
    with pytest.raises(ValueError, match="E002.*pobj|E002.*prep"):
        nlp(doc)


def test_bad_model_path_names_the_path(tmp_path):
    with pytest.raises(ValueError, match="E004.*nothing-here"):
        spacy.blank("en").add_pipe("punctgen", config={"model": str(tmp_path / "nothing-here")})


def test_analysis_of_real_sentences(nlp):
    for doc in gold_docs(nlp):
        doc = nlp(doc)
        entries = doc._.underlying_punct
        words = [t for t in doc if not (t.pos_ == "PUNCT" or t.dep_ == "punct")]
        assert len(entries) == len(words) + 1
        # the surface side is exactly the Doc's punctuation, slot by slot
        surface = [tok for e in entries for tok in e["surface"]]
        punct = [t.text for t in doc if t.pos_ == "PUNCT" or t.dep_ == "punct"]
        assert len(surface) == len(punct)
        for e in entries:
            if e["after"] is not None:
                assert doc[e["after"]] in words
        if math.isfinite(doc._.punct_logprob):
            assert all(e["underlying"] is not None for e in entries)
            for t in words:
                assert isinstance(t._.punct_left, tuple) and isinstance(t._.punct_right, tuple)
            # every surface token appears underlyingly (the channel never inserts), and
            # x_i = ε ⇔ u_i = ε except at slot 0, where the sentence-initial '^' may
            # absorb underlying marks (MODEL.md §1: that is what '^' is for)
            for e in entries:
                if e["surface"]:
                    assert e["underlying"]
                if e["slot"] > 0:
                    assert (len(e["surface"]) == 0) == (len(e["underlying"]) == 0)
        assert doc._.punct_logprob <= 0


def test_bytes_and_disk_round_trip(nlp, tmp_path):
    docs = [nlp(d) for d in gold_docs(nlp, 6)]
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("punctgen")
    nlp2.get_pipe("punctgen").from_bytes(nlp.get_pipe("punctgen").to_bytes())
    nlp.to_disk(tmp_path / "pipe")
    nlp3 = spacy.load(tmp_path / "pipe")
    for other in (nlp2, nlp3):
        for d, ref in zip(gold_docs(other, 6), docs):
            out = other(d)
            assert out._.underlying_punct == ref._.underlying_punct
            assert out._.punct_logprob == ref._.punct_logprob
