"""The decoders' public entry points check their arguments (issue 23, item 12): ``n_samples`` an
int in 1..MAX_SAMPLES, ``seed`` a non-negative int or None, ``method`` one of METHODS, each with
our own error instead of a failure inside NumPy (a negative seed) or hours and gigabytes (10^6
samples)."""
import numpy as np
import pytest

from spacy_punctgen.decode.mbr import (MAX_SAMPLES, METHODS, restore_mixtures, restore_sentence, restore_sentences,
                                       sample_punctuation)
from spacy_punctgen.testing.toy import toy_model, toy_sentences


@pytest.fixture(scope="module")
def model():
    return toy_model("l2r")


@pytest.fixture(scope="module")
def sent():
    return toy_sentences()[0]


ENTRY_POINTS = {
    "restore_sentence": lambda m, s, **kw: restore_sentence(m, s, **kw),
    "restore_sentences": lambda m, s, **kw: restore_sentences(m, [s], **kw),
    "restore_mixtures": lambda m, s, **kw: restore_mixtures(m, [[s, s]], **kw),
}


def test_max_samples_is_an_int_bound():
    assert isinstance(MAX_SAMPLES, int) and 1000 <= MAX_SAMPLES <= 100_000


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("n_samples,code", [
    (0, "E106"), (-5, "E106"), (MAX_SAMPLES + 1, "E126"), (10 ** 6, "E126"), (2.5, "E126"), (100.0, "E126"),
    ("100", "E126"), (True, "E126"), (None, "E126"),
])
def test_bad_n_samples_refused(model, sent, entry, n_samples, code):
    with pytest.raises(ValueError, match=code):
        ENTRY_POINTS[entry](model, sent, method="slot", n_samples=n_samples)


@pytest.mark.parametrize("n_samples,code", [(0, "E106"), (MAX_SAMPLES + 1, "E126"), (1.5, "E126")])
def test_bad_n_samples_refused_by_the_sampler(model, sent, n_samples, code):
    with pytest.raises(ValueError, match=code):
        sample_punctuation(model, sent, n_samples=n_samples)


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("seed", [-1, -(2 ** 40), 1.5, "0", True])
def test_bad_seed_refused(model, sent, entry, seed):
    with pytest.raises(ValueError, match="E127"):
        ENTRY_POINTS[entry](model, sent, seed=seed)
    with pytest.raises(ValueError, match="E127"):
        sample_punctuation(model, sent, n_samples=5, seed=seed)


@pytest.mark.parametrize("method", ["", "SLOT", "exactly", None, 3, ("slot",)])
def test_bad_method_refused(model, sent, method):
    for entry in ENTRY_POINTS.values():
        with pytest.raises(ValueError, match="E109"):
            entry(model, sent, method=method)


def test_good_arguments_accepted(model, sent):
    base = restore_sentence(model, sent, n_samples=50, seed=3)
    assert restore_sentence(model, sent, n_samples=np.int64(50), seed=np.uint32(3)) == base
    assert len(restore_sentence(model, sent, n_samples=1)) == len(sent.words) + 1
    assert len(restore_sentence(model, sent, n_samples=MAX_SAMPLES, seed=0)) == len(sent.words) + 1
    assert len(restore_sentence(model, sent, seed=None)) == len(sent.words) + 1  # fresh randomness
    assert len(sample_punctuation(model, sent, n_samples=7, seed=None)) == 7
    for method in METHODS:
        assert len(restore_sentence(model, sent, method=method, n_samples=20)) == len(sent.words) + 1
    # "marginal" draws nothing: its n_samples is not looked at
    assert restore_sentence(model, sent, method="marginal", n_samples=0) == restore_sentence(model, sent)


def test_the_removed_exact_method_says_what_to_use(model, sent):
    """'exact' was the NumPy twin of 'marginal' (now spacy_punctgen.testing.exact_mbr): E960 says so."""
    assert "exact" not in METHODS
    for entry in ENTRY_POINTS.values():
        with pytest.raises(ValueError, match="E960.*'marginal'"):
            entry(model, sent, method="exact")
