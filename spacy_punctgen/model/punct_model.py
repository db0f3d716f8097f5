"""The trainable punctuation model: ATTACH (θ) + NOISYCHANNEL (ψ) + the exact DP.

Why one class: training, evaluation, the spaCy component and the CLI all need
the same four things -- the inventory, the feature dictionary, the parameters
and the channel direction -- kept together and saved together.

Objective (docs/model.md §4), for a batch ``B`` of (x, T)::

    Σ_{(x,T)∈B} [ log p(x|T) − ξ · E_{T'~p(·|T,x)}[c(T')]² ] − ς · (‖θ‖² + ‖ψ‖²)

with exact gradients: the log-likelihood part from posterior marginals ``μ``
and expected edit counts; the ξ part from the DP's tilted derivatives
(``dmu``, ``dcounts`` = covariances with ``c(T')``).  Sentences with
``p(x|T) = 0`` contribute nothing to the objective and are counted.

Held-out evaluation (``perplexity``, the ``evaluate`` command).  A held-out
sentence can be impossible under the trained model: a slot string that no
combination of ``W_d`` pairs and channel edits produces, or a punctuation type
never seen in training.  Two layers keep every sentence's probability finite:

1. **Smoothing** (``smooth_delta = δ``, default 1e-3, chosen on zh dev among
   3e-4/1e-3/3e-3): at evaluation each node draws from
   ``(1 − δ)·p_θ(l, r | w)`` on ``W_d`` plus ``δ`` spread uniformly over the extra
   pairs ``{(p, ε), (ε, p) : p ∈ V ∪ {<unk>}}`` not in ``W_d``, where ``<unk>`` is the
   one-token puncteme of the unknown-symbol class (unseen punctuation types
   share it, like an UNK word in LM perplexity).  This is a proper distribution
   and makes every slot string in ``V`` (or made of unknown tokens) producible
   at every slot.  Training never sees the extra pairs.
2. **Back-off mixture** for anything still impossible:
   ``p'(x|T) = (1 − ε)·p(x|T) + ε·q(x)`` with ``ε = backoff_eps`` (1e-6) and ``q`` a
   tree-independent model with independent slots: a slot-length distribution times
   a token unigram (add-one smoothed on the training slots, unseen tokens share
   ``<unk>``).  ``p'`` is a proper distribution and differs from ``p`` by a factor
   ``≈ 1 − 10⁻⁶`` on possible sentences.

``perplexity()`` reports the mixture figure, the exact figure over possible
sentences, and how many sentences needed the mixture (``n_impossible``).
"""
from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from spacy_punctgen.model.attach import AttachForward, AttachScorer
from spacy_punctgen.model.channel import (bos_edit_mask, channel_grad, channel_probs, identity_channel, init_psi, is_r2l,
                      parse_direction)
from spacy_punctgen.inference.dp import (Grammar, Lattice, _check_phi, build_lattice, inside_outside, log_prob as dp_log_prob, restrict_lattice,
                 viterbi)
from spacy_punctgen.model.features import FeatureConfig, FeatureExtractor, FeatureIndex
from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.data.preprocess import PunctSentence

FORMAT_NAME = "spacy-punctgen-model"
#: version 2: the feature dictionary stored factorised (distinct context / property hashes), a
#: deflated params.npz, optional float16 θ.  Version 1 files (flat hash arrays) are still read.
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
MODES = ("full", "attach")
THETA_DTYPES = ("float32", "float16")
CFG_FILE, INVENTORY_FILE, PARAMS_FILE = "cfg.json", "inventory.json", "params.npz"
_PARAM_NAMES = ("theta", "psi", "ctx_keys", "ctx_counts", "prop_keys", "prop_idx",
                "backoff_tok_logp", "backoff_len_logp")
_PARAM_NAMES_V1 = ("theta", "psi", "feature_ctx", "feature_prop", "backoff_tok_logp", "backoff_len_logp")


@dataclass
class Prepared:
    """One sentence compiled for training/scoring (depends on data and inventory, never on θ/ψ)."""

    sentence: PunctSentence
    rel_ids: np.ndarray  # int64 (n,)
    unit_ptr: np.ndarray  # int64 (n+1,)
    units: np.ndarray  # int64 (E,)
    lattice: Lattice
    tilt: np.ndarray  # float64 (K,): 1.0 for lattice candidates holding an unmatched mark
    slot_syms: List[List[int]]
    smoothed: bool = False  # candidates include the smoothing pairs (evaluation only)
    cand_extra: Optional[np.ndarray] = None  # smoothed: bool (K,), candidate is a smoothing pair
    cand_share: Optional[np.ndarray] = None  # smoothed: float64 (K,), 1 / #smoothing pairs of its node

    @property
    def n(self) -> int:
        return len(self.rel_ids)

    @property
    def n_slots(self) -> int:
        return self.n + 1


@dataclass
class _RelArrays:
    """What :meth:`PunctModel.prepare` needs per relation table (see ``_rel_arrays``)."""

    cands: List[np.ndarray]  # int64 (P [+ smoothing pairs], 2) candidate pairs
    size: np.ndarray  # int64 (R,): |W_d|
    offset: np.ndarray  # int64 (R,): where relation r's rows start in ``unmatched``
    n_extra: np.ndarray  # float64 (R,): number of smoothing pairs (0 when not smoothed)
    unmatched: np.ndarray  # float64 (Σ P,): the tables' ``unmatched`` flags, concatenated


@dataclass
class ObjectiveResult:
    objective: float  # the regularised objective of the batch
    loglik: float  # Σ log p(x|T) over possible sentences
    expected_unmatched: float  # Σ E[c(T')]
    grad_psi: Optional[np.ndarray]  # float64 (S,S,4) or None in ATTACH mode
    n_sentences: int
    n_impossible: int
    n_slots: int
    grad_theta: Optional[np.ndarray]  # float64 (F,); None when asked for a sparse gradient
    theta_idx: Optional[np.ndarray] = None  # sparse=True: feature ids (may repeat) ...
    theta_val: Optional[np.ndarray] = None  # ... and values of ∂/∂θ WITHOUT the L2 term


def _features_from_groups(hashes: np.ndarray, gid: np.ndarray, props: List[np.ndarray]) -> FeatureIndex:
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


class PunctModel:
    """See the module docstring.  Parameters: ``theta`` (float32, one weight per feature of
    the dictionary) and ``psi`` (float32 ``[S, S, 4]`` channel logits, unused in ATTACH mode)."""

    def __init__(
        self,
        inventory: PunctInventory,
        features: Optional[FeatureConfig] = None,
        mode: str = "full",
        direction: str = "l2r",
        xi: float = 0.0,
        backoff_eps: float = 1e-6,
        smooth_delta: float = 0.0,
        meta: Optional[dict] = None,
        theta_dtype: str = "float32",
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.inventory = inventory
        self.feature_config = features or FeatureConfig()
        self.mode = mode
        self.direction = parse_direction(direction)
        self.xi = float(xi)
        self.backoff_eps = float(backoff_eps)
        self.smooth_delta = float(smooth_delta)
        if not 0.0 <= self.smooth_delta < 1.0:
            raise ValueError(f"smooth_delta must be in [0, 1), not {smooth_delta}")
        self.meta: dict = dict(meta or {})
        if theta_dtype not in THETA_DTYPES:
            raise ValueError(f"theta_dtype must be one of {THETA_DTYPES}, not {theta_dtype!r}")
        self.theta_dtype = theta_dtype  # how θ is stored on disk (in memory it is always float32)
        # the grammar's punctemes are V plus one extra: the single unknown-symbol puncteme
        # (<unk>), used only by evaluation-time smoothing
        self.unk_puncteme = len(inventory.punctemes)
        self.grammar = Grammar(len(inventory.symbols),
                               [[inventory.symbol_id(t) for t in p] for p in inventory.punctemes] + [[1]])
        self.extractor = FeatureExtractor(inventory, self.feature_config)
        self._set_index(FeatureIndex.empty())
        S = self.n_symbols
        self.theta = np.zeros(0, dtype=np.float32)
        self.psi = np.zeros((S, S, 4), dtype=np.float32)
        self.backoff_tok_logp = np.full(S, -np.log(S))
        self.backoff_len_logp = np.log(np.full(2, 0.5))

    # ------------------------------------------------------------------ setup
    @property
    def n_symbols(self) -> int:
        return len(self.inventory.symbols)

    @property
    def n_features(self) -> int:
        return self.index.size

    @property
    def r2l(self) -> bool:
        return is_r2l(self.direction)

    def _set_index(self, index: FeatureIndex) -> None:
        self.index = index
        self.scorer = AttachScorer(self.extractor, index)

    def prepare(self, sentence: PunctSentence, smoothed: bool = False) -> Prepared:
        """Compile one sentence: contexts, lattice, tilt.

        ``smoothed``: for evaluation with ``smooth_delta > 0``, each node's candidates are
        ``W_d`` plus the smoothing pairs (see :meth:`smoothing_pairs`).
        """
        inv = self.inventory
        rel_ids, ptr, units = self.extractor.sentence_units(sentence)
        slot_syms = [[0] + [inv.symbol_id(t) for t in sentence.slots[0]]]
        slot_syms += [[inv.symbol_id(t) for t in sl] for sl in sentence.slots[1:]]
        rt = self._rel_arrays(smoothed)
        cands = [rt.cands[r] for r in rel_ids.tolist()]
        lat = build_lattice(self.grammar, list(sentence.heads), slot_syms, cands)
        tilt = np.zeros(lat.n_candidates, dtype=np.float64)
        extra = share = None
        if lat.n_candidates:
            rel_of = rel_ids[lat.cand_node]
            extra = lat.cand_row >= rt.size[rel_of]
            sel = ~extra
            tilt[sel] = rt.unmatched[rt.offset[rel_of[sel]] + lat.cand_row[sel]]
            if smoothed:
                share = np.where(extra, 1.0 / np.maximum(rt.n_extra[rel_of], 1.0), 0.0)
        if not smoothed:
            extra = None
        return Prepared(sentence, rel_ids, ptr, units, lat, tilt, slot_syms, smoothed, extra, share)

    def _rel_arrays(self, smoothed: bool) -> "_RelArrays":
        """Per-relation candidate arrays, sizes, smoothing counts and flat ``unmatched`` flags,
        cached (they depend only on the inventory; rebuilt when a new relation is interned)."""
        cache = self.__dict__.setdefault("_rel_cache", {})
        tables = self.extractor.rel_tables
        got = cache.get(smoothed)
        if got is None or len(got.cands) != len(tables):
            sizes = np.array([t.size for t in tables], dtype=np.int64)
            offset = np.zeros(len(tables), dtype=np.int64)
            if len(tables) > 1:
                np.cumsum(sizes[:-1], out=offset[1:])
            if smoothed:
                extras = [self.smoothing_pairs(r) for r in range(len(tables))]
                cands = [np.concatenate([t.pairs, e]) for t, e in zip(tables, extras)]
                n_extra = np.array([len(e) for e in extras], dtype=np.float64)
            else:
                cands = [t.pairs for t in tables]
                n_extra = np.zeros(len(tables), dtype=np.float64)
            unm = np.concatenate([t.unmatched for t in tables]) if tables else np.zeros(0)
            got = cache[smoothed] = _RelArrays(cands, sizes, offset, n_extra, unm)
        return got

    def prepare_all(self, sentences: Sequence[PunctSentence], smoothed: bool = False) -> List[Prepared]:
        return [self.prepare(s, smoothed) for s in sentences]

    def prepare_eval(self, sentences: Sequence[PunctSentence]) -> List[Prepared]:
        """Sentences compiled for :meth:`perplexity` (smoothed iff ``smooth_delta > 0``)."""
        return self.prepare_all(sentences, smoothed=self.smooth_delta > 0)

    def smoothing_pairs(self, rid: int) -> np.ndarray:
        """``{(p, ε), (ε, p) : p ∈ V ∪ {<unk>}}`` minus the relation's ``W_d``: the pairs that
        evaluation-time smoothing adds, so that any slot string in ``V`` can be produced at any
        slot.  ``<unk>`` is the one-token puncteme of the unknown-symbol class (punctuation
        types never seen in training), as in language-model perplexity with an UNK token."""
        cache = self.__dict__.setdefault("_smooth_cache", {})
        got = cache.get(rid)
        if got is None:
            have = {tuple(p) for p in self.extractor.rel_tables[rid].pairs.tolist()}
            V = len(self.inventory.punctemes) + 1  # + the <unk> puncteme
            extra = [(p, 0) for p in range(1, V) if (p, 0) not in have]
            extra += [(0, p) for p in range(1, V) if (0, p) not in have]
            got = cache[rid] = np.array(extra, dtype=np.int64).reshape(-1, 2)
        return got

    def initialize(self, train: Sequence[Prepared], seed: int = 0, theta_scale: float = 0.0,
                   psi_scale: float = 1.0, psi_keep_bias: float = 0.0) -> None:
        """Build the feature dictionary and the back-off model from training data, and draw
        the initial parameters (θ ~ N(0, theta_scale²), ψ ~ N(0, psi_scale²); paper: both 1).
        ``psi_keep_bias`` is added to every ``keep`` logit, starting the channel near the identity."""
        self._set_index(self._collect_features(train))
        rng = np.random.default_rng(seed)
        F = self.n_features
        self.theta = np.zeros(F, dtype=np.float32)
        if theta_scale:
            self.theta[:] = (rng.standard_normal(F) * theta_scale).astype(np.float32)
        self.psi = init_psi(self.n_symbols, rng, psi_scale) if psi_scale else \
            np.zeros((self.n_symbols, self.n_symbols, 4), dtype=np.float32)
        if psi_keep_bias:
            self.psi[..., 0] += np.float32(psi_keep_bias)
        self._fit_backoff([p.slot_syms for p in train])

    def _collect_features(self, train: Sequence[Prepared]) -> FeatureIndex:
        """Keys of every (context unit, pair property) on a supported (node, pair) of ``train``.

        Supported = a candidate of the node's lattice, i.e. a pair whose non-empty halves
        land on non-empty surface slots.  So a node's supported pairs are one of four subsets
        of ``W_d``, fixed by which of its two boundary slots are empty.  Each unit records in a
        4-bit mask which subsets its nodes had; the features are made per (relation, mask)
        group, so memory follows the number of units and features, never candidates × units.
        """
        ex = self.extractor
        masks = np.zeros(ex.n_units, dtype=np.uint8)
        for prep in train:
            if prep.smoothed:
                raise ValueError("smoothed (evaluation) sentences cannot be used for training")
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
        return _features_from_groups(hashes, gid, props)

    def _fit_backoff(self, slot_syms: Sequence[Sequence[Sequence[int]]]) -> None:
        S = self.n_symbols
        tok = np.ones(S, dtype=np.float64)
        tok[0] = 0.0  # '^' is never generated by q (it is always there)
        lens: Dict[int, int] = {}
        for slots in slot_syms:
            for i, x in enumerate(slots):
                body = x[1:] if i == 0 else x
                lens[len(body)] = lens.get(len(body), 0) + 1
                for s in body:
                    tok[s] += 1
        with np.errstate(divide="ignore"):  # '^' gets log 0
            self.backoff_tok_logp = np.log(tok / tok.sum())
        lmax = max(lens) if lens else 0
        cnt = np.ones(lmax + 2, dtype=np.float64)  # add-one over 0..lmax plus a tail bucket
        for k, c in lens.items():
            cnt[k] += c
        self.backoff_len_logp = np.log(cnt / cnt.sum())

    def backoff_log_q(self, prep: Prepared) -> float:
        """log q(x) of the tree-independent back-off model."""
        tl, ll = self.backoff_tok_logp, self.backoff_len_logp
        lmax = len(ll) - 2
        total = 0.0
        for i, x in enumerate(prep.slot_syms):
            body = x[1:] if i == 0 else x
            m = len(body)
            if m <= lmax:
                total += ll[m]
            else:  # geometric tail beyond the longest training slot
                total += ll[lmax + 1] + (m - lmax) * np.log(0.5)
            total += float(sum(tl[s] for s in body))
        return total

    # ---------------------------------------------------------------- scoring
    def phi(self) -> np.ndarray:
        """The channel tables ``φ = softmax(ψ)`` (float64 ``[S, S, 4]``; a fresh copy)."""
        return self._phi().copy()

    def _phi(self) -> np.ndarray:
        """``φ``, cached until ψ, the mode or the direction changes: the cache compares ψ with a
        saved copy (tens of µs against the softmax's ms), so in-place edits of ψ are seen.
        Shared between calls: callers must not modify it."""
        key = (self.mode, self.r2l, self.n_symbols)
        got = self.__dict__.get("_phi_cache")
        if got is not None and got[0] == key and (self.mode == "attach" or (
                got[1].shape == self.psi.shape and got[1].dtype == self.psi.dtype
                and np.array_equal(got[1], self.psi))):
            return got[2]
        if self.mode == "attach":
            phi = identity_channel(self.n_symbols)
        else:
            phi = channel_probs(self.psi, bos_edit_mask(self.n_symbols, self.r2l))
        self._phi_cache = (key, None if self.mode == "attach" else np.array(self.psi, copy=True), phi)
        return phi

    def _forward(self, batch: Sequence[Prepared], fast: bool = False
                 ) -> Tuple[AttachForward, List[np.ndarray], np.ndarray]:
        rel = np.concatenate([p.rel_ids for p in batch])
        ptrs, units, off = [np.zeros(1, dtype=np.int64)], [], 0
        for p in batch:
            ptrs.append(p.unit_ptr[1:] + off)
            units.append(p.units)
            off += int(p.unit_ptr[-1])
        ptr = np.concatenate(ptrs)
        scorer_forward = self.scorer.forward_fast if fast else self.scorer.forward
        fwd = scorer_forward(self.theta, rel, ptr, np.concatenate(units))
        node_start = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum([p.n for p in batch], out=node_start[1:])
        pos = []
        for b, p in enumerate(batch):
            ps = fwd.node_off[node_start[b] + p.lattice.cand_node] + p.lattice.cand_row
            if p.smoothed:
                ps = np.where(p.cand_extra, -1, ps)
            pos.append(ps)
        return fwd, pos, node_start

    def _cand_p(self, fwd: AttachForward, prep: Prepared, ps: np.ndarray) -> np.ndarray:
        """The lattice candidates' probabilities (smoothed mixture for smoothed sentences)."""
        if not prep.smoothed:
            return np.exp(fwd.logp[ps])
        d = self.smooth_delta
        base = np.exp(fwd.logp[np.where(prep.cand_extra, 0, ps)])
        return np.where(prep.cand_extra, d * prep.cand_share, (1.0 - d) * base)

    def log_probs(self, batch: Sequence[Prepared], backoff: bool = False,
                  chunk: int = 64) -> np.ndarray:
        """log p(x|T) per sentence (``-inf`` if impossible); with ``backoff`` the mixture p'."""
        out = np.empty(len(batch), dtype=np.float64)
        phi = self._phi()
        for a in range(0, len(batch), chunk):
            part = batch[a:a + chunk]
            fwd, pos, _ = self._forward(part)
            for j, (prep, ps) in enumerate(zip(part, pos)):
                cand_p = self._cand_p(fwd, prep, ps)
                out[a + j] = dp_log_prob(prep.lattice, self.grammar, cand_p, phi, self.r2l)
        if backoff:
            eps = self.backoff_eps
            q = np.array([self.backoff_log_q(p) for p in batch])
            out = np.logaddexp(np.log1p(-eps) + out, np.log(eps) + q)
        return out

    def log_prob(self, sentence: Union[PunctSentence, Prepared], backoff: bool = False) -> float:
        prep = sentence if isinstance(sentence, Prepared) else self.prepare(sentence)
        return float(self.log_probs([prep], backoff=backoff)[0])

    def perplexity(self, batch: Sequence[Prepared]) -> dict:
        """Per-slot perplexity (docs/model.md §5) with the back-off mixture, plus the exact figure
        over the sentences the model can generate."""
        lp = self.log_probs(batch)
        possible = np.isfinite(lp)
        slots = np.array([p.n_slots for p in batch], dtype=np.float64)
        eps = self.backoff_eps
        q = np.array([self.backoff_log_q(p) for p in batch])
        mix = np.logaddexp(np.log1p(-eps) + lp, np.log(eps) + q)
        n_slots = float(slots.sum())
        res = {
            "perplexity_per_slot": float(np.exp(-mix.sum() / n_slots)) if n_slots else float("nan"),
            "perplexity_per_slot_possible": (float(np.exp(-lp[possible].sum() / slots[possible].sum()))
                                             if possible.any() else float("nan")),
            "log_prob": float(mix.sum()),
            "n_sentences": len(batch),
            "n_slots": int(n_slots),
            "n_impossible": int((~possible).sum()),
        }
        return res

    def objective_and_gradient(self, batch: Sequence[Prepared], l2: float = 0.0,
                               xi: Optional[float] = None, sparse: bool = False,
                               fast: bool = True, theta_sq: Optional[float] = None) -> ObjectiveResult:
        """The regularised objective of a batch and its exact gradient wrt θ and ψ (float64).

        ``sparse=True`` (for the trainer; θ is large): ``grad_theta`` is None and
        ``theta_idx``/``theta_val`` hold the data part of ∂/∂θ (distinct ids when ``fast``);
        the caller adds ``−2·l2·θ``.  ``fast=False`` runs the NumPy formulation (the
        reference: equal up to float64 rounding).  ``theta_sq`` (sparse only): ‖θ‖² as the
        trainer keeps it up to date, used for the reported L2 term instead of a pass over θ.
        """
        if fast:
            return self._objective_fast(batch, l2, xi, sparse, theta_sq)
        xi = self.xi if xi is None else float(xi)
        if any(p.smoothed for p in batch):
            raise ValueError("smoothed (evaluation) sentences cannot be used for training")
        fwd, pos, node_start = self._forward(batch)
        p = np.exp(fwd.logp)
        G = np.zeros_like(p)
        phi = self._phi()
        full = self.mode == "full"
        gpsi = np.zeros(phi.shape, dtype=np.float64) if full else None
        loglik = 0.0
        e_unm = 0.0
        obj = 0.0
        n_imp = 0
        n_slots = 0
        for b, (prep, ps) in enumerate(zip(batch, pos)):
            lat = prep.lattice
            cand_p = p[ps]
            use_tilt = xi > 0 and bool(prep.tilt.any())
            res = inside_outside(lat, self.grammar, cand_p, phi, self.r2l, grad=True,
                                 tilt=prep.tilt if use_tilt else None)
            if not np.isfinite(res.logZ):
                n_imp += 1
                continue
            n_slots += prep.n_slots
            loglik += res.logZ
            obj += res.logZ
            a, z = fwd.node_off[node_start[b]], fwd.node_off[node_start[b + 1]]
            G[a:z] -= p[a:z]
            np.add.at(G, ps, res.mu)
            counts = res.counts
            if use_tilt:
                ec = float(res.mu @ prep.tilt)
                e_unm += ec
                obj -= xi * ec * ec
                np.add.at(G, ps, -2.0 * xi * ec * res.dmu)
                if full:
                    counts = counts - 2.0 * xi * ec * res.dcounts
            if full:
                gpsi += channel_grad(phi, counts)
        t_idx = t_val = gtheta = None
        if sparse:
            t_idx, t_val = self.scorer.backward_sparse(fwd, G)
        else:
            gtheta = self.scorer.backward(fwd, G)
        if l2:
            if gtheta is not None:
                th = self.theta.astype(np.float64)
                obj -= l2 * float(th @ th)
                gtheta -= 2.0 * l2 * th
            else:  # trainer path: the value is only reported, float32 accumulation is fine
                obj -= l2 * float(np.dot(self.theta, self.theta))
            if full:
                ps64 = self.psi.astype(np.float64)
                obj -= l2 * float((ps64 * ps64).sum())
                gpsi -= 2.0 * l2 * ps64
        return ObjectiveResult(obj, loglik, e_unm, gpsi, len(batch), n_imp, n_slots, gtheta, t_idx, t_val)

    def _objective_fast(self, batch: Sequence[Prepared], l2: float, xi: Optional[float],
                        sparse: bool, theta_sq: Optional[float] = None) -> ObjectiveResult:
        """:meth:`objective_and_gradient` with the compiled ATTACH loops, one scatter of the
        posteriors per batch and one channel gradient per batch (it is linear in the counts)."""
        xi = self.xi if xi is None else float(xi)
        if any(p.smoothed for p in batch):
            raise ValueError("smoothed (evaluation) sentences cannot be used for training")
        fwd, pos, node_start = self._forward(batch, fast=True)
        p = np.exp(fwd.logp)
        phi = self._phi()
        full = self.mode == "full"
        counts_sum = np.zeros(phi.shape, dtype=np.float64) if full else None
        loglik = e_unm = obj = 0.0
        n_imp = n_slots = 0
        idx_parts, val_parts = [], []
        keep = np.zeros(len(fwd.logp), dtype=bool)
        phi = _check_phi(self.grammar, phi)
        for b, (prep, ps) in enumerate(zip(batch, pos)):
            use_tilt = xi > 0 and bool(prep.tilt.any())
            # untilted counts go straight into the batch's sum
            res = inside_outside(prep.lattice, self.grammar, p[ps], phi, self.r2l, grad=True,
                                 tilt=prep.tilt if use_tilt else None, phi_checked=True,
                                 counts_out=counts_sum if full and not use_tilt else None)
            if not np.isfinite(res.logZ):
                n_imp += 1
                continue
            n_slots += prep.n_slots
            loglik += res.logZ
            obj += res.logZ
            keep[fwd.node_off[node_start[b]]:fwd.node_off[node_start[b + 1]]] = True
            idx_parts.append(ps)
            counts = res.counts
            if use_tilt:
                ec = float(res.mu @ prep.tilt)
                e_unm += ec
                obj -= xi * ec * ec
                val_parts.append(res.mu - 2.0 * xi * ec * res.dmu)
                if full:
                    counts = counts - 2.0 * xi * ec * res.dcounts
                if full:
                    counts_sum += counts
            else:
                val_parts.append(res.mu)
        G = np.where(keep, -p, 0.0)
        if idx_parts:
            G += np.bincount(np.concatenate(idx_parts), weights=np.concatenate(val_parts),
                             minlength=len(G))
        gpsi = channel_grad(phi, counts_sum) if full else None
        t_idx, t_val = self.scorer.backward_fast(fwd, G)
        gtheta = None
        if not sparse:
            gtheta = np.zeros(self.n_features, dtype=np.float64)
            gtheta[t_idx] = t_val
            t_idx = t_val = None
        if l2:
            if gtheta is not None:
                th = self.theta.astype(np.float64)
                obj -= l2 * float(th @ th)
                gtheta -= 2.0 * l2 * th
            elif theta_sq is not None:  # trainer path: the value is only reported
                obj -= l2 * float(theta_sq)
            else:
                obj -= l2 * float(np.dot(self.theta, self.theta))
            if full:
                ps64 = self.psi.astype(np.float64)
                obj -= l2 * float((ps64 * ps64).sum())
                gpsi -= 2.0 * l2 * ps64
        return ObjectiveResult(obj, loglik, e_unm, gpsi, len(batch), n_imp, n_slots, gtheta, t_idx, t_val)

    def puncteme(self, pid: int) -> Tuple[str, ...]:
        """The tokens of grammar puncteme ``pid`` (``("<unk>",)`` for the smoothing-only one)."""
        pm = self.inventory.punctemes
        return pm[pid] if pid < len(pm) else (self.inventory.symbols[1],)

    def best_underlying(self, sentence: Union[PunctSentence, Prepared]
                        ) -> Optional[List[Tuple[Tuple[str, ...], Tuple[str, ...]]]]:
        """The best derivation's ``(l, r)`` puncteme per node, or None if ``p(x|T) = 0``."""
        prep = sentence if isinstance(sentence, Prepared) else self.prepare(sentence)
        fwd, pos, _ = self._forward([prep])
        cand_p = self._cand_p(fwd, prep, pos[0])
        logbest, best = viterbi(prep.lattice, self.grammar, cand_p, self._phi(), self.r2l)
        if not np.isfinite(logbest):
            return None
        lat = prep.lattice
        return [(self.puncteme(int(lat.cand_l[k])), self.puncteme(int(lat.cand_r[k]))) for k in best]

    def analyze(self, sentences: Sequence[PunctSentence], chunk: int = 256
                ) -> List[Tuple[Optional[List[Tuple[Tuple[str, ...], Tuple[str, ...]]]], float]]:
        """Per sentence, what the ``punctgen`` component reports: the best derivation's pairs
        (:meth:`best_underlying` of the unsmoothed model, None if ``p(x|T) = 0``) and
        ``log p'(x|T)`` (:meth:`log_probs` of :meth:`prepare_eval`, with ``backoff``).

        Each sentence is compiled once (smoothed when ``smooth_delta > 0``; the unsmoothed
        lattice is that lattice without the smoothing pairs) and ATTACH-scored once for a
        whole chunk of sentences; the results equal the separate calls.
        """
        out: List[Tuple[Optional[list], float]] = []
        smoothed = self.smooth_delta > 0
        phi, g, r2l = self._phi(), self.grammar, self.r2l
        n_pm = len(g.punctemes)
        eps = self.backoff_eps
        for a in range(0, len(sentences), max(1, int(chunk))):
            preps = [self.prepare(s, smoothed) for s in sentences[a:a + chunk]]
            fwd, pos, _ = self._forward(preps)
            lp = np.empty(len(preps), dtype=np.float64)
            bests = []
            for j, (prep, ps) in enumerate(zip(preps, pos)):
                lat = prep.lattice
                lp[j] = dp_log_prob(lat, g, self._cand_p(fwd, prep, ps), phi, r2l)
                if smoothed and lat.n_candidates:
                    plain = ~prep.cand_extra
                    lat, ps = restrict_lattice(lat, plain, n_pm), ps[plain]
                logbest, best = viterbi(lat, g, np.exp(fwd.logp[ps]), phi, r2l)
                bests.append([(self.puncteme(int(lat.cand_l[k])), self.puncteme(int(lat.cand_r[k])))
                              for k in best] if np.isfinite(logbest) else None)
            q = np.array([self.backoff_log_q(p) for p in preps])
            lp = np.logaddexp(np.log1p(-eps) + lp, np.log(eps) + q)
            out.extend(zip(bests, lp.tolist()))
        return out

    def node_distribution(self, sentence: Union[PunctSentence, Prepared], w: int
                          ) -> List[Tuple[Tuple[str, ...], Tuple[str, ...], float]]:
        """``p_θ(l, r | w)`` over ``W_d(w)`` for node ``w``, most probable first."""
        prep = sentence if isinstance(sentence, Prepared) else self.prepare(sentence)
        fwd, _, _ = self._forward([prep])
        a, z = fwd.node_off[w], fwd.node_off[w + 1]
        pairs = self.extractor.rel_tables[int(prep.rel_ids[w])].pairs
        pm = self.inventory.punctemes
        out = [(pm[int(l)], pm[int(r)], float(np.exp(v))) for (l, r), v in zip(pairs, fwd.logp[a:z])]
        return sorted(out, key=lambda t: -t[2])

    # ---------------------------------------------------------- persistence
    def compacted(self, threshold: float = 0.0, float16: bool = False) -> "PunctModel":
        """A copy without the features whose ``|θ| <= threshold`` (they then weigh 0), with θ
        rounded to float16 (and stored so) if ``float16``.  For shipping: the caller checks that
        predictions stay within its tolerance.  The copy shares the feature extractor, so
        sentences prepared for this model stay valid for it."""
        keep = np.abs(self.theta) > threshold
        clone = PunctModel.__new__(PunctModel)
        clone.__dict__.update(self.__dict__)
        clone._set_index(FeatureIndex(self.index.ctx[keep], self.index.prop[keep]))
        theta = self.theta[keep]
        if float16:
            theta = theta.astype(np.float16).astype(np.float32)
        clone.theta = np.ascontiguousarray(theta, dtype=np.float32)
        clone.psi = self.psi.copy()
        clone.meta = dict(self.meta)
        clone.theta_dtype = "float16" if float16 else self.theta_dtype
        return clone

    def _cfg(self) -> dict:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "mode": self.mode,
            "direction": self.direction,
            "xi": self.xi,
            "backoff_eps": self.backoff_eps,
            "smooth_delta": self.smooth_delta,
            "features": self.feature_config.to_dict(),
            "n_features": self.n_features,
            "n_symbols": self.n_symbols,
            "theta_dtype": self.theta_dtype,
            "meta": self.meta,
        }

    def _params(self) -> Dict[str, np.ndarray]:
        """The arrays of params.npz.  The sorted feature dictionary is stored factorised: the
        distinct context hashes with their feature counts, and per feature the index of its
        property hash among the distinct ones (a few thousand)."""
        ctx, prop = self.index.ctx, self.index.prop
        # = np.unique(ctx, return_counts=True) and np.unique(prop, return_inverse=True), without
        # their sorted copies of 16 M-entry arrays (ctx is sorted; prop has few distinct values)
        starts = np.flatnonzero(np.concatenate([[True], ctx[1:] != ctx[:-1]])) if ctx.size else \
            np.zeros(0, dtype=np.int64)
        ctx_keys = ctx[starts]
        ctx_counts = np.diff(np.append(starts, ctx.size))
        prop_keys = np.unique(prop)
        idx_dtype = np.uint16 if prop_keys.size <= 1 << 16 else np.uint32
        prop_idx = np.searchsorted(prop_keys, prop).astype(idx_dtype)
        return {
            "theta": np.ascontiguousarray(self.theta, dtype=np.dtype(self.theta_dtype)),
            "psi": np.ascontiguousarray(self.psi, dtype=np.float32),
            "ctx_keys": np.ascontiguousarray(ctx_keys, dtype=np.uint64),
            "ctx_counts": np.ascontiguousarray(ctx_counts, dtype=np.uint32),
            "prop_keys": np.ascontiguousarray(prop_keys, dtype=np.uint64),
            "prop_idx": np.ascontiguousarray(prop_idx.ravel(), dtype=idx_dtype),
            "backoff_tok_logp": np.ascontiguousarray(self.backoff_tok_logp, dtype=np.float64),
            "backoff_len_logp": np.ascontiguousarray(self.backoff_len_logp, dtype=np.float64),
        }

    @staticmethod
    def _feature_arrays(params: Dict[str, np.ndarray], version: int, F: int, where: str
                        ) -> Tuple[np.ndarray, np.ndarray]:
        """The flat (ctx, prop) hash arrays of the feature dictionary, from either layout."""
        def bad(name):
            return ValueError(f"{where}: array {name!r} has the wrong shape or dtype for this model "
                              f"(n_features={F})")

        if version == 1:
            for name in ("feature_ctx", "feature_prop"):
                if params[name].dtype != np.uint64 or params[name].shape != (F,):
                    raise bad(name)
            return params["feature_ctx"], params["feature_prop"]
        ck, cc, pk, pi = (params[k] for k in ("ctx_keys", "ctx_counts", "prop_keys", "prop_idx"))
        if ck.dtype != np.uint64 or ck.ndim != 1:
            raise bad("ctx_keys")
        if cc.dtype != np.uint32 or cc.shape != ck.shape or int(cc.sum(dtype=np.int64)) != F:
            raise bad("ctx_counts")
        if pk.dtype != np.uint64 or pk.ndim != 1:
            raise bad("prop_keys")
        if pi.dtype not in (np.uint16, np.uint32) or pi.shape != (F,) or (F and int(pi.max()) >= pk.size):
            raise bad("prop_idx")
        return np.repeat(ck, cc.astype(np.int64)), pk[pi.astype(np.int64)]

    @classmethod
    def _build(cls, cfg: dict, inv_data: dict, params: Dict[str, np.ndarray], where: Dict[str, str]
               ) -> "PunctModel":
        if not isinstance(cfg, dict) or cfg.get("format") != FORMAT_NAME:
            raise ValueError(f"{where['cfg']}: not a {FORMAT_NAME} configuration")
        version = cfg.get("version")
        if version not in READABLE_VERSIONS:
            raise ValueError(f"{where['cfg']}: unsupported format version {version!r} "
                             f"(this code reads versions {', '.join(map(str, READABLE_VERSIONS))})")
        try:
            inventory = PunctInventory.from_dict(inv_data)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"{where['inventory']}: bad inventory ({err})") from None
        try:
            model = cls(inventory, FeatureConfig.from_dict(cfg["features"]), mode=cfg["mode"],
                        direction=cfg["direction"], xi=cfg["xi"], backoff_eps=cfg["backoff_eps"],
                        smooth_delta=cfg.get("smooth_delta", 0.0),
                        meta=cfg.get("meta") or {}, theta_dtype=cfg.get("theta_dtype", "float32"))
        except (KeyError, TypeError) as err:
            raise ValueError(f"{where['cfg']}: missing or bad field ({err})") from None
        except ValueError as err:
            raise ValueError(f"{where['cfg']}: {err}") from None
        names = _PARAM_NAMES_V1 if version == 1 else _PARAM_NAMES
        missing = [k for k in names if k not in params]
        if missing:
            raise ValueError(f"{where['params']}: missing arrays {missing}")
        S = model.n_symbols
        F = cfg.get("n_features", -1)
        if not isinstance(F, int) or F < 0:
            raise ValueError(f"{where['cfg']}: bad n_features {F!r}")
        checks = [
            (params["theta"].dtype == np.dtype(model.theta_dtype) and params["theta"].shape == (F,), "theta"),
            (params["psi"].dtype == np.float32 and params["psi"].shape == (S, S, 4), "psi"),
            (params["backoff_tok_logp"].shape == (S,), "backoff_tok_logp"),
            (params["backoff_len_logp"].ndim == 1 and params["backoff_len_logp"].size >= 2, "backoff_len_logp"),
        ]
        for ok, name in checks:
            if not ok:
                raise ValueError(f"{where['params']}: array {name!r} has the wrong shape or dtype "
                                 f"for this model (n_features={F}, n_symbols={S})")
        ctx, prop = cls._feature_arrays(params, version, F, where["params"])
        try:
            model._set_index(FeatureIndex(ctx, prop))
        except ValueError as err:
            raise ValueError(f"{where['params']}: {err}") from None
        model.theta = params["theta"].astype(np.float32)
        model.psi = params["psi"].copy()
        model.backoff_tok_logp = params["backoff_tok_logp"].astype(np.float64)
        model.backoff_len_logp = params["backoff_len_logp"].astype(np.float64)
        return model

    @staticmethod
    def _npz_bytes(params: Dict[str, np.ndarray]) -> bytes:
        """A deterministic, deflated .npz (fixed timestamps, fixed order) readable by ``np.load``."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for name in _PARAM_NAMES:
                arr_buf = io.BytesIO()
                np.lib.format.write_array(arr_buf, params[name], allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                zf.writestr(info, arr_buf.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
        return buf.getvalue()

    @staticmethod
    def _read_npz(data: bytes, where: str) -> Dict[str, np.ndarray]:
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                return {k: npz[k] for k in npz.files}
        except Exception as err:  # zipfile.BadZipFile, ValueError, EOFError, OSError...
            raise ValueError(f"{where}: unreadable or truncated parameter file ({type(err).__name__}: {err})") from None

    def to_bytes(self) -> bytes:
        """Serialise (deterministic): cfg, inventory and parameters in one msgpack blob."""
        import srsly

        return srsly.msgpack_dumps({
            "cfg": json.dumps(self._cfg(), sort_keys=True, ensure_ascii=False),
            "inventory": json.dumps(self.inventory.to_dict(), sort_keys=True, ensure_ascii=False),
            "params": self._npz_bytes(self._params()),
        })

    @classmethod
    def from_bytes(cls, data: bytes) -> "PunctModel":
        import srsly

        try:
            blob = srsly.msgpack_loads(data)
            cfg = json.loads(blob["cfg"])
            inv = json.loads(blob["inventory"])
            raw = blob["params"]
        except Exception as err:
            raise ValueError(f"model bytes: unreadable ({type(err).__name__}: {err})") from None
        where = {"cfg": "model bytes (cfg)", "inventory": "model bytes (inventory)", "params": "model bytes (params)"}
        return cls._build(cfg, inv, cls._read_npz(raw, where["params"]), where)

    def to_disk(self, path: Union[str, Path]) -> Path:
        """Write ``cfg.json``, ``inventory.json`` and ``params.npz`` into directory ``path``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / CFG_FILE).write_text(json.dumps(self._cfg(), sort_keys=True, ensure_ascii=False, indent=2) + "\n",
                                     encoding="utf-8")
        (path / INVENTORY_FILE).write_text(json.dumps(self.inventory.to_dict(), sort_keys=True,
                                                      ensure_ascii=False) + "\n", encoding="utf-8")
        (path / PARAMS_FILE).write_bytes(self._npz_bytes(self._params()))
        return path

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "PunctModel":
        path = Path(path)
        if not path.is_dir():
            raise ValueError(f"{path}: not a model directory")
        files = {k: path / f for k, f in (("cfg", CFG_FILE), ("inventory", INVENTORY_FILE), ("params", PARAMS_FILE))}
        for f in files.values():
            if not f.is_file():
                raise ValueError(f"{f}: missing model file")
        loaded = {}
        for k in ("cfg", "inventory"):
            try:
                loaded[k] = json.loads(files[k].read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise ValueError(f"{files[k]}: unreadable or truncated JSON ({err})") from None
        params = cls._read_npz(files["params"].read_bytes(), str(files["params"]))
        return cls._build(loaded["cfg"], loaded["inventory"], params, {k: str(v) for k, v in files.items()})
