"""Sample streams and small CPP / UPP models trained on them, shared by the incremental tests."""
from pathlib import Path

import pytest

from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.incremental.labels import PAPER
from spacy_punctgen.incremental.model import IncrementalPunctuator
from spacy_punctgen.incremental.streams import sentence_docs

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.fixture(scope="session")
def sample_docs():
    """(train sentences, train streams, dev streams, test streams) of the sample."""
    train = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")[0]
    dev = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")[0]
    test = preprocess_file(SAMPLE / "en_sample-ud-test.conllu")[0]
    return train, sentence_docs(train, PAPER), sentence_docs(dev, PAPER), sentence_docs(test, PAPER)


@pytest.fixture(scope="session")
def sample_model(sample_docs):
    """``sample_model(mode)``: a small model of that mode trained on the sample's streams."""
    made = {}

    def get(mode: str) -> IncrementalPunctuator:
        if mode not in made:
            _, docs, dev, _ = sample_docs
            model = IncrementalPunctuator(mode, beam=4, n_buckets=2 ** 16)
            model.fit(docs, dev, epochs=3, tagger_epochs=3)
            made[mode] = model
        return made[mode]

    return get
