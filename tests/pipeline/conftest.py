"""Fixtures of the pipeline tests: a small punctgen model trained on the sample treebank, a
blank English pipeline analysing with it, and the sample's gold test trees as Docs."""
from pathlib import Path

import pytest
import spacy

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.pipeline.doc_convert import doc_from_ud
from spacy_punctgen.training.train import TrainConfig, train_model

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    """A punctgen model (two epochs, right to left) of the sample's training split, on disk."""
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    dev, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    cfg = TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=2, sentences_per_epoch=0, direction="r2l", progress=False)
    model, _ = train_model(train, dev, cfg)
    out = tmp_path_factory.mktemp("model")
    model.to_disk(out)
    return out


@pytest.fixture(scope="module")
def nlp(model_dir):
    """A blank English pipeline whose punctgen analyses with ``model_dir``."""
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(model_dir)})
    return nlp


@pytest.fixture(scope="session")
def gold_docs():
    """``gold_docs(nlp, n=12)``: the sample's first ``n`` test sentences (``None``: all) as Docs
    (gold trees, punctuation included) of ``nlp``'s vocab."""
    def make(nlp, n=12):
        return [doc_from_ud(nlp.vocab, ud) for ud in read_conllu(SAMPLE / "en_sample-ud-test.conllu")[:n]]

    return make


@pytest.fixture(scope="session")
def snapshot():
    """``snapshot(doc)``: every token's text, whitespace and annotations, to check a Doc is unchanged."""
    def make(doc):
        return [(t.text, t.whitespace_, t.pos_, t.tag_, t.dep_, t.head.i, t.is_sent_start) for t in doc]

    return make
