"""Python face of ``_incremental`` (compiled from ``cython_ext/incremental.pyx``): the beam search,
perceptron updates and POS tagger of paper 003's incremental parser-punctuator.

Why a wrapper: the compiled loops trust their inputs (contiguous int32 / float32 arrays, a power
of two of hash buckets, legal gold sequences); this module makes the arrays and checks them, so
that a caller error is an ``Errors`` code and not a crash.  Only this module imports the
compiled one.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.errors import Errors
from spacy_punctgen.inference import _incremental as _ext

UPP, CPP = _ext.UPP, _ext.CPP


def _i32(xs) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(xs, dtype=np.int32))


def n_outputs(mode: int, n_marks: int) -> Tuple[int, int]:
    """Columns of the parser's weights and of the cascade's mark classifier (0 in UPP)."""
    if mode == UPP:
        return 2 * n_marks + 2, 0
    if mode == CPP:
        return 4, 2 * n_marks
    raise ValueError(Errors.E921.format(mode=mode))


class Weights:
    """A hashed weight table with its averaging accumulator (``W - U / c`` is the average)."""

    def __init__(self, n_buckets: int, n_out: int):
        if n_buckets < 2 or n_buckets & (n_buckets - 1):
            raise ValueError(Errors.E922.format(n=n_buckets))
        self.W = np.zeros((n_buckets, max(n_out, 1)), dtype=np.float32)
        self.U = np.zeros((n_buckets, max(n_out, 1)), dtype=np.float64)

    def averaged(self, steps: float) -> np.ndarray:
        if steps <= 0:
            return self.W.copy()
        return (self.W - self.U / steps).astype(np.float32)


def beam_doc(words, tags, W: np.ndarray, U: Optional[np.ndarray], C: Optional[np.ndarray],
             CU: Optional[np.ndarray], mode: int, is_full: Sequence[int], beam: int,
             gold: Optional[Sequence[int]] = None, counter: Optional[np.ndarray] = None,
             forced: Optional[Sequence[int]] = None):
    """Beam search over one document (and, with ``gold`` codes, one perceptron pass over it):
    returns the best item's (action codes, heads, marks).  ``forced``: a mark per word (-1:
    free) that decoding must give; only non-full marks may be forced (a forced full stop could
    leave no legal path)."""
    words, tags, is_full = _i32(words), _i32(tags), _i32(is_full)
    n = len(words)
    if len(tags) != n:
        raise ValueError(Errors.E923.format(n_words=n, n_tags=len(tags)))
    if beam < 1:
        raise ValueError(Errors.E924.format(beam=beam))
    if n == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32)
    if gold is not None:
        gold = _i32(gold)
        if len(gold) != 2 * n:
            raise ValueError(Errors.E925.format(n_codes=len(gold), n=n))
    if U is None:
        U = np.zeros((1, 1), dtype=np.float64)
    if counter is None:
        counter = np.zeros(2, dtype=np.float64)
    if mode == CPP and C is None:
        raise ValueError(Errors.E921.format(mode="cpp without a mark classifier"))
    if forced is not None:
        forced = _i32(forced)
        if len(forced) != n or any(m >= len(is_full) or (m >= 0 and is_full[m]) for m in forced):
            raise ValueError(Errors.E933.format(n=n, got=len(forced)))
    try:
        return _ext.beam_doc(words, tags, W, U, C, CU, mode, is_full, beam, gold, counter, forced)
    except ValueError as err:  # an illegal gold action: the oracle and the constraints disagree
        raise ValueError(Errors.E926.format(err=err)) from None


def greedy(words, tags, W: np.ndarray, C: Optional[np.ndarray], mode: int, is_full: Sequence[int]) -> np.ndarray:
    """The best legal action at each step, no beam (the reference beam 1 must equal)."""
    words = _i32(words)
    if len(words) == 0:
        return np.zeros(0, np.int32)
    return _ext.greedy_decode(words, _i32(tags), W, C, mode, _i32(is_full))


def replay(codes, n: int, is_full) -> Tuple[np.ndarray, np.ndarray, bool]:
    """(heads, marks, every action legal) of applying ``codes`` from the empty state."""
    return _ext.replay(_i32(codes), int(n), _i32(is_full))


def state_features(codes, words, tags, is_full, n_buckets: int) -> np.ndarray:
    """The hashed feature buckets of the state that ``codes`` reach."""
    words = _i32(words)
    return _ext.state_features(_i32(codes), len(words), words, _i32(tags), _i32(is_full), n_buckets - 1)


def tag_doc(words, props: np.ndarray, W: np.ndarray, U: Optional[np.ndarray] = None,
            gold: Optional[Sequence[int]] = None, counter: Optional[np.ndarray] = None) -> np.ndarray:
    """Greedy POS tags of one document (and, with ``gold``, the tagger's perceptron updates)."""
    words = _i32(words)
    if len(words) == 0:
        return np.zeros(0, np.int32)
    if counter is None:
        counter = np.zeros(1, dtype=np.float64)
    return _ext.tag_doc(words, np.ascontiguousarray(props, dtype=np.int32), W, U,
                        None if gold is None else _i32(gold), counter)
