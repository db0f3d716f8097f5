"""Training sentences from the stream parser's own analysis (spacy_punctgen/api/stream_training.py):
every word kept in order, every gold mark in the slot after the word it follows, errors for bad input."""
import random
from pathlib import Path

import pytest

from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.api.load import restore_parser
from spacy_punctgen.api.stream_training import AlignmentCounts, stream_training_sentences

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.fixture(scope="module")
def stream():
    """The sample's test sentences as one lowercased stream, with random gold marks."""
    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-test.conllu")
    words = [w.lower() for s in sents for w in s.words if any(c.isalnum() for c in w)]
    rng = random.Random(3)
    marks = [rng.choice(["", "", "", ",", ".", "?"]) for _ in words]
    return words, marks


@pytest.fixture(scope="module")
def nlp(tiny_parser):
    """A tiny parser as restoration runs it (``restore_parser``: words the parser labels as
    punctuation stay words, so every word of the stream is a word of some sentence)."""
    return restore_parser("en", tiny_parser(40, 2))


def _flat(sentences):
    words, marks = [], []
    for ps in sentences:
        assert len(ps.slots) == len(ps.words) + 1
        assert ps.slots[0] == ()
        words += ps.words
        marks += ["".join(slot) for slot in ps.slots[1:]]
    return words, marks


@pytest.mark.parametrize("chunk_chars", [3000, 200])
def test_every_word_in_order_and_every_mark_after_its_word(nlp, stream, chunk_chars):
    words, marks = stream
    counts = AlignmentCounts()
    sentences = list(stream_training_sentences(nlp, words, marks, chunk_chars=chunk_chars, counts=counts))
    got_words, got_marks = _flat(sentences)
    # the sample's words are single tokens for spaCy's English tokenizer, except a few that it splits
    joined = [w for w in " ".join(got_words).split()]
    assert "".join(joined) == "".join(words)
    assert "".join(got_marks) == "".join(marks)
    assert counts.marks == sum(1 for m in marks if m) == counts.placed
    assert counts.words == len(words)
    assert counts.sentences == len(sentences) > 1
    assert counts.final_marked == sum(1 for ps in sentences if ps.slots[-1])


def test_trees_are_the_parsers_of_the_unpunctuated_text(nlp, stream):
    """The same words and trees with or without gold marks: the marks never reach the parser."""
    words, marks = stream
    with_marks = list(stream_training_sentences(nlp, words[:120], marks[:120]))
    without = list(stream_training_sentences(nlp, words[:120], [""] * 120))
    assert [(ps.words, ps.heads, ps.deprels) for ps in with_marks] == \
        [(ps.words, ps.heads, ps.deprels) for ps in without]
    assert all(all(slot == () for slot in ps.slots) for ps in without)


def test_a_word_split_by_the_tokenizer_gets_its_mark_once_after_its_last_token(nlp):
    words = ["we", "sent", "an", "e-mail", "then", "we", "left"]
    marks = ["", "", "", ",", "", "", "."]
    sentences = list(stream_training_sentences(nlp, words, marks))
    got_words, got_marks = _flat(sentences)
    assert got_words[3:6] == ["e", "-", "mail"] or got_words[3] == "e-mail"
    i = got_words.index("mail") if "mail" in got_words else got_words.index("e-mail")
    assert got_marks[i] == ","
    assert "".join(got_marks) == ",."


def test_a_word_with_a_space_is_one_word_of_the_stream(nlp):
    """UD French writes ``20 000`` as one word: its tokens share its mark, after the last one."""
    words = ["il", "y", "a", "20 000", "habitants", "ici"]
    marks = ["", "", "", ",", "", "."]
    sentences = list(stream_training_sentences(nlp, words, marks))
    got_words, got_marks = _flat(sentences)
    assert got_words[3:5] == ["20", "000"] and got_marks[3:5] == ["", ","]
    assert "".join(got_marks) == ",."


def test_several_marks_after_a_word_are_several_marks_of_its_slot(nlp):
    words = ["he", "said", "hello", "and", "left"]
    marks = ["", ', "', "", "", '. "']
    sentences = list(stream_training_sentences(nlp, words, marks))
    slots = [slot for ps in sentences for slot in ps.slots[1:]]
    assert slots[1] == (",", '"') and slots[-1] == (".", '"')
    assert sum(len(slot) for slot in slots) == 4


@pytest.mark.parametrize("words, marks, code", [
    (["a", "b"], [""], "E880"),
    (["a", ""], ["", ""], "E881"),
    (["a", " "], ["", ""], "E881"),
    (["a", None], ["", ""], "E881"),
    (["a", "b"], [(",",), ""], "E882"),
    (["a", "b"], [None, ""], "E882"),
])
def test_bad_streams_are_refused_naming_the_problem(nlp, words, marks, code):
    with pytest.raises(ValueError, match=code):
        list(stream_training_sentences(nlp, words, marks))
