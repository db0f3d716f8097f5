"""One sentence at a time: a short one-line input is parsed as one sentence
(``load(..., single_sentence_words=N)``, spacy_punctgen/api/stream.py ``is_single_sentence``,
``one_sentence``), a longer or multi-line one as the parser cuts it.

The tests that run the shipped parser skip with a reason where its files are absent; the
autouse fixture of tests/conftest.py checks the insertion rule on every restored Doc."""
import re
from types import SimpleNamespace

import pytest
import spacy

import spacy_punctgen
from spacy_punctgen.api.load import DEFAULT_SINGLE_SENTENCE_WORDS, load, shipped_parser_path
from spacy_punctgen.api.stream import check_single_words, is_single_sentence, one_sentence, restore_text

try:
    shipped_parser_path("en")
except ValueError as err:  # the shipped parser's files are absent from this checkout
    WHY = str(err)
else:
    WHY = ""
needs_parser = pytest.mark.skipif(bool(WHY), reason=f"no shipped parser: {WHY}")

#: one sentence the shipped parser cuts in two when it may (after "Smith")
LETTER = "Dear Mr Smith I would like to know if you are coming to the party on Friday"
#: three sentences the shipped parser cuts when it may
THREE = "hi how are you i am fine thanks"


@pytest.mark.parametrize("text,limit,single", [
    ("when i came home he left", 40, True),
    ("when i came home he left", 6, True),
    ("when i came home he left", 5, False),
    ("when i came home he left", 0, False),
    ("first line\nsecond line", 40, False),
    ("   ", 40, False),
])
def test_is_single_sentence_counts_words_on_one_line(text, limit, single):
    assert is_single_sentence(SimpleNamespace(punctgen_single_words=limit), text) is single


def test_a_pipeline_without_the_setting_never_parses_as_one_sentence():
    assert not is_single_sentence(spacy.blank("en"), "when i came home he left")


def test_one_sentence_forbids_every_cut_except_after_a_written_full_stop():
    nlp = spacy.blank("en")
    doc = one_sentence(nlp.make_doc("i came home . he left ! ok"))
    assert [t.is_sent_start for t in doc][1:] == [False, False, False, None, False, False, None]


@pytest.mark.parametrize("bad", [-1, True, 2.5, "40", None])
def test_bad_single_sentence_words_is_refused(bad):
    with pytest.raises(ValueError, match="E054"):
        check_single_words(bad)
    with pytest.raises(ValueError, match="E054"):
        load("en", single_sentence_words=bad)


def test_default_is_on():
    assert DEFAULT_SINGLE_SENTENCE_WORDS >= 20


@pytest.fixture(scope="module")
def restorer():
    return load("en")


@pytest.fixture(scope="module")
def cutter():
    return load("en", single_sentence_words=0)


@needs_parser
def test_a_one_sentence_input_goes_through_the_sentence_path(restorer, cutter):
    assert len(list(cutter(LETTER).sents)) > 1  # the parser alone cuts it
    doc = restorer(LETTER)
    assert len(list(doc.sents)) == 1
    out = doc._.restored_text
    assert re.findall(r"[A-Za-z]+", out) == LETTER.split()
    assert out.rstrip()[-1] in ".!?"
    # the same path through restore_text and nlp.pipe
    assert restore_text(restorer, LETTER) == out
    assert [d._.restored_text for d in restorer.pipe([LETTER, THREE])][0] == out


@needs_parser
def test_a_longer_input_is_cut_by_the_parser(cutter):
    nlp = load("en", single_sentence_words=5)
    assert nlp.punctgen_single_words == 5
    doc = nlp(THREE)  # 8 words: above the limit, the parser decides
    assert len(list(doc.sents)) == len(list(cutter(THREE).sents)) > 1
    assert doc._.restored_text == cutter(THREE)._.restored_text
    assert spacy_punctgen.restore_text(nlp, THREE) == spacy_punctgen.restore_text(cutter, THREE)


@needs_parser
def test_a_written_full_stop_still_ends_a_sentence(restorer):
    doc = restorer("i came home. he left")
    assert len(list(doc.sents)) == 2
    assert doc._.restored_text.startswith("i came home.")


@needs_parser
def test_each_line_is_its_own_input(restorer):
    text = LETTER + "\n" + "when i came home he left"
    lines = restore_text(restorer, text).split("\n")
    assert lines == [restore_text(restorer, LETTER), restore_text(restorer, "when i came home he left")]


@needs_parser
def test_analysis_ignores_the_setting():
    nlp = load("en", mode="analyze")
    assert nlp.punctgen_single_words == 0
