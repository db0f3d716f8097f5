"""The Full rephrasing setting of spacy_punctgen/decode/rephrase.py: an ordering model fitted on
the recovered underlying trees (sample treebank, shipped model)."""
from collections import Counter

import numpy as np
import pytest
from rephrase_helpers import is_projective, sample_items

from spacy_punctgen.data.preprocess import (
    PunctSentence,
)
from spacy_punctgen.decode.rephrase import (
    OrderModel,
    UnderlyingTree,
    _offsets,
    own_keys,
    rephrase_sentence,
    surface_tree,
    underlying_tree,
    underlying_word_order,
)


@pytest.fixture(scope="module")
def data():
    model, items = sample_items()
    pairs = [p for p, _ in model.analyze([s for _, s in items])]
    under = [(s, p, underlying_tree(s, p)) for (_, s), p in zip(items, pairs) if p is not None]
    return model, items, under, OrderModel.fit_underlying(t for _, _, t in under)


def test_underlying_model_never_sees_punctuation(data):
    _, items, under, om = data
    # the underlying trees hold the words only: no punctuation node, so no punct dependent
    assert all("punct" not in t.deprels and len(t.heads) == len(s) for s, _, t in under)
    assert om.underlying and om.stats and not any(rel == "punct" for _, rel in om.stats)
    # the surface model, fitted on the same sentences, does order punctuation dependents
    surface = OrderModel.fit(surface_tree(u, s) for u, s in items)
    assert any(rel == "punct" for _, rel in surface.stats) and not surface.underlying
    # its ranks count words only: a punctuation token between a word and its head pushes the
    # word one rank further out in the surface tree, never nearer, never to the other side
    pushed = 0
    for u, s in items:
        st = surface_tree(u, s)
        so = _offsets(st.heads)
        uo = _offsets(s.heads)
        for t, w in enumerate(st.word):
            if w >= 0:
                assert so[t] * uo[w] > 0 or so[t] == uo[w] == 0
                assert abs(so[t]) >= abs(uo[w])
                pushed += abs(so[t]) > abs(uo[w])
    assert pushed > 0
    assert sum(surface.stats[k] != om.stats[k] for k in om.stats) >= 5


def test_ranks_count_words_only():
    # "If true , the caper failed ." with the comma and the dot as dependents of "failed"
    surface_heads = [1, 5, 5, 4, 5, -1, 5]  # If true , the caper failed .
    under_heads = [1, 4, 3, 4, -1]  # If true the caper failed
    assert _offsets(surface_heads)[1] == -3  # "true" (advcl): beyond the subject and the comma
    assert _offsets(under_heads)[1] == -2  # only the subject between


def test_full_reordering_keeps_words_and_projectivity(data):
    model, _, under, om = data
    rng = np.random.default_rng(0)
    phi, moved = model.phi(), 0
    for s, pr, tree in under:
        order = underlying_word_order(tree, om.keys(tree, rng))
        assert sorted(order) == list(range(len(s)))
        moved += order != list(range(len(s)))
        r = rephrase_sentence(model, s, order, pr, phi)
        assert Counter(r.words) == Counter(s.words) and r.words == [s.words[o] for o in order]
        assert is_projective(r.heads)
        assert len(r.slots) == len(s) + 1
        # no punctuation token comes back as a word
        assert all(t for slot in r.slots for t in slot)
    assert moved > len(under) // 2


def test_full_is_deterministic_under_a_seed(data):
    _, _, under, om = data
    draw = lambda seed: [underlying_word_order(t, om.keys(t, rng)) for rng in [np.random.default_rng(seed)]
                         for _, _, t in under]
    assert draw(7) == draw(7)
    assert draw(7) != draw(8)


def test_identity_order_gives_back_the_surface(data):
    model, _, under, _ = data
    phi, same = model.phi(), 0
    for s, pr, tree in under:
        order = underlying_word_order(tree, own_keys(tree.heads))
        # the sample's preprocessed trees are projective: their own ranks give their own order
        assert order == list(range(len(s)))
        r = rephrase_sentence(model, s, order, pr, phi)
        same += [tuple(x) for x in r.slots] == [tuple(x) for x in s.slots]
    # as for Half (tests/decode/test_rephrase.py): the channel's mode is the observed surface
    # for nearly every sentence
    assert same >= 0.94 * len(under)


def test_an_order_model_that_keeps_every_rank_keeps_the_order(data):
    model, _, under, _ = data
    # zero spread and each relation's mean at a rank it never leaves: a model whose draws are
    # the original ranks for a sentence with one dependent per side
    s, pr, tree = next((s, p, t) for s, p, t in under if len(s) == 3 and sorted(_offsets(t.heads)) == [-1, 0, 1])
    fixed = OrderModel({(tree.upos[h], tree.deprels[i]): (float(o), 0.0)
                        for i, (h, o) in enumerate(zip(tree.heads, _offsets(tree.heads))) if h >= 0}, underlying=True)
    order = underlying_word_order(tree, fixed.keys(tree, np.random.default_rng(0)))
    assert order == [0, 1, 2]
    r = rephrase_sentence(model, s, order, pr)
    assert r.words == s.words


def test_puncteme_conditioned_variant(data):
    _, _, under, om = data
    assert om.fine == {}
    omp = OrderModel.fit_underlying((t for _, _, t in under), punctemes=True, min_count=2)
    assert omp.fine and all(len(k) == 3 and isinstance(k[2], tuple) for k in omp.fine)
    # its coarse statistics are the plain model's
    assert omp.stats == om.stats
    # a key seen fewer than min_count times is left to the coarse statistics
    omp_all = OrderModel.fit_underlying((t for _, _, t in under), punctemes=True, min_count=1)
    assert len(omp_all.fine) > len(omp.fine)


def test_errors(data):
    _, items, under, om = data
    s, pr, tree = under[0]
    ud = next(u for u, s2 in items if s2 is s)
    surface = OrderModel.fit([surface_tree(ud, s)])
    with pytest.raises(TypeError, match="E867"):
        om.keys(surface_tree(ud, s), np.random.default_rng(0))
    with pytest.raises(TypeError, match="E867"):
        surface.keys(tree, np.random.default_rng(0))
    with pytest.raises(TypeError, match="E867"):
        OrderModel.fit_underlying([surface_tree(ud, s)])
    with pytest.raises(TypeError, match="E867"):
        OrderModel.fit([tree])
    with pytest.raises(ValueError, match="E868"):
        OrderModel.fit_underlying([tree], min_count=0)
    with pytest.raises(ValueError, match="E865"):
        underlying_tree(s, pr[:-1])
    with pytest.raises(ValueError, match="E863"):
        OrderModel.fit_underlying([UnderlyingTree(["VERB"], [-1], ["root"], [((), ())])])
    one = PunctSentence(words=["Go"], upos=["VERB"], xpos=["VB"], deprels=["root"], heads=[-1], slots=[(), ("!",)])
    assert underlying_tree(one, [((), ("!",))]).pairs == [((), ("!",))]
