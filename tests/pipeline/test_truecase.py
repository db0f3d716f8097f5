"""The truecaser (spacy_punctgen/truecasing/truecaser.py) and ``load(lang, truecase=...)``.

A tiny truecaser is trained here on the sample treebank (seconds); the tests of the shipped
pipeline skip with a reason where the shipped parser or truecaser is absent."""
import re
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import fix_random_seed
from thinc.api import Adam

from spacy_punctgen.api.load import load, shipped_parser_path, shipped_truecaser_path
from spacy_punctgen.api.stream import restore_text
from spacy_punctgen.truecasing.truecaser import (FACTORY, LOWER, TITLE, UPPER, apply_case, capitalize_start,
                                              case_accuracy, case_class, case_labels, depunct_words,
                                              evaluate_gold_sentences, fallback_class, ship_truecaser,
                                              truecase_docs, TrueCaser)

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def _shipped(fn):
    try:
        fn("en")
    except ValueError as err:
        return str(err)
    return ""


WHY = _shipped(shipped_parser_path) or _shipped(shipped_truecaser_path)
needs_shipped = pytest.mark.skipif(bool(WHY), reason=f"no shipped parser or truecaser: {WHY}")


# ----------------------------------------------------------------- case classes
@pytest.mark.parametrize("form,label", [
    ("the", LOWER), ("2", LOWER), ("'s", LOWER), ("-", LOWER),
    ("I", TITLE), ("London", TITLE), ("A", TITLE), ("O'neill", TITLE),
    ("NASA", UPPER), ("U.S", UPPER), ("IBM's".upper(), UPPER),
    ("iPhone", "iPhone"), ("McDonald", "McDonald"), ("eBay", "eBay"), ("NASAs", "NASAs"),
])
def test_case_class(form, label):
    assert case_class(form) == label
    # the class writes the lowercased word back as it was
    assert apply_case(form.lower(), label) == form


def test_apply_case_and_fallbacks():
    assert apply_case("new", TITLE) == "New" and apply_case("NEW", LOWER) == "new"
    assert apply_case("'cause", TITLE) == "'Cause"  # the first cased letter
    assert apply_case("nasa", UPPER) == "NASA"
    # a mixed-case class on another word: Title or lower by the form's first letter
    assert apply_case("ipad", "iPhone") == "ipad" and apply_case("mcdonnell", "McDonald") == "Mcdonnell"
    assert fallback_class("McDonald") == TITLE and fallback_class("eBay") == LOWER
    assert capitalize_start("the") == "The" and capitalize_start("iPhone") == "iPhone"
    assert capitalize_start("NASA") == "NASA"


@pytest.mark.parametrize("bad", ["", None, 3])
def test_case_class_refuses_a_non_word(bad):
    with pytest.raises(ValueError, match=r"\[E081\]"):
        case_class(bad)


def test_apply_case_refuses_a_bad_label():
    with pytest.raises(ValueError, match=r"\[E082\]"):
        apply_case("word", "")


def test_case_labels_teach_a_words_own_case():
    sents = [["The", "cat", "saw", "I"], ["I", "went", "to", "London", "with", "the", "iPhone"],
             ["London", "calling"], ["Hello", "iPhone", "eBay"]]
    labels = case_labels(sents, min_mixed=2)
    assert labels[0] == [LOWER, LOWER, LOWER, TITLE]  # sentence-initial "The": "the" inside is lower
    assert labels[1][0] == TITLE  # "I" inside a sentence is Title
    assert labels[2][0] == TITLE  # so is "London"
    assert labels[3] == [LOWER, "iPhone", LOWER]  # unseen inside -> lower; a once-seen mixed form falls back


def test_truecase_docs_lowercase_depunctuated_words(tmp_path):
    out = tmp_path / "train.spacy"
    info = truecase_docs(SAMPLE, "train", out, n_sents=10)
    sents = depunct_words(SAMPLE, "train")
    assert info["sentences"] == len(sents) and info["docs"] == (len(sents) + 9) // 10
    docs = list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))
    words = [w for s in sents for w in s]
    assert [t.text for d in docs for t in d] == [w.lower() for w in words]
    assert not {".", ",", "?", "!", ";", ":"} & {t.text for d in docs for t in d}  # depunctuated
    # every non-initial word's tag writes it back exactly as the treebank has it
    first = {sum(len(s) for s in sents[:k]) for k in range(len(sents))}
    tags = [t.tag_ for d in docs for t in d]
    assert all(apply_case(w.lower(), tags[i]) == w for i, w in enumerate(words)
               if i not in first and case_class(w) in (LOWER, TITLE, UPPER))
    with pytest.raises(ValueError, match=r"\[E083\]"):
        truecase_docs(SAMPLE, "train", out, n_sents=0)


# ----------------------------------------------------------------- the component
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A truecaser trained on the sample treebank (a few seconds), saved as a pipeline folder."""
    tmp = tmp_path_factory.mktemp("truecase")
    truecase_docs(SAMPLE, "train", tmp / "train.spacy")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(FACTORY)
    docs = list(DocBin().from_disk(tmp / "train.spacy").get_docs(nlp.vocab))
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in docs]
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.01)
    for _ in range(10):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    nlp.to_disk(tmp / "model")
    return tmp / "model"


@pytest.fixture(scope="module")
def tiny_nlp(tiny):
    return spacy.load(tiny)


def test_component_cases_lowercase_input(tiny_nlp):
    doc = tiny_nlp("i think i know what you mean")
    out = doc._.truecased_text
    assert out.lower() == "i think i know what you mean"
    assert out.startswith("I ")  # the first word: a sentence start
    assert " i " not in out  # "i" is Title in the sample (many times inside sentences)
    assert [t._.truecase for t in doc] == out.split()
    assert all(t._.case_label in tiny_nlp.get_pipe(FACTORY).labels for t in doc)
    assert all(t.tag_ == "" for t in doc)  # the tagger writes extensions, never token.tag


def test_written_sentence_final_marks_start_sentences(tiny_nlp):
    doc = tiny_nlp("yes. what do you think? it is fine")
    out = doc._.truecased_text
    assert out.lower() == "yes. what do you think? it is fine"
    assert out.startswith("Yes. What") and "? It" in out


def test_cased_input_keeps_its_case_where_the_model_is_unsure(tiny):
    text = "the Committee said i LIKE it"
    keep = spacy.load(tiny, config={"components": {FACTORY: {"cased_threshold": 1.0}}})
    assert keep(text)._.truecased_text == "The Committee said i LIKE it"  # only the sentence start
    follow = spacy.load(tiny, config={"components": {FACTORY: {"cased_threshold": 0.0}}})
    doc = follow(text)
    # a written capital always stays; a lowercase word takes the predicted class
    expected = [t.text if t.text != t.text.lower() else apply_case(t.text, t._.case_label) for t in doc]
    expected[0] = capitalize_start(expected[0])
    assert doc._.truecased_text == " ".join(expected)
    assert doc[1]._.truecase == "Committee" and doc[4]._.truecase == "LIKE"
    # lowercase-only input is caseless: the prediction applies whatever the threshold
    assert keep(text.lower())._.truecased_text == follow(text.lower())._.truecased_text


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_bad_threshold_is_refused(bad):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=r"\[E084\]"):
        nlp.add_pipe(FACTORY, config={"cased_threshold": bad})


@pytest.mark.parametrize("bad", ["high", True, None])
def test_bad_threshold_type_is_refused(bad):
    model = spacy.blank("en").add_pipe(FACTORY).model
    with pytest.raises(ValueError, match=r"\[E084\]"):
        TrueCaser(spacy.blank("en").vocab, model, cased_threshold=bad)


def test_untrained_truecaser_says_so():
    nlp = spacy.blank("en")
    nlp.add_pipe(FACTORY)
    with pytest.raises(ValueError, match=r"\[E085\]"):
        nlp("hello there")


def test_empty_and_punctuation_only_docs(tiny_nlp):
    assert tiny_nlp("")._.truecased_text == ""
    assert tiny_nlp("... !")._.truecased_text == "... !"


def test_round_trip_gives_identical_output(tiny, tiny_nlp, tmp_path):
    texts = ["i went to london with john", "what did the president say about nasa"]
    before = [tiny_nlp(t)._.truecased_text for t in texts]
    tiny_nlp.to_disk(tmp_path / "again")
    again = spacy.load(tmp_path / "again")
    assert [again(t)._.truecased_text for t in texts] == before
    tc = spacy.blank("en").add_pipe(FACTORY)
    tc.from_bytes(tiny_nlp.get_pipe(FACTORY).to_bytes())
    assert tc.labels == tiny_nlp.get_pipe(FACTORY).labels


def test_gold_sentence_evaluation(tiny_nlp):
    sents = depunct_words(SAMPLE, "test")
    res = evaluate_gold_sentences(tiny_nlp, sents)
    assert res["n_tokens"] == sum(map(len, sents)) and res["n_sent_starts"] == len(sents)
    assert 0.85 < res["case_acc"] <= 1.0  # lower alone is about 0.87; sentence starts come capitalised
    assert res["sent_start_acc"] > 0.8
    acc = case_accuracy([("The", "The", True), ("cat", "Cat", False), ("NASA", "nasa", False)])
    assert acc["case_acc"] == pytest.approx(1 / 3) and acc["case_acc_not_lower"] == pytest.approx(0.5)
    assert acc["sent_start_acc"] == 1.0


def test_ship_truecaser(tiny, tmp_path):
    dest = ship_truecaser(tiny, tmp_path / "en_x_truecase")
    nlp = spacy.load(dest)
    assert nlp.meta["license"] == "CC BY-SA 4.0" and nlp.pipe_names == [FACTORY]
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)
    with pytest.raises(ValueError, match=r"\[E087\]"):
        ship_truecaser(blank, tmp_path / "nothing")


# ----------------------------------------------------------------- load(truecase=...)
@pytest.mark.parametrize("bad", ["", 1, 0.5, ["yes"]])
def test_load_refuses_a_bad_truecase_argument(bad):
    with pytest.raises(ValueError, match=r"\[E088\]"):
        load("en", truecase=bad)


def test_load_names_a_missing_truecaser():
    with pytest.raises(ValueError, match=r"\[E089\]"):
        shipped_truecaser_path("xx")


@pytest.mark.skipif(bool(_shipped(shipped_parser_path)), reason="no shipped parser")
def test_load_with_a_truecaser_path_and_not_a_truecaser(tiny, tmp_path):
    nlp = load("en", truecase=tiny)
    assert nlp.pipe_names[-2:] == ["punctgen", FACTORY]
    doc = nlp("i came home he left")
    assert doc._.restored_text[0] == "I"
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)
    with pytest.raises(ValueError, match=r"\[E087\]"):
        load("en", truecase=blank)


@pytest.fixture(scope="module")
def shipped():
    return load("en", truecase=True)


def _check_cased(out: str, words: str):
    """Words kept (only their case changes), `I` capitalised, every restored sentence starts
    with a capital."""
    assert re.findall(r"[^\W_]+(?:'[^\W_]+)?", out.lower()) == re.findall(r"[^\W_]+(?:'[^\W_]+)?", words)
    assert re.search(r"\bi\b", out) is None
    assert out[0].isupper()
    for m in re.finditer(r"[.?!]\s+(\w)", out):
        assert m.group(1).isupper(), out


@needs_shipped
def test_load_truecase_restores_capitals(shipped):
    doc = shipped("i came home he left")
    out = doc._.restored_text
    _check_cased(out, "i came home he left")
    assert out.startswith("I came home")
    # a sentence boundary restored after "home" gives "He"; none gives "he"
    assert ("home. He" in out) or ("home he" in out) or ("home, he" in out), out
    assert doc._.truecased_text.replace("He", "he") == "I came home he left"


@needs_shipped
def test_load_truecase_on_long_and_line_by_line_text(shipped):
    text = "when i came home he left i went to paris with john on monday"
    out = restore_text(shipped, text + "\n" + "what did you say")
    first, second = out.split("\n")
    _check_cased(first, text)
    assert second.startswith("What")
    long = " ".join([text] * 80)  # longer than chunk_chars: windows, then punctgen and the truecaser once
    assert len(long) > shipped.punctgen_chunk_chars
    doc = shipped(long)
    _check_cased(doc._.restored_text, long)


@needs_shipped
def test_load_truecase_round_trip(shipped, tmp_path):
    texts = ["i came home he left", "did you see john in new york"]
    before = [shipped(t)._.restored_text for t in texts]
    shipped.to_disk(tmp_path / "pipe")
    again = spacy.load(tmp_path / "pipe")
    assert [again(t)._.restored_text for t in texts] == before


@needs_shipped
def test_shipped_truecaser_is_small():
    size = sum(p.stat().st_size for p in shipped_truecaser_path("en").rglob("*") if p.is_file())
    assert size < 8_000_000
