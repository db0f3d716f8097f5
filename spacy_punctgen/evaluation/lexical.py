"""Choosing the lexical expert's weight on dev: restoration of the dev sentences' trees with
punctgen and the expert at each weight of a grid, scored by the F1 of the marks' kinds.

Why here: the choice needs both models and a metric, so it sits above ``decode`` and ``model``.
The dev sentences are trees with their gold slots (``PunctSentence``\\ s in text order, as
``punctgen adapt`` holds them), so no parsing is repeated; the expert reads their words in
runs of consecutive sentences, as restoration reads a Doc's.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

from spacy_punctgen.decode.lexical import lexical_choices, slot_distributions
from spacy_punctgen.model.lexical import mark_class

#: the weights tried (0: punctgen alone)
WEIGHT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def class_f1(gold: Sequence[Sequence[tuple]], pred: Sequence[Sequence[tuple]]) -> Dict[str, float]:
    """Micro P/R/F1 over the non-empty mark kinds of slots ``1..n`` (a slot is right when its
    kind, :func:`~spacy_punctgen.model.lexical.mark_class`, is the gold kind)."""
    tp = fp = fn = 0
    for g_slots, p_slots in zip(gold, pred):
        for g, p in zip(g_slots[1:], p_slots[1:]):
            g, p = mark_class(g), mark_class(p)
            if g and p == g:
                tp += 1
            else:
                fp += bool(p)
                fn += bool(g)
    P = tp / (tp + fp) if tp + fp else 0.0
    R = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": P, "recall": R, "f1": 2 * P * R / (P + R) if P + R else 0.0}


def choose_lexical_weight(model, expert, sentences: Sequence, grid: Sequence[float] = WEIGHT_GRID,
                          empty_weight: float = 1.0, run: int = 20) -> Tuple[float, List[dict]]:
    """The weight of ``grid`` with the best dev F1 (ties: the smaller weight) and the table of
    every weight's P/R/F1. ``run``: consecutive sentences the expert reads as one stream."""
    sentences = list(sentences)
    gold = [list(ps.slots) for ps in sentences]
    trees = [[replace(ps, slots=[()] * len(ps.slots))] for ps in sentences]
    evidence = [q for a in range(0, len(sentences), run) for q in expert.sentence_evidence(sentences[a:a + run])]
    dists = slot_distributions(model, trees)  # once: only the combination depends on the weight
    table = []
    for weight in grid:
        choices = [lexical_choices(d, q, float(weight), empty_weight) for d, q in zip(dists, evidence)]
        scores = class_f1(gold, [[c.surface for c in sent] for sent in choices])
        table.append({"weight": float(weight), **{k: round(v, 4) for k, v in scores.items()}})
    best = max(table, key=lambda r: (r["f1"], -r["weight"]))
    return best["weight"], table
