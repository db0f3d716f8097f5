"""Comma restoration as a hidden-event trigram language model (Shieber & Tao 2003, paper 001).

Why: the paper's CYBERPUNC baseline and its syntactic extensions are the first published
test of "syntax helps commas"; rebuilding them on UD data puts that claim beside punctgen.

The input is a depunctuated sentence (as for every system here); the hidden events are a
comma or nothing in each slot *between* two words (slots ``1 .. n-1``).  A trigram model over
the restored token string ``<s> <s> w_1 [,] w_2 ... w_n </s>`` scores each candidate string;
Viterbi (:func:`viterbi`) finds the best one (the paper's 3-state HMM; our state is the last
two tokens, which is the same thing).  Variants (hyperparameter ``variant``):

- ``lm``: ``p(y | y-2 y-1)`` (the paper's model 1);
- ``ec_threshold``: ``p(y | y-2 y-1 ê)`` with ``ê = [ec >= ec_min]`` (default 3, SYSTEMS.md),
  backed off to ``p(y | y-1 ê)``, ``p(y | ê)``, ``p(y)`` (model 3);
- ``ec_full``: ``p(y | y-2 y-1) p(y | y-1 ec) / p(y)``, the paper's independence approximation,
  the second factor backed off to ``p(y | y-1)`` (model 8);
- ``*_pos`` of each: times ``p(X | X-2 X-1)`` over the UPOS string (a comma's tag is ``,``)
  (model 10 for ``ec_full_pos``).

``ec`` of slot ``i``: the number of dependency subtrees of the depunctuated tree whose last word
is word ``i`` (the paper counts constituents; a word's subtree stands for its phrase).  A word
is conditioned on the ``ec`` of the slot before it, a comma on that of its own slot.

No n-gram library is used: ``nltk`` (3.10) and ``kenlm`` (0.3) install here, but neither
conditions a token on a variable outside the token string (``ec``), nltk's
``KneserNeyInterpolated`` recomputes every probability recursively (too slow for Viterbi over a
treebank), and kenlm's pip package only queries ARPA/binary models (estimating needs its C++
``lmplz``).  :class:`KneserNey` is Chen & Goodman's interpolated Kneser–Ney over events
``(context tuple, token)``, backing off by dropping the leftmost context element, with one
discount per order ``D = n1 / (n1 + 2 n2)``; the paper used Katz back-off (CMU toolkit).

The comma metrics of both companion systems live here too: :func:`comma_scores` (the papers'
P/R/F1, SER, token and sentence accuracy), :func:`sentence_comma_counts` (each sentence's
``tp, fp, fn``) and :func:`comma_significance`, the paired test of two systems' commas on the same
sentences (approximate randomisation over sentences, by the library's tests in ``evaluation/``).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path
from typing import Dict, Hashable, Iterable, List, Sequence, Tuple

import numpy as np

from spacy_punctgen.baselines.base import Baseline, Prediction, load_hyper, sentences_or_fail
from spacy_punctgen.baselines.slots import check_sentences, read_json, short, write_json
from spacy_punctgen.data.preprocess import subtree_spans
from spacy_punctgen.errors import Errors
from spacy_punctgen.evaluation.metrics import paired_permutation_test
from spacy_punctgen.evaluation.stream import paired_randomization_test

COMMA = ","
BOS, EOS, UNK = "<s>", "</s>", "<unk>"
VARIANTS = ("lm", "ec_threshold", "ec_full", "lm_pos", "ec_threshold_pos", "ec_full_pos")
DEFAULTS = {"variant": "lm", "ec_min": 3, "min_count": 2, "lowercase": False}
_COUNTS = "hmm_counts.json"
Context = Tuple[Hashable, ...]


# ---------------------------------------------------------------- the tree feature
def end_counts(heads: Sequence[int]) -> List[int]:
    """``ec_i`` for slots ``0 .. n``: how many subtrees end with word ``i`` (slot ``i`` follows
    word ``i``, 1-based); ``heads`` 0-based, -1 for a root."""
    ec = [0] * (len(heads) + 1)
    for _first, last in subtree_spans(list(heads)):
        ec[last + 1] += 1
    return ec


# ---------------------------------------------------------------- comma slots and metrics
def has_comma(slot: Sequence[str]) -> bool:
    return COMMA in slot


def comma_slots(commas: Sequence[bool]) -> Prediction:
    """Slot strings from comma decisions: ``(",",)`` or ``()``."""
    return [(COMMA,) if c else () for c in commas]


def comma_scores(gold: Sequence[Sequence[Sequence[str]]], pred: Sequence[Sequence[Sequence[str]]]) -> Dict:
    """The papers' comma metrics over slot strings (a slot holds a comma or not): precision,
    recall, F1, slot error rate ``(fp + fn) / (tp + fn)`` (Makhoul et al. 1999; one class, so no
    substitutions), token accuracy over the slots between words (the decisions made) and
    sentence accuracy (every slot right)."""
    if len(gold) != len(pred):
        raise ValueError(Errors.E907.format(n_gold=len(gold), n_pred=len(pred), k="-"))
    tp = fp = fn = right = decisions = whole = 0
    for k, (g, p) in enumerate(zip(gold, pred)):
        if len(g) != len(p):
            raise ValueError(Errors.E907.format(n_gold=len(g), n_pred=len(p), k=k))
        gc, pc = [has_comma(s) for s in g], [has_comma(s) for s in p]
        tp += sum(a and b for a, b in zip(gc, pc))
        fp += sum(b and not a for a, b in zip(gc, pc))
        fn += sum(a and not b for a, b in zip(gc, pc))
        inner = list(zip(gc, pc))[1:-1]
        right += sum(a == b for a, b in inner)
        decisions += len(inner)
        whole += gc == pc
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": prec, "recall": rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
            "ser": (fp + fn) / (tp + fn) if tp + fn else 0.0,
            "token_accuracy": right / decisions if decisions else 1.0,
            "sentence_accuracy": whole / len(gold) if gold else 0.0,
            "tp": tp, "fp": fp, "fn": fn, "n_sentences": len(gold), "n_decisions": decisions}


def sentence_comma_counts(gold: Sequence[Sequence[Sequence[str]]],
                          pred: Sequence[Sequence[Sequence[str]]]) -> List[Tuple[int, int, int]]:
    """Each sentence's comma ``(tp, fp, fn)``, counted as :func:`comma_scores` counts them (a slot
    holds a comma or not): the unit of the paired test :func:`comma_significance`."""
    if len(gold) != len(pred):
        raise ValueError(Errors.E907.format(n_gold=len(gold), n_pred=len(pred), k="-"))
    out = []
    for k, (g, p) in enumerate(zip(gold, pred)):
        if len(g) != len(p):
            raise ValueError(Errors.E907.format(n_gold=len(g), n_pred=len(p), k=k))
        pairs = [(has_comma(a), has_comma(b)) for a, b in zip(g, p)]
        out.append((sum(a and b for a, b in pairs), sum(b and not a for a, b in pairs),
                    sum(a and not b for a, b in pairs)))
    return out


def comma_significance(counts_a: Sequence[Sequence[int]], counts_b: Sequence[Sequence[int]],
                       n_permutations: int = 10000, seed: int = 0) -> Dict[str, float]:
    """Two-sided p-values of the difference between systems A and B in comma precision, recall,
    F1 and SER on the same test sentences (``counts_*``: one ``(tp, fp, fn)`` per sentence, as
    :func:`sentence_comma_counts` gives them), by approximate randomisation over sentences: each
    sentence's pair of predictions is swapped with probability 1/2.

    The library's test of F1 (:func:`~spacy_punctgen.evaluation.stream.paired_randomization_test`)
    serves all three ratios, since the F1 ``2tp / (2tp + fp + fn)`` of the per-sentence triples
    ``(tp, fp, fp)`` is precision and that of ``(tp, fn, fn)`` recall, sums and swaps included.
    SER ``(fp + fn) / gold commas`` has the same denominator for both systems, so swapping a
    sentence flips the sign of its difference in errors: its randomisation test is the sign-flip
    test of the per-sentence ``fp + fn``
    (:func:`~spacy_punctgen.evaluation.metrics.paired_permutation_test`)."""
    a, b = np.asarray(counts_a, dtype=np.int64), np.asarray(counts_b, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(Errors.E909.format(shape_a=a.shape, shape_b=b.shape))
    differ = np.flatnonzero(a[:, 0] + a[:, 2] != b[:, 0] + b[:, 2])
    if differ.size:
        k = int(differ[0])
        raise ValueError(Errors.E910.format(n=differ.size, k=k, gold_a=int(a[k, 0] + a[k, 2]),
                                            gold_b=int(b[k, 0] + b[k, 2])))
    tp_a, fp_a, fn_a = a.T
    tp_b, fp_b, fn_b = b.T

    def randomised(cols_a, cols_b):
        return paired_randomization_test(np.stack(cols_a, axis=1), np.stack(cols_b, axis=1), n_permutations, seed)

    return {"p_precision": randomised((tp_a, fp_a, fp_a), (tp_b, fp_b, fp_b)),
            "p_recall": randomised((tp_a, fn_a, fn_a), (tp_b, fn_b, fn_b)),
            "p_f1": randomised((tp_a, fp_a, fn_a), (tp_b, fp_b, fn_b)),
            "p_ser": paired_permutation_test(fp_a + fn_a, fp_b + fn_b, n_permutations, seed),
            "n_sentences": int(a.shape[0]), "n_permutations": int(n_permutations), "seed": int(seed)}


# ---------------------------------------------------------------- the language model
def _discount(counts: Iterable[int]) -> float:
    cc = Counter(c for c in counts if c <= 2)
    n1, n2 = cc.get(1, 0), cc.get(2, 0)
    d = n1 / (n1 + 2 * n2) if n1 + 2 * n2 else 0.75
    return d if 0.0 < d < 1.0 else 0.75


class KneserNey:
    """Interpolated Kneser–Ney ``p(w | c_1 .. c_k)`` over events with a fixed context length
    ``k``; the lower orders drop ``c_1``, then ``c_2`` ..., and count continuations (how many
    distinct dropped elements precede), the last level is interpolated with a uniform
    distribution over the vocabulary (the tokens seen plus ``<unk>``)."""

    def __init__(self, order: int):
        self.order = int(order)
        self.counts: Counter = Counter()

    def fit(self, counts: Dict[Tuple[Context, Hashable], int]) -> "KneserNey":
        """``counts[(context, token)]``: how often ``token`` followed ``context`` in training."""
        self.counts = Counter({ev: int(c) for ev, c in counts.items() if c > 0})
        if not self.counts:
            raise ValueError(Errors.E902)
        for ctx, _ in self.counts:
            self._check(ctx)
        # level j holds contexts of length j: N[j][(ctx, w)], totals S[j][ctx], types T[j][ctx]
        levels = [None] * (self.order + 1)
        levels[self.order] = self.counts
        for j in range(self.order - 1, -1, -1):
            cont: Counter = Counter()
            for ctx, w in levels[j + 1]:
                cont[ctx[1:], w] += 1
            levels[j] = cont
        self._n = levels
        self._s = [Counter() for _ in levels]
        self._t = [Counter() for _ in levels]
        for j, lev in enumerate(levels):
            for (ctx, _), c in lev.items():
                self._s[j][ctx] += c
                self._t[j][ctx] += 1
        self._d = [_discount(lev.values()) for lev in levels]
        self.vocab = {w for _, w in self.counts} | {UNK}
        self._cache: Dict[Tuple[Hashable, Context], float] = {}  # Viterbi asks the same often
        return self

    def _check(self, ctx: Context) -> None:
        if len(ctx) != self.order:
            raise ValueError(Errors.E901.format(order=self.order, found=len(ctx), context=ctx))

    def prob(self, w: Hashable, ctx: Context) -> float:
        key = (w, ctx)
        p = self._cache.get(key)
        if p is None:
            p = self._cache[key] = self._prob(w, ctx)
        return p

    def _prob(self, w: Hashable, ctx: Context) -> float:
        self._check(ctx)
        p = 1.0 / len(self.vocab)
        for j in range(0, self.order + 1):
            sub = tuple(ctx[self.order - j:])
            total = self._s[j].get(sub, 0)
            if not total:
                continue
            d = self._d[j]
            p = (max(self._n[j].get((sub, w), 0) - d, 0.0) + d * self._t[j][sub] * p) / total
        return p

    def rows(self) -> List[list]:
        """The training counts as JSON rows ``[*context, token, count]``."""
        return [[*ctx, w, c] for (ctx, w), c in sorted(self.counts.items(), key=lambda kv: str(kv[0]))]

    @classmethod
    def from_rows(cls, order: int, rows: Sequence[Sequence]) -> "KneserNey":
        return cls(order).fit({(tuple(r[:order]), r[order]): r[order + 1] for r in rows})


# ---------------------------------------------------------------- decoding
def viterbi(n_words: int, logscore) -> List[bool]:
    """The best comma decisions for slots ``1 .. n-1``; ``logscore(i, commas)`` is the log score
    of the tokens that slot ``i``'s decision adds (the comma if any, then word ``i``, 0-based;
    ``i = n`` is ``</s>``) given the decisions ``commas`` of slots ``i-1`` and ``i`` (the last two
    tokens depend on no more)."""
    # state: (comma in slot i-1, comma in slot i) -> (score, back-pointer chain)
    beam = {(False, False): (logscore(0, (False, False)), None)}
    for i in range(1, n_words + 1):
        new: Dict[Tuple[bool, bool], tuple] = {}
        for (_, prev), (score, chain) in beam.items():
            for c in ((False, True) if i < n_words else (False,)):
                s = score + logscore(i, (prev, c))
                if (prev, c) not in new or s > new[(prev, c)][0]:
                    new[(prev, c)] = (s, (c, chain))
        beam = new
    _, chain = max(beam.values(), key=lambda v: v[0])
    out = []
    while chain is not None:
        out.append(chain[0])
        chain = chain[1]
    return out[::-1][:-1] if n_words else []


def brute_force(n_words: int, logscore) -> List[bool]:
    """:func:`viterbi` by enumerating every comma pattern (for tests)."""
    best, arg = -math.inf, []
    for pattern in itertools.product((False, True), repeat=max(n_words - 1, 0)):
        commas = (False,) + pattern + (False,)
        s = sum(logscore(i, (commas[i - 1] if i else False, commas[i])) for i in range(n_words + 1))
        if s > best:
            best, arg = s, list(pattern)
    return arg


# ---------------------------------------------------------------- the system
class TrigramHMM(Baseline):
    name = "trigram_hmm"
    probabilistic = False

    def __init__(self):
        self.hyper: Dict = dict(DEFAULTS)
        self.vocab: set = set()
        self.models: Dict[str, object] = {}

    # ---- token streams ----
    def _word(self, w: str) -> str:
        w = w.lower() if self.hyper["lowercase"] else w
        return w if w in self.vocab else UNK

    def _ec_value(self, ec: int):
        if "threshold" in self.hyper["variant"]:
            return f"ec>={self.hyper['ec_min']}" if ec >= int(self.hyper["ec_min"]) else f"ec<{self.hyper['ec_min']}"
        return f"ec={ec}"

    def _events(self, sent, commas: Sequence[bool]):
        """``(token, tag, ec value)`` of the restored string, ``<s> <s>`` first, ``</s>`` last."""
        ec = end_counts(sent.heads)
        toks = [(BOS, BOS, None), (BOS, BOS, None)]
        for i, w in enumerate(sent.words):
            if i and commas[i]:
                toks.append((COMMA, COMMA, self._ec_value(ec[i])))
            toks.append((self._word(w), sent.upos[i], self._ec_value(ec[i])))
        toks.append((EOS, EOS, self._ec_value(ec[len(sent.words)])))
        return toks

    def _token_logscore(self, y2, y1, y) -> float:
        """log score of token ``y`` after ``y2 y1`` (each a ``(token, tag, ec)`` triple)."""
        v = self.hyper["variant"]
        m = self.models
        if v.startswith("ec_threshold"):
            s = math.log(m["words"].prob(y[0], (y2[0], y1[0], y[2])))
        elif v.startswith("ec_full"):
            s = (math.log(m["words"].prob(y[0], (y2[0], y1[0]))) + math.log(m["ec"].prob(y[0], (y[2], y1[0])))
                 - math.log(m["unigram"].get(y[0], m["unigram"][UNK])))
        else:
            s = math.log(m["words"].prob(y[0], (y2[0], y1[0])))
        if v.endswith("_pos"):
            s += math.log(m["pos"].prob(y[1], (y2[1], y1[1])))
        return s

    # ---- training ----
    def fit(self, train_sents, dev_sents=None, **hyper) -> "TrigramHMM":
        unknown = set(hyper) - set(DEFAULTS)
        if unknown:
            raise ValueError(Errors.E576.format(name=self.name, unknown=sorted(unknown)))
        self.hyper = self._checked({**DEFAULTS, **hyper})
        train = sentences_or_fail(train_sents, "training")
        for k, s in enumerate(train):
            check_tree(s, k, self.name)
        low = self.hyper["lowercase"]
        counts = Counter(w.lower() if low else w for s in train for w in s.words)
        self.vocab = {w for w, c in counts.items() if c >= int(self.hyper["min_count"])} | {COMMA}
        words, ecs, pos, uni = Counter(), Counter(), Counter(), Counter()
        for s in train:
            toks = self._events(s, [has_comma(x) for x in s.slots[:-1]] + [False])
            for y2, y1, y in zip(toks, toks[1:], toks[2:]):
                if self.hyper["variant"].startswith("ec_threshold"):
                    words[(y2[0], y1[0], y[2]), y[0]] += 1
                else:
                    words[(y2[0], y1[0]), y[0]] += 1
                ecs[(y[2], y1[0]), y[0]] += 1
                pos[(y2[1], y1[1]), y[1]] += 1
                uni[y[0]] += 1
        self._build(words, ecs, pos, uni)
        return self

    def _build(self, words, ecs, pos, uni) -> None:
        v = self.hyper["variant"]
        self.models = {"words": KneserNey(3 if v.startswith("ec_threshold") else 2).fit(words)}
        if v.startswith("ec_full"):
            self.models["ec"] = KneserNey(2).fit(ecs)
            total = sum(uni.values()) + 1  # one pseudo-count for <unk>
            self.models["unigram"] = {w: c / total for w, c in uni.items()}
            self.models["unigram"].setdefault(UNK, 1 / total)
            self._uni_counts = dict(uni)
        if v.endswith("_pos"):
            self.models["pos"] = KneserNey(2).fit(pos)

    def _checked(self, hyper: Dict) -> Dict:
        if hyper["variant"] not in VARIANTS:
            raise ValueError(Errors.E900.format(name=self.name, variant=hyper["variant"], variants=", ".join(VARIANTS)))
        ec_min = hyper["ec_min"]
        if isinstance(ec_min, bool) or not isinstance(ec_min, int) or ec_min < 1:
            raise ValueError(Errors.E908.format(name=self.name, value=ec_min))
        return hyper

    # ---- prediction ----
    def logscore(self, sent, commas: Sequence[bool]) -> float:
        """The model's log score of the restored string with commas in the slots ``commas``
        marks (slots ``0 .. n``; the first and last are ignored): what :meth:`decode` maximises."""
        toks = self._events(sent, list(commas[:-1]) + [False])
        return sum(self._token_logscore(y2, y1, y) for y2, y1, y in zip(toks, toks[1:], toks[2:]))

    def decode(self, sent) -> List[bool]:
        """Comma decisions for slots ``0 .. n`` (the first and last are never commas)."""
        n = len(sent.words)
        if not n:
            return [False]
        plain = self._events(sent, [False] * (n + 1))[2:]  # words and </s>, no commas
        bos = (BOS, BOS, None)
        ec = end_counts(sent.heads)

        def history(i, prev):  # the two tokens before slot i's decision, given slot i-1's
            if i == 0:
                return bos, bos
            if i == 1:
                return bos, plain[0]
            return ((COMMA, COMMA, self._ec_value(ec[i - 1])) if prev else plain[i - 2]), plain[i - 1]

        def logscore(i, decisions):
            prev, c = decisions
            y2, y1 = history(i, prev)
            if not c:
                return self._token_logscore(y2, y1, plain[i])
            comma = (COMMA, COMMA, self._ec_value(ec[i]))
            return self._token_logscore(y2, y1, comma) + self._token_logscore(y1, comma, plain[i])

        return [False] + viterbi(n, logscore) + [False]

    def predict(self, sents) -> List[Prediction]:
        if not self.models:
            raise ValueError(Errors.E903.format(name=self.name))
        sents = list(sents)
        for k, s in enumerate(sents):
            check_tree(s, k, self.name)
        return [comma_slots(self.decode(s)) for s in sents]

    # ---- persistence ----
    def _state(self) -> dict:
        return {"hyper": self.hyper, "vocab": sorted(self.vocab)}

    def _save_files(self, path: Path) -> None:
        if not self.models:
            raise ValueError(Errors.E578.format(name=self.name))
        out = {"words": self.models["words"].rows()}
        if "ec" in self.models:
            out["ec"] = self.models["ec"].rows()
            out["unigram"] = self._uni_counts
        if "pos" in self.models:
            out["pos"] = self.models["pos"].rows()
        write_json(path / _COUNTS, out)

    def _load_state(self, state: dict, path: Path) -> None:
        self.hyper = self._checked(load_hyper(state, DEFAULTS, path))
        vocab = state.get("vocab")
        if not (isinstance(vocab, list) and all(isinstance(w, str) for w in vocab)):
            raise ValueError(Errors.E904.format(path=path / "baseline.json", field="state.vocab",
                                                expected="a list of words", value=short(repr(vocab))))
        self.vocab = set(vocab)
        counts = read_json(path / _COUNTS)
        v = self.hyper["variant"]
        need = {"words": 3 if v.startswith("ec_threshold") else 2}
        if v.startswith("ec_full"):
            need.update(ec=2, unigram=None)
        if v.endswith("_pos"):
            need["pos"] = 2
        tables = {}
        for key, order in need.items():
            rows = counts.get(key) if isinstance(counts, dict) else None
            ok = isinstance(rows, dict) if order is None else isinstance(rows, list) and all(
                isinstance(r, list) and len(r) == order + 2 and isinstance(r[-1], int) and r[-1] > 0 for r in rows)
            if not ok or not rows:
                raise ValueError(Errors.E904.format(path=path / _COUNTS, field=key, expected=(
                    "an object of counts" if order is None else f"a non-empty list of [{order} context items, token, count]"),
                    value=short(repr(rows))))
            tables[key] = rows
        as_counter = lambda order, rows: Counter({(tuple(r[:order]), r[order]): r[order + 1] for r in rows})  # noqa: E731
        self._build(as_counter(need["words"], tables["words"]),
                    as_counter(2, tables["ec"]) if "ec" in tables else None,
                    as_counter(2, tables["pos"]) if "pos" in tables else None,
                    Counter(tables.get("unigram", {})))


def check_tree(sent, k: int, name: str) -> None:
    """E906 unless ``sent`` has a head and a relation per word (E581/E582 for other shapes)."""
    check_sentences([sent])
    n = len(sent.words)
    if len(sent.heads) != n or len(sent.deprels) != n or len(sent.upos) != n:
        raise ValueError(Errors.E906.format(k=k, n_heads=len(sent.heads), n_deprels=len(sent.deprels),
                                            n_words=n, name=name))
