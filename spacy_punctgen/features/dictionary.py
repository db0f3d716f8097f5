"""Building the feature dictionary (a :class:`~.features.FeatureIndex`) from training data.

A feature is a (context unit, pair property) key.  The dictionary holds the keys of every
unit and property on a *supported* (node, pair) of the training sentences: a candidate of
the node's lattice, i.e. a pair whose non-empty halves land on non-empty surface slots.
"""
from __future__ import annotations

from typing import List, Sequence

import numpy as np

from spacy_punctgen.errors import Errors
from spacy_punctgen.features.templates import FeatureExtractor, FeatureIndex


def collect_features(ex: FeatureExtractor, train: Sequence) -> FeatureIndex:
    """Keys of every (context unit, pair property) on a supported (node, pair) of ``train``
    (prepared sentences, see :meth:`.punct_model.PunctModel.prepare`).

    A node's supported pairs are one of four subsets of ``W_d``, fixed by which of its two
    boundary slots are empty.  Each unit records in a 4-bit mask which subsets its nodes
    had; the features are made per (relation, mask) group, so memory follows the number of
    units and features, never candidates × units.
    """
    masks = np.zeros(ex.n_units, dtype=np.uint8)
    for prep in train:
        if prep.smoothed:
            raise ValueError(Errors.E203)
        lat = prep.lattice
        if lat.n_candidates == 0 or prep.units.size == 0:
            continue
        filled = np.diff(lat.x_ptr) > 0  # per slot
        kind = filled[lat.first].astype(np.uint8) | (filled[lat.last + 1].astype(np.uint8) << 1)
        bits = np.left_shift(np.uint8(1), kind).astype(np.uint8)
        np.bitwise_or.at(masks, prep.units, np.repeat(bits, np.diff(prep.unit_ptr)))
    uids = np.flatnonzero(masks)
    if uids.size == 0:
        return FeatureIndex.empty()
    rels, hashes, umask = ex.unit_relations(uids), ex.unit_hashes(uids), masks[uids]
    # the distinct property hashes (sorted) of each (relation, mask) group
    gid = np.zeros(uids.size, dtype=np.int64)
    props: List[np.ndarray] = []
    for rid in np.unique(rels):
        table = ex.rel_tables[int(rid)]
        l_empty, r_empty = table.pairs[:, 0] == 0, table.pairs[:, 1] == 0
        # kind bit 0: the left slot is filled (l may be non-empty); bit 1: the right one
        allowed = (l_empty & r_empty, r_empty, l_empty, np.ones_like(l_empty))
        sel = np.flatnonzero(rels == rid)
        for m in np.unique(umask[sel]):
            rows = np.zeros_like(l_empty)
            for k in range(4):
                if m & (1 << k):
                    rows |= allowed[k]
            gid[sel[umask[sel] == m]] = len(props)
            props.append(np.unique(table.prop_hash[rows]))
    return features_from_groups(hashes, gid, props)


def features_from_groups(hashes: np.ndarray, gid: np.ndarray, props: List[np.ndarray]) -> FeatureIndex:
    """The sorted dictionary of the pairs ``(hashes[u], p)`` for every unit ``u`` and every
    ``p`` in ``props[gid[u]]`` (each sorted and distinct), built in order: units sorted by
    hash give sorted contexts, and only contexts shared by several units (a global context
    under several relations) need their properties merged."""
    lens = np.array([len(p) for p in props], dtype=np.int64)
    off = np.zeros(len(props), dtype=np.int64)
    if len(props) > 1:
        np.cumsum(lens[:-1], out=off[1:])
    flat = np.concatenate(props).astype(np.uint64)
    order = np.argsort(hashes, kind="stable")
    h, g = hashes[order], gid[order]
    cnt = lens[g]
    total = int(cnt.sum())
    ctx = np.repeat(h, cnt)
    start = np.repeat(off[g] - (np.cumsum(cnt) - cnt), cnt)
    start += np.arange(total, dtype=np.int64)
    prop = flat[start]
    del start
    same = h[1:] == h[:-1]
    if not same.any():
        return FeatureIndex(ctx, prop)
    shared = np.zeros(h.size, dtype=bool)
    shared[1:] |= same
    shared[:-1] |= same
    rows = np.repeat(shared, cnt)
    merged = FeatureIndex.from_pairs(ctx[rows], prop[rows])
    ctx, prop = ctx[~rows], prop[~rows]
    # the merged contexts occur nowhere else: insert each block where its context sorts
    at = np.searchsorted(ctx, merged.ctx)
    return FeatureIndex(np.insert(ctx, at, merged.ctx), np.insert(prop, at, merged.prop))
