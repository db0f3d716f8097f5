"""What a trained model learned (docs/learned.md): the channel's edits against Nunberg's
rules, the symmetric puncteme pairs ATTACH gives each relation, and its heaviest weights.

Why a module of its own: the paper judges its learned grammar by these figures (its §5), and
they only read a :class:`~spacy_punctgen.model.punct_model.PunctModel` and the training
trees, so they are pure functions of both; the ``learned`` command writes them out.

Bigrams are written in *surface* order: ``(a, b)`` is ``a`` left of ``b`` in the underlying
slot string, whatever the channel's reading direction, and the four edits are named by
what they write: ``ab`` (keep), ``a`` (``b`` absorbed), ``b`` (``a`` absorbed), ``ba``
(transposed).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.data.underlying import underlying_sequences
from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.dp import ABSORB_LEFT, ABSORB_RIGHT, KEEP, TRANSPOSE
from spacy_punctgen.model.analysis import analyze
from spacy_punctgen.features.templates import OPEN_TO_CLOSE, is_mirror, is_unmatched, pair_property_strings, stable_hash
from spacy_punctgen.model.punct_model import PunctModel

#: the surface edits, in the order of the last axis of :func:`surface_edit_probs`
SURFACE_EDITS: Tuple[str, ...] = ("ab", "a", "b", "ba")
EDIT_NAMES = {"ab": "keep", "a": "b absorbed into a", "b": "a absorbed into b", "ba": "transposed"}
#: the channel edit (reading order) behind each surface edit, left to right and right to left
_L2R = (KEEP, ABSORB_LEFT, ABSORB_RIGHT, TRANSPOSE)
_R2L = (KEEP, ABSORB_RIGHT, ABSORB_LEFT, TRANSPOSE)
BOS = "^"

# ---------------------------------------------------------------------------
# Nunberg's rules

NUNBERG_SOURCE = ("Nunberg (1990), The Linguistics of Punctuation (CSLI Lecture Notes 18), as tabulated "
                  "in Li, Wang & Eisner (2019), A Generative Model for Punctuation in Dependency Trees, "
                  "Table 1 and its caption")
#: the points and their strength, from the paper's Table 1 caption: {?, !, brackets, quotes} >
#: . > {;, :} > dash > ,  (the abbreviation dot is handled on its own)
POINT_STRENGTH: Dict[str, int] = {"?": 4, "!": 4, ".": 3, ";": 2, ":": 2,
                                  "-": 1, "--": 1, "\u2013": 1, "\u2014": 1, ",": 0}
BRACKET_STRENGTH = 4
OPENERS = frozenset({"(", "[", "{", "\u201c", "\u2018"})
CLOSERS = frozenset({")", "]", "}", "\u201d", "\u2019"})
CLOSING_QUOTES = frozenset({"\u201d", "\u2019"})
ABBR = "ABBR."
#: the rules checked, in priority order (name, what it does)
RULES: Tuple[Tuple[str, str], ...] = (
    ("quote transposition", "a closing quote followed by , or . is transposed: ” , -> , ”  and  ” . -> . ”"),
    ("bracket absorption", "an opening bracket or quote absorbs a weaker point after it (( , -> (); a closing "
                           "one absorbs a weaker point before it (, ) -> )); never a point outside the "
                           "material it brackets (, ( and ) , are kept)"),
    ("point absorption", "of two adjacent points the stronger absorbs the weaker, the first one on a tie "
                         "(, , -> ,  . , -> .  - , -> -  ; . -> .)"),
    ("period absorption", "a ? or ! absorbs an adjacent period (. ? -> ?  . ! -> !)"),
    ("abbreviation absorption", "the abbreviation dot absorbs a period (ABBR. . -> ABBR.)"),
)
#: the symbols the rules know (Nunberg's types, in this code's tokens)
NUNBERG_TYPES = frozenset(POINT_STRENGTH) | OPENERS | CLOSERS | {ABBR}


def nunberg_rule(a: str, b: str) -> Optional[Tuple[str, str]]:
    """``(rule name, surface edit)`` that Nunberg's rules apply to the bigram ``a b``, or None
    where they apply none (the bigram is kept, or a symbol is not one of his types)."""
    if a in CLOSING_QUOTES and b in (",", "."):
        return "quote transposition", "ba"
    if a in OPENERS and POINT_STRENGTH.get(b, BRACKET_STRENGTH) < BRACKET_STRENGTH:
        return "bracket absorption", "a"
    if b in CLOSERS and POINT_STRENGTH.get(a, BRACKET_STRENGTH) < BRACKET_STRENGTH:
        return "bracket absorption", "b"
    if a in POINT_STRENGTH and b in POINT_STRENGTH:
        name = "period absorption" if "." in (a, b) and {a, b} & {"?", "!"} else "point absorption"
        return name, ("a" if POINT_STRENGTH[a] >= POINT_STRENGTH[b] else "b")
    if a == ABBR and b == ".":
        return "abbreviation absorption", "a"
    return None


# ---------------------------------------------------------------------------
# The channel in surface order

def surface_edit_probs(phi: np.ndarray, r2l: bool) -> np.ndarray:
    """``p(e | a, b)`` (float64 ``[S, S, 4]``, edits in :data:`SURFACE_EDITS` order) for the
    bigram ``a b`` in surface order: a right-to-left channel reads it as ``(b, a)``, and its
    absorb-left deletes ``a``."""
    phi = np.asarray(phi, dtype=np.float64)
    if r2l:
        return np.ascontiguousarray(phi.transpose(1, 0, 2)[:, :, list(_R2L)])
    return np.ascontiguousarray(phi[:, :, list(_L2R)])


def output_distribution(probs: Sequence[float], same: bool) -> Dict[str, float]:
    """The distribution over distinct surface strings of one bigram: for ``a = b`` the
    absorptions write the same string, and so do keep and transpose."""
    out = dict(zip(SURFACE_EDITS, (float(p) for p in probs)))
    if same:
        return {"ab": out["ab"] + out["ba"], "a": out["a"] + out["b"]}
    return out


def reciprocal_rank(dist: Dict[str, float], target: str) -> float:
    """``1 / rank`` of ``target`` among the outputs, rank 1 the most probable; ties rank
    optimistically (``1 +`` the number of outputs strictly more probable)."""
    if target not in dist:  # a = b: "b" is the same string as "a"
        target = {"b": "a", "ba": "ab"}[target]
    p = dist[target]
    return 1.0 / (1 + sum(1 for q in dist.values() if q > p))


@dataclass
class BigramRow:
    """One bigram's learned edits and what Nunberg says of it."""

    a: str
    b: str
    count: int
    probs: Dict[str, float]  # p(e | a, b) per surface edit
    dist: Dict[str, float]  # over distinct output strings
    best: str
    best_p: float
    rule: Optional[str]
    rule_edit: Optional[str]

    @property
    def verdict(self) -> str:
        """``nunberg`` (the best edit is his rule's), ``keep, no rule`` (kept where he has no
        rule), ``not nunberg`` (anything else), or ``outside his types`` (a symbol his rules do
        not know, ``^`` included: he has no say)."""
        if self.a not in NUNBERG_TYPES or self.b not in NUNBERG_TYPES:
            return "outside his types"
        best = self.best if self.a != self.b else ("a" if self.best in ("a", "b") else "ab")
        want = self.rule_edit if self.rule_edit is None or self.a != self.b else \
            ("a" if self.rule_edit in ("a", "b") else "ab")
        if want is not None and best == want:
            return "nunberg"
        if want is None and best == "ab":
            return "keep, no rule"
        return "not nunberg"

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "count": self.count, "probs": self.probs, "best": self.best,
                "best_p": self.best_p, "rule": self.rule, "rule_edit": self.rule_edit, "verdict": self.verdict}


def bigram_rows(model: PunctModel, counts: Optional[Dict[Tuple[str, str], int]] = None,
                symbols: Optional[Iterable[str]] = None) -> List[BigramRow]:
    """One row per bigram: those of ``counts`` (seen in training; most frequent first), else
    every bigram over ``symbols`` (default: the model's Σ without ``<unk>``)."""
    sym = model.inventory.symbols
    sid = {s: i for i, s in enumerate(sym)}
    table = surface_edit_probs(model.phi(), model.r2l)
    if counts is not None:
        keys = sorted(counts, key=lambda k: (-counts[k], k))
    else:
        use = [s for s in (symbols if symbols is not None else sym[2:] + [BOS]) if s in sid]
        keys = [(a, b) for a in use for b in use if b != BOS]
    rows = []
    for a, b in keys:
        if a not in sid or b not in sid:
            continue
        probs = dict(zip(SURFACE_EDITS, table[sid[a], sid[b]].tolist()))
        dist = output_distribution(table[sid[a], sid[b]], a == b)
        best = max(dist, key=dist.get)
        rule = nunberg_rule(a, b)
        rows.append(BigramRow(a, b, int(counts[(a, b)]) if counts else 0, probs, dist, best, dist[best],
                              rule[0] if rule else None, rule[1] if rule else None))
    return rows


def confident_edits(rows: Sequence[BigramRow], threshold: float = 0.75, min_count: int = 25) -> dict:
    """The bigrams seen at least ``min_count`` times whose most probable output has probability
    above ``threshold`` (the paper: 0.75 and an underlying count of 25), each with its verdict,
    and the counts of each verdict; ``changes`` are those whose confident output is not ``ab``."""
    kept = [r for r in rows if r.count >= min_count]
    conf = [r for r in kept if r.best_p > threshold]
    changes = [r for r in conf if r.best != "ab" and not (r.a == r.b and r.best == "ab")]
    verdicts = Counter(r.verdict for r in conf)
    return {
        "threshold": threshold, "min_count": min_count,
        "n_bigrams": len(kept), "n_confident": len(conf),
        "n_nunberg": verdicts["nunberg"], "n_keep_no_rule": verdicts["keep, no rule"],
        "n_not_nunberg": verdicts["not nunberg"], "n_outside": verdicts["outside his types"],
        "n_changes": len(changes), "n_changes_nunberg": sum(r.verdict == "nunberg" for r in changes),
        "n_changes_outside": sum(r.verdict == "outside his types" for r in changes),
        "unconfident": [r.as_dict() for r in kept if r.best_p <= threshold],
        "edits": [r.as_dict() for r in conf],
    }


def nunberg_mrr(rows: Sequence[BigramRow], confident: float = 0.5) -> dict:
    """The mean reciprocal rank of Nunberg's output among the learned outputs of each bigram
    his rules rewrite (the paper's §5.1: every rule ``ab -> y`` with ``y`` not ``ab``, ranked
    among ``p(· | ab)``), over all such bigrams of ``rows`` and over those where some output
    has probability above ``confident`` (the paper: 0.5)."""
    ruled = [r for r in rows if r.rule_edit is not None]
    rr = [reciprocal_rank(r.dist, r.rule_edit) for r in ruled]
    conf = [x for x, r in zip(rr, ruled) if r.best_p > confident]
    ranks = Counter(int(round(1 / x)) for x in rr)
    return {
        "n_rules": len(rr), "mrr": float(np.mean(rr)) if rr else float("nan"),
        "rank_counts": {str(k): ranks[k] for k in sorted(ranks)},
        "confident": confident, "n_rules_confident": len(conf),
        "mrr_confident": float(np.mean(conf)) if conf else float("nan"),
    }


# ---------------------------------------------------------------------------
# Beyond English: how far his rules reach, rule by rule

#: the languages Nunberg's rules were written for (elsewhere they are a yardstick only)
NUNBERG_LANGS = frozenset({"en"})


def nunberg_coverage(rows: Sequence[BigramRow], top: int = 8) -> dict:
    """How much of the seen punctuation his rules can speak about: over the bigrams of ``rows``
    (seen in the 1-best underlying trees; those starting with ``^`` left out, no rule has it),
    the share of bigram occurrences whose two symbols are both his types, and the ``top`` other
    symbols by the occurrences they take part in (``،``, ``¿``, ``«``, ``।``: marks of other
    languages that his English rules do not name)."""
    total = inside = 0
    outside: Counter = Counter()
    for r in rows:
        if r.a == BOS:
            continue
        total += r.count
        if r.a in NUNBERG_TYPES and r.b in NUNBERG_TYPES:
            inside += r.count
        else:
            for sym in {r.a, r.b} - NUNBERG_TYPES:
                outside[sym] += r.count
    return {"n_occurrences": total, "n_in_types": inside,
            "share_in_types": inside / total if total else float("nan"),
            "outside_symbols": [{"symbol": sym, "count": c}
                                for sym, c in sorted(outside.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]}


def rule_agreement(rows: Sequence[BigramRow], threshold: float = 0.75, min_count: int = 25) -> List[dict]:
    """Per rule of :data:`RULES`: the bigrams seen at least ``min_count`` times that it rewrites,
    how many of them the model's most probable output follows (and how many with probability
    above ``threshold``), and how many it confidently rewrites otherwise: which of his rules
    hold on a treebank, whatever its language."""
    out = []
    for name, _ in RULES:
        mine = [r for r in rows if r.rule == name and r.count >= min_count]
        follows = [r for r in mine if r.verdict == "nunberg"]
        out.append({"rule": name, "n_bigrams": len(mine), "n_follows": len(follows),
                    "n_follows_confident": sum(r.best_p > threshold for r in follows),
                    "n_contradicts_confident": sum(r.verdict != "nunberg" and r.best_p > threshold for r in mine),
                    "bigrams": [f"{r.a} {r.b}" for r in mine]})
    return out


# ---------------------------------------------------------------------------
# One pass over the training trees

_CLOSERS = frozenset(OPEN_TO_CLOSE.values())


def mirror_of(tokens: Sequence[str]) -> Optional[Tuple[str, ...]]:
    """The mirror image of a left puncteme: reversed, each opening bracket or quote turned into
    its closing partner, every other mark (``,``, ``–``) itself; None if it holds a closing mark
    (``) … (`` brackets nothing)."""
    if any(t in _CLOSERS and t not in OPEN_TO_CLOSE for t in tokens):
        return None
    return tuple(OPEN_TO_CLOSE.get(t, t) for t in reversed(tokens))


def is_symmetric(l: Sequence[str], r: Sequence[str]) -> bool:
    """Non-empty ``l`` and ``r`` that mirror each other: ``, … ,``, ``( … )``, ``“ … ”``."""
    return bool(l) and tuple(r) == mirror_of(l)


@dataclass
class TreebankPass:
    """What one pass of a model over training trees collects."""

    n_sentences: int = 0
    n_impossible: int = 0
    bigrams: Counter = field(default_factory=Counter)  # (a, b) of the 1-best underlying slot strings
    prior: Dict[str, np.ndarray] = field(default_factory=dict)  # relation -> Σ_w p(l, r | w) over W_d
    nodes: Counter = field(default_factory=Counter)  # relation -> number of nodes
    best_pairs: Dict[str, Counter] = field(default_factory=dict)  # relation -> 1-best (l, r) counts
    unit_counts: Optional[np.ndarray] = None  # training nodes each context unit fires on


def treebank_pass(model: PunctModel, sentences: Sequence[PunctSentence], chunk: int = 256) -> TreebankPass:
    """Analyse ``sentences``: the 1-best underlying trees (their slot bigrams and node pairs)
    and ATTACH's prior ``p_θ(l, r | w)`` of every node, summed per relation."""
    out = TreebankPass()
    ex, tables = model.extractor, model.extractor.rel_tables
    units_seen: List[np.ndarray] = []
    for start in range(0, len(sentences), chunk):
        part = list(sentences[start:start + chunk])
        best = analyze(model, part, chunk=chunk, logprob=False)
        comp = [ex.sentence_units(s) for s in part]
        rel = np.concatenate([c[0] for c in comp])
        ptr, off = [np.zeros(1, dtype=np.int64)], 0
        for c in comp:
            ptr.append(c[1][1:] + off)
            off += int(c[1][-1])
        units = np.concatenate([c[2] for c in comp])
        units_seen.append(units)
        fwd = model.scorer.predict(model.theta, rel, np.concatenate(ptr), units)
        p = np.exp(fwd.logp)
        for w, rid in enumerate(rel.tolist()):
            name = tables[rid].rel
            acc = out.prior.get(name)
            if acc is None or acc.size != tables[rid].size:
                acc = out.prior[name] = np.zeros(tables[rid].size)
            acc += p[fwd.node_off[w]:fwd.node_off[w + 1]]
            out.nodes[name] += 1
        for s, (pairs, _), c in zip(part, best, comp):
            out.n_sentences += 1
            if pairs is None:
                out.n_impossible += 1
                continue
            for w, (l, r) in enumerate(pairs):
                out.best_pairs.setdefault(tables[int(c[0][w])].rel, Counter())[(tuple(l), tuple(r))] += 1
            for i, u in enumerate(underlying_sequences(s.heads, pairs)):
                u = ([BOS] if i == 0 else []) + list(u)
                out.bigrams.update(zip(u, u[1:]))
    counts = np.zeros(ex.n_units, dtype=np.int64)
    for u in units_seen:
        counts += np.bincount(u, minlength=ex.n_units)
    out.unit_counts = counts
    return out


def relation_pairs(model: PunctModel, tb: TreebankPass, top: int = 5, min_nodes: int = 20) -> List[dict]:
    """Per relation (at least ``min_nodes`` training nodes): ATTACH's average ``p(l, r | w)``
    over its nodes, its entropy (nats), the share of it on symmetric pairs (and on strict
    bracket mirrors such as ``( … )``), the share of the 1-best trees' nodes with a symmetric
    pair, and the ``top`` pairs; most symmetric first (the paper's Table 4)."""
    names = {t.rel: t for t in model.extractor.rel_tables}
    pm = model.inventory.punctemes
    rows = []
    for rel, total in tb.prior.items():
        n = tb.nodes[rel]
        if n < min_nodes:
            continue
        dist = total / n
        pairs = [(pm[int(l)], pm[int(r)]) for l, r in names[rel].pairs]
        sym = np.array([is_symmetric(l, r) for l, r in pairs])
        mir = np.array([is_mirror(l, r) for l, r in pairs])
        nz = dist[dist > 0]
        order = np.argsort(-dist, kind="stable")[:top]
        best = tb.best_pairs.get(rel, Counter())
        n_best = sum(best.values())
        rows.append({
            "relation": rel, "n_nodes": int(n),
            "entropy": max(0.0, float(-(nz * np.log(nz)).sum())),
            "symmetric": float(dist[sym].sum()), "bracket_mirror": float(dist[mir].sum()),
            "best_symmetric": (sum(c for (l, r), c in best.items() if is_symmetric(l, r)) / n_best
                               if n_best else float("nan")),
            "top": [{"l": " ".join(pairs[k][0]), "r": " ".join(pairs[k][1]), "p": float(dist[k]),
                     "symmetric": bool(sym[k])} for k in order],
        })
    rows.sort(key=lambda r: (-r["symmetric"], r["relation"]))
    return rows


def heavy_weights(model: PunctModel, tb: TreebankPass, top: int = 10, min_nodes: int = 20,
                  min_p: float = 0.01) -> Dict[str, List[dict]]:
    """Per relation, the ATTACH features that move its nodes' scores most over the training
    trees, ranked by ``|θ| ·`` (training nodes of that relation the context fires on).

    Only the relation's own contexts (``d|…``; the shared ``*`` contexts fire on every node of
    every relation and mostly push down pairs that are never chosen) and only the properties of
    the pairs that matter: those ATTACH gives at least ``min_p`` on average over the relation's
    nodes (otherwise the largest weights are those that bury rare pairs)."""
    ex, index, theta = model.extractor, model.index, model.theta
    counts = tb.unit_counts if tb.unit_counts is not None else np.zeros(ex.n_units, dtype=np.int64)
    uids = np.flatnonzero(counts > 0)
    rels = ex.unit_relations(uids)
    pm = model.inventory.punctemes
    props = model.feature_config.properties
    out: Dict[str, List[dict]] = {}
    for rid, table in enumerate(ex.rel_tables):
        n = tb.nodes[table.rel]
        if n < min_nodes or table.rel not in tb.prior:
            continue
        mine = np.array([u for u in uids[rels == rid] if not ex.unit_string(int(u)).startswith("*")], dtype=np.int64)
        if not mine.size:
            continue
        avg = tb.prior[table.rel] / n
        live: Dict[int, str] = {}
        for k, (l, r) in enumerate(table.pairs):
            if avg[k] >= min_p:
                for text in pair_property_strings(pm[int(l)], pm[int(r)], props):
                    live[stable_hash(text)] = text
        col_name = [live.get(int(h)) for h in table.col_hash]
        unit, col, feat = index.unit_entries(ex.unit_hashes(mine), table)
        keep = np.array([col_name[int(c)] is not None for c in col], dtype=bool)
        unit, col, feat = unit[keep], col[keep], feat[keep]
        if not feat.size:
            continue
        w = theta[feat].astype(np.float64)
        score = np.abs(w) * counts[mine[unit]]
        order = np.argsort(-score, kind="stable")[:top]
        out[table.rel] = [{"context": ex.unit_string(int(mine[unit[k]])), "property": col_name[int(col[k])],
                           "weight": float(w[k]), "n_nodes": int(counts[mine[unit[k]]]),
                           "impact": float(score[k])} for k in order]
    return out


def feature_weight(model: PunctModel, context: str, prop: str) -> Optional[float]:
    """θ of the feature ``context ∧ prop`` (e.g. ``conj`` ∧ ``P=,|,``), None if it has no weight."""
    k = int(model.index.lookup(np.uint64(stable_hash(context)), np.uint64(stable_hash(prop))))
    return float(model.theta[k]) if k >= 0 else None


# ---------------------------------------------------------------------------
# The whole report

#: the paper's English figures (its §5.1), to print beside ours
PAPER_EN = {"n_confident": 24, "n_nunberg": 20, "n_rules": 192, "mrr": 0.621,
            "n_rules_confident": 55, "mrr_confident": 0.836}
#: the paper's example features (its §5.2) in this code's terms: (context, pair property)
EXAMPLE_FEATURES = (("conj", "P=,|,"), ("conj", "P=,|"), ("conj|child=cc", "P=|"), ("conj|child=cc", "P=,|,"))


def model_summary(model: PunctModel) -> dict:
    return {"mode": model.mode, "direction": model.direction, "xi": model.xi,
            "n_symbols": model.n_symbols, "n_features": model.n_features}


def overall_shares(model: PunctModel, tb: TreebankPass) -> dict:
    """Over all training nodes: ATTACH's expected share of nodes with a symmetric pair and with
    an *unmatched* mark (what ξ penalises, docs/model.md §4), and the same shares in the 1-best
    trees."""
    pm = model.inventory.punctemes
    tables = {t.rel: t for t in model.extractor.rel_tables}
    n = sum(tb.nodes.values())
    sym = unm = 0.0
    for rel, total in tb.prior.items():
        pairs = [(pm[int(l)], pm[int(r)]) for l, r in tables[rel].pairs]
        sym += float(total[[is_symmetric(l, r) for l, r in pairs]].sum())
        unm += float(total[[is_unmatched(l, r) for l, r in pairs]].sum())
    best = [(pair, c) for counts in tb.best_pairs.values() for pair, c in counts.items()]
    n_best = sum(c for _, c in best)
    return {"n_nodes": n, "symmetric": sym / n if n else float("nan"),
            "unmatched": unm / n if n else float("nan"),
            "best_symmetric": sum(c for (l, r), c in best if is_symmetric(l, r)) / n_best if n_best else float("nan"),
            "best_unmatched": sum(c for (l, r), c in best if is_unmatched(l, r)) / n_best if n_best else float("nan")}


def attach_report(model: PunctModel, tb: TreebankPass, top_pairs: int = 5, min_nodes: int = 20) -> dict:
    """The symmetric-pair figures of one model (:func:`relation_pairs`, :func:`overall_shares`)
    with its ξ."""
    return {"model": model_summary(model), "n_sentences": tb.n_sentences, "n_impossible": tb.n_impossible,
            "overall": overall_shares(model, tb), "relations": relation_pairs(model, tb, top_pairs, min_nodes)}


def learned_report(model: PunctModel, sentences: Sequence[PunctSentence], xi_model: Optional[PunctModel] = None,
                   threshold: float = 0.75, min_count: int = 25, confident: float = 0.5, top_pairs: int = 5,
                   top_weights: int = 10, min_nodes: int = 20, lang: Optional[str] = None) -> dict:
    """Everything docs/learned.md shows, for ``model`` on its training ``sentences`` (and the
    symmetric pairs of ``xi_model``, trained with another ξ, on the same sentences); ``lang``
    (the treebank's language, if known) only says whether Nunberg's English rules are the
    language's own (:data:`NUNBERG_LANGS`) or a yardstick."""
    if model.mode != "full":
        raise ValueError(Errors.E791.format(mode=model.mode))
    tb = treebank_pass(model, sentences)
    seen = bigram_rows(model, dict(tb.bigrams))
    types = sorted(NUNBERG_TYPES & set(model.inventory.symbols))
    every = bigram_rows(model, symbols=types)
    channel = {
        "bigrams": [r.as_dict() for r in seen],
        "confident": confident_edits(seen, threshold, min_count),
        "mrr": nunberg_mrr(every, confident),
        "mrr_seen": nunberg_mrr([r for r in seen if r.a != BOS], confident),
        "nunberg_types": types,
        "coverage": nunberg_coverage(seen),
        "rules": rule_agreement(seen, threshold, min_count),
    }
    symmetric = [attach_report(model, tb, top_pairs, min_nodes)]
    if xi_model is not None:
        symmetric.append(attach_report(xi_model, treebank_pass(xi_model, sentences), top_pairs, min_nodes))
    return {
        "model": model_summary(model), "n_sentences": tb.n_sentences, "n_impossible": tb.n_impossible,
        "lang": lang, "nunberg_language": None if lang is None else lang in NUNBERG_LANGS,
        "nunberg": {"source": NUNBERG_SOURCE, "rules": [{"name": n, "says": d} for n, d in RULES]},
        "paper_en": PAPER_EN,
        "channel": channel,
        "symmetric": symmetric,
        "weights": heavy_weights(model, tb, top_weights, min_nodes),
        "examples": [{"context": c, "property": p, "weight": feature_weight(model, c, p)}
                     for c, p in EXAMPLE_FEATURES],
    }


# ---------------------------------------------------------------------------
# Across treebanks (results/learned_summary.md)

#: the paper's five relations most likely to get symmetric punctemes (English, its Table 4)
PAPER_EN_SYMMETRIC = ("parataxis", "appos", "advcl", "ccomp", "list")


def _need(report: dict, path: str, *keys: str):
    value = report
    for k, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise ValueError(Errors.E794.format(path=path, problem=f"no {'.'.join(keys[:k + 1])}"))
        value = value[key]
    return value


def _number(value) -> Optional[float]:
    """A figure read back from learned.json: NaN was written as null."""
    return None if value is None else float(value)


def summary_row(name: str, report: dict, path: str = "", top: int = 3) -> dict:
    """One treebank's line of the cross-treebank summary, from its ``learned.json`` (``report``):
    confident edits and how many are Nunberg's, MRR, the share of its bigrams his rules can
    judge, and the ``top`` most symmetric relations of its ξ = 0 and ξ > 0 models (E794 names
    what a malformed report lacks)."""
    path = path or name
    conf = _need(report, path, "channel", "confident")
    for key in ("n_bigrams", "n_confident", "n_nunberg", "n_changes", "n_changes_nunberg"):
        _need(conf, path, key)
    mrr, mrr_seen = _need(report, path, "channel", "mrr"), _need(report, path, "channel", "mrr_seen")
    for r in (mrr, mrr_seen):
        for key in ("mrr", "n_rules", "mrr_confident", "n_rules_confident"):
            _need(r, path, key)
    symmetric = _need(report, path, "symmetric")
    if not isinstance(symmetric, list) or not symmetric:
        raise ValueError(Errors.E794.format(path=path, problem="no model in symmetric"))
    models = []
    for s in symmetric:
        xi = _need(s, path, "model", "xi")
        rels = _need(s, path, "relations")
        unmatched = _need(s, path, "overall", "unmatched")
        models.append({"xi": float(xi), "unmatched": _number(unmatched),
                       "top": [{"relation": r["relation"], "symmetric": float(r["symmetric"])} for r in rels[:top]]})
    xi0 = next((m for m in models if m["xi"] == 0), None)
    xip = next((m for m in models if m["xi"] > 0), None)
    cov = report["channel"].get("coverage")
    return {
        "treebank": name, "lang": report.get("lang"), "n_sentences": _need(report, path, "n_sentences"),
        "direction": _need(report, path, "model", "direction"), "xi": float(_need(report, path, "model", "xi")),
        "n_bigrams": conf["n_bigrams"], "n_confident": conf["n_confident"], "n_nunberg": conf["n_nunberg"],
        "n_changes": conf["n_changes"], "n_changes_nunberg": conf["n_changes_nunberg"],
        "share_in_types": None if cov is None else _number(cov["share_in_types"]),
        "mrr": _number(mrr["mrr"]), "n_rules": mrr["n_rules"], "mrr_confident": _number(mrr["mrr_confident"]),
        "n_rules_confident": mrr["n_rules_confident"], "mrr_seen": _number(mrr_seen["mrr"]),
        "n_rules_seen": mrr_seen["n_rules"],
        "rules_followed": (None if "rules" not in report["channel"] else
                           [r["rule"] for r in report["channel"]["rules"] if r["n_follows_confident"]]),
        "xi0": xi0, "xi_pos": xip,
    }


def learned_summary(reports: Dict[str, dict], paths: Optional[Dict[str, str]] = None, top: int = 3) -> dict:
    """The cross-treebank summary of ``{treebank: learned.json report}`` (in the given order),
    with the paper's English figures beside them."""
    rows = [summary_row(name, rep, (paths or {}).get(name, name), top) for name, rep in reports.items()]
    return {"treebanks": rows,
            "paper_en": {**PAPER_EN, "symmetric": list(PAPER_EN_SYMMETRIC)}}


def _top_cell(model: Optional[dict]) -> str:
    if model is None:
        return "–"
    return ", ".join(f"{t['relation']} {t['symmetric']:.2f}" for t in model["top"]) or "–"


def summary_markdown(summary: dict) -> str:
    """The summary as results/learned_summary.md."""
    paper = summary["paper_en"]
    out = ["# What the model learned, treebank by treebank", "",
           "Generated by `spacy project run learned-summary .` from `results/<treebank>/learned/learned.json` "
           "(docs/learned.md). *confident*: bigrams seen at least 25 times in the 1-best underlying trees "
           "whose most probable output has p > 0.75; *Nunberg's*: of those, how many apply his rule (of the "
           "confident outputs that change the bigram, in brackets); *in his types*: the share of seen bigram "
           "occurrences his rules can judge (his rules are English: elsewhere a yardstick); MRR of his output "
           "over every rule of his types in the model's Σ, over those where some output has p > 0.5 (the "
           "paper's two figures) and over the bigrams seen in training; the three relations whose average "
           "ATTACH distribution puts most mass on mirror-image pairs (that mass), at ξ = 0 and ξ > 0, and the "
           "expected share of nodes with an unmatched mark (what ξ penalises).", "",
           "| treebank | lang | sentences | confident | Nunberg's | in his types | MRR (rules) | MRR confident "
           "(rules) | MRR seen (rules) | top symmetric, ξ = 0 | top symmetric, ξ > 0 | unmatched ξ = 0 → ξ > 0 |",
           "|---|---|---:|---:|---|---:|---|---|---|---|---|---|"]
    for r in summary["treebanks"]:
        xi0, xip = r["xi0"], r["xi_pos"]
        unm = (_fmt(xi0["unmatched"] if xi0 else None, 4) + " → "
               + (f"{_fmt(xip['unmatched'], 4)} (ξ = {xip['xi']:g})" if xip else "–"))
        share = "–" if r["share_in_types"] is None else f"{100 * r['share_in_types']:.1f} %"
        out.append(f"| {r['treebank']} | {r['lang'] or '–'} | {r['n_sentences']:,} | {r['n_confident']} | "
                   f"{r['n_nunberg']} ({r['n_changes_nunberg']} of {r['n_changes']} changes) | {share} | "
                   f"{_fmt(r['mrr'])} ({r['n_rules']}) | {_fmt(r['mrr_confident'])} ({r['n_rules_confident']}) | "
                   f"{_fmt(r['mrr_seen'])} ({r['n_rules_seen']}) | {_top_cell(xi0)} | {_top_cell(xip)} | {unm} |")
    out.append(f"| paper (English, UD 1.4) | en | – | {paper['n_confident']} | {paper['n_nunberg']} | – | "
               f"{paper['mrr']} ({paper['n_rules']}) | {paper['mrr_confident']} ({paper['n_rules_confident']}) | – | "
               f"– | {', '.join(paper['symmetric'])} (its ξ, tuned on dev) | – |")
    out += ["", "Nunberg's rules that the model follows with p > 0.75 on at least one bigram seen 25 times:", ""]
    for r in summary["treebanks"]:
        followed = r["rules_followed"]
        out.append(f"* {r['treebank']}: " + ("– (a report without the rule-by-rule table)" if followed is None
                                             else ", ".join(followed) or "none"))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Tables and pictures

def _fmt(x: Optional[float], digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _code(text: str) -> str:
    """A Markdown code span that survives a table cell (its ``|`` escaped)."""
    return "`" + text.replace("|", "\\|") + "`"


def _bigram(a: str, b: str) -> str:
    return _code(f"{a} {b}")


def _out(a: str, b: str, edit: str) -> str:
    return _code({"ab": f"{a} {b}", "a": a, "b": b, "ba": f"{b} {a}"}[edit])


def _language_note(report: dict) -> List[str]:
    """A paragraph on how far his (English) rules speak for this treebank's language, with the
    share of its seen bigrams they can judge; nothing for English or an unknown language
    without coverage figures."""
    cov, lang = report["channel"].get("coverage"), report.get("lang")
    if cov is None:
        return []
    share = f"{100 * cov['share_in_types']:.1f} %" if cov["n_occurrences"] else "–"
    others = ", ".join(f"{_code(o['symbol'])} {o['count']:,}" for o in cov["outside_symbols"])
    reach = (f"Of the {cov['n_occurrences']:,} occurrences of seen bigrams (those after `^` left out), {share} "
             f"are made of his types" + (f"; the other marks most often in them: {others}." if others else "."))
    if lang is None or lang in NUNBERG_LANGS:
        return [reach, ""]
    return [f"Nunberg's rules describe English ({lang!r} here): for this language they are a yardstick, not "
            "its own rules (the American quote transposition above all), and the paper gives these figures for "
            "English only. " + reach, ""]


def markdown_tables(report: dict, title: str = "") -> str:
    """The report's tables in Markdown (what the ``learned`` command writes as learned.md)."""
    ch, m = report["channel"], report["model"]
    conf, mrr, mrr_seen, paper = ch["confident"], ch["mrr"], ch["mrr_seen"], report["paper_en"]
    out = [f"# What the model learned{': ' + title if title else ''}", "",
           f"Model: {m['direction']}, ξ = {m['xi']:g}, {m['n_features']:,} features, {m['n_symbols']} symbols; "
           f"{report['n_sentences']:,} training sentences analysed ({report['n_impossible']} impossible).", "",
           "## The channel against Nunberg's rules", "",
           f"Bigrams seen at least {conf['min_count']} times in the 1-best underlying trees: {conf['n_bigrams']}; "
           f"with an output of probability > {conf['threshold']:g}: **{conf['n_confident']}**, of which "
           f"**{conf['n_nunberg']}** apply Nunberg's rule, {conf['n_keep_no_rule']} keep a bigram he has no "
           f"rule for, {conf['n_not_nunberg']} do neither, and {conf['n_outside']} hold a symbol outside his "
           f"types (`^` included). Of the {conf['n_changes']} confident outputs that change the bigram, "
           f"**{conf['n_changes_nunberg']}** are Nunberg's and {conf['n_changes_outside']} are outside his "
           f"types. (Paper, English: {paper['n_nunberg']} of {paper['n_confident']}.)", ""]
    out += _language_note(report)
    out += ["| bigram | count | output | p | Nunberg's rule | verdict |", "|---|---:|---|---:|---|---|"]
    for e in conf["edits"]:
        rule = f"{e['rule']}: {_out(e['a'], e['b'], e['rule_edit'])}" if e["rule"] else "–"
        out.append(f"| {_bigram(e['a'], e['b'])} | {e['count']:,} | {_out(e['a'], e['b'], e['best'])} | "
                   f"{e['best_p']:.3f} | {rule} | {e['verdict']} |")
    if conf["unconfident"]:
        out += ["", "Seen as often, but no output above the threshold: " + ", ".join(
            f"{_bigram(e['a'], e['b'])} ({_out(e['a'], e['b'], e['best'])} {e['best_p']:.2f})"
            for e in conf["unconfident"]) + "."]
    if ch.get("rules"):
        out += ["", f"His rules one by one, over the bigrams seen at least {conf['min_count']} times that each "
                "rewrites: how many of them the model's most probable output follows (with probability above "
                f"{conf['threshold']:g}), and how many it confidently rewrites otherwise.", "",
                "| rule | bigrams | follows | confidently | confidently otherwise | bigrams |",
                "|---|---:|---:|---:|---:|---|"]
        for r in ch["rules"]:
            out.append(f"| {r['rule']} | {r['n_bigrams']} | {r['n_follows']} | {r['n_follows_confident']} | "
                       f"{r['n_contradicts_confident']} | {', '.join(_code(b) for b in r['bigrams']) or '–'} |")
    out += ["", "Mean reciprocal rank of Nunberg's output among the learned outputs of every bigram his rules "
            "rewrite:", "",
            "| bigrams | rules | MRR | rules with max p > 0.5 | MRR there | ranks 1 / 2 / 3 / 4 |",
            "|---|---:|---:|---:|---:|---|"]
    for name, r in (("all, over his types in Σ", mrr), ("seen in training", mrr_seen)):
        rc = r["rank_counts"]
        out.append(f"| {name} | {r['n_rules']} | {_fmt(r['mrr'])} | {r['n_rules_confident']} | "
                   f"{_fmt(r['mrr_confident'])} | {' / '.join(str(rc.get(str(k), 0)) for k in range(1, 5))} |")
    out.append(f"| paper, English | {paper['n_rules']} | {paper['mrr']} | {paper['n_rules_confident']} | "
               f"{paper['mrr_confident']} | 75 / 48 / 69 (rank > 2) |")
    out += ["", "## Symmetric punctemes by relation (the paper's Table 4)", "",
            "Over all training nodes: ATTACH's expected share of nodes with a symmetric pair and with an "
            "unmatched mark (what ξ penalises), and the same shares among the 1-best trees' nodes.", "",
            "| ξ | nodes | symmetric | unmatched | 1-best symmetric | 1-best unmatched |",
            "|---:|---:|---:|---:|---:|---:|"]
    for s in report["symmetric"]:
        o = s["overall"]
        out.append(f"| {s['model']['xi']:g} | {o['n_nodes']:,} | {_fmt(o['symmetric'], 4)} | "
                   f"{_fmt(o['unmatched'], 4)} | {_fmt(o['best_symmetric'], 4)} | {_fmt(o['best_unmatched'], 4)} |")
    out.append("")
    for s in report["symmetric"]:
        sm = s["model"]
        out += [f"ξ = {sm['xi']:g} ({sm['direction']}): the ten relations whose average ATTACH distribution "
                "puts most mass on mirror-image pairs; *sym* = that mass, *brackets* = on strict bracket "
                "mirrors, *1-best* = share of the relation's nodes with a symmetric pair in the 1-best "
                "trees, *H* = entropy (nats).", "",
                "| relation | nodes | H | sym | brackets | 1-best | top pairs (%) |",
                "|---|---:|---:|---:|---:|---:|---|"]
        for r in s["relations"][:10]:
            pairs = "; ".join(("**" if t["symmetric"] else "") + _code(f"{t['l'] or 'ε'} {t['r'] or 'ε'}")
                              + ("**" if t["symmetric"] else "") + f" {100 * t['p']:.1f}" for t in r["top"])
            out.append(f"| {r['relation']} | {r['n_nodes']:,} | {r['entropy']:.2f} | {r['symmetric']:.3f} | "
                       f"{r['bracket_mirror']:.3f} | {_fmt(r['best_symmetric'])} | {pairs} |")
        out.append("")
    out += ["## The ATTACH weights that matter most", "",
            "Per relation (the eight with most training nodes, and `conj`), the features with the largest "
            "|θ| × (training nodes the context fires on), among the relation's own contexts and the "
            "properties of the pairs it gives at least 1 % on average; a feature is a node context ∧ a pair "
            "property (`P=l|r` the pair, `L=`/`R=` one half, `S=` its shape: which halves are non-empty, "
            "`M` a bracket mirror, `U` unmatched).", ""]
    examples = report["examples"]
    out += ["The paper's examples (`N.,.,.conj`, `C.ε.ε.!conj.cc`) in this code's terms: " + "; ".join(
        f"{_code(e['context'])} ∧ {_code(e['property'])} = {_fmt(e['weight'])}" for e in examples) + ".", ""]
    nodes = {r["relation"]: r["n_nodes"] for r in report["symmetric"][0]["relations"]}
    chosen = sorted(report["weights"], key=lambda k: -nodes.get(k, 0))[:8]
    if "conj" in report["weights"] and "conj" not in chosen:
        chosen.append("conj")
    out += ["| relation | context | property | θ | nodes |", "|---|---|---|---:|---:|"]
    for rel in chosen:
        for wrow in report["weights"][rel][:5]:
            out.append(f"| {rel} | {_code(wrow['context'])} | {_code(wrow['property'])} | {wrow['weight']:+.3f} | "
                       f"{wrow['n_nodes']:,} |")
    return "\n".join(out) + "\n"


def require_matplotlib():
    """matplotlib's pyplot with the Agg backend, or E790 naming the extra that installs it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(Errors.E790) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def heatmap_data(report: dict, n_symbols: int = 16) -> Tuple[List[str], List[str], np.ndarray, np.ndarray]:
    """The ``n_symbols`` symbols most frequent in the seen bigrams as rows (``^`` first when
    seen) and columns (never ``^``, which only starts a slot), ``p(e | a, b)`` as
    ``[4, rows, columns]`` (NaN where the bigram was not seen) and the counts."""
    freq: Counter = Counter()
    for r in report["channel"]["bigrams"]:
        freq[r["a"]] += r["count"]
        freq[r["b"]] += r["count"]
    syms = [s for s, _ in freq.most_common(n_symbols)]
    rows = ([BOS] if BOS in syms else []) + [s for s in syms if s != BOS]
    cols = [s for s in syms if s != BOS]
    ri, ci = {s: i for i, s in enumerate(rows)}, {s: j for j, s in enumerate(cols)}
    probs = np.full((len(SURFACE_EDITS), len(rows), len(cols)), np.nan)
    counts = np.zeros((len(rows), len(cols)), dtype=np.int64)
    for r in report["channel"]["bigrams"]:
        if r["a"] in ri and r["b"] in ci:
            i, j = ri[r["a"]], ci[r["b"]]
            counts[i, j] = r["count"]
            for k, e in enumerate(SURFACE_EDITS):
                probs[k, i, j] = r["probs"][e]
    return rows, cols, probs, counts


def _labeller():
    """Tick labels the default font can draw: a symbol with a glyph the font lacks (the CJK
    marks in DejaVu Sans) is written as its code points, ``U+300C``."""
    from matplotlib.font_manager import FontProperties, findfont
    from matplotlib.ft2font import FT2Font

    drawable = set(FT2Font(findfont(FontProperties())).get_charmap())

    def label(sym: str) -> str:
        if all(ord(ch) in drawable for ch in sym):
            return sym
        return " ".join(f"U+{ord(ch):04X}" for ch in sym)

    return label


def write_plots(report: dict, out_dir, title: str = "", n_symbols: int = 16) -> List[Path]:
    """One heat map per surface edit (rows ``a``, columns ``b``: ``p(e | a, b)`` for the
    bigrams seen in training) and one bar chart of the most frequent bigrams Nunberg rewrites
    (the paper's Figure 3); returns the files written."""
    plt = require_matplotlib()
    out_dir = Path(out_dir)
    rows, cols, probs, counts = heatmap_data(report, n_symbols)
    label = _labeller()
    written = []
    for k, e in enumerate(SURFACE_EDITS):
        fig, ax = plt.subplots(figsize=(7.5, 6.5))
        masked = np.ma.masked_invalid(probs[k])
        cmap = plt.get_cmap("viridis").with_extremes(bad="#dddddd")
        im = ax.imshow(masked, vmin=0.0, vmax=1.0, cmap=cmap)
        ax.set_xticks(range(len(cols)), [label(c) for c in cols], rotation=90)
        ax.set_yticks(range(len(rows)), [label(r) for r in rows])
        ax.set_xlabel("b (right)")
        ax.set_ylabel("a (left)")
        for i in range(len(rows)):
            for j in range(len(cols)):
                if counts[i, j]:
                    v = probs[k, i, j]
                    ax.text(j, i, f"{v:.2f}"[1:] if v < 1 else "1", ha="center", va="center", fontsize=6,
                            color="white" if v < 0.5 else "black")
        ax.set_title(f"{title} p(ab → {e} | ab): {EDIT_NAMES[e]}"
                     "\n(grey: bigram not seen in the 1-best underlying trees)", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
        fig.tight_layout()
        path = out_dir / f"channel_{'keep' if e == 'ab' else 'transpose' if e == 'ba' else 'to_' + e}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    ruled = [r for r in report["channel"]["bigrams"] if r["rule_edit"] and r["count"] > 0][:6]
    if ruled:
        fig, axes = plt.subplots(1, len(ruled), figsize=(2.3 * len(ruled), 2.8), squeeze=False)
        for ax, r in zip(axes[0], ruled):
            a, b = label(r["a"]), label(r["b"])
            same = r["a"] == r["b"]
            dist = output_distribution([r["probs"][e] for e in SURFACE_EDITS], same)
            want = r["rule_edit"] if not same else ("a" if r["rule_edit"] in ("a", "b") else "ab")
            labels = [{"ab": f"{a} {b}", "a": a, "b": b, "ba": f"{b} {a}"}[e] for e in dist]
            colors = ["tab:orange" if e == want else "tab:blue" for e in dist]
            ax.bar(range(len(dist)), list(dist.values()), color=colors)
            ax.set_xticks(range(len(dist)), labels, fontsize=8)
            ax.set_ylim(0, 1)
            ax.set_title(f"{a} {b}  (n={r['count']:,})", fontsize=9)
        fig.suptitle(f"{title} learned rewrites of the most frequent bigrams Nunberg rewrites "
                     "(orange: his output)", fontsize=9)
        fig.tight_layout()
        path = out_dir / "nunberg_bigrams.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written
