"""The rule every restoration keeps, as a check the tests run on each restored Doc.

Why: users' text is sacred. A restored text is the input with marks inserted and nothing else:
removing the insertions gives back the input exactly, each insertion sits at an edge of a
whitespace-separated token (or anywhere between words of a language written without spaces)
and is made of punctuation and spaces only; characters are deleted only with ``repunctuate``,
and only marks.
"""
from __future__ import annotations

import unicodedata
from typing import Optional, Sequence, Tuple

from spacy_punctgen.formats.insertions import inside_token, strip_insertions
from spacy_punctgen.pipeline.restore import UNSPACED_LANGS, apply_edits


def is_mark_string(s: str) -> bool:
    """Punctuation (Unicode categories P*, S*) and spaces only, at least one mark."""
    return any(not ch.isspace() for ch in s) and all(
        ch.isspace() or unicodedata.category(ch)[0] in "PS" for ch in s)


def rule_violations(text: str, restored: str, insertions: Sequence[Tuple[int, str]],
                    deletions: Sequence[Tuple[int, int]] = (), lang: Optional[str] = None,
                    repunctuate: bool = False) -> list:
    """What breaks the rule in one restoration (empty: nothing)."""
    bad = []
    if apply_edits(text, insertions, deletions) != restored:
        bad.append("the edits do not give the restored text")
    if list(insertions) != sorted(insertions, key=lambda x: x[0]):
        bad.append("insertions out of order")
    # a deleted mark leaves a token edge where it was
    edges = list(text)
    for lo, hi in deletions:
        edges[lo:hi] = [" "] * (hi - lo)
    edges = "".join(edges)
    for off, s in insertions:
        if not 0 <= off <= len(text):
            bad.append(f"insertion outside the text at {off}")
        elif lang not in UNSPACED_LANGS and inside_token(edges, off):
            bad.append(f"insertion {s!r} inside a token at {off}: {text[max(0, off - 10):off + 10]!r}")
        if not is_mark_string(s):
            bad.append(f"inserted {s!r} is not marks")
    if deletions and not repunctuate:
        bad.append(f"characters deleted without repunctuate: {list(deletions)[:3]}")
    for lo, hi in deletions:
        if not is_mark_string(text[lo:hi]):
            bad.append(f"deleted {text[lo:hi]!r}, not marks")
    if not deletions:
        try:
            if strip_insertions(restored, insertions) != text:
                bad.append("removing the insertions does not give the input back")
        except ValueError as err:  # an inserted string is not where the insertions say
            bad.append(str(err))
    return bad


def doc_violations(doc) -> list:
    """:func:`rule_violations` of a Doc that a ``punctgen`` component restored (empty for one it
    did not)."""
    edits = doc._.restored_edits
    if edits is None or doc._.restored_text is None:
        return []
    return rule_violations(doc.text, doc._.restored_text, edits["insertions"], edits["deletions"], doc.lang_,
                           repunctuate=bool(edits["deletions"]))
