"""Vocabularies learned from the *training* split only (docs/model.md §1).

Why a separate object: the puncteme set ``V``, the allowed pairs ``W_d`` and
the rare-word map must be identical at training and test time and saved with
the model, so they live in one JSON-serialisable inventory.
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

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
        return cls(
            word_counts=data["word_counts"],
            punctemes=[tuple(p) for p in data["punctemes"]],
            symbols=data["symbols"],
            pairs={rel: [tuple(p) for p in lst] for rel, lst in data["pairs"].items()},
            min_count=data.get("min_count", 5),
            pairs_mode=data.get("pairs_mode", "halves"),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PunctInventory) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (f"PunctInventory({len(self.punctemes)} punctemes, {len(self.symbols)} symbols, "
                f"{len(self.pairs)} relations, {len(self.word_counts)} word types)")
