"""A greedy left-to-right averaged-perceptron POS tagger of lowercased, unpunctuated streams.

Why: paper 003's feature templates are over words *and* POS tags, and its tagger is a Collins
(2002) perceptron of its own; a live stream has no tags, so the incremental model brings its
own.  Left to right with two words of look-ahead, it never needs more of the stream than the
parser's features already read (w_1, w_2).  Words are hashed (CRC-32: the same value in every
process), so there is no vocabulary and an unseen word still has its suffixes and shape.
"""
from __future__ import annotations

import random
import zlib
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.inference import incremental as K

UPOS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN",
        "PUNCT", "SCONJ", "SYM", "VERB", "X")


def word_hash(s: str) -> int:
    return zlib.crc32(s.encode("utf8")) & 0x7FFFFFFF


def _shape(w: str) -> str:
    out = "".join("d" if c.isdigit() else "a" if c.isalpha() else c for c in w[:6])
    collapsed = []
    for c in out:
        if not collapsed or collapsed[-1] != c:
            collapsed.append(c)
    return "".join(collapsed) + ("+" if len(w) > 6 else "")


def word_props(words: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
    """(row of each word, the rows: hash, suffixes of 1-3 letters, first letter, shape)."""
    index: Dict[str, int] = {}
    rows: List[List[int]] = []
    ids = []
    for w in words:
        k = index.get(w)
        if k is None:
            k = index[w] = len(rows)
            rows.append([word_hash(w), word_hash("s1" + w[-1:]), word_hash("s2" + w[-2:]),
                         word_hash("s3" + w[-3:]), word_hash("p1" + w[:1]), word_hash("sh" + _shape(w))])
        ids.append(k)
    return np.asarray(ids, dtype=np.int32), np.asarray(rows or [[0] * 6], dtype=np.int32).reshape(-1, 6)


class PosTagger:
    def __init__(self, n_buckets: int = 2 ** 18, tags: Sequence[str] = UPOS):
        self.tags = tuple(tags)
        self.tag_ids = {t: i for i, t in enumerate(self.tags)}
        self.weights = K.Weights(n_buckets, len(self.tags))
        self.W = self.weights.W

    def fit(self, docs: Sequence[Tuple[Sequence[str], Sequence[str]]], epochs: int = 5, seed: int = 0) -> "PosTagger":
        """Train on (words, UPOS) documents; the averaged weights are kept."""
        prepared = [(word_props(w), np.asarray([self.tag_ids.get(t, len(self.tags) - 1) for t in g], np.int32))
                    for w, g in docs]
        counter = np.zeros(1, dtype=np.float64)
        order = list(range(len(prepared)))
        rng = random.Random(seed)
        for _ in range(epochs):
            rng.shuffle(order)
            for k in order:
                (ids, props), gold = prepared[k]
                K.tag_doc(ids, props, self.weights.W, self.weights.U, gold, counter)
        self.W = self.weights.averaged(counter[0])
        return self

    def tag_ids_of(self, words: Sequence[str]) -> np.ndarray:
        ids, props = word_props(words)
        return K.tag_doc(ids, props, self.W)

    def __call__(self, words: Sequence[str]) -> List[str]:
        return [self.tags[t] for t in self.tag_ids_of(words)]

    @classmethod
    def from_weights(cls, W: np.ndarray, tags: Sequence[str]) -> "PosTagger":
        out = cls(2, tags)
        out.W = np.ascontiguousarray(W, dtype=np.float32)
        return out


def jackknife_tags(docs: Sequence[Tuple[Sequence[str], Sequence[str]]], folds: int = 4, epochs: int = 5,
                   n_buckets: int = 2 ** 18, seed: int = 0) -> List[np.ndarray]:
    """Each document's tags from a tagger that did not see it (the parser then trains on tags
    as noisy as at test time)."""
    out: List[Optional[np.ndarray]] = [None] * len(docs)
    for f in range(folds):
        train = [d for k, d in enumerate(docs) if k % folds != f]
        tagger = PosTagger(n_buckets).fit(train, epochs, seed)
        for k in range(f, len(docs), folds):
            out[k] = tagger.tag_ids_of(docs[k][0])
    return out  # type: ignore[return-value]
