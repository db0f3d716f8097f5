"""The NumPy formulation of the training objective (:mod:`spacy_punctgen.model.objective`),
the reference the tests hold the library's compiled path to (equal up to float64 rounding).

It scores with :meth:`~spacy_punctgen.model.attach.AttachScorer.predict`, scatters each
sentence's posteriors with ``np.add.at``, takes one channel gradient per sentence and the
gradient wrt θ with :func:`.numpy_attach.backward` / :func:`.numpy_attach.backward_sparse`.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from spacy_punctgen.inference.dp import inside_outside
from spacy_punctgen.model.channel import channel_grad
from spacy_punctgen.model.objective import ObjectiveResult, check_trainable, l2_penalty
from spacy_punctgen.testing import numpy_attach


def objective_and_gradient(model, batch: Sequence, l2: float = 0.0, xi: Optional[float] = None,
                           sparse: bool = False) -> ObjectiveResult:
    """What :meth:`~spacy_punctgen.model.punct_model.PunctModel.objective_and_gradient`
    computes; with ``sparse`` the feature ids may repeat (add them up)."""
    xi = model.xi if xi is None else float(xi)
    check_trainable(batch)
    fwd, pos, node_start = model.forward(batch, reference=True)
    p = np.exp(fwd.logp)
    G = np.zeros_like(p)
    phi = model.shared_phi()
    full = model.mode == "full"
    gpsi = np.zeros(phi.shape, dtype=np.float64) if full else None
    terms = []  # per possible sentence: (log p(x|T), E[c(T')], slots)
    for b, (prep, ps) in enumerate(zip(batch, pos)):
        use_tilt = xi > 0 and bool(prep.tilt.any())
        res = inside_outside(prep.lattice, model.grammar, p[ps], phi, model.r2l, grad=True,
                             tilt=prep.tilt if use_tilt else None)
        if not np.isfinite(res.logZ):
            continue
        a, z = fwd.node_off[node_start[b]], fwd.node_off[node_start[b + 1]]
        G[a:z] -= p[a:z]
        np.add.at(G, ps, res.mu)
        counts = res.counts
        ec = float(res.mu @ prep.tilt) if use_tilt else 0.0
        if use_tilt:
            np.add.at(G, ps, -2.0 * xi * ec * res.dmu)
            if full:
                counts = counts - 2.0 * xi * ec * res.dcounts
        if full:
            gpsi += channel_grad(phi, counts)
        terms.append((res.logZ, ec, prep.n_slots))
    loglik = float(sum(t[0] for t in terms))
    e_unm = float(sum(t[1] for t in terms))
    obj = loglik - xi * sum(t[1] * t[1] for t in terms)
    t_idx = t_val = gtheta = None
    if sparse:
        t_idx, t_val = numpy_attach.backward_sparse(model.scorer, fwd, G)
    else:
        gtheta = numpy_attach.backward(model.scorer, fwd, G)
    obj = l2_penalty(model, obj, l2, gtheta, gpsi)
    return ObjectiveResult(obj, loglik, e_unm, gpsi, len(batch), len(batch) - len(terms),
                           sum(t[2] for t in terms), gtheta, t_idx, t_val)
