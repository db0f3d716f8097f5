"""What the ``"slot"`` and ``"sample"`` decoders choose among their draws (:mod:`.sampling`).

The loss is the token edit distance summed over slots.  ``"sample"`` (the paper's) returns the
*sampled sentence* with the least total expected loss against all samples; ``"slot"`` chooses,
per slot, the sampled string with the least expected edit distance to that slot's samples (the
loss decomposes over slots), so it never has a higher empirical risk than ``"sample"`` from the
same draws.  The risks of all slots are computed together (:func:`batch_risks`: closed forms for
strings of one symbol, a lower bound that skips candidates that cannot win), each slot's scoring
bounded by ``SLOT_WORK``.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np

from spacy_punctgen.decode.risk import edit_matrix, pair_distances
from spacy_punctgen.decode.sampling import SlotSamples

#: most work one slot's risks may take, in units of candidate × distinct string ×
#: (longest string + 1) × ⌈longest / 64⌉ (about 30 ns each); slots beyond it score fewer candidates
SLOT_WORK = 1 << 23


def _risks(samples: SlotSamples, which: np.ndarray) -> np.ndarray:
    """Σ_j d(s, x_j) over the slot's samples, for the distinct sampled strings ``s`` indexed by
    ``which`` (integers)."""
    return edit_matrix([samples.strings[j] for j in which], samples.strings) @ samples.counts


#: at most about this many (candidate, string) pairs are scored at once
PAIR_BLOCK = 1 << 18

def batch_risks(slots: Sequence[SlotSamples], which: Sequence[np.ndarray]) -> List[np.ndarray]:
    """``[_risks(s, w) for s, w in zip(slots, which)]``, the same integers, with the edit distances
    of many slots' (candidate, string) pairs computed together (:func:`pair_distances`, about
    ``PAIR_BLOCK`` pairs at a time): a slot costs its pairs, not a round of NumPy calls.  Slots whose
    strings are longer than 64 symbols go through :func:`_risks`."""
    out: List[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(slots)
    chunk: List[int] = []
    pairs = 0
    for q, (s, w) in enumerate(zip(slots, which)):
        longest = max(map(len, s.strings), default=0)
        if longest <= 1:  # strings of at most one symbol are 0 apart if equal, else 1
            out[q] = int(s.counts.sum()) - s.counts[np.asarray(w, dtype=np.int64)]
            continue
        if longest > 64:
            out[q] = _risks(s, w)
            continue
        if not len(w):
            continue
        chunk.append(q)
        pairs += len(w) * len(s.strings)
        if pairs >= PAIR_BLOCK:
            _risk_chunk(slots, which, chunk, out)
            chunk, pairs = [], 0
    if chunk:
        _risk_chunk(slots, which, chunk, out)
    return out


def _risk_chunk(slots, which, chunk: List[int], out: List[np.ndarray]) -> None:
    strings = [x for q in chunk for x in slots[q].strings]
    lens = np.array([len(x) for x in strings], dtype=np.int64)
    pad = np.full((len(strings), max(1, int(lens.max(initial=0)))), -1, dtype=np.int64)
    if lens.sum():
        pad[np.repeat(np.arange(len(strings)), lens),
            np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)] = [t for x in strings for t in x]
    pa, pb, row, weight = [], [], [], []
    off = rows = 0
    for q in chunk:  # every candidate of the slot against every string of it
        s, w = slots[q], np.asarray(which[q], dtype=np.int64)
        m = len(s.strings)
        pa.append(np.repeat(off + w, m))
        pb.append(np.tile(off + np.arange(m), len(w)))
        row.append(np.repeat(rows + np.arange(len(w)), m))
        weight.append(np.tile(s.counts, len(w)))
        off += m
        rows += len(w)
    pa, pb, row, weight = (np.concatenate(v) for v in (pa, pb, row, weight))
    d = pair_distances(pad, lens, pa, pb)
    total = np.rint(np.bincount(row, weights=d * weight, minlength=rows)).astype(np.int64)  # exact integers
    r0 = 0
    for q in chunk:
        out[q] = total[r0:r0 + len(which[q])]
        r0 += len(which[q])


def _max_candidates(samples: SlotSamples) -> Optional[int]:
    """None where every distinct string of the slot can be scored within ``SLOT_WORK``; else how
    many can (at least 1), each costing ``|distinct| × (longest + 1) × ⌈longest / 64⌉`` units."""
    m = len(samples.strings)
    longest = max((len(x) for x in samples.strings), default=0)
    per_candidate = m * (longest + 1) * max(1, -(-longest // 64))
    if m * per_candidate <= SLOT_WORK:
        return None
    return max(1, SLOT_WORK // per_candidate)


def _candidates(samples: SlotSamples) -> np.ndarray:
    """The strings that compete at a slot: all distinct ones, or, beyond ``SLOT_WORK``, only the
    most frequent (first drawn on ties)."""
    m = len(samples.strings)
    cap = _max_candidates(samples)
    return np.arange(m) if cap is None else np.lexsort((np.arange(m), -samples.counts))[:cap]


def _slot_pick(samples: SlotSamples) -> int:
    """The distinct sampled string of least risk; ties: the more frequent, then the first drawn.
    Candidates beyond ``SLOT_WORK``: only the most frequent strings (first drawn on ties)."""
    return slot_picks([samples])[0]


#: "slot": candidates scored first at each slot (the most frequent); the others only where a
#: lower bound on their risk does not already exceed the best of these
FIRST_CANDIDATES = 4


def slot_picks(slots: Sequence[SlotSamples]) -> List[int]:
    """:func:`_slot_pick` of every slot, their risks computed together.  Exact, but cheaper: where
    every string has at most one symbol the risk of ``s`` is ``N - n_s``, so the most frequent
    string wins; elsewhere the ``FIRST_CANDIDATES`` most frequent candidates are scored first, and
    a candidate ``c`` with ``Σ_j n_j |len(c) - len(x_j)| >`` the least of their risks (a lower
    bound on its risk: an edit distance is at least the difference in length) cannot win and is
    not scored."""
    picks = [-1] * len(slots)
    which: Dict[int, np.ndarray] = {}
    for q, s in enumerate(slots):
        if len(s.strings) == 1 or max(map(len, s.strings)) <= 1:
            picks[q] = int(np.argmax(s.counts))  # the first of the most frequent
        else:
            which[q] = _candidates(s)
    many = [q for q, w in which.items() if len(w) > FIRST_CANDIDATES and max(map(len, slots[q].strings)) <= 64]
    first = [which[q][np.lexsort((which[q], -slots[q].counts[which[q]]))[:FIRST_CANDIDATES]] for q in many]
    for q, r in zip(many, batch_risks([slots[q] for q in many], first)):
        s, w = slots[q], which[q]
        lens = np.array([len(x) for x in s.strings], dtype=np.int64)
        ls, inv = np.unique(lens[w], return_inverse=True)
        bound = (np.abs(ls[:, None] - lens[None, :]) @ s.counts)[inv.ravel()]
        which[q] = w[bound <= int(r.min())]  # (ties kept: a tie with the best may still win)
    todo = list(which)
    for q, r in zip(todo, batch_risks([slots[q] for q in todo], [which[q] for q in todo])):
        s, w = slots[q], which[q]
        picks[q] = int(w[np.lexsort((w, -s.counts[w], r))[0]])
    return picks


def sample_pick(slots: Sequence[SlotSamples], n_samples: int) -> int:
    """The sampled sentence of least total risk (first drawn on ties).  Where some slot's strings
    cannot all be scored within ``SLOT_WORK``, only the first ``c`` samples compete (``c``: the
    least number of candidates such a slot affords), so each slot scores at most ``c`` strings."""
    caps = [c for c in map(_max_candidates, slots) if c is not None]
    k = min([int(n_samples)] + caps)
    if k == 1:
        return 0
    total = np.zeros(k, dtype=np.int64)
    which, local = zip(*(np.unique(s.ids[:k], return_inverse=True) for s in slots))
    for r, loc in zip(batch_risks(slots, which), local):
        total += r[loc.ravel()]
    return int(np.argmin(total))
