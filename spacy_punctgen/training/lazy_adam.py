"""Lazy (sparse) Adam for θ: each step touches only the features active in the batch.

Why not thinc's ``Adam``: it updates the whole parameter array on every call.  θ
has millions of weights (3.6M for en_ewt) of which a 5-sentence batch uses a few
percent, so a dense update per batch cost several times the DP itself.  thinc has
no sparse-row optimizer, hence this module.

What it computes.  A feature whose data gradient is zero for ``k`` steps would,
under dense Adam *without* L2, see its moments decay (``m·β1^k``, ``v·β2^k``) and
keep drifting with its momentum.  Both are applied, in closed form, the next time
the feature is used (or at :meth:`sync`): the drift is
``Σ_{s=1..k} lr_s · β1^s m / (β2^{s/2} √v + ε)``, summed as a geometric series
with the (bias-corrected) rate of the first skipped step.  Because an inactive
feature does not influence the batches it skips, this deferred update equals
dense Adam up to ``ε`` and the slow drift of Adam's bias correction inside the
skipped window.  The exception is the L2 term, whose gradient ``2ς'θ`` is dense:
it is applied *delayed* -- a feature used after ``k`` steps gets ``k·2ς'θ`` once
(θ was constant in between, so this is exactly the sum of the skipped L2
gradients, taken in one step instead of ``k``).

Parameter averaging follows thinc (``ema ← ema − (1 − d_t)(ema − θ)`` with
``d_t = min(0.9999, (1 + t)/(10 + t))``); over a skipped window θ is constant
except for the momentum drift, so the window's decays are applied at once
(prefix sums of ``log d_t``) toward the caught-up θ.

Parameters, moments and averages are float32 like thinc's; step arithmetic is
float64 and then stored.  Everything is deterministic.  The step runs in the compiled
``kernels.adam_step`` (the same float32 operations in the same order as the NumPy
formulation kept as the reference in :mod:`spacy_punctgen.testing.numpy_adam`:
bit-identical results).
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from spacy_punctgen.inference import kernels
from spacy_punctgen.errors import Errors


class LazyAdam:
    """Adam over one float32 vector with sparse steps; see the module docstring."""

    def __init__(self, size: int, lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                 average: bool = False):
        self.lr, self.b1, self.b2, self.eps = float(lr), float(b1), float(b2), float(eps)
        self.t = 0
        # per feature: first moment, second moment (and moving average), interleaved so that a
        # step gathers and scatters one row per feature
        self.state = np.zeros((size, 3 if average else 2), dtype=np.float32)
        self.average = average
        # step up to which each feature is current (int32: 2^31 steps is far beyond any run)
        self.last = np.zeros(size, dtype=np.int32)
        self._slot_arr: Optional[np.ndarray] = None  # scratch for de-duplicating ids (on demand)
        self.grow_tables(1024)

    def grow_tables(self, n: int) -> None:
        """Per-step constants for steps/gaps 0..n-1 (lookups are much cheaper than array powers)."""
        k = np.arange(n, dtype=np.float64)
        r = self.b1 / math.sqrt(self.b2)
        pow1 = self.b1 ** k  # β1^k
        pow2 = self.b2 ** k  # β2^k
        geo = r * (1.0 - r ** k) / (1.0 - r)  # Σ_{s=1..k} r^s, r = β1/√β2
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = self.lr * np.sqrt(1.0 - pow2) / (1.0 - pow1)  # thinc's bias correction
        rate[0] = 0.0
        self.pow1, self.pow2 = pow1.astype(np.float32), pow2.astype(np.float32)
        self.geo, self.rate = geo.astype(np.float32), rate.astype(np.float32)
        d = np.minimum(0.9999, (1.0 + k) / (10.0 + k))  # thinc's averaging decay at step k
        d[0] = 1.0
        self.decay = d
        self.log_keep = np.cumsum(np.log(d))  # log Π_{s≤k} d_s

    @property
    def dedupe_slots(self) -> np.ndarray:
        if self._slot_arr is None:
            self._slot_arr = np.full(self.last.size, -1, dtype=np.int32)
        return self._slot_arr

    def step(self, theta: np.ndarray, idx: np.ndarray, grad: np.ndarray, l2: float = 0.0,
             unique: bool = False) -> float:
        """One Adam step, in place, on features ``idx`` with data gradient ``grad`` (of the loss
        to *minimise*; repeated ids are summed unless ``unique`` says there are none); ``l2`` is
        this step's ς' of ``ς'‖θ‖²``.  ``theta`` must be a C-contiguous float32 vector.
        Returns the change of ``Σ θ²`` over the stepped features (float64)."""
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        grad = np.ascontiguousarray(grad, dtype=np.float64)
        if not unique:
            idx, grad = kernels.dedupe(idx, grad, self.dedupe_slots)
        self.t += 1
        t = self.t
        if t + 1 >= self.rate.size:
            self.grow_tables(2 * self.rate.size)
        return kernels.adam_step(theta, self.state, self.last, idx, grad, t, self.rate, self.geo,
                         self.pow1, self.pow2, self.log_keep, self.decay,
                         self.b1, self.b2, self.eps, float(l2), self.average)

    def sync(self, theta: np.ndarray, chunk: int = 1 << 20) -> None:
        """Bring every feature to the current step (before evaluating or saving θ); works in
        chunks so that its temporaries stay small next to θ."""
        t = self.t
        eps = np.float32(self.eps)
        for a in range(0, theta.size, chunk):
            sl = slice(a, a + chunk)
            last = self.last[sl].astype(np.int64)
            gap = t - last
            S = self.state[sl]  # a view: updated in place
            m, v, th = S[:, 0], S[:, 1], theta[sl]
            th -= self.rate[last + 1] * self.geo[gap] * m / (np.sqrt(v) + eps)
            m *= self.pow1[gap]
            v *= self.pow2[gap]
            if self.average:
                keep = np.exp(self.log_keep[t] - self.log_keep[last]).astype(np.float32)
                ema = S[:, 2]
                ema -= (ema - th) * (np.float32(1.0) - keep)
            self.last[sl] = t

    def averages(self, theta: np.ndarray) -> np.ndarray:
        """A copy of the moving averages at the current step (syncs ``theta`` first)."""
        if not self.average:
            raise ValueError(Errors.E560)
        self.sync(theta)
        return self.state[:, 2].copy()
