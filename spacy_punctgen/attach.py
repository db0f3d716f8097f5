"""ATTACH: ``p_θ(l, r | w)`` over the node's full ``W_d`` and its gradient (MODEL.md §2).

Why a separate module: this is the only place that touches θ.  Scoring a batch
is a gather from θ per distinct *context unit* (see :mod:`.features`), a
segment sum per node and a row softmax -- all numpy, float64 accumulation.  The
gradient of ``Σ_w Σ_{(l,r)} G_w(l, r) · log p_θ(l, r | w)``-type objectives is the
reverse: given ``G = ∂obj/∂score`` per (node, pair) (for the log-likelihood,
``μ − p``), sum the rows of the nodes that share a unit, then scatter into θ
with one ``np.bincount``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from .features import FeatureExtractor, FeatureIndex


def log_softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of a float64 matrix."""
    m = scores.max(axis=1, keepdims=True)
    z = scores - m
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def segment_log_softmax(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Log-softmax of ``scores[offsets[i]:offsets[i+1]]`` for every (non-empty) segment ``i``."""
    scores = np.asarray(scores, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if scores.size == 0:
        return scores.copy()
    lens = np.diff(offsets)
    if np.any(lens <= 0):
        raise ValueError("every segment must be non-empty")
    starts = offsets[:-1]
    seg = np.repeat(np.arange(len(lens)), lens)
    m = np.maximum.reduceat(scores, starts)
    z = scores - m[seg]
    lse = np.log(np.add.reduceat(np.exp(z), starts))
    return z - lse[seg]


@dataclass
class _Group:
    rid: int
    nodes: np.ndarray  # positions (in batch node order) of this relation's nodes
    inv: np.ndarray  # entry -> local unit row
    counts: np.ndarray  # contexts per node
    idx: np.ndarray  # (U, P, K) feature indices
    P: int


@dataclass
class AttachForward:
    """Result of :meth:`AttachScorer.forward` for a batch of nodes."""

    node_off: np.ndarray  # int64 (N+1,): node w's pairs are flat[node_off[w]:node_off[w+1]]
    logp: np.ndarray  # float64 (node_off[-1],)
    groups: List[_Group]

    @property
    def p(self) -> np.ndarray:
        return np.exp(self.logp)


class AttachScorer:
    """Turns context units into feature indices (cached) and scores nodes with θ.

    θ has length ``F + 1``; index ``F`` is the dummy that every feature unknown
    to the dictionary maps to, and must stay 0.
    """

    def __init__(self, extractor: FeatureExtractor, index: FeatureIndex):
        self.extractor = extractor
        self.index = index
        self._unit_row = np.zeros(0, dtype=np.int64)  # uid -> row in its relation's store
        self._store: Dict[int, np.ndarray] = {}  # rid -> (rows, P*K) int64
        self._store_len: Dict[int, int] = {}
        self._done = 0  # units [0, _done) have rows

    @property
    def n_features(self) -> int:
        return self.index.size

    def _ensure(self, upto: int) -> None:
        """Compute the feature-index rows of units ``[_done, upto)``."""
        if upto <= self._done:
            return
        ex = self.extractor
        new = np.arange(self._done, upto)
        rels = np.array([ex.unit_relation(int(u)) for u in new], dtype=np.int64)
        rows = np.empty(len(new), dtype=np.int64)
        for rid in np.unique(rels):
            sel = np.flatnonzero(rels == rid)
            uids = new[sel]
            idx = self.index.lookup(ex.unit_keys(uids))  # (u, P, K)
            flat = idx.reshape(len(uids), -1)
            have = self._store_len.get(int(rid), 0)
            store = self._store.get(int(rid))
            need = have + len(uids)
            if store is None or store.shape[0] < need:
                cap = max(need, 2 * (store.shape[0] if store is not None else 0), 64)
                bigger = np.empty((cap, flat.shape[1]), dtype=np.int64)
                if store is not None:
                    bigger[:have] = store[:have]
                store = self._store[int(rid)] = bigger
            store[have:need] = flat
            self._store_len[int(rid)] = need
            rows[sel] = np.arange(have, need)
        self._unit_row = np.concatenate([self._unit_row, rows])
        self._done = upto

    def unit_indices(self, uids: np.ndarray) -> np.ndarray:
        """Feature indices ``(U, P, K)`` of units that share one relation."""
        uids = np.asarray(uids, dtype=np.int64)
        self._ensure(self.extractor.n_units)
        rid = self.extractor.unit_relation(int(uids[0]))
        table = self.extractor.rel_tables[rid]
        P, K = table.prop_hash.shape
        return self._store[rid][self._unit_row[uids]].reshape(len(uids), P, K)

    def forward(self, theta: np.ndarray, rel_ids: np.ndarray, unit_ptr: np.ndarray,
                units: np.ndarray) -> AttachForward:
        """log p_θ(·|w) over W_d(w) for every node of a batch (nodes given in CSR form)."""
        self._ensure(self.extractor.n_units)
        rel_ids = np.asarray(rel_ids, dtype=np.int64)
        N = len(rel_ids)
        tables = self.extractor.rel_tables
        sizes = np.array([tables[r].size for r in rel_ids], dtype=np.int64) if N else np.zeros(0, np.int64)
        node_off = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(sizes, out=node_off[1:])
        logp = np.empty(int(node_off[-1]), dtype=np.float64)
        groups: List[_Group] = []
        counts_all = np.diff(unit_ptr)
        for rid in np.unique(rel_ids):
            nodes = np.flatnonzero(rel_ids == rid)
            counts = counts_all[nodes]
            starts = unit_ptr[nodes]
            # entries of these nodes' unit lists, in node order
            tot = int(counts.sum())
            base = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
            ent = units[base + np.arange(tot)]
            uniq, inv = np.unique(ent, return_inverse=True)
            idx = self.unit_indices(uniq)
            U, P, K = idx.shape
            S = theta[idx].sum(axis=2, dtype=np.float64)  # (U, P)
            seg = np.concatenate([[0], np.cumsum(counts)[:-1]])
            scores = np.add.reduceat(S[inv], seg, axis=0)  # (n_d, P)
            lp = log_softmax_rows(scores)
            pos = node_off[nodes][:, None] + np.arange(P)[None, :]
            logp[pos] = lp
            groups.append(_Group(int(rid), nodes, inv.ravel(), counts, idx, P))
        return AttachForward(node_off, logp, groups)

    def backward(self, fwd: AttachForward, G: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """∂/∂θ of ``Σ_w Σ_j G[w, j] · score_w(j)`` (``G`` flat like ``fwd.logp``), float64, length F+1.

        For the log-likelihood pass ``G = μ − p``.  The dummy entry ``F`` is zeroed.
        """
        F1 = self.n_features + 1
        if out is None:
            out = np.zeros(F1, dtype=np.float64)
        idx_parts, w_parts = [], []
        for g in fwd.groups:
            pos = fwd.node_off[g.nodes][:, None] + np.arange(g.P)[None, :]
            Gd = G[pos]  # (n_d, P)
            gS = np.zeros((g.idx.shape[0], g.P), dtype=np.float64)
            np.add.at(gS, g.inv, np.repeat(Gd, g.counts, axis=0))
            K = g.idx.shape[2]
            idx_parts.append(g.idx.ravel())
            w_parts.append(np.repeat(gS.ravel(), K))
        if idx_parts:
            out += np.bincount(np.concatenate(idx_parts), weights=np.concatenate(w_parts), minlength=F1)
        out[F1 - 1] = 0.0
        return out


def pair_expectation_grad(mu_flat: np.ndarray, p_flat: np.ndarray) -> np.ndarray:
    """``G = μ − p`` (the log-likelihood's gradient wrt each (node, pair) score)."""
    return mu_flat - p_flat
