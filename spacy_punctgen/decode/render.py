"""The one text-rendering policy: where restored marks go between the words, and the spaces.

Both the ``restore`` command (:func:`render_text`) and the component's
``doc._.restored_text`` / :func:`~spacy_punctgen.pipeline.doc_convert.insert_punctuation`
(:func:`gap_marks`, :func:`gap_spacing`) use these functions, so they print the same text for
the same words and slots.  The policy:

* A mark closes up to the word before it; the gap's whitespace follows the marks.
* Opening marks (:data:`OPENING`: ``(``, ``“``, ``¿`` …) take the space before them and
  close up to the word after them; so does every mark after an opener in the same gap.
* Dashes (:data:`DASHES`) stand between spaces where the text is spaced.
* Where the words had no space between them (e.g. Chinese), none is added.
* The model's abbreviation dot ``ABBR.`` is written ``.``, and a ``.`` or ``ABBR.`` right
  after a word that already ends in ``.`` is dropped (point absorption: ``U.S.`` + ``.`` is
  ``U.S.``), so the words' own characters are kept and an abbreviation's dot never doubles.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from spacy_punctgen.data.preprocess import ABBR
from spacy_punctgen.errors import Errors

#: Marks that open a phrase: written without a space after them, attached to what follows.
OPENING = frozenset({
    "(", "[", "{", "\u201c", "\u2018", "\u00ab", "\u2039", "\u00bf", "\u00a1", "\u300c", "\u300e",
    "\u300a", "\u3008", "\u3010", "\u3014", "\u3016", "\uff08", "\uff3b", "\uff5b",
    "-LRB-", "-LSB-", "-LCB-",
})
#: Dashes stand between spaces in spaced text.
DASHES = frozenset({"-", "--", "\u2013", "\u2014"})
_POINTS = frozenset({".", ABBR})


def gap_marks(prev_word: Optional[str], marks: Sequence[str]) -> List[str]:
    """The marks of one gap as they are written after ``prev_word`` (None: sentence start):
    ``ABBR.`` becomes ``.``, and a leading point after a word ending in ``.`` is absorbed."""
    out: List[str] = []
    for mark in marks:
        if mark in _POINTS and not out and prev_word is not None and prev_word.endswith("."):
            continue
        out.append("." if mark == ABBR else mark)
    return out


def gap_spacing(marks: Sequence[str], spaced: bool) -> List[bool]:
    """Whitespace after the word before the gap and after each of its marks
    (``len(marks) + 1`` flags), for a gap that had whitespace (``spaced``) or not."""
    out = [False] * (len(marks) + 1)
    if not spaced:
        return out
    k = 0
    while k < len(marks) and marks[k] not in OPENING:
        k += 1
    out[k] = True  # the one space sits before the first opener (or after the last mark)
    for j, mark in enumerate(marks):
        if mark in DASHES:
            out[j] = True
            out[j + 1] = True
    return out


def render_text(words: Sequence[str], spaces: Sequence[str], slots: Sequence[Sequence[str]]) -> str:
    """``words`` (``spaces[i]``: the whitespace after word ``i``) with the ``n + 1`` slots' marks
    inserted by the policy above."""
    if len(slots) != len(words) + 1:
        raise ValueError(Errors.E100.format(n_slots=len(slots), n_words=len(words)))
    out: List[str] = []
    for i in range(len(words) + 1):
        marks = gap_marks(words[i - 1] if i else None, slots[i])
        if i == 0:  # nothing before: the marks close up to the first word
            out.append("".join(marks))
        else:
            ws = spaces[i - 1]
            flags = gap_spacing(marks, bool(ws))
            out.append(ws if flags[0] else "")
            for mark, flag in zip(marks, flags[1:]):
                out.append(mark + (ws if flag else ""))
        if i < len(words):
            out.append(words[i])
    return "".join(out)
