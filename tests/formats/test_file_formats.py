"""formats/restore.py: the format of a path, and any file's text punctuated by a given restorer."""
import json
from pathlib import Path

import pytest

from spacy_punctgen.formats.insertions import Restored, token_spans
from spacy_punctgen.formats.restore import FILE_FORMATS, detect_format, restore_file_text


@pytest.mark.parametrize("path, explicit, fmt", [
    ("talk.srt", None, "srt"),
    ("TALK.SRT", None, "srt"),
    (Path("a/b/lecture.vtt"), None, "vtt"),
    ("words.json", None, "json"),
    ("notes.txt", None, "text"),
    ("README", None, "text"),
    ("-", None, "text"),
    (None, None, "text"),
    ("talk.srt", "text", "text"),
    ("transcript.txt", "json", "json"),
])
def test_the_format_comes_from_the_option_or_the_extension(path, explicit, fmt):
    assert detect_format(path, explicit) == fmt


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match=r"\[E957\].*'ass'"):
        detect_format("x.ass", "ass")
    with pytest.raises(ValueError, match=r"\[E957\]"):
        restore_file_text("hi", "docx", lambda text: [])


def test_plain_text_is_the_input_with_the_insertions(fake_restorer):
    text = "so i think we're ready\r\nare you sure\n\nsee you\n"
    assert restore_file_text(text, "text", fake_restorer) == "so i think, we're ready\r\nare, you sure\n\nsee, you.\n"


def test_a_restored_with_case_is_applied():
    def restorer(text):
        return Restored([(len("hello there"), ".")], text.replace("hello", "Hello"))

    assert restore_file_text("hello there\n", "text", restorer) == "Hello there.\n"


def test_whitespace_only_text_is_returned_as_it_is_without_asking_the_restorer():
    def restorer(text):
        raise AssertionError("called")

    for text in ("", "\n", "  \r\n\t"):
        assert restore_file_text(text, "text", restorer) == text


def test_a_restorer_returning_something_else_is_refused():
    with pytest.raises(TypeError, match=r"\[E958\].*str"):
        restore_file_text("hello", "text", lambda text: "hello.")


@pytest.mark.parametrize("name", ["talk.srt", "windows_bom.srt", "lecture.vtt", "words.json", "words_object.json"])
def test_every_fixture_end_to_end(name, read_fixture, fake_restorer):
    source = read_fixture(name)
    fmt = detect_format(name)
    assert fmt in FILE_FORMATS
    assert restore_file_text(source, fmt, lambda text: []) == source
    out = restore_file_text(source, fmt, fake_restorer)
    assert out != source
    if fmt == "json":
        json.loads(out.lstrip("\ufeff"))
    else:  # the marks are all that was added: taking every ',' and '.' added back out gives the file
        assert out.replace(",", "").replace(".", "") == source.replace(",", "").replace(".", "")
        assert out.count("\n") == source.count("\n") and out.startswith(source[:1])


def test_truecased_subtitles_and_words(read_fixture):
    def restorer(text):
        spans = token_spans(text)
        start = spans[0][0]
        return Restored([(spans[-1][1], ".")], text[:start] + text[start].upper() + text[start + 1:])

    srt = restore_file_text(read_fixture("talk.srt"), "srt", restorer)
    assert "\nSo i was walking down\n" in srt and "best story isn't it.\n" in srt
    words = json.loads(restore_file_text(read_fixture("words.json"), "json", restorer))
    assert words[0]["word"] == "So" and words[-1]["word"] == "me."
