"""Training the paper's correction model (spacy_punctgen/training/correction.py)."""
import numpy as np
import pytest

from spacy_punctgen.data.damage import DamageConfig, damage_sentences
from spacy_punctgen.model.correction import CorrectionModel, puncteme_tokens, viterbi_pair_ids
from spacy_punctgen.testing.toy import toy_model, toy_sentences
from spacy_punctgen.training.correction import lbfgs, train_correction_model, training_nodes

HEAVY = DamageConfig(missing_comma=0.5, spurious_comma=0.2, comma_splice=0.5, missing_final=0.5,
                     quote_transposition=0.5, dropped_quote=0.5)


def test_lbfgs_solves_a_quadratic():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    H = A @ A.T + np.eye(6)
    b = rng.normal(size=6)
    x, info = lbfgs(lambda x: (0.5 * x @ H @ x - b @ x, H @ x - b), np.zeros(6), max_iter=200, tol=1e-10)
    assert np.allclose(x, np.linalg.solve(H, b), atol=1e-6)
    assert info["iterations"] < 200


def test_training_nodes_pair_damaged_and_clean_trees():
    model = toy_model("r2l", seed=4)
    clean = toy_sentences()
    seeds = (1, 2, 3)
    nodes, gold, weight, stats = training_nodes(model, clean, seeds, top_k=3, config=HEAVY)
    targets = viterbi_pair_ids(model, clean)
    n_changed = sum(any(tuple(a) != tuple(b) for a, b in zip(c.slots, d.slots))
                    for s in seeds for c, d in zip(clean, damage_sentences(clean, s, HEAVY)[0]))
    assert stats["damaged_copies"] == n_changed > 0
    # every node of a clean sentence counts once per seed (unchanged: its weight; damaged: one copy each)
    assert stats["clean_impossible"] == 0
    n_nodes = sum(len(s.words) for s in clean) * len(seeds)
    skipped = sum(len(d.words) for s in seeds for c, d in zip(clean, damage_sentences(clean, s, HEAVY)[0])
                  if any(tuple(a) != tuple(b) for a, b in zip(c.slots, d.slots))
                  and viterbi_pair_ids(model, [d])[0] is None)
    assert sum(weight) == n_nodes - skipped
    assert len(nodes) == len(gold) == len(weight)
    assert set(map(tuple, np.concatenate([t for t in targets if t is not None]).tolist())) >= set(gold)
    assert any(nd.e != g for nd, g in zip(nodes, gold))  # some nodes carry an error


def test_training_fits_the_data_better_than_the_start():
    model = toy_model("r2l", seed=4)
    nodes, gold, weight, _ = training_nodes(model, toy_sentences(), (1, 2, 3, 4), top_k=3, config=HEAVY)
    cm = train_correction_model(model, toy_sentences(), seeds=(1, 2, 3, 4), top_k=3, l2=0.1, max_iter=60,
                                config=HEAVY)
    assert isinstance(cm, CorrectionModel) and cm.top_k == 3 and cm.features
    st = cm.meta["training"]
    assert st["nodes"] == len(nodes) and st["attach_scale"] == "fitted"
    start = CorrectionModel(list(cm.features), top_k=3)
    batch = start.encode(nodes, puncteme_tokens(model), gold=gold, weight=weight)
    f0 = start.objective(batch, start.get_params(), 0.1)[0]
    f1 = cm.objective(batch, cm.get_params(), 0.1)[0]
    assert f1 < f0
    fixed = train_correction_model(model, toy_sentences(), seeds=(1, 2), top_k=3, max_iter=5, attach_scale=0.5,
                                   config=HEAVY)
    assert fixed.attach_scale == 0.5 and fixed.meta["training"]["attach_scale"] == 0.5


@pytest.mark.parametrize("kw, code", [({"l2": -1.0}, "E845"), ({"max_iter": 0}, "E845"), ({"seeds": ()}, "E845"),
                                      ({"attach_scale": float("inf")}, "E845")])
def test_bad_settings(kw, code):
    with pytest.raises(ValueError, match=code):
        train_correction_model(toy_model("r2l"), toy_sentences(), **kw)


def test_no_training_nodes():
    with pytest.raises(ValueError, match="E844"):
        train_correction_model(toy_model("r2l"), [])
