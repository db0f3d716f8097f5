"""Soft evidence from a CPP / UPP model: a distribution over its mark classes after each word.

Why: written into the text, UPP's full stops are hard decisions (a wrong one cannot be undone
by restoration); restoration can instead weigh them against its own slot marginals, as it
weighs the lexical expert's (``decode/lexical.py``), if the model says how sure it is.  The
beam keeps only its best item's analysis, so the distribution is read off that analysis: at the
step where the best item consumes word ``i`` (its Shift or RightArc, the action that carries
the mark), the perceptron's scores of that action with each mark (UPP: the action's columns of
``W``; CPP: the mark classifier's columns of ``C``), over the same state's features, turned into
a distribution by a softmax.  This is a forced-choice margin of the mark given the state and
the action the best analysis took (the decoding constraints are not applied: a full stop the
constraints forbid on this path still shows what the scores prefer); the scores are not
calibrated, so a user raises the distribution to a weight chosen on held-out data.  The marks
of the analysis are exactly :meth:`IncrementalPunctuator.predict`'s (and, window by window,
:func:`~spacy_punctgen.incremental.windows.predict_windows`'s).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from spacy_punctgen.errors import Errors
from spacy_punctgen.incremental.model import MODES, IncrementalPunctuator
from spacy_punctgen.incremental.tagger import word_hash
from spacy_punctgen.incremental.windows import DEFAULT_MARGIN, DEFAULT_WINDOW
from spacy_punctgen.inference import incremental as K


@dataclass
class MarkEvidence:
    """One stream's analysis with its soft marks: ``heads`` and ``marks`` as ``predict`` gives
    them, ``probs[i, m]`` the probability of mark class ``m`` after word ``i`` (rows sum to 1),
    ``scores`` the raw perceptron scores the softmax read."""

    heads: List[int]
    marks: List[int]
    probs: np.ndarray
    scores: np.ndarray


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mark_evidence(model: IncrementalPunctuator, words: Sequence[str], beam: Optional[int] = None) -> MarkEvidence:
    """The best analysis of ``words`` (lowercased, as ``predict`` takes them; one decoding) and
    each word's mark distribution at the step that consumed it (module docstring)."""
    words = list(words)
    n, k = len(words), len(model.labels)
    if n == 0:
        return MarkEvidence([], [], np.zeros((0, k)), np.zeros((0, k)))
    wids = np.asarray([word_hash(w) for w in words], dtype=np.int32)
    tags = model.tags(words)
    mode = MODES[model.mode]
    codes, heads, marks = K.beam_doc(wids, tags, model.W, None, model.C, None, mode, model.labels.is_full,
                                     beam or model.beam)
    table = model.W if model.mode == "upp" else model.C  # the columns of the marks: Shift m, RightArc m
    n_buckets = table.shape[0]
    scores = np.zeros((n, k), dtype=np.float64)
    word = 0
    for t, code in enumerate(codes.tolist()):
        atype = code & 3
        if atype > 1:  # LeftArc, Reduce: no word consumed, no mark
            continue
        feats = K.state_features(codes[:t], wids, tags, model.labels.is_full, n_buckets)
        scores[word] = table[feats.astype(np.int64), atype * k:(atype + 1) * k].sum(axis=0, dtype=np.float64)
        word += 1
    if word != n:  # every word is consumed exactly once by a complete analysis
        raise ValueError(Errors.E961.format(n=n, consumed=word))
    return MarkEvidence(heads.tolist(), marks.tolist(), _softmax(scores), scores)


def mark_evidence_windows(model: IncrementalPunctuator, words: Sequence[str], window: int = DEFAULT_WINDOW,
                          margin: int = DEFAULT_MARGIN, beam: Optional[int] = None) -> MarkEvidence:
    """:func:`mark_evidence` of a long stream, window by window, cut where
    :func:`~spacy_punctgen.incremental.windows.predict_windows` cuts (its heads and marks)."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 2 \
            or isinstance(margin, bool) or not isinstance(margin, int) or not 0 <= margin < window:
        raise ValueError(Errors.E934.format(window=window, margin=margin))
    words = list(words)
    n, k = len(words), len(model.labels)
    full = model.labels.is_full
    heads: List[int] = []
    marks: List[int] = []
    probs, scores = [], []
    start = 0
    while start < n:
        end = min(n, start + window)
        ev = mark_evidence(model, words[start:end], beam)
        h, m = ev.heads, ev.marks
        keep = end - start
        if end < n:
            stops = [i for i in range(keep - margin) if full[m[i]]]
            keep = stops[-1] + 1 if stops else keep - margin
        heads.extend(-1 if x < 0 or x >= keep else start + x for x in h[:keep])
        marks.extend(m[:keep])
        probs.append(ev.probs[:keep])
        scores.append(ev.scores[:keep])
        start += keep
    if not probs:
        return MarkEvidence([], [], np.zeros((0, k)), np.zeros((0, k)))
    return MarkEvidence(heads, marks, np.concatenate(probs), np.concatenate(scores))
