"""Depunctuation, slots, quote direction, ABBR., omissions and projectivisation."""
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_punctgen.data.conllu import UDSentence, read_conllu
from spacy_punctgen.data.preprocess import (
    ABBR, OMIT_EMPTY, OMIT_NONLEAF, PrepStats, PunctSentence, detect_quote_xpos,
    is_abbreviation, preprocess_file, preprocess_sentence, subtree_spans,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures"
EN = FIX / "en_fixture-ud-train.conllu"
ES = FIX / "es_fixture-ud-test.conllu"
UD = Path(__file__).resolve().parents[3] / "shared" / "ud"
LQ, RQ, LS, RS = "\u201c", "\u201d", "\u2018", "\u2019"


@pytest.fixture(scope="module")
def en():
    sents, stats = preprocess_file(EN)
    return {s.sent_id: s for s in sents}, stats


@pytest.fixture(scope="module")
def es():
    sents, stats = preprocess_file(ES)
    return sents, stats


def test_abbreviation_dot_and_commas(en):
    s = en[0]["en-1-abbr"]
    assert isinstance(s, PunctSentence)
    assert s.words == ["We", "sell", "apples", "pears", "etc", "at", "Acme", "Inc"]
    assert s.slots == [(), (), (), (",",), (",",), (ABBR,), (), (), (ABBR,)]
    assert s.heads == [1, -1, 1, 2, 2, 7, 7, 1]
    assert s.deprels[1] == "root" and s.upos[4] == "X" and s.xpos[4] == "FW"
    assert len(s.slots) == len(s.words) + 1


def test_abbr_goes_first_in_its_slot():
    ud = UDSentence(ids=[1, 2, 3], forms=["He", "left", "etc."], upos=["PRON", "VERB", "X"],
                    xpos=["_"] * 3, heads=[2, 0, 2], deprels=["nsubj", "root", "obj"],
                    space_after=[True, True, False])
    ud.ids.append(4); ud.forms.append("."); ud.upos.append("PUNCT"); ud.xpos.append("_")
    ud.heads.append(2); ud.deprels.append("punct"); ud.space_after.append(True)
    s, reason = preprocess_sentence(ud)
    assert reason is None and s.slots[-1] == (ABBR, ".")


@pytest.mark.parametrize("form, expected", [("etc.", True), ("U.S.", True), ("Inc.", True),
                                            (".", False), ("a", False), ("...", False), ("etc", False)])
def test_is_abbreviation(form, expected):
    assert is_abbreviation(form) is expected


def test_ewt_style_xpos_quote_agrees_with_position(en):
    # '("' : the quote follows "(" with no space and is written close up to "I": it opens
    s = en[0]["en-2-mwt-quote"]
    assert s.words == ["I", "ca", "n't"]
    assert s.slots == [("(", LQ), (), (), (".",)]
    assert en[0]["en-7-quoted"].slots == [(), (), (LQ,), (".", RQ)]


def test_without_xpos_the_same_quote_opens_by_position():
    # close up to an opening bracket on its left counts as free: the spacing alone says "opening"
    ud = {s.sent_id: s for s in read_conllu(EN)}["en-2-mwt-quote"]
    s, _ = preprocess_sentence(ud, quote_xpos=False)
    assert s.slots[0] == ("(", LQ)


def test_quote_xpos_detection():
    assert detect_quote_xpos(EN, read_conllu(EN)) is True
    assert detect_quote_xpos(ES, read_conllu(ES)) is False  # not English: never trusted
    # the workflow's copies keep the treebank's name in their folder, not in the file name
    sents = read_conllu(EN)
    assert detect_quote_xpos("corpus/en_ewt/punct/train.conllu", sents) is True
    assert detect_quote_xpos("corpus/es_gsd/punct/train.conllu", sents) is False


def test_quotes_paired_by_head_and_position_fallback(es):
    sents, _ = es
    paired, opening, closing, single, _mwt = sents
    # 'Dijo " sí " ayer.': both quotes spaced, so only head pairing gets them right
    assert paired.slots == [(), (LQ,), (RQ,), (".",)]
    assert opening.slots == [(LQ,), (), (".",)]  # '"Ven aquí.'  (sentence start, no space after)
    assert closing.slots == [(), (), (), (".", RQ)]  # 'Y se fue."'
    assert single.slots == [(), (), (LS,), (RS,), (".",)]


def test_sentence_initial_comma_in_slot_0(en):
    s = en[0]["en-3-initial-comma"]
    assert s.slots[0] == (",",) and "^" not in s.slots[0]
    assert s.words == ["and", "then", "we", "left"] and s.heads == [3, 3, 3, -1]


def test_omissions_and_stats(en):
    sents, stats = en
    assert "en-4-nonleaf" not in sents and "en-5-only-punct" not in sents
    assert isinstance(stats, PrepStats)
    assert (stats.sentences, stats.kept, stats.omitted_nonleaf, stats.omitted_empty) == (7, 5, 1, 1)
    assert stats.nonprojective == 1
    assert stats.words == 41 and stats.punct_tokens == 13 and stats.removed_tokens == 13
    assert stats.punct_types == {",", ".", "(", ABBR, LQ, RQ}


def test_omit_reasons():
    sents = {s.sent_id: s for s in read_conllu(EN)}
    assert preprocess_sentence(sents["en-4-nonleaf"]) == (None, OMIT_NONLEAF)
    assert preprocess_sentence(sents["en-5-only-punct"]) == (None, OMIT_EMPTY)


def test_deprel_punct_on_non_punct_upos_is_removed_but_not_counted_as_punct():
    ud = UDSentence(ids=[1, 2, 3], forms=["5", "$", "each"], upos=["NUM", "SYM", "ADV"],
                    xpos=["_"] * 3, heads=[0, 1, 1], deprels=["root", "punct", "advmod"],
                    space_after=[True] * 3)
    s, _ = preprocess_sentence(ud)
    assert s.words == ["5", "each"] and s.slots == [(), ("$",), ()]


def test_nonprojective_tree_is_lifted(en):
    s = en[0]["en-6-nonprojective"]
    assert s.nonprojective
    # "issue" (6) hung from "hearing" (1) across "scheduled"; lifted to "scheduled" (3)
    assert s.heads == [1, 3, 3, -1, 6, 6, 3, 3]
    assert s.deprels[6] == "nmod"  # original label kept, not spaCy's decorated one
    assert s.deprels[1] == "nsubj:pass"  # subtype kept
    for a, b in subtree_spans(s.heads):
        assert b >= a


def test_multi_root_forest_kept_and_crossing_lifted():
    # roots "a" and "b"; "c" hangs from "a" across root "b"
    ud = UDSentence(ids=[1, 2, 3], forms=["a", "b", "c"], upos=["X"] * 3, xpos=["_"] * 3,
                    heads=[0, 0, 1], deprels=["root", "root", "dep"], space_after=[True] * 3)
    s, _ = preprocess_sentence(ud)
    assert s.nonprojective and s.heads == [-1, -1, -1]
    ud.heads = [0, 0, 2]
    s, _ = preprocess_sentence(ud)
    assert not s.nonprojective and s.heads == [-1, -1, 1]


def test_subtree_spans():
    assert subtree_spans([1, -1, 1, 2]) == [(0, 0), (0, 3), (2, 3), (3, 3)]
    assert subtree_spans([-1, -1]) == [(0, 0), (1, 1)]
    with pytest.raises(ValueError):
        subtree_spans([1, 0])


@st.composite
def trees(draw):
    n = draw(st.integers(1, 12))
    order = draw(st.permutations(range(n)))
    heads = [-1] * n
    for k, node in enumerate(order[1:], 1):  # attach to an earlier node: always a tree
        heads[node] = order[draw(st.integers(0, k - 1))]
    return heads


@settings(max_examples=60, deadline=None)
@given(trees(), st.booleans())
def test_projectivised_trees_have_contiguous_subtrees(heads, final_period):
    n = len(heads)
    ud_heads = [h + 1 for h in heads]  # -1 -> 0 (root)
    ud = UDSentence(ids=list(range(1, n + 1)), forms=[f"w{i}" for i in range(n)], upos=["NOUN"] * n,
                    xpos=["_"] * n, heads=ud_heads,
                    deprels=["root" if h == 0 else "dep" for h in ud_heads], space_after=[True] * n)
    if final_period:  # a leaf period hanging from the root
        ud.ids.append(n + 1); ud.forms.append("."); ud.upos.append("PUNCT"); ud.xpos.append(".")
        ud.heads.append(ud_heads.index(0) + 1); ud.deprels.append("punct"); ud.space_after.append(True)
    s, reason = preprocess_sentence(ud)
    assert reason is None and len(s.slots) == n + 1
    assert s.slots[n] == ((".",) if final_period else ())
    for node, (a, b) in enumerate(subtree_spans(s.heads)):
        inside = [d for d in range(n) if _dominates(s.heads, node, d)]
        assert inside == list(range(a, b + 1))
    assert s.nonprojective == (s.heads != heads)


def _dominates(heads, anc, node):
    while node != -1:
        if node == anc:
            return True
        node = heads[node]
    return False


@pytest.mark.ud
def test_zh_gsd_ud14_totals():
    folder = UD / "zh_gsd_ud14"
    if not folder.is_dir():
        pytest.skip(f"UD data not available at {folder}")
    total = PrepStats()
    for path in sorted(folder.glob("*.conllu")):
        total += preprocess_file(path)[1]
    assert total.sentences == 4997
    assert total.words == 123283
    assert f"{total.punct_pct:.1f}" == "13.8"
    assert total.omitted_nonleaf == 3 and total.omitted_empty == 0

def test_already_depunctuated_words_are_not_split_again():
    # a parser's output on depunctuated words: "Mr.." was preprocessed to "Mr." + ABBR.,
    # and preprocessing the parse again must keep "Mr." (not "Mr")
    ud = UDSentence(ids=[1, 2], forms=["Mr..", "left"], upos=["PROPN", "VERB"], xpos=["_"] * 2,
                    heads=[2, 0], deprels=["nsubj", "root"], space_after=[True, False])
    first, _ = preprocess_sentence(ud)
    assert first.words == ["Mr.", "left"] and first.slots[1] == (ABBR,)
    again = UDSentence(ids=[1, 2], forms=first.words, upos=["PROPN", "VERB"], xpos=["_"] * 2,
                       heads=[2, 0], deprels=["nsubj", "root"], space_after=[True, False])
    s, _ = preprocess_sentence(again, split_abbreviations=False)
    assert s.words == first.words and s.slots == [(), (), ()]
    s2, _ = preprocess_sentence(again)
    assert s2.words == ["Mr", "left"]
