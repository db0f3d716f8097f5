"""Punctuation restoration: choose surface punctuation ``x̂`` for an unpunctuated tree ``T``
by minimum Bayes risk under ``p(x | T)`` (paper §6.1, docs/model.md §5 "Restoration").

The loss is the token edit distance summed over slots.  :func:`restore_mixtures` decodes from
several trees of one sentence at once (their uniform mixture, paper footnote 20).  Three decoders:

* ``"sample"`` -- the paper's: draw ``n_samples`` sentences ``x ~ p(x|T)`` by ancestral
  sampling and return the *sampled sentence* with the least total expected loss
  against all samples.
* ``"slot"`` -- the loss decomposes over slots, so choose, per slot, the sampled
  string with the least expected edit distance to that slot's samples.  Never a
  higher empirical risk than ``"sample"``, from the same draws.
* ``"exact"`` -- per-slot MBR under the exact slot marginals ``p(x_i | T)``.

Why sampling is cheap: without the ``inner`` template ``p(T'|T)`` factorises over
nodes (each node draws its ``(l, r)`` from ATTACH's softmax over ``W_d``), the
underlying string ``u_i`` of a slot is the concatenation of the punctemes of the
constituents ending / starting there, and the channel rewrites each ``u_i``
independently.  We draw every node's pair for all samples at once, group the
samples of a slot by their sequence of punctemes, and run the channel on each group's
underlying string, one edit draw per bigram (:func:`_sample_slots` spells out the random
stream, which fixes every result).  For ``"exact"``, the nodes that contribute to one slot are
distinct, hence independent, so ``p(u_i)`` is a product of per-node marginals
pushed through the channel.  It is enumerated, dropping partial strings below
``EXACT_PRUNE`` and keeping at most ``EXACT_BEAM`` of them: exact on short slots,
a close approximation where many constituents meet at one slot.

Deep trees (a chain of thousands of words puts thousands of constituents into one slot): every
step is linear in the sentence's length with bounded memory, whatever the tree's shape.  The
sampler works on blocks of slots at once (one sort per block, the channel run once over all their
samples, :func:`_run_channel`), a slot with many halves half by half (:func:`_wide_slot`), the
risks of all slots together (:func:`_batch_risks`, closed forms for strings of one symbol, a
lower bound that skips candidates that cannot win), each slot's scoring bounded by ``SLOT_WORK``.
The exact decoder keeps its states as arrays (a surface is its length, three hashes and a
back-pointer), rescales them where many halves drain the mass (``EXACT_RESCALE``: before, every
state of slot 0 fell below ``EXACT_PRUNE`` on a 120-word chain and the decoder failed), and on a
slot where more than ``EXACT_WIDE`` halves meet expands at most ``EXACT_EXPAND`` products per half.
On ordinary sentences the results are those of the plain algorithms (the same strings and
frequencies; exact probabilities to 1e-15).  Such a slot gets many marks because the model gives
each of its hundreds of constituents a fair chance of one (e.g. a comma before a ``conj``): the
decoded string is as long as the model expects the slot's string to be (tests/decode/test_deep_trees.py).

Models trained with the ``inner`` template condition a node's pair on the surface
punctuation inside its span; their prior does not factorise, and these decoders
refuse them with a ValueError.
"""
from __future__ import annotations

import math
import numbers
import threading
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.trees import tree_structure
from spacy_punctgen.data.underlying import slot_parts
from spacy_punctgen.decode.exact import marginal_choices
from spacy_punctgen.inference.dp import BOS
from spacy_punctgen.inference._train import segment_sums
from spacy_punctgen.model.channel import _PENDS_B, _WRITES_A, _WRITES_B, State, channel_step
from spacy_punctgen.model.features import SURFACE_TEMPLATES
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors

METHODS = ("marginal", "slot", "sample", "exact")
#: "slot"/"sample": the most samples a call may draw (the public entry points check ``n_samples``
#: against it, E106/E126, and ``seed``, E127; the component's and the command line's settings
#: should use it too).  Time and memory grow in proportion: about
#: 1 MB and a few milliseconds per 1,000 samples and word (a 5,000-word sentence at 20,000 samples
#: holds about 0.4 GB of samples); 20,000 is what the tests' distribution checks draw
MAX_SAMPLES = 20_000
#: "exact": partial underlying strings (and channel outputs) less probable than this are dropped
#: (slot marginals, :func:`slot_marginals`, and correction)
EXACT_PRUNE = 1e-7
#: ... and where restoration *chooses* a string (the ``"marginal"`` and ``"exact"`` decoders, the
#: weighted mixtures of several trees): the choices need only the strings that can win, and
#: on EWT and zh_gsd dev 1e-5 chose as 1e-7 did (0 of 10,821 zh slots and of 24,025 EWT slots
#: changed with the sentence models; 3 EWT slots with the stream model, the same 1,925 edits)
#: at 2.7-3.8 times the decoding speed (docs/decoding.md, "How much to prune")
RESTORE_PRUNE = 1e-5
#: "exact": at most this many partial underlying strings per slot (the most probable) are kept
EXACT_BEAM = 300
#: "exact": MBR candidates per slot (the most probable strings) ...
EXACT_CANDIDATES = 32
#: ... scored against the (at most EXACT_BEAM) support strings at least this probable (where the
#: strings are so long that candidates x support would cost more than SLOT_WORK, only the most
#: probable of each: a deep slot)
EXACT_SUPPORT_MIN = 1e-9
#: edit distances: pairs per block × 64-bit words per pair, bounding the DP state (~8 arrays of this many words)
EDIT_BLOCK_WORDS = 1 << 17
#: "slot"/"sample": most work one slot's risks may take, in units of candidate × distinct string ×
#: (longest string + 1) × ⌈longest / 64⌉ (about 30 ns each); slots beyond it score fewer candidates
SLOT_WORK = 1 << 23
#: "slot"/"sample": at most about this many (slot half or node) x sample entries are sampled at once
SAMPLE_BLOCK = 1 << 19
_CHUNK = 256  # sentences per ATTACH forward batch

Surface = Tuple[str, ...]


class SlotChoice(NamedTuple):
    """The decoded string of one slot and the model's probability of it at that slot
    (exact for ``"exact"``, the sample frequency otherwise)."""

    surface: Tuple[str, ...]
    prob: float


def _pad(strings: Sequence[Sequence[int]], lengths: np.ndarray, fill: int) -> np.ndarray:
    out = np.full((len(strings), max(int(lengths.max(initial=0)), 1)), fill, dtype=np.int64)
    for r, x in enumerate(strings):
        out[r, :len(x)] = x
    return out


def _myers(a: np.ndarray, la: np.ndarray, b: np.ndarray, lb: np.ndarray, n_sym: int) -> np.ndarray:
    """Levenshtein distances between the rows of ``a`` and of ``b`` (symbols ``0..n_sym-1``,
    lengths ``la``/``lb``, padded with ``n_sym``): Myers' bit-parallel algorithm (J. ACM 1999,
    block form, global alignment), each DP column of a pair in ``⌈max(la)/64⌉`` machine words,
    vectorised over all pairs."""
    r, c, W = len(la), len(lb), max(1, -(-int(la.max()) // 64))
    one, top = np.uint64(1), np.uint64(63)
    peq = np.zeros((r, n_sym + 1, W), dtype=np.uint64)  # bit p of peq[row, s]: a[row, p] == s
    rows = np.arange(r)
    for p in range(int(la.max())):
        on = rows[la > p]
        peq[on, a[on, p], p // 64] |= one << np.uint64(p % 64)
    pv = np.full((r, c, W), ~np.uint64(0), dtype=np.uint64)  # vertical deltas +1 (column 0: D[i][0] = i)
    mv = np.zeros((r, c, W), dtype=np.uint64)
    score = np.repeat(la[:, None], c, axis=1)  # D[la][t], tracked along the last row
    last = np.maximum(la - 1, 0)
    last_word, last_bit = last // 64, (last % 64).astype(np.uint64)[:, None]
    for t in range(int(lb.max(initial=0))):
        live = (lb > t)[None, :]
        eq_t = peq[:, b[:, t], :]
        h_p = np.ones((r, c), dtype=np.uint64)  # row 0: D[0][t] = t
        h_m = np.zeros((r, c), dtype=np.uint64)
        for w in range(W):
            p, m = pv[..., w], mv[..., w]
            xv = eq_t[..., w] | m
            eq = eq_t[..., w] | h_m
            xh = (((eq & p) + p) ^ p) | eq
            ph = m | ~(xh | p)
            mh = p & xh
            here = (last_word == w)[:, None] & live
            score += here * (((ph >> last_bit) & one).astype(np.int64) - ((mh >> last_bit) & one).astype(np.int64))
            out_p, out_m = ph >> top, mh >> top
            ph = (ph << one) | h_p
            mh = (mh << one) | h_m
            pv[..., w] = mh | ~(xv | ph)
            mv[..., w] = ph & xv
            h_p, h_m = out_p, out_m
    return np.where(la[:, None] == 0, lb[None, :], score)


def edit_matrix(A: Sequence[Sequence], B: Sequence[Sequence]) -> np.ndarray:
    """Token edit distances between every string of ``A`` and every string of ``B`` (int64
    ``(|A|, |B|)``), equal to :func:`metrics.edit_distance`'s.  Time ``O(|A|·|B|·max|b|·⌈max|a|/64⌉)``;
    memory bounded: pairs are taken in blocks of at most ``EDIT_BLOCK_WORDS`` machine words of state."""
    m, k = len(A), len(B)
    out = np.empty((m, k), dtype=np.int64)
    if m == 0 or k == 0:
        return out
    syms: Dict[object, int] = {}
    ea = [[syms.setdefault(t, len(syms)) for t in x] for x in A]
    eb = [[syms.setdefault(t, len(syms)) for t in x] for x in B]
    la = np.array([len(x) for x in ea], dtype=np.int64)
    lb = np.array([len(x) for x in eb], dtype=np.int64)
    a, b = _pad(ea, la, len(syms)), _pad(eb, lb, len(syms))
    order = np.argsort(la, kind="stable")  # blocks of rows with one word count
    words = np.maximum(1, -(-la[order] // 64))
    r0 = 0
    while r0 < m:
        W = int(words[r0])
        cols = min(k, max(1, EDIT_BLOCK_WORDS // W))
        rows = min(max(1, EDIT_BLOCK_WORDS // (cols * W)), int(np.searchsorted(words, W, side="right")) - r0)
        sel = order[r0:r0 + rows]
        for c0 in range(0, k, cols):
            out[sel[:, None], np.arange(c0, min(k, c0 + cols))[None, :]] = _myers(
                a[sel], la[sel], b[c0:c0 + cols], lb[c0:c0 + cols], len(syms))
        r0 += rows
    return out


def _myers_pairs(a: np.ndarray, la: np.ndarray, b: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Levenshtein distances of the row pairs ``(a[p], b[p])`` (int64, lengths ``la``/``lb`` at
    most 64, padding never equal to a symbol): Myers' algorithm in one machine word per pair,
    vectorised over the pairs."""
    P = len(la)
    one = np.uint64(1)
    bit = one << np.arange(a.shape[1], dtype=np.uint64)
    pv = np.full(P, ~np.uint64(0), dtype=np.uint64)
    mv = np.zeros(P, dtype=np.uint64)
    score = la.astype(np.int64)
    last_bit = np.maximum(la - 1, 0).astype(np.uint64)
    for t in range(int(lb.max(initial=0))):
        live = lb > t
        eq = np.bitwise_or.reduce(np.where(a == b[:, t:t + 1], bit, np.uint64(0)), axis=1)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        score += live * (((ph >> last_bit) & one).astype(np.int64) - ((mh >> last_bit) & one).astype(np.int64))
        ph = (ph << one) | one  # row 0: D[0][t] = t
        mh = mh << one
        pv = mh | ~(xv | ph)  # (a pair past its end no longer scores)
        mv = ph & xv
    return np.where(la == 0, lb, score)


class _Channel(NamedTuple):
    phi: np.ndarray  # float64 (S, S, 4): the model's edit probabilities
    r2l: bool
    cache: dict  # "exact": the channel's transition table (_transitions)


def _channel_for(model) -> _Channel:
    return _Channel(np.asarray(model.phi(), dtype=np.float64), bool(model.r2l), {})


# --------------------------------------------------------------------------- prior
class _Prior:
    """p(T'|T) of one sentence: every node's pairs and probabilities, and which node
    halves make up each slot's underlying string, in order."""

    def __init__(self, pairs: List[np.ndarray], probs: List[np.ndarray], first: Sequence[int],
                 last: Sequence[int]):
        n = len(pairs)
        self.n = n
        self.pairs = pairs
        self.probs = probs
        self.slot_parts = slot_parts(first, last)  # u_i's order: data/underlying.py


def _check_sentence(sentence: PunctSentence, k: Optional[int] = None) -> Tuple[List[int], List[int]]:
    """Validate the tree; return each node's first and last word."""
    name = f"sentence {sentence.sent_id!r}" if sentence.sent_id is not None else \
        (f"sentence #{k}" if k is not None else "sentence")
    n = len(sentence.words)
    if n == 0:
        raise ValueError(Errors.E101.format(name=name))
    for field in ("heads", "deprels", "upos"):
        if len(getattr(sentence, field)) != n:
            raise ValueError(Errors.E102.format(name=name, count=len(getattr(sentence, field)), field=field, n=n))
    try:
        _, _, _, first, last = tree_structure([int(h) for h in sentence.heads])
    except (ValueError, TypeError) as err:
        raise ValueError(Errors.E103.format(name=name, heads=list(sentence.heads), err=err)) from None
    return first, last


def _check_model(model) -> None:
    inner = SURFACE_TEMPLATES & set(model.feature_config.templates)
    if inner:
        raise ValueError(Errors.E104.format(templates=sorted(inner)))


def _priors(model, sentences: Sequence[PunctSentence], offset: int = 0,
            spans: Optional[Sequence[Tuple[List[int], List[int]]]] = None) -> List[_Prior]:
    """ATTACH's ``p_θ(l, r | w)`` over ``W_d(w)`` for every node of several sentences (batched).

    ``spans``: each sentence's ``_check_sentence`` result, when the caller has it already.
    Scored by the compiled ``AttachScorer.score``; each node's ``exp(log p)`` is normalised by
    its sum as ``np.exp(logp[lo:hi]) / ….sum()`` would (``_train.segment_sums`` sums as NumPy
    does), for all nodes of a chunk at once."""
    if spans is None:
        spans = [_check_sentence(s, offset + k) for k, s in enumerate(sentences)]
    out: List[_Prior] = []
    ex = model.extractor
    tables = ex.rel_tables
    for a in range(0, len(sentences), _CHUNK):
        part = sentences[a:a + _CHUNK]
        rels, ptrs, units, off = [], [np.zeros(1, dtype=np.int64)], [], 0
        for s in part:
            r, p, u = ex.sentence_units(s)
            rels.append(r)
            ptrs.append(p[1:] + off)
            units.append(u)
            off += int(p[-1])
        fwd = model.scorer.score(model.theta, np.concatenate(rels), np.concatenate(ptrs), np.concatenate(units))
        node_off = fwd.node_off
        p = np.exp(fwd.logp)
        sums = np.empty(len(node_off) - 1, dtype=np.float64)
        segment_sums(p, node_off, sums)
        p /= np.repeat(sums, np.diff(node_off))
        bounds = node_off.tolist()
        node = 0
        for k, (s, r) in enumerate(zip(part, rels)):
            n = len(r)
            pairs = [tables[rid].pairs for rid in r.tolist()]
            probs = [p[bounds[w]:bounds[w + 1]] for w in range(node, node + n)]
            node += n
            first, last = spans[a + k]
            out.append(_Prior(pairs, probs, first, last))
    return out


# --------------------------------------------------------------------------- sampling
class _SlotSamples(NamedTuple):
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


def _draw_pairs(prior: _Prior, N: int, rng: np.random.Generator, n_punctemes: int) -> np.ndarray:
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
                 U: np.ndarray, channel: _Channel) -> Tuple[np.ndarray, np.ndarray]:
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
        wa = _WRITES_A[e]
        emit = np.flatnonzero(wa | _WRITES_B[e])
        out[st[emit] + pos[emit]] = np.where(wa[emit], p[emit], b[emit])
        pos[emit] += 1
        pending[:a] = np.where(_PENDS_B[e], b, p)
    out[st + pos] = pending
    pos += 1
    if r2l:  # each row's written prefix reversed
        idx = np.repeat(st + pos, pos) - 1 - (np.arange(int(pos.sum())) - np.repeat(np.cumsum(pos) - pos, pos))
        dst = np.repeat(st, pos) + (np.arange(int(pos.sum())) - np.repeat(np.cumsum(pos) - pos, pos))
        out[dst] = out[idx].copy()
    lens = np.empty(R, dtype=np.int64)
    lens[by_len] = pos
    return out, lens


def _sample_slots(prior: _Prior, grammar, channel: _Channel, n_samples: int,
                  rng: np.random.Generator) -> List[_SlotSamples]:
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
    chosen = _draw_pairs(prior, N, rng, len(tables.length))
    out: List[_SlotSamples] = []
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


def _sample_block(prior: _Prior, chosen: np.ndarray, tables: _Tables, channel: _Channel,
                  slots: range, N: int, rng: np.random.Generator) -> List[_SlotSamples]:
    """The samples of a run of slots (see :func:`_sample_slots`), every step vectorised over all of
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
    out: Dict[int, _SlotSamples] = {}
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
                  N: int, n_sym: int) -> List[_SlotSamples]:
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
        out.append(_SlotSamples(strings[b], ids[b * N:(b + 1) * N], per))
    return out


def _number_strings(group: np.ndarray, rows: np.ndarray, surf: np.ndarray,
                    starts: np.ndarray, lens: np.ndarray, N: int) -> _SlotSamples:
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
    return _SlotSamples(strings, ids, np.bincount(ids, minlength=len(strings)))


def _risks(samples: _SlotSamples, which: np.ndarray) -> np.ndarray:
    """Σ_j d(s, x_j) over the slot's samples, for the distinct sampled strings ``s`` indexed by
    ``which`` (integers)."""
    return edit_matrix([samples.strings[j] for j in which], samples.strings) @ samples.counts


#: "slot"/"sample": at most about this many (candidate, string) pairs are scored at once
PAIR_BLOCK = 1 << 18
_GATHER = 1 << 20  # _pair_distances: symbols gathered at once


def _pair_distances(pad: np.ndarray, lens: np.ndarray, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Edit distances of the strings ``pa[p]`` and ``pb[p]`` (rows of ``pad``, padded with -1, at
    most 64 long).  An empty string is as far as the other's length, a single symbol ``x`` is
    ``len(other) - [x in other]`` away; longer pairs go to :func:`_myers_pairs`, the longer string
    of each pair in the bits and its shorter one read symbol by symbol, grouped by that length."""
    la, lb = lens[pa], lens[pb]
    swap = la < lb
    lng, sht = np.where(swap, pb, pa), np.where(swap, pa, pb)
    L, S = lens[lng], lens[sht]
    d = L.copy()  # S == 0
    for k in np.unique(S[S > 0]):
        idx = np.flatnonzero(S == k)
        width = int(L[idx].max())
        step = max(1, _GATHER // width)  # at most about _GATHER symbols gathered at once
        for a in range(0, len(idx), step):
            sub = idx[a:a + step]
            if k == 1:
                d[sub] -= (pad[lng[sub], :width] == pad[sht[sub], :1]).any(axis=1)
            else:
                d[sub] = _myers_pairs(pad[lng[sub], :width], L[sub], pad[sht[sub], :k], S[sub])
    return d


def _batch_risks(slots: Sequence[_SlotSamples], which: Sequence[np.ndarray]) -> List[np.ndarray]:
    """``[_risks(s, w) for s, w in zip(slots, which)]``, the same integers, with the edit distances
    of many slots' (candidate, string) pairs computed together (:func:`_pair_distances`, about
    ``PAIR_BLOCK`` pairs at a time): a slot costs its pairs, not a round of NumPy calls.  Slots whose
    strings are longer than 64 symbols go through :func:`_risks`."""
    out: List[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(slots)
    chunk: List[int] = []
    pairs = 0
    for q, (s, w) in enumerate(zip(slots, which)):
        longest = max(map(len, s.strings), default=0)
        if longest <= 1:  # strings of at most one symbol are 0 apart if equal, else 1
            out[q] = int(s.counts.sum()) - s.counts[np.asarray(w, dtype=np.int64)]
            continue
        if longest > 64:
            out[q] = _risks(s, w)
            continue
        if not len(w):
            continue
        chunk.append(q)
        pairs += len(w) * len(s.strings)
        if pairs >= PAIR_BLOCK:
            _risk_chunk(slots, which, chunk, out)
            chunk, pairs = [], 0
    if chunk:
        _risk_chunk(slots, which, chunk, out)
    return out


def _risk_chunk(slots, which, chunk: List[int], out: List[np.ndarray]) -> None:
    strings = [x for q in chunk for x in slots[q].strings]
    lens = np.array([len(x) for x in strings], dtype=np.int64)
    pad = np.full((len(strings), max(1, int(lens.max(initial=0)))), -1, dtype=np.int64)
    if lens.sum():
        pad[np.repeat(np.arange(len(strings)), lens),
            np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)] = [t for x in strings for t in x]
    pa, pb, row, weight = [], [], [], []
    off = rows = 0
    for q in chunk:  # every candidate of the slot against every string of it
        s, w = slots[q], np.asarray(which[q], dtype=np.int64)
        m = len(s.strings)
        pa.append(np.repeat(off + w, m))
        pb.append(np.tile(off + np.arange(m), len(w)))
        row.append(np.repeat(rows + np.arange(len(w)), m))
        weight.append(np.tile(s.counts, len(w)))
        off += m
        rows += len(w)
    pa, pb, row, weight = (np.concatenate(v) for v in (pa, pb, row, weight))
    d = _pair_distances(pad, lens, pa, pb)
    total = np.rint(np.bincount(row, weights=d * weight, minlength=rows)).astype(np.int64)  # exact integers
    r0 = 0
    for q in chunk:
        out[q] = total[r0:r0 + len(which[q])]
        r0 += len(which[q])


def _max_candidates(samples: _SlotSamples) -> Optional[int]:
    """None where every distinct string of the slot can be scored within ``SLOT_WORK``; else how
    many can (at least 1), each costing ``|distinct| × (longest + 1) × ⌈longest / 64⌉`` units."""
    m = len(samples.strings)
    longest = max((len(x) for x in samples.strings), default=0)
    per_candidate = m * (longest + 1) * max(1, -(-longest // 64))
    if m * per_candidate <= SLOT_WORK:
        return None
    return max(1, SLOT_WORK // per_candidate)


def _candidates(samples: _SlotSamples) -> np.ndarray:
    """The strings that compete at a slot: all distinct ones, or, beyond ``SLOT_WORK``, only the
    most frequent (first drawn on ties)."""
    m = len(samples.strings)
    cap = _max_candidates(samples)
    return np.arange(m) if cap is None else np.lexsort((np.arange(m), -samples.counts))[:cap]


def _slot_pick(samples: _SlotSamples) -> int:
    """The distinct sampled string of least risk; ties: the more frequent, then the first drawn.
    Candidates beyond ``SLOT_WORK``: only the most frequent strings (first drawn on ties)."""
    return _slot_picks([samples])[0]


#: "slot": candidates scored first at each slot (the most frequent); the others only where a
#: lower bound on their risk does not already exceed the best of these
FIRST_CANDIDATES = 4


def _slot_picks(slots: Sequence[_SlotSamples]) -> List[int]:
    """:func:`_slot_pick` of every slot, their risks computed together.  Exact, but cheaper: where
    every string has at most one symbol the risk of ``s`` is ``N - n_s``, so the most frequent
    string wins; elsewhere the ``FIRST_CANDIDATES`` most frequent candidates are scored first, and
    a candidate ``c`` with ``Σ_j n_j |len(c) - len(x_j)| >`` the least of their risks (a lower
    bound on its risk: an edit distance is at least the difference in length) cannot win and is
    not scored."""
    picks = [-1] * len(slots)
    which: Dict[int, np.ndarray] = {}
    for q, s in enumerate(slots):
        if len(s.strings) == 1 or max(map(len, s.strings)) <= 1:
            picks[q] = int(np.argmax(s.counts))  # the first of the most frequent
        else:
            which[q] = _candidates(s)
    many = [q for q, w in which.items() if len(w) > FIRST_CANDIDATES and max(map(len, slots[q].strings)) <= 64]
    first = [which[q][np.lexsort((which[q], -slots[q].counts[which[q]]))[:FIRST_CANDIDATES]] for q in many]
    for q, r in zip(many, _batch_risks([slots[q] for q in many], first)):
        s, w = slots[q], which[q]
        lens = np.array([len(x) for x in s.strings], dtype=np.int64)
        ls, inv = np.unique(lens[w], return_inverse=True)
        bound = (np.abs(ls[:, None] - lens[None, :]) @ s.counts)[inv.ravel()]
        which[q] = w[bound <= int(r.min())]  # (ties kept: a tie with the best may still win)
    todo = list(which)
    for q, r in zip(todo, _batch_risks([slots[q] for q in todo], [which[q] for q in todo])):
        s, w = slots[q], which[q]
        picks[q] = int(w[np.lexsort((w, -s.counts[w], r))[0]])
    return picks


def _sample_pick(slots: Sequence[_SlotSamples], n_samples: int) -> int:
    """The sampled sentence of least total risk (first drawn on ties).  Where some slot's strings
    cannot all be scored within ``SLOT_WORK``, only the first ``c`` samples compete (``c``: the
    least number of candidates such a slot affords), so each slot scores at most ``c`` strings."""
    caps = [c for c in map(_max_candidates, slots) if c is not None]
    k = min([int(n_samples)] + caps)
    if k == 1:
        return 0
    total = np.zeros(k, dtype=np.int64)
    which, local = zip(*(np.unique(s.ids[:k], return_inverse=True) for s in slots))
    for r, loc in zip(_batch_risks(slots, which), local):
        total += r[loc.ravel()]
    return int(np.argmin(total))


# --------------------------------------------------------------------------- exact
_State = State

#: "exact": a slot where more than this many node halves meet (no sentence of 37 UD files has more
#: than 21) is a deep one: each of its halves reads at most EXACT_EXPAND (state, puncteme)
#: products, the most probable
EXACT_WIDE = 32
EXACT_EXPAND = 1024
#: "exact": when the states of a slot keep less than this share of the mass (pruning drops some on
#: every half where many constituents meet), they are scaled back up (the scale is remembered), so
#: the pruning threshold stays relative and the states never all fall below it
EXACT_RESCALE = 0.5
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
    call with the same channel and punctemes (:func:`_transitions`)."""

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


_TRANSITIONS: Dict[Tuple, _Transitions] = {}  # a few recent channels (see _transitions)
_TRANSITIONS_LOCK = threading.Lock()


def _transitions(grammar, channel: _Channel) -> _Transitions:
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


def _slot_marginal(prior: _Prior, i: int, grammar, channel: _Channel, prune: Optional[float] = None
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
    trans = _transitions(grammar, channel)
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


def mbr_index(candidates: Sequence[Tuple], support: Sequence[Tuple], weights: Sequence[float]) -> int:
    """Index of the candidate with the least expected edit distance ``Σ_s w(s)·d(c, s)``
    (ties: the earliest candidate).  ValueError for no candidates or no support."""
    if not len(candidates) or not len(support):
        raise ValueError(Errors.E124)
    if len(weights) != len(support):
        raise ValueError(Errors.E125.format(n_support=len(support), n_weights=len(weights)))
    syms: Dict[object, int] = {}
    enc = [[tuple(syms.setdefault(t, len(syms)) for t in x) for x in xs] for xs in (candidates, support)]
    risk = edit_matrix(enc[0], enc[1]).astype(np.float64) @ np.asarray(weights, dtype=np.float64)
    return int(np.argmin(risk))


def risk_weights(marg: Dict[tuple, float], support: Sequence[tuple], empty_weight: float = 1.0) -> List[float]:
    """The support strings' weights in the MBR risk: their probabilities, the empty string's times
    ``empty_weight`` (1: the expected edit distance; below 1 a missed mark costs more than a
    spurious one, which trades precision for recall; :func:`check_empty_weight`)."""
    return [marg[x] * (empty_weight if len(x) == 0 else 1.0) for x in support]


def check_empty_weight(empty_weight, method: str = "marginal") -> float:
    """``empty_weight`` a finite number above 0 (E885); other than 1 only for the deterministic
    decoders, ``"marginal"`` and ``"exact"`` (E886)."""
    if isinstance(empty_weight, bool) or not isinstance(empty_weight, (int, float)) \
            or not math.isfinite(empty_weight) or empty_weight <= 0:
        raise ValueError(Errors.E885.format(value=empty_weight))
    if empty_weight != 1 and method not in ("marginal", "exact"):
        raise ValueError(Errors.E886.format(method=method))
    return float(empty_weight)


def _exact_choice(marg: Dict[Tuple[int, ...], float], log_scale: float = 0.0) -> Tuple[Tuple[int, ...], float]:
    """Per-slot MBR over the (scaled) marginal; the chosen string and its probability."""
    return _exact_choices([(marg, log_scale)])[0]


def _exact_choices(margs: Sequence[Tuple[Dict[Tuple[int, ...], float], float]], empty_weight: float = 1.0
                   ) -> List[Tuple[Tuple[int, ...], float]]:
    """:func:`_exact_choice` of many slots: the ``EXACT_CANDIDATES`` most probable strings against
    the (at most ``EXACT_BEAM``) support strings at least ``EXACT_SUPPORT_MIN`` probable, the edit
    distances of all slots computed together (:func:`_pair_distances`), each slot's risks then
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
        d = _pair_distances(pad, lens, np.concatenate(pa), np.concatenate(pb))
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


# --------------------------------------------------------------------------- API
def _names(model, x: Tuple[int, ...]) -> Surface:
    sym = model.inventory.symbols
    return tuple(sym[s] for s in x)


def _pool(per_tree: Sequence[List[_SlotSamples]]) -> List[_SlotSamples]:
    """Per slot, the samples of every tree in one table (strings merged, tree 0's first)."""
    if len(per_tree) == 1:
        return list(per_tree[0])
    out: List[_SlotSamples] = []
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
        out.append(_SlotSamples(strings, all_ids, np.bincount(all_ids, minlength=len(strings))))
    return out


def _allocation(n_samples: int, k: int) -> List[int]:
    """Stratified draws of a uniform mixture of ``k`` trees: ``n_samples`` split as evenly as
    possible, the first trees taking the remainder."""
    q, r = divmod(int(n_samples), k)
    return [q + (j < r) for j in range(k)]


def _mixture_marginal(priors: Sequence[_Prior], i: int, grammar, channel: _Channel,
                      prune: Optional[float] = None) -> Tuple[Dict[Tuple[int, ...], float], float]:
    """``(1/K) Σ_k p(x_i | T_k)``: slot ``i``'s marginal under the uniform mixture of the trees,
    as ``(probabilities / scale, log scale)`` (see :func:`_slot_marginal`)."""
    if len(priors) == 1:
        return _slot_marginal(priors[0], i, grammar, channel, prune)
    each = [_slot_marginal(prior, i, grammar, channel, prune) for prior in priors]
    top = max(ls for _, ls in each)
    mix: Dict[Tuple[int, ...], float] = {}
    for marg, ls in each:
        f = float(np.exp(ls - top))  # 1.0 unless a tree's slot needed rescaling
        for x, p in marg.items():
            mix[x] = mix.get(x, 0.0) + p * f / len(priors)
    return mix, top


def _marginal(model, prior_sets: Sequence[Sequence[_Prior]], channel: _Channel, empty_weight: float = 1.0,
              weights: Optional[Sequence[Sequence[float]]] = None) -> List[List[SlotChoice]]:
    """The ``"marginal"`` decoder: ``"exact"``'s choices, all slots of all sentences in compiled
    code (:mod:`.exact`), under the same settings; ``weights``: per sentence, its trees' weights
    in the mixture (:func:`.exact.marginal_choices`; None: equal)."""
    return marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, prune=RESTORE_PRUNE,
                            beam=EXACT_BEAM, candidates=EXACT_CANDIDATES, support_min=EXACT_SUPPORT_MIN,
                            expand=EXACT_EXPAND, wide=EXACT_WIDE, rescale=EXACT_RESCALE,
                            symbols=model.inventory.symbols, factory=SlotChoice, empty_weight=empty_weight,
                            weights=weights)


def _decode(model, priors: Sequence[_Prior], channel: _Channel, method: str, n_samples: int,
            rngs: Sequence[np.random.Generator], empty_weight: float = 1.0) -> List[SlotChoice]:
    """MBR under the uniform mixture of the trees' ``p(x | T_k)`` (one tree: plain MBR)."""
    grammar = model.grammar
    n = priors[0].n
    if method == "marginal":
        return _marginal(model, [priors], channel, empty_weight)[0]
    if method == "exact":  # the marginals of a run of slots at a time (bounded memory)
        choices = []
        for a in range(0, n + 1, 256):
            choices += _exact_choices([_mixture_marginal(priors, i, grammar, channel, RESTORE_PRUNE)
                                       for i in range(a, min(n + 1, a + 256))], empty_weight)
        return [SlotChoice(_names(model, x), float(p)) for x, p in choices]
    slots = _pool([_sample_slots(prior, grammar, channel, m, rng)
                   for prior, m, rng in zip(priors, _allocation(n_samples, len(priors)), rngs) if m > 0])
    N = float(n_samples)
    if method == "slot":
        picks = _slot_picks(slots)
    else:  # "sample": the sampled sentence with the least total risk
        k = _sample_pick(slots, n_samples)
        picks = [int(s.ids[k]) for s in slots]
    return [SlotChoice(_names(model, s.strings[j]), float(s.counts[j] / N)) for s, j in zip(slots, picks)]


def _prepare(model, sentences: Sequence[PunctSentence]) -> Tuple[List[_Prior], _Channel]:
    _check_model(model)
    sentences = list(sentences)
    spans = [_check_sentence(s, k) for k, s in enumerate(sentences)]  # all checked before any work
    priors: List[_Prior] = []
    for a in range(0, len(sentences), _CHUNK):
        priors.extend(_priors(model, sentences[a:a + _CHUNK], offset=a, spans=spans[a:a + _CHUNK]))
    return priors, _channel_for(model)


def sample_punctuation(model, sentence: PunctSentence, n_samples: int = 1000, seed: int = 0
                       ) -> List[List[Surface]]:
    """``n_samples`` ancestral samples ``x ~ p(x|T)``: per sample, the surface string of every slot."""
    n_samples, seed = _check_args("sample", n_samples, seed)
    (prior,), channel = _prepare(model, [sentence])
    slots = _sample_slots(prior, model.grammar, channel, n_samples, _rng(seed, 0))
    names = [[_names(model, x) for x in s.strings] for s in slots]
    return [[names[i][int(s.ids[k])] for i, s in enumerate(slots)] for k in range(int(n_samples))]


def slot_marginals(model, sentence: PunctSentence) -> List[Dict[Surface, float]]:
    """The exact ``p(x_i | T)`` of every slot (strings below ``EXACT_PRUNE`` dropped)."""
    return mixture_slot_marginals(model, [sentence])


def _check_trees(trees: Sequence[PunctSentence], k: int) -> None:
    """The trees of one sentence must exist and share its words."""
    if not trees:
        raise ValueError(Errors.E107.format(k=k))
    words = list(trees[0].words)
    for j, t in enumerate(trees[1:], 1):
        if list(t.words) != words:
            raise ValueError(Errors.E108.format(k=k, sent_id=trees[0].sent_id, j=j, words_j=list(t.words)[:8],
                                                words_0=words[:8]))


def mixture_priors(model, tree_sets: Sequence[Sequence[PunctSentence]]
                   ) -> Tuple[List[List[_Prior]], _Channel]:
    """The priors of every tree, grouped by sentence (one batched ATTACH pass over all trees)."""
    tree_sets = [list(ts) for ts in tree_sets]
    for k, ts in enumerate(tree_sets):
        _check_trees(ts, k)
    flat, channel = _prepare(model, [t for ts in tree_sets for t in ts])
    out, a = [], 0
    for ts in tree_sets:
        out.append(flat[a:a + len(ts)])
        a += len(ts)
    return out, channel


def mixture_slot_marginals(model, trees: Sequence[PunctSentence]) -> List[Dict[Surface, float]]:
    """``(1/K) Σ_k p(x_i | T_k)`` for every slot: the exact slot marginals of the uniform mixture
    of ``K`` trees of one sentence (paper footnote 20; one tree: :func:`slot_marginals`)."""
    (priors,), channel = mixture_priors(model, [trees])
    out = []
    for i in range(priors[0].n + 1):
        marg, log_scale = _mixture_marginal(priors, i, model.grammar, channel)
        scale = float(np.exp(log_scale))  # 1.0 unless the slot needed rescaling
        out.append({_names(model, x): p * scale for x, p in marg.items()})
    return out


def _check_n_samples(n_samples) -> int:
    """``n_samples`` as an int in ``1..MAX_SAMPLES``; ValueError otherwise (E106 below 1, E126)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise ValueError(Errors.E126.format(max=MAX_SAMPLES, n_samples=n_samples))
    if n_samples < 1:
        raise ValueError(Errors.E106.format(n_samples=n_samples))
    if n_samples > MAX_SAMPLES:
        raise ValueError(Errors.E126.format(max=MAX_SAMPLES, n_samples=n_samples))
    return int(n_samples)


def _check_seed(seed) -> Optional[int]:
    """``seed`` as a non-negative int, or None (fresh randomness); ValueError otherwise (E127)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(Errors.E127.format(seed=seed))
    return int(seed)


def _check_args(method: str, n_samples, seed) -> Tuple[int, Optional[int]]:
    """The public entry points' arguments, checked: ``method`` one of :data:`METHODS` (E109);
    ``n_samples`` an int in ``1..MAX_SAMPLES`` for the sampling methods (``"marginal"`` and
    ``"exact"`` ignore it);
    ``seed`` a non-negative int or None."""
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(Errors.E109.format(methods=METHODS, method=method))
    n = _check_n_samples(n_samples) if method in ("slot", "sample") else 0
    return n, _check_seed(seed)


def _rng(seed: Optional[int], *key: int) -> np.random.Generator:
    """The random stream of sentence ``key[0]`` (and tree ``key[1]``); fresh entropy without a seed."""
    return np.random.default_rng(None if seed is None else [seed, *key])


def restore_sentence(model, sentence: PunctSentence, method: str = "marginal", n_samples: int = 1000,
                     seed: int = 0, empty_weight: float = 1.0) -> List[SlotChoice]:
    """MBR punctuation for the tree of ``sentence`` (its ``slots`` are ignored): one
    :class:`SlotChoice` per slot ``x_0..x_n`` (``^`` excluded).  Deterministic given ``seed``.
    ``empty_weight`` (``"marginal"``/``"exact"``): the empty string's weight in the risk
    (:func:`risk_weights`; 1, the default, is the expected edit distance)."""
    return restore_sentences(model, [sentence], method, n_samples, seed, empty_weight)[0]


def restore_sentences(model, sentences: Sequence[PunctSentence], method: str = "marginal",
                      n_samples: int = 1000, seed: int = 0, empty_weight: float = 1.0) -> List[List[SlotChoice]]:
    """:func:`restore_sentence` for many sentences.  Sentence ``k`` draws from the random stream
    ``default_rng([seed, k])``: its result depends on its position, never on the other sentences."""
    return restore_mixtures(model, [[s] for s in sentences], method, n_samples, seed, empty_weight)


def restore_mixtures(model, tree_sets: Sequence[Sequence[PunctSentence]], method: str = "marginal",
                     n_samples: int = 1000, seed: int = 0, empty_weight: float = 1.0) -> List[List[SlotChoice]]:
    """MBR punctuation of each sentence from several trees of it (``tree_sets[k]``: the trees of
    sentence ``k``, same words), under the uniform mixture ``p(x) = (1/K) Σ_j p(x | T_j)`` (paper
    footnote 20: "several parses instead of one").  ``exact`` averages the trees' slot marginals;
    ``slot``/``sample`` pool ``n_samples`` draws split evenly over the trees (stratified mixture
    sampling), tree ``j`` of sentence ``k`` drawing from ``default_rng([seed, k])`` (``j = 0``) or
    ``default_rng([seed, k, j])``.  One tree per sentence is exactly :func:`restore_sentences`."""
    n_samples, seed = _check_args(method, n_samples, seed)
    empty_weight = check_empty_weight(empty_weight, method)
    prior_sets, channel = mixture_priors(model, tree_sets)
    if method == "marginal":
        return _marginal(model, prior_sets, channel, empty_weight)
    out = []
    for k, priors in enumerate(prior_sets):
        rngs = [_rng(seed, k, *([j] if j else [])) for j in range(len(priors))]
        out.append(_decode(model, priors, channel, method, n_samples, rngs, empty_weight))
    return out
