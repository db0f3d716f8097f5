"""Restoration conditions the gaps it decides on the marks the text already has
(``pipeline.restore.observed_slots`` → ``PunctSentence.observed`` → decode/evidence.py): an
opening quote or bracket the user wrote gets its closer, and the written marks stay."""
import pytest
import spacy
from spacy.tokens import Doc

import spacy_punctgen
from spacy_punctgen.pipeline.restore import observed_slots
from spacy_punctgen.testing.insertion_rule import rule_violations


def test_observed_slots_are_the_gaps_with_marks_and_the_gaps_inside_tokens():
    vocab = spacy.blank("en").vocab
    # credit's , hello,world . ok   (words: credit 's hello world ok)
    doc = Doc(vocab, words=["credit", "'s", ",", "hello", ",", "world", ".", "ok"],
              spaces=[False, False, True, False, False, False, True, False])
    words = [[0, 1, 3, 5], [7]]
    assert observed_slots(doc, words) == [(False, True, True, True, True), (True, False)]
    # repunctuate: the marks at the edges of tokens are not kept; the comma inside hello,world is
    assert observed_slots(doc, words, repunctuate=True) == [(False, True, False, True, False), (False, False)]


@pytest.fixture(scope="module")
def shipped():
    return spacy_punctgen.load("en")


@pytest.mark.parametrize("text,closer", [
    ("he said \u201chello there and then he left the room without a word", "\u201d"),
    ("she asked me (in a very quiet voice whether i had seen him", ")"),
])
def test_a_written_opener_gets_its_closer(shipped, text, closer):
    doc = shipped(text)
    out = doc._.restored_text
    assert closer in out, out
    assert rule_violations(text, out, doc._.restored_edits["insertions"], [], "en", False) == []
    fixed = [e for e in doc._.restored_punct if e["fixed"]]
    assert any(e["surface"] and e["surface"][-1] in "\u201c(" for e in fixed)


def test_written_marks_are_kept_and_the_rest_completed(shipped):
    text = "Is it raining? yes it is and i think we should go home now"
    out = shipped(text)._.restored_text
    assert out.startswith("Is it raining? yes")
    assert out.replace(",", "").replace(".", "") == text.replace(",", "").replace(".", "")
