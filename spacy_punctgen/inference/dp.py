"""Python face of the exact DP (``_dp``, compiled from ``cython_ext/dp.pyx``).

:class:`Grammar` holds the model-independent puncteme table; :func:`build_lattice`
turns one tree with its surface punctuation and candidate ``(l, r)`` pairs into the
flat integer arrays the Cython core walks.  A lattice depends only on the data,
never on parameters, so training builds it once per sentence and reuses it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.inference import _dp
from spacy_punctgen.data.trees import forest, tree_structure  # noqa: F401  (tree_structure: part of this API)
from spacy_punctgen.errors import Errors

KEEP, ABSORB_LEFT, ABSORB_RIGHT, TRANSPOSE = 0, 1, 2, 3
EDIT_NAMES = ("keep", "absorb_left", "absorb_right", "transpose")
BOS = 0  # symbol id of '^'


class Grammar:
    """Puncteme table: puncteme id -> sequence of symbol ids (id 0 is ε)."""

    def __init__(self, n_symbols: int, punctemes: Sequence[Sequence[int]]):
        self.n_symbols = int(n_symbols)
        self.punctemes = [tuple(int(s) for s in p) for p in punctemes]
        if not self.punctemes or self.punctemes[0] != ():
            raise ValueError(Errors.E110)
        for i, p in enumerate(self.punctemes):
            for s in p:
                if not 0 <= s < self.n_symbols:
                    raise ValueError(Errors.E111.format(i=i, p=p, s=s, last=self.n_symbols - 1))
        lens = np.array([len(p) for p in self.punctemes], dtype=np.int32)
        self.pm_ptr = np.zeros(len(lens) + 1, dtype=np.int32)
        np.cumsum(lens, out=self.pm_ptr[1:])
        flat = [s for p in self.punctemes for s in p]
        self.pm_sym = np.array(flat or [0], dtype=np.int32)
        # the puncteme without its first (last) symbol, -1 if that is no puncteme: the DP builds
        # a puncteme's channel rows from its tail's (head's) with one more symbol
        ids = {p: i for i, p in enumerate(self.punctemes)}
        self.pm_tail = np.array([ids.get(p[1:], -1) if p else -1 for p in self.punctemes], dtype=np.int32)
        self.pm_head = np.array([ids.get(p[:-1], -1) if p else -1 for p in self.punctemes], dtype=np.int32)


@dataclass
class Lattice:
    """One sentence, compiled for the DP. Candidate k belongs to node ``cand_node[k]``
    and is row ``cand_row[k]`` of that node's candidate array given to :func:`build_lattice`."""

    n: int
    first: np.ndarray
    last: np.ndarray
    kid_ptr: np.ndarray
    kids: np.ndarray
    nleft: np.ndarray
    order: np.ndarray
    roots: np.ndarray
    x_ptr: np.ndarray
    x_sym: np.ndarray
    x_ptr_r: np.ndarray
    x_sym_r: np.ndarray
    cand_ptr: np.ndarray
    cand_li: np.ndarray
    cand_ri: np.ndarray
    cand_l: np.ndarray
    cand_r: np.ndarray
    cand_node: np.ndarray
    cand_row: np.ndarray
    ul_ptr: np.ndarray
    ul: np.ndarray
    ur_ptr: np.ndarray
    ur: np.ndarray
    # the largest symbol / puncteme id the lattice uses: a grammar given to the DP must cover
    # them (the Cython core does not bounds-check)
    max_symbol: int = 0
    max_puncteme: int = 0
    # uint8 per slot: 1 where the surface is not observed (restoration conditioned on the marks a
    # text has, decode/evidence.py): any half may land there and the slot weighs 1 whatever
    # crosses it; None: every slot observed (analysis, training)
    free: Optional[np.ndarray] = None

    @property
    def n_candidates(self) -> int:
        return int(self.cand_l.shape[0])

    def node_candidates(self, w: int) -> slice:
        return slice(int(self.cand_ptr[w]), int(self.cand_ptr[w + 1]))


def build_lattice(grammar: Grammar, heads: Sequence[int], slot_syms: Sequence[Sequence[int]],
                  node_cands: Sequence[np.ndarray]) -> Lattice:
    """One sentence's lattice: the tree ``heads`` (0-based, -1 for a root), the surface symbols
    of its ``n + 1`` slots (slot 0 starts with ``^``), and node ``w``'s candidate ``(l, r)``
    pairs ``node_cands[w]`` (those with a non-empty half on an empty slot are left out)."""
    if len(heads) and len(node_cands) == len(heads) and len(slot_syms) == len(heads) + 1:
        arrs = [np.asarray(c, dtype=np.int64).reshape(-1, 2) for c in node_cands]
        ptr = np.zeros(len(arrs) + 1, dtype=np.int64)
        np.cumsum([a.shape[0] for a in arrs], out=ptr[1:])
        pairs = np.concatenate(arrs) if ptr[-1] else np.zeros((0, 2), dtype=np.int64)
        return build_lattice_tables(grammar, heads, slot_syms, np.arange(len(heads), dtype=np.int64), ptr, pairs)
    return _build_lattice_checked(grammar, heads, slot_syms, node_cands)


def build_lattice_tables(grammar: Grammar, heads: Sequence[int], slot_syms: Sequence[Sequence[int]],
                         rel_ids: np.ndarray, tab_ptr: np.ndarray, tab_pairs: np.ndarray,
                         structure: Optional[tuple] = None, free: Optional[Sequence[bool]] = None) -> Lattice:
    """:func:`build_lattice` with node ``w``'s candidates given as rows
    ``tab_ptr[r]:tab_ptr[r + 1]`` of ``tab_pairs`` (int64 ``[T, 2]``), ``r = rel_ids[w]``: the
    form :meth:`PunctModel.prepare` has them in (one table per relation), compiled in one pass
    (``_dp.compile_lattice``; it runs for every sentence analysed).  ``structure``: the
    :func:`tree_structure` of ``heads`` when the caller has it.  ``free`` (one bool per slot, or
    None): the slots whose surface is not observed (:attr:`Lattice.free`; their ``slot_syms`` are
    not read, but slot 0's must still start with ``^``).  Equal, array for array, to
    :func:`build_lattice` of the per-node arrays; bad input takes that function's checked path,
    which raises the same errors."""
    n = len(heads)
    if free is not None:
        free = np.asarray(free, dtype=bool).astype(np.uint8)
        if free.shape != (n + 1,):
            raise ValueError(Errors.E190.format(n=n + 1, got=free.size))
        if not free.any():
            free = None
    ok = n and len(slot_syms) == n + 1 and len(slot_syms[0]) and int(slot_syms[0][0]) == BOS \
        and len(rel_ids) == n
    if ok and structure is None:
        try:
            structure = tree_structure(heads)
        except ValueError:
            ok = False
    if ok:
        children, roots, order, first, last = structure
        fields = _dp.compile_lattice(children, roots, order, first, last,
                                     [s if type(s) is list or type(s) is tuple else [int(v) for v in s]
                                      for s in slot_syms],
                                     grammar.n_symbols, len(grammar.punctemes),
                                     np.ascontiguousarray(rel_ids, dtype=np.int64),
                                     np.ascontiguousarray(tab_ptr, dtype=np.int64),
                                     np.ascontiguousarray(tab_pairs, dtype=np.int64).reshape(-1, 2), free)
        if fields is not None:
            return Lattice(n=n, **fields)
    rel_ids = np.asarray(rel_ids, dtype=np.int64)
    return _build_lattice_checked(grammar, heads, slot_syms,
                                  [tab_pairs[tab_ptr[r]:tab_ptr[r + 1]] for r in rel_ids.tolist()], free)


def _build_lattice_checked(grammar: Grammar, heads: Sequence[int], slot_syms: Sequence[Sequence[int]],
                           node_cands: Sequence[np.ndarray], free: Optional[np.ndarray] = None) -> Lattice:
    """:func:`build_lattice` in Python, checking every input (the path of bad input: it names
    the fault; on good input its arrays equal ``_dp.compile_lattice``'s)."""
    n = len(heads)
    if n == 0:
        raise ValueError(Errors.E112)
    if len(slot_syms) != n + 1:
        raise ValueError(Errors.E113.format(n_slots=n + 1, n=n, got=len(slot_syms)))
    if len(slot_syms[0]) == 0 or int(slot_syms[0][0]) != BOS:
        raise ValueError(Errors.E114)
    if len(node_cands) != n:
        raise ValueError(Errors.E115.format(n=n, got=len(node_cands)))
    S = grammar.n_symbols
    lens = [len(x) for x in slot_syms]
    flat = [int(s) for x in slot_syms for s in x]
    if flat and (min(flat) < 0 or max(flat) >= S):
        i = next(i for i, x in enumerate(slot_syms) if any(not 0 <= int(s) < S for s in x))
        s = next(int(s) for s in slot_syms[i] if not 0 <= int(s) < S)
        raise ValueError(Errors.E116.format(i=i, s=s, last=S - 1))
    children, roots, order, first, last = tree_structure(heads)
    kid_ptr = [0]
    kids: List[int] = []
    nleft = []
    for w in range(n):
        ks = sorted(children[w])
        kids.extend(ks)
        kid_ptr.append(len(kids))
        nleft.append(sum(1 for c in ks if c < w))
    x_ptr = np.zeros(n + 2, dtype=np.int32)
    np.cumsum(lens, out=x_ptr[1:])
    x_sym = np.array(flat or [0], dtype=np.int32)
    x_sym_r = np.array([int(s) for x in slot_syms for s in reversed(list(x))] or [0], dtype=np.int32)
    # candidates of all nodes at once (one vectorised pass: this runs for every sentence analysed)
    n_pm = len(grammar.punctemes)
    arrs = [np.asarray(c, dtype=np.int64).reshape(-1, 2) for c in node_cands]
    counts = np.array([a.shape[0] for a in arrs], dtype=np.int64)
    allc = np.concatenate(arrs) if counts.sum() else np.zeros((0, 2), dtype=np.int64)
    node = np.repeat(np.arange(n, dtype=np.int64), counts)
    rows = np.arange(allc.shape[0], dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    bad = ((allc < 0) | (allc >= n_pm)).any(axis=1)
    if bad.any():
        raise ValueError(Errors.E117.format(node=int(node[np.argmax(bad)]), last=n_pm - 1))
    lens_a = np.asarray(lens, dtype=np.int64)
    first_a, last_a = np.asarray(first, dtype=np.int64), np.asarray(last, dtype=np.int64)
    # a non-empty half must land on a non-empty surface slot (the channel never inserts)
    # (or on a free slot)
    empty = (lens_a == 0) if free is None else (lens_a == 0) & (free == 0)
    ok = ~(empty[first_a][node] & (allc[:, 0] != 0)) & ~(empty[last_a + 1][node] & (allc[:, 1] != 0))
    allc, node, rows = allc[ok], node[ok], rows[ok]

    def i32(v):
        return np.array(v if len(v) else [0], dtype=np.int32)

    return Lattice(
        n=n,
        first=np.array(first, dtype=np.int32),
        last=np.array(last, dtype=np.int32),
        kid_ptr=np.array(kid_ptr, dtype=np.int32),
        kids=i32(kids),
        nleft=np.array(nleft, dtype=np.int32),
        order=np.array(order, dtype=np.int32),
        roots=np.array(roots, dtype=np.int32),
        x_ptr=x_ptr,
        x_sym=x_sym,
        x_ptr_r=x_ptr.copy(),
        x_sym_r=x_sym_r,
        max_symbol=max(flat) if flat else 0,
        free=free,
        **_candidate_fields(n, n_pm, allc, node, rows),
    )


def _candidate_fields(n: int, n_pm: int, allc: np.ndarray, node: np.ndarray, rows: np.ndarray) -> dict:
    """The candidate arrays of a :class:`Lattice` from its (kept) candidates in node order: per
    node, the sorted distinct left (right) punctemes and each candidate's index among them
    (computed by the compiled core: this runs for every sentence analysed)."""
    cand_l = np.ascontiguousarray(allc[:, 0], dtype=np.int64)
    cand_r = np.ascontiguousarray(allc[:, 1], dtype=np.int64)
    node = np.ascontiguousarray(node, dtype=np.int64)
    cand_ptr, cand_li, cand_ri, ul_ptr, ul, ur_ptr, ur = _dp.candidate_fields(n, n_pm, cand_l, cand_r, node)
    # int32 per candidate: training keeps the lattices of the whole treebank in memory
    return dict(cand_ptr=cand_ptr, cand_li=cand_li, cand_ri=cand_ri, cand_l=cand_l.astype(np.int32),
                cand_r=cand_r.astype(np.int32), cand_node=node.astype(np.int32),
                cand_row=np.asarray(rows).astype(np.int32), ul_ptr=ul_ptr, ul=ul, ur_ptr=ur_ptr, ur=ur,
                max_puncteme=int(allc.max()) if allc.size else 0)


def restrict_lattice(lat: Lattice, keep: np.ndarray, n_punctemes: int) -> Lattice:
    """The lattice with only the candidates where ``keep`` (bool per candidate) holds: equal,
    array for array, to :func:`build_lattice` given only those candidates (their rows keep
    their numbers).  Analysis uses it to get the unsmoothed lattice from the smoothed one
    without compiling the sentence twice."""
    keep = np.asarray(keep, dtype=bool)
    if keep.shape != (lat.n_candidates,):
        raise ValueError(Errors.E118.format(name="keep", n=lat.n_candidates, shape=keep.shape))
    i32 = [np.ascontiguousarray(a, dtype=np.int32) for a in (lat.cand_l, lat.cand_r, lat.cand_node, lat.cand_row)]
    return Lattice(n=lat.n, first=lat.first, last=lat.last, kid_ptr=lat.kid_ptr, kids=lat.kids, nleft=lat.nleft,
                   order=lat.order, roots=lat.roots, x_ptr=lat.x_ptr, x_sym=lat.x_sym, x_ptr_r=lat.x_ptr_r,
                   x_sym_r=lat.x_sym_r, max_symbol=lat.max_symbol, free=lat.free,
                   **_dp.restrict_candidates(lat.n, int(n_punctemes), *i32, np.ascontiguousarray(keep).view(np.uint8)))


@dataclass
class DPResult:
    logZ: float
    mu: np.ndarray
    counts: np.ndarray
    dmu: Optional[np.ndarray] = None
    dcounts: Optional[np.ndarray] = None


def _check_p(lat: Lattice, cand_p) -> np.ndarray:
    p = np.ascontiguousarray(cand_p, dtype=np.float64)
    if p.shape != (lat.n_candidates,):
        raise ValueError(Errors.E118.format(name="cand_p", n=lat.n_candidates, shape=p.shape))
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(Errors.E119)
    return p


def _check_grammar(lat: Lattice, grammar: Grammar) -> None:
    if lat.max_symbol >= grammar.n_symbols or lat.max_puncteme >= len(grammar.punctemes):
        raise ValueError(Errors.E120.format(sym=lat.max_symbol, pm=lat.max_puncteme, n_sym=grammar.n_symbols, n_pm=len(grammar.punctemes)))


def check_phi(grammar: Grammar, phi) -> np.ndarray:
    """``phi`` as float64, C-contiguous, ``[S, S, 4]`` (E121), finite and >= 0 (E122): what every
    pass needs, checked once per batch by callers that pass ``phi_checked``."""
    phi = np.ascontiguousarray(phi, dtype=np.float64)
    S = grammar.n_symbols
    if phi.shape != (S, S, 4):
        raise ValueError(Errors.E121.format(S=S, shape=phi.shape))
    if not np.isfinite(phi).all() or (phi < 0).any():  # else NaN or a wrong log p(x|T), silently
        raise ValueError(Errors.E122)
    return phi


def inside_outside(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool, grad: bool = True,
                   tilt=None, counts_out: Optional[np.ndarray] = None,
                   phi_checked: bool = False) -> DPResult:
    """log p(x|T), posterior marginals per candidate and expected edit counts.

    ``tilt`` (float per candidate): also return d/dλ at λ=0 of the marginals and
    counts when each candidate's weight is multiplied by exp(λ·tilt).
    ``counts_out`` (float64 ``[S, S, 4]``): the counts are added to it (and it is the
    result's ``counts``).  ``phi_checked``: ``phi`` already passed :func:`check_phi`
    (a trainer checks it once per batch, not once per sentence).
    """
    p = _check_p(lat, cand_p)
    _check_grammar(lat, grammar)
    if not phi_checked:
        phi = check_phi(grammar, phi)
    if lat.n_candidates == 0:
        S = grammar.n_symbols
        return DPResult(-np.inf, np.zeros(0), np.zeros((S, S, 4)) if counts_out is None else counts_out)
    logZ, mu, counts, dmu, dcounts = _dp.run_dp(lat, grammar, p, phi, bool(r2l), "sum",
                                                grad, grad, tilt if grad else None,
                                                counts_out=counts_out)
    if counts_out is not None:
        counts = counts_out
    return DPResult(float(logZ), mu, counts, dmu, dcounts)


def log_prob(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool, phi_checked: bool = False) -> float:
    """log p(x|T) only (inside pass).  ``phi_checked``: as for :func:`inside_outside`."""
    p = _check_p(lat, cand_p)
    _check_grammar(lat, grammar)
    if lat.n_candidates == 0:
        return -np.inf
    if not phi_checked:
        phi = check_phi(grammar, phi)
    return float(_dp.run_dp(lat, grammar, p, phi, bool(r2l), "sum", False, False)[0])


def posterior_marginals(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool) -> Tuple[float, np.ndarray]:
    """log p(x_O | T), the probability of the observed slots' surfaces (the others free:
    :attr:`Lattice.free`), and every candidate's posterior marginal given them, without the edit
    counts: what restoration conditioned on a text's own marks needs."""
    p = _check_p(lat, cand_p)
    _check_grammar(lat, grammar)
    if lat.n_candidates == 0:
        return -np.inf, np.zeros(0)
    phi = check_phi(grammar, phi)
    logZ, mu, _, _, _ = _dp.run_dp(lat, grammar, p, phi, bool(r2l), "sum", True, False)
    return float(logZ), mu


def viterbi(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool,
            phi_checked: bool = False) -> Tuple[float, np.ndarray]:
    """Best joint derivation (underlying tree and channel path): its log-probability and
    the chosen lattice candidate per node (-1 everywhere if x is impossible).
    ``phi_checked``: as for :func:`inside_outside`."""
    p = _check_p(lat, cand_p)
    _check_grammar(lat, grammar)
    if lat.n_candidates == 0:
        return -np.inf, np.full(lat.n, -1, dtype=np.int64)
    if not phi_checked:
        phi = check_phi(grammar, phi)
    return _viterbi_checked(lat, grammar, p, phi, r2l)


def _viterbi_checked(lat: Lattice, grammar: Grammar, p: np.ndarray, phi: np.ndarray, r2l: bool
                     ) -> Tuple[float, np.ndarray]:
    """:func:`viterbi` of checked input (a lattice with candidates): each node's first
    candidate of greatest max-marginal (``_dp.node_argmax``)."""
    logmax, mu, _, _, _ = _dp.run_dp(lat, grammar, p, phi, bool(r2l), "max", True, False)
    if logmax == -np.inf:
        return -np.inf, np.full(lat.n, -1, dtype=np.int64)
    return float(logmax), _dp.node_argmax(mu, np.ascontiguousarray(lat.cand_ptr, dtype=np.int32))


#: :func:`viterbi_bounded`: the first pass keeps, per node, the candidates at least this share
#: of the node's most probable one (any value gives the same result; this one is fastest on en_ewt)
BOUND_SHARE = 1e-3
#: :func:`viterbi_bounded` prunes a candidate only if its bound is below the best derivation
#: found by this much (log space): far above the rounding of either figure (~1e-12)
BOUND_MARGIN = 1e-6


def viterbi_bounded(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool, n_punctemes: int,
                    phi_checked: bool = False, stats: Optional[dict] = None) -> Tuple[float, np.ndarray]:
    """:func:`viterbi` with the candidates that cannot be in a best derivation removed first;
    the best derivation (the chosen candidate of every node, as indices into ``lat``) is the
    same, and so is its log-probability up to rounding.

    Why it is exact: a derivation's probability is the product of its candidates' ``cand_p``
    and of one channel path per slot, each a product of edit probabilities ``<= 1``.  So no
    derivation through candidate ``c`` of node ``w`` beats ``U(c) = cand_p[c] · Π_{v≠w}
    max cand_p[v]``, while any derivation of a sub-lattice is one of ``lat``, with probability
    ``L <= L*`` (the best).  A first Viterbi pass over the candidates at least ``BOUND_SHARE``
    of their node's best gives such an ``L``; the candidates with ``U(c) < L`` (less a margin
    far above rounding) are in no best derivation, every candidate of every best derivation is
    kept, and Viterbi over the kept ones (the first pass's lattice where it already holds them)
    chooses what it chooses over ``lat``: each node's first candidate of greatest max-marginal,
    the candidates of best derivations in ``lat``'s order.  Where the first pass finds no
    derivation (or a node has no candidate of positive probability) this is plain
    :func:`viterbi`; where the surface cannot come from the candidates at all
    (``_dp.surface_producible``: most of the impossible sentences) no pass is run.  On en_ewt
    dev sentences the kept candidates are about 5 % of the lattice.
    ``n_punctemes``: the grammar's punctemes (for :func:`restrict_lattice`).

    The steps after the input checks run in one compiled call (``_dp.viterbi_bounded``: it runs
    for every sentence analysed); :func:`_viterbi_bounded_py` is the same in NumPy, kept as
    the reference the tests compare it with.  ``stats`` (a dict): ``stats["restricted"]`` is
    increased by the number of restricted passes run (0 to 2)."""
    checked, plain = _bounded_inputs(lat, grammar, cand_p, phi, r2l, phi_checked)
    if plain is not None:
        return plain
    p, ptr, phi = checked
    logbest, best, passes = _dp.viterbi_bounded(lat, grammar, p, phi, bool(r2l), int(n_punctemes),
                                                BOUND_SHARE, BOUND_MARGIN)
    if stats is not None:
        stats["restricted"] = stats.get("restricted", 0) + passes
    return logbest, best


def _bounded_inputs(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool, phi_checked: bool):
    """The bounded Viterbi's checked inputs ``(p, cand_ptr, phi)``, or plain :func:`viterbi`'s
    result where no bound applies (no candidates, or a node without one): ``(inputs, None)`` or
    ``(None, result)``."""
    p = _check_p(lat, cand_p)
    ptr = np.asarray(lat.cand_ptr, dtype=np.int64)
    if lat.n_candidates == 0 or not (ptr[1:] > ptr[:-1]).all():
        return None, viterbi(lat, grammar, p, phi, r2l, phi_checked)
    _check_grammar(lat, grammar)  # the restricted lattices use no more than lat
    if not phi_checked:
        phi = check_phi(grammar, phi)
    if not _dp.surface_producible(lat, grammar, p):  # impossible: what every Viterbi pass would say
        return None, (-np.inf, np.full(lat.n, -1, dtype=np.int64))
    return (p, ptr, phi), None


def _viterbi_bounded_py(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool, n_punctemes: int,
                        phi_checked: bool = False) -> Tuple[float, np.ndarray]:
    """:func:`viterbi_bounded` in NumPy (the code before ``_dp.viterbi_bounded``): the
    reference of ``tests/inference/test_viterbi_bounded.py``."""
    checked, plain = _bounded_inputs(lat, grammar, cand_p, phi, r2l, phi_checked)
    if plain is not None:
        return plain
    p, ptr, phi = checked
    top = np.maximum.reduceat(p, ptr[:-1])
    if not (top > 0).all():  # a node without a possible candidate: p(x|T) = 0
        return _viterbi_checked(lat, grammar, p, phi, r2l)
    node = np.asarray(lat.cand_node, dtype=np.int64)
    first = p >= BOUND_SHARE * top[node]
    if first.all():
        return _viterbi_checked(lat, grammar, p, phi, r2l)
    lat1 = restrict_lattice(lat, first, n_punctemes)
    low, best1 = _viterbi_checked(lat1, grammar, p[first], phi, r2l)
    if not np.isfinite(low):
        return _viterbi_checked(lat, grammar, p, phi, r2l)
    log_top = np.log(top)
    with np.errstate(divide="ignore"):
        bound = np.log(p) + (log_top.sum() - log_top[node])
    keep = bound >= low - BOUND_MARGIN
    if not (keep & ~first).any():  # the first pass held every candidate that can win
        idx, logbest, best = np.flatnonzero(first), low, best1
    elif keep.all():
        return _viterbi_checked(lat, grammar, p, phi, r2l)
    else:
        idx = np.flatnonzero(keep)
        logbest, best = _viterbi_checked(restrict_lattice(lat, keep, n_punctemes), grammar, p[keep], phi, r2l)
    if not np.isfinite(logbest):  # cannot happen (the kept lattice holds a derivation): be plain
        return _viterbi_checked(lat, grammar, p, phi, r2l)
    return logbest, idx[best]


def sample_posterior(lat: Lattice, grammar: Grammar, cand_p, phi, r2l: bool, n_samples: int,
                     seed: int = 0) -> np.ndarray:
    """Exact samples T' ~ p(T' | T, x): int64[n_samples, n] lattice-candidate indices.

    Raises ValueError if x is impossible under the model (there is nothing to sample).
    """
    p = _check_p(lat, cand_p)
    _check_grammar(lat, grammar)
    rng = np.random.default_rng(seed)
    uniforms = rng.random((int(n_samples), lat.n))
    if lat.n_candidates == 0:
        raise ValueError(Errors.E123)
    logZ, choices = _dp.sample_dp(lat, grammar, p, check_phi(grammar, phi), bool(r2l), uniforms)
    if logZ == -np.inf:
        raise ValueError(Errors.E123)
    return choices
