"""One traversal of a dependency forest, shared by data preparation, features and the DP."""
from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple

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


def tree_structure(heads: Sequence[int], f: Optional[Forest] = None
                   ) -> Tuple[List[List[int]], List[int], List[int], List[int], List[int]]:
    """Children, roots, post-order and subtree spans of a *projective* forest.

    Raises ValueError naming the word at fault for a cycle, a bad head, or a
    non-projective arc (callers projectivise first).  ``f``: :func:`forest` of ``heads``
    when the caller has it (compiling a sentence needs both).
    """
    if f is None:
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


def lift_nonprojective(heads: Sequence[int]) -> List[int]:
    """The heads of spaCy's ``nonproj.projectivize`` (Nivre & Nilsson 2005, as spaCy implements
    it), identical to them on every forest, in ``O(n log n)`` for typical trees instead of spaCy's
    cubic time (``lift_count`` counts the lifts).

    Input and output in spaCy's convention: absolute heads, a root points to itself (several roots
    allowed).  spaCy repeatedly lifts the shortest non-projective arc (ties: the leftmost
    dependent) to the dependent's grandparent (a child of a root becomes a root) until no arc is
    non-projective.  The same lifts happen here, in the same order, found cheaply:

    * an arc ``a -> b`` is projective iff every word strictly between them is in ``a``'s
      subtree, i.e. iff ``b`` lies before ``a``'s *gap* on that side (``rgap[a]``: the first word
      right of ``a`` outside its subtree; ``lgap[a]`` on the left);
    * lifting ``d`` from ``h`` to ``g = head(h)`` only takes ``d``'s subtree ``D`` out of ``h``'s
      (every other subtree keeps its words), so only ``h``'s gaps move (towards ``h``, to
      ``D``'s nearest words), only ``d``'s arc and ``h``'s other arcs can change, and nothing
      turns projective: a heap of non-projective arcs keyed ``(length, dependent)``, spaCy's
      choice, stays exact;
    * a node's non-projective children on one side are its farthest ones there, so each side
      keeps its children by distance and a count of the projective (nearest) ones.

    ``heads`` that are not a forest (a head out of range or a cycle) are returned unchanged; the
    tree checks downstream (:func:`forest`) name the fault."""
    n = len(heads)
    cur = [int(h) for h in heads]
    if any(not 0 <= h < n for h in cur):
        return cur
    kids: List[List[int]] = [[] for _ in range(n)]
    roots = []
    for d, h in enumerate(cur):
        (roots if h == d else kids[h]).append(d)
    preorder: List[int] = []
    stack = list(roots)
    while stack:
        w = stack.pop()
        preorder.append(w)
        stack.extend(kids[w])
    if len(preorder) != n:  # a cycle
        return cur
    first, last, size = list(range(n)), list(range(n)), [1] * n
    for w in reversed(preorder):
        h = cur[w]
        if h != w:
            first[h] = min(first[h], first[w])
            last[h] = max(last[h], last[w])
            size[h] += size[w]
    if all(last[w] - first[w] + 1 == size[w] for w in range(n)):
        return cur  # every subtree contiguous: every arc projective
    return _Lifter(cur, kids, preorder, first, last, size).run()


#: how many lifts the last :func:`lift_nonprojective` call made (for the tests' work counts)
lift_count = 0


def _gaps(preorder: List[int], size: List[int]) -> Tuple[List[int], List[int]]:
    """``(lgap, rgap)`` of every node: the nearest words left / right of it outside its subtree
    (``-1`` / ``n`` where none), found for all nodes at once by binary lifting over sparse tables
    of the pre-order numbers of the words (a word is in ``a``'s subtree iff its number lies in
    ``[tin[a], tin[a] + size[a])``)."""
    import numpy as np

    n = len(preorder)
    tin = np.empty(n, dtype=np.int64)
    tin[np.asarray(preorder, dtype=np.int64)] = np.arange(n)
    lo_in, hi_in = tin, tin + np.asarray(size, dtype=np.int64)  # the subtree: lo_in <= number < hi_in

    def nearest_out(values: np.ndarray) -> np.ndarray:
        # for every a: how many words right after a (in this order) are all inside a's subtree
        mins, maxs = [values], [values]
        while (1 << len(mins)) <= n:
            h = 1 << (len(mins) - 1)
            mins.append(np.minimum(mins[-1][:-h], mins[-1][h:]))
            maxs.append(np.maximum(maxs[-1][:-h], maxs[-1][h:]))
        start = np.arange(n) + 1  # first word not yet known to be inside
        for j in range(len(mins) - 1, -1, -1):
            ok = start + (1 << j) <= n
            idx = np.where(ok, start, 0)
            m, M = mins[j][np.minimum(idx, len(mins[j]) - 1)], maxs[j][np.minimum(idx, len(maxs[j]) - 1)]
            step = ok & (m >= lo_in_order) & (M < hi_in_order)
            start = start + np.where(step, 1 << j, 0)
        return start

    lo_in_order, hi_in_order = lo_in, hi_in
    right = nearest_out(tin)  # words in sentence order: their pre-order numbers
    rev = np.arange(n)[::-1]  # the same on the reversed sentence
    lo_in_order, hi_in_order = lo_in[rev], hi_in[rev]
    left = n - 1 - nearest_out(tin[rev])[rev]
    return left.tolist(), right.tolist()


class _Lifter:
    """The state of :func:`lift_nonprojective` between lifts (see its docstring)."""

    def __init__(self, cur, kids, preorder, first, last, size):
        from bisect import bisect_left

        n = len(cur)
        self.cur, self.first, self.last = cur, first, last
        self.kids = [set(k) for k in kids]
        self.lgap, self.rgap = _gaps(preorder, size)
        # side[a][0]: distances of a's left children, nearest first; side[a][1]: right children;
        # nproj[a][k]: how many of side k are projective (the nearest ones)
        self.side: List[List[List[int]]] = [[[], []] for _ in range(n)]
        self.nproj = [[0, 0] for _ in range(n)]
        self.heap: List[Tuple[int, int]] = []
        for a in range(n):
            sides = self.side[a]
            for c in kids[a]:
                sides[c > a].append(abs(c - a))
            for k in (0, 1):
                sides[k].sort()
                reach = self.rgap[a] - a if k else a - self.lgap[a]  # children nearer than the gap
                self.nproj[a][k] = bisect_left(sides[k], reach)
                self.heap.extend((dd, a + dd if k else a - dd) for dd in sides[k][self.nproj[a][k]:])

    def _around(self, d: int, x: int) -> Tuple[int, int]:
        """The nearest words of ``d``'s subtree left and right of ``x`` (not in it): ``-1`` / ``n``
        where none.  Visits only the nodes whose span holds ``x``."""
        first, last, kids = self.first, self.last, self.kids
        below, above = -1, len(self.cur)
        stack = [d]
        while stack:
            v = stack.pop()
            if last[v] < x:
                below = max(below, last[v])
            elif first[v] > x:
                above = min(above, first[v])
            else:
                if v < x:
                    below = max(below, v)
                else:
                    above = min(above, v)
                stack.extend(kids[v])
        return below, above

    def run(self) -> List[int]:
        import heapq
        from bisect import bisect_left, insort

        global lift_count
        lift_count = 0
        cur, kids, side, nproj, heap = self.cur, self.kids, self.side, self.nproj, self.heap
        first, last, lgap, rgap = self.first, self.last, self.lgap, self.rgap
        heapq.heapify(heap)
        while heap:
            dist, d = heapq.heappop(heap)
            lift_count += 1
            h = cur[d]
            g = cur[h]
            new = g if g != h else d
            lst = side[h][d > h]
            del lst[bisect_left(lst, dist)]  # non-projective: past the projective prefix
            kids[h].discard(d)
            cur[d] = new
            # h loses d's subtree: its gaps move to that subtree's nearest words, its span may shrink
            below, above = self._around(d, h)
            lgap[h], rgap[h] = max(lgap[h], below), min(rgap[h], above)
            if first[h] == first[d]:
                first[h] = min([h] + [first[c] for c in kids[h]])
            if last[h] == last[d]:
                last[h] = max([h] + [last[c] for c in kids[h]])
            for k, reach in ((0, h - lgap[h]), (1, rgap[h] - h)):  # h's children beyond a gap
                lst = side[h][k]
                keep = min(nproj[h][k], bisect_left(lst, reach))
                for dd in lst[keep:nproj[h][k]]:
                    heapq.heappush(heap, (dd, h + dd if k else h - dd))
                nproj[h][k] = keep
            if new != d:
                kids[new].add(d)
                k = int(d > new)
                dd = abs(d - new)
                insort(side[new][k], dd)
                if (d < rgap[new]) if k else (d > lgap[new]):
                    nproj[new][k] += 1
                else:
                    heapq.heappush(heap, (dd, d))
        return cur
