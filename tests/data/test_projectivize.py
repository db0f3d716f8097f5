"""Projectivisation (data/trees.lift_nonprojective, data/preprocess._projectivize) gives exactly
spaCy's ``nonproj.projectivize`` heads, on thousands of random trees and forests, in near-linear
work (spaCy's own takes cubic time: minutes for 5,000 words)."""
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.pipeline._parser_internals.nonproj import projectivize

from spacy_punctgen.data import trees
from spacy_punctgen.data.preprocess import _projectivize
from spacy_punctgen.data.trees import forest, lift_nonprojective


def _random_forest(rng, n, n_roots):
    """spaCy's convention: absolute heads, roots point to themselves.  Every word hangs from a
    random earlier word of a random order, so arcs cross freely."""
    order = rng.permutation(n)
    heads = [0] * n
    for i, w in enumerate(order):
        heads[w] = int(w) if i < n_roots else int(order[rng.integers(0, i)])
    return heads


def _spacy_wrapper(heads):
    """What preprocess._projectivize did before: spaCy's projectivizer under a virtual root."""
    n = len(heads)
    abs_heads = [n if h < 0 else h for h in heads] + [n]
    new, _ = projectivize(abs_heads, ["dep"] * (n + 1))
    return [-1 if h == n else h for h in new[:n]]


def _is_projective(heads):  # -1 roots; every subtree contiguous
    f = forest(heads)
    return all(f.last[w] - f.first[w] + 1 == f.size[w] for w in range(len(heads)))


def test_equal_to_spacy_on_thousands_of_random_forests():
    rng = np.random.default_rng(0)
    lifted = 0
    for _ in range(3000):
        n = int(rng.integers(1, 40))
        heads = _random_forest(rng, n, int(rng.integers(1, min(n, 4) + 1)))  # several roots too
        want, _ = projectivize(list(heads), ["dep"] * n)
        assert lift_nonprojective(heads) == want, heads
        lifted += want != heads
    assert lifted > 1500  # the random trees are mostly non-projective: the lifting was exercised


def test_preprocess_wrapper_equal_to_the_spacy_wrapper_on_forests():
    rng = np.random.default_rng(1)
    for _ in range(1500):
        n = int(rng.integers(1, 30))
        heads = _random_forest(rng, n, int(rng.integers(1, min(n, 3) + 1)))
        heads = [-1 if h == i else h for i, h in enumerate(heads)]  # our convention: -1 roots
        got = _projectivize(heads)
        assert got == _spacy_wrapper(heads), heads
        assert _is_projective(got)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_equal_to_spacy_hypothesis(data):
    n = data.draw(st.integers(1, 25))
    heads = [data.draw(st.integers(-1, i - 1)) for i in range(n)]  # word i hangs from an earlier word
    perm = data.draw(st.permutations(range(n)))  # ... of a random word order
    placed = [0] * n
    for i, h in enumerate(heads):
        placed[perm[i]] = -1 if h < 0 else perm[h]
    assert _projectivize(placed) == _spacy_wrapper(placed)


@pytest.mark.parametrize("heads", [
    [-1, 0, 1, 2],  # right chain
    [1, 2, 3, -1],  # left chain
    [-1, -1, -1],  # roots only
    [2, 2, -1, 4, 2],  # projective already
])
def test_projective_trees_unchanged(heads):
    assert _projectivize(heads) == heads == _spacy_wrapper(heads)


@pytest.mark.parametrize("heads", [[1, 0, -1], [5, -1], [0, -1], [2, -1]])
def test_not_a_forest_returned_unchanged_for_the_tree_checks(heads):
    assert _projectivize(heads) == heads
    with pytest.raises(ValueError):
        forest(heads)


def test_5000_word_random_tree_near_linear_work():
    """spaCy needs more than 600 s here.  Not a timed assertion: the number of lifts stays a
    small multiple of the length, and the result is projective and made only of lifts (every new
    head an ancestor of the old)."""
    rng = np.random.default_rng(5)
    counts = {}
    for n in (1000, 5000):
        heads = _random_forest(rng, n, 1)
        heads = [-1 if h == i else h for i, h in enumerate(heads)]
        t0 = time.perf_counter()
        got = _projectivize(heads)
        elapsed = time.perf_counter() - t0
        counts[n] = trees.lift_count
        assert _is_projective(got)
        assert got != heads
        for w, h in enumerate(got):  # each new head is an ancestor of the word in the input tree
            a = heads[w]
            while a != h and a >= 0:
                a = heads[a]
            assert a == h, (w, h)
        print(f"{n} words: {counts[n]} lifts, {elapsed:.2f} s")
    assert counts[1000] > 500
    assert counts[5000] < 5 * 5000
    assert counts[5000] < 7 * counts[1000]  # linear-ish: 5x the words, not 25x or 125x the work
