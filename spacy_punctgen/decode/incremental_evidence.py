"""An incremental model's soft marks (CPP / UPP, :mod:`spacy_punctgen.incremental.evidence`) as
class factors on restoration's slots, beside or instead of the lexical expert's.

Why here: the compiled marginal decoder already multiplies each slot's marginal by a row of
per-class factors (:func:`~spacy_punctgen.decode.lexical.restore_with_lexical`, ``(q / π) **
weight``); the incremental model's mark distribution after a word becomes such a row once its
classes are mapped to the expert's (``CLASSES``: ``""``, ``,``, ``.``, ``?``, ``!``, ``:``, ``;``,
``other``) and its base rate is divided out, as the expert's is, so that the rate punctgen
already knows is not counted twice.  Several sources multiply: ``Π_s e_s ** w_s``, which the
decoder reads as evidence at weight 1 (:func:`combine_evidence`).

The map (:func:`class_map`): each class of the expert goes to the incremental class that
:meth:`~spacy_punctgen.incremental.labels.Labels.classify` gives its mark (paper labels: ``,`` ``:``
``;`` to M, ``.`` ``?`` ``!`` to F; fine labels: ``?`` to QUESTION, ``.`` ``!`` to PERIOD), the
empty string and ``other`` (quotes, brackets, dashes, which the incremental models do not
predict) to no mark.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.errors import Errors
from spacy_punctgen.incremental.labels import Labels
from spacy_punctgen.model.lexical import CLASSES


def class_map(labels: Labels) -> np.ndarray:
    """For each of the expert's ``CLASSES``, the index of the incremental class it falls in."""
    return np.asarray([0 if c in ("", "other") else labels.classify(c) for c in CLASSES], dtype=np.int64)


def class_evidence(probs: np.ndarray, labels: Labels, prior: Optional[Sequence[float]] = None) -> np.ndarray:
    """``(n, len(CLASSES))`` evidence rows from ``probs`` (``(n, len(labels))``: an incremental
    model's mark distribution after each of ``n`` words): each class's incremental probability
    over that class's base rate ``prior`` (the incremental classes' training frequencies; None:
    no division)."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[1] != len(labels):
        raise ValueError(Errors.E962.format(problem=f"probabilities of shape {probs.shape} for {len(labels)} classes"))
    if prior is not None:
        prior = np.asarray(prior, dtype=np.float64)
        if prior.shape != (len(labels),) or not np.isfinite(prior).all() or (prior <= 0).any():
            raise ValueError(Errors.E962.format(problem=f"the prior must be {len(labels)} numbers above 0"))
        probs = probs / prior
    return probs[:, class_map(labels)]


def combine_evidence(sources: Sequence[Tuple[Optional[np.ndarray], float]]) -> Optional[np.ndarray]:
    """``Π_s e_s ** w_s`` of evidence rows of one sentence (each ``(n, len(CLASSES))``, the same
    ``n``), each row divided by its largest entry (in logarithms: no overflow); None when no
    source has a weight above 0 (restoration then is punctgen's alone).  Read by the decoder at
    weight 1, it is the product of the sources at their weights."""
    log_f = None
    for rows, weight in sources:
        if rows is None or weight == 0:
            continue
        if not np.isfinite(weight) or weight < 0:
            raise ValueError(Errors.E962.format(problem=f"a weight must be a finite number >= 0, not {weight!r}"))
        part = weight * np.log(np.maximum(np.asarray(rows, dtype=np.float64), 1e-300))
        if log_f is not None and part.shape != log_f.shape:
            raise ValueError(Errors.E962.format(problem=f"evidence rows of shapes {log_f.shape} and {part.shape}"))
        log_f = part if log_f is None else log_f + part
    if log_f is None:
        return None
    if log_f.shape[0]:
        log_f = log_f - log_f.max(axis=1, keepdims=True)
    return np.exp(log_f)
