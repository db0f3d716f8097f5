"""Restoration, ATTACH's priors and the analysis of the shipped English model reproduce what
they computed on ``assets/sample`` when ``tests/fixtures/restore_golden.json`` was written (by
``tests/make_restore_golden.py``, whose docstring says what it holds): the chosen strings and
best pairs exactly, probabilities and log-probabilities to 1e-12 relative (on the machine that
wrote the fixture they are equal to the bit; the tolerance allows another libm's ``exp``).

Regenerate the fixture only when these outputs are meant to change; a speed-up must not."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

RTOL = 1e-12
_SCRIPT = Path(__file__).resolve().parents[1] / "make_restore_golden.py"
_spec = importlib.util.spec_from_file_location("make_restore_golden", _SCRIPT)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def _close(got: float, want_hex: str) -> bool:
    want = float.fromhex(want_hex)
    if not np.isfinite(want):
        return got == want
    return abs(got - want) <= RTOL * max(abs(want), 1e-300)


@pytest.fixture(scope="module")
def computed():
    from spacy_punctgen.model.punct_model import PunctModel

    want = json.loads(golden.FIXTURE.read_text(encoding="utf-8"))
    sents = golden.sentences()
    assert len(sents) == want["n_sentences"]
    return golden.outputs(PunctModel.from_disk(golden.MODEL), sents), want


def test_fixture_is_small():
    assert golden.FIXTURE.stat().st_size < 1 << 20


def test_restoration_matches_fixture(computed):
    got, want = computed
    assert len(got["restore"]) == len(want["restore"])
    for k, (g, w) in enumerate(zip(got["restore"], want["restore"])):
        assert [s for s, _ in g] == [s for s, _ in w], k
        assert all(_close(float.fromhex(p), q) for (_, p), (_, q) in zip(g, w)), k


def test_priors_match_fixture(computed):
    got, want = computed
    for k, (g, w) in enumerate(zip(got["priors"], want["priors"])):
        assert len(g) == len(w), k
        for (a, b), (c, d) in zip(g, w):
            assert _close(float.fromhex(a), c) and _close(float.fromhex(b), d), k


def test_analysis_matches_fixture(computed):
    got, want = computed
    for k, ((gp, gl), (wp, wl)) in enumerate(zip(got["analyze"], want["analyze"])):
        assert gp == wp, k
        assert _close(float.fromhex(gl), wl), k


def test_priors_equal_the_per_node_numpy_computation_to_the_bit():
    # the batched, compiled priors against ATTACH's NumPy scoring and a per-node
    # np.exp(...) / sum, as mbr computed them one node at a time
    from spacy_punctgen.decode import mbr
    from spacy_punctgen.model.punct_model import PunctModel

    model = PunctModel.from_disk(golden.MODEL)
    sents = golden.sentences()[:60]
    (priors), _ = mbr.mixture_priors(model, [[s] for s in sents])
    for s, (prior,) in zip(sents, priors):
        rel, ptr, units = model.extractor.sentence_units(s)
        fwd = model.scorer.predict(model.theta, rel, ptr, units)
        for w in range(len(s.words)):
            p = np.exp(fwd.logp[fwd.node_off[w]:fwd.node_off[w + 1]])
            want = p / p.sum()
            assert np.array_equal(prior.probs[w].view(np.int64), want.view(np.int64)), (s.sent_id, w)
            assert np.array_equal(prior.pairs[w], model.extractor.rel_tables[int(rel[w])].pairs)
