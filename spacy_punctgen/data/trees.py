"""One traversal of a dependency forest, shared by data preparation, features and the DP."""
from __future__ import annotations

from typing import List, NamedTuple, Sequence, Tuple

from spacy_punctgen.errors import Errors


class Forest(NamedTuple):
    children: List[List[int]]  # in word order
    roots: List[int]  # in word order
    order: List[int]  # post-order: children before parents
    first: List[int]  # first word of each node's subtree
    last: List[int]  # last word of each node's subtree
    size: List[int]  # number of words in each subtree
    depth: List[int]  # 0 for roots


def forest(heads: Sequence[int]) -> Forest:
    """Heads are 0-based with -1 for a root. ValueError naming the word at fault for an
    out-of-range head, a self-loop or a cycle."""
    n = len(heads)
    children: List[List[int]] = [[] for _ in range(n)]
    roots: List[int] = []
    for i, h in enumerate(heads):
        h = int(h)
        if h == -1:
            roots.append(i)
        elif 0 <= h < n and h != i:
            children[h].append(i)
        else:
            raise ValueError(Errors.E531.format(i=i, head=h, n=n))
    preorder: List[int] = []
    depth = [0] * n
    stack = list(reversed(roots))
    while stack:
        w = stack.pop()
        preorder.append(w)
        for c in reversed(children[w]):
            depth[c] = depth[w] + 1
            stack.append(c)
    if len(preorder) != n:
        raise ValueError(Errors.E532)
    first, last, size = list(range(n)), list(range(n)), [1] * n
    order = preorder[::-1]
    for w in order:
        h = int(heads[w])
        if h >= 0:
            first[h] = min(first[h], first[w])
            last[h] = max(last[h], last[w])
            size[h] += size[w]
    return Forest(children, roots, order, first, last, size, depth)


def tree_structure(heads: Sequence[int]) -> Tuple[List[List[int]], List[int], List[int], List[int], List[int]]:
    """Children, roots, post-order and subtree spans of a *projective* forest.

    Raises ValueError naming the word at fault for a cycle, a bad head, or a
    non-projective arc (callers projectivise first).
    """
    f = forest(heads)
    for w in range(len(heads)):
        if f.last[w] - f.first[w] + 1 != f.size[w]:
            raise ValueError(Errors.E533.format(w=w))
    pos = 0
    for r in f.roots:  # top-level constituents must tile the sentence in order
        if f.first[r] != pos:
            raise ValueError(Errors.E534.format(r=r))
        pos = f.last[r] + 1
    return f.children, f.roots, f.order, f.first, f.last
