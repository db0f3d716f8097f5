"""The transition system of the incremental parser-punctuator, its constraints and its oracle.

Why this system: paper 003 uses the four actions of Zhang & Nivre (2011), i.e. **arc-eager**
(Nivre 2003) over a stream with no root token:

* ``Shift(s)``: push the buffer front ``b`` and give it the mark ``s``;
* ``RightArc(s)``: the stack top becomes ``b``'s head, ``b`` is pushed and gets the mark ``s``;
* ``LeftArc``: ``b`` becomes the stack top's head (the top must have none) and the top is popped;
* ``Reduce``: pop the stack top, which must already have its head.

Every word is pushed once (Shift or RightArc: the moment its mark is decided) and popped once
(Reduce or LeftArc), so every analysis takes exactly ``2n`` actions and beam items stay aligned.
A word popped without a head is a root: that happens only in the two pop-only phases, after a
full stop (the *succeeding constraint*: only Reduce until the stack is empty) and at the end of
the stream.  The *proceeding constraint*: a full-stop mark may only be given when the words since
the last full stop form one tree afterwards, i.e. exactly one word on the stack lacks a head
(every word off the stack has one).  So each full stop closes one tree.

UPP's actions are exactly these (the mark is part of Shift and RightArc).  CPP runs the same
system: its parser scores the action type and its classifier the mark of a Shift/RightArc.

Gold trees: the treebank's trees are projective (projectivised on reading) but a stream's full
stops need not fall at tree ends (EWT sentences often end without a mark, or hold a ``?`` inside
one), so :func:`segment_heads` turns a stream's trees into one tree per full-stop segment: arcs
that cross a segment boundary are cut, every further root of a segment hangs from its first root,
and the result is projectivised.  :func:`oracle` is the static arc-eager oracle with eager
Reduce (a word is popped as soon as it has its head and all its dependents).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from spacy_punctgen.data.trees import lift_nonprojective
from spacy_punctgen.errors import Errors

SH, RA, LA, RE = 0, 1, 2, 3
ACTION_NAMES = ("Shift", "RightArc", "LeftArc", "Reduce")


def code(atype: int, mark: int = 0) -> int:
    """The integer code of an action (the compiled loops' encoding: ``atype | mark << 2``)."""
    return atype | (mark << 2)


def split(c: int) -> Tuple[int, int]:
    return c & 3, c >> 2


def name(c: int, classes: Sequence[str]) -> str:
    atype, mark = split(c)
    return f"{ACTION_NAMES[atype]}({classes[mark]})" if atype <= RA else ACTION_NAMES[atype]


class State:
    """One configuration: stack, buffer front, heads and marks so far (the reference the
    compiled ``legal``/``apply`` mirror)."""

    def __init__(self, n: int, is_full: Sequence[int]):
        self.n = n
        self.is_full = tuple(is_full)
        self.heads = [-1] * n
        self.marks = [-1] * n
        self.stack: List[int] = []
        self.i = 0
        self.roots = 0  # words on the stack without a head
        self.forced = False  # after a full stop: Reduce only until the stack is empty
        self.actions: List[int] = []

    @property
    def done(self) -> bool:
        return self.i >= self.n and not self.stack

    def one_tree(self) -> bool:
        """Do the words since the last full stop form a single tree?"""
        return self.roots == 1

    def legal(self, c: int) -> bool:
        atype, mark = split(c)
        if self.forced or self.i >= self.n:
            return atype == RE and bool(self.stack)
        if atype == SH:
            return not self.is_full[mark] or self.roots == 0
        if not self.stack:
            return False
        top = self.stack[-1]
        if atype == RA:
            return not self.is_full[mark] or self.roots == 1
        if atype == LA:
            return self.heads[top] < 0
        return self.heads[top] >= 0

    def apply(self, c: int) -> "State":
        atype, mark = split(c)
        if not self.legal(c):
            raise ValueError(Errors.E920.format(start=0, end=self.n - 1, action=c))
        if atype in (SH, RA):
            if atype == RA:
                self.heads[self.i] = self.stack[-1]
            else:
                self.roots += 1
            self.stack.append(self.i)
            self.marks[self.i] = mark
            self.i += 1
            self.forced = bool(self.is_full[mark])
        elif atype == LA:
            self.heads[self.stack.pop()] = self.i
            self.roots -= 1
        else:
            if self.heads[self.stack.pop()] < 0:
                self.roots -= 1
            if not self.stack:
                self.forced = False
        self.actions.append(c)
        return self

    def legal_codes(self, n_marks: int) -> List[int]:
        every = [code(SH, m) for m in range(n_marks)] + [code(RA, m) for m in range(n_marks)] + [LA, RE]
        return [c for c in every if self.legal(c)]


def segments(marks: Sequence[int], is_full: Sequence[int]) -> List[Tuple[int, int]]:
    """``[start, end)`` spans of the words, each ending after a full-stop mark (the last may not)."""
    out, start = [], 0
    for i, m in enumerate(marks):
        if is_full[m]:
            out.append((start, i + 1))
            start = i + 1
    if start < len(marks):
        out.append((start, len(marks)))
    return out


def segment_heads(heads: Sequence[int], marks: Sequence[int], is_full: Sequence[int]) -> List[int]:
    """The gold trees (0-based heads, -1 for a root) made one projective tree per full-stop
    segment (see the module docstring)."""
    out = list(heads)
    for start, end in segments(marks, is_full):
        roots = [i for i in range(start, end) if not start <= out[i] < end]
        for r in roots:
            out[r] = -1
        for r in roots[1:]:
            out[r] = roots[0]
        local = lift_nonprojective([j if out[start + j] < 0 else out[start + j] - start
                                    for j in range(end - start)])  # a root points to itself
        for j, h in enumerate(local):
            out[start + j] = -1 if h == j else start + h
    return out


def oracle(heads: Sequence[int], marks: Sequence[int], is_full: Sequence[int]) -> List[int]:
    """The static arc-eager oracle's ``2n`` action codes for gold ``heads`` (one projective tree
    per full-stop segment, :func:`segment_heads`) and gold mark classes."""
    n = len(heads)
    pending = [0] * n  # dependents not yet attached
    for d, h in enumerate(heads):
        if h >= 0:
            pending[h] += 1
    st = State(n, is_full)
    while not st.done:
        if st.forced or st.i >= n:
            c = RE
        else:
            b = st.i
            top = st.stack[-1] if st.stack else -1
            if top >= 0 and heads[top] == b:
                c = LA
            elif top >= 0 and heads[b] == top:
                c = code(RA, marks[b])
            elif top >= 0 and st.heads[top] >= 0 and pending[top] == 0:
                c = RE
            else:
                c = code(SH, marks[b])
        if not st.legal(c):
            raise ValueError(Errors.E920.format(start=0, end=n - 1, action=c))
        atype = c & 3
        if atype == LA:
            pending[st.i] -= 1
        elif atype == RA:
            pending[st.stack[-1]] -= 1
        st.apply(c)
    if st.heads != list(heads) or st.marks != list(marks):
        bad = next(i for i in range(n) if st.heads[i] != heads[i] or st.marks[i] != marks[i])
        raise ValueError(Errors.E920.format(start=bad, end=bad, action="(the tree is not reproduced)"))
    return st.actions
