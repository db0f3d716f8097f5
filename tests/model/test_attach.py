"""ATTACH scoring: p_θ(l, r | w) over the full W_d, and the θ-gradient scatter."""
import numpy as np
import pytest

from spacy_punctgen.model.attach import AttachScorer, log_softmax_rows
from spacy_punctgen.features.templates import FeatureConfig, FeatureExtractor, FeatureIndex
from spacy_punctgen.testing.numpy_attach import backward, backward_sparse, segment_log_softmax
from spacy_punctgen.testing.toy import toy_inventory, toy_sentences


def test_segment_log_softmax_matches_naive():
    rng = np.random.default_rng(0)
    x = rng.normal(size=10) * 50
    off = np.array([0, 3, 4, 10])
    got = segment_log_softmax(x, off)
    for a, b in zip(off[:-1], off[1:]):
        seg = x[a:b]
        want = seg - np.log(np.sum(np.exp(seg - seg.max()))) - seg.max()
        np.testing.assert_allclose(got[a:b], want, rtol=0, atol=1e-12)
    with pytest.raises(ValueError):
        segment_log_softmax(x, np.array([0, 0, 10]))


def test_log_softmax_rows_is_stable():
    s = np.array([[1000.0, 1000.0], [-1000.0, 0.0]])
    p = np.exp(log_softmax_rows(s))
    np.testing.assert_allclose(p.sum(1), 1.0)
    np.testing.assert_allclose(p[0], [0.5, 0.5])


def _setup(theta_scale=0.7, seed=0):
    inv = toy_inventory()
    ex = FeatureExtractor(inv, FeatureConfig())
    sents = toy_sentences()
    data = [ex.sentence_units(s) for s in sents]
    # a dictionary holding about half of all possible (unit, property) pairs, plus junk
    rng = np.random.default_rng(seed)
    ctx, prop = [], []
    for uid in range(ex.n_units):
        h = ex.unit_hashes(np.array([uid]))[0]
        ph = ex.rel_tables[ex.unit_relation(uid)].col_hash
        keep = ph[rng.random(ph.size) < 0.5]
        ctx.extend([h] * len(keep))
        prop.extend(keep.tolist())
    ctx.extend([1, 2, 3])
    prop.extend([7, 8, 9])
    index = FeatureIndex.from_pairs(np.array(ctx, dtype=np.uint64), np.array(prop, dtype=np.uint64))
    theta = rng.normal(size=index.size) * theta_scale
    return inv, ex, index, AttachScorer(ex, index), data, theta


def _batch(data):
    rel = np.concatenate([d[0] for d in data])
    ptrs, units, off = [np.zeros(1, dtype=np.int64)], [], 0
    for _, ptr, u in data:
        ptrs.append(ptr[1:] + off)
        units.append(u)
        off += int(ptr[-1])
    return rel, np.concatenate(ptrs), np.concatenate(units)


def _naive_scores(ex, index, theta, rel, ptr, units, w):
    """Score every pair of node w by enumerating its features one by one."""
    table = ex.rel_tables[int(rel[w])]
    scores = np.zeros(table.size)
    feats = [[] for _ in range(table.size)]
    for u in units[ptr[w]:ptr[w + 1]]:
        h = ex.unit_hashes(np.array([u]))[0]
        for j in range(table.size):
            for ph in table.prop_hash[j]:
                f = int(index.lookup(np.uint64(h), np.uint64(ph)))
                if f >= 0:
                    scores[j] += theta[f]
                    feats[j].append(f)
    return scores, feats


def test_forward_matches_naive_softmax_over_full_wd():
    inv, ex, index, scorer, data, theta = _setup()
    rel, ptr, units = _batch(data)
    fwd = scorer.predict(theta, rel, ptr, units)
    assert len(fwd.node_off) == len(rel) + 1
    for w in range(len(rel)):
        a, b = fwd.node_off[w], fwd.node_off[w + 1]
        assert b - a == ex.rel_tables[int(rel[w])].size  # the node's FULL W_d
        s, _ = _naive_scores(ex, index, theta, rel, ptr, units, w)
        want = s - np.log(np.exp(s - s.max()).sum()) - s.max()
        np.testing.assert_allclose(fwd.logp[a:b], want, rtol=0, atol=1e-10)
        assert abs(np.exp(fwd.logp[a:b]).sum() - 1) < 1e-12


def test_backward_scatters_G_into_theta():
    inv, ex, index, scorer, data, theta = _setup(seed=1)
    rel, ptr, units = _batch(data)
    fwd = scorer.predict(theta, rel, ptr, units)
    G = np.random.default_rng(5).normal(size=fwd.logp.size)
    got = backward(scorer, fwd, G)
    want = np.zeros(index.size)
    for w in range(len(rel)):
        _, feats = _naive_scores(ex, index, theta, rel, ptr, units, w)
        a = fwd.node_off[w]
        for j, fs in enumerate(feats):
            for f in fs:
                want[f] += G[a + j]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_loglik_gradient_is_mu_minus_p():
    """∂/∂θ Σ_w log p_θ(y_w | w) = Σ_w (1[y_w] − p_w)·f: compare to finite differences."""
    inv, ex, index, scorer, data, theta = _setup(seed=2)
    rel, ptr, units = _batch(data)
    rng = np.random.default_rng(3)
    fwd = scorer.predict(theta, rel, ptr, units)
    gold = np.array([fwd.node_off[w] + rng.integers(0, fwd.node_off[w + 1] - fwd.node_off[w])
                     for w in range(len(rel))])

    def f(th):
        return scorer.predict(th, rel, ptr, units).logp[gold].sum()

    mu = np.zeros_like(fwd.logp)
    mu[gold] = 1.0
    grad = backward(scorer, fwd, mu - np.exp(fwd.logp))
    for j in rng.choice(np.flatnonzero(grad), size=min(15, np.count_nonzero(grad)), replace=False):
        e = np.zeros_like(theta)
        e[j] = 1e-6
        fd = (f(theta + e) - f(theta - e)) / 2e-6
        assert abs(fd - grad[j]) < 1e-6 * max(1, abs(fd))


def test_without_known_features_the_distribution_is_uniform():
    inv = toy_inventory()
    ex = FeatureExtractor(inv)
    scorer = AttachScorer(ex, FeatureIndex.empty())
    rel, ptr, units = ex.sentence_units(toy_sentences()[0])
    fwd = scorer.predict(np.zeros(0), rel, ptr, units)
    for w in range(len(rel)):
        a, b = fwd.node_off[w], fwd.node_off[w + 1]
        np.testing.assert_allclose(np.exp(fwd.logp[a:b]), 1.0 / (b - a))  # uniform over W_d
    g = backward(scorer, fwd, np.ones_like(fwd.logp))
    assert g.shape == (0,)


def test_scorer_cache_grows_with_new_units():
    inv, ex, index, scorer, data, theta = _setup()
    rel, ptr, units = _batch(data[:2])
    before = scorer.predict(theta, rel, ptr, units).logp.copy()
    rid = int(ex.sentence_units(toy_sentences()[3])[0][0])
    new = ex.unit_id(rid, "root|word=NEVER-SEEN")  # interned after the first forward
    T, eu, ec, ef = scorer.unit_weights(theta, np.array([new]), ex.rel_tables[rid])
    assert eu.size == 0 and not T.any()  # no known features
    np.testing.assert_array_equal(scorer.predict(theta, rel, ptr, units).logp, before)


def test_sparse_backward_matches_dense():
    inv, ex, index, scorer, data, theta = _setup(seed=4)
    rel, ptr, units = _batch(data)
    fwd = scorer.predict(theta, rel, ptr, units)
    G = np.random.default_rng(1).normal(size=fwd.logp.size)
    idx, val = backward_sparse(scorer, fwd, G)
    dense = np.zeros(index.size)
    np.add.at(dense, idx, val)
    np.testing.assert_allclose(dense, backward(scorer, fwd, G), rtol=1e-12, atol=1e-12)


def _same_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


@pytest.mark.parametrize("theta_scale", [0.7, 30.0])
def test_compiled_score_equals_numpy_predict_to_the_bit(theta_scale):
    # score() sums in predict()'s order (NumPy's pairwise summation included), so every
    # log-probability is the same float64, float32 θ included
    inv, ex, index, scorer, data, theta = _setup(theta_scale=theta_scale)
    rel, ptr, units = _batch(data)
    for th in (theta, theta.astype(np.float32)):
        want = scorer.predict(th, rel, ptr, units)
        got = scorer.score(th, rel, ptr, units)
        assert np.array_equal(got.node_off, want.node_off)
        assert _same_bits(got.logp, want.logp)


def test_compiled_score_long_unit_lists():
    # nodes with 1, 7, 8, 9, 16, 129 and 300 units (NumPy's pairwise blocks of 8, 128 and
    # the halving above), units repeated within and across nodes, in a shuffled order
    inv, ex, index, scorer, data, theta = _setup(theta_scale=5.0, seed=3)
    rng = np.random.default_rng(1)
    rel_all, _, _ = _batch(data)
    rid = int(rel_all[0])
    pool = np.array([u for u in range(ex.n_units) if ex.unit_relation(u) == rid], dtype=np.int64)
    sizes = [1, 7, 8, 9, 16, 129, 300]
    units = np.concatenate([rng.choice(pool, size=k) for k in sizes])
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    rel = np.full(len(sizes), rid, dtype=np.int64)
    assert _same_bits(scorer.score(theta, rel, ptr, units).logp, scorer.predict(theta, rel, ptr, units).logp)


def test_compiled_score_refuses_a_node_without_units():
    inv, ex, index, scorer, data, theta = _setup()
    rel, ptr, units = _batch(data)
    ptr = ptr.copy()
    ptr[1] = ptr[0]  # node 0 loses its units
    with pytest.raises(ValueError, match="E185"):
        scorer.score(theta, rel, ptr, units)


def test_segment_sums_equal_numpy_row_sums():
    from spacy_punctgen.inference._train import segment_sums

    rng = np.random.default_rng(0)
    lens = np.array([1, 3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 300, 1000, 0])
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    x = rng.standard_normal(int(off[-1])) * 10.0 ** rng.uniform(-8, 8, int(off[-1]))
    out = np.empty(len(lens))
    segment_sums(x, off, out)
    want = np.array([x[a:b].sum() for a, b in zip(off[:-1], off[1:])])
    assert _same_bits(out, want)
