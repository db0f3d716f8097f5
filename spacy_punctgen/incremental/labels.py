"""The mark classes an incremental model predicts after each word.

Why: paper 003 folds marks into middle (``M``: ``, ; :``) and full stops (``F``: ``. ? !``, and any
gap holding one of them: the stronger boundary wins, as evaluation/stream.py scores it), plus
``N``; users want the finer comma / period / question mark, so that set is offered too.  A class
``is_full`` when it ends a segment (the decoding constraints apply to it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from spacy_punctgen.errors import Errors

MIDDLE = frozenset(",;:")
FULL = frozenset(".?!")


@dataclass(frozen=True)
class Labels:
    name: str
    classes: Tuple[str, ...]  # index 0 is no mark
    marks: Tuple[str, ...]  # the mark written for each class
    is_full: Tuple[int, ...]

    def classify(self, gap: str) -> int:
        """The class of the marks of one gap (a string of marks, possibly empty)."""
        if self.name == "paper":
            if any(c in FULL for c in gap):
                return 2
            return 1 if any(c in MIDDLE for c in gap) else 0
        if "?" in gap:
            return 3
        if any(c in ".!" for c in gap):
            return 2
        return 1 if any(c in MIDDLE for c in gap) else 0

    def __len__(self) -> int:
        return len(self.classes)


PAPER = Labels("paper", ("N", "M", "F"), ("", ",", "."), (0, 0, 1))
FINE = Labels("fine", ("N", "COMMA", "PERIOD", "QUESTION"), ("", ",", ".", "?"), (0, 0, 1, 1))
LABEL_SETS = {"paper": PAPER, "fine": FINE}


def get_labels(name: str) -> Labels:
    if name not in LABEL_SETS:
        raise ValueError(Errors.E927.format(labels=name, known=", ".join(LABEL_SETS)))
    return LABEL_SETS[name]
