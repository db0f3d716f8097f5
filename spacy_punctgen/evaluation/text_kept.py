"""Did restoration keep the user's text? Altered words, counted without trusting the restorer.

Why its own count: restoration reports its own edits (``doc._.restored_edits``), but a measure
of whether the text survived must not take the restorer's word for it. :func:`altered_words`
aligns the whitespace-separated tokens of the output with those of the input: each input
token must come back as itself with marks added at its edges (``word`` -> ``“word,``), and an
output token made of marks only (an inserted dash) may stand between them.
"""
from __future__ import annotations

import unicodedata
from typing import Dict, List


def _marks_only(s: str) -> bool:
    return bool(s) and all(unicodedata.category(ch)[0] in "PS" for ch in s)


def _kept(word: str, out: str) -> bool:
    """``out`` is ``word`` with marks (only) added before and after it."""
    k = out.find(word)
    while k >= 0:
        before, after = out[:k], out[k + len(word):]
        if (not before or _marks_only(before)) and (not after or _marks_only(after)):
            return True
        k = out.find(word, k + 1)
    return False


#: how far ahead in the output a word is looked for after an alteration
LOOKAHEAD = 5


def altered_words(text: str, restored: str) -> Dict[str, object]:
    """``{"words": n, "altered": k, "examples": [...]}``: how many whitespace-separated tokens of
    ``text`` do not come back whole in ``restored`` (in order), and up to ten of them. An input
    token not found within :data:`LOOKAHEAD` output tokens is altered (and the output is not
    advanced past it); output tokens passed over must be marks only, or they count as extra."""
    src, out = text.split(), restored.split()
    altered: List[str] = []
    j = extra = 0
    for word in src:
        hit = next((k for k in range(j, min(len(out), j + LOOKAHEAD)) if _kept(word, out[k])), None)
        if hit is None:
            altered.append(word)
        else:
            extra += sum(1 for t in out[j:hit] if not _marks_only(t))  # words the output has and the input not
            j = hit + 1
    extra += sum(1 for t in out[j:] if not _marks_only(t))
    return {"words": len(src), "altered": len(altered), "extra_output_tokens": extra, "examples": altered[:10]}
