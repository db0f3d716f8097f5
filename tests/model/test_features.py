"""ATTACH feature templates, symmetric-mark rules, stable hashing and the feature dictionary
(on the toy sentences of ``spacy_punctgen.testing.toy``)."""
import subprocess
import sys

import numpy as np
import pytest

from spacy_punctgen.features.templates import (ALL_TEMPLATES, FeatureConfig, FeatureExtractor, FeatureIndex,
                                     is_mirror, is_unmatched, node_contexts, pair_property_strings,
                                     stable_hash)
from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.testing.toy import LQ, RQ, toy_inventory, toy_sentences


# ----------------------------------------------------------------- symmetric marks
@pytest.mark.parametrize("l,r,unmatched", [
    (("(",), (")",), False),
    (("(",), (), True),
    ((), (")",), True),
    ((LQ,), (",", RQ), False),  # r read right-to-left: ” faces “
    ((",", LQ), (RQ,), True),  # “ is at depth 2 in l, ” at depth 1 in r
    ((LQ, "("), (")", RQ), False),
    ((LQ, "("), (RQ, ")"), True),
    ((), ("?",), False),  # ? and ! need no opener
    (("\u00bf",), ("?",), False),
    (("\u00bf",), (".",), True),
    ((",",), (",",), False),
    (("\u300c",), ("\u300d",), False),
])
def test_unmatched(l, r, unmatched):
    assert is_unmatched(l, r) is unmatched


def test_mirror():
    assert is_mirror(("(",), (")",))
    assert is_mirror((LQ, "("), (")", RQ))
    assert not is_mirror((), ())
    assert not is_mirror((",",), (",",))
    assert not is_mirror(("(",), (RQ,))


# ----------------------------------------------------------------- hashing
def test_stable_hash_is_process_independent(tmp_path):
    from spacy_punctgen.testing.env import package_env

    code = "from spacy_punctgen.features.templates import stable_hash; print(stable_hash('conj|child=cc'))"
    outs = set()
    for seed in ("1", "2"):
        outs.add(subprocess.run([sys.executable, "-c", code], env=package_env(PYTHONHASHSEED=seed),
                                cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip())
    assert outs == {str(stable_hash("conj|child=cc"))}
    assert stable_hash("a") != stable_hash("b") and 0 <= stable_hash("a") < 2 ** 64


# ----------------------------------------------------------------- templates
def test_node_contexts_cover_paper_examples():
    sents = toy_sentences()
    inv = toy_inventory()
    ctx = node_contexts(sents[1], inv, ALL_TEMPLATES)  # apples , pears and plums
    conj_pears, conj_plums = ctx[1], ctx[3]
    assert "conj|upos=NOUN" in conj_pears  # N.,.,.conj
    assert "conj|child=cc" in conj_plums and "conj|child=cc" not in conj_pears  # C.ε.ε.!conj.cc
    assert "conj|child=cc|side=L" in conj_plums
    assert "conj|lout=NOUN" in conj_pears and "conj|rout=CCONJ" in conj_pears
    assert "conj|lin=CCONJ" in conj_plums and "conj|rout=EOS" in conj_plums
    assert "conj|edge=last" in conj_plums
    assert "root|edge=both" in ctx[0] and "root|dir=root" in ctx[0]
    assert "conj|prel=root|pupos=NOUN" in conj_pears
    assert "conj|lsib=HEAD" in conj_pears and "conj|rsib=conj" in conj_pears
    assert "cc|word=and" in ctx[2]
    assert "*" in ctx[2] and all(c.startswith(("conj", "*")) for c in conj_pears)
    full = node_contexts(sents[2], inv, ALL_TEMPLATES)[1]  # my: nmod:poss
    assert "nmod|full=nmod:poss" in full


def test_rare_words_become_unk():
    sents = toy_sentences()
    inv = PunctInventory.from_sentences(sents, min_count=2)
    ctx = node_contexts(sents[0], inv, ["rel", "word"])
    assert "nsubj|word=UNK" in ctx[0]  # "He" occurs once
    ctx = node_contexts(sents[2], inv, ["rel", "word"])
    assert "root|word=left" in ctx[3]  # "left" occurs twice


def test_pair_properties():
    props = pair_property_strings(("(",), (")",), ["pair", "l", "r", "shape"])
    assert props == ["P=(|)", "L=(", "R=)", "S=11M"]
    assert pair_property_strings((), (".",), ["shape"]) == ["S=01-"]
    assert pair_property_strings((LQ,), (), ["shape"]) == ["S=10U"]


def test_feature_config_validation():
    with pytest.raises(ValueError, match="unknown feature template"):
        FeatureConfig(templates=["rel", "nope"])
    with pytest.raises(ValueError, match="'rel' template is required"):
        FeatureConfig(templates=["upos"])
    with pytest.raises(ValueError, match="pair properties"):
        FeatureConfig(properties=[])
    cfg = FeatureConfig(templates=["rel", "upos"], properties=["pair"])
    assert FeatureConfig.from_dict(cfg.to_dict()) == cfg


def test_extractor_units_and_relation_tables():
    inv = toy_inventory()
    ex = FeatureExtractor(inv, FeatureConfig())
    rel_ids, ptr, units = ex.sentence_units(toy_sentences()[1])
    assert len(rel_ids) == 4 and ptr[-1] == len(units)
    assert rel_ids[1] == rel_ids[3]  # both conj
    t = ex.rel_tables[int(rel_ids[1])]
    assert tuple(t.pairs[0]) == (0, 0)  # (ε, ε) always allowed, and first
    assert t.prop_hash.shape == (t.size, 4)
    # columns: the distinct property values; each pair points at its K columns
    assert np.all(t.col_hash[t.pair_cols] == t.prop_hash)
    assert len(np.unique(t.col_hash)) == t.n_cols
    # the same context string under two relations: two units, one hash
    u1 = ex.unit_id(0, "*")
    u2 = ex.unit_id(1, "*")
    assert u1 != u2 and ex.unit_hashes(np.array([u1, u2]))[0] == ex.unit_hashes(np.array([u1, u2]))[1]
    # unmatched flags follow is_unmatched
    pm = inv.punctemes
    for rid, tab in enumerate(ex.rel_tables):
        for (l, r), u in zip(tab.pairs, tab.unmatched):
            assert bool(u) == is_unmatched(pm[l], pm[r])


def test_unseen_relation_backs_off_to_all_pairs():
    inv = toy_inventory()
    ex = FeatureExtractor(inv)
    rid = ex.relation_id("vocative")
    assert ex.rel_tables[rid].rel == "<unseen>"
    assert ex.rel_tables[rid].size == len(inv.pairs_for("vocative"))


def test_feature_index_lookup_and_unit_entries():
    ctx = np.array([5, 3, 9, 3, 5], dtype=np.uint64)
    prop = np.array([1, 2, 1, 2, 0], dtype=np.uint64)
    idx = FeatureIndex.from_pairs(ctx, prop)  # repeats removed, sorted by (ctx, prop)
    assert idx.size == 4
    assert list(zip(idx.ctx.tolist(), idx.prop.tolist())) == [(3, 2), (5, 0), (5, 1), (9, 1)]
    got = idx.lookup(np.array([[5], [9], [3]], dtype=np.uint64), np.array([[1, 2]], dtype=np.uint64))
    assert got.tolist() == [[2, -1], [3, -1], [-1, 0]]
    with pytest.raises(ValueError):
        FeatureIndex(np.array([3, 3], dtype=np.uint64), np.array([1, 1], dtype=np.uint64))
    assert FeatureIndex.empty().size == 0

    class Table:  # property values 0, 1 exist as columns 0, 1; value 2 does not
        col_hash = np.array([0, 1], dtype=np.uint64)
        n_cols = 2
    unit, col, feat = idx.unit_entries(np.array([5, 3, 7], dtype=np.uint64), Table)
    assert sorted(zip(unit.tolist(), col.tolist(), feat.tolist())) == [(0, 0, 1), (0, 1, 2)]


def test_optional_templates():
    sents = toy_sentences()
    inv = toy_inventory()
    ctx = node_contexts(sents[1], inv, ["rel", "neighbors", "dist", "len_upos", "kidset"])
    pears, and_, plums = ctx[1], ctx[2], ctx[3]
    assert "conj|nxt=conj|nupos=NOUN" in pears and "conj|nxtlen=2" in pears  # "and plums" follows
    assert "conj|prv=HEAD|pupos=NOUN" in pears  # "apples" heads the span that holds "pears"
    assert "cc|nxt=HEAD|nupos=NOUN" in and_
    assert "conj|nxt=EOS" in plums and "conj|prv=conj|pupos=NOUN" in plums
    assert "conj|ldist=3-4" not in plums and "conj|ldist=2" in plums and "conj|rdist=0" in plums
    assert "conj|upos=NOUN|len=2" in plums and "conj|kids=cc" in plums and "conj|kids=" in pears
    ctx = node_contexts(sents[3], inv, ["rel", "inner"])  # Note : it rains , “ really ” .
    assert {"root|nin=2", "root|in=,", "root|in=:", "root|in=\u201c", "root|inL=:",
            "root|inR=, \u201c"} <= set(ctx[0])
    assert "parataxis|inL=_" in ctx[2] and "advmod|nin=0" in ctx[3]
    assert not any("in=." in c or "in=\u201d" in c for c in ctx[0])  # boundary slots are not inside
    from spacy_punctgen.features.templates import DEFAULT_TEMPLATES
    assert "neighbors" not in DEFAULT_TEMPLATES and "rel" in DEFAULT_TEMPLATES
