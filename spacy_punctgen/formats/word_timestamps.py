"""Words with times, as speech recognisers write them: the text they make, and the words back
with their punctuation.

The input is a JSON list of word objects, ``[{"word": "hello", "start": 0.0, "end": 0.4}, ...]``,
or an object whose ``"words"`` is such a list (its other keys kept as they are: a
recogniser's ``"text"`` summary there is not punctuated).  The text to punctuate is
the words' strings joined by single spaces (:func:`words_text`; words that are empty or only
whitespace are left out and left as they are).  An insertion goes into the string of the word
it touches: a mark after a word is appended to its ``word``, an opening mark before a word is
prefixed to it, and with truecasing the word's letters take the new case; every other key and
value (times, probabilities, speakers...) is kept as it was, in its order, and the file is
written back as it was laid out, only the changed ``word`` strings rewritten in place (no
insertions: the same bytes).

With ``marks_key`` (e.g. ``"punct"``) each word object also gets that key, holding the marks
appended after the word (``""`` for none), for tools that want the word and its trailing
punctuation apart; it is off by default so that only ``word`` changes.  A mark before a word
is only in its ``word``.
"""
import json
import re
from dataclasses import dataclass
from json.decoder import scanstring
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..errors import Errors
from .insertions import check_cased, check_insertions


_DECODER = json.JSONDecoder()
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class WordSource:
    """Where one word object is in the file's text: each key's value as ``(start, end)``, and
    the end of its last value (where a new key goes)."""

    values: Dict[str, Tuple[int, int]]
    last_end: int


@dataclass(frozen=True)
class WordTimestamps:
    """A parsed file: its text, its JSON value, the list of word objects in it and where each
    word object is in the text (so that writing it back changes only what changed)."""

    source: str
    data: object
    words: list
    places: Tuple[WordSource, ...]


def _space(text: str, at: int) -> int:
    if at < len(text) and text[at] not in " \t\n\r":
        return at
    return _JSON_SPACE.match(text, at).end()


def _object_values(text: str, at: int) -> Tuple[Dict[str, Tuple[int, int]], int, int]:
    """The values of the JSON object at ``text[at] == "{"``: key -> (start, end) (the last of a
    repeated key, as json.loads keeps), the end of its last value, and the end of the object."""
    values, at, last_end = {}, _space(text, at + 1), at + 1
    while text[at] != "}":
        key, at = scanstring(text, at + 1)
        start = _space(text, _space(text, at) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, start)
        values[key], last_end = (start, end), end
        at = _space(text, end)
        if text[at] == ",":
            at = _space(text, at + 1)
    return values, last_end, at + 1


def _word_places(text: str, data) -> Tuple[WordSource, ...]:
    at = _space(text, 1 if text.startswith("\ufeff") else 0)
    if isinstance(data, dict):
        at = _object_values(text, at)[0]["words"][0]
    places, at = [], _space(text, at + 1)  # past "["
    while text[at] != "]":
        values, last_end, at = _object_values(text, at)
        places.append(WordSource(values, last_end))
        at = _space(text, at)
        if text[at] == ",":
            at = _space(text, at + 1)
    return tuple(places)


def check_words(words) -> list:
    """``words`` after checking each is an object with a string ``"word"``."""
    for index, word in enumerate(words):
        if not (isinstance(word, dict) and isinstance(word.get("word"), str)):
            raise ValueError(Errors.E955.format(index=index, value=word))
    return words


def parse_word_timestamps(source: str) -> WordTimestamps:
    """The words of a word-timestamp JSON file's text (a BOM allowed)."""
    try:
        data = json.loads(source[1:] if source.startswith("\ufeff") else source)
    except (json.JSONDecodeError, RecursionError) as err:
        raise ValueError(Errors.E953.format(err=err or "nested too deeply")) from None
    if isinstance(data, dict) and isinstance(data.get("words"), list):
        words = data["words"]
    elif isinstance(data, list):
        words = data
    else:
        kind = "an object without a 'words' list" if isinstance(data, dict) else type(data).__name__
        raise ValueError(Errors.E954.format(kind=kind))
    check_words(words)
    return WordTimestamps(source, data, words, _word_places(source, data))


def words_text(words: Sequence[dict]) -> Tuple[str, Tuple[Optional[Tuple[int, int]], ...]]:
    """The text to punctuate, and each word's ``(start, end)`` in it (None: left out)."""
    pieces, spans, at = [], [], 0
    for word in words:
        string = word["word"]
        if not string.strip():
            spans.append(None)
            continue
        if pieces:
            pieces.append(" ")
            at += 1
        pieces.append(string)
        spans.append((at, at + len(string)))
        at += len(string)
    return "".join(pieces), tuple(spans)


def _places(text: str, spans) -> Tuple[List[int], List[int]]:
    """For each character of the text, the word it belongs to and its position in that word's
    string (a joining space: the end of the word before it)."""
    owner, position = [0] * len(text), [0] * len(text)
    previous = None
    for w, span in enumerate(spans):
        if span is None:
            continue
        start, end = span
        if previous is not None:
            owner[start - 1], position[start - 1] = previous, spans[previous][1] - spans[previous][0]
        for k in range(start, end):
            owner[k], position[k] = w, k - start
        previous = w
    return owner, position


def punctuate_words(words: Sequence[dict], insertions, cased: Union[str, Sequence[str], None] = None,
                    marks_key: Optional[str] = None) -> List[dict]:
    """Shallow copies of the word objects with the insertions into their text (:func:`words_text`) made
    in their ``word`` strings; ``cased``: the text with only case changes, or one cased string
    per word; ``marks_key``: also record each word's trailing marks under that key."""
    words = check_words(words)
    text, spans = words_text(words)
    checked = check_insertions(text, insertions)
    if cased is not None and not isinstance(cased, str):
        cased = _cased_text(words, spans, cased)
    if cased is not None:
        check_cased(text, cased)
    owner, position = _places(text, spans)
    strings = [word["word"] for word in words]
    if cased is not None:
        for w, span in enumerate(spans):
            if span is not None:
                strings[w] = cased[span[0]:span[1]]
    added = [[] for _ in words]  # (position in the word's string, inserted string)
    for index, (offset, string) in enumerate(checked):
        if not text:
            raise ValueError(Errors.E945.format(index=index, offset=offset))
        if offset > 0 and (offset == len(text) or not text[offset - 1].isspace()):
            w, at = owner[offset - 1], position[offset - 1] + 1
        else:
            w, at = owner[offset], position[offset]
        added[w].append((at, string))
    out = []
    for word, string, marks in zip(words, strings, added):
        new = dict(word)
        pieces, last = [], 0
        for at, mark in marks:
            pieces.append(string[last:at])
            pieces.append(mark)
            last = at
        pieces.append(string[last:])
        new["word"] = "".join(pieces)
        if marks_key is not None:
            end = len(string.rstrip())
            new[marks_key] = "".join(mark for at, mark in marks if at >= end)
        out.append(new)
    return out


def _cased_text(words, spans, cased_words) -> str:
    cased_words = list(cased_words)
    if len(cased_words) != len(words):
        raise ValueError(Errors.E956.format(got=len(cased_words), expected=len(words)))
    pieces = []
    for word, span, string in zip(words, spans, cased_words):
        if span is None:
            continue
        pieces.append(check_cased(word["word"], string))
    return " ".join(pieces)


def write_word_timestamps(parsed: WordTimestamps, words: Sequence[dict]) -> str:
    """The file's text with each word object's changed values written in place and its new keys
    added after its last value; everything else (layout, key order, other values, BOM) as read,
    so unchanged words give the file back byte for byte.  Words that dropped a key, or a list of
    another length, are written as a whole new JSON value instead (loads back the same)."""
    words = list(words)
    if len(words) != len(parsed.words) or any(set(old) - set(new) for old, new in zip(parsed.words, words)):
        return _dumped(parsed, words)
    edits = []  # (start, end, replacement)
    for old, new, place in zip(parsed.words, words, parsed.places):
        added = []
        for key, value in new.items():
            if key not in old:
                added.append(f", {json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}")
            elif value != old[key] or type(value) is not type(old[key]):
                start, end = place.values[key]
                edits.append((start, end, json.dumps(value, ensure_ascii=False)))
        if added:
            text = "".join(added)
            edits.append((place.last_end, place.last_end, text[2:] if not place.values else text))
    pieces, last = [], 0
    for start, end, replacement in sorted(edits):
        pieces += [parsed.source[last:start], replacement]
        last = end
    pieces.append(parsed.source[last:])
    return "".join(pieces)


def _dumped(parsed: WordTimestamps, words: list) -> str:
    data = dict(parsed.data, words=words) if isinstance(parsed.data, dict) else words
    bom = "\ufeff" if parsed.source.startswith("\ufeff") else ""
    return bom + json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def restore_word_timestamps(source: str, restorer, marks_key: Optional[str] = None) -> str:
    """``source`` (a word-timestamp JSON file's text) with its words punctuated by ``restorer``,
    a callable from a text to ``(insertions, cased)``; not called when there are no words."""
    parsed = parse_word_timestamps(source)
    text, _ = words_text(parsed.words)
    if not text:
        insertions, cased = [], None
    else:
        insertions, cased = restorer(text)
    return write_word_timestamps(parsed, punctuate_words(parsed.words, insertions, cased, marks_key))
