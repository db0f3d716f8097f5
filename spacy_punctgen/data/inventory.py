"""Vocabularies learned from the *training* split only (docs/model.md §1).

Why a separate object: the puncteme set ``V``, the allowed pairs ``W_d`` and
the rare-word map must be identical at training and test time and saved with
the model, so they live in one JSON-serialisable inventory.
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence, subtree_spans
from spacy_punctgen.errors import Errors

Puncteme = Tuple[str, ...]
EPSILON: Puncteme = ()
BOS = "^"
UNK_SYMBOL = "<unk>"
UNK_WORD = "UNK"
PAIRS_MODES = ("full", "halves")


def relation_key(deprel: str) -> str:
    """``acl:relcl`` -> ``acl``: W_d is shared by subtypes to keep it dense."""
    return deprel.split(":", 1)[0].lower()


class PunctInventory:
    """Word counts, punctemes ``V``, symbols ``Σ`` and allowed pairs ``W_d``.

    ``pairs_for`` backs off, for a relation never seen in training, to the
    union of all relations' pairs: a test tree may use a rare relation, and
    refusing every non-empty puncteme there would make its slots impossible.
    """

    def __init__(
        self,
        word_counts: Dict[str, int],
        punctemes: Sequence[Puncteme],
        symbols: Sequence[str],
        pairs: Dict[str, Sequence[Tuple[int, int]]],
        min_count: int = 5,
        pairs_mode: str = "halves",
    ):
        if pairs_mode not in PAIRS_MODES:
            raise ValueError(Errors.E525.format(modes=PAIRS_MODES, pairs_mode=pairs_mode))
        if not punctemes or tuple(punctemes[0]) != EPSILON:
            raise ValueError(Errors.E526)
        if list(symbols[:2]) != [BOS, UNK_SYMBOL]:
            raise ValueError(Errors.E527.format(bos=BOS, unk=UNK_SYMBOL))
        self.word_counts = dict(word_counts)
        self.punctemes: List[Puncteme] = [tuple(p) for p in punctemes]
        self.symbols: List[str] = list(symbols)
        self.pairs: Dict[str, List[Tuple[int, int]]] = {
            rel: sorted({(int(l), int(r)) for l, r in lst}) for rel, lst in pairs.items()
        }
        self.min_count = int(min_count)
        self._check_consistent()
        self.pairs_mode = pairs_mode
        self._puncteme_ids = {p: i for i, p in enumerate(self.punctemes)}
        self._symbol_ids = {s: i for i, s in enumerate(self.symbols)}
        self._all_pairs = sorted({p for lst in self.pairs.values() for p in lst} | {(0, 0)})

    @classmethod
    def from_sentences(
        cls, sentences: Iterable[PunctSentence], min_count: int = 5, pairs_mode: str = "halves"
    ) -> "PunctInventory":
        """Build from training sentences (never dev/test)."""
        sentences = list(sentences)
        counts = Counter(w for s in sentences for w in s.words)
        seqs = {tuple(slot) for s in sentences for slot in s.slots} - {EPSILON}
        punctemes = [EPSILON] + sorted(seqs)
        ids = {p: i for i, p in enumerate(punctemes)}
        symbols = [BOS, UNK_SYMBOL] + sorted({t for p in punctemes for t in p} - {BOS, UNK_SYMBOL})
        pairs: Dict[str, set] = {}
        for s in sentences:
            for node, (a, b) in enumerate(subtree_spans(s.heads)):
                l, r = ids[tuple(s.slots[a])], ids[tuple(s.slots[b + 1])]
                bag = pairs.setdefault(relation_key(s.deprels[node]), {(0, 0)})
                bag.add((l, r))
                if pairs_mode == "halves":
                    bag.update(((l, 0), (0, r)))
        return cls(dict(counts), punctemes, symbols, pairs, min_count, pairs_mode)

    # -- look-ups -------------------------------------------------------------
    def word(self, form: str) -> str:
        """The form, or ``UNK`` if seen fewer than ``min_count`` times in training."""
        return form if self.word_counts.get(form, 0) >= self.min_count else UNK_WORD

    def puncteme_id(self, seq: Sequence[str]) -> Optional[int]:
        return self._puncteme_ids.get(tuple(seq))

    def symbol_id(self, tok: str) -> int:
        """Index in ``symbols``; 1 (``<unk>``) for punctuation never seen in training."""
        return self._symbol_ids.get(tok, 1)

    def pairs_for(self, rel: str) -> List[Tuple[int, int]]:
        """Allowed (l, r) puncteme ids for a relation; union of all for an unseen one."""
        return self.pairs.get(relation_key(rel), self._all_pairs)

    # -- persistence -----------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "min_count": self.min_count,
            "pairs_mode": self.pairs_mode,
            "word_counts": dict(sorted(self.word_counts.items())),
            "punctemes": [list(p) for p in self.punctemes],
            "symbols": list(self.symbols),
            "pairs": {rel: [list(p) for p in lst] for rel, lst in sorted(self.pairs.items())},
        }

    @classmethod
    def from_dict(cls, data: dict) -> "PunctInventory":
        """The inventory of :meth:`to_dict`'s JSON, every field's type checked first (a saved
        model's ``inventory.json``: a string count or a fractional ``min_count`` would
        otherwise load and fail, or change every look-up, much later)."""
        problem = ("(top level)", "an object", data) if not isinstance(data, dict) else _field_problem(data)
        if problem is not None:
            field, expected, value = problem
            raise ValueError(Errors.E538.format(field=field, expected=expected, value=_short(value)))
        return cls(
            word_counts=data["word_counts"],
            punctemes=[tuple(p) for p in data["punctemes"]],
            symbols=data["symbols"],
            pairs={rel: [tuple(p) for p in lst] for rel, lst in data["pairs"].items()},
            min_count=data.get("min_count", 5),
            pairs_mode=data.get("pairs_mode", "halves"),
        )

    def _check_consistent(self) -> None:
        """The invariants that look-ups rely on (E539): distinct symbols and punctemes, every
        puncteme's tokens among the symbols, every pair's ids among the punctemes, relation
        keys as :func:`relation_key` makes them, ``min_count`` not negative."""
        problem = self._inconsistency()
        if problem is not None:
            field, value, rule = problem
            raise ValueError(Errors.E539.format(field=field, value=value, rule=rule))

    def _inconsistency(self) -> Optional[Tuple[str, str, str]]:
        """The first broken invariant as (field, what it holds, the rule), or None."""
        if self.min_count < 0:
            return "min_count", repr(self.min_count), "it must not be negative"
        for field, seq in (("symbols", self.symbols), ("punctemes", self.punctemes)):
            if len(set(seq)) != len(seq):
                seen: Dict[object, int] = {}
                for i, item in enumerate(seq):
                    if item in seen:
                        shown = list(item) if field == "punctemes" else item
                        return field, f"{shown!r} twice (at {seen[item]} and {i})", f"{field} must be distinct"
                    seen[item] = i
        known = set(self.symbols)
        for pid, p in enumerate(self.punctemes):
            unknown = [t for t in p if t not in known]
            if unknown:
                return (f"punctemes[{pid}]", repr(unknown[0]),
                        "every token of a puncteme must be one of 'symbols'")
        last = len(self.punctemes) - 1
        for rel, lst in self.pairs.items():
            if relation_key(rel) != rel:
                return ("pairs", f"the relation key {rel!r}",
                        f"keys are as relation_key makes them ({relation_key(rel)!r}); others are never looked up")
            # sorted: the smallest l is first, the largest last
            if lst and not (0 <= lst[0][0] and lst[-1][0] <= last and 0 <= min(r for _, r in lst)
                            and max(r for _, r in lst) <= last):
                bad = next(p for p in lst if not (0 <= p[0] <= last and 0 <= p[1] <= last))
                return f"pairs[{rel!r}]", f"the pair {list(bad)}", f"puncteme ids run from 0 to {last}"
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PunctInventory) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (f"PunctInventory({len(self.punctemes)} punctemes, {len(self.symbols)} symbols, "
                f"{len(self.pairs)} relations, {len(self.word_counts)} word types)")


def _short(value, limit: int = 60) -> str:
    """``repr`` of a (possibly huge) bad value, cut for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class _Missing:
    def __repr__(self) -> str:
        return "nothing (missing)"


_MISSING = _Missing()


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _first_bad(items, ok):
    """The first of ``items`` for which ``ok`` is false, or None (all fine)."""
    return next((x for x in items if not ok(x)), None)


def _field_problem(data: dict) -> Optional[Tuple[str, str, object]]:
    """The first field of an inventory's JSON with the wrong type, as (field, what it should
    be, what it is), or None."""
    for key in ("word_counts", "punctemes", "symbols", "pairs"):
        if key not in data:
            return key, "a field of the inventory", _MISSING
    if "min_count" in data and not (_is_int(data["min_count"]) and data["min_count"] >= 0):
        return "min_count", "an integer >= 0", data["min_count"]
    if "pairs_mode" in data and not isinstance(data["pairs_mode"], str):
        return "pairs_mode", "a string", data["pairs_mode"]
    wc = data["word_counts"]
    if not isinstance(wc, dict):
        return "word_counts", "an object of word: count", wc
    if not set(map(type, wc.values())) <= {int}:  # exact int: no bool, no float, no str
        w = _first_bad(wc, lambda k: type(wc[k]) is int)
        return f"word_counts[{w!r}]", "an integer count", wc[w]
    if wc and min(wc.values()) < 0:
        w = _first_bad(wc, lambda k: wc[k] >= 0)
        return f"word_counts[{w!r}]", "an integer count >= 0", wc[w]
    for key in ("punctemes", "symbols"):
        if not isinstance(data[key], list):
            return key, "a list", data[key]
    syms = data["symbols"]
    i = _first_bad(range(len(syms)), lambda k: isinstance(syms[k], str) and syms[k] != "")
    if i is not None:
        return f"symbols[{i}]", "a non-empty string", syms[i]
    pms = data["punctemes"]
    i = _first_bad(range(len(pms)), lambda k: isinstance(pms[k], list)
                   and all(isinstance(t, str) for t in pms[k]))
    if i is not None:
        return f"punctemes[{i}]", "a list of symbol strings", pms[i]
    pairs = data["pairs"]
    if not isinstance(pairs, dict):
        return "pairs", "an object of relation: [[l, r], ...]", pairs
    for rel, lst in pairs.items():
        if not isinstance(lst, list):
            return f"pairs[{rel!r}]", "a list of [l, r] puncteme ids", lst
        if lst and _int_pairs(lst):
            continue
        p = _first_bad(lst, lambda x: isinstance(x, list) and len(x) == 2 and _is_int(x[0]) and _is_int(x[1]))
        if p is not None:
            return f"pairs[{rel!r}]", "a list of [l, r] puncteme ids (two integers)", p
    return None


def _int_pairs(lst: list) -> bool:
    """Fast path: ``lst`` is a (k, 2) table of integers (one NumPy conversion, no loop)."""
    try:
        arr = np.asarray(lst)
    except (ValueError, OverflowError):
        return False
    return arr.ndim == 2 and arr.shape[1] == 2 and arr.dtype.kind in "iu"
