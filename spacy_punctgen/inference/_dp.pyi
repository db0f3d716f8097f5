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
