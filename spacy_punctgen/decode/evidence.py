"""Restoration conditioned on the marks a text already has (issue 38: "existing punctuation is
evidence, not noise").

A sentence whose ``observed`` flags say which slots the text fixes (marks the user wrote, or a
gap inside a token that can take none) is decoded from ``p(x_F | x_O, T)``, the exact
distribution of its free slots ``F`` given the observed ones ``O``:

* the DP runs with the free slots' surfaces summed out (``Lattice.free``: a free slot weighs 1
  whatever crosses it, because the channel's outputs of any string sum to 1), which gives
  ``p(x_O | T)`` and every node's posterior pair marginal ``μ_w(l, r) = p(l, r | x_O, T)``;
* a free slot's underlying string is the concatenation of the halves of the nodes whose edges
  meet there, and given ``x_O`` those halves are still independent: each node is an edge between
  its two edge slots, the ``n`` edges over ``n + 1`` slots form a tree (spans are nested or
  disjoint and each holds its own word), and removing the free slot cuts every path between
  them. So each free slot's marginal is the marginal decoder's computation with ``μ`` in place
  of ATTACH's prior (tests/decode/test_evidence.py checks it against enumeration);
* several trees of one sentence are reweighted by ``p(x_O | T_j)`` (Bayes' rule):
  :func:`evidence_weights`.

Marks the model has no symbol for (``<unk>``) give no evidence; if the marks are impossible under
the model as a whole (a written mark no underlying string of this tree can make), the slots are
taken in order and each kept only while the rest stays possible.
"""
from __future__ import annotations

import copy
from typing import List, Optional, Sequence

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.dp import posterior_marginals

#: the inventory's id of the unknown-mark symbol (``Inventory.symbol_id``)
UNKNOWN_SYMBOL = 1


def has_evidence(sentence: PunctSentence) -> bool:
    return sentence.observed is not None and any(sentence.observed)


def _check_mask(sentence: PunctSentence, k: int) -> List[bool]:
    mask = [bool(o) for o in sentence.observed]
    if len(mask) != len(sentence.words) + 1:
        name = repr(sentence.sent_id) if sentence.sent_id is not None else f"#{k}"
        raise ValueError(Errors.E191.format(name=name, got=len(mask), n=len(sentence.words) + 1))
    return mask


def _posterior(model, sentence: PunctSentence, prior, mask: List[bool], phi: np.ndarray):
    """(log p(x_O | T), the prior with μ as its node probabilities) for the observed ``mask``."""
    if not any(mask):
        return 0.0, prior
    prep = model.prepare(_with_mask(sentence, mask), tilt=False)
    lat = prep.lattice
    sizes = np.fromiter(map(len, prior.probs), dtype=np.int64, count=len(prior.probs))
    off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    flat = np.concatenate(prior.probs) if len(sizes) else np.zeros(0)
    at = off[np.asarray(lat.cand_node, dtype=np.int64)] + np.asarray(lat.cand_row, dtype=np.int64)
    log_evidence, mu = posterior_marginals(lat, model.grammar, flat[at], phi, model.r2l)
    if not np.isfinite(log_evidence):
        return -np.inf, prior
    post = np.zeros_like(flat)
    post[at] = mu
    out = copy.copy(prior)
    out.probs = [post[off[w]:off[w + 1]] for w in range(len(sizes))]
    out.log_evidence = log_evidence
    return log_evidence, out


def _with_mask(sentence: PunctSentence, mask: List[bool]) -> PunctSentence:
    out = copy.copy(sentence)
    out.observed = tuple(mask)
    return out


def _informative(model, sentence: PunctSentence, mask: List[bool]) -> List[bool]:
    """``mask`` less the slots holding a mark the model has no symbol for."""
    sym = model.inventory.symbol_id
    return [o and not any(sym(m) == UNKNOWN_SYMBOL for m in sentence.slots[i]) for i, o in enumerate(mask)]


def condition_on_marks(model, tree_sets: Sequence[Sequence[PunctSentence]], prior_sets: List[List[object]],
                       phi: np.ndarray) -> List[List[object]]:
    """``prior_sets`` (per sentence, the priors of its trees ``tree_sets[k]``) conditioned on the
    observed slots of each sentence that has some (:func:`has_evidence`; the first tree's flags
    serve all its trees); the others unchanged. A conditioned prior carries ``log_evidence``,
    ``log p(x_O | T_j)`` (``-inf``: this tree cannot make the marks, and it gets weight 0)."""
    out = []
    for k, (trees, priors) in enumerate(zip(tree_sets, prior_sets)):
        trees = list(trees)
        if not trees or not has_evidence(trees[0]):
            out.append(list(priors))
            continue
        mask = _informative(model, trees[0], _check_mask(trees[0], k))
        got = [_posterior(model, t, p, mask, phi) for t, p in zip(trees, priors)]
        if all(not np.isfinite(lw) for lw, _ in got):  # impossible as a whole: keep what stays possible
            kept = [False] * len(mask)
            for i in (i for i, o in enumerate(mask) if o):
                kept[i] = True
                if not np.isfinite(_posterior(model, trees[0], priors[0], kept, phi)[0]):
                    kept[i] = False
            got = [_posterior(model, t, p, kept, phi) for t, p in zip(trees, priors)]
        conditioned = []
        for (lw, post), prior in zip(got, priors):
            if not np.isfinite(lw):
                post = copy.copy(prior)
                post.log_evidence = -np.inf
            conditioned.append(post)
        out.append(conditioned)
    return out


def evidence_weights(prior_sets: Sequence[Sequence[object]], weights: Optional[Sequence[Sequence[float]]]
                     ) -> Optional[List[np.ndarray]]:
    """The trees' mixture weights given the observed marks: ``w_j · p(x_O | T_j)`` renormalised
    (``weights`` None: equal), for the sentences whose priors were conditioned; ``weights``
    itself when none was."""
    if not any(getattr(p, "log_evidence", None) is not None for ts in prior_sets for p in ts):
        return weights
    out = []
    for k, ts in enumerate(prior_sets):
        base = np.ones(len(ts)) if weights is None else np.asarray(weights[k], dtype=np.float64)
        lw = np.array([getattr(p, "log_evidence", None) or 0.0 for p in ts], dtype=np.float64)
        if len(ts) > 1 and np.isfinite(lw).any():
            base = base * np.exp(lw - lw[np.isfinite(lw)].max())
        out.append(base)
    return out
