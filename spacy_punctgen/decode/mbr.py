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
samples of a slot by their underlying string, and draw the surface string from
that string's exact channel output distribution (enumerated once per distinct
``u`` and cached).  For ``"exact"``, the nodes that contribute to one slot are
distinct, hence independent, so ``p(u_i)`` is a product of per-node marginals
pushed through the channel.  It is enumerated, dropping partial strings below
``EXACT_PRUNE`` and keeping at most ``EXACT_BEAM`` of them: exact on short slots,
a close approximation where many constituents meet at one slot.

Models trained with the ``inner`` template condition a node's pair on the surface
punctuation inside its span; their prior does not factorise, and these decoders
refuse them with a ValueError.
"""
from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.trees import tree_structure
from spacy_punctgen.data.underlying import slot_parts
from spacy_punctgen.inference.dp import BOS
from spacy_punctgen.model.channel import State, channel_step, finish, sample_channel
from spacy_punctgen.model.features import SURFACE_TEMPLATES
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors

METHODS = ("slot", "sample", "exact")
#: "exact": partial underlying strings (and channel outputs) less probable than this are dropped
EXACT_PRUNE = 1e-7
#: "exact": at most this many partial underlying strings per slot (the most probable) are kept
EXACT_BEAM = 300
#: "exact": MBR candidates per slot (the most probable strings) ...
EXACT_CANDIDATES = 32
#: ... scored against the (at most EXACT_BEAM) support strings at least this probable
EXACT_SUPPORT_MIN = 1e-9
#: edit distances: pairs per block × 64-bit words per pair, bounding the DP state (~8 arrays of this many words)
EDIT_BLOCK_WORDS = 1 << 17
#: "slot"/"sample": most work one slot's risks may take, in units of candidate × distinct string ×
#: (longest string + 1) × ⌈longest / 64⌉ (about 30 ns each); slots beyond it score fewer candidates
SLOT_WORK = 1 << 23
_CHUNK = 64  # sentences per ATTACH forward batch

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


class _Channel(NamedTuple):
    phi: np.ndarray  # float64 (S, S, 4): the model's edit probabilities
    r2l: bool


def _channel_for(model) -> _Channel:
    return _Channel(np.asarray(model.phi(), dtype=np.float64), bool(model.r2l))


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


def _priors(model, sentences: Sequence[PunctSentence], offset: int = 0) -> List[_Prior]:
    """ATTACH's ``p_θ(l, r | w)`` over ``W_d(w)`` for every node of several sentences (batched)."""
    spans = [_check_sentence(s, offset + k) for k, s in enumerate(sentences)]
    out: List[_Prior] = []
    ex = model.extractor
    for a in range(0, len(sentences), _CHUNK):
        part = sentences[a:a + _CHUNK]
        rels, ptrs, units, off = [], [np.zeros(1, dtype=np.int64)], [], 0
        for s in part:
            r, p, u = ex.sentence_units(s)
            rels.append(r)
            ptrs.append(p[1:] + off)
            units.append(u)
            off += int(p[-1])
        fwd = model.scorer.predict(model.theta, np.concatenate(rels), np.concatenate(ptrs),
                                   np.concatenate(units))
        node = 0
        for k, (s, r) in enumerate(zip(part, rels)):
            pairs, probs = [], []
            for w in range(len(s.words)):
                lo, hi = fwd.node_off[node], fwd.node_off[node + 1]
                p = np.exp(fwd.logp[lo:hi])
                pairs.append(ex.rel_tables[int(r[w])].pairs)
                probs.append(p / p.sum())
                node += 1
            first, last = spans[a + k]
            out.append(_Prior(pairs, probs, first, last))
    return out


# --------------------------------------------------------------------------- sampling
class _SlotSamples(NamedTuple):
    strings: List[Tuple[int, ...]]  # distinct surface strings (symbol ids, '^' stripped)
    ids: np.ndarray  # int64 (N,): each sample's string
    counts: np.ndarray  # int64 (len(strings),)


def _sample_slots(prior: _Prior, grammar, channel: _Channel, n_samples: int,
                  rng: np.random.Generator) -> List[_SlotSamples]:
    """Ancestral samples of every slot's surface string (the same N sentences across slots)."""
    N, n = int(n_samples), prior.n
    u_nodes = rng.random((N, n))
    chosen = np.empty((n, 2, N), dtype=np.int64)  # puncteme ids: [node, side, sample]
    for w in range(n):
        cdf = np.cumsum(prior.probs[w])
        rows = np.minimum(np.searchsorted(cdf, u_nodes[:, w] * cdf[-1], side="right"), len(cdf) - 1)
        chosen[w, 0] = prior.pairs[w][rows, 0]
        chosen[w, 1] = prior.pairs[w][rows, 1]
    pm = grammar.punctemes
    B = len(pm)
    out: List[_SlotSamples] = []
    for i, parts in enumerate(prior.slot_parts):
        code = np.zeros(N, dtype=np.int64)
        for w, side in parts:  # mixed-radix code of the slot's puncteme sequence, kept dense
            code = np.unique(code * B + chosen[w, side], return_inverse=True)[1].ravel()
        _, first_idx, inv = np.unique(code, return_index=True, return_inverse=True)
        inv = inv.ravel()
        strings: List[Tuple[int, ...]] = []
        index: Dict[Tuple[int, ...], int] = {}
        ids = np.empty(N, dtype=np.int64)
        for g, k in enumerate(first_idx):
            u: Tuple[int, ...] = (BOS,) if i == 0 else ()
            for w, side in parts:
                u += pm[chosen[w, side, k]]
            sel = np.flatnonzero(inv == g)
            if not u:
                ids[sel] = index.setdefault((), len(strings))
                if len(strings) < len(index):
                    strings.append(())
                continue
            rows = sample_channel(u, channel.phi, channel.r2l, rng.random((len(sel), max(len(u) - 1, 0))))
            if i == 0:
                if not (rows[:, 0] == BOS).all():
                    raise AssertionError(Errors.E105)
                rows = rows[:, 1:]
            distinct, local_inv = np.unique(rows, axis=0, return_inverse=True)
            local = np.empty(len(distinct), dtype=np.int64)
            for j, row in enumerate(distinct):
                x = tuple(int(v) for v in row if v >= 0)
                if x not in index:
                    index[x] = len(strings)
                    strings.append(x)
                local[j] = index[x]
            ids[sel] = local[local_inv.ravel()]
        out.append(_SlotSamples(strings, ids, np.bincount(ids, minlength=len(strings))))
    return out


def _risks(samples: _SlotSamples, which: np.ndarray) -> np.ndarray:
    """Σ_j d(s, x_j) over the slot's samples, for the distinct sampled strings ``s`` indexed by
    ``which`` (integers)."""
    return edit_matrix([samples.strings[j] for j in which], samples.strings) @ samples.counts


def _max_candidates(samples: _SlotSamples) -> Optional[int]:
    """None where every distinct string of the slot can be scored within ``SLOT_WORK``; else how
    many can (at least 1), each costing ``|distinct| × (longest + 1) × ⌈longest / 64⌉`` units."""
    m = len(samples.strings)
    longest = max((len(x) for x in samples.strings), default=0)
    per_candidate = m * (longest + 1) * max(1, -(-longest // 64))
    if m * per_candidate <= SLOT_WORK:
        return None
    return max(1, SLOT_WORK // per_candidate)


def _slot_pick(samples: _SlotSamples) -> int:
    """The distinct sampled string of least risk; ties: the more frequent, then the first drawn.
    Candidates beyond ``SLOT_WORK``: only the most frequent strings (first drawn on ties)."""
    m = len(samples.strings)
    cap = _max_candidates(samples)
    which = np.arange(m) if cap is None else np.lexsort((np.arange(m), -samples.counts))[:cap]
    if len(which) == 1:
        return int(which[0])
    r = _risks(samples, which)
    return int(which[np.lexsort((which, -samples.counts[which], r))[0]])


def _sample_pick(slots: Sequence[_SlotSamples], n_samples: int) -> int:
    """The sampled sentence of least total risk (first drawn on ties).  Where some slot's strings
    cannot all be scored within ``SLOT_WORK``, only the first ``c`` samples compete (``c``: the
    least number of candidates such a slot affords), so each slot scores at most ``c`` strings."""
    caps = [c for c in map(_max_candidates, slots) if c is not None]
    k = min([int(n_samples)] + caps)
    if k == 1:
        return 0
    total = np.zeros(k, dtype=np.int64)
    for s in slots:
        which, local = np.unique(s.ids[:k], return_inverse=True)
        total += _risks(s, which)[local.ravel()]
    return int(np.argmin(total))


# --------------------------------------------------------------------------- exact
_State = State


def _read(states: Dict[_State, float], seq: Sequence[int], phi: np.ndarray, weight: float,
          into: Dict[_State, float]) -> None:
    """Run the channel over ``seq`` from every state; add ``weight ×`` the results to ``into``."""
    cur = {k: p * weight for k, p in states.items() if p * weight >= EXACT_PRUNE}
    for b in seq:
        cur = channel_step(cur, b, phi)
    for key, p in cur.items():
        if p >= EXACT_PRUNE:
            into[key] = into.get(key, 0.0) + p


def _slot_marginal(prior: _Prior, i: int, grammar, channel: _Channel) -> Dict[Tuple[int, ...], float]:
    """``p(x_i | T)`` (symbol ids, '^' stripped).  The channel reads the slot's puncteme
    sequence one node half at a time, each a mixture over its marginal; equal channel states
    (pending token, surface so far) merge, states below EXACT_PRUNE are dropped and at most
    EXACT_BEAM kept, so this is exact up to a negligible mass."""
    pm = grammar.punctemes
    parts = prior.slot_parts[i]
    r2l = channel.r2l
    if r2l:  # the machine reads u_i reversed: last half first, each puncteme reversed, '^' last
        parts = parts[::-1]
    states: Dict[_State, float] = {(BOS, ()) if i == 0 and not r2l else (-1, ()): 1.0}
    for w, side in parts:
        marg = np.bincount(prior.pairs[w][:, side], weights=prior.probs[w], minlength=len(pm))
        nxt: Dict[_State, float] = {}
        for k in np.flatnonzero(marg > 0):
            seq = pm[k][::-1] if r2l else pm[k]
            _read(states, seq, channel.phi, float(marg[k]), nxt)
        if len(nxt) > EXACT_BEAM:
            nxt = dict(sorted(nxt.items(), key=lambda kv: -kv[1])[:EXACT_BEAM])
        states = nxt
    if i == 0 and r2l:
        end: Dict[_State, float] = {}
        _read(states, (BOS,), channel.phi, 1.0, end)
        states = end
    xs = finish(states, r2l)
    if i == 0:
        if any(not x or x[0] != BOS for x in xs):
            raise AssertionError(Errors.E105)
        xs = {x[1:]: p for x, p in xs.items()}
    return xs


def mbr_index(candidates: Sequence[Tuple], support: Sequence[Tuple], weights: Sequence[float]) -> int:
    """Index of the candidate with the least expected edit distance ``Σ_s w(s)·d(c, s)``
    (ties: the earliest candidate)."""
    syms: Dict[object, int] = {}
    enc = [[tuple(syms.setdefault(t, len(syms)) for t in x) for x in xs] for xs in (candidates, support)]
    risk = edit_matrix(enc[0], enc[1]).astype(np.float64) @ np.asarray(weights, dtype=np.float64)
    return int(np.argmin(risk))


def _exact_choice(marg: Dict[Tuple[int, ...], float]) -> Tuple[Tuple[int, ...], float]:
    ranked = sorted(marg, key=lambda x: (-marg[x], x))
    support = [x for x in ranked[:EXACT_BEAM] if marg[x] >= EXACT_SUPPORT_MIN] or ranked[:1]
    best = ranked[mbr_index(ranked[:EXACT_CANDIDATES], support, [marg[x] for x in support])]
    return best, marg[best]


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


def _mixture_marginal(priors: Sequence[_Prior], i: int, grammar, channel: _Channel
                      ) -> Dict[Tuple[int, ...], float]:
    """``(1/K) Σ_k p(x_i | T_k)``: slot ``i``'s marginal under the uniform mixture of the trees."""
    if len(priors) == 1:
        return _slot_marginal(priors[0], i, grammar, channel)
    mix: Dict[Tuple[int, ...], float] = {}
    for prior in priors:
        for x, p in _slot_marginal(prior, i, grammar, channel).items():
            mix[x] = mix.get(x, 0.0) + p / len(priors)
    return mix


def _decode(model, priors: Sequence[_Prior], channel: _Channel, method: str, n_samples: int,
            rngs: Sequence[np.random.Generator]) -> List[SlotChoice]:
    """MBR under the uniform mixture of the trees' ``p(x | T_k)`` (one tree: plain MBR)."""
    grammar = model.grammar
    n = priors[0].n
    if method == "exact":
        out = []
        for i in range(n + 1):
            x, p = _exact_choice(_mixture_marginal(priors, i, grammar, channel))
            out.append(SlotChoice(_names(model, x), float(p)))
        return out
    slots = _pool([_sample_slots(prior, grammar, channel, m, rng)
                   for prior, m, rng in zip(priors, _allocation(n_samples, len(priors)), rngs) if m > 0])
    N = float(n_samples)
    if method == "slot":
        picks = [_slot_pick(s) for s in slots]
    else:  # "sample": the sampled sentence with the least total risk
        k = _sample_pick(slots, n_samples)
        picks = [int(s.ids[k]) for s in slots]
    return [SlotChoice(_names(model, s.strings[j]), float(s.counts[j] / N)) for s, j in zip(slots, picks)]


def _prepare(model, sentences: Sequence[PunctSentence]) -> Tuple[List[_Prior], _Channel]:
    _check_model(model)
    sentences = list(sentences)
    for k, s in enumerate(sentences):
        _check_sentence(s, k)
    priors: List[_Prior] = []
    for a in range(0, len(sentences), _CHUNK):
        priors.extend(_priors(model, sentences[a:a + _CHUNK], offset=a))
    return priors, _channel_for(model)


def sample_punctuation(model, sentence: PunctSentence, n_samples: int = 1000, seed: int = 0
                       ) -> List[List[Surface]]:
    """``n_samples`` ancestral samples ``x ~ p(x|T)``: per sample, the surface string of every slot."""
    if int(n_samples) < 1:
        raise ValueError(Errors.E106.format(n_samples=n_samples))
    (prior,), channel = _prepare(model, [sentence])
    slots = _sample_slots(prior, model.grammar, channel, n_samples, np.random.default_rng([int(seed), 0]))
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
            raise ValueError(Errors.E108.format(k=k, sent_id=trees[0].sent_id, j=j, words_j=list(t.words)[:8], words_0=words[:8]))


def _prepare_mixtures(model, tree_sets: Sequence[Sequence[PunctSentence]]
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
    (priors,), channel = _prepare_mixtures(model, [trees])
    return [{_names(model, x): p for x, p in _mixture_marginal(priors, i, model.grammar, channel).items()}
            for i in range(priors[0].n + 1)]


def _check_args(method: str, n_samples: int) -> None:
    if method not in METHODS:
        raise ValueError(Errors.E109.format(methods=METHODS, method=method))
    if method != "exact" and int(n_samples) < 1:
        raise ValueError(Errors.E106.format(n_samples=n_samples))


def restore_sentence(model, sentence: PunctSentence, method: str = "slot", n_samples: int = 1000,
                     seed: int = 0) -> List[SlotChoice]:
    """MBR punctuation for the tree of ``sentence`` (its ``slots`` are ignored): one
    :class:`SlotChoice` per slot ``x_0..x_n`` (``^`` excluded).  Deterministic given ``seed``."""
    return restore_sentences(model, [sentence], method, n_samples, seed)[0]


def restore_sentences(model, sentences: Sequence[PunctSentence], method: str = "slot",
                      n_samples: int = 1000, seed: int = 0) -> List[List[SlotChoice]]:
    """:func:`restore_sentence` for many sentences.  Sentence ``k`` draws from the random stream
    ``default_rng([seed, k])``: its result depends on its position, never on the other sentences."""
    return restore_mixtures(model, [[s] for s in sentences], method, n_samples, seed)


def restore_mixtures(model, tree_sets: Sequence[Sequence[PunctSentence]], method: str = "slot",
                     n_samples: int = 1000, seed: int = 0) -> List[List[SlotChoice]]:
    """MBR punctuation of each sentence from several trees of it (``tree_sets[k]``: the trees of
    sentence ``k``, same words), under the uniform mixture ``p(x) = (1/K) Σ_j p(x | T_j)`` (paper
    footnote 20: "several parses instead of one").  ``exact`` averages the trees' slot marginals;
    ``slot``/``sample`` pool ``n_samples`` draws split evenly over the trees (stratified mixture
    sampling), tree ``j`` of sentence ``k`` drawing from ``default_rng([seed, k])`` (``j = 0``) or
    ``default_rng([seed, k, j])``.  One tree per sentence is exactly :func:`restore_sentences`."""
    _check_args(method, n_samples)
    prior_sets, channel = _prepare_mixtures(model, tree_sets)
    out = []
    for k, priors in enumerate(prior_sets):
        rngs = [np.random.default_rng([int(seed), k] + ([j] if j else [])) for j in range(len(priors))]
        out.append(_decode(model, priors, channel, method, n_samples, rngs))
    return out
