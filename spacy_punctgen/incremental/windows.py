"""A stream longer than the model's documents, decoded window by window, each window starting
right after a full stop the previous one predicted.

Why: the compiled beam copies every item's whole state at each of its ``2n`` steps, so one
decoding costs O(n^2) and a stream of tens of thousands of words (the TED dev block: 59k words,
no sentence or talk boundaries) cannot be one document; the models were trained on documents of
one to a few hundred words anyway.  After a full stop the succeeding constraint empties the
stack, so the analysis goes on from the empty state, the state a fresh decoding starts in:
cutting right after a predicted full stop and decoding the rest as a new document changes only
what the beam could still revise in the light of the words beyond the window.  So each window of
``window`` words is decoded, its analysis kept up to its last full stop with at least ``margin``
words of the window after it (those words were decided with that much of the stream ahead), and
the next window starts after that full stop.  A window without one is kept up to
``window - margin`` words (the restart that live mode makes after ``max_window`` words), the
heads of its kept words that lie beyond the cut made roots.  A stream of at most ``window``
words is one decoding, exactly :meth:`IncrementalPunctuator.predict`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from spacy_punctgen.errors import Errors
from spacy_punctgen.incremental.model import IncrementalPunctuator

DEFAULT_WINDOW = 200
DEFAULT_MARGIN = 50


@dataclass
class WindowedAnalysis:
    """The analysis of a long stream: each word's head (0-based through the stream, -1 a root)
    and mark class, and the first word of each window."""

    heads: List[int]
    marks: List[int]
    starts: List[int]


def predict_windows(model: IncrementalPunctuator, words: Sequence[str], window: int = DEFAULT_WINDOW,
                    margin: int = DEFAULT_MARGIN, beam: Optional[int] = None) -> WindowedAnalysis:
    """The heads and marks of ``words`` (lowercased, as :meth:`IncrementalPunctuator.predict`
    takes them) decoded window by window (see the module docstring)."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 2 \
            or isinstance(margin, bool) or not isinstance(margin, int) or not 0 <= margin < window:
        raise ValueError(Errors.E934.format(window=window, margin=margin))
    words = list(words)
    n = len(words)
    full = model.labels.is_full
    heads: List[int] = []
    marks: List[int] = []
    starts: List[int] = []
    start = 0
    while start < n:
        end = min(n, start + window)
        h, m = model.predict(words[start:end], beam=beam)
        keep = end - start
        if end < n:
            stops = [i for i in range(keep - margin) if full[m[i]]]
            keep = stops[-1] + 1 if stops else keep - margin
        starts.append(start)
        heads.extend(-1 if x < 0 or x >= keep else start + x for x in h[:keep])
        marks.extend(m[:keep])
        start += keep
    return WindowedAnalysis(heads, marks, starts)
