"""The inside pass alone (``log_prob``: no marginals, counts or draws) keeps the nodes' rows as a
stack (cython_ext/dp.pyx ``_compact_layout``): a node's rows are read only by its parent, so a
right-branching chain holds two nodes' rows instead of all n.  Before (issue 38, item 10), the
shipped model's log-probability of a chain whose constituents all end at one punctuated slot
took about 260 KB a word (511 MB at 2,000 words).  The values are those of the stored layout,
bit for bit, in every semiring that runs the pass alone."""
import tracemalloc

import numpy as np
import pytest

from spacy_punctgen.inference import _dp
from spacy_punctgen.inference.dp import Grammar, build_lattice
from spacy_punctgen.testing.deep_chain import chain_problem, chain_sentence
from spacy_punctgen.testing.problems import PUNCTEMES, feasible_problem, random_phi, random_problem


def _inside_alone_equals_full_pass(lat, g, p, phi):
    for r2l in (False, True):
        for mode in ("sum", "max"):
            alone = _dp.run_dp(lat, g, p, phi, r2l, mode, False, False)[0]
            full = _dp.run_dp(lat, g, p, phi, r2l, mode, True, False)[0]
            assert alone == full or (np.isnan(alone) and np.isnan(full)), (r2l, mode, alone, full)


@pytest.mark.parametrize("seed", range(40))
def test_random_problems(seed):
    rng = np.random.default_rng(seed)
    g, heads, slots, cands, probs, phi, lat, p = (feasible_problem(seed, n=int(rng.integers(1, 7))) if seed % 2
                                                   else random_problem(rng, n=int(rng.integers(1, 7))))
    _inside_alone_equals_full_pass(lat, g, p, phi)


def test_chains_and_a_forest():
    g, lat, p, phi, _ = chain_problem(400)
    _inside_alone_equals_full_pass(lat, g, p, phi)
    g = Grammar(4, PUNCTEMES)
    rng = np.random.default_rng(1)
    heads = [1, -1, 1, -1, 5, 3, 5, -1]  # three roots
    slots = [[0]] + [[int(s)] if rng.random() < 0.4 else [] for s in rng.integers(1, 4, size=8)]
    cands = [np.array([(0, 0), (1, 0), (0, 1), (2, 0), (0, 2), (1, 2)])] * 8
    lat = build_lattice(g, heads, slots, cands)
    _inside_alone_equals_full_pass(lat, g, rng.random(lat.n_candidates), random_phi(rng, 4))


def test_an_order_without_stacked_subtrees_takes_the_stored_layout():
    """Children before parents, but not subtree after subtree: the rows of 4 lie between 0's and
    1's when 1 is reached, so the stack does not apply and the stored layout serves."""
    g = Grammar(4, PUNCTEMES)
    lat = build_lattice(g, [1, 2, -1, 2, 3], [[0], [1], [], [2], [], [1]],
                        [np.array([(0, 0), (1, 0), (0, 1), (2, 0), (0, 2)])] * 5)
    rng = np.random.default_rng(0)
    p, phi = rng.random(lat.n_candidates), random_phi(rng, 4)
    want = _dp.run_dp(lat, g, p, phi, False, "sum", False, False)[0]
    assert list(lat.order) == [4, 3, 0, 1, 2]
    lat.order[:] = [0, 4, 1, 3, 2]
    assert _dp.run_dp(lat, g, p, phi, False, "sum", False, False)[0] == want
    assert _dp.run_dp(lat, g, p, phi, False, "sum", True, False)[0] == want


def test_the_shipped_models_log_prob_of_a_chain_in_bounded_memory():
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.shipped import default_model_path

    model = PunctModel.from_disk(default_model_path("en"))
    n = 1000
    preps = model.prepare_eval([chain_sentence(n, [()] * n + [(".",)])])
    tracemalloc.start()
    try:
        lp = model.log_probs(preps)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.isfinite(lp[0])
    assert peak < 40 * (1 << 20), peak / (1 << 20)  # before: 260 MB (13 MB now)
