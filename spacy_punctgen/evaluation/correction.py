"""Scoring punctuation correction (docs/correction.md).

Three versions of each sentence's slots: the gold ones, the observed (damaged) ones the system reads,
and the system's output.  Two figures:

* **AED** of the output against the gold (as for restoration, :func:`metrics.aed`);
* **precision, recall and F0.5 of slot edits**: a slot is *changed* by the system where its output
  differs from the observed string, and *needs* a change where the gold differs from the observed
  string; a change is correct when the output equals the gold string of that slot.  Precision =
  correct changes / changes, recall = correct changes / needed changes, F0.5 weighs precision twice
  as much as recall (the weighting of the CoNLL-2014 shared task on grammatical error correction,
  Ng et al. 2014, which the paper's §6.2 uses; here edits are whole slots, not M2 token edits).
  Leaving the text as it is makes no change: precision and F0.5 are 0 by convention.

:func:`evaluate_correction` runs the model's correction (and, for comparison, restoration from the
tree alone) on gold and damaged sentences.
"""
from __future__ import annotations

import time
from typing import Dict, List, Optional, Sequence, Tuple

from spacy_punctgen.decode.correct import SlotNoise, correct_sentences
from spacy_punctgen.decode.mbr import restore_sentences
from spacy_punctgen.errors import Errors
from spacy_punctgen.evaluation.metrics import aed, gold_slots

Slots = Sequence[Tuple[str, ...]]


def edit_prf(gold: Sequence[Slots], observed: Sequence[Slots], pred: Sequence[Slots], beta: float = 0.5
             ) -> Dict[str, float]:
    """Precision, recall and F_beta of slot changes (module docstring)."""
    if not (len(gold) == len(observed) == len(pred)):
        raise ValueError(Errors.E831.format(n_pred=len(pred), n_gold=len(gold), n_obs=len(observed)))
    tp = proposed = needed = 0
    for k, (g, o, p) in enumerate(zip(gold, observed, pred)):
        if not (len(g) == len(o) == len(p)):
            raise ValueError(Errors.E832.format(k=k, n_pred=len(p), n_gold=len(g), n_obs=len(o)))
        for gs, os_, ps in zip(g, o, p):
            gs, os_, ps = tuple(gs), tuple(os_), tuple(ps)
            changed, needs = ps != os_, gs != os_
            proposed += changed
            needed += needs
            tp += changed and ps == gs
    prec = tp / proposed if proposed else 0.0
    rec = tp / needed if needed else 0.0
    b2 = beta * beta
    f = (1 + b2) * prec * rec / (b2 * prec + rec) if prec + rec else 0.0
    return {"precision": prec, "recall": rec, f"f{beta:g}".replace(".", ""): f, "correct": tp,
            "proposed": proposed, "needed": needed}


def correction_report(gold: Sequence[Slots], observed: Sequence[Slots], pred: Sequence[Slots]) -> dict:
    """AED against the gold, and P/R/F0.5 of the slot changes."""
    out = dict(aed(gold, pred))
    out.update(edit_prf(gold, observed, pred))
    return out


def evaluate_correction(model, gold_sents, damaged_sents, noise: Optional[SlotNoise] = None) -> Dict[str, dict]:
    """Reports of three systems on the damaged sentences (gold trees): ``as_is`` (no change),
    ``restore`` (the model's restoration from the tree, ignoring the input's punctuation) and
    ``correct`` (:func:`correct_sentences` with ``noise``)."""
    gold = gold_slots(gold_sents)
    obs = gold_slots(damaged_sents)
    out: Dict[str, dict] = {"as_is": correction_report(gold, obs, obs)}
    t0 = time.perf_counter()
    restored = [[c.surface for c in ch] for ch in restore_sentences(model, damaged_sents)]
    out["restore"] = {**correction_report(gold, obs, restored), "seconds": round(time.perf_counter() - t0, 2)}
    t0 = time.perf_counter()
    corrected = [[c.surface for c in ch] for ch in correct_sentences(model, damaged_sents, noise)]
    out["correct"] = {**correction_report(gold, obs, corrected), "seconds": round(time.perf_counter() - t0, 2)}
    return out


def predictions_of(choices) -> List[List[Tuple[str, ...]]]:
    """Slot strings of per-sentence lists of slot choices (anything with ``surface``)."""
    return [[tuple(c.surface) for c in ch] for ch in choices]
