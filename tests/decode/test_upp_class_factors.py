"""An incremental model's soft marks as class factors on restoration's slots
(decode/incremental_evidence.py): the map of classes, the base rate divided out, the product of
sources, weight 0 giving the plain decoder bit for bit, and evidence that flips a choice."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.incremental_evidence import class_evidence, class_map, combine_evidence
from spacy_punctgen.decode.lexical import restore_with_lexical
from spacy_punctgen.decode.mbr import restore_sentences
from spacy_punctgen.incremental.labels import FINE, PAPER
from spacy_punctgen.model.lexical import CLASSES, mark_class
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.fixture(scope="module")
def model():
    return PunctModel.from_disk(default_model_path("en"))


@pytest.fixture(scope="module")
def sentences():
    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-test.conllu")
    return [replace(s, slots=[()] * len(s.slots)) for s in sents]


def test_class_map():
    by = dict(zip(CLASSES, class_map(PAPER).tolist()))
    assert by == {"": 0, ",": 1, ".": 2, "?": 2, "!": 2, ":": 1, ";": 1, "other": 0}
    by = dict(zip(CLASSES, class_map(FINE).tolist()))
    assert by == {"": 0, ",": 1, ".": 2, "?": 3, "!": 2, ":": 1, ";": 1, "other": 0}


def test_class_evidence_divides_out_the_base_rate():
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    rows = class_evidence(probs, PAPER, prior=[0.8, 0.1, 0.1])
    assert rows.shape == (2, len(CLASSES))
    assert rows[0, CLASSES.index("")] == pytest.approx(0.7 / 0.8)
    assert rows[0, CLASSES.index(";")] == pytest.approx(2.0)
    assert rows[1, CLASSES.index("?")] == pytest.approx(8.0)
    assert np.array_equal(class_evidence(probs, PAPER)[:, CLASSES.index(".")], probs[:, 2])
    with pytest.raises(ValueError, match="E962"):
        class_evidence(probs, FINE)
    with pytest.raises(ValueError, match="E962"):
        class_evidence(probs, PAPER, prior=[1.0, 0.0, 1.0])


def test_combine_evidence():
    a = np.array([[1.0, 2.0, 4.0, 1, 1, 1, 1, 1]])
    b = np.array([[3.0, 1.0, 1.0, 1, 1, 1, 1, 1]])
    assert combine_evidence([(a, 0.0), (None, 2.0)]) is None
    got = combine_evidence([(a, 1.0), (b, 2.0)])
    want = a * b ** 2
    assert np.allclose(got, want / want.max())
    assert got.max() == 1.0
    with pytest.raises(ValueError, match="E962"):
        combine_evidence([(a, -1.0)])
    with pytest.raises(ValueError, match="E962"):
        combine_evidence([(a, 1.0), (np.ones((2, len(CLASSES))), 1.0)])


def _rows(s, f_after_first: float):
    """UPP-like evidence: no mark after every word, but a full stop after the first with
    probability ``f_after_first``."""
    probs = np.tile([0.98, 0.01, 0.01], (len(s.words), 1))
    probs[0] = [1.0 - f_after_first - 0.001, 0.001, f_after_first]
    return class_evidence(probs, PAPER, prior=[0.85, 0.08, 0.07])


def test_weight_zero_is_the_plain_decoder_bit_for_bit(model, sentences):
    want = restore_sentences(model, sentences)
    evidence = [combine_evidence([(_rows(s, 0.99), 0.0)]) for s in sentences]
    assert evidence == [None] * len(sentences)
    got = restore_with_lexical(model, [[s] for s in sentences], evidence, 1.0)
    assert [[(c.surface, c.prob) for c in sent] for sent in got] == \
        [[(c.surface, c.prob) for c in sent] for sent in want]


def test_evidence_flips_a_choice(model, sentences):
    s = next(s for s in sentences if len(s.words) > 6)
    base = restore_sentences(model, [s])[0]
    assert mark_class(base[1].surface) == ""  # punctgen alone: no mark after the first word
    rows = _rows(s, 0.99)
    weak = restore_with_lexical(model, [[s]], [combine_evidence([(rows, 0.01)])], 1.0)[0]
    assert [c.surface for c in weak] == [c.surface for c in base]
    strong = restore_with_lexical(model, [[s]], [combine_evidence([(rows, 5.0)])], 1.0)[0]
    assert mark_class(strong[1].surface) in (".", "?", "!")  # UPP's full stop wins the slot
    assert strong[0].surface == base[0].surface  # slot 0 has no word before it
