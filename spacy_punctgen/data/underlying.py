"""The underlying string ``u_i`` of every slot, assembled from per-node punctemes
(docs/model.md §2).  The only place that knows the order.

``u_i`` = the right punctemes of the constituents ending at slot ``i`` (innermost
first), then the left punctemes of those starting at ``i`` (outermost first).
:func:`slot_parts` gives that order as ``(node, side)`` pairs (side 0: left puncteme,
1: right), which the decoders follow; :func:`underlying_sequences` fills it in with
punctemes from a tree's heads (the brute-force reference, symbol ids; evaluation and rendering,
strings), :func:`slot_strings` from spans already computed (the spaCy component's analysis).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple, TypeVar

from spacy_punctgen.data.trees import tree_structure

T = TypeVar("T")
LEFT, RIGHT = 0, 1


def slot_parts(first: Sequence[int], last: Sequence[int]) -> List[List[Tuple[int, int]]]:
    """For each of the ``n + 1`` slots, the ``(node, side)`` halves whose punctemes make up
    ``u_i``, in order; ``first[w]``/``last[w]``: the first and last word of node ``w``'s span."""
    n = len(first)
    # two stable sorts of all nodes instead of two per slot: each slot's nodes come out in the
    # order a stable sort of that slot's nodes (in word order) by the same key gives
    ends: List[List[Tuple[int, int]]] = [[] for _ in range(n + 1)]
    starts: List[List[Tuple[int, int]]] = [[] for _ in range(n + 1)]
    for w in sorted(range(n), key=lambda w: last[w] - first[w]):
        ends[last[w] + 1].append((w, RIGHT))
    for w in sorted(range(n), key=lambda w: first[w] - last[w]):
        starts[first[w]].append((w, LEFT))
    return [e + s if s else e for e, s in zip(ends, starts)]


def underlying_sequences(heads: Sequence[int], punctemes: Sequence[Tuple[Sequence[T], Sequence[T]]]
                         ) -> List[List[T]]:
    """``punctemes[w] = (l, r)`` for each node; returns the n+1 underlying slot strings."""
    _, _, _, first, last = tree_structure(heads)
    return [[t for w, side in parts for t in punctemes[w][side]] for parts in slot_parts(first, last)]


def slot_strings(first: Sequence[int], last: Sequence[int], punctemes: Sequence[Tuple[Sequence[T], Sequence[T]]]
                 ) -> List[Tuple[T, ...]]:
    """:func:`underlying_sequences` as tuples, from the spans (``first``/``last``, as for
    :func:`slot_parts`) of a projective tree instead of its heads."""
    return [tuple(t for w, side in parts for t in punctemes[w][side]) for parts in slot_parts(first, last)]
