"""Training and test documents of the incremental model: depunctuated, lowercased, unsegmented
streams of consecutive treebank sentences with their trees and the mark class after each word.

Why: paper 003 trains on "every ten dependency trees concatenated", lowercased, punctuation
removed but remembered as the mark after each word.  The streams here are cut as
``spacy_punctgen.evaluation.stream.sentence_streams`` cuts the test streams (blocks of ``size``
consecutive kept sentences, the gap after a sentence's last word holding its final marks and the
next sentence's opening ones), so training and test documents have one form; the trees are the
projectivised depunctuated ones of :mod:`spacy_punctgen.data.preprocess`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

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
