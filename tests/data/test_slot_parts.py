"""``slot_parts`` (two sorts of all nodes) equals the per-slot sorts it replaced."""
from typing import Dict, List

import numpy as np
import pytest

from spacy_punctgen.data.trees import forest
from spacy_punctgen.data.underlying import LEFT, RIGHT, slot_parts


def per_slot_sorts(first, last):
    """The code before: each slot's nodes sorted by span size, in the slot's own two sorts."""
    n = len(first)
    ends: Dict[int, List[int]] = {}
    starts: Dict[int, List[int]] = {}
    for w in range(n):
        ends.setdefault(last[w] + 1, []).append(w)
        starts.setdefault(first[w], []).append(w)
    parts = []
    for i in range(n + 1):
        here = [(w, RIGHT) for w in sorted(ends.get(i, []), key=lambda w: last[w] - first[w])]
        here += [(w, LEFT) for w in sorted(starts.get(i, []), key=lambda w: first[w] - last[w])]
        parts.append(here)
    return parts


@pytest.mark.parametrize("seed", range(40))
def test_slot_parts_equals_the_per_slot_sorts(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    heads = [-1] + [int(rng.integers(0, w)) for w in range(1, n)]  # a tree (any shape)
    fo = forest(heads)
    assert slot_parts(fo.first, fo.last) == per_slot_sorts(fo.first, fo.last)
    # spans with ties in size (not a tree's): the order among equals is kept too
    first = [int(v) for v in rng.integers(0, n, n)]
    last = [f + int(rng.integers(0, 3)) for f in first]
    last = [min(v, n - 1) for v in last]
    assert slot_parts(first, last) == per_slot_sorts(first, last)
