"""SubRip (``.srt``) and WebVTT (``.vtt``) subtitles: the text of their cues, and the file back
with marks inserted.

Sentences run across cues, so the text to punctuate is the spoken lines of every cue joined by
single spaces (:func:`cue_text`); each of its characters remembers where it is in the file.
Insertions into that text become insertions into the file itself (:func:`write_subtitles`), so
every index, timing line, setting, tag, line break, blank line, BOM and line ending stays as
it was, a mark lands at the end of its word on that word's line, and a file with no
insertions comes back byte for byte.

What is not punctuated, and is left exactly as written: lines whose text is empty or only
markup, and lines of only sound tags (``[music]``, ``(applause)``, ``♪ ... ♪``, ``♪``), which
are not speech and would otherwise end or split the sentences around them; so a cue of only
such lines is untouched.  Markup is hidden from the text and kept in the file: HTML-like tags
(``<i>``, ``<v Speaker>``, ``<c.yellow>``, ``<00:01.000>``) in both formats, ``{\\an8}``
overrides in SubRip, and WebVTT's character references (``&amp;`` is one character ``&``).
The WebVTT header and NOTE, STYLE and REGION blocks are never cue text.
"""
import bisect
import html
import re
from dataclasses import dataclass
from typing import List, NamedTuple, Optional, Sequence, Tuple

from ..errors import Errors
from .insertions import apply_insertions, check_cased, check_insertions

FORMATS = ("srt", "vtt")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_TIME = r"(?:\d+:)?\d{1,2}:\d{2}[,.]\d{1,3}"
_TIMING = re.compile(rf"\s*({_TIME})\s*-->\s*({_TIME})(.*)")
_TAG = r"<(?:/?[A-Za-z][^<>\r\n]*|\d[\d:.]*)>"
_MARKUP = {"srt": re.compile(_TAG + r"|\{\\[^{}\r\n]*\}"),
           "vtt": re.compile(_TAG + r"|&(?:[A-Za-z]+|#\d+|#[xX][0-9A-Fa-f]+);")}
_SOUND = re.compile(r"\[[^\]]*\]|\([^)]*\)|♪[^♪]*♪?|[♪♫🎵🎶]")
_DIALOGUE_DASHES = "-‐–—"
_VTT_BLOCKS = re.compile(r"(?:NOTE|STYLE|REGION)(?:[ \t].*)?")


@dataclass(frozen=True)
class Line:
    """One line of the file: its number (from 1), the offset of its first character, its text
    without the line break (and without a BOM), and its line break ('' on a last line without)."""

    number: int
    start: int
    text: str
    ending: str


@dataclass(frozen=True)
class Cue:
    """One cue: its position among the file's cues (from 0), its index (SubRip) or identifier
    (WebVTT) line, its timing line split into start, end and settings, its text lines as
    written, and for each text line whether it is speech to punctuate."""

    number: int
    identifier: Optional[Line]
    timing: Line
    start: str
    end: str
    settings: str
    lines: Tuple[Line, ...]
    spoken: Tuple[bool, ...]


@dataclass(frozen=True)
class Subtitles:
    """A parsed subtitle file: the file's text as read, its format and its cues."""

    source: str
    fmt: str
    cues: Tuple[Cue, ...]


class Place(NamedTuple):
    """Where an offset of the cue text is in the file: cue (from 0), text line of the cue (from
    0) and column in that line as written (tags included)."""

    cue: int
    line: int
    column: int


def split_lines(source: str) -> List[Line]:
    """The lines of ``source``, split at CRLF, CR or LF only (never at the other characters
    :meth:`str.splitlines` breaks at); a BOM is not part of the first line's text."""
    lines, start = [], 1 if source.startswith("\ufeff") else 0
    for number, match in enumerate(_LINE_BREAK.finditer(source, start), 1):
        lines.append(Line(number, start, source[start:match.start()], match.group()))
        start = match.end()
    if start < len(source):
        lines.append(Line(len(lines) + 1, start, source[start:], ""))
    return lines


def _blocks(lines: Sequence[Line]) -> List[List[Line]]:
    blocks, block = [], []
    for line in lines:
        if line.text.strip():
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    return blocks


def visible_chars(text: str, fmt: str) -> List[Tuple[str, int, int]]:
    """``(character, start, end)`` of each character of a cue line as shown: markup dropped,
    a WebVTT character reference one character spanning its ``&...;``; offsets into ``text``."""
    out, last = [], 0
    for match in _MARKUP[fmt].finditer(text):
        out.extend((c, k, k + 1) for k, c in enumerate(text[last:match.start()], last))
        if match.group().startswith("&"):
            shown = html.unescape(match.group())
            if len(shown) == 1:
                out.append((shown, match.start(), match.end()))
            else:  # not a reference html knows: its characters as written
                out.extend((c, k, k + 1) for k, c in enumerate(match.group(), match.start()))
        last = match.end()
    out.extend((c, k, k + 1) for k, c in enumerate(text[last:], last))
    return out


def is_spoken(shown: str) -> bool:
    """Whether a cue line's shown text is speech: not empty and not only sound tags (with
    dialogue dashes and whitespace around them)."""
    if not shown.strip():
        return False
    rest, n_tags = _SOUND.subn("", shown)
    return not (n_tags and not rest.strip().strip(_DIALOGUE_DASHES).strip())


def _timing(line: Line) -> Tuple[str, str, str]:
    match = _TIMING.fullmatch(line.text)
    if not match:
        raise ValueError(Errors.E948.format(line=line.number, text=line.text))
    return match.group(1), match.group(2), match.group(3).strip()


def _cues_of_block(block: Sequence[Line], fmt: str, first_number: int, header: bool) -> List[Cue]:
    """The cues of one block of non-blank lines; in WebVTT's header block the lines before the
    first timing are header, not an identifier."""
    timings = [k for k, line in enumerate(block) if "-->" in line.text]
    parts = [_timing(block[k]) for k in timings]
    cues = []
    for j, (k, (start, end, settings)) in enumerate(zip(timings, parts)):
        stop = timings[j + 1] if j + 1 < len(timings) else len(block)
        identifier = None
        if j == 0 and k > 0 and not header:
            identifier = block[k - 1]
        elif j > 0 and k - 1 > timings[j - 1] and block[k - 1].text.strip().isdigit():
            identifier = block[k - 1]
        if stop < len(block) and stop - 1 > k and block[stop - 1].text.strip().isdigit():
            stop -= 1  # the next cue's index, written without a blank line before it
        lines = tuple(block[k + 1:stop])
        spoken = tuple(is_spoken("".join(c for c, _, _ in visible_chars(line.text, fmt))) for line in lines)
        cues.append(Cue(first_number + len(cues), identifier, block[k], start, end, settings, lines, spoken))
    return cues


def parse_subtitles(source: str, fmt: str) -> Subtitles:
    """The cues of a SubRip (``fmt="srt"``) or WebVTT (``"vtt"``) file's text (BOM, CRLF, LF or
    CR line endings, trailing blank lines all allowed and kept in ``source``)."""
    if fmt not in FORMATS:
        raise ValueError(Errors.E947.format(formats=FORMATS, fmt=fmt))
    lines = split_lines(source)
    blocks = _blocks(lines)
    if fmt == "vtt":
        first = lines[0].text if lines else ""
        if not (first.startswith("WEBVTT") and first[6:7] in ("", " ", "\t")):
            raise ValueError(Errors.E949.format(text=first))
    cues: List[Cue] = []
    for b, block in enumerate(blocks):
        header = fmt == "vtt" and b == 0
        if fmt == "vtt" and not header and _VTT_BLOCKS.fullmatch(block[0].text):
            continue  # NOTE, STYLE, REGION: kept as written
        cues.extend(_cues_of_block(block, fmt, len(cues), header))
    if not cues and fmt == "srt" and blocks:
        raise ValueError(Errors.E950.format(fmt="SubRip", n=sum(len(b) for b in blocks)))
    return Subtitles(source, fmt, tuple(cues))


@dataclass(frozen=True)
class CueText:
    """The spoken text of a file's cues, one string to punctuate (lines and cues joined by one
    space), and for each of its characters the file offsets just before and just after it (a
    joining space: both at the end of the character before it) and the cue line it is on."""

    text: str
    starts: Tuple[int, ...]
    ends: Tuple[int, ...]
    segments: Tuple[int, ...]  # text offset where each spoken line's characters begin
    places: Tuple[Tuple[int, int, int], ...]  # (cue, line of the cue, file offset of the line)

    def _anchor(self, offset: int, index: int) -> Tuple[int, bool]:
        """The character an insertion at ``offset`` goes by: after the one before it where that
        ends a token (or the text ends), else before the one at it."""
        n = len(self.text)
        if not n:
            raise ValueError(Errors.E945.format(index=index, offset=offset))
        if offset > 0 and (offset == n or not self.text[offset - 1].isspace()):
            return offset - 1, True
        return offset, False

    def file_offset(self, offset: int, index: int = 0) -> int:
        """The offset in the file where an insertion at ``offset`` of the text goes."""
        k, after = self._anchor(offset, index)
        return self.ends[k] if after else self.starts[k]

    def file_insertions(self, insertions) -> List[Tuple[int, str]]:
        """The insertions into the text as insertions into the file (what
        :func:`write_subtitles` makes, and :func:`.insertions.strip_insertions` takes back out)."""
        return [(self.file_offset(offset, index), string)
                for index, (offset, string) in enumerate(check_insertions(self.text, insertions))]

    def locate(self, offset: int) -> Place:
        """The cue, its text line and the column where an insertion at ``offset`` goes."""
        k, _ = self._anchor(offset, 0)
        segment = bisect.bisect_right(self.segments, k) - 1  # a joining space: the line before it
        cue, line, line_start = self.places[segment]
        return Place(cue, line, self.file_offset(offset) - line_start)


def cue_text(subtitles: Subtitles) -> CueText:
    """The text to punctuate: the spoken lines of the cues, in order, joined by single spaces."""
    chars, starts, ends, segments, places = [], [], [], [], []
    for cue in subtitles.cues:
        for j, (line, spoken) in enumerate(zip(cue.lines, cue.spoken)):
            if not spoken:
                continue
            if chars:
                chars.append(" ")
                starts.append(ends[-1])
                ends.append(ends[-1])
            segments.append(len(chars))
            places.append((cue.number, j, line.start))
            for char, start, end in visible_chars(line.text, subtitles.fmt):
                chars.append(char)
                starts.append(line.start + start)
                ends.append(line.start + end)
    return CueText("".join(chars), tuple(starts), tuple(ends), tuple(segments), tuple(places))


def write_subtitles(subtitles: Subtitles, text: CueText, insertions, cased: Optional[str] = None) -> str:
    """The file with the insertions into ``text`` (see :func:`cue_text`) made at their places in
    it, and with ``cased`` (``text`` with only case changes) its letters' case; all else as read."""
    checked = check_insertions(text.text, insertions)
    for index, (_, string) in enumerate(checked):
        if "\n" in string or "\r" in string:
            raise ValueError(Errors.E946.format(index=index, text=string))
    source = subtitles.source
    if cased is not None:
        check_cased(text.text, cased)
        chars = list(source)
        for k, (got, was) in enumerate(zip(cased, text.text)):
            if got != was and text.ends[k] - text.starts[k] == 1:
                chars[text.starts[k]] = got
        source = "".join(chars)
    return apply_insertions(source, text.file_insertions(checked), inside_tokens=True)


def restore_subtitles(source: str, fmt: str, restorer) -> str:
    """``source`` (a SubRip or WebVTT file's text) with its cue text punctuated by ``restorer``:
    a callable from a text to :class:`Restored`-like ``(insertions, cased)``; not called when
    there is nothing to punctuate."""
    subtitles = parse_subtitles(source, fmt)
    text = cue_text(subtitles)
    if not text.text.strip():
        return source
    insertions, cased = restorer(text.text)
    return write_subtitles(subtitles, text, insertions, cased)
