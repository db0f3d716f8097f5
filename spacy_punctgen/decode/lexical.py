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
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np

from spacy_punctgen.decode.marginal import EXACT_CANDIDATES, EXACT_SUPPORT_MIN, RESTORE_PRUNE, marginal_slot_distributions
from spacy_punctgen.decode.priors import mixture_priors
from spacy_punctgen.decode.risk import SlotChoice, Surface, mbr_index, risk_weights
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.lexical import CLASSES, mark_class

_CLASS_INDEX = {c: k for k, c in enumerate(CLASSES)}


def _class_of(surface: Surface, memo: Dict[Surface, int]) -> int:
    k = memo.get(surface)
    if k is None:
        k = memo[surface] = _CLASS_INDEX[mark_class(surface)]
    return k


def combine_slot(marginal: Dict[Surface, float], q: Optional[np.ndarray], weight: float,
                 memo: Dict[Surface, int]) -> Dict[Surface, float]:
    """``p'`` of one slot, most probable first (ties keep punctgen's order), scaled to the mass of
    punctgen's (pruned) support; ``q`` None: ``p``."""
    if q is None or weight == 0:
        return dict(marginal)
    strings = list(marginal)
    p = np.fromiter(marginal.values(), dtype=np.float64, count=len(strings))
    f = np.power(np.maximum(q, 1e-300), weight)[[_class_of(s, memo) for s in strings]]
    w = p * f
    total = w.sum()
    if not total > 0:  # every string below the floor: keep punctgen's
        return dict(marginal)
    w *= p.sum() / total  # the mass punctgen's pruned support holds, as the compiled decoder reports it
    order = np.argsort(-w, kind="stable")
    return {strings[j]: float(w[j]) for j in order}


def mbr_choice(dist: Dict[Surface, float], empty_weight: float = 1.0) -> SlotChoice:
    """The string of least expected edit distance under ``dist`` (ranked): the ``"marginal"``
    decoder's rule, its :data:`EXACT_CANDIDATES` most probable strings scored against every
    string of at least :data:`EXACT_SUPPORT_MIN`. Strings of at most one symbol are all one
    edit apart, so there the choice is the heaviest weighted string."""
    strings = list(dist)
    support = [s for s in strings if dist[s] >= EXACT_SUPPORT_MIN] or strings[:1]
    weights = risk_weights(dist, support, empty_weight)
    candidates = strings[:EXACT_CANDIDATES]
    if all(len(s) <= 1 for s in support) and all(len(s) <= 1 for s in candidates):
        by = dict(zip(support, weights))
        best = max(range(len(candidates)), key=lambda j: (by.get(candidates[j], 0.0), -j))
    else:
        best = mbr_index(candidates, support, weights)
    return SlotChoice(candidates[best], float(dist[candidates[best]]))


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
    memo: Dict[Surface, int] = {}
    return [mbr_choice(combine_slot(m, None if probs is None or i == 0 else probs[i - 1], weight, memo), empty_weight)
            for i, m in enumerate(marginals)]


def restore_with_lexical(model, tree_sets: Sequence[Sequence[object]], lexical_probs: Sequence[Optional[np.ndarray]],
                         weight: float, empty_weight: float = 1.0,
                         tree_weights: Optional[Sequence[Sequence[float]]] = None) -> List[List[SlotChoice]]:
    """The ``"marginal"`` decoder's choices for each sentence (its trees ``tree_sets[k]``, mixed
    equally or by ``tree_weights``) with the expert's evidence ``lexical_probs[k]`` (rows for
    slots ``1..n``; None: punctgen alone) at ``weight``."""
    prior_sets, channel = mixture_priors(model, [list(ts) for ts in tree_sets])
    if len(lexical_probs) != len(prior_sets):
        raise ValueError(Errors.E998.format(got=len(lexical_probs), n=len(prior_sets)))
    dists = marginal_slot_distributions(model, prior_sets, channel, prune=RESTORE_PRUNE, weights=tree_weights)
    return [lexical_choices(d, q, weight, empty_weight) for d, q in zip(dists, lexical_probs)]
