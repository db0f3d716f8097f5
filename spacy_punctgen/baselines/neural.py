"""Shared machinery of the neural slot taggers (thinc on CPU, no PyTorch).

Why one module: the BiLSTM-CRF (:mod:`.crf_tagger`) and the attention tagger
(:mod:`.attn_tagger`) differ only in their output layer, so the slot inputs, the
bidirectional LSTM encoder, the training loop (Adam, minibatches, dev early stopping on
AED; ``decoder``: ``viterbi`` = the head's own best labelling, ``mbr`` = per-slot minimum
expected edit distance from the marginals) and save/load live here once.

Slot ``i`` lies between word ``i-1`` and word ``i``; its input is the concatenation of
hashed embeddings (thinc ``HashEmbed``, so rare and unseen words need no UNK handling) of
the lowercased word, its 3-letter suffix and prefix, for the word before and the word
after the slot (``<s>`` / ``</s>`` beyond the ends).  A thinc ``LSTM(bi=True)`` reads the
``n+1`` slot vectors; the subclass's head turns its states into label scores.
"""
from __future__ import annotations

import io
import math
import pickle
import random
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
from spacy.strings import get_string_id
from spacy.util import logger as spacy_logger
from thinc.api import (Adam, HashEmbed, LSTM, Maxout, Model, NumpyOps, chain, concatenate,
                       set_current_ops, with_array, with_padded)

from spacy_punctgen.evaluation.metrics import gold_slots, sentence_losses
from spacy_punctgen.baselines.base import Baseline, Prediction, load_hyper, load_labels, sentences_or_fail, state_field
from spacy_punctgen.baselines.slots import SlotLabels, check_sentences, short, slot_words
from spacy_punctgen.errors import Errors

logger = spacy_logger.getChild("punctgen")  # progress (hyperparameter ``log``); see training.train

_WEIGHTS = "model.bin"
N_COLUMNS = 6
ENCODER_DEFAULTS = {"width": 64, "hidden": 128, "depth": 1, "rows": 20000, "dropout": 0.2,
                    "min_label": 2, "learn_rate": 0.002, "batch_size": 16, "epochs": 10,
                    "patience": 3, "seed": 0, "log": False, "decoder": "viterbi"}


def slot_feature_ids(sent) -> np.ndarray:
    """``(n+1, 6)`` uint64 hashes: lower/suffix/prefix of the words before and after each slot."""
    words = sent.words
    rows = []
    for i in range(len(words) + 1):
        row = []
        for off in (-1, 0):
            w = slot_words(words, i, off).lower()
            row.extend((w, "s=" + w[-3:], "p=" + w[:3]))
        rows.append([get_string_id(x) for x in row])
    return np.asarray(rows, dtype=np.uint64)


def build_encoder(h: Dict) -> Model:
    """List[Ints2d] slot features -> List[Floats2d] BiLSTM states ``(n+1, hidden)``."""
    width, hidden = int(h["width"]), int(h["hidden"])
    embed = concatenate(*[HashEmbed(width, int(h["rows"]), column=c, seed=c + 7,
                                    dropout=float(h["dropout"])) for c in range(N_COLUMNS)])
    mix = Maxout(hidden, width * N_COLUMNS, nP=2, dropout=float(h["dropout"]), normalize=True)
    # thinc: with bi=True, nO is the width of the concatenated directions
    lstm = LSTM(hidden, hidden, bi=True, depth=int(h["depth"]), dropout=float(h["dropout"]))
    return chain(with_array(chain(embed, mix)), with_padded(lstm))


class NeuralSlotTagger(Baseline):
    """Base of the thinc taggers: subclasses give ``defaults``, ``build_head`` and the
    head's loss / decoding / log-probability on one sentence's scores."""

    probabilistic = True
    defaults: Dict = {}

    def __init__(self):
        self.hyper: Dict = {**ENCODER_DEFAULTS, **self.defaults}
        self.labels: Optional[SlotLabels] = None
        self.model: Optional[Model] = None
        self.history: List[Dict] = []

    # ---- for subclasses ----
    def build_head(self, n_labels: int) -> Model:
        raise NotImplementedError

    def loss_grad(self, scores: np.ndarray, gold: List[int]) -> Tuple[float, np.ndarray]:
        raise NotImplementedError

    def decode(self, scores: np.ndarray) -> List[int]:
        raise NotImplementedError

    def gold_logprob(self, scores: np.ndarray, gold: List[int]) -> float:
        raise NotImplementedError

    def marginals(self, scores: np.ndarray) -> np.ndarray:
        """``(T, L)`` per-slot label marginals, for minimum-Bayes-risk decoding."""
        raise NotImplementedError

    def extra_layers(self) -> List[Model]:
        """Models with parameters outside the forward chain (e.g. CRF transitions)."""
        return []

    # ---- building ----
    def _build(self) -> None:
        set_current_ops(NumpyOps())
        self.model = chain(build_encoder(self.hyper), self.build_head(len(self.labels)))

    def _scores(self, sents, is_train: bool):
        X = [slot_feature_ids(s) for s in sents]
        return self.model.begin_update(X) if is_train else (self.model.predict(X), None)

    # ---- training ----
    def fit(self, train_sents, dev_sents=None, **hyper) -> "NeuralSlotTagger":
        unknown = set(hyper) - set(self.hyper)
        if unknown:
            raise ValueError(Errors.E576.format(name=self.name, unknown=sorted(unknown)))
        self.hyper.update(hyper)
        self.set_decoder(self.hyper["decoder"])
        h = self.hyper
        train = sentences_or_fail(train_sents, "training")
        check_sentences(train)
        dev = list(dev_sents) if dev_sents else []
        check_sentences(dev)
        random.seed(int(h["seed"]))
        np.random.seed(int(h["seed"]))
        from thinc.api import fix_random_seed

        fix_random_seed(int(h["seed"]))
        self.labels = SlotLabels.from_sentences(train, int(h["min_label"]))
        self._build()
        sample = train[: min(len(train), 8)]
        self.model.initialize(X=[slot_feature_ids(s) for s in sample])
        for m in self.extra_layers():
            m.initialize()
        opt = Adam(float(h["learn_rate"]))
        gold = [self.labels.gold_ids(s) for s in train]
        best, best_state, bad = math.inf, None, 0
        order = list(range(len(train)))
        self.history = []
        for epoch in range(int(h["epochs"])):
            t0 = time.perf_counter()
            random.shuffle(order)
            total = 0.0
            bs = int(h["batch_size"])
            for b in range(0, len(order), bs):
                idx = order[b:b + bs]
                scores, backprop = self._scores([train[k] for k in idx], True)
                grads = []
                for sc, k in zip(scores, idx):
                    loss, d = self.loss_grad(sc, gold[k])
                    total += loss
                    grads.append(d)
                backprop(grads)
                self.model.finish_update(opt)
                for m in self.extra_layers():
                    m.finish_update(opt)
            entry = {"epoch": epoch + 1, "train_nll_per_slot": total / sum(len(g) for g in gold),
                     "seconds": round(time.perf_counter() - t0, 1)}
            if dev:
                entry["dev_aed"] = float(sentence_losses(gold_slots(dev), self.predict(dev)).sum()
                                         / sum(len(s.slots) for s in dev))
            self.history.append(entry)
            if h.get("log"):
                logger.info("[%s] %s", self.name, entry)
            if dev:
                if entry["dev_aed"] < best - 1e-9:
                    best, best_state, bad = entry["dev_aed"], self._params_bytes(), 0
                else:
                    bad += 1
                    if bad >= int(h["patience"]):
                        break
        if best_state is not None:
            self._load_params_bytes(best_state)
        return self

    # ---- prediction ----
    def predict(self, sents) -> List[Prediction]:
        sents = list(sents)
        check_sentences(sents)
        if self.model is None:
            raise ValueError(Errors.E577.format(name=self.name))
        out = []
        for b in range(0, len(sents), 64):
            scores, _ = self._scores(sents[b:b + 64], False)
            if self.hyper.get("decoder") == "mbr":
                ids = [self.labels.mbr(self.marginals(sc)) for sc in scores]
            else:
                ids = [self.decode(sc) for sc in scores]
            out.extend([self.labels.decode(k) for k in row] for row in ids)
        return out

    def slot_log_probs(self, sents) -> List[float]:
        sents = list(sents)
        check_sentences(sents)
        out = []
        for b in range(0, len(sents), 64):
            batch = sents[b:b + 64]
            scores, _ = self._scores(batch, False)
            out.extend(self.gold_logprob(sc, self.labels.gold_ids(s)) + self.labels.unk_logprob(s)
                       for sc, s in zip(scores, batch))
        return out

    # ---- persistence ----
    def _params_bytes(self) -> bytes:
        return pickle.dumps([self.model.to_bytes()] + [m.to_bytes() for m in self.extra_layers()])

    def _load_params_bytes(self, data: bytes) -> None:
        self._load_params(pickle.loads(data))

    def _load_params(self, parts: List[bytes]) -> None:
        self.model.from_bytes(parts[0])
        for m, p in zip(self.extra_layers(), parts[1:]):
            m.from_bytes(p)

    def _state(self) -> dict:
        return {"hyper": self.hyper, "labels": self.labels.to_dict(), "history": self.history}

    def _save_files(self, path: Path) -> None:
        if self.model is None:
            raise ValueError(Errors.E578.format(name=self.name))
        (path / _WEIGHTS).write_bytes(self._params_bytes())

    def _load_state(self, state: dict, path: Path) -> None:
        self.hyper = load_hyper(state, {**ENCODER_DEFAULTS, **self.defaults}, path)
        self.labels = load_labels(state, path)
        self.history = state_field(state, "history", lambda v: isinstance(v, list), "a list", path) \
            if "history" in state else []
        weights = path / _WEIGHTS
        if not weights.is_file():
            raise ValueError(Errors.E579.format(path=weights))
        parts = _weight_parts(weights.read_bytes(), weights)
        try:
            self._build()
            n_parts = 1 + len(self.extra_layers())
            if len(parts) != n_parts:
                raise ValueError(Errors.E595.format(found=len(parts), expected=n_parts))
            self._load_params(parts)
        except Exception as err:  # msgpack, thinc's dimension checks (weights of other labels)...
            raise ValueError(Errors.E592.format(path=weights, what="weights",
                                                err=f"{type(err).__name__}: {short(err)}")) from None


class _NoGlobals(pickle.Unpickler):
    """Unpickles plain data only: a weights file is a list of bytes, and a pickle that names a
    class or function (code to run) is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(Errors.E596.format(module=module, name=name))


def _weight_parts(data: bytes, path: Path) -> List[bytes]:
    """The parts of the weights file ``path`` (:meth:`NeuralSlotTagger._params_bytes`: a pickled
    list of thinc ``to_bytes`` blobs), read without running any code; E592 naming the file if
    it is anything else."""
    try:
        parts = _NoGlobals(io.BytesIO(data)).load()
    except Exception as err:  # UnpicklingError, EOFError, ValueError, ... on truncated or foreign bytes
        raise ValueError(Errors.E592.format(path=path, what="weights",
                                            err=f"{type(err).__name__}: {short(err)}")) from None
    if not (isinstance(parts, list) and parts and all(isinstance(p, bytes) for p in parts)):
        raise ValueError(Errors.E592.format(path=path, what="weights",
                                            err=f"a pickled {type(parts).__name__}, not a list of bytes"))
    return parts


def log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
