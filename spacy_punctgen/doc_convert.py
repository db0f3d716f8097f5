"""Turn a parsed spaCy sentence into the depunctuated :class:`PunctSentence` the model scores.

The same preprocessing as for treebanks (quote direction, abbreviation dot,
projectivisation) is reused by building a :class:`UDSentence` from the tokens.
Where a user's parse hangs words below a punctuation token (which MODEL.md omits
from treebanks), we cannot omit the user's sentence: the dependents are lifted
to the punctuation's nearest non-punctuation ancestor instead.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from spacy.tokens import Doc, Span

from .conllu_io import UDSentence
from .errors import Errors
from .preprocess import PunctSentence, is_punct, preprocess_sentence

# Universal relations of UD v2 and v1 (the paper's data is UD 1.4).
UD_RELATIONS = {
    "acl", "advcl", "advmod", "amod", "appos", "aux", "case", "cc", "ccomp", "clf", "compound",
    "conj", "cop", "csubj", "dep", "det", "discourse", "dislocated", "expl", "fixed", "flat",
    "goeswith", "iobj", "list", "mark", "nmod", "nsubj", "nummod", "obj", "obl", "orphan",
    "parataxis", "punct", "reparandum", "root", "vocative", "xcomp",
    "dobj", "nsubjpass", "csubjpass", "auxpass", "mwe", "name", "neg", "remnant",
}


def check_doc(doc: Doc) -> None:
    """Raise a clear error unless the Doc carries a UD-labelled dependency parse."""
    if len(doc) and not doc.has_annotation("DEP"):
        raise ValueError(Errors.E001)
    bad = [(t.i, t.text, t.dep_) for t in doc if t.dep_.split(":", 1)[0].lower() not in UD_RELATIONS]
    if bad:
        labels = sorted({d for _, _, d in bad})
        i, text, _ = bad[0]
        raise ValueError(Errors.E002.format(labels=labels[:8], token=text, i=i))


def _lift_from_punct(heads: List[int], punct: List[bool]) -> List[int]:
    """Re-attach dependents of punctuation tokens (1-based heads, 0 = root)."""
    n = len(heads)
    out = list(heads)
    for i in range(n):
        h = out[i]
        seen = 0
        while h > 0 and punct[h - 1] and seen <= n:
            h = heads[h - 1]
            seen += 1
        out[i] = h if seen <= n else 0
    # a punctuation root: promote its first non-punctuation word to root
    if not any(out[i] == 0 and not punct[i] for i in range(n)):
        new_root = next(i for i in range(n) if not punct[i])
        for i in range(n):
            if out[i] == 0 or i == new_root:
                out[i] = 0 if i == new_root else new_root + 1
    return out


def span_to_ud(sent: Span) -> UDSentence:
    toks = list(sent)
    start = sent.start
    heads = [0 if t.head.i == t.i else t.head.i - start + 1 for t in toks]
    deprels = ["root" if t.head.i == t.i else t.dep_.lower() for t in toks]
    punct = [is_punct(t.pos_, d) for t, d in zip(toks, deprels)]
    if any(punct) and not all(punct):
        heads = _lift_from_punct(heads, punct)
        deprels = ["root" if h == 0 else d for h, d in zip(heads, deprels)]
    return UDSentence(
        ids=list(range(1, len(toks) + 1)),
        forms=[t.text for t in toks],
        upos=[t.pos_ or "X" for t in toks],
        xpos=[t.tag_ or "_" for t in toks],
        heads=heads,
        deprels=deprels,
        space_after=[bool(t.whitespace_) for t in toks],
        text=sent.text,
    )


def span_to_sentence(sent: Span, quote_xpos: bool = False) -> Tuple[Optional[PunctSentence], List[int]]:
    """The depunctuated sentence (None if it is only punctuation) and, per word, its token index."""
    ud = span_to_ud(sent)
    ps, _ = preprocess_sentence(ud, quote_xpos=quote_xpos)
    if ps is None:
        return None, []
    words = [t.i for t, u, d in zip(sent, ud.upos, ud.deprels) if not is_punct(u, d)]
    return ps, words


def doc_from_ud(vocab, ud: UDSentence) -> Doc:
    """A spaCy Doc carrying a UD sentence's gold tokens, UPOS, XPOS and tree."""
    heads = [(h - 1) if h > 0 else i for i, h in enumerate(ud.heads)]
    deps = ["ROOT" if h == 0 else d for h, d in zip(ud.heads, ud.deprels)]
    return Doc(vocab, words=list(ud.forms), spaces=list(ud.space_after), pos=list(ud.upos),
               tags=[x if x != "_" else "" for x in ud.xpos], heads=heads, deps=deps,
               sent_starts=[True] + [False] * (len(ud.forms) - 1))
