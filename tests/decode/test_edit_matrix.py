"""decode.risk.edit_matrix (Myers' bit-parallel Levenshtein, in blocks) equals the plain DP of
evaluation.metrics.edit_distance, across the 64-symbol word boundary and in small blocks."""
import numpy as np
import pytest

from spacy_punctgen.decode import risk
from spacy_punctgen.decode.risk import pair_distances
from spacy_punctgen.evaluation.metrics import edit_distance


def _strings(rng, n, longest, alphabet):
    return [tuple(rng.choice(alphabet, size=int(rng.integers(0, longest + 1))).tolist())
            for _ in range(n)]


@pytest.mark.parametrize("longest", [0, 1, 5, 63, 64, 65, 140])
def test_edit_matrix_equals_levenshtein(longest):
    rng = np.random.default_rng(longest)
    A = _strings(rng, 9, longest, [",", ".", "(", ")"])
    B = _strings(rng, 7, longest, [",", ".", "(", ")", "--"])
    got = risk.edit_matrix(A, B)
    want = np.array([[edit_distance(a, b) for b in B] for a in A], dtype=np.int64)
    assert got.shape == (len(A), len(B))
    assert (got == want).all()


def test_edit_matrix_small_blocks_same_answer(monkeypatch):
    rng = np.random.default_rng(7)
    A = _strings(rng, 30, 90, [1, 2, 3])
    B = _strings(rng, 25, 90, [1, 2, 3, 4])
    whole = risk.edit_matrix(A, B)
    monkeypatch.setattr(risk, "EDIT_BLOCK_WORDS", 3)
    assert (risk.edit_matrix(A, B) == whole).all()
    assert whole[0, 0] == edit_distance(A[0], B[0])


def test_edit_matrix_empty_sides():
    assert risk.edit_matrix([], [(1,)]).shape == (0, 1)
    assert (risk.edit_matrix([()], [(1, 2), ()]) == [[2, 0]]).all()


@pytest.mark.parametrize("longest", [0, 1, 2, 5, 63, 64])
def test_pair_distances_equal_levenshtein(longest):
    """The pairwise path of the slot decoder (closed forms for strings of 0 and 1 symbols, Myers in
    one word per pair for the rest) against the plain DP."""
    rng = np.random.default_rng(100 + longest)
    strings = _strings(rng, 40, longest, [0, 1, 2, 3])
    lens = np.array([len(x) for x in strings], dtype=np.int64)
    pad = np.full((len(strings), max(1, longest)), -1, dtype=np.int64)
    for r, x in enumerate(strings):
        pad[r, :len(x)] = x
    pa = rng.integers(0, len(strings), 500)
    pb = rng.integers(0, len(strings), 500)
    got = pair_distances(pad, lens, pa, pb)
    want = [edit_distance(strings[a], strings[b]) for a, b in zip(pa, pb)]
    assert got.tolist() == want
