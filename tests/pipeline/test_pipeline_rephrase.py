"""``rephrase(doc, order_model)`` of spacy_punctgen/pipeline/rephrase.py on sample Docs."""
from collections import Counter

import pytest
import spacy

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import detect_quote_xpos, preprocess_sentence
from spacy_punctgen.decode.rephrase import OrderModel, surface_tree
from spacy_punctgen.pipeline.doc_convert import doc_from_ud
from spacy_punctgen.pipeline.rephrase import rephrase

TRAIN = "assets/sample/en_sample-ud-train.conllu"
TEST = "assets/sample/en_sample-ud-test.conllu"


@pytest.fixture(scope="module")
def order_model():
    uds = read_conllu(TRAIN)
    qx = detect_quote_xpos(TRAIN, uds)
    return OrderModel.fit(surface_tree(u, s) for u, s in ((u, preprocess_sentence(u, qx)[0]) for u in uds) if s)


def test_rephrase_docs(order_model):
    nlp = spacy.blank("en")
    docs = [doc_from_ud(nlp.vocab, ud) for ud in read_conllu(TEST)[:20]]
    changed = 0
    for doc in docs:
        (text,) = rephrase(doc, order_model, seed=3)
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
