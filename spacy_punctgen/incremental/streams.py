"""Training and test documents of the incremental model: depunctuated, lowercased, unsegmented
streams of consecutive treebank sentences with their trees and the mark class after each word.

Why: paper 003 trains on "every ten dependency trees concatenated", lowercased, punctuation
removed but remembered as the mark after each word.  The streams here are cut as
``spacy_punctgen.evaluation.stream.sentence_streams`` cuts the test streams (blocks of ``size``
consecutive kept sentences, the gap after a sentence's last word holding its final marks and the
next sentence's opening ones), so training and test documents have one form; the trees are the
projectivised depunctuated ones of :mod:`spacy_punctgen.data.preprocess`.

Text without a treebank (TED talks) gets its documents from the same :func:`sentence_docs`, over
the sentences a parser of unpunctuated text finds in it with the gold marks put back
(:mod:`spacy_punctgen.api.stream_training`): silver trees, gold marks.  Such documents take a
parse to make, so :func:`save_docs` writes them (one JSON object a line: words, UPOS, heads and
the marks of each gap) and :func:`load_docs` reads them for any label set (the classes are made
from the gaps on reading).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence, Union

from spacy_punctgen.data.preprocess import ABBR, PunctSentence
from spacy_punctgen.errors import Errors
from spacy_punctgen.incremental.labels import Labels
from spacy_punctgen.incremental.system import oracle, segment_heads


@dataclass
class StreamDoc:
    """One stream: its words, gold UPOS, gold heads (0-based through the stream, -1 a sentence
    root), the marks after each word (a string per gap) and their classes."""

    words: List[str]
    upos: List[str]
    heads: List[int]
    gaps: List[str]
    marks: List[int]

    def __post_init__(self):
        if len(self.marks) != len(self.words):
            raise ValueError(Errors.E928.format(n_words=len(self.words), n_marks=len(self.marks)))

    def train_heads(self, labels: Labels) -> List[int]:
        """One projective tree per full-stop segment (the transition system's reachable gold)."""
        return segment_heads(self.heads, self.marks, labels.is_full)

    def oracle(self, labels: Labels) -> List[int]:
        return oracle(self.train_heads(labels), self.marks, labels.is_full)


def _slot(marks: Sequence[str], final: bool) -> str:
    return " ".join("." if m == ABBR else m for m in marks if m != ABBR or final)


def sentence_docs(sentences: Sequence[PunctSentence], labels: Labels, size: int = 10,
                  lower: bool = True) -> List[StreamDoc]:
    """Streams of ``size`` consecutive sentences (the last may be shorter)."""
    out = []
    for start in range(0, len(sentences), size):
        group = sentences[start:start + size]
        words, upos, heads, gaps = [], [], [], []
        for k, s in enumerate(group):
            offset = len(words)
            words.extend(w.lower() if lower else w for w in s.words)
            upos.extend(s.upos)
            heads.extend(-1 if h < 0 else h + offset for h in s.heads)
            gaps.extend(_slot(s.slots[i], False) for i in range(1, len(s.words)))
            nxt = _slot(group[k + 1].slots[0], False) if k + 1 < len(group) else ""
            gaps.append(" ".join(t for t in (_slot(s.slots[len(s.words)], True), nxt) if t))
        out.append(StreamDoc(words, upos, heads, gaps, [labels.classify(g) for g in gaps]))
    return out


DOC_KEYS = ("words", "upos", "heads", "gaps")


def save_docs(docs: Sequence[StreamDoc], path: Union[str, Path]) -> None:
    """Write ``docs`` to ``path``, one JSON object a line (see the module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({k: getattr(d, k) for k in DOC_KEYS}, ensure_ascii=False) + "\n")


def load_docs(path: Union[str, Path], labels: Labels) -> List[StreamDoc]:
    """The documents of a :func:`save_docs` file, their marks classed by ``labels``."""
    out = []
    with Path(path).open(encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                words, upos, heads, gaps = (row[k] for k in DOC_KEYS)
            except (ValueError, KeyError, TypeError) as err:
                raise ValueError(Errors.E937.format(path=path, line=line_no, problem=f"{type(err).__name__}: {err}")
                                 ) from None
            n = len(words)
            if not (len(upos) == len(heads) == len(gaps) == n) or \
                    any(not isinstance(h, int) or not -1 <= h < n for h in heads):
                raise ValueError(Errors.E937.format(path=path, line=line_no, problem=(
                    f"{n} words, {len(upos)} tags, {len(heads)} heads, {len(gaps)} gaps; "
                    "each head -1 or a word of the document")))
            out.append(StreamDoc(list(words), list(upos), list(heads), list(gaps),
                                 [labels.classify(g) for g in gaps]))
    return out
