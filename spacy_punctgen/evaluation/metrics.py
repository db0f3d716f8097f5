"""Restoration metrics shared by punctgen and every baseline, so all systems are scored
by the same code.

A *prediction* for a sentence is its list of slot strings ``x_0..x_n`` (each a tuple of
punctuation tokens, ``^`` excluded), exactly like :attr:`PunctSentence.slots`.

- AED (paper §6.1): token edit distance between predicted and gold slot strings, summed
  over slots and divided by the number of slots.
- Comma precision/recall/F1 (secondary metric): per slot, the matched commas are
  ``min(#gold, #predicted)``.
- A paired permutation (sign-flip) test over sentences for "system A has lower loss
  than system B".

Scoring nothing is an error, not a perfect score: :func:`aed` of no slots raises (E552),
and :func:`require_sentences` refuses a file that preprocessing leaves empty (E551).
"""
from typing import Dict, List, Sequence, Tuple

import numpy as np

from spacy_punctgen.decode.risk import edit_distance
from spacy_punctgen.errors import Errors

Slots = Sequence[Tuple[str, ...]]


def _check(gold: Sequence[Slots], pred: Sequence[Slots]) -> None:
    if len(gold) != len(pred):
        raise ValueError(Errors.E540.format(n_pred=len(pred), n_gold=len(gold)))
    for k, (g, p) in enumerate(zip(gold, pred)):
        if len(g) != len(p):
            raise ValueError(Errors.E541.format(k=k, n_pred=len(p), n_gold=len(g)))


def sentence_losses(gold: Sequence[Slots], pred: Sequence[Slots]) -> np.ndarray:
    """Total slot edit distance of each sentence (the unit of the permutation test)."""
    _check(gold, pred)
    return np.array([sum(edit_distance(tuple(gs), tuple(ps)) for gs, ps in zip(g, p))
                     for g, p in zip(gold, pred)], dtype=np.float64)


def aed(gold: Sequence[Slots], pred: Sequence[Slots]) -> Dict[str, float]:
    """Average edit distance per slot, with the counts it is made of."""
    losses = sentence_losses(gold, pred)
    n_slots = sum(len(g) for g in gold)
    if not n_slots:
        raise ValueError(Errors.E552)
    total = float(losses.sum())
    return {"aed": total / n_slots, "edits": total,
            "n_slots": n_slots, "n_sentences": len(gold)}


def mark_prf(gold: Sequence[Slots], pred: Sequence[Slots], mark: str = ",") -> Dict[str, float]:
    """Precision, recall and F1 of one punctuation mark (default: the comma)."""
    _check(gold, pred)
    tp = fp = fn = 0
    for g, p in zip(gold, pred):
        for gs, ps in zip(g, p):
            ng, np_ = list(gs).count(mark), list(ps).count(mark)
            m = min(ng, np_)
            tp += m
            fp += np_ - m
            fn += ng - m
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": prec, "recall": rec, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def paired_permutation_test(loss_a: Sequence[float], loss_b: Sequence[float],
                            n_permutations: int = 10000, seed: int = 0) -> float:
    """Two-sided p-value of the mean paired difference ``loss_a - loss_b`` under random
    sign flips of each sentence's difference (the paired permutation test).  The
    observed assignment counts as one permutation, so ``p >= 1/(n_permutations+1)``."""
    a = np.asarray(loss_a, dtype=np.float64)
    b = np.asarray(loss_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(Errors.E542.format(shape_a=a.shape, shape_b=b.shape))
    d = a - b
    observed = abs(d.sum())
    if observed == 0.0:
        return 1.0
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_permutations, 1000):
        k = min(1000, n_permutations - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(k, d.size))
        hits += int((np.abs(signs @ d) >= observed - 1e-9).sum())
    return (hits + 1) / (n_permutations + 1)


def restoration_report(gold: Sequence[Slots], pred: Sequence[Slots]) -> Dict[str, object]:
    """AED plus comma P/R/F1: the block every system's metrics file carries."""
    out: Dict[str, object] = dict(aed(gold, pred))
    out["comma"] = mark_prf(gold, pred, ",")
    return out


def require_sentences(sentences: Sequence, stats, path, use: str = "score") -> None:
    """Refuse a file of which preprocessing kept no sentence (empty, or only punctuation):
    every figure over it would be undefined, and an AED of 0 would look like success.
    ``stats`` is the file's :class:`~spacy_punctgen.data.preprocess.PrepStats`."""
    if not sentences:
        raise ValueError(Errors.E551.format(path=path, use=use, read=stats.sentences,
                                            empty=stats.omitted_empty, nonleaf=stats.omitted_nonleaf))


def gold_slots(sentences) -> List[List[Tuple[str, ...]]]:
    """The gold slot strings of preprocessed sentences (:class:`PunctSentence`)."""
    return [[tuple(s) for s in sent.slots] for sent in sentences]
