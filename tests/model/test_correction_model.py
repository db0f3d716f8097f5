"""The paper's correction model (spacy_punctgen/model/correction.py): gradient against finite
differences, probabilities, saving and loading, bad input."""
import functools

import numpy as np
import pytest

from spacy_punctgen.data.damage import DamageConfig, damage_sentences
from spacy_punctgen.model.correction import (LOGP_FLOOR, CorrectionModel, correction_inputs, puncteme_tokens,
                                             viterbi_pair_ids)
from spacy_punctgen.testing.toy import toy_model, toy_sentences

HEAVY = DamageConfig(missing_comma=0.5, spurious_comma=0.3, comma_splice=0.5, missing_final=0.5,
                     quote_transposition=0.5, dropped_quote=0.5)


@functools.lru_cache(maxsize=None)
def _nodes(top_k=3, seed=0):
    model = toy_model("r2l", seed=4)
    clean = toy_sentences()
    bad, _ = damage_sentences(clean, seed=seed, config=HEAVY)
    gold = viterbi_pair_ids(model, clean)
    err, nodes = correction_inputs(model, bad, top_k)
    keep = [k for k in range(len(clean)) if gold[k] is not None and err[k] is not None]
    flat = [nd for k in keep for nd in nodes[k]]
    targets = [tuple(t) for k in keep for t in np.asarray(gold[k]).tolist()]
    return model, flat, targets


def _batch(top_k=3):
    model, flat, targets = _nodes(top_k)
    cm = CorrectionModel(top_k=top_k)
    batch = cm.encode(flat, puncteme_tokens(model), grow=True, gold=targets,
                      weight=np.linspace(0.5, 2.0, len(flat)))
    return model, cm, batch, flat


def test_candidates_hold_the_erroneous_pair():
    model, cm, batch, nodes = _batch()
    assert nodes and len(nodes) == batch.n_nodes
    for k, nd in enumerate(nodes):
        assert tuple(nd.cands[nd.same]) == nd.e
        assert len(nd.cands) <= cm.top_k + 1
        assert (nd.logp >= LOGP_FLOOR).all()
        assert tuple(batch.cands[batch.same[k]]) == nd.e
    assert (batch.gold >= 0).any()


def test_gradient_matches_finite_differences():
    _, cm, batch, _ = _batch()
    rng = np.random.default_rng(0)
    params = rng.normal(0, 0.5, len(cm.get_params()))
    l2 = 0.3
    f, g = cm.objective(batch, params, l2)
    h = 1e-6
    for i in rng.choice(len(params), size=min(25, len(params)), replace=False).tolist() + [0]:
        e = np.zeros_like(params)
        e[i] = h
        num = (cm.objective(batch, params + e, l2)[0] - cm.objective(batch, params - e, l2)[0]) / (2 * h)
        assert g[i] == pytest.approx(num, rel=1e-4, abs=1e-6)


def test_probabilities_are_a_softmax_per_node():
    _, cm, batch, _ = _batch()
    cm.set_params(np.random.default_rng(1).normal(0, 1, len(cm.get_params())))
    p = np.exp(cm.log_probs(batch))
    sums = np.add.reduceat(p, batch.cand_ptr[:-1])
    assert np.allclose(sums, 1.0)
    # by hand for node 0: a·logp + the weights of its row's features (+ context features on e)
    a, w = cm.attach_scale, cm.weights
    lo, hi = batch.cand_ptr[0], batch.cand_ptr[1]
    s = []
    for j in range(lo, hi):
        r = batch.row[j]
        v = a * batch.f0[j] + w[batch.g_ids[batch.g_ptr[r]:batch.g_ptr[r + 1]]].sum()
        if j == batch.same[0]:
            v += w[batch.ctx_ids[batch.ctx_ptr[0]:batch.ctx_ptr[1]]].sum()
        s.append(v)
    s = np.array(s)
    assert np.allclose(p[lo:hi], np.exp(s - s.max()) / np.exp(s - s.max()).sum())


def test_unknown_features_are_dropped_when_not_growing():
    model, cm, batch, nodes = _batch()
    n = len(cm.features)
    cm.encode(nodes, puncteme_tokens(model))
    assert len(cm.features) == n and len(cm.weights) == n


def test_round_trip(tmp_path):
    model, cm, batch, _ = _batch()
    cm.set_params(np.random.default_rng(2).normal(0, 1, len(cm.get_params())))
    cm.meta = {"training": {"nodes": 3}}
    cm.to_disk(tmp_path / "cm")
    back = CorrectionModel.from_disk(tmp_path / "cm")
    assert back.features == cm.features and back.top_k == cm.top_k and back.meta == cm.meta
    assert back.attach_scale == cm.attach_scale
    assert np.array_equal(back.weights, cm.weights)
    assert np.array_equal(back.log_probs(batch), cm.log_probs(batch))


@pytest.mark.parametrize("kw", [{"top_k": 0}, {"top_k": True}, {"attach_scale": float("nan")}])
def test_bad_settings(kw):
    with pytest.raises(ValueError, match="E838"):
        CorrectionModel(**kw)


def test_bad_weights():
    with pytest.raises(ValueError, match="E839"):
        CorrectionModel(["a", "b"], np.zeros(3))
    with pytest.raises(ValueError, match="E839"):
        CorrectionModel(["a", "a"])


def test_bad_files(tmp_path):
    with pytest.raises(ValueError, match="E840"):
        CorrectionModel.from_disk(tmp_path / "missing")
    cm = CorrectionModel(["x"], np.ones(1))
    cm.to_disk(tmp_path / "cm")
    (tmp_path / "cm" / "cfg.json").write_text('{"format": 99}', encoding="utf-8")
    with pytest.raises(ValueError, match="E840"):
        CorrectionModel.from_disk(tmp_path / "cm")


def test_bad_erroneous_trees():
    model = toy_model("r2l")
    sents = toy_sentences()
    with pytest.raises(ValueError, match="E836"):
        correction_inputs(model, sents, 3, [None])
    with pytest.raises(ValueError, match="E837"):
        correction_inputs(model, sents[:1], 3, [np.zeros((1, 2), dtype=np.int64)])


def test_given_erroneous_trees_are_used():
    model = toy_model("r2l")
    sents = toy_sentences()[:2]
    E = [np.zeros((len(s.words), 2), dtype=np.int64) for s in sents]
    got, nodes = correction_inputs(model, sents, 2, E)
    assert [g is e for g, e in zip(got, E)] == [True, True]
    assert all(nd.e == (0, 0) and tuple(nd.cands[nd.same]) == (0, 0) for ns in nodes for nd in ns)
    # the Viterbi trees: equal to the model's own analysis
    for s, e in zip(sents, viterbi_pair_ids(model, sents)):
        best = model.best_underlying(s)
        assert [(model.puncteme(int(a)), model.puncteme(int(b))) for a, b in e.tolist()] == best
