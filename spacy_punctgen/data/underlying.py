"""Assemble the underlying string ``u_i`` of every slot from per-node punctemes (docs/model.md §2).

``u_i`` = the right punctemes of the constituents ending at slot ``i`` (innermost
first), then the left punctemes of those starting at ``i`` (outermost first).  One
function serves the brute-force reference (symbol ids) and the spaCy component
(strings).
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple, TypeVar

from spacy_punctgen.data.trees import tree_structure

T = TypeVar("T")


def underlying_sequences(heads: Sequence[int], punctemes: Sequence[Tuple[Sequence[T], Sequence[T]]]
                         ) -> List[List[T]]:
    """``punctemes[w] = (l, r)`` for each node; returns the n+1 underlying slot strings."""
    n = len(heads)
    _, _, _, first, last = tree_structure(heads)
    ends: Dict[int, List[int]] = {}
    starts: Dict[int, List[int]] = {}
    for w in range(n):
        ends.setdefault(last[w] + 1, []).append(w)
        starts.setdefault(first[w], []).append(w)
    slots: List[List[T]] = []
    for i in range(n + 1):
        u: List[T] = []
        for w in sorted(ends.get(i, []), key=lambda w: last[w] - first[w]):
            u.extend(punctemes[w][1])
        for w in sorted(starts.get(i, []), key=lambda w: first[w] - last[w]):
            u.extend(punctemes[w][0])
        slots.append(u)
    return slots
