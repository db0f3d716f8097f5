"""Paper 003's two models, trained and applied: CPP (cascaded) and UPP (unified).

Why both: UPP puts the mark into the Shift/RightArc action, so parsing and punctuation share one
beam and one perceptron; CPP keeps a parser (action types only) and a separate mark classifier
scored after each Shift/RightArc from the same features (the partial tree and the action), the
paper's cascade of two independent sub-models.  Both decode with the same beam search and the
same two constraints (:mod:`spacy_punctgen.incremental.system`).  Training: the generalised
perceptron with early update, averaged, a few epochs, the epoch chosen by dev F1 of the marks.
"""
from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.errors import Errors
from spacy_punctgen.incremental.labels import Labels, get_labels
from spacy_punctgen.incremental.streams import StreamDoc
from spacy_punctgen.incremental.tagger import UPOS, PosTagger, jackknife_tags, word_hash
from spacy_punctgen.inference import incremental as K

MODES = {"upp": K.UPP, "cpp": K.CPP}


def _words(words: Sequence[str]) -> np.ndarray:
    return np.asarray([word_hash(w) for w in words], dtype=np.int32)


def mark_f1(gold: Sequence[Sequence[int]], pred: Sequence[Sequence[int]]) -> float:
    """Micro F1 over the marked classes (the dev criterion; the reported scores come from
    ``spacy_punctgen.evaluation.stream``)."""
    tp = fp = fn = 0
    for g, p in zip(gold, pred):
        for a, b in zip(g, p):
            tp += a == b and a > 0
            fp += b > 0 and a != b
            fn += a > 0 and a != b
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


class IncrementalPunctuator:
    """A trained CPP or UPP model with its POS tagger."""

    def __init__(self, mode: str = "upp", labels: str = "paper", beam: int = 5, n_buckets: int = 2 ** 20,
                 tagger: Optional[PosTagger] = None):
        if mode not in MODES:
            raise ValueError(Errors.E921.format(mode=mode))
        self.mode = mode
        self.labels: Labels = get_labels(labels)
        self.beam = beam
        self.n_buckets = n_buckets
        self.tagger = tagger
        n_w, n_c = K.n_outputs(MODES[mode], len(self.labels))
        self.W = np.zeros((n_buckets, n_w), dtype=np.float32)
        self.C = np.zeros((n_buckets, n_c), dtype=np.float32) if n_c else None
        self.meta: Dict = {}

    # ---- training ----
    def fit(self, train: Sequence[StreamDoc], dev: Sequence[StreamDoc] = (), epochs: int = 8, seed: int = 0,
            tagger_epochs: int = 5, log: Optional[Callable[[str], None]] = None) -> Dict:
        """Train the tagger (jackknifed tags for the parser's training documents), then the
        perceptron; keep the epoch with the best dev mark F1 (the last if no dev)."""
        if not train:
            raise ValueError(Errors.E929)
        t0 = time.perf_counter()
        pairs = [(d.words, d.upos) for d in train]
        train_tags = jackknife_tags(pairs, epochs=tagger_epochs, seed=seed)
        self.tagger = PosTagger().fit(pairs, tagger_epochs, seed)
        t_tag = time.perf_counter() - t0
        mode = MODES[self.mode]
        is_full = np.asarray(self.labels.is_full, np.int32)
        prepared = [(_words(d.words), tags, np.asarray(d.oracle(self.labels), np.int32))
                    for d, tags in zip(train, train_tags)]
        n_w, n_c = K.n_outputs(mode, len(self.labels))
        w = K.Weights(self.n_buckets, n_w)
        c = K.Weights(self.n_buckets, n_c) if n_c else None
        counter = np.zeros(2, dtype=np.float64)
        order = list(range(len(prepared)))
        rng = random.Random(seed)
        history, best = [], (-1.0, None, None, 0)
        for epoch in range(1, epochs + 1):
            t1 = time.perf_counter()
            updates_before = counter[1]
            rng.shuffle(order)
            for k in order:
                words, tags, gold = prepared[k]
                K.beam_doc(words, tags, w.W, w.U, None if c is None else c.W, None if c is None else c.U,
                           mode, is_full, self.beam, gold, counter)
            self.W = w.averaged(counter[0])
            self.C = None if c is None else c.averaged(counter[0])
            record = {"epoch": epoch, "seconds": round(time.perf_counter() - t1, 1),
                      "early_updates": int(counter[1] - updates_before)}
            if dev:
                record["dev_mark_f1"] = round(mark_f1([d.marks for d in dev],
                                                      [self.predict(d.words)[1] for d in dev]), 4)
            history.append(record)
            if log:
                log(json.dumps(record))
            score = record.get("dev_mark_f1", epoch)
            if score > best[0]:
                best = (score, self.W, self.C, epoch)
        _, self.W, self.C, best_epoch = best
        self.meta = {"mode": self.mode, "labels": self.labels.name, "beam": self.beam,
                     "n_buckets": self.n_buckets, "epochs": epochs, "best_epoch": best_epoch,
                     "history": history, "train_docs": len(train),
                     "train_words": sum(len(d.words) for d in train), "tagger_seconds": round(t_tag, 1),
                     "seconds": round(time.perf_counter() - t0, 1)}
        return self.meta

    # ---- decoding ----
    def tags(self, words: Sequence[str]) -> np.ndarray:
        return self.tagger.tag_ids_of(words)

    def predict(self, words: Sequence[str], beam: Optional[int] = None,
                forced: Optional[Sequence[int]] = None) -> Tuple[List[int], List[int]]:
        """(heads, mark classes) of one stream of words (lowercase them as in training);
        ``forced``: a mark class per word that the analysis must give (-1: free; not a full stop)."""
        if not words:
            return [], []
        _, heads, marks = K.beam_doc(_words(words), self.tags(words), self.W, None, self.C, None,
                                     MODES[self.mode], self.labels.is_full, beam or self.beam, forced=forced)
        return heads.tolist(), marks.tolist()

    def actions(self, words: Sequence[str], beam: Optional[int] = None) -> List[int]:
        if not words:
            return []
        codes, _, _ = K.beam_doc(_words(words), self.tags(words), self.W, None, self.C, None,
                                 MODES[self.mode], self.labels.is_full, beam or self.beam)
        return codes.tolist()

    def gaps(self, words: Sequence[str]) -> List[str]:
        """The mark written after each word."""
        return [self.labels.marks[m] for m in self.predict(words)[1]]

    # ---- saving ----
    def to_disk(self, path) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        arrays = {"W": self.W, "tagger": self.tagger.W}
        if self.C is not None:
            arrays["C"] = self.C
        np.savez(path / "weights.npz", **arrays)
        (path / "meta.json").write_text(json.dumps({**self.meta, "mode": self.mode, "labels": self.labels.name,
                                                    "beam": self.beam, "n_buckets": self.n_buckets,
                                                    "tags": list(self.tagger.tags)}, indent=1))

    @classmethod
    def from_disk(cls, path) -> "IncrementalPunctuator":
        path = Path(path)
        try:
            meta = json.loads((path / "meta.json").read_text())
            arrays = np.load(path / "weights.npz")
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E930.format(path=path, problem=err)) from None
        out = cls(meta["mode"], meta["labels"], meta["beam"], 2)
        out.n_buckets = meta["n_buckets"]
        out.W = np.ascontiguousarray(arrays["W"], dtype=np.float32)
        out.C = np.ascontiguousarray(arrays["C"], dtype=np.float32) if "C" in arrays else None
        out.tagger = PosTagger.from_weights(arrays["tagger"], meta.get("tags", UPOS))
        out.meta = meta
        return out
