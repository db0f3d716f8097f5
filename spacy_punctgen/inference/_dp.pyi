"""Typed stub of ``spacy_punctgen.inference._dp``, compiled from ``cython_ext/dp.pyx`` (its C types
and the explanation of the DP are in ``cython_ext/dp.pxd``).

Callers go through :mod:`spacy_punctgen.inference.dp`, which checks the inputs (shapes,
probabilities, a grammar that covers the lattice) and wraps the results; the functions here
trust them and only check what would otherwise crash.
"""
from typing import Literal, Optional, Tuple

import numpy as np
import numpy.typing as npt

from spacy_punctgen.inference.dp import Grammar, Lattice

_F64 = npt.NDArray[np.float64]
_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]

def run_dp(
    lat: Lattice,
    grammar: Grammar,
    cand_p: npt.ArrayLike,
    phi: _F64,
    r2l: bool,
    mode: Literal["sum", "max"],
    outside: bool = True,
    counts: bool = True,
    tilt: Optional[npt.ArrayLike] = None,
    tilt_step: float = 1e-30,
    counts_out: Optional[_F64] = None,
) -> Tuple[float, _F64, _F64, Optional[_F64], Optional[_F64]]:
    """One lattice under the sum-product (``"sum"``) or max-product (``"max"``) semiring.

    ``cand_p``: float64 ``[K]``, the candidates' weights; ``phi``: float64 ``[S, S, 4]``,
    C-contiguous.  Returns ``(logZ, mu, counts, dmu, dcounts)``: ``log p(x|T)`` (or the best
    derivation's log-probability), the (max-)marginal of every candidate (``[K]``; zeros
    without ``outside`` or when ``logZ`` is ``-inf``), the expected edit counts
    (``[S, S, 4]``; sum mode with ``counts``; added to ``counts_out`` when given, which is
    then returned), and with ``tilt`` (sum mode, ``outside``) the derivatives at λ = 0 of
    marginals (``[K]``) and counts (``[S, S, 4]``) when each weight is multiplied by
    ``exp(λ·tilt)``, by the complex step ``tilt_step``; else ``None``.
    """

def sample_dp(
    lat: Lattice,
    grammar: Grammar,
    cand_p: npt.ArrayLike,
    phi: _F64,
    r2l: bool,
    uniforms: _F64,
) -> Tuple[float, _I64]:
    """Exact draws of ``T' ~ p(T' | T, x)``, one per row of ``uniforms`` (float64
    ``[n_samples, n]``, C-contiguous, values in [0, 1)).  Returns ``(logZ, choices)``: the
    lattice-candidate index of every node in every sample (int64 ``[n_samples, n]``; all -1
    when ``logZ`` is ``-inf``)."""

def candidate_fields(
    n: int, n_pm: int, cand_l: _I64, cand_r: _I64, node: _I64
) -> Tuple[_I32, _I32, _I32, _I32, _I32, _I32, _I32]:
    """``(cand_ptr, cand_li, cand_ri, ul_ptr, ul, ur_ptr, ur)`` of a lattice from its candidates'
    left and right puncteme ids and nodes (int64, C-contiguous; ``node`` non-decreasing)."""

class _Workspace:
    """Internal: the per-call view of a lattice's arrays."""

def compile_lattice(
    children: list, roots: list, order: list, first: list, last: list, slot_syms: list,
    n_symbols: int, n_pm: int, rel_ids: _I64, tab_ptr: _I64, tab_pairs: _I64
) -> Optional[dict]:
    """Every array of a :class:`Lattice` in one pass (``dp.build_lattice_tables``): the tree
    fields from ``tree_structure``'s lists, node ``w``'s candidates rows
    ``tab_ptr[r]:tab_ptr[r+1]`` of ``tab_pairs`` (``r = rel_ids[w]``) less those with a non-empty
    half on an empty slot.  None when a symbol or puncteme id is out of range."""

def restrict_candidates(
    n: int, n_pm: int, cand_l: _I32, cand_r: _I32, cand_node: _I32, cand_row: _I32, keep: npt.NDArray[np.uint8]
) -> dict:
    """The candidate fields of the lattice with only the candidates where ``keep`` is non-zero."""

def node_argmax(mu: _F64, cand_ptr: _I32) -> _I64:
    """Per node, its first candidate of greatest ``mu`` (``np.argmax`` per node); -1 if it has none."""

def surface_producible(lat: Lattice, grammar: Grammar, p: _F64) -> bool:
    """Whether every slot's surface marks could come from the punctemes its candidates of positive
    weight ``p`` put there (as many symbols at most as their longest punctemes together, each one
    of their symbols): a necessary condition of ``p(x|T) > 0``."""

def viterbi_bounded(
    lat: Lattice, grammar: Grammar, p: _F64, phi: _F64, r2l: bool, n_pm: int, share: float, margin: float
) -> Tuple[float, _I64, int]:
    """``dp.viterbi_bounded`` after its checks: ``(log-probability, best candidate per node,
    restricted passes run)``."""
