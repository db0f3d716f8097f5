"""The trainable punctuation model: ATTACH (θ) + NOISYCHANNEL (ψ) + the exact DP.

Why one class: training, evaluation, the spaCy component and the CLI all need
the same four things -- the inventory, the feature dictionary, the parameters
and the channel direction -- kept together and saved together.  The class holds
them and compiles sentences (:meth:`PunctModel.prepare`); the rest lives beside it:

* :mod:`.objective` -- the training objective and its gradient (docs/model.md §4);
* :mod:`.backoff` -- the back-off mixture for held-out sentences;
* :mod:`.analysis` -- best underlying punctuation, the component's report, node distributions;
* :mod:`.serialize` -- the saved-model format (``to_disk``/``to_bytes`` and back);
* :mod:`.dictionary` -- building the feature dictionary from training data;
* :mod:`.attach`, :mod:`.channel`, :mod:`.features` -- ATTACH, the channel, the feature templates.

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
   tree-independent model (:mod:`.backoff`).

``perplexity()`` reports the mixture figure, the exact figure over possible
sentences, and how many sentences needed the mixture (``n_impossible``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors
from spacy_punctgen.data.trees import forest, tree_structure
from spacy_punctgen.inference.kernels import segment_sums
from spacy_punctgen.inference.dp import Grammar, Lattice, build_lattice_tables, log_prob as dp_log_prob
from spacy_punctgen.model import analysis, serialize
from spacy_punctgen.model.attach import AttachForward, AttachScorer, Backprop
from spacy_punctgen.model.backoff import backoff_log_q, backoff_mixture, fit_backoff
from spacy_punctgen.model.channel import (bos_edit_mask, channel_probs, identity_channel, init_psi, is_r2l,
                                          parse_direction)
from spacy_punctgen.features.dictionary import collect_features
from spacy_punctgen.features.templates import FeatureConfig, FeatureExtractor, FeatureIndex
from spacy_punctgen.model.objective import ObjectiveResult, objective_and_gradient
from spacy_punctgen.model.serialize import CFG_FILE, FORMAT_VERSION, INVENTORY_FILE, PARAMS_FILE  # noqa: F401

__all__ = ["PunctModel", "Prepared", "ObjectiveResult", "CFG_FILE", "INVENTORY_FILE", "PARAMS_FILE",
           "FORMAT_VERSION"]

MODES = ("full", "attach")
THETA_DTYPES = ("float32", "float16")


@dataclass
class Prepared:
    """One sentence compiled for training/scoring (depends on data and inventory, never on θ/ψ)."""

    sentence: PunctSentence
    rel_ids: np.ndarray  # int64 (n,)
    unit_ptr: np.ndarray  # int64 (n+1,)
    units: np.ndarray  # int64 (E,)
    lattice: Lattice
    tilt: Optional[np.ndarray]  # float64 (K,): 1.0 for lattice candidates holding an unmatched mark
    # (None when prepared with ``tilt=False``: analysis never reads it)
    slot_syms: List[Tuple[int, ...]]  # per slot its symbol ids (slot 0 starts with ^ = 0)
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
    tab_ptr: np.ndarray  # int64 (R+1,): relation r's candidates are rows tab_ptr[r]:tab_ptr[r+1] of tab_pairs
    tab_pairs: np.ndarray  # int64 (Σ len(cands), 2): ``cands``, concatenated


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
            raise ValueError(Errors.E200.format(modes=MODES, mode=mode))
        self.inventory = inventory
        self.feature_config = features or FeatureConfig()
        self.mode = mode
        self.direction = parse_direction(direction)
        self.xi = float(xi)
        if not np.isfinite(self.xi):
            raise ValueError(Errors.E225.format(xi=xi))
        self.backoff_eps = float(backoff_eps)
        if not 0.0 <= self.backoff_eps < 1.0:  # also refuses NaN
            raise ValueError(Errors.E224.format(backoff_eps=backoff_eps))
        self.smooth_delta = float(smooth_delta)
        if not 0.0 <= self.smooth_delta < 1.0:
            raise ValueError(Errors.E201.format(smooth_delta=smooth_delta))
        self.meta: dict = dict(meta or {})
        #: the lexical expert restoration multiplies in (model/lexical.py), saved beside the model; None: none
        self.lexical = None
        if theta_dtype not in THETA_DTYPES:
            raise ValueError(Errors.E202.format(dtypes=THETA_DTYPES, theta_dtype=theta_dtype))
        self.theta_dtype = theta_dtype  # how θ is stored on disk (in memory it is always float32)
        # the grammar's punctemes are V plus one extra: the single unknown-symbol puncteme
        # (<unk>), used only by evaluation-time smoothing
        self.unk_puncteme = len(inventory.punctemes)
        self.grammar = Grammar(len(inventory.symbols),
                               [[inventory.symbol_id(t) for t in p] for p in inventory.punctemes] + [[1]])
        self.extractor = FeatureExtractor(inventory, self.feature_config)
        self.set_index(FeatureIndex.empty())
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

    def set_index(self, index: FeatureIndex) -> None:
        """Use the feature dictionary ``index`` (θ must then have one weight per entry): the
        scorer over it is rebuilt."""
        self.index = index
        self.scorer = AttachScorer(self.extractor, index)

    def prepare(self, sentence: PunctSentence, smoothed: bool = False, tilt: bool = True) -> Prepared:
        """Compile one sentence: contexts, lattice, tilt.

        ``smoothed``: for evaluation with ``smooth_delta > 0``, each node's candidates are
        ``W_d`` plus the smoothing pairs (see :meth:`smoothing_pairs`).  ``tilt=False``: the
        tilt (only the training objective reads it) is left None.  A sentence with ``observed``
        flags (restoration conditioned on the marks a text has) gets a lattice whose other slots
        are free (:attr:`~spacy_punctgen.inference.dp.Lattice.free`).
        """
        inv = self.inventory
        heads = list(sentence.heads)
        try:  # one traversal of the tree for the features and the lattice
            fo = forest(heads)
            structure = tree_structure(heads, fo)
        except ValueError:  # build_lattice names the fault (after checking the slots)
            fo = structure = None
        rel_ids, ptr, units = self.extractor.sentence_units(sentence, fo)
        sym = inv.symbol_id
        # tuples: the collector untracks them at once (lists of every analysed sentence's
        # slots were promoted to its oldest generation, and made it walk the whole process)
        slot_syms = [(0, *map(sym, sentence.slots[0]))]
        slot_syms += [tuple(map(sym, sl)) if sl else () for sl in sentence.slots[1:]]
        rt = self._rel_arrays(smoothed)
        # restoration conditioned on a text's own marks: the slots it did not write are free
        free = None if sentence.observed is None else [not o for o in sentence.observed]
        lat = build_lattice_tables(self.grammar, heads, slot_syms, rel_ids, rt.tab_ptr, rt.tab_pairs, structure,
                                   free)
        tilt_arr = np.zeros(lat.n_candidates, dtype=np.float64) if tilt else None
        extra = share = None
        if lat.n_candidates and (tilt or smoothed):
            rel_of = rel_ids[lat.cand_node]
            extra = lat.cand_row >= rt.size[rel_of]
            if tilt:
                sel = ~extra
                tilt_arr[sel] = rt.unmatched[rt.offset[rel_of[sel]] + lat.cand_row[sel]]
            if smoothed:
                share = np.where(extra, 1.0 / np.maximum(rt.n_extra[rel_of], 1.0), 0.0)
        if not smoothed:
            extra = None
        return Prepared(sentence, rel_ids, ptr, units, lat, tilt_arr, slot_syms, smoothed, extra, share)

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
            tab_ptr = np.zeros(len(cands) + 1, dtype=np.int64)
            np.cumsum([len(c) for c in cands], out=tab_ptr[1:])
            tab_pairs = np.ascontiguousarray(np.concatenate(cands) if cands else np.zeros((0, 2)), dtype=np.int64)
            got = cache[smoothed] = _RelArrays(cands, sizes, offset, n_extra, unm, tab_ptr, tab_pairs.reshape(-1, 2))
        return got

    def as_prepared(self, sentence: Union[PunctSentence, "Prepared"]) -> "Prepared":
        """``sentence`` compiled (:meth:`prepare`), or itself if it already is."""
        return sentence if isinstance(sentence, Prepared) else self.prepare(sentence)

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
        self.set_index(self._collect_features(train))
        rng = np.random.default_rng(seed)
        F = self.n_features
        self.theta = np.zeros(F, dtype=np.float32)
        if theta_scale:
            self.theta[:] = (rng.standard_normal(F) * theta_scale).astype(np.float32)
        self.psi = init_psi(self.n_symbols, rng, psi_scale) if psi_scale else \
            np.zeros((self.n_symbols, self.n_symbols, 4), dtype=np.float32)
        if psi_keep_bias:
            self.psi[..., 0] += np.float32(psi_keep_bias)
        self.backoff_tok_logp, self.backoff_len_logp = fit_backoff([p.slot_syms for p in train], self.n_symbols)

    def _collect_features(self, train: Sequence[Prepared]) -> FeatureIndex:
        """The feature dictionary of ``train`` (:func:`.dictionary.collect_features`)."""
        return collect_features(self.extractor, train)

    def backoff_log_q(self, prep: Prepared) -> float:
        """log q(x) of the tree-independent back-off model (:mod:`.backoff`)."""
        return backoff_log_q(self.backoff_tok_logp, self.backoff_len_logp, prep.slot_syms)

    def backoff_log_qs(self, batch: Sequence[Prepared]) -> np.ndarray:
        """:meth:`backoff_log_q` of every sentence of ``batch``."""
        return np.array([self.backoff_log_q(p) for p in batch])

    # ---------------------------------------------------------------- scoring
    def phi(self) -> np.ndarray:
        """The channel tables ``φ = softmax(ψ)`` (float64 ``[S, S, 4]``; a fresh copy)."""
        return self.shared_phi().copy()

    def shared_phi(self) -> np.ndarray:
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

    def _nodes(self, batch: Sequence[Prepared]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The batch's nodes for ATTACH: relation ids and context units in CSR form."""
        rel = np.concatenate([p.rel_ids for p in batch])
        ptrs, units, off = [np.zeros(1, dtype=np.int64)], [], 0
        for p in batch:
            ptrs.append(p.unit_ptr[1:] + off)
            units.append(p.units)
            off += int(p.unit_ptr[-1])
        return rel, np.concatenate(ptrs), np.concatenate(units)

    def _positions(self, fwd: AttachForward, batch: Sequence[Prepared]) -> Tuple[List[np.ndarray], np.ndarray]:
        """Per sentence, where its lattice candidates' scores are in ``fwd`` (-1: a smoothing
        pair), and the index of each sentence's first node."""
        node_start = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum([p.n for p in batch], out=node_start[1:])
        pos = []
        for b, p in enumerate(batch):
            ps = fwd.node_off[node_start[b] + p.lattice.cand_node] + p.lattice.cand_row
            if p.smoothed:
                ps = np.where(p.cand_extra, -1, ps)
            pos.append(ps)
        return pos, node_start

    def forward(self, batch: Sequence[Prepared], reference: bool = False
                ) -> Tuple[AttachForward, List[np.ndarray], np.ndarray]:
        """ATTACH's scores of a batch, with :meth:`_positions`: compiled
        (:meth:`.AttachScorer.score`), or with ``reference`` the NumPy
        :meth:`.AttachScorer.predict` (equal to the bit, and with the ``groups`` that the NumPy
        backward of the tests reads)."""
        nodes = self._nodes(batch)
        fwd = self.scorer.predict(self.theta, *nodes) if reference else self.scorer.score(self.theta, *nodes)
        pos, node_start = self._positions(fwd, batch)
        return fwd, pos, node_start

    def begin_update(self, batch: Sequence[Prepared]
                     ) -> Tuple[AttachForward, Backprop, List[np.ndarray], np.ndarray]:
        """:meth:`forward` for training: the compiled scores and their ``backprop``
        (:meth:`.AttachScorer.begin_update`)."""
        fwd, backprop = self.scorer.begin_update(self.theta, *self._nodes(batch))
        pos, node_start = self._positions(fwd, batch)
        return fwd, backprop, pos, node_start

    def candidate_probs(self, fwd: AttachForward, prep: Prepared, ps: np.ndarray) -> np.ndarray:
        """The lattice candidates' probabilities (smoothed mixture for smoothed sentences), from
        :meth:`forward`'s scores ``fwd`` and the sentence's positions ``ps`` in them."""
        if not prep.smoothed:
            return np.exp(fwd.logp[ps])
        d = self.smooth_delta
        base = np.exp(fwd.logp[np.where(prep.cand_extra, 0, ps)])
        return np.where(prep.cand_extra, d * prep.cand_share, (1.0 - d) * base)

    def node_priors(self, sentences: Sequence[PunctSentence], chunk: int = 256
                    ) -> List[Tuple[List[np.ndarray], List[np.ndarray]]]:
        """The prior ``p(T'|T)`` the restoration decoders start from: per sentence, per node, the
        pairs of ``W_d(w)`` (puncteme ids, int64 ``(P, 2)``) and ATTACH's ``p_θ(l, r | w)`` of each.
        The slots are not read and the trees not checked (the decoders check them).  Scored in
        batches of ``chunk`` sentences by the compiled ``AttachScorer.score``; each node's
        ``exp(log p)`` is normalised by its sum as ``np.exp(logp[lo:hi]) / ….sum()`` would
        (``segment_sums`` sums as NumPy does), for all nodes of a batch at once."""
        out: List[Tuple[List[np.ndarray], List[np.ndarray]]] = []
        ex = self.extractor
        tables = ex.rel_tables
        chunk = max(1, int(chunk))
        for a in range(0, len(sentences), chunk):
            part = sentences[a:a + chunk]
            rels, ptrs, units, off = [], [np.zeros(1, dtype=np.int64)], [], 0
            for s in part:
                r, p, u = ex.sentence_units(s)
                rels.append(r)
                ptrs.append(p[1:] + off)
                units.append(u)
                off += int(p[-1])
            fwd = self.scorer.score(self.theta, np.concatenate(rels), np.concatenate(ptrs), np.concatenate(units))
            node_off = fwd.node_off
            p = np.exp(fwd.logp)
            sums = np.empty(len(node_off) - 1, dtype=np.float64)
            segment_sums(p, node_off, sums)
            p /= np.repeat(sums, np.diff(node_off))
            bounds = node_off.tolist()
            node = 0
            for r in rels:
                n = len(r)
                out.append(([tables[rid].pairs for rid in r.tolist()],
                            [p[bounds[w]:bounds[w + 1]] for w in range(node, node + n)]))
                node += n
        return out

    def log_probs(self, batch: Sequence[Prepared], backoff: bool = False,
                  chunk: int = 64) -> np.ndarray:
        """log p(x|T) per sentence (``-inf`` if impossible); with ``backoff`` the mixture p'."""
        out = np.empty(len(batch), dtype=np.float64)
        phi = self.shared_phi()
        for a in range(0, len(batch), chunk):
            part = batch[a:a + chunk]
            fwd, pos, _ = self.forward(part)
            for j, (prep, ps) in enumerate(zip(part, pos)):
                cand_p = self.candidate_probs(fwd, prep, ps)
                out[a + j] = dp_log_prob(prep.lattice, self.grammar, cand_p, phi, self.r2l)
        if backoff:
            out = backoff_mixture(out, self.backoff_log_qs(batch), self.backoff_eps)
        return out

    def log_prob(self, sentence: Union[PunctSentence, Prepared], backoff: bool = False) -> float:
        return float(self.log_probs([self.as_prepared(sentence)], backoff=backoff)[0])

    def perplexity(self, batch: Sequence[Prepared]) -> dict:
        """Per-slot perplexity (docs/model.md §5) with the back-off mixture, plus the exact figure
        over the sentences the model can generate."""
        lp = self.log_probs(batch)
        possible = np.isfinite(lp)
        slots = np.array([p.n_slots for p in batch], dtype=np.float64)
        mix = backoff_mixture(lp, self.backoff_log_qs(batch), self.backoff_eps)
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

    def objective_and_gradient(self, batch: Sequence[Prepared], l2: float = 0.0, xi: Optional[float] = None,
                               sparse: bool = False, theta_sq: Optional[float] = None) -> ObjectiveResult:
        """The regularised objective of a batch and its exact gradient wrt θ and ψ (float64),
        see :mod:`.objective`.  ``xi``: ξ (default: the model's).

        ``sparse=True`` (for the trainer; θ is large): ``grad_theta`` is None and
        ``theta_idx``/``theta_val`` hold the data part of ∂/∂θ (distinct ids); the caller
        adds ``−2·l2·θ``.  ``theta_sq`` (sparse only): ‖θ‖² as the trainer keeps it up to
        date, used for the reported L2 term instead of a pass over θ.
        """
        return objective_and_gradient(self, batch, l2, xi, sparse, theta_sq)

    def puncteme(self, pid: int) -> Tuple[str, ...]:
        """The tokens of grammar puncteme ``pid`` (``("<unk>",)`` for the smoothing-only one)."""
        pm = self.inventory.punctemes
        return pm[pid] if pid < len(pm) else (self.inventory.symbols[1],)

    # ------------------------------------------------------------- analysis
    def best_underlying(self, sentence: Union[PunctSentence, Prepared]) -> Optional[analysis.Pairs]:
        """The best derivation's ``(l, r)`` puncteme per node, or None if ``p(x|T) = 0``."""
        return analysis.best_underlying(self, sentence)

    def analyze(self, sentences: Sequence[PunctSentence], chunk: int = 256
                ) -> List[Tuple[Optional[analysis.Pairs], float]]:
        """Per sentence, the best derivation's pairs and ``log p'(x|T)``
        (:func:`.analysis.analyze`: what the ``punctgen`` component reports)."""
        return analysis.analyze(self, sentences, chunk)

    def node_distribution(self, sentence: Union[PunctSentence, Prepared], w: int
                          ) -> List[Tuple[Tuple[str, ...], Tuple[str, ...], float]]:
        """``p_θ(l, r | w)`` over ``W_d(w)`` for node ``w``, most probable first."""
        return analysis.node_distribution(self, sentence, w)

    # ---------------------------------------------------------- persistence
    def compacted(self, threshold: float = 0.0, float16: bool = False) -> "PunctModel":
        """A copy without the features whose ``|θ| <= threshold`` (they then weigh 0), with θ
        rounded to float16 (and stored so) if ``float16``.  For shipping: the caller checks that
        predictions stay within its tolerance.  The copy shares the feature extractor, so
        sentences prepared for this model stay valid for it."""
        keep = np.abs(self.theta) > threshold
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.set_index(FeatureIndex(self.index.ctx[keep], self.index.prop[keep]))
        theta = self.theta[keep]
        if float16:
            theta = theta.astype(np.float16).astype(np.float32)
        clone.theta = np.ascontiguousarray(theta, dtype=np.float32)
        clone.psi = self.psi.copy()
        clone.meta = dict(self.meta)
        clone.theta_dtype = "float16" if float16 else self.theta_dtype
        return clone

    def to_bytes(self) -> bytes:
        """Serialise (deterministic): cfg, inventory and parameters in one msgpack blob."""
        return serialize.to_bytes(self)

    @classmethod
    def from_bytes(cls, data: bytes) -> "PunctModel":
        return serialize.from_bytes(cls, data)

    def to_disk(self, path: Union[str, Path]) -> Path:
        """Write ``cfg.json``, ``inventory.json`` and ``params.npz`` into directory ``path``."""
        return serialize.to_disk(self, path)

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "PunctModel":
        return serialize.from_disk(cls, path)
