"""The sentence-end expert: what a whole sentence's words say about the mark that ends it.

Why: one sentence at a time (a chat message, a caption, a dictated sentence) most marks are at
the end, and their kind is a property of the whole clause: a wh-word or an auxiliary first
(``where are you going tonight``), a greeting or thanks (``!``), a heading in title case or a
signature (no mark at all). punctgen sees the end only through the root's right edge, and the
lexical expert (:mod:`.lexical`) only through the last few words. Restoration of an input that is
one sentence (``load(single_sentence_words=)``, :func:`spacy_punctgen.api.stream.one_sentence`)
therefore multiplies its final slot's distribution by this expert's class probabilities over
their training frequencies, raised to ``weight``, and its inner slots' terminal classes by
``inner_factor``: inside one sentence a sentence end is rare, while the shipped restoration model
learned its odds from streams, whose parser sentences often run past an end. Both numbers are
chosen on dev (``scripts/sentence_end_expert.py``). Streams are not touched.

The model is a multinomial logistic regression (thinc's ``SparseLinear``) over hashed features of
the sentence (:func:`sentence_features`): its first one to three words, its last one to three, the
last word's suffix, a bag of its words, its length, wh-word and auxiliary cues and the case of its
first and last words. Its classes are the lexical expert's (:data:`.lexical.CLASSES`, the kind of
the final slot's marks by :func:`.lexical.mark_class`).
"""
from __future__ import annotations

import contextlib
import json
import math
import random
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from spacy.strings import get_string_id
from thinc.api import Adam, NumpyOps, SparseLinear_v2

from spacy_punctgen.errors import Errors
from spacy_punctgen.model.lexical import CLASSES, mark_class

#: files of a saved expert (a folder of its own, or beside a model)
SENTENCE_END_CFG_FILE = "sentence_end.json"
SENTENCE_END_PARAMS_FILE = "sentence_end.npz"
#: hash buckets per class (float16 weights: 2 bytes a bucket and class, 1 MB in all)
DEFAULT_LENGTH = 2 ** 16
#: the classes that end a sentence, scaled by ``inner_factor`` inside a one-sentence input
TERMINAL_CLASSES = (".", "?", "!")
WH_WORDS = frozenset({"what", "who", "whom", "whose", "which", "when", "where", "why", "how"})
AUXILIARIES = frozenset({
    "do", "does", "did", "is", "are", "was", "were", "am", "can", "could", "would", "will", "should", "shall",
    "may", "might", "must", "have", "has", "had", "isn't", "aren't", "wasn't", "weren't", "don't", "doesn't",
    "didn't", "won't", "can't", "couldn't", "wouldn't", "shouldn't", "haven't", "hasn't", "hadn't"})
_TERMINAL_COLUMNS = [CLASSES.index(c) for c in TERMINAL_CLASSES]


def _length_bucket(n: int) -> int:
    return n if n < 12 else (20 if n < 20 else 30)


def sentence_features(words: Sequence[str]) -> List[str]:
    """The feature strings of a sentence (its words in order, as written): see the module docstring."""
    low = [w.lower() for w in words]
    n = len(low)
    pad = ["<s>"] * 3 + low + ["</s>"] * 3
    feats = ["bias", f"len={_length_bucket(n)}",
             f"w0={pad[3]}", f"w1={pad[4]}", f"w01={pad[3]}|{pad[4]}", f"w012={pad[3]}|{pad[4]}|{pad[5]}",
             f"wl={pad[-4]}", f"wl2={pad[-5]}|{pad[-4]}", f"wl3={pad[-6]}|{pad[-5]}|{pad[-4]}",
             f"sufl={pad[-4][-3:]}"]
    feats += [f"bag={w}" for w in sorted(set(low))]
    if n:
        if low[0] in WH_WORDS:
            feats.append("wh0")
        if any(w in WH_WORDS for w in low[:3]):
            feats.append("wh3")
        if low[0] in AUXILIARIES:
            feats.append("aux0")
        if n > 1 and low[0] in WH_WORDS and low[1] in AUXILIARIES:
            feats.append("wh_aux")
        if words[0][:1].isupper():
            feats.append("cap0")
        if words[-1][:1].isupper():
            feats.append("capl")
        if any(c.isdigit() for c in words[-1]):
            feats.append("digl")
        if len(words[0]) > 1 and words[0].isupper():
            feats.append("allcaps0")
        if n > 1 and all(w[:1].isupper() for w in words if w[:1].isalpha()):
            feats.append("titlecase")
    return feats


def _keys(words: Sequence[str]) -> np.ndarray:
    return np.fromiter((get_string_id(f) for f in sentence_features(words)), dtype=np.uint64)


def _batch(rows: Sequence[np.ndarray]):
    keys = np.ascontiguousarray(np.concatenate(rows)) if rows else np.zeros(0, np.uint64)
    return keys, np.ones(len(keys), np.float32), np.array([len(r) for r in rows], np.int32)


def check_factor(name: str, value, low_open: bool = False) -> float:
    """A weight (>= 0) or the inner factor (in (0, 1]) as a float; E026 naming it otherwise."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if ok and name == "inner_factor":
        ok = 0 < value <= 1
    elif ok:
        ok = value >= 0
    if not ok:
        allowed = "a number in (0, 1]" if name == "inner_factor" else "a finite number >= 0"
        raise ValueError(Errors.E026.format(name=name, allowed=allowed, value=value))
    return float(value)


class SentenceEndExpert:
    """The class probabilities of a sentence's final slot from its words; the ``weight`` and
    ``inner_factor`` restoration gives a one-sentence input (see the module docstring)."""

    def __init__(self, length: int = DEFAULT_LENGTH, weight: float = 0.5, inner_factor: float = 0.1,
                 meta: Optional[dict] = None):
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise ValueError(Errors.E026.format(name="length", allowed="an integer >= 1", value=length))
        self.length = length
        self.weight = check_factor("weight", weight)
        self.inner_factor = check_factor("inner_factor", inner_factor)
        self.meta: dict = dict(meta or {})
        self.ops = NumpyOps()
        self.linear = SparseLinear_v2(nO=len(CLASSES), length=length)
        self.linear.initialize()
        #: the classes' training frequencies (add-one), divided out as for the lexical expert
        self.prior = np.full(len(CLASSES), 1.0 / len(CLASSES))

    # ------------------------------------------------------------------ use
    def predict(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """float64 ``(len(sentences), len(CLASSES))``: per sentence (its words), the distribution
        of the kind of mark in its final slot."""
        if isinstance(sentences, str) or any(isinstance(s, str) for s in sentences):
            raise ValueError(Errors.E027.format(problem="sentences must be lists of words, not strings"))
        if not len(sentences):
            return np.zeros((0, len(CLASSES)))
        scores = self.linear.predict(_batch([_keys(s) for s in sentences]))
        return np.asarray(self.ops.softmax(scores), dtype=np.float64)

    def slot_evidence(self, sentences: Sequence[Sequence[str]],
                      weight: Optional[float] = None) -> List[np.ndarray]:
        """Per sentence, the factors of its slots ``1..n`` that restoration multiplies in (one row
        ``(len(CLASSES),)`` a slot, as the lexical expert's evidence): the terminal classes times
        ``inner_factor`` at slots ``1..n-1``, and ``(q / prior) ** weight`` at slot ``n``
        (``weight``: None for the expert's own)."""
        w = self.weight if weight is None else check_factor("weight", weight)
        sentences = [list(s) for s in sentences]
        q = self.predict([s for s in sentences if s]) if any(sentences) else np.zeros((0, len(CLASSES)))
        out, k = [], 0
        for words in sentences:
            rows = np.ones((len(words), len(CLASSES)))
            if words:
                rows[:-1, _TERMINAL_COLUMNS] = self.inner_factor
                rows[-1] = np.exp(w * (np.log(np.maximum(q[k], 1e-300)) - np.log(self.prior)))
                k += 1
            out.append(rows)
        return out

    def log_loss(self, sentences: Sequence[Sequence[str]], labels: Sequence[int]) -> float:
        p = self.predict(sentences)
        y = np.asarray(labels, dtype=np.int64)
        return float(-np.log(np.maximum(p[np.arange(len(y)), y], 1e-12)).mean()) if len(y) else math.nan

    # ------------------------------------------------------------------ training
    @classmethod
    def fit(cls, train: Sequence[Tuple[Sequence[str], Sequence[str]]],
            dev: Sequence[Tuple[Sequence[str], Sequence[str]]] = (), *, epochs: int = 6, lr: float = 0.002,
            batch_size: int = 256, length: int = DEFAULT_LENGTH, seed: int = 0
            ) -> Tuple["SentenceEndExpert", dict]:
        """Train on ``(words, final_marks)`` pairs (the final slot's symbols) by Adam on the
        cross-entropy; the epoch of least dev log loss is kept (the last without ``dev``), with
        the averaged weights. E028 for no training sentence."""
        X = [_keys(list(w)) for w, _ in train if len(w)]
        y = np.array([CLASSES.index(mark_class(list(m))) for w, m in train if len(w)], dtype=np.int64)
        if not len(X):
            raise ValueError(Errors.E028)
        dev_words = [list(w) for w, _ in dev if len(w)]
        dev_y = [CLASSES.index(mark_class(list(m))) for w, m in dev if len(w)]
        expert = cls(length=length)
        opt = Adam(lr)
        rng = random.Random(seed)
        order = list(range(len(y)))
        best, best_loss, history = None, math.inf, []
        for epoch in range(1, epochs + 1):
            rng.shuffle(order)
            for a in range(0, len(order), batch_size):
                rows = order[a:a + batch_size]
                scores, backprop = expert.linear.begin_update(_batch([X[i] for i in rows]))
                d = expert.ops.softmax(scores)
                d[np.arange(len(rows)), y[rows]] -= 1.0
                backprop(d / len(rows))
                expert.linear.finish_update(opt)
            with expert.linear.use_params(opt.averages) if opt.averages else contextlib.nullcontext():
                loss = expert.log_loss(dev_words, dev_y) if dev_words else math.nan
                history.append({"epoch": epoch, "dev_log_loss": None if math.isnan(loss) else round(loss, 5)})
                if not dev_words or loss < best_loss:
                    best_loss, best = loss, expert.params()
        expert.set_params(best)
        counts = np.bincount(y, minlength=len(CLASSES)).astype(np.float64) + 1.0
        expert.prior = counts / counts.sum()
        expert.meta.update({"train_sentences": int(len(y))})
        info = {"epochs": epochs, "history": history, "train_sentences": int(len(y)),
                "best_dev_log_loss": None if math.isinf(best_loss) or math.isnan(best_loss) else round(best_loss, 5)}
        return expert, info

    # ------------------------------------------------------------------ parameters and files
    def params(self) -> Dict[str, np.ndarray]:
        """``W`` as float16 ``(classes, length)`` and ``b``: what is saved (and what :meth:`fit` keeps)."""
        W = np.asarray(self.linear.get_param("W"), dtype=np.float32).reshape(len(CLASSES), self.length)
        return {"W": W.astype(np.float16), "b": np.asarray(self.linear.get_param("b"), dtype=np.float32).copy()}

    def set_params(self, params: Dict[str, np.ndarray]) -> None:
        C = len(CLASSES)
        try:
            W, b = np.asarray(params["W"]), np.asarray(params["b"], dtype=np.float32)
        except KeyError as err:
            raise ValueError(Errors.E027.format(problem=f"no array {err}")) from None
        if W.shape != (C, self.length) or b.shape != (C,):
            raise ValueError(Errors.E027.format(problem=f"arrays of the wrong shape for {C} classes and length {self.length}"))
        W = W.astype(np.float32).reshape(-1)
        if not (np.isfinite(W).all() and np.isfinite(b).all()):
            raise ValueError(Errors.E027.format(problem="weights that are not finite"))
        self.linear.set_param("W", np.ascontiguousarray(W))
        self.linear.set_param("b", b.copy())

    def cfg(self) -> dict:
        return {"classes": list(CLASSES), "length": self.length, "weight": self.weight,
                "inner_factor": self.inner_factor, "prior": [float(x) for x in self.prior], "meta": self.meta}

    def to_disk(self, path: Union[str, Path]) -> Path:
        """Write :data:`SENTENCE_END_CFG_FILE` and :data:`SENTENCE_END_PARAMS_FILE` into folder ``path``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / SENTENCE_END_CFG_FILE).write_text(json.dumps(self.cfg(), sort_keys=True, indent=2) + "\n",
                                                  encoding="utf-8")
        params = self.params()
        with open(path / SENTENCE_END_PARAMS_FILE, "wb") as f:
            np.savez_compressed(f, **{k: params[k] for k in sorted(params)})
        return path

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "SentenceEndExpert":
        """The expert saved in folder ``path``; E027 naming what is wrong with it."""
        path = Path(path)
        cfg_file, params_file = path / SENTENCE_END_CFG_FILE, path / SENTENCE_END_PARAMS_FILE
        if not cfg_file.is_file() or not params_file.is_file():
            raise ValueError(Errors.E027.format(problem=f"{path} does not hold {SENTENCE_END_CFG_FILE} and "
                                                        f"{SENTENCE_END_PARAMS_FILE}"))
        try:
            cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
            with np.load(params_file, allow_pickle=False) as z:
                params = {k: z[k] for k in z.files}
        except (OSError, ValueError, UnicodeDecodeError) as err:
            raise ValueError(Errors.E027.format(problem=f"{path}: {err}")) from None
        if not isinstance(cfg, dict) or list(cfg.get("classes", ())) != list(CLASSES):
            raise ValueError(Errors.E027.format(problem=f"{cfg_file} is not a sentence-end expert's settings"))
        try:
            expert = cls(length=cfg.get("length"), weight=cfg.get("weight"), inner_factor=cfg.get("inner_factor"),
                         meta=cfg.get("meta"))
        except ValueError as err:
            raise ValueError(Errors.E027.format(problem=f"{cfg_file}: {err}")) from None
        prior = np.asarray(cfg.get("prior", ()), dtype=np.float64)
        if prior.shape != (len(CLASSES),) or not np.isfinite(prior).all() or (prior <= 0).any():
            raise ValueError(Errors.E027.format(problem=f"{cfg_file}: 'prior' must be {len(CLASSES)} numbers above 0"))
        expert.prior = prior
        expert.set_params(params)
        return expert
