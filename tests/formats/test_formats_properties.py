"""Properties (hypothesis) of the file formats over generated files and random insertions at
valid gaps: no insertions give the same bytes back; taking the insertions back out of the
output gives the input exactly; the output's own text is the text with the insertions made."""
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_punctgen.formats.insertions import apply_insertions, inside_token, strip_insertions
from spacy_punctgen.formats.subtitles import cue_text, parse_subtitles, split_lines, write_subtitles
from spacy_punctgen.formats.word_timestamps import (parse_word_timestamps, punctuate_words, words_text,
                                                    write_word_timestamps)

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True)
MARKS = st.sampled_from([",", ".", "?", "!", "...", ";", ":", "—", " -", "“", "”", "'", '"', ".”", ""])
LETTERS = st.characters(categories=["Ll", "Lu", "Lo", "Nd", "Mn"])
WORD = st.one_of(
    st.text(LETTERS, min_size=1, max_size=8),
    st.sampled_from(["'67", "rock", "'n'", "roll", "45's", "e-mail", "2013-2014", "a4-0090/99", "3.14", "U.S.",
                     "https://example.com/a?b=c", "ann@example.org", "🍕🍺", "👩‍👩‍👧", "â™?now", "it's",
                     "well,", "yes.", "--", "...", "“quoted”", "x" * 300]),
)
SPACE = st.sampled_from([" ", " ", " ", "  ", "\t", "\u00a0", " \u2028"])


def _line(words, spaces):
    return "".join(w + s for w, s in zip(words, spaces + [""]))


@st.composite
def words_line(draw, markup):
    """A spoken cue line: words and whitespace, some words in tags."""
    words = draw(st.lists(WORD, min_size=1, max_size=6))
    if markup:
        words = [draw(st.sampled_from(["{}", "{}", "<i>{}</i>", "<b>{}", "{}</b>"])).format(w) for w in words]
    spaces = draw(st.lists(SPACE, min_size=len(words) - 1, max_size=len(words) - 1))
    lead, trail = draw(st.sampled_from(["", "", "  ", "- "])), draw(st.sampled_from(["", "", " "]))
    return lead + _line(words, spaces) + trail


@st.composite
def subtitle_file(draw):
    fmt = draw(st.sampled_from(["srt", "vtt"]))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    sound = st.sampled_from(["[music]", "(applause)", "♪ la la ♪", "♪", "<i>[laughs]</i>", "- [door closes]"])
    blocks = []
    if fmt == "vtt":
        blocks.append(draw(st.sampled_from(["WEBVTT", "WEBVTT - a title", "WEBVTT\nKind: captions"])))
        if draw(st.booleans()):
            blocks.append("NOTE made by hypothesis\nsecond line")
        if draw(st.booleans()):
            blocks.append("STYLE\n::cue { color: red }")
    n_cues = draw(st.integers(0, 6))
    for k in range(n_cues):
        n_lines = draw(st.integers(0, 3))
        lines = [draw(st.one_of(words_line(markup=True), words_line(markup=False), sound)) for _ in range(n_lines)]
        if fmt == "srt":
            head = [str(k + 1), f"00:00:{k:02d},000 --> 00:00:{k + 1:02d},500"]
        else:
            ident = draw(st.sampled_from([[], [str(k + 1)], [f"cue-{k}"]]))
            head = ident + [f"00:{k:02d}.000 --> 00:{k + 1:02d}.500" + draw(st.sampled_from(["", " align:start"]))]
        blocks.append("\n".join(head + lines))
    body = "\n\n".join(blocks) + "\n" * draw(st.integers(0 if blocks else 0, 3))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return fmt, bom + body.replace("\n", eol)


@st.composite
def valid_insertions(draw, text):
    """Sorted insertions at offsets that are not inside a token (repeats allowed)."""
    gaps = [o for o in range(len(text) + 1) if not inside_token(text, o)]
    if not text or not gaps:
        return []
    offsets = sorted(draw(st.lists(st.sampled_from(gaps), max_size=12)))
    return [(o, draw(MARKS)) for o in offsets]


@SETTINGS
@given(subtitle_file(), st.data())
def test_subtitles_keep_everything_but_the_insertions(case, data):
    fmt, source = case
    subtitles = parse_subtitles(source, fmt)
    text = cue_text(subtitles)
    assert write_subtitles(subtitles, text, []) == source
    insertions = data.draw(valid_insertions(text.text))
    out = write_subtitles(subtitles, text, insertions)
    assert strip_insertions(out, text.file_insertions(insertions)) == source
    again = parse_subtitles(out, fmt)
    assert cue_text(again).text == apply_insertions(text.text, insertions)
    def heads(cues):
        return [(c.identifier and c.identifier.text, c.timing.text, c.timing.number) for c in cues]

    assert heads(again.cues) == heads(subtitles.cues)
    assert [line.ending for line in split_lines(out)] == [line.ending for line in split_lines(source)]
    for old, new in zip(subtitles.cues, again.cues):
        for line_old, line_new, spoken in zip(old.lines, new.lines, old.spoken):
            if not spoken:
                assert line_old.text == line_new.text


PLAIN = st.lists(st.one_of(WORD, MARKS.filter(bool), st.sampled_from([" ", "  ", "\n", "\r\n", "\n\n", "\t", "\x0c",
                                                                        "\u2028", "\u00a0", " \r\n "])),
                 max_size=30).map("".join)


@SETTINGS
@given(PLAIN, st.data())
def test_plain_text_insertions_come_back_out_and_never_fall_inside_a_token(text, data):
    insertions = data.draw(valid_insertions(text))
    out = apply_insertions(text, insertions)
    assert strip_insertions(out, insertions) == text
    assert len(out) == len(text) + sum(len(s) for _, s in insertions)
    offset = data.draw(st.integers(0, len(text)))
    try:
        apply_insertions(text, [(offset, ",")])
        refused = False
    except ValueError as err:
        assert str(err).startswith("[E943]")
        refused = True
    assert refused == inside_token(text, offset)


WORD_OBJECT = st.fixed_dictionaries(
    {"word": st.one_of(WORD, st.sampled_from(["", " ", " hello", "New York"])),
     "start": st.floats(0, 1e4, allow_nan=False), "end": st.floats(0, 1e4, allow_nan=False)},
    optional={"probability": st.floats(0, 1), "speaker": st.sampled_from(["A", "B"]), "tags": st.lists(st.integers())})


@SETTINGS
@given(st.lists(WORD_OBJECT, max_size=10), st.booleans(), st.sampled_from([None, 2]), st.data())
def test_word_timestamps_keep_every_other_key_and_their_text_is_the_text_with_insertions(words, wrap, indent, data):
    value = {"language": "en", "words": words} if wrap else words
    source = json.dumps(value, ensure_ascii=False, indent=indent)
    parsed = parse_word_timestamps(source)
    assert write_word_timestamps(parsed, parsed.words) == source
    text, _ = words_text(parsed.words)
    insertions = data.draw(valid_insertions(text))
    new = punctuate_words(parsed.words, insertions)
    assert words_text(new)[0] == apply_insertions(text, insertions)
    out = json.loads(write_word_timestamps(parsed, new))
    out_words = out["words"] if wrap else out
    assert out_words == new
    for old, word in zip(words, out_words):
        assert {k: v for k, v in old.items() if k != "word"} == {k: v for k, v in word.items() if k != "word"}
