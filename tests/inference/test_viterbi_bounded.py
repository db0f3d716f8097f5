"""``viterbi_bounded`` (Viterbi after removing the candidates that no best derivation can use)
chooses exactly what plain ``viterbi`` chooses: on random problems (brute force included) and on
real sentences under the shipped model (the sample always, en_ewt dev where ../shared is).  Its
compiled steps (``_dp.viterbi_bounded``) give exactly what the NumPy code they replaced gives
(``dp._viterbi_bounded_py``, which still restricts through ``restrict_lattice``)."""
import math
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.data.conllu import resolve_split
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.inference import _dp, dp
from spacy_punctgen.inference.dp import restrict_lattice, viterbi, viterbi_bounded
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.testing.problems import feasible_problem, random_problem
from spacy_punctgen.testing.reference import brute_force

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
EWT = ROOT.parent / "shared" / "ud" / "en_ewt"


class _Counter:
    """Counts the restricted passes: the compiled path's (``stats``) and the NumPy reference's
    :func:`restrict_lattice` calls (each pruned pass makes one); the two must agree."""

    def __init__(self):
        self.calls = 0
        self.stats = {}

    def __call__(self, *args, **kw):
        self.calls += 1
        return restrict_lattice(*args, **kw)


def _same(lat, g, cand_p, phi, r2l, counter=None):
    ref_lp, ref = viterbi(lat, g, cand_p, phi, r2l)
    stats = counter.stats if counter is not None else None
    lp, best = viterbi_bounded(lat, g, cand_p, phi, r2l, len(g.punctemes), stats=stats)
    assert best.dtype == ref.dtype
    assert np.array_equal(best, ref)
    if math.isfinite(ref_lp):
        assert lp == pytest.approx(ref_lp, rel=1e-12, abs=1e-12)
    else:
        assert lp == -math.inf
    py_lp, py_best = dp._viterbi_bounded_py(lat, g, cand_p, phi, r2l, len(g.punctemes))
    assert py_best.dtype == best.dtype and np.array_equal(py_best, best)
    assert py_lp == lp or (math.isnan(py_lp) and math.isnan(lp))  # the same passes: equal to the bit
    if counter is not None:
        assert counter.stats.get("restricted", 0) == counter.calls
    return ref_lp, ref


@pytest.mark.parametrize("r2l", [False, True])
@pytest.mark.parametrize("seed", range(60))
def test_random_problems(seed, r2l):
    """Skewed candidate probabilities (so that the bound prunes), against plain Viterbi and,
    for the small ones, brute force."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    g, heads, slots, cands, probs, phi, lat, cand_p = random_problem(rng, n=n, max_cands=8, p_empty=0.3)
    cand_p = cand_p ** rng.uniform(1.0, 6.0)
    if seed % 5 == 0 and lat.n_candidates > 1:  # exact ties between candidates of a node
        cand_p[1::2] = cand_p[0:-1:2][: len(cand_p[1::2])]
    ref_lp, _ = _same(lat, g, cand_p, phi, r2l)
    if n <= 3 and math.isfinite(ref_lp):
        probs = [np.zeros(len(c)) for c in cands]
        for k, (w, r) in enumerate(zip(lat.cand_node, lat.cand_row)):
            probs[int(w)][int(r)] = cand_p[k]
        bf = brute_force(g, heads, slots, cands, probs, phi, r2l)
        assert ref_lp == pytest.approx(math.log(bf["best"]), abs=1e-10)


def test_random_problems_prune_something(monkeypatch):
    """Cases like the random ones above do exercise the pruned path (possible sentences: most
    impossible ones never reach it, ``_dp.surface_producible`` tells them at once)."""
    counter = _Counter()
    monkeypatch.setattr(dp, "restrict_lattice", counter)
    for seed in range(60):
        rng = np.random.default_rng(seed)
        g, _, _, _, _, phi, lat, cand_p = feasible_problem(seed, n=int(rng.integers(1, 9)), max_cands=8,
                                                           p_empty=0.3)
        _same(lat, g, cand_p ** rng.uniform(1.0, 6.0), phi, bool(seed % 2), counter)
    assert counter.calls >= 20


def test_one_word_sentences(monkeypatch):
    """One word (one node, two slots), its candidates pruned: the compiled restriction and max
    passes give what the NumPy steps give, passes included."""
    counter = _Counter()
    monkeypatch.setattr(dp, "restrict_lattice", counter)
    for seed in range(40):
        rng = np.random.default_rng(500 + seed)
        g, _, _, _, _, phi, lat, cand_p = feasible_problem(500 + seed, n=1, max_cands=8, p_empty=0.2)
        _same(lat, g, cand_p ** rng.uniform(1.0, 6.0), phi, bool(seed % 2), counter)
    assert counter.calls >= 5


@pytest.mark.parametrize("seed", range(40))
def test_impossible_surfaces_told_without_a_pass(seed):
    """``_dp.surface_producible`` (the bounded Viterbi's shortcut) is a necessary condition: it
    never refuses a possible sentence, and the impossible ones it refuses are -inf for Viterbi."""
    rng = np.random.default_rng(900 + seed)
    g, _, _, _, _, phi, lat, cand_p = random_problem(rng, n=int(rng.integers(1, 6)), max_cands=6, p_empty=0.3)
    for r2l in (False, True):
        lp, best = viterbi(lat, g, cand_p, phi, r2l)
        if not _dp.surface_producible(lat, g, cand_p):
            assert lp == -math.inf and (best == -1).all()
        _same(lat, g, cand_p, phi, r2l)


def test_too_few_punctemes_refused_like_the_numpy_steps():
    """``n_punctemes`` below the lattice's puncteme ids: the compiled restriction refuses it with
    the error (E158, the same candidate) that the NumPy steps' ``restrict_lattice`` gives."""
    refused = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        g, _, _, _, _, phi, lat, cand_p = feasible_problem(seed, n=int(rng.integers(1, 9)), max_cands=8,
                                                           p_empty=0.3)
        p = cand_p ** rng.uniform(1.0, 6.0)
        if lat.max_puncteme < 1:
            continue
        got = []
        for fn in (viterbi_bounded, dp._viterbi_bounded_py):
            try:
                got.append(fn(lat, g, p, phi, bool(seed % 2), int(lat.max_puncteme))[0])
            except ValueError as err:
                got.append(str(err))
        assert got[0] == got[1]
        refused += isinstance(got[0], str)
    assert refused >= 10


def test_bad_probabilities_still_refused():
    rng = np.random.default_rng(0)
    g, _, _, _, _, phi, lat, cand_p = random_problem(rng, n=3)
    bad = cand_p.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError):
        viterbi_bounded(lat, g, bad, phi, False, len(g.punctemes))
    with pytest.raises(ValueError):
        viterbi_bounded(lat, g, cand_p[:-1], phi, False, len(g.punctemes))


def _check_sentences(model, sents, monkeypatch) -> int:
    counter = _Counter()
    monkeypatch.setattr(dp, "restrict_lattice", counter)
    phi = model.shared_phi()
    for smoothed in (False, True):
        preps = [model.prepare(s, smoothed) for s in sents]
        fwd, pos, _ = model.forward(preps)
        for prep, ps in zip(preps, pos):
            _same(prep.lattice, model.grammar, model.candidate_probs(fwd, prep, ps), phi, model.r2l, counter)
    return counter.calls


@pytest.fixture(scope="module")
def shipped():
    return PunctModel.from_disk(default_model_path("en"))


def test_shipped_model_on_sample(shipped, monkeypatch):
    sents = [s for split in ("train", "dev", "test")
             for s in preprocess_file(SAMPLE / f"en_sample-ud-{split}.conllu")[0]]
    assert _check_sentences(shipped, sents, monkeypatch) > 0


@pytest.mark.skipif(not EWT.is_dir(), reason="needs ../shared/ud/en_ewt")
def test_shipped_model_on_ewt_dev(shipped, monkeypatch):
    sents = preprocess_file(resolve_split(str(EWT), "dev"))[0][:300]
    assert _check_sentences(shipped, sents, monkeypatch) > 100


@pytest.mark.slow
@pytest.mark.skipif(not EWT.is_dir(), reason="needs ../shared/ud/en_ewt")
def test_shipped_model_on_all_ewt_dev(shipped, monkeypatch):
    sents = preprocess_file(resolve_split(str(EWT), "dev"))[0]
    assert _check_sentences(shipped, sents, monkeypatch) > 1000
