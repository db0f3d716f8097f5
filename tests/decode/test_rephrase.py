"""Rephrasing (spacy_punctgen/decode/rephrase.py) on the sample treebank with the shipped model."""
from collections import Counter

import numpy as np
import pytest
from rephrase_helpers import is_projective, sample_items

from spacy_punctgen.data.preprocess import ABBR
from spacy_punctgen.decode.rephrase import (
    OrderModel,
    baseline_sentence,
    linearize,
    punctuated_tokens,
    rephrase_sentence,
    surface_tree,
    word_order,
)


@pytest.fixture(scope="module")
def data():
    model, items = sample_items()
    trees = [surface_tree(u, s) for u, s in items]
    analysed = model.analyze([s for _, s in items])
    return model, items, trees, OrderModel.fit(trees), [p for p, _ in analysed]


def test_identity_order_gives_back_the_surface(data):
    model, items, _, _, pairs = data
    phi, kept, same = model.phi(), 0, 0
    for (_, s), pr in zip(items, pairs):
        if pr is None:
            continue
        kept += 1
        r = rephrase_sentence(model, s, list(range(len(s))), pr, phi)
        same += [tuple(x) for x in r.slots] == [tuple(x) for x in s.slots]
        assert r.words == s.words and r.heads == s.heads
    # the channel's most probable surface of the Viterbi underlying strings is the observed one
    # for nearly every sentence (measured: 163 of 170 here; copying each underlying string
    # unchanged to the surface instead reproduces only 152)
    assert kept >= 160 and same >= 0.94 * kept


def test_reordering_keeps_words_and_projectivity(data):
    model, items, trees, om, pairs = data
    rng = np.random.default_rng(0)
    phi, moved = model.phi(), 0
    for (_, s), tree, pr in zip(items, trees, pairs):
        keys = om.keys(tree, rng)
        order = word_order(tree, keys)
        moved += order != list(range(len(s)))
        base = baseline_sentence(tree, keys)
        # the baseline keeps every token, punctuation included
        orig = punctuated_tokens(s)
        assert Counter(base) == Counter(orig)
        if pr is None:
            continue
        r = rephrase_sentence(model, s, order, pr, phi)
        assert Counter(r.words) == Counter(s.words)
        assert [r.words[j] for j in range(len(s))] == [s.words[o] for o in order]
        assert is_projective(r.heads)
        assert len(r.slots) == len(s) + 1
        # the word order is the baseline's once its punctuation is left out
        assert [tree.tokens[t] for t in linearize(tree.heads, keys) if tree.word[t] >= 0] == r.words
    assert moved > len(items) // 2


def test_linearize_identity_and_subtrees():
    heads = [1, -1, 3, 1, 3]
    assert linearize(heads, [-1.0, 0.0, -1.0, 1.0, 1.0]) == [0, 1, 2, 3, 4]
    # swapping node 3's subtree (2, 3, 4) in front of the root moves it whole
    assert linearize(heads, [1.0, 0.0, -1.0, -1.0, 1.0]) == [2, 3, 4, 1, 0]


def test_errors(data):
    model, items, _, _, pairs = data
    (_, s), pr = items[0], pairs[0]
    with pytest.raises(ValueError, match="E864"):
        rephrase_sentence(model, s, [0] * len(s), pr)
    with pytest.raises(ValueError, match="E865"):
        rephrase_sentence(model, s, list(range(len(s))), pr[:-1])
    with pytest.raises(ValueError, match="E863"):
        OrderModel.fit([])
    other = next(ud for ud, s2 in items if len(s2) != len(s))
    with pytest.raises(ValueError, match="E866"):
        surface_tree(other, s)


def test_abbreviation_dot_stays_after_its_word(data):
    _, items, trees, om, _ = data
    rng = np.random.default_rng(1)
    seen = 0
    for tree in trees:
        if not any(tree.abbr):
            continue
        base = baseline_sentence(tree, om.keys(tree, rng))
        for j, t in enumerate(base):
            if t == ABBR:
                seen += 1
                assert j > 0 and base[j - 1] in tree.tokens
    assert seen
