"""ATTACH: ``p_θ(l, r | w)`` over the node's full ``W_d`` and its gradient (docs/model.md §2).

Why a separate module: this is the only place that touches θ.  Scoring a batch
is a gather from θ per distinct *context unit* (see :mod:`.features`), a
segment sum per node and a row softmax, with float64 accumulation.  The
gradient of ``Σ_w Σ_{(l,r)} G_w(l, r) · log p_θ(l, r | w)``-type objectives is the
reverse: given ``G = ∂obj/∂score`` per (node, pair) (for the log-likelihood,
``μ − p``), sum the rows of the nodes that share a unit, then scatter into θ.

Two entry points, thinc style:

* :meth:`AttachScorer.predict` -- the scores, for evaluation, analysis and decoding
  (NumPy, one dense table per relation).
* :meth:`AttachScorer.begin_update` -- training: the scores from the compiled loops
  (``_train.attach_forward``) and a ``backprop`` callable that maps ``G`` to the sparse
  gradient wrt θ (``_train.attach_backward``).

The two forwards agree up to float64 rounding (tests compare them); the scoring path
stays the NumPy one so that log-probabilities, perplexities and analyses are the same to
the last bit as those reported.  The NumPy backward, the reference the compiled one is
tested against, is :mod:`spacy_punctgen.testing.numpy_attach`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, List, Tuple

import numpy as np

from spacy_punctgen.inference import kernels
from spacy_punctgen.features.templates import FeatureExtractor, FeatureIndex


def log_softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of a float64 matrix."""
    m = scores.max(axis=1, keepdims=True)
    z = scores - m
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


@dataclass
class _Group:
    rid: int
    nodes: np.ndarray  # positions (in batch node order) of this relation's nodes
    inv: np.ndarray  # entry -> local unit row
    counts: np.ndarray  # contexts per node
    ent_unit: np.ndarray  # known features of the group's units: local unit row,
    ent_col: np.ndarray  # ... column of the relation table,
    ent_feat: np.ndarray  # ... feature id
    n_units: int
    P: int


@dataclass
class AttachForward:
    """The scores of a batch of nodes (:meth:`AttachScorer.predict`, :meth:`~AttachScorer.begin_update`)."""

    node_off: np.ndarray  # int64 (N+1,): node w's pairs are flat[node_off[w]:node_off[w+1]]
    logp: np.ndarray  # float64 (node_off[-1],)
    groups: List[_Group]  # predict only: the batch's layout per relation (the NumPy backward's input)

    @property
    def p(self) -> np.ndarray:
        return np.exp(self.logp)


#: ``backprop(G)`` of :meth:`AttachScorer.begin_update`: ``(feature ids, values)`` of
#: ``∂/∂θ Σ_w Σ_j G[w, j] · score_w(j)`` (``G`` flat like ``logp``), the ids distinct.
Backprop = Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]


class AttachScorer:
    """Scores nodes with θ (length ``F``, the feature dictionary's size).

    For each context unit it caches, once, the list of its known features as
    (column of the relation table, feature id).  A batch's scores are then: a
    dense (units × columns) weight table filled from θ, times the relation's
    (columns × pairs) 0/1 matrix, summed over each node's units, row-softmaxed.
    """

    def __init__(self, extractor: FeatureExtractor, index: FeatureIndex):
        self.extractor = extractor
        self.index = index
        # (ptr, col, feat): unit u's known features are col/feat[ptr[u]:ptr[u+1]].  One tuple,
        # replaced whole (never modified in place) under ``_grow_lock``, so a reader that took
        # it sees three arrays that agree, whatever another thread is adding.
        self._entries = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64))
        self._grow_lock = threading.Lock()

    def __getstate__(self) -> dict:  # a lock does not pickle
        state = dict(self.__dict__)
        state.pop("_grow_lock", None)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        if "_entries" not in state and "_ptr" in state:  # pickled before the entries were one tuple
            state["_entries"] = (state.pop("_ptr"), state.pop("_col"), state.pop("_feat"))
        self.__dict__.update(state)
        self._grow_lock = threading.Lock()

    @property
    def _ptr(self) -> np.ndarray:
        return self._entries[0]

    @property
    def _col(self) -> np.ndarray:
        return self._entries[1]

    @property
    def _feat(self) -> np.ndarray:
        return self._entries[2]

    @property
    def n_features(self) -> int:
        return self.index.size

    def _ensure(self, chunk: int = 1 << 16) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ``(ptr, col, feat)`` entries of every unit interned so far: the known-feature
        lists of units interned since the last call are computed ``chunk`` units at a time (the
        first call after training's feature collection sees every training unit: doing them all
        at once would hold several copies of all entries).

        Thread-safe: the lists grow under a lock and the three arrays are swapped in together,
        so callers use the returned tuple (not ``self._ptr`` etc. read one by one)."""
        entries = self._entries
        if self.extractor.n_units <= len(entries[0]) - 1:
            return entries
        with self._grow_lock:
            entries = self._entries  # another thread may have grown them meanwhile
            ptr, col, feat = entries
            done = len(ptr) - 1
            upto = self.extractor.n_units
            if upto <= done:
                return entries
            entries = self._entries = self._grown(ptr, col, feat, done, upto, chunk)
        return entries

    def _grown(self, ptr: np.ndarray, col: np.ndarray, feat: np.ndarray, done: int, upto: int, chunk: int
               ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New ``(ptr, col, feat)`` arrays: the given ones plus units ``done..upto-1``."""
        ex = self.extractor
        col_parts, feat_parts, count_parts = [col], [feat], []
        for a in range(done, upto, chunk):
            new = np.arange(a, min(a + chunk, upto))
            rels = ex.unit_relations(new)
            hashes = ex.unit_hashes(new)
            units, cols, feats = [], [], []
            for rid in np.unique(rels):
                sel = np.flatnonzero(rels == rid)
                u, c, f = self.index.unit_entries(hashes[sel], ex.rel_tables[int(rid)])
                units.append(sel[u])
                cols.append(c.astype(np.int32))
                feats.append(f)
            u = np.concatenate(units)
            order = np.argsort(u, kind="stable")
            count_parts.append(np.bincount(u, minlength=len(new)))
            col_parts.append(np.concatenate(cols)[order])
            feat_parts.append(np.concatenate(feats)[order])
            del units, cols, feats, u, order
        new_ptr = np.concatenate([ptr, ptr[-1] + np.cumsum(np.concatenate(count_parts))])
        # concatenate, dropping each new part once copied (the old arrays stay whole: other
        # threads may be reading them)
        total = sum(len(c) for c in col_parts)
        new_col, new_feat = np.empty(total, dtype=np.int32), np.empty(total, dtype=np.int64)
        pos = 0
        for i in range(len(col_parts)):
            n = len(col_parts[i])
            new_col[pos:pos + n] = col_parts[i]
            new_feat[pos:pos + n] = feat_parts[i]
            col_parts[i] = feat_parts[i] = None
            pos += n
        return new_ptr, new_col, new_feat

    def _tables(self) -> Tuple[np.ndarray, ...]:
        """The relation tables' sizes and ``pair_cols`` flattened for the compiled loops
        (rebuilt when a relation is added)."""
        tables = self.extractor.rel_tables
        got = self.__dict__.get("_flat_tables")
        if got is not None and got[0] == len(tables):
            return got[1]
        P = np.array([t.size for t in tables], dtype=np.int64)
        K = np.array([t.pair_cols.shape[1] for t in tables], dtype=np.int64)
        V = np.array([t.n_cols for t in tables], dtype=np.int64)
        off = np.zeros(len(tables), dtype=np.int64)
        if len(tables) > 1:
            np.cumsum((P * K)[:-1], out=off[1:])
        pc = np.concatenate([np.ascontiguousarray(t.pair_cols, dtype=np.int64).ravel() for t in tables]) \
            if tables else np.zeros(0, np.int64)
        flat = (P, K, V, off, pc)
        self._flat_tables = (len(tables), flat)
        return flat

    def begin_update(self, theta: np.ndarray, rel_ids: np.ndarray, unit_ptr: np.ndarray,
                     units: np.ndarray) -> Tuple[AttachForward, Backprop]:
        """The scores of :meth:`predict` in one compiled pass (column weights summed over a
        node's units before the pair sums: equal up to float64 rounding), and the callable
        that takes ``G = ∂obj/∂score`` back to θ (:data:`Backprop`)."""
        e_ptr, e_col, e_feat = self._ensure()
        rel_ids = np.ascontiguousarray(rel_ids, dtype=np.int64)
        unit_ptr = np.ascontiguousarray(unit_ptr, dtype=np.int64)
        units = np.ascontiguousarray(units, dtype=np.int64)
        P, K, V, off, pc = self._tables()
        node_off = np.zeros(len(rel_ids) + 1, dtype=np.int64)
        np.cumsum(P[rel_ids], out=node_off[1:])
        logp = np.empty(int(node_off[-1]), dtype=np.float64)
        theta = np.ascontiguousarray(theta)
        if theta.dtype != np.float64:
            theta = theta.astype(np.float32, copy=False)
        kernels.attach_forward(theta, rel_ids, unit_ptr, units, e_ptr, e_col, e_feat,
                              P, K, V, off, pc, node_off, logp)

        def backprop(G: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
            slot = self.__dict__.get("_slot")
            if slot is None or slot.size < self.n_features:
                slot = self._slot = np.full(self.n_features, -1, dtype=np.int32)
            return kernels.attach_backward(np.ascontiguousarray(G, dtype=np.float64), rel_ids, unit_ptr, units,
                                          e_ptr, e_col, e_feat, P, K, V, off, pc, node_off, slot)

        return AttachForward(node_off, logp, []), backprop

    def score(self, theta: np.ndarray, rel_ids: np.ndarray, unit_ptr: np.ndarray,
              units: np.ndarray) -> AttachForward:
        """:meth:`predict`'s log-probabilities, equal to the bit, in one compiled pass (no
        ``groups``): decoding and analysis score every batch with it.  The pair scores are
        summed in :meth:`predict`'s order (``_train.attach_scores``, NumPy's pairwise
        summation included); ``exp`` and ``log`` stay NumPy's."""
        e_ptr, e_col, e_feat = self._ensure()
        rel_ids = np.ascontiguousarray(rel_ids, dtype=np.int64)
        unit_ptr = np.ascontiguousarray(unit_ptr, dtype=np.int64)
        units = np.ascontiguousarray(units, dtype=np.int64)
        P, K, V, off, pc = self._tables()
        sizes = P[rel_ids]
        node_off = np.zeros(len(rel_ids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=node_off[1:])
        z = np.empty(int(node_off[-1]), dtype=np.float64)
        theta = np.ascontiguousarray(theta)
        if theta.dtype != np.float64:
            theta = theta.astype(np.float32, copy=False)
        kernels.attach_scores(theta, rel_ids, unit_ptr, units, e_ptr, e_col, e_feat, P, K, V, off, pc,
                             node_off, z)
        lse = np.empty(len(rel_ids), dtype=np.float64)
        kernels.segment_sums(np.exp(z), node_off, lse)
        return AttachForward(node_off, z - np.repeat(np.log(lse), sizes), [])

    def unit_weights(self, theta: np.ndarray, uids: np.ndarray, table
                     ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Dense column weights ``(U, V)`` of units sharing one relation table, and their entries."""
        e_ptr, e_col, e_feat = self._ensure()
        uids = np.asarray(uids, dtype=np.int64)
        lo, hi = e_ptr[uids], e_ptr[uids + 1]
        counts = hi - lo
        tot = int(counts.sum())
        seg = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else np.zeros(0, np.int64)
        ent = np.repeat(lo - seg, counts) + np.arange(tot)
        eu = np.repeat(np.arange(len(uids)), counts)
        ec = e_col[ent].astype(np.int64)
        ef = e_feat[ent]
        T = np.zeros((len(uids), table.n_cols), dtype=np.float64)
        T[eu, ec] = theta[ef]
        return T, eu, ec, ef

    def predict(self, theta: np.ndarray, rel_ids: np.ndarray, unit_ptr: np.ndarray,
                units: np.ndarray) -> AttachForward:
        """log p_θ(·|w) over W_d(w) for every node of a batch (nodes given in CSR form)."""
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
            table = tables[int(rid)]
            nodes = np.flatnonzero(rel_ids == rid)
            counts = counts_all[nodes]
            starts = unit_ptr[nodes]
            tot = int(counts.sum())
            seg = np.concatenate([[0], np.cumsum(counts)[:-1]])
            ent = units[np.repeat(starts - seg, counts) + np.arange(tot)]
            uniq, inv = np.unique(ent, return_inverse=True)
            T, eu, ec, ef = self.unit_weights(theta, uniq, table)
            S = T[:, table.pair_cols].sum(axis=2)  # (U, P)
            scores = np.add.reduceat(S[inv.ravel()], seg, axis=0)  # (n_d, P)
            lp = log_softmax_rows(scores)
            P = table.size
            logp[node_off[nodes][:, None] + np.arange(P)[None, :]] = lp
            groups.append(_Group(int(rid), nodes, inv.ravel(), counts, eu, ec, ef, len(uniq), P))
        return AttachForward(node_off, logp, groups)
