"""formats/subtitles.py: SubRip and WebVTT files keep everything but their punctuated words."""
import pytest

from spacy_punctgen.formats.insertions import strip_insertions, token_spans
from spacy_punctgen.formats.subtitles import (Place, cue_text, parse_subtitles, restore_subtitles, split_lines,
                                              write_subtitles)


def _restore(source, fmt, restorer, cased=None):
    subtitles = parse_subtitles(source, fmt)
    text = cue_text(subtitles)
    insertions = restorer(text.text)
    out = write_subtitles(subtitles, text, insertions, cased)
    return out, text, text.file_insertions(insertions)


def test_srt_cues_are_read_with_index_timing_settings_and_lines(read_fixture):
    subtitles = parse_subtitles(read_fixture("talk.srt"), "srt")
    assert [c.identifier.text for c in subtitles.cues] == [str(k) for k in range(1, 9)]
    assert subtitles.cues[1].start == "00:00:02,500" and subtitles.cues[1].end == "00:00:05,100"
    assert [line.text for line in subtitles.cues[1].lines] == ["so i was walking down", "the street yesterday"]
    assert subtitles.cues[3].lines == ()  # the empty cue
    assert [c.spoken for c in subtitles.cues] == [(False,), (True, True), (True, True), (), (True,), (True, True),
                                                  (False,), (True, True)]


def test_the_text_runs_across_cues_without_sound_tags_markup_or_empty_cues(read_fixture):
    text = cue_text(parse_subtitles(read_fixture("talk.srt"), "srt")).text
    assert text == ("so i was walking down the street yesterday and i saw this dog who looked at me "
                    "what do you think it did - it barked - no it sat down "
                    "well that's the 2013-2014 season's best story isn't it")


def test_a_file_without_insertions_comes_back_byte_for_byte(read_fixture):
    for name, fmt in (("talk.srt", "srt"), ("windows_bom.srt", "srt"), ("lecture.vtt", "vtt")):
        source = read_fixture(name)
        out, _, _ = _restore(source, fmt, lambda text: [])
        assert out == source


def test_marks_land_at_the_end_of_the_word_on_its_own_line(read_fixture):
    source = read_fixture("talk.srt")
    text = cue_text(parse_subtitles(source, "srt")).text
    after = {}
    for (start, end), word in zip(token_spans(text), text.split()):
        after.setdefault(word, end)  # the first "down", not the last

    def restorer(t):
        return [(after["down"], ","), (after["yesterday"], "."), (after["dog"], ","), (after["me"], "."),
                (after["did"], "?")]

    out, _, _ = _restore(source, "srt", restorer)
    assert "so i was walking down,\nthe street yesterday.\n" in out
    assert "<i>and i saw this dog,</i>\nwho looked at me.\n" in out
    assert "{\\an8}what do you think it did?\n" in out


def test_with_the_fake_restorer_only_spoken_lines_change(read_fixture, fake_restorer):
    source = read_fixture("talk.srt")
    out, text, file_insertions = _restore(source, "srt", fake_restorer)
    assert out != source and strip_insertions(out, file_insertions) == source
    before, after = split_lines(source), split_lines(out)
    assert len(before) == len(after)
    spoken = {line.number for cue in parse_subtitles(source, "srt").cues
              for line, is_spoken in zip(cue.lines, cue.spoken) if is_spoken}
    for old, new in zip(before, after):
        assert old.ending == new.ending
        if old.number not in spoken:
            assert old.text == new.text, old
    assert "[music]" in out and "(laughter)" in out and "00:00:08,000 --> 00:00:08,500\n\n5\n" in out
    assert out.endswith("best story isn't, it.\n\n\n")


def test_windows_line_endings_and_bom_survive(read_fixture, fake_restorer):
    source = read_fixture("windows_bom.srt")
    assert source.startswith("\ufeff1\r\n")
    out, text, _ = _restore(source, "srt", fake_restorer)
    assert out.startswith("\ufeff1\r\n00:00:01,000 --> 00:00:03,000\r\n")
    assert out.count("\r\n") == source.count("\r\n") and out.count("\n") == source.count("\n")
    assert "[applause]\r\n" in out and "at the start.\r\n\r\n" in out
    lf = parse_subtitles(source.replace("\r\n", "\n").lstrip("\ufeff"), "srt")
    assert cue_text(lf).text == text.text == ("hello everyone and welcome today we talk about subtitles with "
                                              "windows line endings and a byte order mark at the start")


def test_old_mac_line_endings_are_line_breaks_and_other_separators_are_not():
    source = "1\r00:00:01,000 --> 00:00:02,000\rhello\u2028there\x0cfriend\r\r"
    subtitles = parse_subtitles(source, "srt")
    assert [line.text for line in subtitles.cues[0].lines] == ["hello\u2028there\x0cfriend"]
    out, _, _ = _restore(source, "srt", lambda t: [(len(t), ".")])
    assert out == "1\r00:00:01,000 --> 00:00:02,000\rhello\u2028there\x0cfriend.\r\r"


def test_vtt_header_notes_style_region_identifiers_and_tags_survive(read_fixture, fake_restorer):
    source = read_fixture("lecture.vtt")
    subtitles = parse_subtitles(source, "vtt")
    assert [c.identifier.text if c.identifier else None for c in subtitles.cues] == ["intro", None, None, "3", "4"]
    assert subtitles.cues[0].settings == "align:start position:10%" and subtitles.cues[2].settings == "line:0"
    text = cue_text(subtitles)
    assert text.text == ("good morning everyone welcome to the course today we look at commas & periods and why "
                         "they matter let's begin with an example")
    out, _, file_insertions = _restore(source, "vtt", fake_restorer)
    assert strip_insertions(out, file_insertions) == source
    head = source[:source.index("intro\n")]
    assert out.startswith(head)  # header, NOTE, STYLE and REGION blocks as written
    for kept in ("NOTE a one-line note between cues\n", "♪ la la la ♪\n", "(applause)\n",
                 "00:01.000 --> 00:04.000 align:start position:10%\n<v Ana>good morning everyone,\n",
                 "<v.loud Ben>today we, look at commas, &amp; periods\n<c.yellow>and,</c> why they matter,\n",
                 "<00:10.100>let's <i>begin</i> with, an example.\n"):
        assert kept in out, kept


def test_an_offset_is_located_at_its_cue_line_and_column(read_fixture):
    text = cue_text(parse_subtitles(read_fixture("talk.srt"), "srt"))
    down = text.text.index("down") + 4
    assert text.locate(down) == Place(cue=1, line=0, column=len("so i was walking down"))
    assert text.locate(down + 1) == Place(cue=1, line=1, column=0)  # at the start of "the"
    dog = text.text.index("dog") + 3
    assert text.locate(dog) == Place(cue=2, line=0, column=len("<i>and i saw this dog"))
    assert text.locate(len(text.text)) == Place(cue=7, line=1, column=len("best story isn't it"))


def test_cues_without_blank_lines_between_them_are_still_cues():
    source = "1\n00:00:01,000 --> 00:00:02,000\nhello there\n2\n00:00:02,000 --> 00:00:03,000\nfriend\n"
    subtitles = parse_subtitles(source, "srt")
    assert [c.identifier.text for c in subtitles.cues] == ["1", "2"]
    assert cue_text(subtitles).text == "hello there friend"


def test_vtt_without_identifiers_or_hours_and_a_cue_in_the_header_block():
    source = "WEBVTT\n00:01.000 --> 00:02.000\nhi there\n"
    subtitles = parse_subtitles(source, "vtt")
    assert len(subtitles.cues) == 1 and subtitles.cues[0].identifier is None
    assert cue_text(subtitles).text == "hi there"


def test_nothing_to_punctuate_leaves_the_file_and_does_not_call_the_restorer():
    source = "1\n00:00:01,000 --> 00:00:02,000\n[music]\n\n2\n00:00:02,000 --> 00:00:03,000\n♪\n\n"

    def restorer(text):
        raise AssertionError("called")

    assert restore_subtitles(source, "srt", restorer) == source
    assert restore_subtitles("", "srt", restorer) == ""


def test_case_changes_apply_to_the_letters_in_the_file():
    source = "WEBVTT\n\n00:01.000 --> 00:02.000\n<i>hello</i> tom &amp; ann\n"
    out = restore_subtitles(source, "vtt", lambda t: ([(len(t), ".")], "Hello Tom & Ann"))
    assert out == "WEBVTT\n\n00:01.000 --> 00:02.000\n<i>Hello</i> Tom &amp; Ann.\n"


@pytest.mark.parametrize("source, fmt, code", [
    ("1\n00:00:01 --> 00:00:02,000\nhi\n", "srt", "E948"),
    ("1\n00:00:01,000 --> soon\nhi\n", "srt", "E948"),
    ("1\n00:00:01,000 --> 00:00:02,000\nhi\n", "vtt", "E949"),
    ("", "vtt", "E949"),
    ("WEBVTTX\n\n00:01.000 --> 00:02.000\nhi\n", "vtt", "E949"),
    ("just some text\nwith lines\n", "srt", "E950"),
    ("hi", "ass", "E947"),
])
def test_files_that_are_not_subtitles_are_refused(source, fmt, code):
    with pytest.raises(ValueError, match=rf"\[{code}\]"):
        parse_subtitles(source, fmt)


def test_an_empty_srt_file_has_no_cues():
    assert parse_subtitles("", "srt").cues == () and parse_subtitles("\ufeff\n\n", "srt").cues == ()


def test_insertions_that_would_break_cues_are_refused():
    source = "1\n00:00:01,000 --> 00:00:02,000\nhello there\n"
    subtitles = parse_subtitles(source, "srt")
    text = cue_text(subtitles)
    with pytest.raises(ValueError, match=r"\[E946\]"):
        write_subtitles(subtitles, text, [(5, ".\n\n2")])
    with pytest.raises(ValueError, match=r"\[E943\]"):
        write_subtitles(subtitles, text, [(3, ",")])
    with pytest.raises(ValueError, match=r"\[E951\]"):
        write_subtitles(subtitles, text, [], cased="hello_there")
    empty = parse_subtitles("1\n00:00:01,000 --> 00:00:02,000\n[music]\n", "srt")
    with pytest.raises(ValueError, match=r"\[E945\]"):
        write_subtitles(empty, cue_text(empty), [(0, ".")])
