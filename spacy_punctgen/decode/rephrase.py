"""Rephrasing: reorder the dependents of nouns and verbs, then regenerate the surface
punctuation from the underlying punctemes through the channel (docs/rephrasing.md).

The three settings of the evaluation:

* **Base** (:func:`baseline_sentence`): an :class:`OrderModel` fitted on surface trees
  (:func:`surface_tree`: words plus punctuation tokens, which hang from the word UD attaches
  them to) reorders the surface tree; punctuation tokens move like words.
* **Half** (:func:`rephrase_sentence` with :func:`word_order`): the words move exactly as in
  Base; every node keeps the ``(l, r)`` punctemes of the best underlying tree, the slots'
  underlying strings are rebuilt for the new order
  (:func:`~spacy_punctgen.data.underlying.underlying_sequences`) and each slot gets the
  channel's most probable surface string.
* **Full** (:func:`rephrase_sentence` with :func:`underlying_word_order`): as Half, but the
  order is drawn by an :class:`OrderModel` fitted with :meth:`OrderModel.fit_underlying` on
  the recovered underlying trees (:func:`underlying_tree`: the depunctuated tree whose nodes
  carry their punctemes), so no punctuation token is ever a dependent to be ordered.

The order moves whole subtrees, so a projective tree stays projective.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.conllu import UDSentence
from spacy_punctgen.data.inventory import BOS
from spacy_punctgen.data.preprocess import ABBR, PunctSentence, is_punct
from spacy_punctgen.data.trees import forest
from spacy_punctgen.data.underlying import underlying_sequences
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.channel import channel_distribution

#: Heads whose dependents are reordered (the paper reorders the dependents of nouns and verbs).
ORDERED_HEADS = ("NOUN", "VERB")
PUNCT_REL = "punct"


@dataclass
class SurfaceTree:
    """A sentence's words and surface punctuation tokens as one tree: ``heads`` 0-based
    (-1 root) over ``tokens``; ``word[t]`` is the word index of token ``t`` or -1 for a
    punctuation token; ``abbr[k]``: word ``k`` is followed by the ``ABBR.`` dot."""

    tokens: List[str]
    upos: List[str]
    heads: List[int]
    deprels: List[str]
    word: List[int]
    abbr: List[bool]


def surface_tree(ud: UDSentence, sentence: PunctSentence) -> SurfaceTree:
    """Join ``sentence`` (the preprocessed form of ``ud``) with ``ud``'s punctuation tokens:
    the words keep their projectivised heads, a punctuation token hangs from the word UD
    attaches it to (the root word if UD gives none); punctuation forms are those of the
    slots (quotes directed)."""
    punct = [is_punct(u, d) for u, d in zip(ud.upos, ud.deprels)]
    marks = [t for slot in sentence.slots for t in slot if t != ABBR]
    n = len(sentence.words)
    if sum(punct) != len(marks) or len(punct) - sum(punct) != n:
        raise ValueError(Errors.E866.format(n_forms=len(punct), n=n, n_punct=len(marks)))
    word_of_ud, k = {}, 0
    for i, p in enumerate(punct):
        if not p:
            word_of_ud[i + 1] = k
            k += 1
    root = next((w for w in range(n) if sentence.heads[w] < 0), 0)
    tok_of_word = [i for i, p in enumerate(punct) if not p]
    tokens, upos, deprels, word = [], [], [], []
    mark_iter = iter(marks)
    for i, p in enumerate(punct):
        tokens.append(next(mark_iter) if p else sentence.words[word_of_ud[i + 1]])
        upos.append(ud.upos[i])
        deprels.append(PUNCT_REL if p else sentence.deprels[word_of_ud[i + 1]])
        word.append(-1 if p else word_of_ud[i + 1])
    heads = []
    for i, p in enumerate(punct):
        if p:
            h = word_of_ud.get(ud.heads[i], root)
            heads.append(tok_of_word[h])
        else:
            hw = sentence.heads[word_of_ud[i + 1]]
            heads.append(-1 if hw < 0 else tok_of_word[hw])
    abbr = [ABBR in sentence.slots[w + 1] for w in range(n)]
    return SurfaceTree(tokens, upos, heads, deprels, word, abbr)


def _offsets(heads: Sequence[int]) -> List[int]:
    """Each node's signed rank among its head's group: -1 for the nearest left dependent,
    +1 for the nearest right one (0 for roots)."""
    f = forest(heads)
    off = [0] * len(heads)
    for h, kids in enumerate(f.children):
        left = [c for c in kids if c < h]
        right = [c for c in kids if c > h]
        for j, c in enumerate(reversed(left)):
            off[c] = -(j + 1)
        for j, c in enumerate(right):
            off[c] = j + 1
    return off


@dataclass
class UnderlyingTree:
    """A recovered underlying tree T': the depunctuated words' projectivised ``heads``
    (0-based, -1 root), ``upos`` and ``deprels``, and each node's underlying ``(l, r)``
    punctemes (``pairs``, from :func:`~spacy_punctgen.model.analysis.analyze`)."""

    upos: List[str]
    heads: List[int]
    deprels: List[str]
    pairs: List[Tuple[Tuple[str, ...], Tuple[str, ...]]]


def underlying_tree(sentence: PunctSentence, pairs: Sequence[Tuple[Sequence[str], Sequence[str]]]) -> UnderlyingTree:
    """``sentence``'s depunctuated tree with the punctemes ``pairs`` (one per word) on its nodes."""
    n = len(sentence.words)
    if len(pairs) != n:
        raise ValueError(Errors.E865.format(n_pairs=len(pairs), n=n))
    return UnderlyingTree(list(sentence.upos), list(sentence.heads), list(sentence.deprels),
                          [(tuple(l), tuple(r)) for l, r in pairs])


def own_keys(heads: Sequence[int]) -> List[float]:
    """Each node's own signed rank as a sort key: :func:`linearize` under these keys gives back
    the original order of a projective tree."""
    return [float(o) for o in _offsets(heads)]


class OrderModel:
    """For each (head UPOS, dependent relation) under a noun or verb, the mean and standard
    deviation of the dependent's signed rank beside its head in the training trees.  A
    sentence is reordered by drawing each such dependent's key from that normal
    distribution (the head's key is 0) and sorting every group by key; dependents of other
    heads, or of an unseen relation, keep their own rank.  Simple on purpose: it learns the
    side and the distance from the head, which is what most order alternations (fronted
    adverbials, postposed subjects) change.

    :meth:`fit` reads surface trees (punctuation tokens are dependents with relation
    ``punct``: the Base and Half settings); :meth:`fit_underlying` reads underlying trees
    (no punctuation token; ranks count words only: the Full setting); with ``punctemes`` it
    also keeps the statistics of (head UPOS, relation, the dependent's ``(l, r)`` punctemes)
    seen at least ``min_count`` times, which a dependent with those punctemes draws from
    instead (a fronted clause carries its comma puncteme, a postposed one usually none)."""

    def __init__(self, stats: Dict[Tuple[str, str], Tuple[float, float]], underlying: bool = False,
                 fine: Optional[Dict[Tuple, Tuple[float, float]]] = None):
        self.stats = stats
        self.underlying = underlying
        self.fine = dict(fine or {})

    @staticmethod
    def _moments(acc: Dict, min_count: int = 1) -> Dict:
        return {k: (float(np.mean(v)), float(np.std(v))) for k, v in acc.items() if len(v) >= min_count}

    @classmethod
    def fit(cls, trees: Iterable[SurfaceTree]) -> "OrderModel":
        acc: Dict[Tuple[str, str], List[int]] = defaultdict(list)
        for t in trees:
            if not isinstance(t, SurfaceTree):
                raise TypeError(Errors.E867.format(kind="surface", got=type(t).__name__))
            for i, off in enumerate(_offsets(t.heads)):
                h = t.heads[i]
                if h >= 0 and t.upos[h] in ORDERED_HEADS:
                    acc[t.upos[h], t.deprels[i]].append(off)
        if not acc:
            raise ValueError(Errors.E863)
        return cls(cls._moments(acc))

    @classmethod
    def fit_underlying(cls, trees: Iterable[UnderlyingTree], punctemes: bool = False,
                       min_count: int = 5) -> "OrderModel":
        """The Full setting's model, from underlying trees (ranks count words only);
        ``punctemes=True`` adds the puncteme-conditioned statistics (a variant: it keeps a
        dependent nearer its original side, since its punctemes were chosen there)."""
        if min_count < 1:
            raise ValueError(Errors.E868.format(min_count=min_count))
        acc: Dict[Tuple[str, str], List[int]] = defaultdict(list)
        fine: Dict[Tuple, List[int]] = defaultdict(list)
        for t in trees:
            if not isinstance(t, UnderlyingTree):
                raise TypeError(Errors.E867.format(kind="underlying", got=type(t).__name__))
            for i, off in enumerate(_offsets(t.heads)):
                h = t.heads[i]
                if h >= 0 and t.upos[h] in ORDERED_HEADS:
                    acc[t.upos[h], t.deprels[i]].append(off)
                    if punctemes:
                        fine[t.upos[h], t.deprels[i], t.pairs[i]].append(off)
        if not acc:
            raise ValueError(Errors.E863)
        return cls(cls._moments(acc), underlying=True, fine=cls._moments(fine, min_count))

    def _stat(self, tree, i: int) -> Optional[Tuple[float, float]]:
        h = tree.heads[i]
        if h < 0 or tree.upos[h] not in ORDERED_HEADS:
            return None
        key = (tree.upos[h], tree.deprels[i])
        if self.underlying and self.fine:
            st = self.fine.get(key + (tree.pairs[i],))
            if st is not None:
                return st
        return self.stats.get(key)

    def keys(self, tree, rng: np.random.Generator) -> List[float]:
        """One sort key per node of ``tree`` (drawn with ``rng``): a :class:`SurfaceTree` for a
        model from :meth:`fit`, an :class:`UnderlyingTree` for one from :meth:`fit_underlying`."""
        want = UnderlyingTree if self.underlying else SurfaceTree
        if not isinstance(tree, want):
            raise TypeError(Errors.E867.format(kind="underlying" if self.underlying else "surface",
                                                got=type(tree).__name__))
        own = _offsets(tree.heads)
        out = []
        for i in range(len(tree.heads)):
            st = self._stat(tree, i)
            out.append(float(own[i]) if st is None else st[0] + st[1] * float(rng.standard_normal()))
        return out


def linearize(heads: Sequence[int], keys: Sequence[float]) -> List[int]:
    """The nodes in their new order: every head's group (itself at key 0 and its dependents'
    subtrees) sorted by key, ties in the original order; roots stay in order."""
    f = forest(heads)
    out: List[int] = []
    stack: List[Tuple[int, bool]] = [(r, False) for r in reversed(f.roots)]
    while stack:
        w, placed = stack.pop()
        if placed:
            out.append(w)
            continue
        group = sorted([w] + f.children[w], key=lambda x: (0.0 if x == w else keys[x], x))
        stack.extend((x, x == w) for x in reversed(group))
    return out


def word_order(tree: SurfaceTree, keys: Sequence[float]) -> List[int]:
    """The words' new order (old word indices) under the surface tree's keys: the order of
    :func:`linearize` with the punctuation tokens left out (they are leaves, so leaving them
    out changes no word's place relative to another)."""
    return [tree.word[t] for t in linearize(tree.heads, keys) if tree.word[t] >= 0]


def underlying_word_order(tree: UnderlyingTree, keys: Sequence[float]) -> List[int]:
    """The words' new order (old word indices) under the underlying tree's keys (the Full
    setting): the underlying tree has no punctuation node, so this is :func:`linearize`."""
    return linearize(tree.heads, keys)


def baseline_sentence(tree: SurfaceTree, keys: Sequence[float]) -> List[str]:
    """The baseline: punctuation tokens are ordered as dependents like words; a word's
    ``ABBR.`` dot stays right after it."""
    out: List[str] = []
    for t in linearize(tree.heads, keys):
        out.append(tree.tokens[t])
        if tree.word[t] >= 0 and tree.abbr[tree.word[t]]:
            out.append(ABBR)
    return out


def most_probable_surface(model, u: Sequence[str], first: bool, phi: np.ndarray,
                          cache: Optional[Dict] = None) -> Tuple[str, ...]:
    """The channel's most probable surface string for the underlying tokens ``u`` (slot 0:
    ``^`` in front, and stripped from the result)."""
    key = (tuple(u), first)
    if cache is not None and key in cache:
        return cache[key]
    inv = model.inventory
    syms = ([0] if first else []) + [inv.symbol_id(t) for t in u]
    dist = channel_distribution(syms, phi, model.r2l)
    best = max(sorted(dist), key=dist.get) if dist else ()
    out = tuple(inv.symbols[s] for s in best)
    if first and out[:1] == (BOS,):
        out = out[1:]
    if cache is not None:
        cache[key] = out
    return out


def rephrase_sentence(model, sentence: PunctSentence, order: Sequence[int],
                      pairs: Sequence[Tuple[Sequence[str], Sequence[str]]],
                      phi: Optional[np.ndarray] = None, cache: Optional[Dict] = None) -> PunctSentence:
    """``sentence`` with its words in ``order`` (old indices), each node keeping its
    underlying ``(l, r)`` pair from ``pairs`` (the best underlying tree:
    :func:`~spacy_punctgen.model.analysis.analyze`), and every slot the channel's most
    probable surface for its rebuilt underlying string."""
    n = len(sentence.words)
    if sorted(int(o) for o in order) != list(range(n)):
        raise ValueError(Errors.E864.format(order=list(order)[:20], n=n))
    if len(pairs) != n:
        raise ValueError(Errors.E865.format(n_pairs=len(pairs), n=n))
    new_of = {int(o): j for j, o in enumerate(order)}
    heads = [-1 if sentence.heads[o] < 0 else new_of[sentence.heads[o]] for o in order]
    under = underlying_sequences(heads, [pairs[o] for o in order])
    phi = model.phi() if phi is None else phi
    slots = [most_probable_surface(model, u, i == 0, phi, cache) for i, u in enumerate(under)]
    pick = lambda xs: [xs[o] for o in order]
    return PunctSentence(words=pick(sentence.words), upos=pick(sentence.upos), xpos=pick(sentence.xpos),
                         deprels=pick(sentence.deprels), heads=heads, slots=slots,
                         sent_id=sentence.sent_id, nonprojective=sentence.nonprojective)


def punctuated_tokens(sentence: PunctSentence) -> List[str]:
    """Slot 0, word 1, slot 1, …: the token sequence a language model reads."""
    out: List[str] = list(sentence.slots[0])
    for w, slot in zip(sentence.words, sentence.slots[1:]):
        out.append(w)
        out.extend(slot)
    return out
