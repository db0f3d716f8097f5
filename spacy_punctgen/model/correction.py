"""The paper's correction model (Li, Wang & Eisner 2019, §6.2; docs/correction.md, "The paper's method"):
a log-linear model of each node's *corrected* puncteme pair given the pair that the *erroneous* text's
best underlying tree gives it,

    p(T'_c | T'_e) = Π_w p(l, r | w, l_e, r_e),
    p(l, r | w, l_e, r_e) ∝ exp(a · log p_θ(l, r | w) + θ_c · g(l, r, w, l_e, r_e))   over C(w, e).

* ``log p_θ(l, r | w)``: the punctuation model's ATTACH log-probability of the pair (its features with
  their trained weights, one learned scale ``a``);
* ``g``: indicator features of the erroneous pair ``e = (l_e, r_e)`` and the candidate ``c = (l, r)``:
  whether they match (the whole pair, each half; alone, per relation ``d``, per erroneous pair), the
  rewrite ``e → c`` (whole pair, each half; alone and per relation), the candidate per relation; and the
  node's ATTACH contexts (those of the punctuation model's templates) conjoined with "the candidate keeps
  ``e``" and whether ``e`` is empty;
* ``C(w, e)``: the ``top_k`` pairs of ``W_d`` most probable under ATTACH, plus ``e`` (the full ``W_d``
  averages about 150 pairs per English node; the pruned pairs hold little ATTACH mass).

This module holds the model (features, probabilities, the objective and its gradient, saving and
loading) and what it needs from a :class:`~.punct_model.PunctModel`: the Viterbi pairs of a sentence
and each node's candidates (:func:`correction_inputs`).  Training is in
:mod:`spacy_punctgen.training.correction`, decoding in :mod:`spacy_punctgen.decode.correct`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.inventory import relation_key
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.dp import viterbi

#: log-probability given to a candidate ATTACH gives no probability (an erroneous pair outside W_d)
LOGP_FLOOR = -20.0
FORMAT_VERSION = 1

PairIds = np.ndarray  # int64 (n, 2): puncteme ids of each node's (l, r)


# --------------------------------------------------------------------------- from the punctuation model
@dataclass
class NodeInput:
    """One node of one sentence, ready to be featurised: its candidates and their ATTACH log-probs,
    the erroneous pair, where it is among the candidates, the relation and the node's ATTACH contexts."""

    cands: np.ndarray  # int64 (m, 2) puncteme ids
    logp: np.ndarray  # float64 (m,)
    e: Tuple[int, int]
    same: int  # index of e in cands
    rel: str
    contexts: List[str]


def correction_inputs(model, sentences: Sequence[PunctSentence], top_k: int,
                      erroneous: Optional[Sequence[Optional[PairIds]]] = None, chunk: int = 256
                      ) -> Tuple[List[Optional[PairIds]], List[Optional[List[NodeInput]]]]:
    """Per sentence: the erroneous pairs ``e`` (puncteme ids per node) and the nodes' inputs
    (:class:`NodeInput`: the candidates ``C(w, e)``, i.e. the ``top_k`` most probable pairs of ``W_d``
    under ATTACH, most probable first, ties by pair, then ``e`` if it is not among them, with their
    ATTACH log-probabilities, ``LOGP_FLOOR`` outside ``W_d``).  ``e`` is ``erroneous[k]`` when given,
    else the Viterbi underlying tree of the sentence's slots: the unsmoothed Viterbi derivation, or,
    where that gives ``p(x|T) = 0``, the Viterbi derivation of the smoothed model (``smooth_delta``,
    whose extra pairs can explain any slot string of ``V``).  None for both where there is none.
    Each sentence is compiled and ATTACH-scored once."""
    sentences = list(sentences)
    if erroneous is not None and len(erroneous) != len(sentences):
        raise ValueError(Errors.E836.format(n_e=len(erroneous), n=len(sentences)))
    g, r2l, phi = model.grammar, model.r2l, model.shared_phi()
    unit = model.extractor.unit_string
    tables = model.extractor.rel_tables
    E: List[Optional[PairIds]] = []
    nodes: List[Optional[List[NodeInput]]] = []
    for a in range(0, len(sentences), max(1, int(chunk))):
        part = sentences[a:a + chunk]
        preps = [model.prepare(s, False) for s in part]
        fwd, pos, start = model.forward(preps)
        logp = np.asarray(fwd.logp, dtype=np.float64)
        off = np.asarray(fwd.node_off)
        for j, (prep, ps) in enumerate(zip(preps, pos)):
            k = a + j
            if erroneous is None:
                e = _best(prep, g, model.candidate_probs(fwd, prep, ps), phi, r2l)
                if e is None and model.smooth_delta > 0:
                    sp = model.prepare(sentences[k], True)
                    sf, spos, _ = model.forward([sp])
                    e = _best(sp, g, model.candidate_probs(sf, sp, spos[0]), phi, r2l)
            else:
                e = erroneous[k]
            E.append(e)
            if e is None:
                nodes.append(None)
                continue
            e = np.asarray(e, dtype=np.int64)
            s = sentences[k]
            if e.shape != (len(s.words), 2):
                raise ValueError(Errors.E837.format(k=k, shape=e.shape, n=len(s.words)))
            out = []
            for w in range(len(s.words)):
                v = int(start[j]) + w
                lp = logp[off[v]:off[v + 1]]
                lp = lp - (lp.max() + math.log(np.exp(lp - lp.max()).sum()))
                pairs = tables[int(prep.rel_ids[w])].pairs
                ctx = [unit(u) for u in prep.units[prep.unit_ptr[w]:prep.unit_ptr[w + 1]].tolist()]
                out.append(_node(pairs, lp, (int(e[w, 0]), int(e[w, 1])), top_k, relation_key(s.deprels[w]), ctx))
            nodes.append(out)
    return E, nodes


def viterbi_pair_ids(model, sentences: Sequence[PunctSentence]) -> List[Optional[PairIds]]:
    """The best underlying tree of each sentence (:func:`correction_inputs`' ``e``)."""
    return correction_inputs(model, sentences, 1)[0]


def _node(pairs: np.ndarray, lp: np.ndarray, e: Tuple[int, int], top_k: int, rel: str, ctx: List[str]) -> NodeInput:
    order = np.lexsort((pairs[:, 1], pairs[:, 0], -lp))[:top_k]
    cands, clp = pairs[order], lp[order]
    hit = np.flatnonzero((cands[:, 0] == e[0]) & (cands[:, 1] == e[1]))
    if len(hit):
        same = int(hit[0])
    else:
        full = np.flatnonzero((pairs[:, 0] == e[0]) & (pairs[:, 1] == e[1]))
        cands = np.vstack([cands, [e]])
        clp = np.append(clp, lp[full[0]] if len(full) else LOGP_FLOOR)
        same = len(cands) - 1
    return NodeInput(cands, np.maximum(clp, LOGP_FLOOR), e, same, rel, ctx)


def _best(prep, grammar, cand_p, phi, r2l) -> Optional[PairIds]:
    lat = prep.lattice
    if not lat.n_candidates:
        return None
    logbest, best = viterbi(lat, grammar, cand_p, phi, r2l)
    if not np.isfinite(logbest):
        return None
    return np.stack([np.asarray(lat.cand_l)[best], np.asarray(lat.cand_r)[best]], axis=1).astype(np.int64)


def puncteme_tokens(model) -> List[Tuple[str, ...]]:
    """The tokens of every grammar puncteme of ``model`` (the smoothing-only one is ``<unk>``)."""
    return [model.puncteme(i) for i in range(len(model.grammar.punctemes))]


# --------------------------------------------------------------------------- features
def _pair_features(d: str, e: Tuple[str, str], c: Tuple[str, str], outside: bool) -> List[str]:
    """The indicator features of candidate ``c`` for a node of relation ``d`` with erroneous pair ``e``
    (punctemes written as space-joined tokens)."""
    E, C = f"{e[0]}|{e[1]}", f"{c[0]}|{c[1]}"
    f = [f"T={E}>{C}", f"TL={e[0]}>{c[0]}", f"TR={e[1]}>{c[1]}", f"{d}|T={E}>{C}", f"{d}|TL={e[0]}>{c[0]}",
         f"{d}|TR={e[1]}>{c[1]}", f"{d}|C={C}"]
    if c == e:
        f += ["same", f"{d}|same", f"E={E}|same"]
    if c[0] == e[0]:
        f += ["sameL", f"{d}|sameL"]
    if c[1] == e[1]:
        f += ["sameR", f"{d}|sameR"]
    if outside:
        f += ["outside", f"{d}|outside"]
    return f


def _context_features(contexts: Sequence[str], e_empty: bool) -> List[str]:
    tag = "E0" if e_empty else "E1"
    return [f"{c}|same|{tag}" for c in contexts]


@dataclass
class Batch:
    """Nodes featurised for :class:`CorrectionModel` (flat arrays; node ``k``'s candidates are
    ``cand_ptr[k]:cand_ptr[k+1]``).  Candidate features are shared by every node with the same relation,
    erroneous pair and candidate (a *row*); the context features belong to the candidate ``same``."""

    cand_ptr: np.ndarray  # int64 (N + 1,)
    cands: np.ndarray  # int64 (C, 2)
    row: np.ndarray  # int64 (C,): each candidate's row
    f0: np.ndarray  # float64 (C,): ATTACH log-probability
    same: np.ndarray  # int64 (N,): flat index of the candidate equal to e
    ctx_ptr: np.ndarray  # int64 (N + 1,)
    ctx_ids: np.ndarray  # int64
    g_ptr: np.ndarray  # int64 (R + 1,)
    g_ids: np.ndarray  # int64
    gold: np.ndarray  # int64 (N,): flat index of the target (-1: none)
    weight: np.ndarray  # float64 (N,)

    @property
    def n_nodes(self) -> int:
        return len(self.cand_ptr) - 1


class CorrectionModel:
    """``p(l, r | w, l_e, r_e)`` (module docstring).  ``features``: the feature strings, in weight order;
    ``weights``: their weights; ``attach_scale``: ``a``; ``top_k``: the candidates per node."""

    def __init__(self, features: Sequence[str] = (), weights: Optional[np.ndarray] = None,
                 attach_scale: float = 1.0, top_k: int = 16, meta: Optional[dict] = None):
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(Errors.E838.format(name="top_k", value=top_k, what="an integer >= 1"))
        if not isinstance(attach_scale, (int, float)) or not math.isfinite(attach_scale):
            raise ValueError(Errors.E838.format(name="attach_scale", value=attach_scale, what="a finite number"))
        self.features = list(features)
        self.index: Dict[str, int] = {f: i for i, f in enumerate(self.features)}
        if len(self.index) != len(self.features):
            raise ValueError(Errors.E839.format(what="duplicate feature strings"))
        w = np.zeros(len(self.features)) if weights is None else np.array(weights, dtype=np.float64)
        if w.shape != (len(self.features),) or not np.isfinite(w).all():
            raise ValueError(Errors.E839.format(what=f"{w.shape} weights for {len(self.features)} features, "
                                                     "or weights that are not finite"))
        self.weights = w
        self.attach_scale = float(attach_scale)
        self.top_k = int(top_k)
        self.meta = dict(meta or {})

    # -- parameters as one vector: [a, weights...]
    def get_params(self) -> np.ndarray:
        return np.concatenate([[self.attach_scale], self.weights])

    def set_params(self, params: np.ndarray) -> None:
        self.attach_scale = float(params[0])
        self.weights = np.array(params[1:], dtype=np.float64)

    # -- featurising
    def encode(self, nodes: Sequence[NodeInput], punctemes: Sequence[Sequence[str]], grow: bool = False,
               gold: Optional[Sequence[Optional[Tuple[int, int]]]] = None,
               weight: Optional[Sequence[float]] = None) -> Batch:
        """Featurise ``nodes``; ``grow``: add features never seen (training), else drop them.  ``gold``:
        each node's target pair (its flat candidate index in ``Batch.gold``; -1 if not a candidate)."""
        names = {}

        def name(p: int) -> str:
            s = names.get(p)
            if s is None:
                s = names[p] = " ".join(punctemes[p])
            return s

        def ids(strings: Sequence[str]) -> List[int]:
            out = []
            for s in strings:
                i = self.index.get(s)
                if i is None and grow:
                    i = self.index[s] = len(self.features)
                    self.features.append(s)
                if i is not None:
                    out.append(i)
            return out

        rows: Dict[Tuple[str, int, int, int, int, bool], int] = {}
        g_ids: List[int] = []
        g_ptr = [0]
        cand_ptr, row, same, ctx_ptr, ctx_ids, gold_idx = [0], [], [], [0], [], []
        cands, f0 = [], []
        for k, nd in enumerate(nodes):
            base = cand_ptr[-1]
            d, e = nd.rel, nd.e
            en = (name(e[0]), name(e[1]))
            for j, (cl, cr) in enumerate(nd.cands.tolist()):
                outside = j >= self.top_k  # e, added beyond the top_k pairs
                key = (d, e[0], e[1], cl, cr, bool(outside))
                r = rows.get(key)
                if r is None:
                    r = rows[key] = len(rows)
                    g_ids += ids(_pair_features(d, en, (name(cl), name(cr)), outside))
                    g_ptr.append(len(g_ids))
                row.append(r)
            cands.append(nd.cands)
            f0.append(nd.logp)
            same.append(base + nd.same)
            ctx_ids += ids(_context_features(nd.contexts, e == (0, 0)))
            ctx_ptr.append(len(ctx_ids))
            cand_ptr.append(base + len(nd.cands))
            if gold is not None:
                t = gold[k]
                hit = [] if t is None else np.flatnonzero((nd.cands[:, 0] == t[0]) & (nd.cands[:, 1] == t[1]))
                gold_idx.append(base + int(hit[0]) if len(hit) else -1)
        self.weights = np.concatenate([self.weights, np.zeros(len(self.features) - len(self.weights))])
        n = len(nodes)

        def a(x, dt=np.int64):
            return np.asarray(x, dtype=dt)

        return Batch(a(cand_ptr), np.vstack(cands).astype(np.int64) if cands else np.zeros((0, 2), np.int64),
                     a(row), np.concatenate(f0).astype(np.float64) if f0 else np.zeros(0), a(same), a(ctx_ptr),
                     a(ctx_ids), a(g_ptr), a(g_ids), a(gold_idx) if gold is not None else np.full(n, -1, np.int64),
                     np.ones(n) if weight is None else a(weight, np.float64))

    # -- probabilities, objective, gradient
    def _scores(self, batch: Batch, params: np.ndarray) -> np.ndarray:
        a, w = params[0], params[1:]
        R = len(batch.g_ptr) - 1
        g_row = np.repeat(np.arange(R), np.diff(batch.g_ptr))
        gs = np.bincount(g_row, weights=w[batch.g_ids], minlength=R) if R else np.zeros(0)
        s = gs[batch.row] + a * batch.f0
        N = batch.n_nodes
        c_node = np.repeat(np.arange(N), np.diff(batch.ctx_ptr))
        s[batch.same] += np.bincount(c_node, weights=w[batch.ctx_ids], minlength=N)
        return s

    def _log_softmax(self, batch: Batch, s: np.ndarray) -> np.ndarray:
        starts = batch.cand_ptr[:-1]
        sizes = np.diff(batch.cand_ptr)
        m = np.maximum.reduceat(s, starts)
        z = np.log(np.add.reduceat(np.exp(s - np.repeat(m, sizes)), starts)) + m
        return s - np.repeat(z, sizes)

    def log_probs(self, batch: Batch) -> np.ndarray:
        """``log p(c | w, e)`` of every candidate of every node (flat, as ``batch.cands``)."""
        if batch.n_nodes == 0:
            return np.zeros(0)
        return self._log_softmax(batch, self._scores(batch, self.get_params()))

    def objective(self, batch: Batch, params: np.ndarray, l2: float) -> Tuple[float, np.ndarray]:
        """``-Σ_k weight_k log p(gold_k) + l2/2 ||weights||²`` (``a`` is not penalised) over the nodes
        whose target is a candidate, and its gradient with respect to ``params``."""
        use = batch.gold >= 0
        lp = self._log_softmax(batch, self._scores(batch, params))
        wt = np.where(use, batch.weight, 0.0)
        loss = -float(np.dot(wt[use], lp[batch.gold[use]]))
        r = np.exp(lp) * np.repeat(wt, np.diff(batch.cand_ptr))
        np.subtract.at(r, batch.gold[use], wt[use])
        w = params[1:]
        F = len(w)
        R = len(batch.g_ptr) - 1
        g_row = np.repeat(np.arange(R), np.diff(batch.g_ptr))
        per_row = np.bincount(batch.row, weights=r, minlength=R)
        grad_w = np.bincount(batch.g_ids, weights=per_row[g_row], minlength=F)
        c_node = np.repeat(np.arange(batch.n_nodes), np.diff(batch.ctx_ptr))
        grad_w += np.bincount(batch.ctx_ids, weights=r[batch.same][c_node], minlength=F)
        grad_w += l2 * w
        loss += 0.5 * l2 * float(np.dot(w, w))
        return loss, np.concatenate([[float(np.dot(r, batch.f0))], grad_w])

    # -- saving
    def to_disk(self, path) -> None:
        """``cfg.json`` (scale, top_k, meta, features) and ``weights.npy`` in the folder ``path``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        cfg = {"format": FORMAT_VERSION, "attach_scale": self.attach_scale, "top_k": self.top_k,
               "meta": self.meta, "features": self.features}
        (path / "cfg.json").write_text(json.dumps(cfg, ensure_ascii=False) + "\n", encoding="utf-8")
        np.save(path / "weights.npy", self.weights)

    @classmethod
    def from_disk(cls, path) -> "CorrectionModel":
        path = Path(path)
        try:
            cfg = json.loads((path / "cfg.json").read_text(encoding="utf-8"))
            weights = np.load(path / "weights.npy", allow_pickle=False)
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E840.format(path=path, err=err)) from None
        if not isinstance(cfg, dict) or cfg.get("format") != FORMAT_VERSION:
            raise ValueError(Errors.E840.format(path=path, err="not a correction model of this version"))
        try:
            return cls(cfg["features"], weights, cfg["attach_scale"], cfg["top_k"], cfg.get("meta"))
        except (KeyError, TypeError) as err:
            raise ValueError(Errors.E840.format(path=path, err=err)) from None
