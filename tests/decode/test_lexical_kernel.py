"""The product of experts in the compiled decoder (cython_ext/slot_mbr.pyx, "Class factors";
decode/lexical.py restore_with_lexical) against its Python formulation (lexical_choices over
slot_distributions): the classes of the strings, the choices and their probabilities; weight 0
or evidence that says nothing gives the plain decoder's choices bit for bit."""
import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.lexical import (UNRANKED, class_factors, combine_slot, lexical_choices,
                                           restore_with_lexical, slot_distributions, string_classes)
from spacy_punctgen.decode.marginal import (EXACT_SUPPORT_MIN, RESTORE_PRUNE, StringClasses, marginal_choices,
                                            marginal_slot_choices, marginal_slot_distributions)
from spacy_punctgen.decode.priors import mixture_priors
from spacy_punctgen.decode.risk import expected_distances, risk_weights
from spacy_punctgen.inference.kernels import surface_classes
from spacy_punctgen.model.lexical import CLASSES, mark_class
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.model.serialize import read_lexical
from spacy_punctgen.pipeline.shipped import lexical_expert_path, restore_model_path
from spacy_punctgen.testing.problems import random_projective_heads
from spacy_punctgen.testing.toy import toy_model, toy_sentences

EWT_DEV = Path(__file__).resolve().parents[3] / "shared" / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu"
#: symbols that exercise every rule of mark_class: terminals inside longer symbols, "…" and "..."
#: as ".", exact separators, the abbreviation dot, the empty symbol, other marks
ODD_SYMBOLS = ["?", "!", ".", "…", "...", "….", "?!", "!.", ".?", "!!!!!!!!!!?", ",", ",,", ",?", ":", ".:", ";",
               "ABBR.", "", "“", "”", "(", "-", "<unk>", "^", "x:", ";;"]


def kernel_classes(surfaces, symbols):
    """The class the kernel reads for each surface (a tuple of symbol names)."""
    ids = {s: j for j, s in enumerate(symbols)}
    table = string_classes(symbols)
    flat = np.array([ids[y] for s in surfaces for y in s], dtype=np.int32)
    ptr = np.zeros(len(surfaces) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in surfaces], out=ptr[1:])
    return surface_classes(flat, ptr, np.asarray(table.rank), np.asarray(table.cls), table.empty)


def python_classes(surfaces):
    return np.array([CLASSES.index(mark_class(s)) for s in surfaces], dtype=np.int32)


def test_kernel_class_is_mark_class_on_random_tuples():
    symbols = sorted(set(ODD_SYMBOLS) | set(PunctModel.from_disk(restore_model_path("en")).inventory.symbols))
    rng = np.random.default_rng(0)
    surfaces = [()] + [(s,) for s in symbols] + list(itertools.product(ODD_SYMBOLS, repeat=2))
    surfaces += [tuple(rng.choice(symbols, size=int(rng.integers(1, 6)))) for _ in range(20000)]
    got, want = kernel_classes(surfaces, symbols), python_classes(surfaces)
    bad = [(s, CLASSES[g], CLASSES[w]) for s, g, w in zip(surfaces, got, want) if g != w]
    assert not bad, bad[:10]


def test_string_classes_by_hand():
    table = string_classes(["?", ".", ",", "ABBR.", "“", "…"])
    assert [CLASSES[c] for c in table.cls] == ["?", ".", ",", "", "other", "."]
    assert table.rank[0] < table.rank[1] < table.rank[2] < table.rank[4] < table.rank[3] == UNRANKED
    assert table.rank[5] == table.rank[1] and CLASSES[table.empty] == ""


def same_choices(a, b):
    return [[(c.surface, c.prob.hex()) for c in s] for s in a] == [[(c.surface, c.prob.hex()) for c in s] for s in b]


def compare_with_reference(model, tree_sets, evidence, weight, empty_weight, tree_weights=None):
    """(slots, ties): the compiled choices against lexical_choices over slot_distributions, slot by
    slot: equal strings with probabilities equal to 1e-12 (relative), or two candidates whose risks
    under the product tie to 1e-12 (counted); anything else fails."""
    got = restore_with_lexical(model, tree_sets, evidence, weight, empty_weight, tree_weights)
    dists = slot_distributions(model, tree_sets, tree_weights)
    want = [lexical_choices(d, q, weight, empty_weight) for d, q in zip(dists, evidence)]
    slots = ties = 0
    for k, (g_sent, w_sent) in enumerate(zip(got, want)):
        assert len(g_sent) == len(w_sent)
        for i, (g, w) in enumerate(zip(g_sent, w_sent)):
            slots += 1
            if g.surface == w.surface:
                assert g.prob == pytest.approx(w.prob, rel=1e-12, abs=0), (k, i)
                continue
            q = evidence[k]
            prod = dists[k][i] if q is None or i == 0 else combine_slot(dists[k][i], q[i - 1], weight, {})
            support = [s for s, v in prod.items() if v >= EXACT_SUPPORT_MIN] or list(prod)[:1]
            r = expected_distances([g.surface, w.surface], support, risk_weights(prod, support, empty_weight))
            assert abs(r[0] - r[1]) <= 1e-12 * max(1.0, abs(r[1])), (k, i, g, w, r)
            ties += 1
    return slots, ties


def toy_tree_sets(rng, n_trees):
    """The toy sentences without their marks, each under its own tree and ``n_trees - 1`` random ones."""
    sets = []
    for s in toy_sentences():
        s = dataclasses.replace(s, slots=[()] * len(s.slots))
        sets.append([s] + [dataclasses.replace(s, heads=random_projective_heads(rng, len(s.words)))
                           for _ in range(n_trees - 1)])
    return sets


@pytest.mark.parametrize("direction", ["l2r", "r2l"])
@pytest.mark.parametrize("n_trees", [1, 3])
def test_toy_choices_equal_the_python_product(direction, n_trees):
    model = toy_model(direction)
    rng = np.random.default_rng([n_trees, len(direction)])
    slots = ties = 0
    for trial in range(6):
        tree_sets = toy_tree_sets(rng, n_trees)
        evidence = [np.exp(rng.normal(0, 2.0, size=(len(ts[0].words), len(CLASSES)))) for ts in tree_sets]
        evidence[trial % len(evidence)] = None  # a sentence without evidence among the others
        weight = float(rng.choice([0.5, 1.0, 2.5]))
        empty_weight = float(rng.choice([1.0, 0.5]))
        tree_weights = None if n_trees == 1 or trial % 2 else [rng.dirichlet(np.ones(n_trees)) for _ in tree_sets]
        a, b = compare_with_reference(model, tree_sets, evidence, weight, empty_weight, tree_weights)
        slots, ties = slots + a, ties + b
    print(f"toy {direction}, {n_trees} trees: {slots} slots, {ties} risk ties")
    assert ties <= slots // 100


@pytest.mark.parametrize("direction", ["l2r", "r2l"])
def test_weight_zero_or_flat_evidence_is_the_plain_decoder_bit_for_bit(direction):
    model = toy_model(direction)
    rng = np.random.default_rng(7)
    tree_sets = toy_tree_sets(rng, 2)
    tree_weights = [rng.dirichlet(np.ones(2)) for _ in tree_sets]
    for empty_weight in (1.0, 0.4):
        prior_sets, channel = mixture_priors(model, tree_sets)
        plain = marginal_slot_choices(model, prior_sets, channel, empty_weight, weights=tree_weights)
        noisy = [np.exp(rng.normal(0, 3.0, size=(len(ts[0].words), len(CLASSES)))) for ts in tree_sets]
        flat = [np.repeat(np.exp(rng.normal(0, 3.0, size=(len(ts[0].words), 1))), len(CLASSES), axis=1)
                for ts in tree_sets]
        assert same_choices(restore_with_lexical(model, tree_sets, noisy, 0.0, empty_weight, tree_weights), plain)
        for weight in (0.5, 3.0):
            assert same_choices(restore_with_lexical(model, tree_sets, flat, weight, empty_weight, tree_weights), plain)
        assert same_choices(restore_with_lexical(model, tree_sets, [None] * len(tree_sets), 1.0, empty_weight,
                                                 tree_weights), plain)
        # evidence that does say something changes some choice (so the comparisons above can fail)
        strong = [np.where(np.arange(len(CLASSES)) == CLASSES.index("?"), 1e6, 1.0) * np.ones((len(ts[0].words), 1))
                  for ts in tree_sets]
        assert not same_choices(restore_with_lexical(model, tree_sets, strong, 1.0, empty_weight, tree_weights), plain)


def test_class_factors_are_checked():
    model = toy_model("l2r")
    s = dataclasses.replace(toy_sentences()[0], slots=[()] * 4)
    prior_sets, channel = mixture_priors(model, [[s]])
    table = string_classes(model.inventory.symbols)
    kw = dict(prune=RESTORE_PRUNE, beam=300, candidates=32, support_min=EXACT_SUPPORT_MIN)
    good = np.ones((4, len(CLASSES)))
    with pytest.raises(ValueError, match="E192"):
        marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, class_factors=[good, good],
                         string_classes=table, **kw)
    for bad in (np.ones((3, len(CLASSES))), np.full((4, len(CLASSES)), np.nan), -good, np.ones(4)):
        with pytest.raises(ValueError, match="E193"):
            marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, class_factors=[bad],
                             string_classes=table, **kw)
    with pytest.raises(ValueError, match="E194"):
        marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, class_factors=[good], **kw)
    with pytest.raises(ValueError, match="E194"):
        marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, class_factors=[good],
                         string_classes=StringClasses(table.rank, table.cls + len(CLASSES), table.empty), **kw)
    with pytest.raises(ValueError, match="E194"):
        marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, class_factors=[good],
                         string_classes=StringClasses(table.rank[:2], table.cls[:2], table.empty), **kw)
    with pytest.raises(ValueError, match="E189"):
        surface_classes(np.array([5], np.int32), np.array([0, 1], np.int64), np.zeros(2, np.int32),
                        np.zeros(2, np.int32), 0)


def test_class_factors_by_hand():
    f = class_factors(np.array([[1.0, 2.0, 4.0, 1, 1, 1, 1, 1]]), 2.0, 1)
    assert f.shape == (2, len(CLASSES))
    assert (f[0] == 1).all()
    assert f[1].tolist() == pytest.approx([1 / 16, 1 / 4, 1, 1 / 16, 1 / 16, 1 / 16, 1 / 16, 1 / 16])
    huge = class_factors(np.array([[1e300, 1.0, 1, 1, 1, 1, 1, 1]]), 50.0, 1)  # no overflow
    assert huge[1, 0] == 1.0 and np.isfinite(huge).all()


@pytest.fixture(scope="module")
def ewt():
    if not EWT_DEV.is_file():
        pytest.skip("../shared/ud/en_ewt is not here")
    sents, _ = preprocess_file(EWT_DEV)
    model = PunctModel.from_disk(restore_model_path("en"))
    expert = read_lexical(lexical_expert_path("en"))
    return model, expert, [dataclasses.replace(s, slots=[()] * len(s.slots)) for s in sents]


def test_kernel_class_is_mark_class_on_ewt_dev_surfaces(ewt):
    model, _, sents = ewt
    prior_sets, channel = mixture_priors(model, [[s] for s in sents])
    dists = marginal_slot_distributions(model, prior_sets, channel, prune=RESTORE_PRUNE)
    surfaces = sorted({s for sent in dists for d in sent for s in d})
    assert len(surfaces) > 100
    assert (kernel_classes(surfaces, model.inventory.symbols) == python_classes(surfaces)).all()


def test_ewt_choices_equal_the_python_product(ewt):
    model, expert, sents = ewt
    sents = sents[:200]
    evidence = expert.sentence_evidence([dataclasses.replace(s, words=[w.lower() for w in s.words]) for s in sents])
    slots = ties = 0
    for empty_weight in (1.0, 0.6):
        a, b = compare_with_reference(model, [[s] for s in sents], evidence, expert.weight, empty_weight)
        slots, ties = slots + a, ties + b
    print(f"EWT dev, 200 sentences x 2 empty weights: {slots} slots, {ties} risk ties")
    assert ties <= slots // 1000
