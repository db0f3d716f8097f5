"""Restoration prunes at ``RESTORE_PRUNE`` (coarser than the slot marginals' ``EXACT_PRUNE``):
its choices are those of the finer pruning up to a handful of near-ties, and no less accurate,
on the shipped sample with both shipped models."""
from pathlib import Path

import pytest

from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode import mbr
from spacy_punctgen.evaluation.metrics import aed, gold_slots
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path, restore_model_path

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.fixture(scope="module")
def gold():
    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-test.conllu")
    return sents


@pytest.mark.parametrize("which", ["en_ewt", "en_ewt_stream"])
def test_restore_pruning_chooses_as_the_finer_pruning(gold, which, monkeypatch):
    model = PunctModel.from_disk(default_model_path("en") if which == "en_ewt" else restore_model_path("en"))
    assert mbr.RESTORE_PRUNE > mbr.EXACT_PRUNE
    coarse = mbr.restore_sentences(model, gold, method="marginal")
    monkeypatch.setattr(mbr, "RESTORE_PRUNE", mbr.EXACT_PRUNE)
    fine = mbr.restore_sentences(model, gold, method="marginal")
    pairs = [(a.surface, b.surface) for x, y in zip(coarse, fine) for a, b in zip(x, y)]
    assert sum(a != b for a, b in pairs) <= max(1, len(pairs) // 500)
    slots = gold_slots(gold)
    assert aed(slots, [[c.surface for c in s] for s in coarse])["edits"] <= \
        aed(slots, [[c.surface for c in s] for s in fine])["edits"] + 1
    for x, y in zip(coarse, fine):  # the chosen string's probability: mass pruned at most
        for a, b in zip(x, y):
            if a.surface == b.surface:
                assert a.prob == pytest.approx(b.prob, rel=0.02, abs=1e-4)
