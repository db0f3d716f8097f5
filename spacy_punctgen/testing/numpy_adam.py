"""The NumPy formulation of :meth:`spacy_punctgen.training.lazy_adam.LazyAdam.step`, the
reference for the compiled ``_train.adam_step``: the same float32 operations in the same
order, all features at once instead of one at a time (bit-identical results)."""
from __future__ import annotations

from typing import Tuple

import numpy as np

from spacy_punctgen.training.lazy_adam import LazyAdam


def dedupe(slot: np.ndarray, idx: np.ndarray, grad: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Distinct ids and summed values, in O(len(idx)) (no sort); ``slot`` is scratch of
    ``-1`` (one entry per feature), left as it was found."""
    pos = np.arange(idx.size, dtype=np.int32)
    slot[idx] = pos
    rep = slot[idx]  # each entry -> the position representing its id
    first = rep == pos
    uniq = idx[first]
    new_id = np.cumsum(first) - 1
    g = np.bincount(new_id[rep], weights=grad, minlength=uniq.size)
    slot[uniq] = -1
    return uniq, g


def adam_step(opt: LazyAdam, theta: np.ndarray, idx: np.ndarray, grad: np.ndarray, l2: float = 0.0) -> None:
    """One step of ``opt`` as :meth:`LazyAdam.step` takes it (repeated ids summed), in place."""
    idx, g64 = dedupe(opt.dedupe_slots, np.asarray(idx, dtype=np.int64), np.asarray(grad, dtype=np.float64))
    opt.t += 1
    t = opt.t
    if t + 1 >= opt.rate.size:
        opt.grow_tables(2 * opt.rate.size)
    eps = np.float32(opt.eps)
    last = opt.last[idx].astype(np.int64)
    gap = t - 1 - last  # steps with zero data gradient since the feature was current
    S = opt.state[idx]  # a copy; m, v (, ema) are views into it
    m, v = S[:, 0], S[:, 1]
    th = theta[idx]
    # catch up over the gap: momentum drift, moment decay
    th -= opt.rate[last + 1] * opt.geo[gap] * m / (np.sqrt(v) + eps)
    th_gap = th.copy() if opt.average else None
    m *= opt.pow1[gap]
    v *= opt.pow2[gap]
    # this step: data gradient + the L2 gradients owed since `last` (θ was constant)
    g = g64.astype(np.float32)
    g += np.float32(2.0 * l2) * (gap + 1).astype(np.float32) * th
    m *= np.float32(opt.b1)
    m += np.float32(1.0 - opt.b1) * g
    v *= np.float32(opt.b2)
    v += np.float32(1.0 - opt.b2) * g * g
    th -= opt.rate[t] * m / (np.sqrt(v) + eps)
    theta[idx] = th
    if opt.average:  # the gap's decays toward the caught-up θ, then this step's
        ema = S[:, 2]
        keep = np.exp(opt.log_keep[t - 1] - opt.log_keep[last]).astype(np.float32)
        ema -= (ema - th_gap) * (np.float32(1.0) - keep)
        ema -= np.float32(1.0 - opt.decay[t]) * (ema - th)
    opt.state[idx] = S
    opt.last[idx] = t
