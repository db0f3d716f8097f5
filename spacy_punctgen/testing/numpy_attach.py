"""NumPy references for ATTACH (:mod:`spacy_punctgen.model.attach`), for the tests.

* :func:`backward_sparse` / :func:`backward`: the gradient wrt θ of
  ``Σ_w Σ_j G[w, j] · score_w(j)`` from a :meth:`~spacy_punctgen.model.attach.AttachScorer.predict`
  result, relation by relation with ``np.bincount``; the compiled ``backprop`` of
  :meth:`~spacy_punctgen.model.attach.AttachScorer.begin_update` must agree with it.
* :func:`segment_log_softmax`: the per-node log-softmax the compiled forward computes,
  on a flat array with segment offsets.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from spacy_punctgen.errors import Errors
from spacy_punctgen.model.attach import AttachForward, AttachScorer


def segment_log_softmax(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Log-softmax of ``scores[offsets[i]:offsets[i+1]]`` for every (non-empty) segment ``i``."""
    scores = np.asarray(scores, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if scores.size == 0:
        return scores.copy()
    lens = np.diff(offsets)
    if np.any(lens <= 0):
        raise ValueError(Errors.E222)
    starts = offsets[:-1]
    seg = np.repeat(np.arange(len(lens)), lens)
    m = np.maximum.reduceat(scores, starts)
    z = scores - m[seg]
    lse = np.log(np.add.reduceat(np.exp(z), starts))
    return z - lse[seg]


def backward_sparse(scorer: AttachScorer, fwd: AttachForward, G: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """∂/∂θ of ``Σ_w Σ_j G[w, j] · score_w(j)`` as ``(feature ids, values)`` (ids may repeat;
    add them up), for a :meth:`AttachScorer.predict` result ``fwd`` (``G`` flat like ``fwd.logp``)."""
    idx_parts, w_parts = [], []
    tables = scorer.extractor.rel_tables
    for g in fwd.groups:
        pos = fwd.node_off[g.nodes][:, None] + np.arange(g.P)[None, :]
        Gd = G[pos]  # (n_d, P)
        U, P = g.n_units, g.P
        flat = (g.inv[:, None] * P + np.arange(P)[None, :]).ravel()
        gS = np.bincount(flat, weights=np.repeat(Gd, g.counts, axis=0).ravel(), minlength=U * P)
        table = tables[g.rid]
        V = table.n_cols
        K = table.pair_cols.shape[1]
        cols = (np.arange(U)[:, None, None] * V + table.pair_cols[None, :, :]).ravel()
        gT = np.bincount(cols, weights=np.repeat(gS, K), minlength=U * V)  # (U*V,)
        idx_parts.append(g.ent_feat)
        w_parts.append(gT[g.ent_unit * V + g.ent_col])
    if not idx_parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    return np.concatenate(idx_parts), np.concatenate(w_parts)


def backward(scorer: AttachScorer, fwd: AttachForward, G: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
    """:func:`backward_sparse` as a dense float64 vector of length F (for the log-likelihood
    ``G = μ − p``)."""
    if out is None:
        out = np.zeros(scorer.n_features, dtype=np.float64)
    idx, val = backward_sparse(scorer, fwd, G)
    if idx.size:
        np.add.at(out, idx, val)
    return out
