"""The training objective and its exact gradient wrt θ and ψ (docs/model.md §4).

For a batch ``B`` of (x, T)::

    Σ_{(x,T)∈B} [ log p(x|T) − ξ · E_{T'~p(·|T,x)}[c(T')]² ] − ς · (‖θ‖² + ‖ψ‖²)

with exact gradients: the log-likelihood part from posterior marginals ``μ``
and expected edit counts; the ξ part from the DP's tilted derivatives
(``dmu``, ``dcounts`` = covariances with ``c(T')``).  Sentences with
``p(x|T) = 0`` contribute nothing to the objective and are counted.

One implementation: ATTACH's compiled forward and backprop
(:meth:`~.attach.AttachScorer.begin_update`), one scatter of the posteriors per batch and one
channel gradient per batch (it is linear in the counts).  Its NumPy formulation, the reference
the tests hold it to, is :mod:`spacy_punctgen.testing.numpy_objective`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.dp import check_phi, inside_outside
from spacy_punctgen.model.channel import channel_grad


@dataclass
class ObjectiveResult:
    objective: float  # the regularised objective of the batch
    loglik: float  # Σ log p(x|T) over possible sentences
    expected_unmatched: float  # Σ E[c(T')]
    grad_psi: Optional[np.ndarray]  # float64 (S,S,4) or None in ATTACH mode
    n_sentences: int
    n_impossible: int
    n_slots: int
    grad_theta: Optional[np.ndarray]  # float64 (F,); None when asked for a sparse gradient
    theta_idx: Optional[np.ndarray] = None  # sparse=True: distinct feature ids ...
    theta_val: Optional[np.ndarray] = None  # ... and values of ∂/∂θ WITHOUT the L2 term


def check_trainable(batch: Sequence) -> None:
    """Refuse evaluation-time (smoothed) sentences: their extra pairs have no features."""
    if any(p.smoothed for p in batch):
        raise ValueError(Errors.E203)


def l2_penalty(model, obj: float, l2: float, gtheta: Optional[np.ndarray], gpsi: Optional[np.ndarray],
               theta_sq: Optional[float] = None) -> float:
    """``obj − ς(‖θ‖² + ‖ψ‖²)``; adds the term's gradient to ``gtheta`` (when dense) and
    ``gpsi`` (full mode) in place.  With a sparse gradient the value is only reported:
    ``theta_sq`` (‖θ‖² as the trainer keeps it) or a float32 dot product."""
    if not l2:
        return obj
    if gtheta is not None:
        th = model.theta.astype(np.float64)
        obj -= l2 * float(th @ th)
        gtheta -= 2.0 * l2 * th
    elif theta_sq is not None:  # trainer path: the value is only reported
        obj -= l2 * float(theta_sq)
    else:
        obj -= l2 * float(np.dot(model.theta, model.theta))
    if gpsi is not None:
        ps64 = model.psi.astype(np.float64)
        obj -= l2 * float((ps64 * ps64).sum())
        gpsi -= 2.0 * l2 * ps64
    return obj


def objective_and_gradient(model, batch: Sequence, l2: float = 0.0, xi: Optional[float] = None,
                           sparse: bool = False, theta_sq: Optional[float] = None) -> ObjectiveResult:
    """See :meth:`.punct_model.PunctModel.objective_and_gradient`."""
    xi = model.xi if xi is None else float(xi)
    check_trainable(batch)
    fwd, backprop, pos, node_start = model.begin_update(batch)
    p = np.exp(fwd.logp)
    phi = model.shared_phi()
    full = model.mode == "full"
    counts_sum = np.zeros(phi.shape, dtype=np.float64) if full else None
    loglik = e_unm = obj = 0.0
    n_imp = n_slots = 0
    idx_parts, val_parts = [], []
    keep = np.zeros(len(fwd.logp), dtype=bool)
    phi = check_phi(model.grammar, phi)
    for b, (prep, ps) in enumerate(zip(batch, pos)):
        use_tilt = xi > 0 and bool(prep.tilt.any())
        # untilted counts go straight into the batch's sum
        res = inside_outside(prep.lattice, model.grammar, p[ps], phi, model.r2l, grad=True,
                             tilt=prep.tilt if use_tilt else None, phi_checked=True,
                             counts_out=counts_sum if full and not use_tilt else None)
        if not np.isfinite(res.logZ):
            n_imp += 1
            continue
        n_slots += prep.n_slots
        loglik += res.logZ
        obj += res.logZ
        keep[fwd.node_off[node_start[b]]:fwd.node_off[node_start[b + 1]]] = True
        idx_parts.append(ps)
        if use_tilt:
            ec = float(res.mu @ prep.tilt)
            e_unm += ec
            obj -= xi * ec * ec
            val_parts.append(res.mu - 2.0 * xi * ec * res.dmu)
            if full:
                counts_sum += res.counts - 2.0 * xi * ec * res.dcounts
        else:
            val_parts.append(res.mu)
    G = np.where(keep, -p, 0.0)
    if idx_parts:
        G += np.bincount(np.concatenate(idx_parts), weights=np.concatenate(val_parts),
                         minlength=len(G))
    gpsi = channel_grad(phi, counts_sum) if full else None
    t_idx, t_val = backprop(G)
    gtheta = None
    if not sparse:
        gtheta = np.zeros(model.n_features, dtype=np.float64)
        gtheta[t_idx] = t_val
        t_idx = t_val = None
    obj = l2_penalty(model, obj, l2, gtheta, gpsi, theta_sq)
    return ObjectiveResult(obj, loglik, e_unm, gpsi, len(batch), n_imp, n_slots, gtheta, t_idx, t_val)
