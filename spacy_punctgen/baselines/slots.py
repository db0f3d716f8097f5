"""Slot labelling shared by every restoration baseline.

Why: the baselines of Li, Wang & Eisner (2019) §4 reduce restoration to tagging each slot ``i`` of a
depunctuated sentence with its *whole* surface string ``x_i`` (a tuple of punctuation
tokens, possibly empty).  This module fixes, once for all systems,

- the label codec (``label_of`` / ``slot_of``: JSON of the token list, so any token is
  safe, ``"[]"`` is the empty slot);
- the label vocabulary (:class:`SlotLabels`): strings seen at least ``min_count`` times
  in training get their own label; rarer ones share :data:`UNK`, so a model learns how
  likely "something rare" is;
- the back-off that keeps perplexity finite: a gold string outside the vocabulary gets
  ``p(UNK | context) * q(x)``, where ``q`` (:meth:`SlotLabels.backoff_logprob`) is a
  proper distribution over non-empty strings: length ``k >= 1`` with probability
  ``(1-r) r^(k-1)`` (``r = 1/2``) and each token uniform over the training punctuation
  types plus one unseen type.  It never gives 0, so no gold slot is impossible;
- minimum-Bayes-risk decoding (:meth:`SlotLabels.mbr`) from per-slot marginals, the
  rule that minimises expected AED (``decoder="mbr"``; Viterbi/argmax otherwise);
- the word context of a slot (``slot_words``): slot ``i`` lies between word ``i-1`` and
  word ``i``, with ``<s>`` / ``</s>`` beyond the ends.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from spacy_punctgen.errors import Errors

Slot = Tuple[str, ...]
UNK = "<unk>"
BOS, EOS = "<s>", "</s>"
_LEN_R = 0.5


def label_of(slot: Sequence[str]) -> str:
    return json.dumps(list(slot), ensure_ascii=False)


def slot_of(label: str) -> Slot:
    try:
        toks = json.loads(label)
    except json.JSONDecodeError:
        raise ValueError(Errors.E580.format(label=label)) from None
    if not isinstance(toks, list) or not all(isinstance(t, str) for t in toks):
        raise ValueError(Errors.E580.format(label=label))
    return tuple(toks)


def check_sentences(sents) -> None:
    """Clear errors for input that is not a list of preprocessed sentences."""
    for k, s in enumerate(sents):
        if not hasattr(s, "words") or not hasattr(s, "slots"):
            raise ValueError(Errors.E581.format(k=k, type=type(s).__name__))
        if len(s.slots) != len(s.words) + 1:
            raise ValueError(Errors.E582.format(k=k, sent_id=s.sent_id, n_words=len(s.words),
                                                 n_slots=len(s.words) + 1, found=len(s.slots)))


def slot_words(words: Sequence[str], i: int, offset: int) -> str:
    """The word at ``offset`` from slot ``i`` (offset -1 = word before, 0 = word after)."""
    j = i + offset
    if j < 0:
        return BOS
    if j >= len(words):
        return EOS
    return words[j]


class SlotLabels:
    """Label vocabulary over slot strings with an :data:`UNK` label for rare ones."""

    def __init__(self, labels: Sequence[str], punct_types: Iterable[str], fallback: Slot = ()):
        self.labels: List[str] = list(labels)
        self.index: Dict[str, int] = {lab: k for k, lab in enumerate(self.labels)}
        self.punct_types = sorted(set(punct_types))
        self.fallback: Slot = tuple(fallback)  # what a predicted UNK is written as

    @classmethod
    def from_sentences(cls, sents, min_count: int = 2) -> "SlotLabels":
        counts = Counter(tuple(s) for sent in sents for s in sent.slots)
        if not counts:
            raise ValueError(Errors.E583)
        kept = sorted((s for s, c in counts.items() if c >= min_count),
                      key=lambda s: (-counts[s], label_of(s)))
        rare = [s for s in counts if counts[s] < min_count]
        fallback = max(rare, key=lambda s: (counts[s], label_of(s))) if rare else ()
        types = {t for s in counts for t in s}
        return cls([label_of(s) for s in kept] + [UNK], types, fallback)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def unk_id(self) -> int:
        return self.index[UNK]

    def encode(self, slot: Sequence[str]) -> int:
        return self.index.get(label_of(slot), self.unk_id)

    def decode(self, k: int) -> Slot:
        lab = self.labels[k]
        return self.fallback if lab == UNK else slot_of(lab)

    def known(self, slot: Sequence[str]) -> bool:
        return label_of(slot) in self.index

    def backoff_logprob(self, slot: Sequence[str]) -> float:
        """``log q(x)`` of the back-off distribution described in the module docstring."""
        k = len(slot)
        if k == 0:
            raise ValueError(Errors.E584)
        v = len(self.punct_types) + 1
        return math.log(1 - _LEN_R) + (k - 1) * math.log(_LEN_R) - k * math.log(v)

    def gold_ids(self, sent) -> List[int]:
        return [self.encode(s) for s in sent.slots]

    def unk_logprob(self, sent) -> float:
        """Σ log q(x_i) over the gold slots that fall on :data:`UNK`."""
        return sum(self.backoff_logprob(s) for s in sent.slots if not self.known(s))

    def cost_matrix(self) -> np.ndarray:
        """``C[c, y]``: token edit distance between the strings of labels ``c`` and ``y``."""
        if getattr(self, "_cost", None) is None:
            from spacy_punctgen.evaluation.metrics import edit_distance

            strs = [self.decode(k) for k in range(len(self.labels))]
            self._cost = np.array([[edit_distance(a, b) for b in strs] for a in strs], dtype=np.float64)
        return self._cost

    def mbr(self, marginals: np.ndarray) -> List[int]:
        """Minimum-Bayes-risk labels: per slot, the label whose string has the least
        expected edit distance under the slot's marginal distribution ``(T, L)`` — the
        decision rule that minimises expected AED (Li, Wang & Eisner (2019) §6.1 decodes punctgen so)."""
        risk = np.asarray(marginals, dtype=np.float64) @ self.cost_matrix().T
        return [int(k) for k in risk.argmin(axis=1)]

    def to_dict(self) -> dict:
        return {"labels": self.labels, "punct_types": self.punct_types,
                "fallback": list(self.fallback)}

    @classmethod
    def from_dict(cls, d: dict) -> "SlotLabels":
        return cls(d["labels"], d["punct_types"], tuple(d["fallback"]))

    @staticmethod
    def dict_problem(d) -> Optional[Tuple[str, str, object]]:
        """What is wrong with a saved :meth:`to_dict`, as (field, what it must be, what it is),
        or None: the labels distinct slot labels with :data:`UNK` among them, the types and
        the fallback lists of strings."""
        if not isinstance(d, dict):
            return "", "an object", d
        labels = d.get("labels")
        if not isinstance(labels, list) or not labels:
            return ".labels", "a non-empty list", labels
        for k, lab in enumerate(labels):
            if not (isinstance(lab, str) and (lab == UNK or is_label(lab))):
                return f".labels[{k}]", f"{UNK!r} or a slot label (a JSON list of strings)", lab
        if len(set(labels)) != len(labels):
            dup = next(lab for k, lab in enumerate(labels) if lab in labels[:k])
            return ".labels", "a list of distinct labels, one of them repeated", dup
        if UNK not in labels:
            return ".labels", f"a list that holds {UNK!r}", labels
        for key in ("punct_types", "fallback"):
            val = d.get(key)
            if not (isinstance(val, list) and all(isinstance(t, str) for t in val)):
                return f".{key}", "a list of strings", val
        return None


def perplexity_per_slot(logprobs: Sequence[float], sents) -> float:
    """``exp(-Σ log p(x|w) / Σ (n+1))`` over sentences."""
    n_slots = sum(len(s.slots) for s in sents)
    return math.exp(-sum(logprobs) / n_slots) if n_slots else float("nan")


def write_json(path: Union[str, Path], obj) -> None:
    Path(path).write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf8")


def read_json(path: Union[str, Path]):
    """The JSON in file ``path``: E579 if it is missing, E590 naming it if it is not UTF-8
    JSON (binary, truncated, garbage) or cannot be read."""
    p = Path(path)
    if not p.exists():
        raise ValueError(Errors.E579.format(path=p))
    try:
        return json.loads(p.read_text(encoding="utf8"))
    except (UnicodeDecodeError, json.JSONDecodeError, OSError) as err:
        raise ValueError(Errors.E590.format(path=p, kind=type(err).__name__, err=short(err))) from None


def short(value, limit: int = 80) -> str:
    """``str`` of a (possibly long) value or exception, cut for an error message."""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def is_label(label) -> bool:
    """``label`` is a slot label (:func:`label_of` of some slot)."""
    if not isinstance(label, str):
        return False
    try:
        slot_of(label)
    except ValueError:
        return False
    return True
