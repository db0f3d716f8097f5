"""The compiled slot-marginal decoder (spacy_punctgen/decode/marginal.py, cython_ext/slot_mbr.pyx):
the same choices and marginals as the NumPy reference decoder (testing/exact_mbr.py) (the sample, random trees and models, a
deep slot, mixtures, EWT and zh dev), marginals equal to brute-force enumeration of every
underlying pair assignment and channel path, batching that changes nothing, clear errors."""
import itertools
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacy_punctgen.decode.marginal as exact
import spacy_punctgen.testing.exact_mbr as exact_mbr
import spacy_punctgen.decode.mbr as mbr
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.data.trees import tree_structure
from spacy_punctgen.data.underlying import slot_parts
from spacy_punctgen.decode.marginal import marginal_choices, marginal_distributions
from spacy_punctgen.evaluation.metrics import edit_distance
from spacy_punctgen.inference._slot_mbr import slot_mbr
from spacy_punctgen.inference.dp import BOS, Grammar
from spacy_punctgen.model.channel import bos_edit_mask, channel_distribution, channel_probs
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.testing.problems import PUNCTEMES, random_projective_heads
from spacy_punctgen.testing.reference import brute_joint, joint_marginals, underlying_slots
from spacy_punctgen.testing.toy import punct_sentence, toy_model, toy_sentences

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
UD = ROOT.parent / "shared" / "ud"


# ----------------------------------------------------------------------------- helpers
def _settings(**over):
    """The marginal decoder's settings (decode/marginal.py, as mbr re-exports them)."""
    s = dict(prune=mbr.RESTORE_PRUNE, beam=mbr.EXACT_BEAM, expand=getattr(mbr, "EXACT_EXPAND", 0),
             wide=getattr(mbr, "EXACT_WIDE", 0), rescale=getattr(mbr, "EXACT_RESCALE", 0.0))
    s.update(over)
    return s


def compiled(model, tree_sets, **over):
    """The compiled decoder's choices (symbol names, probability) for the trees of each sentence."""
    prior_sets, channel = mbr.mixture_priors(model, tree_sets)
    return marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l,
                            candidates=mbr.EXACT_CANDIDATES, support_min=mbr.EXACT_SUPPORT_MIN,
                            symbols=model.inventory.symbols, **_settings(**over))


def compiled_marginals(model, trees, **over):
    prior_sets, channel = mbr.mixture_priors(model, [trees])
    return marginal_distributions(prior_sets, model.grammar, channel.phi, channel.r2l,
                                  symbols=model.inventory.symbols, **_settings(**over))[0]


def assert_equal_to_exact(model, tree_sets) -> int:
    """Every slot's choice equals the NumPy reference's, its probability to rounding; returns the
    number of slots compared."""
    want = exact_mbr.restore_exact(model, tree_sets)
    got = compiled(model, tree_sets)
    assert len(got) == len(want)
    n = 0
    for k, (w, g) in enumerate(zip(want, got)):
        assert [x for x, _ in g] == [c.surface for c in w], k
        for i, (c, (_, p)) in enumerate(zip(w, g)):
            assert p == pytest.approx(c.prob, rel=1e-9, abs=1e-300), (k, i)
        n += len(w)
    return n


def assert_marginals_equal(model, trees):
    want = exact_mbr.mixture_slot_marginals(model, trees)  # slot marginals: the finer EXACT_PRUNE
    got = compiled_marginals(model, trees, prune=mbr.EXACT_PRUNE)
    assert len(got) == len(want)
    for i, (w, g) in enumerate(zip(want, got)):
        assert {x for x, p in w.items() if p > 1e-6} == {x for x, p in g.items() if p > 1e-6}, i
        for x in set(w) | set(g):
            assert g.get(x, 0.0) == pytest.approx(w.get(x, 0.0), rel=1e-9, abs=1e-12), (i, x)


@pytest.fixture(scope="module")
def shipped():
    return PunctModel.from_disk(default_model_path("en"))


@pytest.fixture(scope="module")
def sample_sents():
    return [s for split in ("dev", "test") for s in preprocess_file(SAMPLE / f"en_sample-ud-{split}.conllu")[0]]


@pytest.fixture(scope="module")
def tiny_l2r():
    """A model trained briefly on the sample's train split (L2R: the shipped one is R2L)."""
    from spacy_punctgen.training.train import TrainConfig, train_model

    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    model, _ = train_model(train, train[:10], TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0, direction="l2r",
                                                          progress=False))
    return model


# ----------------------------------------------------------------------------- equality with mbr
def test_equal_to_exact_on_the_sample_shipped_r2l(shipped, sample_sents):
    assert shipped.r2l
    assert assert_equal_to_exact(shipped, [[s] for s in sample_sents]) == sum(len(s.words) + 1 for s in sample_sents)


def test_equal_to_exact_on_the_sample_l2r(tiny_l2r, sample_sents):
    assert not tiny_l2r.r2l
    assert_equal_to_exact(tiny_l2r, [[s] for s in sample_sents])


@pytest.mark.parametrize("k", [0, 7, 21])
def test_marginals_equal_mbrs(shipped, tiny_l2r, sample_sents, k):
    for model in (shipped, tiny_l2r):
        assert_marginals_equal(model, [sample_sents[k]])


def test_mixtures_of_trees_equal_exact(shipped, sample_sents):
    """Several trees of one sentence (paper footnote 20): the other trees re-attach words."""
    tree_sets = []
    for s in sample_sents[:12]:
        n = len(s.words)
        flat = punct_sentence(s.words, s.upos, [-1] + [0] * (n - 1), ["root"] + ["dep"] * (n - 1), s.slots)
        chain = punct_sentence(s.words, s.upos, [i + 1 if i + 1 < n else -1 for i in range(n)],
                               ["dep"] * (n - 1) + ["root"], s.slots)
        tree_sets.append([s, flat, chain][: 1 + len(tree_sets) % 3])
    assert_equal_to_exact(shipped, tree_sets)
    assert_marginals_equal(shipped, tree_sets[2])


TOY_DEPRELS = ["nsubj", "root", "ccomp", "conj", "cc", "nmod:poss", "appos", "parataxis", "advmod", "obj"]
TOY_UPOS = ["PRON", "VERB", "INTJ", "NOUN", "CCONJ", "PROPN", "ADV"]


def _random_sentence(rng, n):
    heads = random_projective_heads(rng, n)
    deprels = ["root" if h < 0 else str(rng.choice(TOY_DEPRELS)) for h in heads]
    return punct_sentence([f"w{i}" for i in range(n)], [str(rng.choice(TOY_UPOS)) for _ in range(n)], heads,
                          deprels, [() for _ in range(n + 1)])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), direction=st.sampled_from(["l2r", "r2l", "attach"]),
       n=st.integers(1, 9), trees=st.integers(1, 3))
def test_random_trees_and_models_equal_exact(seed, direction, n, trees):
    rng = np.random.default_rng(seed)
    model = toy_model(direction, seed=seed % 997)
    base = _random_sentence(rng, n)
    tree_set = [base] + [_random_sentence(rng, n) for _ in range(trees - 1)]
    tree_set[1:] = [punct_sentence(base.words, base.upos, t.heads, t.deprels, base.slots) for t in tree_set[1:]]
    assert_equal_to_exact(model, [tree_set, [base]])
    assert_marginals_equal(model, tree_set)


@pytest.mark.parametrize("direction", ["l2r", "r2l"])
def test_a_deep_slot_equals_exact(direction):
    """A chain of 40 words: every constituent starts at slot 0, which reads 40 halves (more than
    mbr's EXACT_WIDE, so its expansion cap and rescaling apply)."""
    n = 40
    s = punct_sentence([f"w{i}" for i in range(n)], ["NOUN"] * n, [i + 1 if i + 1 < n else -1 for i in range(n)],
                       ["appos"] * (n - 1) + ["root"], [() for _ in range(n + 1)])
    assert len(slot_parts(*tree_structure(s.heads)[3:])[0]) > getattr(mbr, "EXACT_WIDE", 0)
    model = toy_model(direction, seed=11)
    assert_equal_to_exact(model, [[s]])


# ----------------------------------------------------------------------------- brute force
def _brute_marginals(g, heads, cands, probs, phi, r2l):
    """Every slot's p(x_i | T): all pair assignments, then every channel output of each u_i."""
    n = len(heads)
    out = [dict() for _ in range(n + 1)]
    for rows in itertools.product(*[range(len(c)) for c in cands]):
        prior = float(np.prod([probs[w][r] for w, r in enumerate(rows)]))
        if prior == 0.0:
            continue
        us = underlying_slots(heads, [tuple(int(v) for v in cands[w][r]) for w, r in enumerate(rows)], g)
        for i, u in enumerate(us):
            for x, q in channel_distribution(u, phi, r2l).items():
                x = x[1:] if i == 0 else x
                out[i][x] = out[i].get(x, 0.0) + prior * q
    return out


def _prior(g, heads, cands, probs):
    _, _, _, first, last = tree_structure(heads)
    return SimpleNamespace(n=len(heads), pairs=cands, probs=probs, slot_parts=slot_parts(first, last))


def _random_prior(rng, n, S=4, max_cands=4):
    g = Grammar(S, PUNCTEMES)
    heads = random_projective_heads(rng, n)
    cands, probs = [], []
    for w in range(n):
        k = int(rng.integers(1, max_cands + 1))
        pairs = {(int(rng.integers(0, len(PUNCTEMES))), int(rng.integers(0, len(PUNCTEMES)))) for _ in range(k)}
        arr = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
        p = rng.random(len(arr)) + 0.05
        cands.append(arr)
        probs.append(p / p.sum())
    return g, heads, cands, probs


EXACT = dict(prune=0.0, beam=10**6, expand=0, rescale=0.0)  # no pruning: the marginals are exact


def _phi(rng, S, r2l, sharp=1.5):
    """A random channel that keeps '^' first (as every model's: model/channel.py)."""
    return channel_probs(rng.normal(0, sharp, size=(S, S, 4)), bos_edit_mask(S, r2l))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4), r2l=st.booleans(), k_trees=st.integers(1, 2))
def test_marginals_and_choices_equal_brute_force(seed, n, r2l, k_trees):
    rng = np.random.default_rng(seed)
    g, heads, cands, probs = _random_prior(rng, n)
    phi = _phi(rng, g.n_symbols, r2l)
    trees = [(heads, cands, probs)]
    for _ in range(k_trees - 1):  # another tree of the same words, with its own prior
        _, heads2, cands2, probs2 = _random_prior(rng, n)
        trees.append((heads2, cands2, probs2))
    brute = [_brute_marginals(g, h, c, p, phi, r2l) for h, c, p in trees]
    want = [{x: sum(b[i].get(x, 0.0) for b in brute) / len(brute) for x in set().union(*(b[i] for b in brute))}
            for i in range(n + 1)]
    priors = [[_prior(g, h, c, p) for h, c, p in trees]]
    got = marginal_distributions(priors, g, phi, r2l, **EXACT)[0]
    choices = marginal_choices(priors, g, phi, r2l, candidates=32, support_min=0.0, **EXACT)[0]
    for i in range(n + 1):
        assert set(got[i]) == {x for x, p in want[i].items() if p > 0}, i
        assert sum(got[i].values()) == pytest.approx(1.0, abs=1e-12)
        for x, p in want[i].items():
            assert got[i].get(x, 0.0) == pytest.approx(p, abs=1e-12), (i, x)
        ranked = sorted(want[i], key=lambda x: (-want[i][x], x))
        risk = {c: sum(p * edit_distance(c, s) for s, p in want[i].items()) for c in want[i]}
        x, p = choices[i]
        assert risk[x] <= min(risk[c] for c in ranked[:32]) + 1e-12, i
        assert p == pytest.approx(want[i][x], abs=1e-12)


@pytest.mark.parametrize("direction", ["l2r", "r2l", "attach"])
@pytest.mark.parametrize("k", [0, 2, 4])
def test_model_marginals_equal_brute_force(direction, k):
    """Through a model (ATTACH's p(l, r | w), the channel): every T' and every edit path."""
    model = toy_model(direction)
    sent = toy_sentences()[k]
    brute = joint_marginals(brute_joint(model, sent), len(sent.slots))
    got = compiled_marginals(model, [sent], **EXACT)
    for i, (b, e) in enumerate(zip(brute, got)):
        assert set(e) == {x for x, p in b.items() if p > 0}, i
        for x in set(b) | set(e):
            assert e.get(x, 0.0) == pytest.approx(b.get(x, 0.0), abs=1e-12), (i, x)


# ----------------------------------------------------------------------------- batching
def test_batches_change_nothing(shipped, sample_sents, monkeypatch):
    tree_sets = [[s] for s in sample_sents[:9]]
    whole = compiled(shipped, tree_sets)
    one_by_one = [compiled(shipped, [ts])[0] for ts in tree_sets]
    monkeypatch.setattr(exact, "BATCH_SENTENCES", 2)
    assert compiled(shipped, tree_sets) == whole == one_by_one


def test_factory_and_symbols(shipped, sample_sents):
    prior_sets, channel = mbr.mixture_priors(shipped, [[sample_sents[0]]])
    kw = dict(candidates=mbr.EXACT_CANDIDATES, support_min=mbr.EXACT_SUPPORT_MIN, **_settings())
    ids = marginal_choices(prior_sets, shipped.grammar, channel.phi, channel.r2l, **kw)[0]
    named = marginal_choices(prior_sets, shipped.grammar, channel.phi, channel.r2l, symbols=shipped.inventory.symbols,
                             factory=mbr.SlotChoice, **kw)[0]
    assert all(isinstance(c, mbr.SlotChoice) for c in named)
    assert [c.surface for c in named] == [tuple(shipped.inventory.symbols[s] for s in x) for x, _ in ids]
    assert [c.prob for c in named] == [p for _, p in ids]


# ----------------------------------------------------------------------------- errors
@pytest.fixture()
def problem():
    rng = np.random.default_rng(5)
    g, heads, cands, probs = _random_prior(rng, 4)
    return g, [[_prior(g, heads, cands, probs)]], _phi(rng, g.n_symbols, False)


def _run(problem, prior_sets=None, phi=None, grammar=None, **over):
    g, priors, p = problem
    kw = dict(prune=1e-7, beam=300, candidates=32, support_min=1e-9)
    kw.update(over)
    return marginal_choices(priors if prior_sets is None else prior_sets, grammar or g,
                            p if phi is None else phi, False, **kw)


def _code(err):
    return str(err.value)[:6]


def test_the_problem_fixture_runs(problem):
    assert len(_run(problem)[0]) == problem[1][0][0].n + 1


@pytest.mark.parametrize("phi,code", [
    (np.full((3, 3, 4), 0.25), "[E170]"),
    (np.full((4, 4, 3), 0.25), "[E170]"),
    (np.full((4, 4, 4), np.nan), "[E171]"),
    (np.full((4, 4, 4), -0.25), "[E171]"),
])
def test_bad_channels(problem, phi, code):
    with pytest.raises(ValueError) as err:
        _run(problem, phi=phi)
    assert _code(err) == code


def _with(problem, **fields):
    g, priors, phi = problem
    prior = priors[0][0]
    return [[SimpleNamespace(**{**vars(prior), **fields})]]


def test_bad_priors(problem):
    prior = problem[1][0][0]
    cases = [
        (dict(pairs=[prior.pairs[0][:, :1]] + prior.pairs[1:]), "[E172]"),
        (dict(probs=[prior.probs[0][:-1]] + prior.probs[1:]) if len(prior.probs[0]) > 1
         else dict(probs=[np.r_[prior.probs[0], 0.5]] + prior.probs[1:]), "[E172]"),
        (dict(probs=[-prior.probs[0]] + prior.probs[1:]), "[E173]"),
        (dict(probs=[prior.probs[0] * np.nan] + prior.probs[1:]), "[E173]"),
        (dict(probs=[prior.probs[0] * 0.0] + prior.probs[1:]), "[E173]"),
        (dict(pairs=[prior.pairs[0] + len(PUNCTEMES)] + prior.pairs[1:]), "[E174]"),
        (dict(slot_parts=prior.slot_parts[:-1]), "[E175]"),
        (dict(slot_parts=[[(99, 0)]] + prior.slot_parts[1:]), "[E176]"),
        (dict(slot_parts=[[(0, 2)]] + prior.slot_parts[1:]), "[E176]"),
        (dict(slot_parts=[["x"]] + prior.slot_parts[1:]), "[E176]"),
        (dict(slot_parts=[list(prior.slot_parts[0]) + [(0, 0)]] + prior.slot_parts[1:]), "[E183]"),
        (dict(pairs=prior.pairs[:-1]), "[E184]"),
    ]
    for fields, code in cases:
        with pytest.raises(ValueError) as err:
            _run(problem, prior_sets=_with(problem, **fields))
        assert _code(err) == code, (fields, str(err.value))


def test_bad_tree_sets(problem):
    g, priors, phi = problem
    prior = priors[0][0]
    other = SimpleNamespace(n=prior.n - 1, pairs=prior.pairs[:-1], probs=prior.probs[:-1],
                            slot_parts=slot_parts(*tree_structure([-1] * (prior.n - 1))[3:]))
    for sets, code in (([[prior], []], "[E178]"), ([[prior, other]], "[E177]")):
        with pytest.raises(ValueError) as err:
            _run(problem, prior_sets=sets)
        assert _code(err) == code
    assert "sentence #1" in str(pytest.raises(ValueError, _run, problem, prior_sets=[[prior], []]).value)


@pytest.mark.parametrize("over", [dict(prune=-1.0), dict(prune=math.inf), dict(beam=0), dict(beam=2.5),
                                  dict(candidates=0), dict(support_min=math.nan), dict(expand=-1),
                                  dict(wide=-3), dict(rescale=1.5), dict(beam=True)])
def test_bad_settings(problem, over):
    with pytest.raises(ValueError) as err:
        _run(problem, **over)
    assert _code(err) == "[E179]"


def test_too_few_symbol_names(problem):
    with pytest.raises(ValueError) as err:
        _run(problem, symbols=["a"])
    assert _code(err) == "[E179]"


def test_a_puncteme_outside_the_symbols(problem):
    g = SimpleNamespace(n_symbols=4, punctemes=[(), (1,), (7,)] + list(PUNCTEMES[3:]))
    with pytest.raises(ValueError) as err:
        _run(problem, grammar=g)
    assert _code(err) == "[E182]"


def test_a_channel_that_moves_the_start_symbol(problem):
    g, priors, phi = problem
    phi = phi.copy()
    phi[BOS, :, :] = 0.0
    phi[BOS, :, 3] = 1.0  # L2R: '^' is transposed after whatever follows it
    heads = [-1]
    one = [[_prior(g, heads, [np.array([[1, 0]])], [np.array([1.0])])]]
    with pytest.raises(ValueError) as err:
        _run(problem, prior_sets=one, phi=phi)
    assert _code(err) == "[E181]"


def test_errors_name_the_sentence_across_batches(problem, monkeypatch):
    g, priors, phi = problem
    monkeypatch.setattr(exact, "BATCH_SENTENCES", 2)
    bad = _with(problem, probs=[-priors[0][0].probs[0]] + priors[0][0].probs[1:])
    with pytest.raises(ValueError) as err:
        _run(problem, prior_sets=priors * 3 + bad)
    assert "sentence #3" in str(err.value)


def _kernel_args(problem):
    g, priors, phi = problem
    f = exact._flatten(priors, len(g.punctemes))
    pm_ptr, pm_sym = exact._puncteme_table(g)
    return [f.s_ptr, f.g_ptr, f.g_unit, f.u_ptr, f.u_slot0, f.part_half, f.node_ptr, f.pairs, f.pair_p, pm_ptr,
            pm_sym, np.ascontiguousarray(phi), False, BOS, 1e-7, 300, 32, 1e-9]


def test_the_kernel_checks_its_arrays(problem):
    """Each array of the kernel's flat input made inconsistent (its last entry out of range, or
    one entry short): a ValueError (E189), never a crash."""
    args = _kernel_args(problem)
    assert len(slot_mbr(*args)[0]) == problem[1][0][0].n + 1
    names = ["s_ptr", "g_ptr", "g_unit", "u_ptr", "u_slot0", "part_half", "node_ptr", "pairs", "pair_p",
             "pm_ptr", "pm_sym"]
    for j, name in enumerate(names):
        for change in ("out of range", "short"):
            a = np.array(args[j], copy=True)
            if change == "short":
                a = a[:-1]
            elif name == "u_slot0":
                continue  # any flag is in range
            elif name == "pair_p":
                a[-1] = np.nan
            else:
                a.reshape(-1)[-1] += 1000
            bad = list(args)
            bad[j] = np.ascontiguousarray(a)
            with pytest.raises(ValueError) as err:
                slot_mbr(*bad)
            assert _code(err) == "[E189]", (name, change)


def _pairs(a):
    return np.ascontiguousarray(a[: len(a) // 2 * 2].reshape(-1, 2))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_kernel_never_crashes_on_garbage(data):
    """Random pointer and index arrays: a result or a ValueError, never a crash."""
    ints = lambda n: np.array(data.draw(st.lists(st.integers(-3, 12), min_size=0, max_size=n)), dtype=np.int64)
    n_sent = data.draw(st.integers(0, 3))
    s_ptr = np.sort(ints(n_sent + 1)) if n_sent else np.zeros(1, dtype=np.int64)
    args = [s_ptr, np.sort(ints(6)), ints(6), np.sort(ints(6)), np.array(data.draw(st.lists(
        st.integers(0, 1), max_size=6)), dtype=np.uint8), ints(8), np.sort(ints(5)),
        _pairs(ints(8)), np.abs(np.array(data.draw(st.lists(
            st.floats(0, 1), max_size=4)), dtype=np.float64)), np.array([0, 0, 1, 2], dtype=np.int64),
        np.array([1, 2], dtype=np.int32), np.full((3, 3, 4), 0.25), data.draw(st.booleans()), 0, 1e-7, 300, 32, 1e-9]
    try:
        out = slot_mbr(*args)
    except ValueError as err:
        assert str(err).startswith(("[E189]", "[E180]", "[E181]"))
    else:
        assert len(out) == len(s_ptr) - 1


# ----------------------------------------------------------------------------- the dev sets
def _dev(folder):
    files = sorted((UD / folder).glob("*-ud-dev.conllu"))
    if not files:
        pytest.skip(f"{UD / folder} absent")
    return preprocess_file(files[0])[0]


@pytest.mark.slow
@pytest.mark.ud
def test_equal_to_exact_on_ewt_dev(shipped):
    sents = _dev("en_ewt")
    assert assert_equal_to_exact(shipped, [[s] for s in sents]) == sum(len(s.words) + 1 for s in sents)


@pytest.mark.slow
@pytest.mark.ud
def test_equal_to_exact_on_zh_dev():
    """An L2R model trained briefly on 400 zh_gsd_ud14 training sentences."""
    from spacy_punctgen.training.train import TrainConfig, train_model

    dev = _dev("zh_gsd_ud14")
    train = preprocess_file(sorted((UD / "zh_gsd_ud14").glob("*-ud-train.conllu"))[0])[0][:400]
    model, _ = train_model(train, dev[:20], TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0, direction="l2r",
                                                        progress=False))
    assert assert_equal_to_exact(model, [[s] for s in dev]) == sum(len(s.words) + 1 for s in dev)


# ----------------------------------------------------------------------------- weighted mixtures
def _weighted_reference(model, tree_set, w):
    """The weighted mixture decoded in Python from each tree's compiled marginals: mixed with the
    weights, ranked, candidates against the support, least risk (mbr's exact-decoder rules)."""
    prior_sets, channel = mbr.mixture_priors(model, [tree_set])
    flat = [[p] for p in prior_sets[0]]
    per_tree = marginal_distributions(flat, model.grammar, channel.phi, channel.r2l,
                                      symbols=model.inventory.symbols, **_settings())
    w = np.asarray(w, dtype=float) / sum(w)
    out = []
    for slot in zip(*per_tree):
        mix = {}
        for wj, marg in zip(w, slot):
            for x, p in marg.items():
                mix[tuple(x)] = mix.get(tuple(x), 0.0) + wj * p
        ranked = sorted(mix, key=lambda x: (-mix[x], x))
        support = [x for x in ranked[:mbr.EXACT_BEAM] if mix[x] >= mbr.EXACT_SUPPORT_MIN] or ranked[:1]
        cands = ranked[:mbr.EXACT_CANDIDATES]
        best = cands[mbr.mbr_index(cands, support, mbr.risk_weights(mix, support, 1.0))] if len(cands) > 1 else cands[0]
        out.append((best, mix[best]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_weighted_mixtures_equal_the_python_mixture(seed):
    rng = np.random.default_rng(seed)
    model = toy_model("l2r" if seed % 2 else "r2l", seed=seed)
    base = _random_sentence(rng, 7)
    trees = [base] + [punct_sentence(base.words, base.upos, t.heads, t.deprels, base.slots)
                      for t in (_random_sentence(rng, 7) for _ in range(3))]
    w = [float(x) for x in rng.random(4)]
    w[1] = 0.0  # a tree of weight 0 is not read
    prior_sets, channel = mbr.mixture_priors(model, [trees])
    got = marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, candidates=mbr.EXACT_CANDIDATES,
                           support_min=mbr.EXACT_SUPPORT_MIN, symbols=model.inventory.symbols, weights=[w],
                           **_settings())[0]
    want = _weighted_reference(model, trees, w)
    assert [x for x, _ in got] == [x for x, _ in want]
    assert [p for _, p in got] == pytest.approx([p for _, p in want], rel=1e-9, abs=1e-300)
    without = marginal_choices(prior_sets[:1] and [[prior_sets[0][j] for j in (0, 2, 3)]], model.grammar,
                               channel.phi, channel.r2l, candidates=mbr.EXACT_CANDIDATES,
                               support_min=mbr.EXACT_SUPPORT_MIN, symbols=model.inventory.symbols,
                               weights=[[w[0], w[2], w[3]]], **_settings())[0]
    assert without == got


@pytest.mark.parametrize("bad", [[[1.0]], [[1.0, -1.0]], [[0.0, 0.0]], [[1.0, float("nan")]], [[1.0, 1.0], [1.0]]])
def test_bad_weights_are_refused(bad):
    model = toy_model("l2r", seed=0)
    rng = np.random.default_rng(0)
    base = _random_sentence(rng, 4)
    other = punct_sentence(base.words, base.upos, _random_sentence(rng, 4).heads, base.deprels, base.slots)
    prior_sets, channel = mbr.mixture_priors(model, [[base, other]])
    with pytest.raises(ValueError, match="E099"):
        marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l, candidates=mbr.EXACT_CANDIDATES,
                         support_min=mbr.EXACT_SUPPORT_MIN, weights=bad, **_settings())
