"""The fast analysis path gives exactly what the separate calls give.

``PunctModel.analyze`` compiles each sentence once and scores a whole batch at once; the
component uses it.  Its results must equal ``best_underlying(prepare(s))`` (the same pairs)
and ``log_probs(prepare_eval([s]), backoff=True)`` (within 1e-9), on the sample data and
on random tiny trees, with and without smoothing and in ATTACH mode.
"""
from pathlib import Path

import numpy as np
import pytest
import spacy

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.pipeline.doc_convert import doc_from_ud
from spacy_punctgen.inference.dp import build_lattice, restrict_lattice
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_file
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.training.train import TrainConfig, train_model

from spacy_punctgen.testing.problems import random_projective_heads

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
SPLITS = ("train", "dev", "test")


@pytest.fixture(scope="module")
def shipped():
    return PunctModel.from_disk(default_model_path("en"))


@pytest.fixture(scope="module")
def sample_sents():
    return [s for split in SPLITS for s in preprocess_file(SAMPLE / f"en_sample-ud-{split}.conllu")[0]]


@pytest.fixture(scope="module")
def tiny(sample_sents):
    """A model trained briefly on the sample's train split (L2R, full channel)."""
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    cfg = TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0, direction="l2r", progress=False)
    model, _ = train_model(train, train[:10], cfg)
    return model


def variant(model, **changes):
    """A copy of ``model`` with other settings (shares the extractor; own caches)."""
    clone = PunctModel.from_bytes(model.to_bytes())
    for k, v in changes.items():
        setattr(clone, k, v)
    return clone


def old_results(model, sents):
    """The component's former per-sentence path."""
    out = []
    for s in sents:
        lr = model.best_underlying(model.prepare(s))
        lp = float(model.log_probs(model.prepare_eval([s]), backoff=True)[0])
        out.append((lr, lp))
    return out


def assert_same(model, sents, chunk=256):
    new = model.analyze(sents, chunk=chunk)
    old = old_results(model, sents)
    assert len(new) == len(old)
    for s, (lr_n, lp_n), (lr_o, lp_o) in zip(sents, new, old):
        assert lr_n == lr_o, s.sent_id
        assert abs(lp_n - lp_o) <= 1e-9, (s.sent_id, lp_n, lp_o)
    return new


def test_shipped_model_on_sample(shipped, sample_sents):
    new = assert_same(shipped, sample_sents, chunk=37)  # chunk boundaries inside the data
    assert all(np.isfinite(lp) for _, lp in new)


def test_sample_trained_model_variants(tiny, sample_sents):
    sents = sample_sents[:60]
    for changes in ({}, {"smooth_delta": 0.0}, {"smooth_delta": 0.01}, {"mode": "attach"},
                    {"direction": "r2l", "smooth_delta": 1e-3}):
        model = variant(tiny, **changes)
        new = assert_same(model, sents)
        if not changes.get("smooth_delta", tiny.smooth_delta):
            # unsmoothed: some sentences may be impossible, and both paths say None for them
            assert all(lr is None or len(lr) == len(s) for (lr, _), s in zip(new, sents))


def random_sentences(model, rng, k, max_len=7):
    """Tiny random projective trees with punctuation drawn from the model's inventory
    (sometimes a token it has never seen), labelled with relations and tags it knows."""
    inv = model.inventory
    rels = sorted(inv.pairs)[:12] + ["made:up"]
    upos = ["NOUN", "VERB", "ADJ", "PROPN", "ADP", "X"]
    toks = [t for p in inv.punctemes[1:40] for t in p] + ["¤"]
    out = []
    for i in range(k):
        n = int(rng.integers(1, max_len + 1))
        heads = random_projective_heads(rng, n)
        slots = []
        for j in range(n + 1):
            m = int(rng.choice([0, 0, 0, 1, 1, 2]))
            slots.append(tuple(str(rng.choice(toks)) for _ in range(m)))
        out.append(PunctSentence(
            words=[f"w{int(rng.integers(0, 50))}" for _ in range(n)],
            upos=[str(rng.choice(upos)) for _ in range(n)], xpos=["_"] * n,
            deprels=["root" if h < 0 else str(rng.choice(rels)) for h in heads],
            heads=heads, slots=slots, sent_id=f"random-{i}"))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_random_tiny_trees(shipped, tiny, seed):
    rng = np.random.default_rng(seed)
    for model in (shipped, variant(tiny, smooth_delta=0.0), variant(tiny, mode="attach")):
        sents = random_sentences(model, rng, 25)
        assert_same(model, sents, chunk=8)


def test_restricted_lattice_equals_a_fresh_one(shipped, sample_sents):
    """The unsmoothed lattice cut out of the smoothed one is the one build_lattice makes."""
    for s in sample_sents[:40]:
        sm = shipped.prepare(s, smoothed=True)
        plain = shipped.prepare(s, smoothed=False)
        cut = restrict_lattice(sm.lattice, ~sm.cand_extra, len(shipped.grammar.punctemes))
        for name, want in vars(plain.lattice).items():
            got = getattr(cut, name)
            if isinstance(want, np.ndarray):
                assert got.dtype == want.dtype and np.array_equal(got, want), (s.sent_id, name)
            else:
                assert got == want, (s.sent_id, name)


def test_prepare_arrays_match_their_definition(shipped, sample_sents):
    """extra / share / tilt computed from the relation tables one candidate at a time."""
    tables = shipped.extractor.rel_tables
    for s in sample_sents[:30]:
        for smoothed in (False, True):
            prep = shipped.prepare(s, smoothed=smoothed)
            lat = prep.lattice
            for k in range(lat.n_candidates):
                rid = int(prep.rel_ids[lat.cand_node[k]])
                row = int(lat.cand_row[k])
                is_extra = row >= tables[rid].size
                want_tilt = 0.0 if is_extra else tables[rid].unmatched[row]
                assert prep.tilt[k] == want_tilt
                if smoothed:
                    assert prep.cand_extra[k] == is_extra
                    n_extra = len(shipped.smoothing_pairs(rid))
                    assert prep.cand_share[k] == (1.0 / max(n_extra, 1) if is_extra else 0.0)
                    pair = (np.concatenate([tables[rid].pairs, shipped.smoothing_pairs(rid)])[row])
                else:
                    assert prep.cand_extra is None and not is_extra
                    pair = tables[rid].pairs[row]
                assert (lat.cand_l[k], lat.cand_r[k]) == tuple(pair)


def test_phi_cache_follows_psi(tiny):
    model = variant(tiny)
    first, saved = model.phi(), model.psi.copy()
    assert np.array_equal(first, model.phi())
    model.psi[0, 1, 0] += 2.0  # in place
    changed = model.phi()
    assert not np.array_equal(first, changed)
    model.psi = saved  # a new array
    assert np.array_equal(first, model.phi())
    model.phi()[:] = 0.0  # a caller's copy: the cache is not touched
    assert np.array_equal(first, model.phi())
    model.mode = "attach"
    assert np.all(model.phi()[..., 0] == 1.0)


def test_component_batch_equals_one_doc_at_a_time():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen")
    uds = read_conllu(SAMPLE / "en_sample-ud-test.conllu")[:40]
    one = [pipe(doc_from_ud(nlp.vocab, u)) for u in uds]
    many = list(pipe.pipe([doc_from_ud(nlp.vocab, u) for u in uds], batch_size=16))

    def outputs(doc):
        return (doc._.underlying_punct, doc._.punct_logprob, [(t._.punct_left, t._.punct_right) for t in doc])

    assert [outputs(d) for d in one] == [outputs(d) for d in many]


def numpy_candidate_fields(n, n_pm, allc, node):
    """The lattice's candidate index arrays as build_lattice computed them before the compiled
    core did (np.unique per node)."""
    cand_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(node, minlength=n), out=cand_ptr[1:])

    def per_node_unique(col):
        keys, inv = np.unique(node * n_pm + col, return_inverse=True)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // n_pm, minlength=n), out=ptr[1:])
        return (keys % n_pm).tolist(), ptr, inv.ravel() - ptr[node]

    ul, ul_ptr, li = per_node_unique(allc[:, 0])
    ur, ur_ptr, ri = per_node_unique(allc[:, 1])
    i32 = lambda v: np.array(v if len(v) else [0], dtype=np.int32)  # noqa: E731
    return dict(cand_ptr=cand_ptr.astype(np.int32), cand_li=li.astype(np.int32), cand_ri=ri.astype(np.int32),
                ul_ptr=ul_ptr.astype(np.int32), ul=i32(ul), ur_ptr=ur_ptr.astype(np.int32), ur=i32(ur))


def test_compiled_candidate_arrays_equal_the_numpy_ones(shipped, sample_sents):
    from spacy_punctgen.testing.problems import random_problem

    rng = np.random.default_rng(3)
    lattices = [shipped.prepare(s, smoothed=sm).lattice for s in sample_sents[:40] for sm in (False, True)]
    lattices += [random_problem(rng, n=int(rng.integers(1, 9)))[6] for _ in range(200)]
    n_pm = len(shipped.grammar.punctemes)
    for lat in lattices:
        allc = np.stack([lat.cand_l, lat.cand_r], axis=1)
        want = numpy_candidate_fields(lat.n, max(n_pm, int(allc.max(initial=0)) + 1), allc, lat.cand_node)
        for name, arr in want.items():
            got = getattr(lat, name)
            assert got.dtype == arr.dtype and np.array_equal(got, arr), name


def test_compiled_candidate_arrays_refuse_bad_input():
    from spacy_punctgen.inference import _dp

    z = np.zeros(2, dtype=np.int64)
    with pytest.raises(ValueError, match="non-decreasing"):
        _dp.candidate_fields(2, 3, z, z, np.array([1, 0], dtype=np.int64))
    with pytest.raises(ValueError, match="puncteme id"):
        _dp.candidate_fields(2, 3, np.array([0, 3], dtype=np.int64), z, z)
