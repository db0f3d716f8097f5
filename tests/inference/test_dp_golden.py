"""The compiled DP reproduces what it computed on a fixed corpus (``tests/fixtures/dp_golden.npz``,
written by ``tests/make_dp_golden.py``, whose docstring describes the corpus): log-probabilities,
marginals, expected edit counts and their complex-step derivatives to 1e-12 relative,
Viterbi trees and seeded posterior samples exactly, in both reading directions.

The fixture holds the DP's inputs, so this test needs neither the treebanks nor a model.
Regenerate it only when the DP's outputs are meant to change."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

RTOL = 1e-12
_SCRIPT = Path(__file__).resolve().parents[1] / "make_dp_golden.py"
_spec = importlib.util.spec_from_file_location("make_dp_golden", _SCRIPT)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

GRAMMARS, CASES, GOLDEN = golden.load()


def _same_scalar(name, got, want):
    if np.isnan(want) or np.isinf(want):
        assert got == want or (np.isnan(got) and np.isnan(want)), (name, got, want)
    else:
        assert abs(got - want) <= RTOL * max(abs(want), 1.0), (name, got, want)


def compare(out: dict, want: dict) -> None:
    """Assert that ``out`` (:func:`make_dp_golden.dp_outputs`) matches the stored ``want``."""
    for name in golden.SCALARS:
        _same_scalar(name, float(out[name]), want[name])
    for name in golden.INTS:
        assert np.array_equal(out[name], want[name]), name
    for name in golden.VECTORS:
        got = np.asarray(out[name], dtype=np.float64)
        sums, want_sums = golden.checksums(got), want[f"{name}_sums"]
        assert np.array_equal(np.isnan(sums), np.isnan(want_sums)), name
        scale = np.nan_to_num(want_sums[:, 1:], nan=0.0)  # Σ w·|x| of the stored vector
        assert np.all(np.nan_to_num(np.abs(sums - want_sums), nan=0.0) <= RTOL * scale), (name, sums, want_sums)
        if name in want:
            ref = want[name]
            if f"{name}_idx" in want:
                got = got[want[f"{name}_idx"]]
            assert got.shape == ref.shape, name
            assert np.array_equal(np.isnan(got), np.isnan(ref)), name
            top = np.nanmax(np.abs(ref), initial=0.0)
            err = np.nanmax(np.abs(got - ref), initial=0.0)
            assert err <= RTOL * top, (name, err, top)


def _ids():
    return [f"{c.group}-{k}" for k, c in enumerate(CASES)]


def test_fixture_is_small_and_covers_the_corpus():
    assert _SCRIPT.with_name("fixtures").joinpath("dp_golden.npz").stat().st_size < 1 << 20
    groups = {c.group for c in CASES}
    assert {"sample", "sample+smoothed", "synthetic", "synthetic-long"} <= groups
    assert any((c.heads == -1).sum() > 1 for c in CASES)  # forests: a root chain of several roots
    finite = [np.isfinite(g[d]["logZ"]) for g in GOLDEN for d in golden.DIRECTIONS]
    assert any(finite) and not all(finite)  # the impossible-sentence path too


@pytest.mark.parametrize("k", range(len(CASES)), ids=_ids())
def test_dp_reproduces_golden_outputs(k):
    case = CASES[k]
    g, phi = GRAMMARS[case.grammar_id]
    lat = case.lattice(g)
    for r2l in golden.DIRECTIONS:
        out = golden.dp_outputs(g, lat, case.cand_p, phi, case.tilt, r2l, seed=k)
        compare(out, GOLDEN[k][r2l])


def test_comparison_notices_a_change_far_below_float32():
    """The tolerance is tight: one marginal moved by 1e-9 of itself, or one sample, fails."""
    k = next(k for k, c in enumerate(CASES) if c.full and np.isfinite(GOLDEN[k][True]["logZ"])
             and len(c.cand_p) > 3)
    want = GOLDEN[k][True]
    out = {name: want[name] for name in (*golden.SCALARS, *golden.INTS, "mu", "dmu", "maxmu")}
    for name in golden.PER_EDIT:  # the stored entries, the others zero: checksums then differ
        dense = np.zeros(GRAMMARS[CASES[k].grammar_id][0].n_symbols ** 2 * 4)
        dense[want[f"{name}_idx"]] = want[name]
        out[name] = dense
    with pytest.raises(AssertionError):
        compare(out, want)  # the dropped small edit counts are seen by the checksums
    mu = out["mu"].copy()
    i = int(np.argmax(mu))
    mu[i] *= 1 + 1e-9
    with pytest.raises(AssertionError):
        compare({**out, "mu": mu}, {**want, "counts_sums": golden.checksums(out["counts"]),
                                    "dcounts_sums": golden.checksums(out["dcounts"])})
    samples = want["samples"].copy()
    samples[0] = -2
    with pytest.raises(AssertionError):
        compare({**out, "samples": samples}, {**want, "counts_sums": golden.checksums(out["counts"]),
                                              "dcounts_sums": golden.checksums(out["dcounts"])})
