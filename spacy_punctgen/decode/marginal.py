"""The ``"marginal"`` decoder: per-slot MBR under the exact slot marginals ``p(x_i | T)``, computed
in compiled code (``cython_ext/slot_mbr.pyx``, built as ``spacy_punctgen.inference._slot_mbr``),
and its settings.

It makes the choices of the NumPy reference decoder :mod:`spacy_punctgen.testing.exact_mbr`
(the same marginals to rounding: same pruning, beam, expansion cap, rescaling, candidates and
support; docs/decoding.md, "The marginal decoder"), for all slots of all sentences of a batch
in one call, without sampling and without a Python loop per slot or per string:

* the prior factorises over nodes, so each node half's puncteme marginal is ATTACH's pair
  softmax summed per side (in the kernel, as the reference's ``np.bincount``);
* a slot's underlying string is the concatenation of independent halves, in ``slot_parts``
  order, and the kernel pushes them one at a time through the channel (states: pending symbol
  and surface prefix), mixes the trees of a sentence, ranks the strings and picks the candidate
  of least expected edit distance.

The priors are :class:`.priors.Prior` objects (anything with ``n``, ``pairs``, ``probs`` and
``slot_parts``): ``prior_sets[k]`` holds the trees of sentence ``k``.  :func:`marginal_choices`
and :func:`marginal_distributions` take every setting as an argument (the tests vary them);
:func:`marginal_slot_choices` and :func:`marginal_slot_distributions` are the decoder with this
module's settings, as restoration, mixtures and correction use it.
"""
from __future__ import annotations

import math
from itertools import chain
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.decode.evidence import evidence_weights
from spacy_punctgen.decode.risk import SlotChoice
from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.kernels import slot_mbr
from spacy_punctgen.inference.dp import BOS

#: sentences per kernel call (bounds the flat arrays of one call)
BATCH_SENTENCES = 512
#: partial underlying strings (and channel outputs) less probable than this are dropped where
#: the slot marginals are the result (``mbr.slot_marginals``, correction)
EXACT_PRUNE = 1e-7
#: ... and where restoration *chooses* a string (restoration, the weighted mixtures of several
#: trees): the choices need only the strings that can win, and on EWT and zh_gsd dev 1e-5 chose
#: as 1e-7 did (0 of 10,821 zh slots and of 24,025 EWT slots changed with the sentence models;
#: 3 EWT slots with the stream model, the same 1,925 edits) at 2.7-3.8 times the decoding speed
#: (docs/decoding.md, "How much to prune")
RESTORE_PRUNE = 1e-5
#: at most this many partial underlying strings per slot (the most probable) are kept
EXACT_BEAM = 300
#: MBR candidates per slot (the most probable strings) ...
EXACT_CANDIDATES = 32
#: ... scored against the (at most EXACT_BEAM) support strings at least this probable (where the
#: strings are so long that candidates x support would cost more than the sample decoders'
#: SLOT_WORK, only the most probable of each: a deep slot)
EXACT_SUPPORT_MIN = 1e-9
#: a slot where more than this many node halves meet (no sentence of 37 UD files has more than
#: 21) is a deep one: each of its halves reads at most EXACT_EXPAND (state, puncteme) products,
#: the most probable
EXACT_WIDE = 32
EXACT_EXPAND = 1024
#: when the states of a slot keep less than this share of the mass (pruning drops some on every
#: half where many constituents meet), they are scaled back up (the scale is remembered), so the
#: pruning threshold stays relative and the states never all fall below it
EXACT_RESCALE = 0.5


class StringClasses(NamedTuple):
    """A class for every surface string, as the kernel computes it for the class factors of
    :func:`marginal_choices`: the class of a string is ``cls[y]`` of its symbol ``y`` of least
    ``rank[y]`` (the first of equals), ``empty`` for a string without symbols. One entry per
    symbol of the grammar, in symbol-id order."""

    rank: np.ndarray
    cls: np.ndarray
    empty: int


class _ClassRows(NamedTuple):
    """Checked class factors: per sentence its rows (each divided by its maximum) and whether
    each applies, or None; the classes' kernel arrays."""

    rows: List[Optional[np.ndarray]]
    apply: List[Optional[np.ndarray]]
    n_class: int
    rank: np.ndarray
    cls: np.ndarray
    empty: int


class _Flat:
    """Every array the kernel reads, for one batch of sentences (see slot_mbr.pyx)."""

    __slots__ = ("s_ptr", "g_ptr", "g_unit", "g_weight", "u_ptr", "u_slot0", "part_half", "node_ptr", "pairs",
                 "pair_p", "g_factor", "g_apply")


def _check_phi(grammar, phi) -> np.ndarray:
    S = int(grammar.n_symbols)
    phi = np.ascontiguousarray(phi, dtype=np.float64)
    if phi.shape != (S, S, 4):
        raise ValueError(Errors.E170.format(S=S, shape=phi.shape))
    if not (np.isfinite(phi).all() and (phi >= 0).all()):
        raise ValueError(Errors.E171)
    return phi


def _puncteme_table(grammar) -> Tuple[np.ndarray, np.ndarray]:
    S = int(grammar.n_symbols)
    lens = np.fromiter(map(len, grammar.punctemes), dtype=np.int64, count=len(grammar.punctemes))
    pm_ptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=pm_ptr[1:])
    pm_sym = np.fromiter(chain.from_iterable(grammar.punctemes), dtype=np.int64, count=int(pm_ptr[-1]))
    bad = np.flatnonzero((pm_sym < 0) | (pm_sym >= S))
    if len(bad):
        i = int(np.searchsorted(pm_ptr, bad[0], side="right") - 1)
        raise ValueError(Errors.E182.format(i=i, p=grammar.punctemes[i], s=int(pm_sym[bad[0]]), last=S - 1))
    return pm_ptr, pm_sym.astype(np.int32)


def _check_settings(prune: float, beam: int, candidates: int, support_min: float, expand: int, wide: int,
                    rescale: float) -> None:
    for name, value, ok, what in (
            ("prune", prune, isinstance(prune, (int, float)) and math.isfinite(prune) and prune >= 0,
             "a finite number >= 0"),
            ("beam", beam, isinstance(beam, (int, np.integer)) and 1 <= beam < 2 ** 30, "an integer >= 1"),
            ("candidates", candidates, isinstance(candidates, (int, np.integer)) and 1 <= candidates < 2 ** 30,
             "an integer >= 1"),
            ("support_min", support_min, isinstance(support_min, (int, float)) and not math.isnan(support_min),
             "a number"),
            ("expand", expand, isinstance(expand, (int, np.integer)) and 0 <= expand < 2 ** 62,
             "an integer >= 0 (0: no cap)"),
            ("wide", wide, isinstance(wide, (int, np.integer)) and 0 <= wide < 2 ** 62, "an integer >= 0"),
            ("rescale", rescale, isinstance(rescale, (int, float)) and 0 <= rescale <= 1, "in [0, 1] (0: never)")):
        if isinstance(value, bool) or not ok:
            raise ValueError(Errors.E179.format(name=name, what=what, value=value))


def _locate(node_prior: np.ndarray, node_base: np.ndarray, trees: List[Tuple[int, int]], node: int):
    """(sentence, tree, node within its tree) of a global node index."""
    p = int(node_prior[node])
    k, j = trees[p]
    return k, j, node - int(node_base[p])


def _node_pairs(pair_list: list, prob_list: list, n_nodes: int, B: int, node_prior, node_base, trees
                ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every node's candidate pairs and probabilities, concatenated and checked: ``node_ptr``
    (node ``w``'s pairs are rows ``node_ptr[w]:node_ptr[w+1]``), ``pairs`` (int64 ``(N, 2)``),
    ``probs`` (float64 ``(N,)``).  The kernel sums them per half as the reference's ``np.bincount`` does."""
    sizes = np.fromiter(map(len, pair_list), dtype=np.int64, count=n_nodes)
    try:
        pairs = np.ascontiguousarray(np.concatenate(pair_list), dtype=np.int64) if n_nodes else np.zeros((0, 2), np.int64)
        probs = np.ascontiguousarray(np.concatenate(prob_list), dtype=np.float64) if n_nodes else np.zeros(0)
        ok = pairs.ndim == 2 and pairs.shape[1] == 2 and probs.ndim == 1 and len(probs) == len(pairs)
    except (ValueError, TypeError):
        ok = False
    if ok:
        psizes = np.fromiter(map(len, prob_list), dtype=np.int64, count=n_nodes)
        ok = bool((psizes == sizes).all())
    if not ok:  # find the first bad node
        for w, (a, b) in enumerate(zip(pair_list, prob_list)):
            sa, sb = np.shape(a), np.shape(b)
            if len(sa) != 2 or sa[1] != 2 or sb != (sa[0],):
                k, j, v = _locate(node_prior, node_base, trees, w)
                raise ValueError(Errors.E172.format(k=k, j=j, w=v, pairs=sa, probs=sb))
        raise ValueError(Errors.E172.format(k="?", j="?", w="?", pairs="?", probs="?"))
    node_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(sizes, out=node_ptr[1:])
    bad = np.flatnonzero(~(np.isfinite(probs) & (probs >= 0)))
    if len(bad):
        k, j, w = _locate(node_prior, node_base, trees, int(np.searchsorted(node_ptr, bad[0], side="right") - 1))
        raise ValueError(Errors.E173.format(k=k, j=j, w=w))
    # some pair of every node has a positive probability: positive pairs counted up to each node
    n_pos = np.zeros(len(probs) + 1, dtype=np.int64)
    np.cumsum(probs > 0, out=n_pos[1:])
    bad = np.flatnonzero(n_pos[node_ptr[1:]] == n_pos[node_ptr[:-1]])
    if len(bad):
        k, j, w = _locate(node_prior, node_base, trees, int(bad[0]))
        raise ValueError(Errors.E173.format(k=k, j=j, w=w))
    if len(pairs) and (int(pairs.min()) < 0 or int(pairs.max()) >= B):  # (a row-wise test only then: slow)
        bad = np.flatnonzero(((pairs < 0) | (pairs >= B)).any(axis=1))
        k, j, w = _locate(node_prior, node_base, trees, int(np.searchsorted(node_ptr, bad[0], side="right") - 1))
        raise ValueError(Errors.E174.format(k=k, j=j, w=w, last=B - 1))
    return node_ptr, pairs, probs


def _check_class_factors(prior_sets: list, class_factors, string_classes: Optional[StringClasses],
                         n_symbols: int) -> Optional[_ClassRows]:
    """``class_factors`` (per sentence None or ``(n + 1, C)``, finite, >= 0) checked (E192-E194),
    each row divided by its maximum (the product is rescaled, so a row's scale does not matter, and
    a row of large factors cannot overflow); a row applies where it is not constant (a constant row
    changes nothing) and not all 0 (then ``p`` is kept anyway). None stays None."""
    if class_factors is None:
        return None
    class_factors = list(class_factors)
    if len(class_factors) != len(prior_sets):
        raise ValueError(Errors.E192.format(got=len(class_factors), n=len(prior_sets)))
    given = [np.asarray(f, dtype=np.float64) for f in class_factors if f is not None]
    if not given:  # nothing to multiply
        return None
    if string_classes is None:
        raise ValueError(Errors.E194.format(problem="string_classes is not given"))
    n_class = given[0].shape[1] if given[0].ndim == 2 else 0
    rows: List[Optional[np.ndarray]] = []
    apply: List[Optional[np.ndarray]] = []
    for k, (f, ts) in enumerate(zip(class_factors, prior_sets)):
        if f is None:
            rows.append(None)
            apply.append(None)
            continue
        f = np.asarray(f, dtype=np.float64)
        if not ts:  # (no trees: _flatten says so, E178)
            rows.append(None)
            apply.append(None)
            continue
        n = int(ts[0].n)
        if f.shape != (n + 1, n_class) or n_class < 1 or not (np.isfinite(f).all() and (f >= 0).all()):
            raise ValueError(Errors.E193.format(k=k, shape=f.shape, slots=n + 1, c=n_class))
        top = f.max(axis=1)
        apply.append(((top > 0) & (f.min(axis=1) < top)).astype(np.uint8))
        rows.append(f / np.where(top > 0, top, 1.0)[:, None])
    rank = np.asarray(string_classes.rank).reshape(-1)
    cls = np.asarray(string_classes.cls).reshape(-1)
    empty = string_classes.empty
    if len(rank) < n_symbols or len(cls) < n_symbols:
        raise ValueError(Errors.E194.format(problem=f"{len(rank)} ranks and {len(cls)} classes for "
                                                    f"{n_symbols} symbols"))
    rank, cls = rank[:n_symbols], cls[:n_symbols]
    if not (np.issubdtype(rank.dtype, np.integer) and np.issubdtype(cls.dtype, np.integer)) \
            or isinstance(empty, bool) or not isinstance(empty, (int, np.integer)):
        raise ValueError(Errors.E194.format(problem="ranks, classes and the empty class must be integers"))
    if ((cls < 0) | (cls >= n_class)).any() or not 0 <= empty < n_class \
            or ((rank < 0) | (rank > np.iinfo(np.int32).max)).any():
        raise ValueError(Errors.E194.format(problem=f"classes must lie in 0..{n_class - 1} and ranks in 0..2**31 - 1"))
    return _ClassRows(rows, apply, n_class, np.ascontiguousarray(rank, dtype=np.int32),
                      np.ascontiguousarray(cls, dtype=np.int32), int(empty))


def _class_arrays(classes: _ClassRows, slots: np.ndarray, a: int) -> Tuple[np.ndarray, np.ndarray]:
    """``g_factor`` and ``g_apply`` of the batch of sentences from ``a`` (``slots``: per sentence
    of it, its slots): one row per group, in group order; sentences without factors apply none."""
    C = classes.n_class
    factor, apply = [], []
    for k, n_slots in enumerate(slots.tolist(), a):
        if classes.rows[k] is None:
            factor.append(np.ones((n_slots, C)))
            apply.append(np.zeros(n_slots, dtype=np.uint8))
        else:
            factor.append(classes.rows[k])
            apply.append(classes.apply[k])
    return (np.ascontiguousarray(np.concatenate(factor) if factor else np.ones((0, C)), dtype=np.float64),
            np.ascontiguousarray(np.concatenate(apply) if apply else np.zeros(0), dtype=np.uint8))


def _flatten(prior_sets: Sequence[Sequence[object]], B: int, k0: int = 0,
             weights: Optional[Sequence[np.ndarray]] = None, classes: Optional[_ClassRows] = None) -> _Flat:
    """The kernel's arrays for the sentences ``prior_sets`` (numbered from ``k0`` in errors);
    ``weights`` (per sentence, one per tree, summing to 1): ``g_weight``, else None (1/K each);
    ``classes`` (every sentence's, checked): ``g_factor`` and ``g_apply``, else None."""
    trees: List[Tuple[int, int]] = []
    flat = []
    for k, ts in enumerate(prior_sets, k0):
        ts = list(ts)
        if not ts:
            raise ValueError(Errors.E178.format(k=k))
        n0 = int(ts[0].n)
        for j, t in enumerate(ts):
            if int(t.n) != n0:
                raise ValueError(Errors.E177.format(k=k, j=j, n_j=int(t.n), n_0=n0))
        trees.extend((k, j) for j in range(len(ts)))
        flat.extend(ts)
    n = np.fromiter((int(t.n) for t in flat), dtype=np.int64, count=len(flat))
    for p, t in enumerate(flat):  # one check per tree
        if len(t.pairs) != n[p] or len(t.probs) != n[p]:
            k, j = trees[p]
            raise ValueError(Errors.E184.format(k=k, j=j, pairs=len(t.pairs), probs=len(t.probs), n=int(n[p])))
        if len(t.slot_parts) != n[p] + 1:
            k, j = trees[p]
            raise ValueError(Errors.E175.format(k=k, j=j, got=len(t.slot_parts), n=int(n[p])))
    node_base = np.zeros(len(flat) + 1, dtype=np.int64)
    np.cumsum(n, out=node_base[1:])
    n_nodes = int(node_base[-1])
    node_prior = np.repeat(np.arange(len(flat), dtype=np.int64), n)
    out = _Flat()
    out.node_ptr, out.pairs, out.pair_p = _node_pairs(
        list(chain.from_iterable(t.pairs for t in flat)), list(chain.from_iterable(t.probs for t in flat)),
        n_nodes, B, node_prior, node_base, trees)
    # units: one per (tree, slot), tree-major; their parts in slot_parts order
    counts = np.fromiter(chain.from_iterable(map(len, t.slot_parts) for t in flat), dtype=np.int64,
                         count=int((n + 1).sum()))
    parts_list = list(chain.from_iterable(chain.from_iterable(t.slot_parts) for t in flat))
    try:
        parts = np.array(parts_list, dtype=np.int64).reshape(len(parts_list), 2)
    except (ValueError, TypeError):
        parts = None
    unit_prior = np.repeat(np.arange(len(flat), dtype=np.int64), n + 1)
    part_prior = np.repeat(unit_prior, counts)
    if parts is None:  # not all (node, side) pairs of integers: find the first that is not
        bad = np.array([next(q for q, x in enumerate(parts_list) if np.shape(x) != (2,)
                             or not all(isinstance(v, (int, np.integer)) for v in x))])
    else:
        bad = np.flatnonzero(
            (parts[:, 0] < 0) | (parts[:, 0] >= n[part_prior]) | ((parts[:, 1] != 0) & (parts[:, 1] != 1)))
    if len(bad):
        u = int(np.searchsorted(np.cumsum(counts), bad[0], side="right"))
        p = int(unit_prior[u])
        k, j = trees[p]
        i = u - int((node_base[p] + p))
        raise ValueError(Errors.E176.format(k=k, j=j, i=i, part=parts_list[bad[0]], last=int(n[p]) - 1))
    part_half = 2 * (node_base[part_prior] + parts[:, 0]) + parts[:, 1]
    reads = np.bincount(part_half, minlength=2 * n_nodes)
    bad = np.flatnonzero(reads != 1)
    if len(bad):
        k, j, w = _locate(node_prior, node_base, trees, int(bad[0] // 2))
        raise ValueError(Errors.E183.format(k=k, j=j, w=w, side=("left", "right")[int(bad[0] % 2)],
                                            count=int(reads[bad[0]])))
    out.part_half = part_half
    out.u_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out.u_ptr[1:])
    unit_base = node_base + np.arange(len(flat) + 1)  # first unit of each tree
    out.u_slot0 = (np.arange(len(counts)) == unit_base[unit_prior]).astype(np.uint8)
    # groups: one per (sentence, slot), mixing the sentence's trees in order
    K = np.bincount(np.array([k for k, _ in trees], dtype=np.int64) - k0, minlength=len(prior_sets))
    first_tree = np.zeros(len(K) + 1, dtype=np.int64)
    np.cumsum(K, out=first_tree[1:])
    slots = n[first_tree[:-1]] + 1  # per sentence
    out.s_ptr = np.zeros(len(K) + 1, dtype=np.int64)
    np.cumsum(slots, out=out.s_ptr[1:])
    out.g_weight = None
    out.g_factor = out.g_apply = None
    if classes is not None:
        out.g_factor, out.g_apply = _class_arrays(classes, slots, k0)
    if (K == 1).all():
        out.g_ptr = np.arange(len(counts) + 1, dtype=np.int64)
        out.g_unit = np.arange(len(counts), dtype=np.int64)
    else:
        G = int(out.s_ptr[-1])
        g_sent = np.repeat(np.arange(len(K), dtype=np.int64), slots)
        g_slot = np.arange(G, dtype=np.int64) - out.s_ptr[g_sent]
        Kg = K[g_sent]
        out.g_ptr = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(Kg, out=out.g_ptr[1:])
        e_group = np.repeat(np.arange(G, dtype=np.int64), Kg)
        e_tree = np.arange(int(out.g_ptr[-1]), dtype=np.int64) - out.g_ptr[e_group]
        out.g_unit = unit_base[first_tree[g_sent[e_group]] + e_tree] + g_slot[e_group]
        if weights is not None:
            w_tree = np.concatenate([np.asarray(w, dtype=np.float64) for w in weights])
            out.g_weight = np.ascontiguousarray(w_tree[first_tree[g_sent[e_group]] + e_tree])
    return out


def _check_weights(prior_sets: list, weights) -> Optional[List[np.ndarray]]:
    """``weights`` (per sentence, one number >= 0 per tree, not all 0) normalised per sentence
    (E099 otherwise); None stays None."""
    if weights is None:
        return None
    weights = [np.asarray(w, dtype=np.float64).reshape(-1) for w in weights]
    if len(weights) != len(prior_sets) or any(
            len(w) != len(ts) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0
            for w, ts in zip(weights, prior_sets)):
        raise ValueError(Errors.E099.format(problem="weights must be one list per sentence, one number >= 0 per "
                                                    "tree, not all 0"))
    return [w / w.sum() for w in weights]


def _run(prior_sets, grammar, phi, r2l: bool, prune: float, beam: int, candidates: int,
         support_min: float, expand: int, wide: int, rescale: float, marginals: bool, symbols, factory,
         empty_weight: float = 1.0, weights=None, class_factors=None,
         string_classes: Optional[StringClasses] = None) -> list:
    _check_settings(prune, beam, candidates, support_min, expand, wide, rescale)
    phi = _check_phi(grammar, phi)
    pm_ptr, pm_sym = _puncteme_table(grammar)
    if symbols is not None and len(symbols) < int(grammar.n_symbols):
        raise ValueError(Errors.E179.format(name="symbols", what=f"{grammar.n_symbols} names",
                                            value=f"{len(symbols)} names"))
    prior_sets = [list(ts) for ts in prior_sets]
    weights = _check_weights(prior_sets, evidence_weights(prior_sets, weights))
    if weights is not None:  # trees of weight 0 are not read at all
        kept = [[j for j, x in enumerate(w) if x > 0] for w in weights]
        prior_sets = [[ts[j] for j in keep] for ts, keep in zip(prior_sets, kept)]
        weights = [w[keep] for w, keep in zip(weights, kept)]
    classes = _check_class_factors(prior_sets, class_factors, string_classes, int(grammar.n_symbols))
    out: list = []
    for a in range(0, len(prior_sets), BATCH_SENTENCES):
        f = _flatten(prior_sets[a:a + BATCH_SENTENCES], len(pm_ptr) - 1, a,
                     None if weights is None else weights[a:a + BATCH_SENTENCES], classes)
        out.extend(slot_mbr(f.s_ptr, f.g_ptr, f.g_unit, f.u_ptr, f.u_slot0, f.part_half, f.node_ptr, f.pairs,
                            f.pair_p, pm_ptr, pm_sym, phi, bool(r2l), BOS, float(prune), int(beam),
                            int(candidates), float(support_min), marginals, symbols, factory, a,
                            int(expand), int(wide), float(rescale), float(empty_weight), f.g_weight,
                            f.g_factor, f.g_apply, None if classes is None else classes.rank,
                            None if classes is None else classes.cls, 0 if classes is None else classes.empty))
    return out


def marginal_choices(prior_sets: Sequence[Sequence[object]], grammar, phi: np.ndarray, r2l: bool, *,
                     prune: float, beam: int, candidates: int, support_min: float, expand: int = 0,
                     wide: int = 0, rescale: float = 0.0, symbols: Optional[Sequence[str]] = None,
                     factory: Optional[Callable[[tuple, float], object]] = None,
                     empty_weight: float = 1.0, weights: Optional[Sequence[Sequence[float]]] = None,
                     class_factors: Optional[Sequence[Optional[np.ndarray]]] = None,
                     string_classes: Optional[StringClasses] = None) -> List[list]:
    """Per sentence, per slot ``x_0..x_n``: the MBR string under the slot's exact marginal (the
    uniform mixture of the sentence's trees) and its probability, as ``factory(surface, prob)``
    (default: the tuple).  ``surface``: symbol ids, or ``symbols[id]`` with ``symbols``; slot 0's
    ``^`` is stripped.  ``empty_weight``: the empty string's weight in the risk (the module
    docstring of ``cython_ext/slot_mbr.pyx``).  Equal to the reference's (testing/exact_mbr.py)
    for the same settings.
    ``weights`` (per sentence, one number >= 0 per tree, normalised here; E099 otherwise): the
    mixture ``Σ_j w_j p(x_i | T_j)`` instead of the uniform one (trees of weight 0 are not read).
    ``class_factors`` (per sentence None or ``(n + 1, C)``: row ``i`` for slot ``i``) with
    ``string_classes``: a product of experts, each slot's marginal times its row at each string's
    class, scaled back to the marginal's mass and ranked again before the MBR (the module docstring
    of ``cython_ext/slot_mbr.pyx``, "Class factors"; a constant row changes nothing)."""
    return _run(prior_sets, grammar, phi, r2l, prune, beam, candidates, support_min, expand, wide, rescale,
                False, symbols, factory, empty_weight, weights, class_factors, string_classes)


def marginal_distributions(prior_sets: Sequence[Sequence[object]], grammar, phi: np.ndarray, r2l: bool, *,
                           prune: float, beam: int, expand: int = 0, wide: int = 0, rescale: float = 0.0,
                           symbols: Optional[Sequence[str]] = None,
                           weights: Optional[Sequence[Sequence[float]]] = None) -> List[List[Dict[tuple, float]]]:
    """Per sentence, per slot: the (mixture) slot marginal ``{surface: p}`` the choices are made
    from, ranked (most probable first, ties by string): the reference's ``mixture_marginal``, pruned alike.
    ``weights``: the trees' weights in the mixture, as :func:`marginal_choices` reads them."""
    return _run(prior_sets, grammar, phi, r2l, prune, beam, 1, 0.0, expand, wide, rescale, True, symbols, None,
                weights=weights)


def marginal_slot_choices(model, prior_sets: Sequence[Sequence[object]], channel, empty_weight: float = 1.0,
                          weights: Optional[Sequence[Sequence[float]]] = None,
                          prune: Optional[float] = None,
                          class_factors: Optional[Sequence[Optional[np.ndarray]]] = None,
                          string_classes: Optional[StringClasses] = None) -> List[List[SlotChoice]]:
    """The ``"marginal"`` decoder with this module's settings: per sentence, per slot, the
    :class:`SlotChoice` of least expected edit distance under the (mixture) slot marginal of the
    sentence's trees ``prior_sets[k]`` (:func:`.priors.mixture_priors`; ``channel``: its
    :class:`.priors.Channel`).  ``weights``: per sentence, its trees' weights in the mixture
    (:func:`marginal_choices`; None: equal); ``prune``: None for ``RESTORE_PRUNE``;
    ``class_factors``, ``string_classes``: :func:`marginal_choices`' product of experts."""
    return marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l,
                            prune=RESTORE_PRUNE if prune is None else prune, beam=EXACT_BEAM,
                            candidates=EXACT_CANDIDATES, support_min=EXACT_SUPPORT_MIN, expand=EXACT_EXPAND,
                            wide=EXACT_WIDE, rescale=EXACT_RESCALE, symbols=model.inventory.symbols,
                            factory=SlotChoice, empty_weight=empty_weight, weights=weights,
                            class_factors=class_factors, string_classes=string_classes)


def marginal_slot_distributions(model, prior_sets: Sequence[Sequence[object]], channel,
                                prune: Optional[float] = None,
                                weights: Optional[Sequence[Sequence[float]]] = None) -> List[List[Dict[tuple, float]]]:
    """Per sentence, per slot: the (mixture) slot marginal ``{surface names: p}`` with this
    module's settings (``prune``: None for ``EXACT_PRUNE``; ``weights``: per sentence, its trees'
    weights, None: equal), most probable first."""
    return marginal_distributions(prior_sets, model.grammar, channel.phi, channel.r2l,
                                  prune=EXACT_PRUNE if prune is None else prune, beam=EXACT_BEAM,
                                  expand=EXACT_EXPAND, wide=EXACT_WIDE, rescale=EXACT_RESCALE,
                                  symbols=model.inventory.symbols, weights=weights)
