"""Correction of parsed Docs (spacy_punctgen/pipeline/correct.py): the extensions, and the text round trip."""
import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen.decode.correct import SlotNoise
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.correct import correct_docs, predict_corrections
from spacy_punctgen.pipeline.shipped import default_model_path


@pytest.fixture(scope="module")
def model():
    return PunctModel.from_disk(default_model_path("en"))


@pytest.fixture(scope="module")
def vocab():
    return spacy.blank("en").vocab


def _doc(vocab, words, spaces, heads, deps, pos):
    return Doc(vocab, words=words, spaces=spaces, heads=heads, deps=deps, pos=pos)


def test_extensions_and_round_trip_of_gold_docs(model, gold_docs):
    docs = gold_docs(spacy.blank("en"), n=30)
    results = correct_docs(model, docs)
    assert len(results) == len(docs)
    unchanged = 0
    for doc, res in zip(docs, results):
        assert doc._.corrected_punct == res["corrected_punct"]
        assert doc._.corrected_text == res["corrected_text"]
        entries = doc._.corrected_punct
        assert entries and all(set(e) == {"sentence", "slot", "after", "observed", "surface", "prob"} for e in entries)
        assert all(0.0 < e["prob"] <= 1.0 for e in entries)
        if all(e["surface"] == e["observed"] for e in entries):
            unchanged += 1
            assert doc._.corrected_text == doc.text  # nothing changed: the text comes back as it was
    assert unchanged >= 20


def test_missing_period_restored_in_text(model, vocab):
    words = ["When", "I", "came", ",", "he", "left"]
    doc = _doc(vocab, words, [True, True, False, True, True, False], [2, 2, 5, 2, 5, 5],
               ["advmod", "nsubj", "advcl", "punct", "nsubj", "ROOT"], ["SCONJ", "PRON", "VERB", "PUNCT", "PRON", "VERB"])
    (res,) = correct_docs(model, [doc])
    last = [e for e in res["corrected_punct"] if e["slot"] == 5][0]
    assert last["observed"] == () and last["surface"] == (".",)
    assert doc._.corrected_text == "When I came, he left."
    comma = [e for e in res["corrected_punct"] if e["slot"] == 3][0]
    assert comma["observed"] == comma["surface"] == (",",) and comma["after"] == 2


def test_predict_does_not_touch_docs(model, vocab):
    doc = _doc(vocab, ["He", "left"], [True, False], [1, 1], ["nsubj", "ROOT"], ["PRON", "VERB"])
    res = predict_corrections(model, [doc], noise=SlotNoise.from_config())
    assert doc._.corrected_text is None and doc._.corrected_punct is None
    assert res[0]["corrected_text"].startswith("He left")


def test_unparsed_doc_refused(model, vocab):
    with pytest.raises(ValueError, match="E001"):
        correct_docs(model, [Doc(vocab, words=["He", "left"])])


def test_component_in_correct_mode(vocab):
    """``add_pipe("punctgen", config={"mode": "correct"})`` sets the same results as
    :func:`correct_docs`."""
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"mode": "correct"})
    words = ["When", "I", "came", ",", "he", "left"]
    doc = _doc(nlp.vocab, words, [True, True, False, True, True, False], [2, 2, 5, 2, 5, 5],
               ["advmod", "nsubj", "advcl", "punct", "nsubj", "ROOT"], ["SCONJ", "PRON", "VERB", "PUNCT", "PRON", "VERB"])
    out = nlp(doc)
    assert out._.corrected_text == "When I came, he left."
    assert [e["surface"] for e in out._.corrected_punct][-1] == (".",)
    assert out._.underlying_punct is None and out._.restored_punct is None


# ---------------------------------------------------------------- the paper's method
@pytest.fixture(scope="module")
def paper_model(tmp_path_factory):
    """A small hand-set correction model: ATTACH's scores plus a bonus for keeping the input's pair."""
    import numpy as np

    from spacy_punctgen.model.correction import CorrectionModel

    cm = CorrectionModel(["same", "sameL", "sameR"], np.array([2.0, 0.5, 0.5]), attach_scale=1.0, top_k=8)
    path = tmp_path_factory.mktemp("cm") / "correct_paper"
    cm.to_disk(path)
    return cm, path


def test_paper_method_in_docs_and_component(model, gold_docs, paper_model):
    from spacy_punctgen.decode.correct import correct_sentences_paper
    from spacy_punctgen.pipeline.doc_convert import punct_sentences

    cm, path = paper_model
    docs = gold_docs(spacy.blank("en"), n=8)
    results = correct_docs(model, docs, correction_model=cm)
    noise = predict_corrections(model, docs)
    sents = [ps for doc in docs for _, ps, _ in punct_sentences(doc) if ps is not None]
    expect = [c for ch in correct_sentences_paper(model, cm, sents) for c in ch]
    got = [e for res in results for e in res["corrected_punct"]]
    assert [(e["observed"], e["surface"], e["prob"]) for e in got] == [tuple(c) for c in expect]
    assert [e["prob"] for r in noise for e in r["corrected_punct"]] != [e["prob"] for e in got]
    # the component's correction_model setting: the same results
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"mode": "correct", "correction_model": str(path)})
    pipe = nlp.get_pipe("punctgen")
    for doc, res in zip(docs, pipe.predict(docs)):
        assert res == results[docs.index(doc)]
    with pytest.raises(ValueError, match="E840"):
        nlp2 = spacy.blank("en")
        nlp2.add_pipe("punctgen", config={"mode": "correct", "correction_model": str(path / "missing")})
        nlp2.get_pipe("punctgen").predict(docs[:1])
