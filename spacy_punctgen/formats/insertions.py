"""Insertions into a text: the one interface between restoration and the file formats.

An insertion ``(offset, string)`` means "insert ``string`` at character ``offset`` of the
input".  Restored text is the input with its insertions applied and nothing else, so every
character of the input survives in order and :func:`strip_insertions` gives it back.  An
offset may be at the end of a whitespace-separated token (where a mark after a word goes,
before the whitespace that follows it), at the start of one (an opening mark), in whitespace
or at either end of the text, never strictly between two non-whitespace characters.
Whitespace is what :meth:`str.isspace` says, as for :meth:`str.split`.
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple

from ..errors import Errors

Insertion = Tuple[int, str]


class Restored(NamedTuple):
    """What a restorer may return instead of a bare list of insertions: the insertions and,
    with truecasing, the input with only case changes (same length), else None."""

    insertions: Sequence[Insertion]
    cased: Optional[str] = None


def inside_token(text: str, offset: int) -> bool:
    """Whether ``offset`` falls strictly between two non-whitespace characters of ``text``."""
    return 0 < offset < len(text) and not text[offset - 1].isspace() and not text[offset].isspace()


def _token_around(text: str, offset: int) -> str:
    start, end = offset, offset
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end]


def check_insertions(text: str, insertions, *, inside_tokens: bool = False) -> List[Insertion]:
    """The insertions as a list of ``(int, str)`` pairs, after checking that each is a pair,
    that offsets never decrease and lie in ``0..len(text)``, and (unless ``inside_tokens``)
    that none falls inside a token.  Several insertions at one offset go in their order."""
    out, previous = [], 0
    for index, item in enumerate(insertions):
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], int)
                and not isinstance(item[0], bool) and isinstance(item[1], str)):
            raise ValueError(Errors.E940.format(index=index, value=item))
        offset, string = item
        if not 0 <= offset <= len(text):
            raise ValueError(Errors.E942.format(index=index, offset=offset, length=len(text)))
        if offset < previous:
            raise ValueError(Errors.E941.format(index=index, offset=offset, previous=previous))
        if not inside_tokens and inside_token(text, offset):
            raise ValueError(Errors.E943.format(index=index, offset=offset, token=_token_around(text, offset)))
        out.append((offset, string))
        previous = offset
    return out


def apply_insertions(text: str, insertions, *, inside_tokens: bool = False) -> str:
    """``text`` with the (checked, see :func:`check_insertions`) insertions made."""
    pieces, last = [], 0
    for offset, string in check_insertions(text, insertions, inside_tokens=inside_tokens):
        pieces.append(text[last:offset])
        pieces.append(string)
        last = offset
    pieces.append(text[last:])
    return "".join(pieces)


def strip_insertions(output: str, insertions) -> str:
    """The input that ``insertions`` (offsets into the input) turned into ``output``: each
    inserted string is checked to be where the insertions say, then removed."""
    pieces, shift, last = [], 0, 0
    for index, item in enumerate(insertions):
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], int)
                and not isinstance(item[0], bool) and isinstance(item[1], str)):
            raise ValueError(Errors.E940.format(index=index, value=item))
        offset, string = item
        at = offset + shift
        if offset < 0 or at > len(output):
            raise ValueError(Errors.E942.format(index=index, offset=offset, length=len(output) - shift))
        if at < last:
            raise ValueError(Errors.E941.format(index=index, offset=offset, previous=last - shift))
        if output[at:at + len(string)] != string:
            raise ValueError(Errors.E944.format(index=index, expected=string, at=at,
                                                got=output[at:at + len(string)]))
        pieces.append(output[last:at])
        last = at + len(string)
        shift += len(string)
    pieces.append(output[last:])
    return "".join(pieces)


def token_spans(text: str) -> List[Tuple[int, int]]:
    """``(start, end)`` of every whitespace-separated token of ``text``: the offsets where
    marks go are their ends (and starts)."""
    spans, start = [], None
    for i, char in enumerate(text):
        if char.isspace():
            if start is not None:
                spans.append((start, i))
                start = None
        elif start is None:
            start = i
    if start is not None:
        spans.append((start, len(text)))
    return spans


def check_cased(text: str, cased: str) -> str:
    """``cased`` after checking it is ``text`` with only case changes, character by character."""
    if not isinstance(cased, str) or len(cased) != len(text):
        raise ValueError(Errors.E952.format(got=len(cased) if isinstance(cased, str) else type(cased).__name__,
                                            expected=len(text)))
    for at, (got, expected) in enumerate(zip(cased, text)):
        if got != expected and got.casefold() != expected.casefold():
            raise ValueError(Errors.E951.format(at=at, got=got, expected=expected))
    return cased
