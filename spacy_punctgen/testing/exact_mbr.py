"""The NumPy reference of the ``"marginal"`` decoder (:mod:`spacy_punctgen.decode.marginal`):
per-slot MBR under the exact slot marginals ``p(x_i | T)``, computed slot by slot in Python and
NumPy.  The compiled decoder is tested against it (tests/decode/test_exact_compiled.py and
others); library code never uses it.  (It was restoration's ``"exact"`` method, the Python twin
of ``"marginal"`` with the same choices.)

The nodes that contribute to one slot are distinct, hence independent, so ``p(u_i)`` is a
product of per-node marginals pushed through the channel.  It is enumerated, dropping partial
strings below the pruning threshold and keeping at most ``EXACT_BEAM`` of them: exact on short
slots, a close approximation where many constituents meet at one slot.  The states are arrays (a
surface is its length, three hashes and a back-pointer), rescaled where many halves drain the
mass (``EXACT_RESCALE``), and on a slot where more than ``EXACT_WIDE`` halves meet each half
expands at most ``EXACT_EXPAND`` products.  The settings are the compiled decoder's.
"""
from __future__ import annotations

import threading
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.decode.marginal import (EXACT_BEAM, EXACT_CANDIDATES, EXACT_EXPAND, EXACT_PRUNE, EXACT_RESCALE,
                                            EXACT_SUPPORT_MIN, EXACT_WIDE, RESTORE_PRUNE)
from spacy_punctgen.decode.priors import Channel, Prior, mixture_priors
from spacy_punctgen.decode.risk import SlotChoice, Surface, edit_matrix, pair_distances, risk_weights, check_empty_weight
from spacy_punctgen.decode.sample_choice import PAIR_BLOCK, SLOT_WORK
from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.dp import BOS
from spacy_punctgen.model.channel import State, channel_step

_State = State

#: surfaces are told apart by their length and three polynomial hashes (mod these primes, base
#: _HASH_BASE + symbol): two different strings collide with probability below (length / 2^31)^3
_HASH_MOD = (2147483629, 2147483587, 2147483579)
_HASH_BASE = (1000003, 998244353 % 2147483579, 65599)
_MODS = np.array(_HASH_MOD, dtype=np.int64)


class _Transitions:
    """What the channel does to one puncteme read from a given pending symbol: from state
    ``(a, ())``, reading puncteme ``k`` (reversed for R2L; ``k = P``: ``(^,)``) ends in pending
    ``a'`` having written ``w``, with probability ``q`` (paths merged as :func:`channel_step`
    merges them).  Each ``(a, k)`` is worked out on first use; the table is shared by every decode
    call with the same channel and punctemes (:func:`transitions`)."""

    def __init__(self, seqs: List[Tuple[int, ...]], phi: np.ndarray):
        self.seqs, self.phi, self.P = seqs, phi, len(seqs)
        S = int(phi.shape[0])
        self.start = np.full((S + 1, self.P), -1, dtype=np.int64)  # row a + 1 (a = -1: nothing pending)
        self.count = np.zeros((S + 1, self.P), dtype=np.int64)
        self.w_id: Dict[Tuple[int, ...], int] = {(): 0}
        self.w_tuples: List[Tuple[int, ...]] = [()]
        self.size = 0  # rows in use of wid / pend / q (grown by doubling)
        self.wid = np.zeros(1024, dtype=np.int64)
        self.pend = np.zeros(1024, dtype=np.int64)
        self.q = np.zeros(1024)
        self.w_len = np.zeros(1, dtype=np.int64)
        self.w_hash = np.zeros((1, 3), dtype=np.int64)
        self.pow = np.ones((1, 3), dtype=np.int64)
        self.lock = threading.Lock()

    def need(self, a: np.ndarray, k: np.ndarray) -> None:
        """Make sure every pair ``(a[j], k[j])`` is in the table.  Safe with other threads: writers
        take the lock, and a pair's ``start`` (the flag readers test) is set only after its rows,
        its count and the written strings' tables are in place; arrays only grow, by replacement."""
        if not (self.start[a + 1, k] < 0).any():
            return
        with self.lock:
            missing = self.start[a + 1, k] < 0
            pairs = sorted(set(zip(a[missing].tolist(), k[missing].tolist())))
            rows: List[Tuple[int, int, float]] = []
            spans = []
            n_w = len(self.w_tuples)
            for aa, kk in pairs:
                states: Dict[_State, float] = {(aa, ()): 1.0}
                for b in self.seqs[kk]:
                    states = channel_step(states, b, self.phi)
                first = len(rows)
                for (a2, w), q in states.items():
                    if w not in self.w_id:
                        self.w_id[w] = len(self.w_tuples)
                        self.w_tuples.append(w)
                    rows.append((self.w_id[w], a2, q))
                spans.append((first, len(rows) - first))
            if len(self.w_tuples) > n_w:  # the new written strings: lengths and hashes
                fresh = self.w_tuples[n_w:]
                hashes = np.zeros((len(fresh), 3), dtype=np.int64)
                for j, (mod, base) in enumerate(zip(_HASH_MOD, _HASH_BASE)):
                    for t, w in enumerate(fresh):
                        h = 0
                        for sym in w:
                            h = (h * base + sym + 1) % mod
                        hashes[t, j] = h
                w_len = np.concatenate([self.w_len, [len(w) for w in fresh]]).astype(np.int64)
                pw = self.pow
                while len(pw) <= int(w_len.max()):
                    pw = np.vstack([pw, pw[-1] * np.array(_HASH_BASE, dtype=np.int64) % _MODS])
                self.pow, self.w_hash, self.w_len = pw, np.concatenate([self.w_hash, hashes]), w_len
            end = self.size + len(rows)
            wid, pend, q = self.wid, self.pend, self.q
            if end > len(q):
                cap = max(end, 2 * len(q))
                wid, pend, q = (np.concatenate([x, np.zeros(cap - len(x), dtype=x.dtype)]) for x in (wid, pend, q))
            wid[self.size:end] = [r[0] for r in rows]
            pend[self.size:end] = [r[1] for r in rows]
            q[self.size:end] = [r[2] for r in rows]
            self.wid, self.pend, self.q = wid, pend, q
            for (aa, kk), (first, count) in zip(pairs, spans):
                self.count[aa + 1, kk] = count
                self.start[aa + 1, kk] = self.size + first  # last: the pair is ready
            self.size = end


_TRANSITIONS: Dict[Tuple, _Transitions] = {}  # a few recent channels (see transitions)
_TRANSITIONS_LOCK = threading.Lock()


def transitions(grammar, channel: Channel) -> _Transitions:
    """The transition table of this channel and these punctemes, shared across decode calls (a
    component restores one Doc per call) and threads, keyed by a digest of the channel's
    probabilities."""
    import hashlib

    trans = channel.cache.get("trans")
    if trans is not None:
        return trans
    seqs = [tuple(p[::-1]) if channel.r2l else tuple(p) for p in grammar.punctemes] + [(BOS,)]
    phi = np.ascontiguousarray(channel.phi, dtype=np.float64)
    key = (hashlib.blake2b(phi.tobytes(), digest_size=16).hexdigest(), phi.shape, tuple(seqs))
    with _TRANSITIONS_LOCK:
        trans = _TRANSITIONS.pop(key, None) or _Transitions(seqs, phi)
        _TRANSITIONS[key] = trans  # most recent last
        while len(_TRANSITIONS) > 4:
            del _TRANSITIONS[next(iter(_TRANSITIONS))]
    channel.cache["trans"] = trans
    return trans


_ONE_KEY = 1 << 12  # from this many candidates on, one mixed 64-bit key is sorted instead of several


def _mix(keys: Sequence[np.ndarray]) -> np.ndarray:
    """One 64-bit key of several (a splitmix64-style mix; equal inputs, equal keys; different ones
    collide with probability about 2^-64 per pair)."""
    with np.errstate(over="ignore"):
        h = np.zeros(len(keys[0]), dtype=np.uint64)
        for k in keys:
            h = (h ^ k.astype(np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
            h ^= h >> np.uint64(31)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(29)
    return h


def _groups(keys: Sequence[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """Sort by ``keys`` (the last the primary); returns the order and where each run of equal
    keys starts in it."""
    o = np.lexsort(tuple(keys))
    new = np.zeros(len(o), dtype=bool)
    new[0] = True
    for k in keys:
        ko = k[o]
        new[1:] |= ko[1:] != ko[:-1]
    return o, np.flatnonzero(new)


#: "exact": a half's candidate states are expanded and merged in chunks of about this many
EXACT_CHUNK = 1 << 16


def _state_keys(c_h: np.ndarray, c_len: np.ndarray, c_a: np.ndarray, trans: _Transitions) -> List[np.ndarray]:
    """A state is (pending, surface): the surface as its length and hashes, packed in two keys."""
    if c_len.max(initial=0) < (1 << 20) and len(trans.start) < (1 << 11):
        return [(c_h[:, 0] << 31) | c_h[:, 1], (c_h[:, 2] << 31) | (c_len << 11) | (c_a + 1)]
    return [c_h[:, 0], c_h[:, 1], c_h[:, 2], c_len, c_a]


def _expand_chunk(si, ki, pv, k_abs, cnt, made0: int, pend, slen, hsh, trans: _Transitions):
    """The states that products ``(state si, puncteme k)`` (valued ``pv``, sorted by puncteme,
    then state) lead to, merged within each puncteme's read: parent, written id, pending, length,
    hashes, puncteme, probability and the rank (from ``made0``) at which the plain algorithm
    would first create each."""
    start = trans.start[pend[si] + 1, k_abs]
    c_prod = np.repeat(np.arange(len(pv)), cnt)
    within = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    idx = np.repeat(start, cnt) + within
    c_s = si[c_prod]
    c_w, c_a = trans.wid[idx], trans.pend[idx]
    c_v = pv[c_prod] * trans.q[idx]
    wl = trans.w_len[c_w]
    c_len = slen[c_s] + wl
    c_h = hsh[c_s]
    wrote = np.flatnonzero(wl > 0)
    if len(wrote):
        c_h[wrote] = (c_h[wrote] * trans.pow[wl[wrote]] + trans.w_hash[c_w[wrote]]) % _MODS
    c_k = ki[c_prod]
    # the candidates come in the order the plain algorithm (dicts) creates states: by puncteme,
    # then state, then channel path; a merged state sits where it was first made (ties go by it)
    made = np.arange(made0, made0 + len(c_v))
    keys = _state_keys(c_h, c_len, c_a, trans) + [c_k]
    o, heads = _groups(keys) if len(c_v) < _ONE_KEY else _groups([_mix(keys)])
    rep = o[heads]
    return (c_s[rep], c_w[rep], c_a[rep], c_len[rep], c_h[rep], c_k[rep], np.add.reduceat(c_v[o], heads),
            np.minimum.reduceat(made[o], heads))


def slot_marginal(prior: Prior, i: int, grammar, channel: Channel, prune: Optional[float] = None
                   ) -> Tuple[Dict[Tuple[int, ...], float], float]:
    """``p(x_i | T)`` (symbol ids, '^' stripped), as ``(probabilities / scale, log scale)``.

    The channel reads the slot's puncteme sequence one node half at a time, each a mixture over
    its marginal; states are (pending symbol, surface so far), equal states merge; after each
    puncteme's read, states below ``prune`` (None: ``EXACT_PRUNE``) are dropped, after each half at
    most ``EXACT_BEAM`` kept.  So this is exact up to a negligible mass where few constituents meet.
    Where hundreds meet (a deep chain) the surfaces are long and many: the states are then kept
    at a relative scale (``EXACT_RESCALE``), a half expands at most ``EXACT_EXPAND`` products, and
    the result is the beam's approximation; every step is vectorised over the states, and a
    surface is its length and hashes plus a back-pointer, so a half costs the same however long
    the surfaces are (linear in the number of halves)."""
    trans = transitions(grammar, channel)
    P = len(grammar.punctemes)
    prune = EXACT_PRUNE if prune is None else prune
    parts = list(prior.slot_parts[i])
    r2l = channel.r2l
    if r2l:  # the machine reads u_i reversed: last half first, each puncteme reversed, '^' last
        parts = parts[::-1]
    def reads():  # each half's punctemes and their marginal probabilities, one half at a time
        for w, side in parts:
            marg = np.bincount(prior.pairs[w][:, side], weights=prior.probs[w], minlength=P)
            k = np.flatnonzero(marg > 0)
            yield k, marg[k]
        if i == 0 and r2l:
            yield np.array([P]), np.array([1.0])
    pend = np.array([BOS if i == 0 and not r2l else -1], dtype=np.int64)
    slen = np.zeros(1, dtype=np.int64)
    hsh = np.zeros((1, 3), dtype=np.int64)
    prob = np.ones(1)
    history: List[Tuple[np.ndarray, np.ndarray]] = []  # per read: each state's parent and written id
    log_scale = 0.0
    wide = len(parts) > EXACT_WIDE
    for ks, wk in reads():
        val = prob[:, None] * wk[None, :]
        ki, si = np.nonzero(val.T >= prune)  # by puncteme, then state
        pv = val[si, ki]
        if wide and len(pv) > EXACT_EXPAND:
            top = np.argpartition(-pv, EXACT_EXPAND - 1)[:EXACT_EXPAND]
            top.sort()
            si, ki, pv = si[top], ki[top], pv[top]
        if len(pv) == 0:  # nothing above the threshold: go on from the best product
            si, ki = np.unravel_index(np.argmax(val), val.shape)
            si, ki, pv = np.atleast_1d(si), np.atleast_1d(ki), np.atleast_1d(val[si, ki])
        k_abs = ks[ki]
        trans.need(pend[si], k_abs)
        cnt = trans.count[pend[si] + 1, k_abs]
        # expand in chunks of whole punctemes (at most about EXACT_CHUNK candidates each: bounded
        # memory), merging and pruning within each puncteme's read
        ends = np.cumsum(cnt)
        k_end = np.append(np.flatnonzero(ki[1:] != ki[:-1]) + 1, len(ki))  # where each puncteme's products end
        cuts, last, base = [0], 0, 0
        for e in k_end.tolist():
            if ends[e - 1] - base > EXACT_CHUNK and cuts[-1] < last:
                cuts.append(last)
                base = int(ends[last - 1])
            last = e
        cuts.append(len(ki))
        parts_kept = [_expand_chunk(si[a:b], ki[a:b], pv[a:b], k_abs[a:b], cnt[a:b], int(ends[a - 1]) if a else 0,
                                    pend, slen, hsh, trans)
                      for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
        c_s, c_w, c_a, c_len, c_h, c_k, v, first = (np.concatenate(x) for x in zip(*parts_kept))
        keep = v >= prune
        if not keep.any():
            keep[np.argmax(v)] = True
        by_k = np.flatnonzero(keep)[np.argsort(c_k[keep], kind="stable")]  # summed across punctemes in their order
        c_s, c_w, c_a, c_len, c_h, v, first = (x[by_k] for x in (c_s, c_w, c_a, c_len, c_h, v, first))
        state = _state_keys(c_h, c_len, c_a, trans)
        # ... then across punctemes
        o2, heads2 = _groups(state)
        v2 = np.add.reduceat(v[o2], heads2)
        first2 = np.minimum.reduceat(first[o2], heads2)
        rep2 = o2[heads2]
        # the next states, in the plain algorithm's order: the EXACT_BEAM most probable (ties: first
        # made) by probability, or all in the order they were made
        order = np.lexsort((first2, -v2))[:EXACT_BEAM] if len(v2) > EXACT_BEAM else np.argsort(first2)
        rep2, v2 = rep2[order], v2[order]
        history.append((c_s[rep2].astype(np.int32), c_w[rep2].astype(np.int32)))
        pend, slen, hsh, prob = c_a[rep2], c_len[rep2], c_h[rep2], v2
        total = float(prob.sum())
        if total < EXACT_RESCALE:
            prob = prob / total
            log_scale += np.log(total)
    # the surfaces of the final states, from the back-pointers
    pieces: List[List[int]] = [[] for _ in range(len(prob))]
    cur = np.arange(len(prob))
    for parent, wid in reversed(history):
        w_here = wid[cur]
        for r in np.flatnonzero(trans.w_len[w_here] > 0):
            pieces[r].append(int(w_here[r]))
        cur = parent[cur]
    xs: Dict[Tuple[int, ...], float] = {}
    for r, (a, p) in enumerate(zip(pend.tolist(), prob.tolist())):
        x = tuple(t for wid in reversed(pieces[r]) for t in trans.w_tuples[wid])
        if a >= 0:
            x = x + (a,)
        if r2l:
            x = x[::-1]
        xs[x] = xs.get(x, 0.0) + p
    if i == 0:
        if any(not x or x[0] != BOS for x in xs):
            raise AssertionError(Errors.E105)
        xs = {x[1:]: p for x, p in xs.items()}
    return xs, log_scale


def mixture_marginal(priors: Sequence[Prior], i: int, grammar, channel: Channel,
                      prune: Optional[float] = None) -> Tuple[Dict[Tuple[int, ...], float], float]:
    """``(1/K) Σ_k p(x_i | T_k)``: slot ``i``'s marginal under the uniform mixture of the trees,
    as ``(probabilities / scale, log scale)`` (see :func:`slot_marginal`)."""
    if len(priors) == 1:
        return slot_marginal(priors[0], i, grammar, channel, prune)
    each = [slot_marginal(prior, i, grammar, channel, prune) for prior in priors]
    top = max(ls for _, ls in each)
    mix: Dict[Tuple[int, ...], float] = {}
    for marg, ls in each:
        f = float(np.exp(ls - top))  # 1.0 unless a tree's slot needed rescaling
        for x, p in marg.items():
            mix[x] = mix.get(x, 0.0) + p * f / len(priors)
    return mix, top


def exact_choice(marg: Dict[Tuple[int, ...], float], log_scale: float = 0.0) -> Tuple[Tuple[int, ...], float]:
    """Per-slot MBR over the (scaled) marginal; the chosen string and its probability."""
    return exact_choices([(marg, log_scale)])[0]


def exact_choices(margs: Sequence[Tuple[Dict[Tuple[int, ...], float], float]], empty_weight: float = 1.0
                   ) -> List[Tuple[Tuple[int, ...], float]]:
    """:func:`exact_choice` of many slots: the ``EXACT_CANDIDATES`` most probable strings against
    the (at most ``EXACT_BEAM``) support strings at least ``EXACT_SUPPORT_MIN`` probable, the edit
    distances of all slots computed together (:func:`pair_distances`), each slot's risks then
    ``distances @ weights`` as :func:`mbr_index` computes them."""
    jobs = []
    for marg, log_scale in margs:
        if not marg:
            raise ValueError(Errors.E124)
        ranked = sorted(marg, key=lambda x: (-marg[x], x))
        support = [x for x in ranked[:EXACT_BEAM] if marg[x] >= EXACT_SUPPORT_MIN] or ranked[:1]
        cands = ranked[:EXACT_CANDIDATES]
        longest = max(map(len, cands + support))
        per_pair = (longest + 1) * max(1, -(-longest // 64))
        if len(cands) * len(support) * per_pair > SLOT_WORK:  # long strings (a deep slot): fewer, the likeliest
            support = support[:max(1, SLOT_WORK // (len(cands) * per_pair))]
            cands = cands[:max(1, SLOT_WORK // (len(support) * per_pair))]
        jobs.append((ranked, cands, support))
    dist: Dict[int, np.ndarray] = {}
    batch = [q for q, (_, c, sup) in enumerate(jobs)
             if len(c) > 1 and max(map(len, c)) <= 64 and max(map(len, sup)) <= 64]
    for q in set(range(len(jobs))) - set(batch):
        _, c, sup = jobs[q]
        if len(c) > 1:
            dist[q] = edit_matrix(c, sup)
    runs, run, pairs = [], [], 0  # runs of slots of about PAIR_BLOCK pairs
    for q in batch:
        run.append(q)
        pairs += len(jobs[q][1]) * len(jobs[q][2])
        if pairs >= PAIR_BLOCK:
            runs.append(run)
            run, pairs = [], 0
    runs += [run] if run else []
    for part in runs:
        strings, pa, pb, off = [], [], [], 0
        for q in part:
            _, c, sup = jobs[q]
            strings.extend(sup)  # the candidates are the first of the ranked support, or among it
            where = {x: j for j, x in enumerate(sup)}
            extra = [x for x in c if x not in where]
            for x in extra:
                where[x] = len(sup) + extra.index(x)
            strings.extend(extra)
            ci = np.array([where[x] for x in c], dtype=np.int64) + off
            pa.append(np.repeat(ci, len(sup)))
            pb.append(np.tile(off + np.arange(len(sup)), len(c)))
            off += len(sup) + len(extra)
        lens = np.array([len(x) for x in strings], dtype=np.int64)
        pad = np.full((len(strings), max(1, int(lens.max(initial=0)))), -1, dtype=np.int64)
        if lens.sum():
            pad[np.repeat(np.arange(len(strings)), lens),
                np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)] = [t for x in strings for t in x]
        d = pair_distances(pad, lens, np.concatenate(pa), np.concatenate(pb))
        r0 = 0
        for q in part:
            _, c, sup = jobs[q]
            dist[q] = d[r0:r0 + len(c) * len(sup)].reshape(len(c), len(sup))
            r0 += len(c) * len(sup)
    out = []
    for q, ((marg, log_scale), (ranked, c, sup)) in enumerate(zip(margs, jobs)):
        if len(c) == 1:
            best = c[0]
        else:
            risk = dist[q].astype(np.float64) @ np.asarray(risk_weights(marg, sup, empty_weight), dtype=np.float64)
            best = c[int(np.argmin(risk))]
        out.append((best, marg[best] * float(np.exp(log_scale))))
    return out


def _names(model, x: Tuple[int, ...]) -> Surface:
    sym = model.inventory.symbols
    return tuple(sym[s] for s in x)


def restore_exact(model, tree_sets: Sequence[Sequence[PunctSentence]], empty_weight: float = 1.0
                  ) -> List[List[SlotChoice]]:
    """Per sentence, per slot: the reference's choice under the uniform mixture of the sentence's
    trees ``tree_sets[k]`` (what ``mbr.restore_mixtures(..., method="marginal")`` chooses), the
    marginals of a run of slots at a time (bounded memory)."""
    empty_weight = check_empty_weight(empty_weight)
    prior_sets, channel = mixture_priors(model, tree_sets)
    out = []
    for priors in prior_sets:
        n, choices = priors[0].n, []
        for a in range(0, n + 1, 256):
            choices += exact_choices([mixture_marginal(priors, i, model.grammar, channel, RESTORE_PRUNE)
                                      for i in range(a, min(n + 1, a + 256))], empty_weight)
        out.append([SlotChoice(_names(model, x), float(p)) for x, p in choices])
    return out


def mixture_slot_marginals(model, trees: Sequence[PunctSentence]) -> List[Dict[Surface, float]]:
    """``(1/K) Σ_k p(x_i | T_k)`` for every slot (strings below ``EXACT_PRUNE`` dropped): the
    reference of ``mbr.mixture_slot_marginals``."""
    (priors,), channel = mixture_priors(model, [trees])
    out = []
    for i in range(priors[0].n + 1):
        marg, log_scale = mixture_marginal(priors, i, model.grammar, channel)
        scale = float(np.exp(log_scale))  # 1.0 unless the slot needed rescaling
        out.append({_names(model, x): p * scale for x, p in marg.items()})
    return out


def slot_marginals(model, sentence: PunctSentence) -> List[Dict[Surface, float]]:
    """The reference of ``mbr.slot_marginals``: :func:`mixture_slot_marginals` of one tree."""
    return mixture_slot_marginals(model, [sentence])
