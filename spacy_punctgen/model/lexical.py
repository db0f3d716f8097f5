"""The lexical expert: what the words alone say about the mark after each word.

Why: some marks are told by the words and not by the tree (``um,`` ``okay so,`` ``thank
you.``, a sentence end before ``so i``), and the words see across the parser's sentence
boundaries, which the tree cannot. Restoration multiplies punctgen's exact slot distribution
by this expert's class probabilities raised to a weight chosen on dev (a product of experts,
:mod:`spacy_punctgen.decode.lexical`); weight 0 is punctgen alone.

The expert is a multinomial logistic regression over hashed context features (thinc's
``SparseLinear``): for the gap after word ``j``, the lowercased words ``j-2 .. j+3`` by
position, the word pairs and triples across the gap, the last three letters of the words on
both sides, and the case of the next word. Its classes are the *kind* of mark (:data:`CLASSES`,
:func:`mark_class`): the empty string, comma, period, question mark, ... and ``other``.
Features are hashed in NumPy from one hash per word, so featurising is a few array passes.
"""
from __future__ import annotations

import contextlib
import math
import random
import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from spacy.strings import get_string_id
from thinc.api import Adam, NumpyOps, SparseLinear_v2

from spacy_punctgen.errors import Errors

#: the kinds of mark the expert tells apart, in the order of its output columns
CLASSES = ("", ",", ".", "?", "!", ":", ";", "other")
#: the classes that end a sentence, most telling first (a slot holding ``?`` and ``.`` is a question)
_TERMINAL = ("?", "!", ".", "…", "...")
#: symbols that belong to the word, not to the gap (the abbreviation dot)
_WORD_SYMBOLS = ("ABBR.",)
#: hashed features per gap (see :func:`gap_features`)
#: the features of the window around a gap (see :func:`gap_features`)
WINDOW_TEMPLATES = 16
#: the words before the window (``j-3 .. j-2-bag_words``) that the gap after word ``j`` reads as a
#: bag, by default (TED training block's dev: log loss 0.3134 -> 0.3118, mark F1 with punctgen
#: 0.510 -> 0.516); an expert saved with another number keeps it
BAG_WORDS = 6
#: hash buckets per class (TED training block's dev log loss: 2**18 0.3141, 2**19 0.3080, 2**20 0.3025;
#: mark F1 with punctgen 0.515, 0.518, 0.524); saved as float16, about 2 bytes a bucket and class
DEFAULT_LENGTH = 2 ** 20
_M = np.uint64(0xFFFFFFFFFFFFFFFF)
_C = [np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)]
_BOS, _EOS = (np.uint64(get_string_id(s)) for s in ("<s>", "</s>"))


def mark_class(marks: Sequence[str]) -> str:
    """The kind of the marks in one gap (a surface string as a tuple of symbols): a terminal
    mark decides (``?`` over ``!`` over ``.``), then ``,`` ``:`` ``;``; anything else that is
    not empty (quotes, brackets, dashes) is ``other``; the abbreviation dot is the word's."""
    marks = [m for m in marks if m and m not in _WORD_SYMBOLS]
    if not marks:
        return ""
    for t in _TERMINAL:
        if any(t in m for m in marks):
            return "." if t in ("…", "...") else t
    for c in (",", ":", ";"):
        if c in marks:
            return c
    return "other"


def _mix(a: np.ndarray, b: np.ndarray, salt: int) -> np.ndarray:
    """A 64-bit hash of two hash arrays and a template number (splitmix-style finaliser)."""
    with np.errstate(over="ignore"):
        x = (a * _C[0]) ^ (b + np.uint64(salt) * _C[1])
        x = (x ^ (x >> np.uint64(30))) * _C[1]
        x = (x ^ (x >> np.uint64(27))) * _C[2]
        return x ^ (x >> np.uint64(31))


def _hashes(strings: Sequence[str]) -> np.ndarray:
    return np.fromiter((get_string_id(s) for s in strings), dtype=np.uint64, count=len(strings))


def gap_features(words: Sequence[str], bag_words: int = BAG_WORDS) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hashed features of the gap after each of ``words``: ``(keys uint64, values float32,
    lengths int32)``, ``WINDOW_TEMPLATES + bag_words`` keys per gap, as ``SparseLinear`` reads them."""
    n = len(words)
    if n == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.float32), np.zeros(0, np.int32)
    low = [w.lower() for w in words]
    P = 3 + bag_words  # padding before the first word: the bag reaches back to word j - 2 - bag_words

    def pad(values, before, after):
        return np.concatenate([np.full(P, before, dtype=np.uint64), np.asarray(values, dtype=np.uint64),
                               np.full(3, after, dtype=np.uint64)])

    h = pad(_hashes(low), _BOS, _EOS)
    suf = pad(_hashes([w[-3:] for w in low]), _BOS, _EOS)
    upper = pad([w[:1].isupper() for w in words], 0, 0)
    digit = pad([any(c.isdigit() for c in w) for w in words], 0, 0)

    def at(arr, k):  # the value for word j + k of every gap j
        return arr[P + k: P + k + n]

    L2, L1, L0, R0, R1, R2 = (at(h, k) for k in (-2, -1, 0, 1, 2, 3))
    zero = np.zeros(n, np.uint64)
    cols = [
        _mix(zero, zero, 1),                    # bias
        _mix(L0, zero, 2), _mix(L1, zero, 3), _mix(L2, zero, 4),
        _mix(R0, zero, 5), _mix(R1, zero, 6), _mix(R2, zero, 7),
        _mix(L1, L0, 8), _mix(L0, R0, 9), _mix(R0, R1, 10),
        _mix(_mix(L1, L0, 11), R0, 12), _mix(_mix(L0, R0, 13), R1, 14),
        _mix(at(suf, 0), at(suf, 1), 15),
        _mix(at(upper, 1), at(digit, 0) * np.uint64(2) + at(digit, 1), 16),
        _mix(_mix(R0, R1, 17), R2, 18),
        _mix(_mix(L2, L1, 19), L0, 20),
    ]
    # the words further back, as a bag (one template for all of them): a wh-word or an inverted
    # auxiliary a few words before the gap ("what do you think | ...") tells a question
    cols += [_mix(at(h, -k), zero, 21) for k in range(3, 3 + bag_words)]
    keys = np.ascontiguousarray(np.stack(cols, axis=1).reshape(-1))
    return keys, np.ones(len(keys), np.float32), np.full(n, len(cols), np.int32)


def _class_ids(marks: Sequence[str]) -> np.ndarray:
    """The class of each gap's marks (symbols separated by spaces), as column indices."""
    return np.array([CLASSES.index(mark_class(m.split())) for m in marks], dtype=np.int64)


def _take(feats, rows: np.ndarray, per_gap: int):
    keys, vals, _ = feats
    idx = (rows[:, None] * per_gap + np.arange(per_gap)).reshape(-1)
    return (np.ascontiguousarray(keys[idx]), np.ascontiguousarray(vals[idx]),
            np.full(len(rows), per_gap, np.int32))


class LexicalExpert:
    """The class probabilities of the mark after each word, from the words around it; and the
    weight restoration gives them (``weight``, chosen on dev; 0: not used)."""

    def __init__(self, length: int = DEFAULT_LENGTH, weight: float = 1.0, meta: Optional[dict] = None,
                 bag_words: int = BAG_WORDS):
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise ValueError(Errors.E990.format(what="length", value=length))
        if isinstance(bag_words, bool) or not isinstance(bag_words, int) or bag_words < 0:
            raise ValueError(Errors.E990.format(what="bag_words", value=bag_words))
        self.length = length
        self.bag_words = bag_words
        self.weight = check_weight(weight)
        self.meta: dict = dict(meta or {})
        self.ops = NumpyOps()
        self.linear = SparseLinear_v2(nO=len(CLASSES), length=length)
        self.linear.initialize()
        #: the classes' training frequencies (add-one): restoration divides them out, so that the
        #: base rate punctgen already knows is not counted twice
        self.prior = np.full(len(CLASSES), 1.0 / len(CLASSES))

    # ------------------------------------------------------------------ use
    def predict(self, words: Sequence[str]) -> np.ndarray:
        """float64 ``(len(words), len(CLASSES))``: per word, the distribution of the kind of
        mark that follows it, the words of one stream in order."""
        if isinstance(words, str):
            raise ValueError(Errors.E991.format(kind="a string"))
        if not len(words):
            return np.zeros((0, len(CLASSES)))
        scores = self.linear.predict(gap_features(list(words), self.bag_words))
        return np.asarray(self.ops.softmax(scores), dtype=np.float64)

    def log_loss(self, streams: Sequence[Tuple[Sequence[str], Sequence[str]]]) -> float:
        """Mean negative log probability of the gold class per gap."""
        total, n = 0.0, 0
        for words, marks in streams:
            if len(words):
                p = self.predict(words)
                y = _class_ids(marks)
                total -= float(np.log(np.maximum(p[np.arange(len(y)), y], 1e-12)).sum())
                n += len(y)
        return total / max(n, 1)

    # ------------------------------------------------------------------ training
    @classmethod
    def fit(cls, train: Sequence[Tuple[Sequence[str], Sequence[str]]],
            dev: Sequence[Tuple[Sequence[str], Sequence[str]]] = (), *, epochs: int = 4, lr: float = 0.002,
            batch_size: int = 512, length: int = DEFAULT_LENGTH, seed: int = 0, progress=None,
            bag_words: int = BAG_WORDS, average: bool = True
            ) -> Tuple["LexicalExpert", dict]:
        """Train on streams ``(words, marks)`` (``marks[i]`` follows ``words[i]``, symbols
        separated by spaces, as :func:`spacy_punctgen.api.stream_training.stream_training_sentences`
        reads them) by Adam on the cross-entropy; the epoch of least dev log loss is kept
        (the last one without ``dev``), with ``average`` its averaged weights. ``progress``: a tqdm-like callable wrapping the epochs."""
        train = [(list(w), list(m)) for w, m in train]
        for words, marks in list(train) + [(list(w), list(m)) for w, m in dev]:
            if len(words) != len(marks):
                raise ValueError(Errors.E992.format(n_words=len(words), n_marks=len(marks)))
        words = [w for ws, _ in train for w in ws]
        if not words:
            raise ValueError(Errors.E993)
        # features per stream (the context never crosses from one stream into the next)
        parts = [gap_features(ws, bag_words) for ws, _ in train if ws]
        feats = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                 np.concatenate([p[2] for p in parts]))
        y = _class_ids([m for _, ms in train for m in ms])
        expert = cls(length=length, bag_words=bag_words)
        per_gap = WINDOW_TEMPLATES + bag_words
        opt = Adam(lr)
        rng = random.Random(seed)
        order = list(range(len(y)))
        best, best_loss, history = None, math.inf, []
        t0 = time.perf_counter()
        epoch_iter = range(1, epochs + 1)
        for epoch in (progress(epoch_iter) if progress else epoch_iter):
            rng.shuffle(order)
            for a in range(0, len(order), batch_size):
                rows = np.array(order[a:a + batch_size])
                scores, backprop = expert.linear.begin_update(_take(feats, rows, per_gap))
                d = expert.ops.softmax(scores)
                d[np.arange(len(rows)), y[rows]] -= 1.0
                backprop(d / len(rows))
                expert.linear.finish_update(opt)
            # the running average of the weights (thinc's Adam keeps it) is what is judged and kept:
            # it generalises better than the last step's weights, as for an averaged perceptron
            with expert.linear.use_params(opt.averages) if average and opt.averages else contextlib.nullcontext():
                loss = expert.log_loss(dev) if dev else math.nan
                history.append({"epoch": epoch, "dev_log_loss": None if math.isnan(loss) else round(loss, 5)})
                if not dev or loss < best_loss:
                    best_loss, best = loss, expert.params()
        expert.set_params(best)  # float16 values (params()), as they are saved
        info = {"epochs": epochs, "history": history, "train_gaps": int(len(y)),
                "best_dev_log_loss": None if math.isinf(best_loss) or math.isnan(best_loss) else round(best_loss, 5),
                "seconds": round(time.perf_counter() - t0, 1)}
        counts = np.bincount(y, minlength=len(CLASSES)).astype(np.float64) + 1.0
        expert.prior = counts / counts.sum()
        expert.meta.update({"train_gaps": int(len(y)), "classes": list(CLASSES)})
        return expert, info

    # ------------------------------------------------------------------ parameters
    def params(self) -> Dict[str, np.ndarray]:
        """The weights as stored: ``W`` as float16 ``(classes, length)`` (thinc's layout) and ``b``.
        A trained expert's weights are float16 values already (:meth:`fit` rounds them), so what
        is saved is what was chosen on dev, and loads back identical."""
        W = np.asarray(self.linear.get_param("W"), dtype=np.float32).reshape(len(CLASSES), self.length)
        return {"W": W.astype(np.float16), "b": np.asarray(self.linear.get_param("b"), dtype=np.float32).copy()}

    def set_params(self, params: Dict[str, np.ndarray]) -> None:
        C = len(CLASSES)
        try:
            W = np.asarray(params["W"])
            b = np.asarray(params["b"], dtype=np.float32)
        except KeyError as err:
            raise ValueError(Errors.E994.format(problem=f"no array {err}")) from None
        if W.shape != (C, self.length) or b.shape != (C,):
            raise ValueError(Errors.E994.format(problem=f"arrays of the wrong shape for {C} classes and "
                                                        f"length {self.length}"))
        W = W.astype(np.float32).reshape(-1)
        if not (np.isfinite(W).all() and np.isfinite(b).all()):
            raise ValueError(Errors.E994.format(problem="weights that are not finite"))
        self.linear.set_param("W", np.ascontiguousarray(W))
        self.linear.set_param("b", b.copy())

    def evidence(self, words: Sequence[str]) -> np.ndarray:
        """What restoration multiplies in: :meth:`predict` over the classes' training
        frequencies (a likelihood ratio: 1 where the words say nothing)."""
        return self.predict(words) / self.prior

    def sentence_evidence(self, sentences: Sequence) -> List[np.ndarray]:
        """:meth:`evidence` for the slots ``1..n`` of each sentence (anything with ``words``),
        read over the words of all of them in order, so that the words see across the sentences'
        boundaries: one array ``(len(words), len(CLASSES))`` a sentence."""
        sentences = list(sentences)
        probs = self.evidence([w for ps in sentences for w in ps.words])
        ends = np.cumsum([len(ps.words) for ps in sentences])
        return [probs[b - len(ps.words):b] for ps, b in zip(sentences, ends)]

    def cfg(self) -> dict:
        return {"classes": list(CLASSES), "length": self.length, "weight": self.weight,
                "n_templates": WINDOW_TEMPLATES, "bag_words": self.bag_words, "prior": [float(x) for x in self.prior], "meta": self.meta}

    @classmethod
    def from_cfg(cls, cfg: dict, params: Dict[str, np.ndarray], where: str) -> "LexicalExpert":
        if not isinstance(cfg, dict) or list(cfg.get("classes", ())) != list(CLASSES) \
                or cfg.get("n_templates") != WINDOW_TEMPLATES:
            raise ValueError(Errors.E995.format(where=where))
        expert = cls(length=cfg.get("length"), weight=cfg.get("weight", 1.0), meta=cfg.get("meta"),
                     bag_words=cfg.get("bag_words", 0))
        prior = np.asarray(cfg.get("prior", ()), dtype=np.float64)
        if prior.shape != (len(CLASSES),) or not np.isfinite(prior).all() or (prior <= 0).any():
            raise ValueError(Errors.E994.format(problem=f"{where}: 'prior' must be {len(CLASSES)} numbers above 0"))
        expert.prior = prior
        expert.set_params(params)
        return expert


def check_weight(weight) -> float:
    """The expert's weight in restoration: a finite number >= 0 (E996)."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
        raise ValueError(Errors.E996.format(weight=weight))
    return float(weight)


def sentence_streams(sentences: Sequence, words_per_stream: int = 500) -> List[Tuple[List[str], List[str]]]:
    """The expert's training streams from consecutive sentences of a text (``PunctSentence``\\ s
    in text order, e.g. the stream parser's sentences with the gold marks put back): their
    words in order, each with the marks of the slot after it; a new stream starts at the first
    sentence after ``words_per_stream`` words. Slot 0 (before a sentence's first word) is not
    read: the expert speaks of the mark after a word."""
    streams: List[Tuple[List[str], List[str]]] = []
    words: List[str] = []
    marks: List[str] = []
    for ps in sentences:
        words.extend(ps.words)
        marks.extend(" ".join(ps.slots[i]) for i in range(1, len(ps.words) + 1))
        if len(words) >= words_per_stream:
            streams.append((words, marks))
            words, marks = [], []
    if words:
        streams.append((words, marks))
    return streams
