"""Linear-chain CRF over slots with lexical context features (python-crfsuite).

Why: the strongest tree-free baseline.  Each slot ``i`` is labelled with its whole
string ``x_i`` (:mod:`.slots`); features look only at the words around the slot (forms,
lowercase, prefixes/suffixes, word pairs across the slot, position in the sentence),
optionally UPOS — no syntax.  crfsuite trains by L-BFGS with L1 (``c1``) and L2
(``c2``) penalties and decodes by Viterbi; ``Tagger.probability`` gives the exact
probability of a label sequence, so the CRF has a perplexity too (crfsuite returns it as
a probability, not a log; one that underflows is floored at 1e-300, log ≈ −690).

Hyperparameters (``fit(..., **hyper)``): ``window`` (words each side, default 2),
``min_freq`` (rarer training words become ``<rare>`` in identity features, default 2),
``min_label`` (slot strings rarer than this share the UNK label, default 2),
``affixes`` (max prefix/suffix length, default 3), ``upos`` (add UPOS features,
default False), ``c1`` / ``c2`` / ``max_iterations`` (crfsuite, defaults 0.05/0.01/200),
``feature_minfreq`` (crfsuite's own attribute cut-off, default 1), ``decoder``
(``viterbi`` or ``mbr``: per-slot minimum expected edit distance from crfsuite's marginals;
a decoding choice, so it can be changed on a trained model with :meth:`set_decoder`).
"""
from __future__ import annotations

import importlib.util
import struct
import tempfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional

from spacy_punctgen.baselines.base import (META_FILE, Baseline, Prediction, load_hyper, load_labels,
                                           sentences_or_fail, state_field)
from spacy_punctgen.baselines.slots import SlotLabels, check_sentences, short, slot_words
from spacy_punctgen.errors import Errors

RARE = "<rare>"
_MODEL = "crf.model"
DEFAULTS = {"window": 2, "min_freq": 2, "min_label": 2, "affixes": 3, "upos": False,
            "c1": 0.05, "c2": 0.01, "max_iterations": 200, "feature_minfreq": 1,
            "decoder": "viterbi"}


def _crfsuite():
    try:
        import pycrfsuite
    except ImportError:  # pragma: no cover - depends on the environment
        raise ValueError(Errors.E575) from None
    return pycrfsuite


def _len_bucket(n: int) -> str:
    return str(n) if n < 5 else "5-9" if n < 10 else "10-19" if n < 20 else "20-39" if n < 40 else "40+"


class LexicalCRF(Baseline):
    name = "crf_lexical"
    probabilistic = True

    def __init__(self):
        self.hyper: Dict = dict(DEFAULTS)
        self.vocab: set = set()
        self.labels: Optional[SlotLabels] = None
        self._tagger = None
        self._model_bytes: Optional[bytes] = None

    # ---- features ----
    def _word(self, w: str) -> str:
        return w if w in self.vocab or w in ("<s>", "</s>") else RARE

    def slot_features(self, sent, i: int) -> List[str]:
        h = self.hyper
        words, n = sent.words, len(sent.words)
        f = ["b", f"first={i == 0}", f"last={i == n}", f"len={_len_bucket(n)}",
             f"tolast={min(n - i, 4)}", f"fromfirst={min(i, 4)}"]
        win = int(h["window"])
        for off in range(-win, win):  # -win..-1 before the slot, 0..win-1 after it
            w = slot_words(words, i, off)
            lw = w.lower()
            f.append(f"w[{off}]={self._word(w)}")
            f.append(f"l[{off}]={self._word(lw) if lw in self.vocab else self._word(w)}")
            if w not in ("<s>", "</s>"):
                for k in range(1, int(h["affixes"]) + 1):
                    if len(lw) > k:
                        f.append(f"s{k}[{off}]={lw[-k:]}")
                        f.append(f"p{k}[{off}]={lw[:k]}")
                f.append(f"shape[{off}]={_shape(w)}")
            if h["upos"]:
                j = i + off
                f.append(f"u[{off}]={sent.upos[j] if 0 <= j < n else 'BOUND'}")
        a, b = self._word(slot_words(words, i, -1)), self._word(slot_words(words, i, 0))
        f.append(f"pair={a}|{b}")
        if h["upos"]:
            ua = sent.upos[i - 1] if i > 0 else "BOUND"
            ub = sent.upos[i] if i < n else "BOUND"
            f.append(f"upair={ua}|{ub}")
        return f

    def _xseq(self, sent) -> List[List[str]]:
        return [self.slot_features(sent, i) for i in range(len(sent.words) + 1)]

    # ---- training / prediction ----
    def fit(self, train_sents, dev_sents=None, **hyper) -> "LexicalCRF":
        unknown = set(hyper) - set(DEFAULTS)
        if unknown:
            raise ValueError(Errors.E576.format(name="crf_lexical", unknown=sorted(unknown)))
        self.hyper = {**DEFAULTS, **hyper}
        self.set_decoder(self.hyper["decoder"])
        train = sentences_or_fail(train_sents, "training")
        check_sentences(train)
        counts = Counter(w for s in train for w in s.words)
        counts.update(w.lower() for s in train for w in s.words)
        self.vocab = {w for w, c in counts.items() if c >= int(self.hyper["min_freq"])}
        self.labels = SlotLabels.from_sentences(train, int(self.hyper["min_label"]))
        crfsuite = _crfsuite()
        trainer = crfsuite.Trainer(verbose=False)
        for s in train:
            trainer.append(self._xseq(s), [self.labels.labels[k] for k in self.labels.gold_ids(s)])
        trainer.set_params({"c1": float(self.hyper["c1"]), "c2": float(self.hyper["c2"]),
                            "max_iterations": int(self.hyper["max_iterations"]),
                            "feature.minfreq": float(self.hyper["feature_minfreq"]),
                            "feature.possible_transitions": True})
        with tempfile.TemporaryDirectory() as tmp:
            trainer.train(str(Path(tmp) / _MODEL))
            self._model_bytes = (Path(tmp) / _MODEL).read_bytes()
        self._tagger = None
        return self

    def _get_tagger(self):
        if self._tagger is None:
            if self._model_bytes is None:
                raise ValueError(Errors.E577.format(name="crf_lexical"))
            self._tmp = tempfile.TemporaryDirectory()
            p = Path(self._tmp.name) / _MODEL
            p.write_bytes(self._model_bytes)
            self._tagger = _crfsuite().Tagger()
            self._tagger.open(str(p))
            self._known = set(self._tagger.labels())
        return self._tagger

    def predict(self, sents) -> List[Prediction]:
        sents = list(sents)
        check_sentences(sents)
        tagger = self._get_tagger()
        out = []
        mbr = self.hyper.get("decoder") == "mbr"
        for s in sents:
            xseq = self._xseq(s)
            if mbr:
                tagger.set(xseq)
                marg = [[tagger.marginal(lab, t) if lab in self._known else 0.0
                         for lab in self.labels.labels] for t in range(len(xseq))]
                ids = self.labels.mbr(marg)
            else:
                ids = [self.labels.index[t] for t in tagger.tag(xseq)]
            out.append([self.labels.decode(k) for k in ids])
        return out

    def slot_log_probs(self, sents) -> List[float]:
        import math

        sents = list(sents)
        check_sentences(sents)
        tagger = self._get_tagger()
        out = []
        for s in sents:
            tagger.set(self._xseq(s))
            p = tagger.probability([self.labels.labels[k] for k in self.labels.gold_ids(s)])
            out.append(math.log(max(p, 1e-300)) + self.labels.unk_logprob(s))
        return out

    # ---- persistence ----
    def _state(self) -> dict:
        return {"hyper": self.hyper, "vocab": sorted(self.vocab), "labels": self.labels.to_dict()}

    def _save_files(self, path: Path) -> None:
        if self._model_bytes is None:
            raise ValueError(Errors.E578.format(name="crf_lexical"))
        (path / _MODEL).write_bytes(self._model_bytes)

    def _load_state(self, state: dict, path: Path) -> None:
        self.hyper = load_hyper(state, DEFAULTS, path)
        self.vocab = set(state_field(state, "vocab", lambda v: isinstance(v, list) and all(
            isinstance(w, str) for w in v), "a list of words", path))
        self.labels = load_labels(state, path)
        model = path / _MODEL
        if not model.is_file():
            raise ValueError(Errors.E579.format(path=model))
        data = model.read_bytes()
        # CRFsuite reads a truncated model past its end and crashes the process: check first
        problem = crfsuite_problem(data)
        if problem is not None:
            raise ValueError(Errors.E592.format(path=model, what="CRFsuite model", err=problem))
        self._model_bytes = data
        self._tagger = None
        if importlib.util.find_spec("pycrfsuite") is not None:  # else E575 when it is used
            try:
                self._get_tagger()
            except (ValueError, OSError) as err:
                raise ValueError(Errors.E592.format(path=model, what="CRFsuite model", err=short(err))) from None
            unknown = sorted(set(self._tagger.labels()) - set(self.labels.labels))
            if unknown:
                raise ValueError(Errors.E592.format(path=model, what="CRFsuite model", err=(
                    f"labels {unknown[:3]} are not in the label vocabulary of {META_FILE}")))


#: CRFsuite's model file (crf1m_model.c): a 48-byte header (magic, file size, type, version,
#: three counts, five chunk offsets) and five chunks, each opening with its magic and size
_CRF_HEADER = struct.Struct("<4sI4sI8I")
_CRF_CHUNKS = (b"FEAT", b"CQDB", b"CQDB", b"LFRF", b"AFRF")


def crfsuite_problem(data: bytes) -> Optional[str]:
    """What makes ``data`` unreadable as a CRFsuite model, or None: a wrong magic or type, a
    size other than the file's (truncated), a chunk that is not where the header says or
    runs past the end."""
    if len(data) < _CRF_HEADER.size:
        return f"{len(data)} bytes, shorter than the {_CRF_HEADER.size}-byte header"
    magic, size, kind, _version, *rest = _CRF_HEADER.unpack_from(data)
    if magic != b"lCRF" or kind != b"FOMC":
        return f"not a CRFsuite CRF1d model (starts with {data[:4]!r})"
    if size != len(data):
        return f"the header says {size} bytes, the file has {len(data)}"
    for off, chunk in zip(rest[3:], _CRF_CHUNKS):
        if off + 8 > size or data[off:off + 4] != chunk:
            return f"no {chunk.decode()} chunk at offset {off}"
        if off + struct.unpack_from("<I", data, off + 4)[0] > size:
            return f"the {chunk.decode()} chunk at offset {off} runs past the end"
    return None


def _shape(w: str) -> str:
    out = []
    for ch in w[:6]:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else \
            "c" if ord(ch) > 0x2e80 else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)
