"""formats/insertions.py: insertions are made, checked and taken back out exactly."""
import re

import pytest

from spacy_punctgen.formats.insertions import (apply_insertions, check_cased, check_insertions, inside_token,
                                               strip_insertions, token_spans)


def test_marks_go_at_token_ends_before_the_whitespace():
    text = "so i said\nno  way"
    insertions = [(2, ","), (9, ":"), (12, ","), (17, ".")]
    out = apply_insertions(text, insertions)
    assert out == "so, i said:\nno,  way."
    assert strip_insertions(out, insertions) == text


def test_several_insertions_at_one_offset_keep_their_order_and_openings_go_at_token_starts():
    text = "he said hello"
    out = apply_insertions(text, [(7, ","), (8, "“"), (13, "."), (13, "”")])
    assert out == "he said, “hello.”"


def test_offsets_in_whitespace_and_at_both_ends_are_allowed():
    text = "  a  b  "
    assert apply_insertions(text, [(0, "-"), (1, "-"), (4, "-"), (8, "-")]) == "- - a - b  -"
    assert apply_insertions("", [(0, ".")]) == "."


def test_no_insertions_give_the_text_back():
    text = "unchanged 'quoted' text\r\n"
    assert apply_insertions(text, []) == text
    assert strip_insertions(text, []) == text


def test_tokens_with_inner_punctuation_stay_whole():
    text = "of '67 rock 'n' roll 2013-2014 a4-0090/99 3.14 U.S. 🍕🍺 â™?now"
    for start, end in token_spans(text):
        for offset in range(start + 1, end):
            assert inside_token(text, offset)
            with pytest.raises(ValueError, match=r"\[E943\].*" + re.escape(repr(text[start:end]))):
                apply_insertions(text, [(offset, ",")])


@pytest.mark.parametrize("insertions, code", [
    ([(1, ",", "x")], "E940"),
    ([("1", ",")], "E940"),
    ([(True, ",")], "E940"),
    ([(1, 2)], "E940"),
    ([5], "E940"),
    ([(11, "."), (5, ",")], "E941"),
    ([(-1, ",")], "E942"),
    ([(99, ",")], "E942"),
    ([(2, ",")], "E943"),
])
def test_bad_insertions_are_refused_with_their_code(insertions, code):
    with pytest.raises(ValueError, match=rf"\[{code}\]"):
        check_insertions("hello world", insertions)


def test_inside_tokens_may_be_allowed_explicitly():
    assert apply_insertions("ab", [(1, "-")], inside_tokens=True) == "a-b"


def test_strip_refuses_insertions_that_did_not_make_the_output():
    with pytest.raises(ValueError, match=r"\[E944\]"):
        strip_insertions("hello, world", [(5, ".")])
    with pytest.raises(ValueError, match=r"\[E942\]"):
        strip_insertions("hi", [(5, ".")])
    with pytest.raises(ValueError, match=r"\[E941\]"):
        strip_insertions("a.,b", [(1, "."), (0, ",")])


def test_token_spans_split_at_any_unicode_whitespace():
    text = "a\u2028b\x0cc\u00a0d e\r\n"
    assert [text[s:e] for s, e in token_spans(text)] == ["a", "b", "c", "d", "e"]
    assert token_spans("   ") == []


def test_cased_text_may_change_only_case():
    assert check_cased("hello world", "Hello World") == "Hello World"
    with pytest.raises(ValueError, match=r"\[E951\].*character 5"):
        check_cased("hello world", "hello_world")
    with pytest.raises(ValueError, match=r"\[E952\]"):
        check_cased("hello", "Hello!")
