"""The paper's correction method (spacy_punctgen/decode/correct.py, ``method="paper"``): the exact slot
marginals and MBR choices against brute-force enumeration of every corrected underlying tree."""
import itertools
from collections import Counter

import numpy as np
import pytest

from spacy_punctgen.data.damage import DamageConfig, damage_sentences
from spacy_punctgen.decode import mbr
from spacy_punctgen.decode.priors import Prior, channel_for, check_sentence
from spacy_punctgen.decode.correct import (CORRECTION_METHODS, correct, correct_sentences, correct_sentences_paper,
                                           paper_node_distributions)
from spacy_punctgen.decode.marginal import marginal_distributions
from spacy_punctgen.model.channel import channel_distribution
from spacy_punctgen.model.correction import CorrectionModel, viterbi_pair_ids
from spacy_punctgen.testing.reference import underlying_slots
from spacy_punctgen.testing.toy import toy_model, toy_sentences
from spacy_punctgen.training.correction import train_correction_model

HEAVY = DamageConfig(missing_comma=0.5, spurious_comma=0.2, comma_splice=0.5, missing_final=0.5,
                     quote_transposition=0.5, dropped_quote=0.5)


@pytest.fixture(scope="module")
def setup():
    model = toy_model("r2l", seed=4)
    cm = train_correction_model(model, toy_sentences(), seeds=(1, 2, 3, 4), top_k=3, l2=0.5, max_iter=30,
                                config=HEAVY)
    # random weights on top, so that the test does not depend on what training found
    cm.set_params(cm.get_params() + np.random.default_rng(0).normal(0, 0.7, len(cm.get_params())))
    bad, _ = damage_sentences(toy_sentences(), seed=7, config=HEAVY)
    return model, cm, bad


def _brute(model, sentence, dist):
    """Per slot, ``p(x_i)`` by enumerating every T'_c (the product of the nodes' candidates)."""
    phi, sym = model.phi(), model.inventory.symbols
    out = [Counter() for _ in range(len(sentence.words) + 1)]
    for rows in itertools.product(*[range(len(c)) for c, _ in dist]):
        prior = float(np.prod([p[r] for (_, p), r in zip(dist, rows)]))
        choice = [tuple(int(v) for v in c[r]) for (c, _), r in zip(dist, rows)]
        for i, u in enumerate(underlying_slots(sentence.heads, choice, model.grammar)):
            for x, q in channel_distribution(u, phi, model.r2l).items():
                out[i][tuple(sym[s] for s in (x[1:] if i == 0 else x))] += prior * q
    return out


def _risk(marg, y):
    return sum(p * mbr.edit_matrix([y], [x])[0, 0] for x, p in marg.items())


def test_marginals_and_choices_equal_brute_force(setup):
    model, cm, bad = setup
    dists = paper_node_distributions(model, cm, bad)
    checked = 0
    for k, (s, dist) in enumerate(zip(bad, dists)):
        if dist is None:
            continue
        brute = _brute(model, s, dist)
        first, last = check_sentence(s)
        prior = Prior([c for c, _ in dist], [p for _, p in dist], first, last)
        exact = marginal_distributions([[prior]], model.grammar, channel_for(model).phi, model.r2l,
                                       prune=0.0, beam=10 ** 6, symbols=model.inventory.symbols)[0]
        for b, e in zip(brute, exact):
            assert sum(b.values()) == pytest.approx(1.0)
            assert set(e) <= set(b)
            assert {x: p for x, p in b.items() if p > 1e-12} == pytest.approx(
                {x: e.get(x, 0.0) for x, p in b.items() if p > 1e-12}, abs=1e-9)
        got = correct_sentences_paper(model, cm, [s])[0]
        for i, (b, c) in enumerate(zip(brute, got)):
            strings = sorted(b, key=lambda x: (-b[x], x))
            best = strings[mbr.mbr_index(strings, strings, [b[x] for x in strings])]
            assert _risk(b, c.surface) == pytest.approx(_risk(b, best), abs=1e-9)
            assert c.observed == tuple(s.slots[i])
            assert c.prob == pytest.approx(b[c.surface], abs=1e-6)  # the decoder prunes below 1e-7
        checked += 1
    assert checked >= 3


def test_identity_model_reduces_to_the_channel_of_the_viterbi_tree(setup):
    """A correction model that always keeps ``e``: each slot's choice is the MBR string of the channel's
    distribution over the surfaces of ``u_i(T'_e)``, the Viterbi underlying tree of the input."""
    model, _, bad = setup
    keep = CorrectionModel(["same"], np.array([60.0]), attach_scale=0.0, top_k=3)
    out = correct_sentences_paper(model, keep, bad)
    sym = model.inventory.symbols
    for s, ch, E in zip(bad, out, viterbi_pair_ids(model, bad)):
        if E is None:
            continue
        us = underlying_slots(s.heads, [tuple(e) for e in E.tolist()], model.grammar)
        for i, (u, c) in enumerate(zip(us, ch)):
            d = {tuple(sym[t] for t in (x[1:] if i == 0 else x)): q
                 for x, q in channel_distribution(u, model.phi(), model.r2l).items()}
            strings = sorted(d, key=lambda x: (-d[x], x))
            assert c.surface == strings[mbr.mbr_index(strings, strings, [d[x] for x in strings])]


def test_dispatch_and_errors(setup):
    model, cm, bad = setup
    assert CORRECTION_METHODS == ("noise", "paper")
    assert correct(model, bad[:2], "paper", correction_model=cm) == correct_sentences_paper(model, cm, bad[:2])
    assert correct(model, bad[:2]) == correct_sentences(model, bad[:2])
    with pytest.raises(ValueError, match="E841"):
        correct(model, bad, "bogus")
    with pytest.raises(ValueError, match="E842"):
        correct(model, bad, "paper")
