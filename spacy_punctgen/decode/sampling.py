"""The ``"slot"`` and ``"sample"`` decoders' draws: ``n_samples`` ancestral samples of every slot's
surface string from ``p(x | T)`` (paper §6.1), and the pooled draws of several trees of one
sentence (stratified mixture sampling).

Why sampling is cheap: without the ``inner`` template ``p(T'|T)`` factorises over nodes (each
node draws its ``(l, r)`` from ATTACH's softmax over ``W_d``), the underlying string ``u_i`` of a
slot is the concatenation of the punctemes of the constituents ending / starting there, and the
channel rewrites each ``u_i`` independently.  Every node's pair is drawn for all samples at
once, the samples of a slot are grouped by their sequence of punctemes, and the channel runs on
each group's underlying string, one edit draw per bigram (:func:`sample_slots` spells out the
random stream, which fixes every result).

Deep trees (a chain of thousands of words puts thousands of constituents into one slot): the
sampler works on blocks of slots at once (one sort per block, the channel run once over all
their samples, :func:`_run_channel`) and a slot with many halves half by half
(:func:`_wide_slot`), so every step is linear in the sentence's length with bounded memory.
What is chosen among the draws is :mod:`.sample_choice`'s.
"""
from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.decode.priors import Channel, Prior
from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.dp import BOS
from spacy_punctgen.model.channel import PENDS_B, WRITES_A, WRITES_B

#: at most about this many (slot half or node) x sample entries are sampled at once
SAMPLE_BLOCK = 1 << 19


class SlotSamples(NamedTuple):
    """One slot's draws: its distinct surface strings and which one each sample drew."""

    strings: List[Tuple[int, ...]]  # distinct surface strings (symbol ids, '^' stripped)
    ids: np.ndarray  # int16 (int32 from 2^15 samples) (N,): each sample's string
    counts: np.ndarray  # int64 (len(strings),)


class _Tables(NamedTuple):
    """The grammar's punctemes as flat arrays, plus a pseudo-puncteme ``(^,)`` (id ``bos``) that
    starts slot 0's underlying string."""
    length: np.ndarray  # int64 (P + 1,)
    start: np.ndarray  # int64 (P + 1,): offset into sym
    sym: np.ndarray  # int64
    bos: int


def _tables(grammar) -> _Tables:
    pm = list(grammar.punctemes) + [(BOS,)]
    length = np.array([len(p) for p in pm], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64)
    sym = np.array([t for p in pm for t in p] or [0], dtype=np.int64)
    return _Tables(length, start, sym, len(pm) - 1)


def _id_type(N: int):
    """The smallest integer type that numbers ``N`` distinct strings."""
    return np.int16 if N < (1 << 15) else np.int32


def draw_pairs(prior: Prior, N: int, rng: np.random.Generator, n_punctemes: int) -> np.ndarray:
    """Every node's ``(l, r)`` for every sample: puncteme ids, int16 (or int32) ``(n, 2, N)``.  The uniforms
    are ``rng.random((N, n))``, drawn in blocks of samples (the same stream) to bound memory."""
    n = prior.n
    chosen = np.empty((n, 2, N), dtype=np.int16 if n_punctemes < (1 << 15) else np.int32)
    step = max(1, SAMPLE_BLOCK // max(n, 1))
    cdfs = [np.cumsum(p) for p in prior.probs]
    for a in range(0, N, step):
        u = rng.random((min(step, N - a), n))
        for w, cdf in enumerate(cdfs):
            rows = np.minimum(np.searchsorted(cdf, u[:, w] * cdf[-1], side="right"), len(cdf) - 1)
            chosen[w, :, a:a + len(rows)] = prior.pairs[w][rows].T
    return chosen


def _run_channel(syms: np.ndarray, starts: np.ndarray, lengths: np.ndarray, uoff: np.ndarray,
                 U: np.ndarray, channel: Channel) -> Tuple[np.ndarray, np.ndarray]:
    """``model.channel.sample_channel`` on many rows at once: row ``r`` is ``syms[starts[r]:starts[r] + lengths[r]]``
    (all ``lengths >= 1``), its bigram ``t`` edited with the uniform ``U[uoff[r] + t - 1]``.  One
    vectorised step per position, over the rows still that long (rows sorted longest first):
    total work linear in the number of symbols.  Returns the surfaces (written where the rows
    are, ``syms``-aligned) and their lengths, each exactly as ``sample_channel`` writes it."""
    phi, r2l = channel.phi, channel.r2l
    out = np.full(len(syms), -1, dtype=np.int64)
    R = len(lengths)
    if R == 0:
        return out, np.zeros(0, dtype=np.int64)
    by_len = np.argsort(-lengths, kind="stable")
    st, ln, uo = starts[by_len], lengths[by_len], uoff[by_len]
    active = np.searchsorted(-ln, -np.arange(int(ln[0])), side="left")  # rows longer than t
    read = (lambda t, a: st[:a] + ln[:a] - 1 - t) if r2l else (lambda t, a: st[:a] + t)
    pending = syms[read(0, R)]
    pos = np.zeros(R, dtype=np.int64)
    for t in range(1, int(ln[0])):
        a = int(active[t])
        b = syms[read(t, a)]
        p = pending[:a]
        cdf = np.cumsum(phi[p, b], axis=1)
        e = np.argmax(U[uo[:a] + t - 1, None] * cdf[:, -1:] < cdf, axis=1)
        wa = WRITES_A[e]
        emit = np.flatnonzero(wa | WRITES_B[e])
        out[st[emit] + pos[emit]] = np.where(wa[emit], p[emit], b[emit])
        pos[emit] += 1
        pending[:a] = np.where(PENDS_B[e], b, p)
    out[st + pos] = pending
    pos += 1
    if r2l:  # each row's written prefix reversed
        idx = np.repeat(st + pos, pos) - 1 - (np.arange(int(pos.sum())) - np.repeat(np.cumsum(pos) - pos, pos))
        dst = np.repeat(st, pos) + (np.arange(int(pos.sum())) - np.repeat(np.cumsum(pos) - pos, pos))
        out[dst] = out[idx].copy()
    lens = np.empty(R, dtype=np.int64)
    lens[by_len] = pos
    return out, lens


def sample_slots(prior: Prior, grammar, channel: Channel, n_samples: int,
                  rng: np.random.Generator) -> List[SlotSamples]:
    """Ancestral samples of every slot's surface string (the same N sentences across slots).

    The random stream and every result are those of the plain algorithm: draw all nodes' pairs
    (``rng.random((N, n))``); then, slot by slot, group the samples by their sequence of puncteme
    ids (groups in lexicographic order), and run the channel on each group's underlying string
    with ``rng.random((group size, len(u) - 1))``; number the distinct surfaces in the order
    they first appear, groups in order and each group's surfaces sorted.  Here the uniforms of a
    run of slots are drawn at once and the channel runs on all their samples together
    (:func:`_run_channel`), so the work is linear in the number of underlying symbols, whatever
    the tree's shape."""
    N = int(n_samples)
    tables = _tables(grammar)
    chosen = draw_pairs(prior, N, rng, len(tables.length))
    out: List[SlotSamples] = []
    n_slots = len(prior.slot_parts)
    i = 0
    while i < n_slots:  # a block of slots, bounded by SAMPLE_BLOCK halves x samples (at least one slot)
        j, halves = i, 0
        while j < n_slots and (j == i or (halves + len(prior.slot_parts[j]) + 1) * N <= SAMPLE_BLOCK):
            halves += len(prior.slot_parts[j]) + 1
            j += 1
        out.extend(_sample_block(prior, chosen, tables, channel, range(i, j), N, rng))
        i = j
    return out


#: "slot"/"sample": a slot where more halves than this meet is sampled on its own, half by half
_WIDE = 16


def _symbols(ids: np.ndarray, tables: _Tables) -> np.ndarray:
    """The symbols of a sequence of puncteme ids, one after the other."""
    lengths = tables.length[ids]
    keep = lengths > 0
    ids, lengths = ids[keep], lengths[keep]
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return tables.sym[np.repeat(tables.start[ids], lengths) + within]


def _wide_slot(parts, is_first: bool, chosen: np.ndarray, tables: _Tables, N: int):
    """One slot of many halves, as the class loop of :func:`_sample_block` does it but reading one
    half at a time (memory ``O(N)`` plus the symbols): each sample's group as a dense code of its
    puncteme-id prefix, refined half by half (so in lexicographic order), its string's length, its
    first uniform, the slot's uniforms, and the strings' symbols (sample after sample)."""
    P = len(tables.length)
    code = np.zeros(N, dtype=np.int64)
    lengths = np.zeros(N, dtype=np.int64)
    ks, js, pids = [], [], []
    halves = ([None] if is_first else []) + list(parts)
    for j, half in enumerate(halves):
        ids = np.full(N, tables.bos, dtype=np.int64) if half is None else chosen[half[0], half[1]].astype(np.int64)
        code = np.unique(code * P + ids, return_inverse=True)[1].ravel()
        here = tables.length[ids]
        lengths += here
        nz = np.flatnonzero(here > 0)
        ks.append(nz)
        js.append(np.full(len(nz), j, dtype=np.int64))
        pids.append(ids[nz])
    draws = np.maximum(lengths - 1, 0)
    order = np.argsort(code, kind="stable")
    off = np.empty(N, dtype=np.int64)
    off[order] = np.cumsum(draws[order]) - draws[order]
    k, j, pid = (np.concatenate(v) for v in (ks, js, pids))
    syms = _symbols(pid[np.lexsort((j, k))], tables)
    return code, lengths, off, int(draws.sum()), syms


def _sample_block(prior: Prior, chosen: np.ndarray, tables: _Tables, channel: Channel,
                  slots: range, N: int, rng: np.random.Generator) -> List[SlotSamples]:
    """The samples of a run of slots (see :func:`sample_slots`), every step vectorised over all of
    them: the slots with the same number of halves are grouped (one sort for all of them), the
    channel runs once, the surfaces are numbered at once (:func:`_number_short`).  Entry
    ``e = b * N + k``: sample ``k`` of the block's slot ``b``."""
    B = len(slots)
    E = B * N
    group = np.empty(E, dtype=np.int64)  # rank of the sample's puncteme-id sequence in its slot
    ulen = np.empty(E, dtype=np.int64)  # length of its underlying string
    uoff = np.empty(E, dtype=np.int64)  # its first uniform, counted from its slot's first
    total = np.zeros(B, dtype=np.int64)  # uniforms per slot
    syms_parts, entry_parts = [], []
    classes: Dict[Tuple[int, bool], List[int]] = {}  # (halves, slot 0?) -> the block's slots
    for b, i in enumerate(slots):
        classes.setdefault((len(prior.slot_parts[i]), i == 0), []).append(b)
    for (halves, is_first), bs in classes.items():
        m = halves + is_first
        bs_arr = np.asarray(bs, dtype=np.int64)
        ent = (bs_arr[:, None] * N + np.arange(N)[None, :]).ravel()  # the class's entries, slot-major
        if m == 0:
            group[ent], ulen[ent], uoff[ent] = 0, 0, 0
            continue
        if m > _WIDE:  # one slot at a time, streaming over its halves
            for b in bs:
                e = slice(b * N, (b + 1) * N)
                group[e], ulen[e], uoff[e], total[b], syms = _wide_slot(prior.slot_parts[slots[b]], is_first, chosen,
                                                                        tables, N)
                syms_parts.append(syms)
                entry_parts.append(b * N + np.flatnonzero(ulen[e] > 0))
            continue
        ws = np.array([[w for w, _ in prior.slot_parts[slots[b]]] for b in bs], dtype=np.int64).reshape(len(bs), -1)
        sd = np.array([[d for _, d in prior.slot_parts[slots[b]]] for b in bs], dtype=np.int64).reshape(len(bs), -1)
        ids = chosen[ws, sd] if ws.shape[1] else np.zeros((len(bs), 0, N), dtype=chosen.dtype)  # (slots, halves, N)
        if is_first:  # slot 0 (alone in its class): '^' first
            ids = np.concatenate([np.full((len(bs), 1, N), tables.bos, dtype=ids.dtype), ids], axis=1)
        # groups: the all-empty sequence (puncteme 0 everywhere) first if present, then the others
        # sorted by slot, then sequence; ties: sample order
        zero = (ids == 0).all(axis=1).ravel()  # (slot, k)
        lengths = tables.length[ids].sum(axis=1).ravel()
        draws = np.maximum(lengths - 1, 0)
        g = np.zeros(len(bs) * N, dtype=np.int64)
        off = np.zeros(len(bs) * N, dtype=np.int64)
        rest = np.flatnonzero(~zero)
        if len(rest):
            slot_key = rest // N
            cols = [ids[:, j, :].ravel()[rest] for j in range(m)]
            o = np.lexsort(tuple(cols[::-1]) + (slot_key,))
            sk = slot_key[o]
            new = np.ones(len(o), dtype=bool)
            new[1:] = sk[1:] != sk[:-1]
            for c in cols:
                new[1:] |= c[o][1:] != c[o][:-1]
            rank = np.cumsum(new) - 1
            lead_at = np.flatnonzero(np.concatenate([[True], sk[1:] != sk[:-1]]))  # each slot's first
            lead = np.repeat(lead_at, np.diff(np.append(lead_at, len(o))))
            has_zero = zero.reshape(len(bs), N).any(axis=1)
            g[rest[o]] = rank - rank[lead] + has_zero[sk]
            ds = draws[rest[o]]  # (the all-empty sequence draws nothing)
            cs = np.cumsum(ds) - ds
            off[rest[o]] = cs - cs[lead]
        group[ent], ulen[ent], uoff[ent] = g, lengths, off
        total[bs_arr] = draws.reshape(len(bs), N).sum(axis=1)
        syms_parts.append(_symbols(ids.transpose(0, 2, 1).ravel(), tables))  # (slot, k, half): in order
        entry_parts.append(ent[lengths > 0])
    # the uniforms of the block, slot after slot; each entry's from its slot's
    base = np.cumsum(total) - total
    U = rng.random(int(total.sum()))
    uoff += np.repeat(base, N)
    rows = np.concatenate(entry_parts) if entry_parts else np.zeros(0, dtype=np.int64)
    syms = np.concatenate(syms_parts) if syms_parts else np.zeros(0, dtype=np.int64)
    starts = np.cumsum(ulen[rows]) - ulen[rows]  # rows' strings lie in syms in this order
    surf, slen = _run_channel(syms, starts, ulen[rows], uoff[rows], U, channel)
    s_start = np.zeros(E, dtype=np.int64)
    s_len = np.zeros(E, dtype=np.int64)
    s_start[rows], s_len[rows] = starts, slen
    if slots[0] == 0:  # strip '^' (entries 0..N-1: every one has a string)
        if not (surf[s_start[:N]] == BOS).all():
            raise AssertionError(Errors.E105)
        s_start[:N] += 1
        s_len[:N] -= 1
    n_sym = int(channel.phi.shape[0])
    longest = s_len.reshape(B, N).max(axis=1)
    short = longest <= _KEY_BITS // n_sym.bit_length()
    out: Dict[int, SlotSamples] = {}
    for b in np.flatnonzero(~short):
        e = slice(b * N, (b + 1) * N)
        r = np.flatnonzero(s_len[e] > 0)
        out[slots[b]] = _number_strings(group[e], r, surf, s_start[e][r], s_len[e][r], N)
    sb = np.flatnonzero(short)
    if len(sb):
        sel = (sb[:, None] * N + np.arange(N)[None, :]).ravel()
        for b, x in zip(sb, _number_short(len(sb), group[sel], s_start[sel], s_len[sel], surf, N, n_sym)):
            out[slots[b]] = x
    return [out[i] for i in slots]


_KEY_BITS = 62


def _number_short(B: int, group: np.ndarray, start: np.ndarray, length: np.ndarray, surf: np.ndarray,
                  N: int, n_sym: int) -> List[SlotSamples]:
    """:func:`_number_strings` for ``B`` slots at once (entry ``b * N + k``: sample ``k`` of slot
    ``b``, its surface ``surf[start:start + length]``), each surface at most
    ``_KEY_BITS // bits(n_sym)`` symbols long and coded as one integer in the same order (digit
    ``j``: symbol ``j`` + 1, 0 past the end).  Only the non-empty surfaces are sorted."""
    bits = n_sym.bit_length()
    width = int(length.max(initial=0))
    full = np.flatnonzero(length > 0)
    st, ln = start[full], length[full]
    code = np.zeros(len(full), dtype=np.int64)
    for j in range(width):
        code = (code << bits) + np.where(ln > j, surf[np.minimum(st + j, max(len(surf) - 1, 0))] + 1, 0)
    slot = full // N
    if bits * width + B.bit_length() <= _KEY_BITS:  # distinct (slot, surface) pairs: one sort key
        key = (slot << (bits * width)) | code
        o = np.argsort(key)
        ko = key[o]
        new = np.ones(len(full), dtype=bool)
        new[1:] = ko[1:] != ko[:-1]
    else:
        o = np.lexsort((code, slot))
        new = np.ones(len(full), dtype=bool)
        new[1:] = (slot[o][1:] != slot[o][:-1]) | (code[o][1:] != code[o][:-1])
    pair = np.empty(len(full), dtype=np.int64)
    pair[o] = np.cumsum(new) - 1
    heads = np.flatnonzero(new)
    # the empty surface: one pair per slot that has it
    empty = (length == 0).reshape(B, N)
    e_slot = np.flatnonzero(empty.any(axis=1))
    e_group = np.where(empty, group.reshape(B, N), np.iinfo(np.int64).max).min(axis=1)[e_slot]
    p_slot = np.concatenate([slot[o][heads], e_slot])
    p_code = np.concatenate([code[o][heads], np.zeros(len(e_slot), dtype=np.int64)])
    p_group = np.concatenate([np.minimum.reduceat(group[full][o], heads) if len(heads) else
                              np.zeros(0, dtype=np.int64), e_group])  # the first group holding it
    # numbered within the slot by where they first appear: (first group, surface)
    o2 = np.lexsort((p_code, p_group, p_slot))
    slot_start = np.searchsorted(p_slot[o2], np.arange(B))
    number = np.empty(len(p_slot), dtype=np.int64)
    number[o2] = np.arange(len(p_slot)) - slot_start[p_slot[o2]]
    e_number = np.zeros(B, dtype=np.int64)
    e_number[e_slot] = number[len(heads):]
    ids = np.repeat(e_number, N).astype(_id_type(N))
    ids[full] = number[pair]
    counts = np.concatenate([np.bincount(pair, minlength=len(heads)), empty.sum(axis=1)[e_slot]])
    codes, which = np.unique(p_code, return_inverse=True)  # the surfaces back, each once
    shifts = np.arange(width - 1, -1, -1, dtype=np.int64) * bits
    decoded = [tuple(v for v in row if v >= 0)
               for row in (((codes[:, None] >> shifts[None, :]) & ((1 << bits) - 1)) - 1).tolist()]
    sizes = np.diff(np.append(slot_start, len(p_slot)))
    strings: List[List[Tuple[int, ...]]] = [[()] * int(k) for k in sizes]
    for b, k, c in zip(p_slot.tolist(), number.tolist(), which.ravel().tolist()):
        strings[b][k] = decoded[c]
    out = []
    for b in range(B):
        mine = o2[slot_start[b]:slot_start[b] + sizes[b]]
        per = np.empty(int(sizes[b]), dtype=np.int64)
        per[number[mine]] = counts[mine]
        out.append(SlotSamples(strings[b], ids[b * N:(b + 1) * N], per))
    return out


def _number_strings(group: np.ndarray, rows: np.ndarray, surf: np.ndarray,
                    starts: np.ndarray, lens: np.ndarray, N: int) -> SlotSamples:
    """One slot's distinct surfaces, numbered in the order they first appear when the samples are
    sorted by (group, surface); samples in ``rows`` have the surfaces ``surf[starts:starts+lens]``,
    the others the empty string."""
    width = max(int(lens.max(initial=0)), 1)
    pad = np.full((N, width), -1, dtype=np.int64)
    if len(rows):
        within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        pad[np.repeat(rows, lens), within] = surf[np.repeat(starts, lens) + within]
    _, first_row, key = np.unique(pad, axis=0, return_index=True, return_inverse=True)  # key: surface rank
    key = key.ravel()
    order = np.lexsort((key, group))  # samples by (group, surface)
    first_pos = np.empty(len(first_row), dtype=np.int64)
    first_pos[key[order[::-1]]] = np.arange(N - 1, -1, -1)  # the earliest position of each surface
    number = np.empty(len(first_pos), dtype=np.int64)
    number[np.argsort(first_pos, kind="stable")] = np.arange(len(first_pos))
    ids = number[key].astype(_id_type(N))
    strings: List[Tuple[int, ...]] = [()] * len(first_pos)
    for r, k in enumerate(first_row):
        row = pad[k]
        strings[number[r]] = tuple(int(v) for v in row[row >= 0])
    return SlotSamples(strings, ids, np.bincount(ids, minlength=len(strings)))


def pool_samples(per_tree: Sequence[List[SlotSamples]]) -> List[SlotSamples]:
    """Per slot, the samples of every tree in one table (strings merged, tree 0's first)."""
    if len(per_tree) == 1:
        return list(per_tree[0])
    out: List[SlotSamples] = []
    for slot in zip(*per_tree):
        index: Dict[Tuple[int, ...], int] = {}
        strings: List[Tuple[int, ...]] = []
        ids = []
        for s in slot:
            for x in s.strings:
                if x not in index:
                    index[x] = len(strings)
                    strings.append(x)
            ids.append(np.array([index[x] for x in s.strings], dtype=np.int64)[s.ids])
        all_ids = np.concatenate(ids)
        out.append(SlotSamples(strings, all_ids, np.bincount(all_ids, minlength=len(strings))))
    return out


def allocation(n_samples: int, k: int, weights: Optional[Sequence[float]] = None) -> List[int]:
    """Stratified draws of a uniform mixture of ``k`` trees: ``n_samples`` split as evenly as
    possible, the first trees taking the remainder; with ``weights`` (>= 0, not all 0), in
    proportion to them (largest remainders, ties to the first trees)."""
    if weights is None:
        q, r = divmod(int(n_samples), k)
        return [q + (j < r) for j in range(k)]
    w = np.asarray(weights, dtype=np.float64)
    share = int(n_samples) * w / w.sum()
    out = np.floor(share).astype(np.int64)
    rest = int(n_samples) - int(out.sum())
    out[np.argsort(-(share - out), kind="stable")[:rest]] += 1
    return [int(v) for v in out]
