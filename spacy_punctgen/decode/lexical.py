"""Restoration with lexical evidence beside the tree: punctgen's exact slot distribution times
the lexical expert's (:mod:`spacy_punctgen.model.lexical`), decoded by the same MBR.

Why a product of experts: punctgen knows where the tree puts marks, the lexical expert what
the words around a gap say, across the parser's sentence boundaries too. For slot ``i >= 1``
(after word ``i``) with punctgen's marginal ``p(x_i | T)`` and the expert's class
probabilities ``q``, the decoder reads

    p'(s) ∝ p(s | T) · (q(class(s)) / π(class(s))) ** weight

over punctgen's support strings (``class``: :func:`~spacy_punctgen.model.lexical.mark_class`;
``π``: the classes' training frequencies, divided out so that the base rate punctgen already
knows is not counted twice: ``LexicalExpert.evidence``),
and picks the string of least expected edit distance under ``p'`` as the ``"marginal"``
decoder does (the same candidates, support and empty weight; ``weight = 0`` or a ``q`` that
is the same for every class gives exactly its choices). Slot 0 has no word before it and
keeps ``p``.

:func:`restore_with_lexical` is one call of the compiled decoder (``cython_ext/slot_mbr.pyx``,
"Class factors"): each slot's row of factors ``(q / π) ** weight`` (:func:`class_factors`) and
every symbol's rank and class (:func:`string_classes`, from which it computes each string's
:func:`mark_class`) go in, the choices come out. :func:`lexical_choices` is the same product and
MBR in Python over :func:`slot_distributions`: the weight choice on dev reads one set of
distributions for every weight with it, and the tests compare the compiled product against it.
"""
from __future__ import annotations

import functools
import math
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from spacy_punctgen.decode.marginal import (EXACT_CANDIDATES, EXACT_SUPPORT_MIN, RESTORE_PRUNE, StringClasses,
                                            marginal_slot_choices, marginal_slot_distributions)
from spacy_punctgen.decode.priors import mixture_priors
from spacy_punctgen.decode.risk import SlotChoice, Surface, edit_distance, expected_distances
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.lexical import CLASSES, mark_class

_CLASS_INDEX = {c: k for k, c in enumerate(CLASSES)}
#: the rank of a symbol that decides no class (the abbreviation dot): after every mark's
UNRANKED = 2 ** 31 - 1
#: each string's class, remembered across sentences (bounded: cleared when full)
_CLASS_MEMO: Dict[Surface, int] = {}


def _class_of(surface: Surface, memo: Dict[Surface, int]) -> int:
    k = memo.get(surface)
    if k is None:
        if len(memo) >= 1 << 16:
            memo.clear()
        k = memo[surface] = _CLASS_INDEX[mark_class(surface)]
    return k


def _factors(q: np.ndarray, weight: float) -> np.ndarray:
    """``max(q, 1e-300) ** weight``, elementwise (one slot's row or a sentence's rows alike)."""
    return np.power(np.maximum(q, 1e-300), weight)


def _combine(marginal: Dict[Surface, float], f: List[float], memo: Dict[Surface, int]
             ) -> Tuple[List[Surface], List[float]]:
    """:func:`combine_slot` as parallel lists, ``f`` the slot's factors per class. Bit for bit
    the NumPy formulation: products and the rescaling are IEEE operations either way, the two
    sums of three or more strings are NumPy's, and a stable sort on the weights is the order
    of NumPy's stable argsort on their negatives."""
    strings = list(marginal)
    values = list(marginal.values())
    w = [v * f[_class_of(s, memo)] for s, v in zip(strings, values)]
    k = len(w)  # (>= 1)
    if k <= 2:  # a sum of one or two numbers has one order
        total, mass = (w[0] + w[1], values[0] + values[1]) if k == 2 else (w[0], values[0])
    else:
        total = float(np.array(w).sum())
        mass = float(np.array(values).sum())
    if not total > 0:  # every string below the floor: keep punctgen's
        return strings, values
    if not math.isfinite(total):  # (an overflowing factor: NumPy's arithmetic and order, as specified)
        d = _numpy_combine(strings, np.array(values), np.array(w))
        return list(d), list(d.values())
    scale = mass / total  # the mass punctgen's pruned support holds, as the compiled decoder reports it
    w = [x * scale for x in w]
    order = sorted(range(k), key=w.__getitem__, reverse=True)  # stable: ties keep punctgen's order
    return [strings[j] for j in order], [w[j] for j in order]


def _numpy_combine(strings: List[Surface], p: np.ndarray, w: np.ndarray) -> Dict[Surface, float]:
    w = w * (p.sum() / w.sum())
    order = np.argsort(-w, kind="stable")
    return {strings[j]: float(w[j]) for j in order}


def combine_slot(marginal: Dict[Surface, float], q: Optional[np.ndarray], weight: float,
                 memo: Dict[Surface, int]) -> Dict[Surface, float]:
    """``p'`` of one slot, most probable first (ties keep punctgen's order), scaled to the mass of
    punctgen's (pruned) support; ``q`` None: ``p``."""
    if q is None or weight == 0:
        return dict(marginal)
    strings, values = _combine(marginal, _factors(np.asarray(q, dtype=np.float64), weight).tolist(), memo)
    return dict(zip(strings, values))


def _choice(strings: List[Surface], values: List[float], empty_weight: float) -> SlotChoice:
    """:func:`mbr_choice` of the ranked strings and their weights."""
    kept = [(s, v) for s, v in zip(strings, values) if v >= EXACT_SUPPORT_MIN] or [(strings[0], values[0])]
    support = [s for s, _ in kept]
    weights = [v * (empty_weight if len(s) == 0 else 1.0) for s, v in kept]  # as risk_weights
    candidates = strings[:EXACT_CANDIDATES]
    if all(len(s) <= 1 for s in support) and all(len(s) <= 1 for s in candidates):
        by = dict(zip(support, weights))
        best, heaviest = 0, by.get(candidates[0], 0.0)
        for j in range(1, len(candidates)):  # the heaviest, the earliest of equals
            w = by.get(candidates[j], 0.0)
            if w > heaviest:
                best, heaviest = j, w
    else:
        best = _least_risk(candidates, support, weights)
    return SlotChoice(candidates[best], float(values[best]))


_DISTANCES: Dict[Tuple[Surface, Surface], int] = {}
_DISTANCES_MAX = 1 << 16


def _distance(a: Surface, b: Surface) -> int:
    """The token edit distance of two (short) strings, remembered: the same few strings meet
    in slot after slot. Only bounds read it; the choice itself is :func:`expected_distances`'."""
    d = _DISTANCES.get((a, b))
    if d is None:
        if len(_DISTANCES) >= _DISTANCES_MAX:
            _DISTANCES.clear()
        d = _DISTANCES[(a, b)] = edit_distance(a, b)
    return d


def _least_risk(candidates: List[Surface], support: List[Surface], weights: List[float]) -> int:
    """:func:`~.risk.mbr_index`, scoring only the candidates that can win. A slot of a model with
    many punctemes holds dozens of strings (32 candidates x 70 support strings: 2,240 distances),
    but distinct strings are at least one edit apart, so a candidate's risk is at least the total
    weight less its own; a candidate whose bound exceeds the risk of the heaviest one cannot be
    the least (nor an earlier equal), and is not scored."""
    by = dict(zip(support, weights))
    total = math.fsum(weights)
    bounds = [total - by.get(c, 0.0) for c in candidates]
    top = min(range(len(candidates)), key=bounds.__getitem__)
    c = candidates[top]
    best_risk = math.fsum(w * _distance(c, s) for s, w in zip(support, weights))
    slack = 1e-9 * (total + 1.0)  # rounding of the bound against the product
    alive = [j for j in range(len(candidates)) if bounds[j] <= best_risk + slack]
    if len(alive) == 1:
        return alive[0]
    # several can win: all of them scored in one product, as mbr_index scores them (so that near
    # ties fall as they fall there, bit for bit)
    return int(np.argmin(expected_distances(candidates, support, weights)))


def mbr_choice(dist: Dict[Surface, float], empty_weight: float = 1.0) -> SlotChoice:
    """The string of least expected edit distance under ``dist`` (ranked): the ``"marginal"``
    decoder's rule, its :data:`EXACT_CANDIDATES` most probable strings scored against every
    string of at least :data:`EXACT_SUPPORT_MIN`. Strings of at most one symbol are all one
    edit apart, so there the choice is the heaviest weighted string."""
    if not dist:
        raise ValueError(Errors.E124)
    return _choice(list(dist), list(dist.values()), empty_weight)


def lexical_choices(marginals: Sequence[Dict[Surface, float]], probs: Optional[np.ndarray], weight: float,
                    empty_weight: float = 1.0) -> List[SlotChoice]:
    """The choices of one sentence's slots ``x_0..x_n`` from punctgen's slot marginals and the
    expert's evidence ``probs`` (q / π) (``(n, len(CLASSES))``: row ``i - 1`` for slot ``i``; None: punctgen alone)."""
    n = len(marginals) - 1
    if probs is not None:
        probs = np.asarray(probs, dtype=np.float64)
        if probs.shape != (n, len(CLASSES)):
            raise ValueError(Errors.E997.format(rows=probs.shape[0] if probs.ndim else 0,
                                                cols=probs.shape[1] if probs.ndim > 1 else 0, n=n, c=len(CLASSES)))
    factors = None if probs is None or weight == 0 else _factors(probs, weight).tolist()
    memo = _CLASS_MEMO
    out = []
    for i, m in enumerate(marginals):
        if not m:
            raise ValueError(Errors.E124)
        if factors is None or i == 0:  # slot 0 has no word before it: punctgen's
            strings, values = list(m), list(m.values())
        else:
            strings, values = _combine(m, factors[i - 1], memo)
        out.append(_choice(strings, values, empty_weight))
    return out


def slot_distributions(model, tree_sets: Sequence[Sequence[object]],
                       tree_weights: Optional[Sequence[Sequence[float]]] = None) -> List[List[Dict[Surface, float]]]:
    """punctgen's slot marginals of each sentence (its trees mixed equally or by ``tree_weights``),
    pruned as restoration prunes: what :func:`lexical_choices` combines with the evidence."""
    prior_sets, channel = mixture_priors(model, [list(ts) for ts in tree_sets])
    return marginal_slot_distributions(model, prior_sets, channel, prune=RESTORE_PRUNE, weights=tree_weights)


def _class_precedence() -> Dict[str, int]:
    """Each mark class's rank as :func:`mark_class` decides between two marks (0: the one that wins
    over all others): how many classes win over it, each class's name read as a mark of itself."""
    marks = [c for c in CLASSES if c]
    return {c: sum(mark_class((d, c)) == d for d in marks if d != c) for c in marks}


@functools.lru_cache(maxsize=16)
def _string_classes(symbols: Tuple[str, ...]) -> StringClasses:
    precedence = _class_precedence()
    classes = [mark_class((s,)) for s in symbols]
    rank = np.array([precedence[c] if c else UNRANKED for c in classes], dtype=np.int32)
    cls = np.array([_CLASS_INDEX[c] for c in classes], dtype=np.int32)
    rank.setflags(write=False)
    cls.setflags(write=False)
    return StringClasses(rank, cls, _CLASS_INDEX[""])


def string_classes(symbols: Sequence[str]) -> StringClasses:
    """:func:`mark_class` as the compiled decoder computes it from the symbols of a string: each
    symbol's own class (:func:`mark_class` of it alone) and rank (its class's precedence, the class
    :func:`mark_class` gives two marks: ``?`` over ``!`` over ``.``, then ``,`` ``:`` ``;``, then
    ``other``; a symbol that decides nothing, such as ``ABBR.``, ranks below all), the string's class
    that of its least-ranked symbol, the empty class where it has none. ``symbols``: the model's
    symbol names, by id (``model.inventory.symbols``)."""
    return _string_classes(tuple(symbols))


def class_factors(probs: np.ndarray, weight: float, n: int) -> np.ndarray:
    """The ``(n + 1, len(CLASSES))`` factors of a sentence's slots ``0..n`` for the compiled
    product: row ``i`` is ``max(q, 1e-300) ** weight`` of the evidence row ``i - 1`` (``probs``:
    ``(n, len(CLASSES))``, E997 otherwise), divided by its largest entry (computed in logarithms:
    the rescaling of the product undoes any row scale, and a large weight cannot overflow); row 0
    (slot 0, no word before it) is all ones, which changes nothing."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.shape != (n, len(CLASSES)):
        raise ValueError(Errors.E997.format(rows=probs.shape[0] if probs.ndim else 0,
                                            cols=probs.shape[1] if probs.ndim > 1 else 0, n=n, c=len(CLASSES)))
    out = np.ones((n + 1, len(CLASSES)))
    if n:
        log_f = weight * np.log(np.maximum(probs, 1e-300))
        out[1:] = np.exp(log_f - log_f.max(axis=1, keepdims=True))
    return out


def restore_with_lexical(model, tree_sets: Sequence[Sequence[object]], lexical_probs: Sequence[Optional[np.ndarray]],
                         weight: Union[float, Sequence[float]], empty_weight: float = 1.0,
                         tree_weights: Optional[Sequence[Sequence[float]]] = None) -> List[List[SlotChoice]]:
    """The ``"marginal"`` decoder's choices for each sentence (its trees ``tree_sets[k]``, mixed
    equally or by ``tree_weights``) with the expert's evidence ``lexical_probs[k]`` (rows for
    slots ``1..n``; None: punctgen alone) at ``weight`` (one for all, or one a sentence): one
    compiled call, the product and its MBR in the kernel (:func:`lexical_choices` over
    :func:`slot_distributions` is its Python twin)."""
    if len(lexical_probs) != len(tree_sets):
        raise ValueError(Errors.E998.format(got=len(lexical_probs), n=len(tree_sets)))
    weights = [weight] * len(tree_sets) if isinstance(weight, (int, float)) else list(weight)
    if len(weights) != len(tree_sets):
        raise ValueError(Errors.E998.format(got=len(weights), n=len(tree_sets)))
    prior_sets, channel = mixture_priors(model, [list(ts) for ts in tree_sets])
    factors = []
    for q, priors, w in zip(lexical_probs, prior_sets, weights):
        if q is None or not priors:  # (no trees: the decoder says so, E178)
            factors.append(None)
            continue
        f = class_factors(q, w, int(priors[0].n))  # (shape checked even at weight 0)
        factors.append(None if w == 0 else f)
    return marginal_slot_choices(model, prior_sets, channel, empty_weight, weights=tree_weights,
                                 class_factors=factors, string_classes=string_classes(model.inventory.symbols))
