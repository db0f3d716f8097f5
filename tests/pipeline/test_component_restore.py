"""The punctgen component in restoration mode, and insert_punctuation (fixtures: ``conftest.py``)."""
import pickle
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen import insert_punctuation
from spacy_punctgen.evaluation.metrics import aed

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


# -------------------------------------------------------------- restoration
def depunct_docs(nlp, n=8):
    """Gold trees of test sentences with their punctuation removed (restoration input)."""
    from spacy_punctgen.data.preprocess import preprocess_file

    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-test.conllu")
    docs = []
    for s in sents[:n]:
        docs.append(Doc(nlp.vocab, words=s.words, pos=s.upos, tags=[x if x != "_" else "" for x in s.xpos],
                        heads=[h if h >= 0 else i for i, h in enumerate(s.heads)],
                        deps=["ROOT" if h < 0 else d for h, d in zip(s.heads, s.deprels)]))
    return sents[:n], docs


@pytest.fixture(scope="module")
def restorer(model_dir):
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(model_dir), "mode": "restore", "n_samples": 200})
    return nlp


def test_restoration_entries_and_text(restorer, snapshot):
    sents, docs = depunct_docs(restorer)
    for s, doc in zip(sents, docs):
        before = snapshot(doc)
        out = restorer(doc)
        assert snapshot(doc) == before
        entries = out._.restored_punct
        assert [e["slot"] for e in entries] == list(range(len(s.words) + 1))
        assert [e["after"] for e in entries] == [None] + list(range(len(s.words)))
        assert all(0.0 < e["prob"] <= 1.0 for e in entries)
        new = insert_punctuation(out)
        assert out._.restored_text == new.text
        assert [t.text for t in new if t.dep_ != "punct"] == s.words
        inserted = [t for t in new if t.dep_ == "punct"]
        assert [t.text for t in inserted] == [m if m != "ABBR." else "." for e in entries for m in e["surface"]]
        assert all(t.pos_ == "PUNCT" and t.head.dep_ != "punct" for t in inserted)


def test_restoration_beats_restoring_nothing(restorer):
    """On held-out gold trees the model's punctuation is closer to the truth than none at all."""
    sents, docs = depunct_docs(restorer, 20)
    pred = [[e["surface"] for e in restorer(d)._.restored_punct] for d in docs]
    gold = [list(s.slots) for s in sents]
    empty = [[()] * len(g) for g in gold]
    assert aed(gold, pred)["aed"] < aed(gold, empty)["aed"]


def test_restoration_is_reproducible_and_pickles(restorer):
    _, docs = depunct_docs(restorer, 3)
    first = [restorer(d)._.restored_punct for d in docs]
    again = pickle.loads(pickle.dumps(restorer))
    assert [again(d)._.restored_punct for d in depunct_docs(again, 3)[1]] == first


def _restored(vocab, words, heads, deps, surfaces, spaces=None):
    doc = Doc(vocab, words=words, heads=heads, deps=deps, spaces=spaces)
    doc._.restored_punct = [{"sentence": 0, "slot": i, "after": i - 1 if i else None, "surface": tuple(s),
                             "prob": 1.0} for i, s in enumerate(surfaces)]
    return doc


def test_insert_punctuation_spacing_and_attachment():
    vocab = spacy.blank("en").vocab
    # When I came he said hello  ->  When I came, he said “hello.”
    words = ["When", "I", "came", "he", "said", "hello"]
    heads = [2, 2, 4, 4, 4, 4]
    deps = ["mark", "nsubj", "advcl", "nsubj", "ROOT", "obj"]
    doc = _restored(vocab, words, heads, deps, [(), (), (), (",",), (), ("\u201c",), (".", "\u201d")],
                    spaces=[True] * 5 + [False])
    new = insert_punctuation(doc)
    assert new.text == "When I came, he said \u201chello.\u201d"
    by_text = {t.text: t for t in new}
    assert by_text[","].head.text == "came"  # the fronted clause it closes
    assert by_text["\u201c"].head.text == "hello"  # the phrase it opens
    assert by_text["."].head.text == "said" and by_text["\u201d"].head.text == "said"  # the root
    assert [t.dep_ for t in new if t.is_punct] == ["punct"] * 4
    assert doc.text == "When I came he said hello"  # input unchanged
    # no spaces in the input (Chinese): none added
    zh = _restored(vocab, ["我", "来", "了"], [1, 1, 1], ["nsubj", "ROOT", "aux"], [(), (), (), ("\u3002",)],
                   spaces=[False, False, False])
    assert insert_punctuation(zh).text == "我来了\u3002"


def test_insert_punctuation_keeps_the_space_of_a_dropped_mark():
    """``argghhh! has``: the space that separated the words followed the dropped ``!``."""
    vocab = spacy.blank("en").vocab
    words, spaces = ["argghhh", "!", "has", "he", "left"], [False, True, True, True, False]
    heads, deps = [4, 0, 4, 4, 4], ["intj", "punct", "aux", "nsubj", "ROOT"]
    none = _restored(vocab, words, heads, deps, [(), (), (), (), ("?",)], spaces=spaces)
    assert insert_punctuation(none).text == "argghhh has he left?"
    comma = _restored(vocab, words, heads, deps, [(), (",",), (), (), ("?",)], spaces=spaces)
    assert insert_punctuation(comma).text == "argghhh, has he left?"


def test_insert_punctuation_needs_restoration(nlp, gold_docs):
    with pytest.raises(ValueError, match="E006"):
        insert_punctuation(gold_docs(nlp, 1)[0])


def test_usage_example_output(model_dir):
    """docs/usage.md's example, with the parse a UD parser of unpunctuated text should give."""
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(model_dir), "mode": "restore"})
    doc = Doc(nlp.vocab, words=["when", "I", "came", "he", "left"], spaces=[True] * 4 + [False],
              heads=[2, 2, 4, 4, 4], deps=["mark", "nsubj", "advcl", "nsubj", "ROOT"],
              pos=["SCONJ", "PRON", "VERB", "PRON", "VERB"])
    doc = nlp(doc)
    assert doc._.restored_text == "when I came, he left."
    assert [e["surface"] for e in doc._.restored_punct] == [(), (), (), (",",), (), (".",)]


def test_restoring_punctuated_text_replaces_its_punctuation(restorer, nlp, gold_docs):
    for doc in gold_docs(nlp, 4):
        words = [t.text for t in doc if t.pos_ != "PUNCT"]
        out = restorer(doc)
        assert len(out._.restored_punct) == len(words) + 1
        new = insert_punctuation(out)
        assert [t.text for t in new if t.dep_ != "punct"] == words
        assert [t.text for t in new if t.dep_ == "punct"] == [m for e in out._.restored_punct for m in e["surface"]]


def _shipped_or_skip():
    from spacy_punctgen.pipeline.component import shipped_model_path

    if shipped_model_path("en") is None:
        pytest.skip("no English model ships in this checkout yet (spacy_punctgen/shipped/en_ewt)")


def test_usage_examples_with_the_shipped_model():
    """docs/usage.md's two examples with no model configured (the shipped EWT model)."""
    _shipped_or_skip()
    restore = spacy.blank("en")
    restore.add_pipe("punctgen", config={"mode": "restore"})
    doc = restore(Doc(restore.vocab, words=["when", "I", "came", "he", "left"], spaces=[True] * 4 + [False],
                      heads=[2, 2, 4, 4, 4], deps=["mark", "nsubj", "advcl", "nsubj", "ROOT"],
                      pos=["SCONJ", "PRON", "VERB", "PRON", "VERB"]))
    assert doc._.restored_text == "when I came, he left."
    analyze = spacy.blank("en")
    analyze.add_pipe("punctgen")
    doc = analyze(Doc(analyze.vocab, words=["When", "I", "came", ",", "he", "left", "."],
                      spaces=[True, True, False, True, True, False, False], heads=[2, 2, 5, 2, 5, 5, 5],
                      deps=["mark", "nsubj", "advcl", "punct", "nsubj", "ROOT", "punct"],
                      pos=["SCONJ", "PRON", "VERB", "PUNCT", "PRON", "VERB", "PUNCT"]))
    assert [(t.text, t._.punct_left, t._.punct_right) for t in doc] == [
        ("When", (), ()), ("I", (), ()), ("came", (), (",",)), (",", None, None), ("he", (), ()),
        ("left", (), (".",)), (".", None, None)]
