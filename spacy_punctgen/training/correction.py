"""Training the paper's correction model (:mod:`spacy_punctgen.model.correction`; docs/correction.md).

Paired data from clean training sentences (:func:`training_nodes`): each sentence is damaged by the seeded
generator of :mod:`spacy_punctgen.data.damage` once per seed; a node's erroneous pair is its pair in the
Viterbi underlying tree of the damaged sentence, its target the pair in the Viterbi tree of the clean
sentence (the words and the tree are the same, so the nodes align).  A sentence that a seed leaves unchanged
gives the clean tree as both (counted once, with a weight of the number of such seeds); a sentence whose
clean or damaged text has no derivation is skipped.  The weights are fitted by L-BFGS on the weighted
log-likelihood with an L2 penalty (:func:`lbfgs`).
"""
from __future__ import annotations

import math
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.damage import DEFAULT_CONFIG, DamageConfig, damage_sentences
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.correction import CorrectionModel, correction_inputs, puncteme_tokens

DEFAULT_SEEDS = (101, 102, 103)


def lbfgs(fun: Callable[[np.ndarray], Tuple[float, np.ndarray]], x0: np.ndarray, max_iter: int = 100,
          memory: int = 10, tol: float = 1e-5) -> Tuple[np.ndarray, dict]:
    """Minimise a smooth function by L-BFGS (two-loop recursion, backtracking line search with the
    Armijo condition).  Stops when the gradient's max-norm is below ``tol`` (relative to
    ``max(1, |f|)``) or after ``max_iter`` iterations."""
    x = np.array(x0, dtype=np.float64)
    f, g = fun(x)
    S: List[np.ndarray] = []
    Y: List[np.ndarray] = []
    it = 0
    for it in range(1, max_iter + 1):
        if np.abs(g).max() <= tol * max(1.0, abs(f)):
            break
        q = g.copy()
        alphas = []
        for s, y in zip(reversed(S), reversed(Y)):
            a = np.dot(s, q) / np.dot(y, s)
            alphas.append(a)
            q -= a * y
        if S:
            q *= np.dot(S[-1], Y[-1]) / np.dot(Y[-1], Y[-1])
        else:
            q /= max(1.0, np.abs(g).max())
        for (s, y), a in zip(zip(S, Y), reversed(alphas)):
            q += s * (a - np.dot(y, q) / np.dot(y, s))
        d = -q
        slope = float(np.dot(g, d))
        if slope >= 0:  # not a descent direction: restart from the gradient
            S, Y = [], []
            d = -g / max(1.0, np.abs(g).max())
            slope = float(np.dot(g, d))
        step = 1.0
        while True:
            xn = x + step * d
            fn, gn = fun(xn)
            if fn <= f + 1e-4 * step * slope or step < 1e-10:
                break
            step *= 0.5
        s, y = xn - x, gn - g
        if np.dot(s, y) > 1e-12:
            S.append(s)
            Y.append(y)
            if len(S) > memory:
                S.pop(0)
                Y.pop(0)
        done = abs(f - fn) <= 1e-10 * max(1.0, abs(f))
        x, f, g = xn, fn, gn
        if done:
            break
    return x, {"iterations": it, "objective": f, "grad_max": float(np.abs(g).max())}


def training_nodes(model, clean: Sequence[PunctSentence], seeds: Sequence[int] = DEFAULT_SEEDS, top_k: int = 16,
                   config: DamageConfig = DEFAULT_CONFIG):
    """``(nodes, targets, weights, stats)``: the inputs of every node of every clean sentence that some
    seed leaves unchanged (its erroneous pair is its target; weight: how many such seeds) and of every
    damaged copy that differs (weight 1); targets are the pairs of the clean sentence's Viterbi tree."""
    clean = list(clean)
    targets, clean_nodes = correction_inputs(model, clean, top_k)
    counts = [0] * len(clean)
    bad_sents: List[PunctSentence] = []
    bad_of: List[int] = []
    for seed in seeds:
        bad, _ = damage_sentences(clean, seed=seed, config=config)
        for k, (c, b) in enumerate(zip(clean, bad)):
            if targets[k] is None:
                continue
            if [tuple(x) for x in c.slots] == [tuple(x) for x in b.slots]:
                counts[k] += 1
            else:
                bad_sents.append(b)
                bad_of.append(k)
    errs, bad_nodes = correction_inputs(model, bad_sents, top_k)
    nodes, gold, weight = [], [], []
    for k, ns in enumerate(clean_nodes):
        if counts[k] and ns is not None:
            nodes += ns
            gold += [tuple(t) for t in np.asarray(targets[k]).tolist()]
            weight += [float(counts[k])] * len(ns)
    skipped = 0
    for k, ns in zip(bad_of, bad_nodes):
        if ns is None:
            skipped += 1
            continue
        nodes += ns
        gold += [tuple(t) for t in np.asarray(targets[k]).tolist()]
        weight += [1.0] * len(ns)
    stats = {"clean_sentences": len(clean), "seeds": list(seeds), "damaged_copies": len(bad_sents),
             "clean_impossible": sum(t is None for t in targets), "damaged_skipped": skipped}
    return nodes, gold, weight, stats


def train_correction_model(model, clean: Sequence[PunctSentence], seeds: Sequence[int] = DEFAULT_SEEDS,
                           top_k: int = 16, l2: float = 1.0, max_iter: int = 150, attach_scale: Optional[float] = None,
                           config: DamageConfig = DEFAULT_CONFIG, log: Optional[Callable[[str], None]] = None
                           ) -> CorrectionModel:
    """Fit :class:`CorrectionModel` on ``clean`` training sentences of ``model`` (module docstring)."""
    if isinstance(l2, bool) or not isinstance(l2, (int, float)) or not (math.isfinite(l2) and l2 >= 0):
        raise ValueError(Errors.E845.format(name="l2", what="a finite number >= 0", value=l2))
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(Errors.E845.format(name="max_iter", what="an integer >= 1", value=max_iter))
    if not seeds:
        raise ValueError(Errors.E845.format(name="seeds", what="at least one seed", value=seeds))
    nodes, gold, weight, stats = training_nodes(model, clean, seeds, top_k, config)
    if not nodes:
        raise ValueError(Errors.E844)
    if attach_scale is not None and (isinstance(attach_scale, bool) or not isinstance(attach_scale, (int, float))
                                     or not math.isfinite(attach_scale)):
        raise ValueError(Errors.E845.format(name="attach_scale", what="a finite number or None", value=attach_scale))
    cm = CorrectionModel(top_k=top_k, attach_scale=1.0 if attach_scale is None else float(attach_scale))
    batch = cm.encode(nodes, puncteme_tokens(model), grow=True, gold=gold, weight=weight)
    covered = batch.gold >= 0
    changed = np.array([nd.e != g for nd, g in zip(nodes, gold)])
    def fun(p):
        f, g = cm.objective(batch, p, l2)
        if attach_scale is not None:  # the scale stays fixed
            g[0] = 0.0
        return f, g

    x, info = lbfgs(fun, cm.get_params(), max_iter=max_iter)
    cm.set_params(x)
    stats.update({"nodes": len(nodes), "weighted_nodes": float(sum(weight)),
                  "nodes_changed": int(changed.sum()),
                  "target_not_candidate": int((~covered).sum()),
                  "changed_target_not_candidate": int((~covered & changed).sum()),
                  "features": len(cm.features), "l2": l2, "top_k": top_k, "optimizer": info,
                  "attach_scale": "fitted" if attach_scale is None else float(attach_scale),
                  "damage_config": config.rates()})
    cm.meta = {"training": stats}
    if log is not None:
        log(f"correction model: {len(nodes)} nodes ({int(changed.sum())} with an error), "
            f"{len(cm.features)} features, L-BFGS {info}")
    return cm
