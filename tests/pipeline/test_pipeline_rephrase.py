"""``rephrase(doc, order_model)`` and ``fit_order_model`` of spacy_punctgen/api/rephrase.py on sample Docs."""
from collections import Counter

import pytest
import spacy

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import detect_quote_xpos, preprocess_sentence
from spacy_punctgen.decode.rephrase import OrderModel, surface_tree
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.doc_convert import doc_from_ud
from spacy_punctgen.api.rephrase import fit_order_model, rephrase
from spacy_punctgen.pipeline.shipped import default_model_path

TRAIN = "assets/sample/en_sample-ud-train.conllu"
TEST = "assets/sample/en_sample-ud-test.conllu"


@pytest.fixture(scope="module")
def model():
    return PunctModel.from_disk(default_model_path())


@pytest.fixture(scope="module")
def order_model():
    uds = read_conllu(TRAIN)
    qx = detect_quote_xpos(TRAIN, uds)
    return OrderModel.fit(surface_tree(u, s) for u, s in ((u, preprocess_sentence(u, qx)[0]) for u in uds) if s)


def test_rephrase_docs(order_model, model):
    nlp = spacy.blank("en")
    docs = [doc_from_ud(nlp.vocab, ud) for ud in read_conllu(TEST)[:20]]
    changed = 0
    for doc in docs:
        (text,) = rephrase(doc, order_model, model=model, seed=3)
        words = [t.text for t in doc if not t.is_punct]
        # every word comes back (the renderer glues marks to words, so compare characters)
        assert Counter("".join(words)) - Counter(text.replace(" ", "")) == Counter()
        assert text == text.strip()
        changed += text != doc.text.strip()
    assert changed >= 5


def test_rephrase_needs_a_parse(order_model):
    doc = spacy.blank("en")("no parse here")
    with pytest.raises(ValueError, match="E001"):
        rephrase(doc, order_model)


def test_rephrase_is_exported_at_the_package_root():
    import spacy_punctgen

    assert spacy_punctgen.rephrase is rephrase and "rephrase" in spacy_punctgen.__all__


@pytest.fixture(scope="module")
def full_order_model(model):
    return fit_order_model(TRAIN, model=model, setting="full")


def test_fit_order_model_settings(order_model, full_order_model):
    half = fit_order_model(TRAIN, setting="half")
    assert not half.underlying and half.stats == order_model.stats
    assert full_order_model.underlying and not any(rel == "punct" for _, rel in full_order_model.stats)
    with pytest.raises(ValueError, match="E870"):
        fit_order_model(TRAIN, setting="base")


def test_rephrase_docs_with_the_full_ordering(full_order_model, model):
    nlp = spacy.blank("en")
    docs = [doc_from_ud(nlp.vocab, ud) for ud in read_conllu(TEST)[:20]]
    changed = 0
    for doc in docs:
        (text,) = rephrase(doc, full_order_model, model=model, seed=3)
        words = [t.text for t in doc if not t.is_punct]
        assert Counter("".join(words)) - Counter(text.replace(" ", "")) == Counter()
        changed += text != doc.text.strip()
    # the same seed draws the same order
    assert all(rephrase(doc, full_order_model, model=model, seed=3) == rephrase(doc, full_order_model, model=model, seed=3)
               for doc in docs[:3])
    assert changed >= 5
