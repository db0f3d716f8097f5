"""The feature dictionary built from per-unit support masks (for training memory) is
exactly the one built from every (node, candidate pair) of the training lattices."""
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.features.templates import FeatureConfig, FeatureIndex
from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.features.dictionary import features_from_groups
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.data.preprocess import preprocess_file

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def features_by_candidates(model, train):
    """The former construction: all (unit, candidate row) pairs of the lattices, then their
    (context hash, property hash) pairs."""
    ex = model.extractor
    pmax = max(t.size for t in ex.rel_tables)
    codes = []
    for prep in train:
        lat = prep.lattice
        for k in range(lat.n_candidates):
            w = int(lat.cand_node[k])
            for u in prep.units[prep.unit_ptr[w]:prep.unit_ptr[w + 1]]:
                codes.append(int(u) * pmax + int(lat.cand_row[k]))
    codes = np.unique(np.array(codes, dtype=np.int64))
    uids, rows = codes // pmax, codes % pmax
    rels, hashes = ex.unit_relations(uids), ex.unit_hashes(uids)
    ctx, prop = [], []
    for u, r, rid, h in zip(uids, rows, rels, hashes):
        for ph in ex.rel_tables[int(rid)].prop_hash[r]:
            ctx.append(h)
            prop.append(ph)
    return FeatureIndex.from_pairs(np.array(ctx, dtype=np.uint64), np.array(prop, dtype=np.uint64))


@pytest.mark.parametrize("templates", [None, ["rel", "upos", "child", "global", "inner"]])
def test_mask_features_equal_candidate_features(templates):
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    inv = PunctInventory.from_sentences(train, min_count=2, pairs_mode="halves")
    model = PunctModel(inv, FeatureConfig(templates=templates) if templates else None)
    preps = model.prepare_all(train)
    got = model._collect_features(preps)
    want = features_by_candidates(model, preps)
    assert got.size == want.size > 1000
    assert np.array_equal(got.ctx, want.ctx) and np.array_equal(got.prop, want.prop)


def test_shared_contexts_are_merged_in_order():
    hashes = np.array([7, 3, 7, 5], dtype=np.uint64)  # hash 7: two units (two relations)
    props = [np.array([1, 4], dtype=np.uint64), np.array([2, 4, 9], dtype=np.uint64)]
    got = features_from_groups(hashes, np.array([0, 1, 1, 0]), props)
    pairs = {(7, 1), (7, 4), (3, 2), (3, 4), (3, 9), (7, 2), (7, 9), (5, 1), (5, 4)}
    want = FeatureIndex.from_pairs(np.array([c for c, _ in sorted(pairs)], dtype=np.uint64),
                                   np.array([p for _, p in sorted(pairs)], dtype=np.uint64))
    assert np.array_equal(got.ctx, want.ctx) and np.array_equal(got.prop, want.prop)


def test_smoothed_sentences_are_refused():
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    model = PunctModel(PunctInventory.from_sentences(train[:20], min_count=1), smooth_delta=0.01)
    with pytest.raises(ValueError, match="smoothed"):
        model._collect_features([model.prepare(train[0], smoothed=True)])
