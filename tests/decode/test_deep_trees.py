"""Restoration on deep trees (issue 23, items 4 and 6): chains of 1,000 words restore in bounded
memory, the work grows linearly with the length, the output follows the model (the many marks of
a slot where hundreds of constituents meet are the model's expectation, not an artefact), the
sampling decoders equal the exact one where that is exact, and the fast paths of the sampler and
of the risk computation agree with the plain ones."""
import tracemalloc
from collections import Counter

import numpy as np
import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.decode import mbr, sample_choice, sampling
from spacy_punctgen.decode.mbr import restore_sentence, sample_punctuation, slot_marginals
from spacy_punctgen.decode.priors import sentence_priors
from spacy_punctgen.testing import exact_mbr
from spacy_punctgen.testing.toy import toy_model

MB = 1 << 20
RELS = ["nsubj", "ccomp", "appos", "conj", "advmod"]


def chain(n, left):
    """``left``: every word hangs from the next (all constituents start at slot 0); else from the
    previous one (all end at slot n)."""
    heads = [i + 1 for i in range(n - 1)] + [-1] if left else [-1] + list(range(n - 1))
    return PunctSentence(words=["w"] * n, upos=["NOUN"] * n, xpos=["_"] * n,
                         deprels=["root" if h < 0 else RELS[i % 5] for i, h in enumerate(heads)],
                         heads=heads, slots=[()] * (n + 1))


def random_tree(n, seed):
    """A random projective tree (each span split at a random head)."""
    rng = np.random.default_rng(seed)
    heads = [0] * n
    stack = [(0, n, -1)]
    while stack:
        a, b, h = stack.pop()
        if a < b:
            r = int(rng.integers(a, b))
            heads[r] = h
            stack += [(a, r, r), (r + 1, b, r)]
    return PunctSentence(words=["w"] * n, upos=["NOUN"] * n, xpos=["_"] * n,
                         deprels=["root" if h < 0 else RELS[i % 5] for i, h in enumerate(heads)],
                         heads=heads, slots=[()] * (n + 1))


@pytest.fixture(scope="module")
def l2r():
    return toy_model("l2r")


@pytest.fixture(scope="module")
def r2l():
    return toy_model("r2l")


def _peak(f):
    tracemalloc.start()
    try:
        out = f()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------- memory
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("method", ["slot", "sample"])
def test_1000_word_chain_in_bounded_memory(l2r, left, method):
    """Before: 1.27 GB for a 250-word chain, 8-14 GB (unfinished) for 5,000 words."""
    choices, peak = _peak(lambda: restore_sentence(l2r, chain(1000, left), method=method))
    assert len(choices) == 1001
    assert peak < 250 * MB, peak / MB


def test_1000_word_chain_marginal_in_bounded_memory(r2l):
    choices, peak = _peak(lambda: restore_sentence(r2l, chain(1000, True), method="marginal"))
    assert len(choices) == 1001
    assert all(0.0 <= c.prob <= 1.0 for c in choices)
    assert peak < 100 * MB, peak / MB


def test_restoring_a_parsed_1000_word_chain(l2r):
    from spacy_punctgen.pipeline.restore import RestoreSettings, apply_edits, restore_parsed_docs

    n = 1000
    words = [f"w{i}" for i in range(n)]
    doc = Doc(Vocab(), words=words, heads=[0] + list(range(n - 1)), deps=["ROOT"] + ["conj"] * (n - 1),
              pos=["NOUN"] * n)
    (got,), peak = _peak(lambda: restore_parsed_docs(l2r, [doc], RestoreSettings(), quote_xpos=False))
    assert len(got["restored_punct"]) == n + 1
    text = apply_edits(doc.text, got["insertions"], got["deletions"])
    assert all(w in text for w in words[-5:])
    assert peak < 250 * MB, peak / MB


# --------------------------------------------------------------------------- linear work
def _count_work(monkeypatch):
    """Element counts of the decoders' steps: samples grouped, underlying symbols run through the
    channel, string pairs scored, exact candidates merged."""
    work = Counter()

    def wrap(module, name, measure):
        f = getattr(module, name)

        def counted(*a, **k):
            work[name] += measure(*a, **k)
            return f(*a, **k)

        monkeypatch.setattr(module, name, counted)

    wrap(sampling, "_sample_block", lambda prior, chosen, tables, channel, slots, N, rng: len(slots) * N
         + N * sum(len(prior.slot_parts[i]) for i in slots))
    wrap(sampling, "_run_channel", lambda syms, *a: len(syms))
    for module in (sample_choice, exact_mbr):  # (the modules that call them)
        wrap(module, "pair_distances", lambda pad, lens, pa, pb: len(pa) * max(1, int(lens.max(initial=0))))
        wrap(module, "edit_matrix", lambda A, B: len(A) * len(B) * (1 + max(map(len, list(A) + list(B)), default=0)))
    wrap(exact_mbr, "_groups", lambda keys: len(keys[0]))
    return work


def _exact(model, sent):
    """The NumPy reference decoder's choices (testing/exact_mbr.py)."""
    return exact_mbr.restore_exact(model, [[sent]])[0]


@pytest.mark.parametrize("method", ["slot", "exact"])
@pytest.mark.parametrize("left", [True, False])
def test_work_grows_linearly_with_the_length(l2r, monkeypatch, method, left):
    work = _count_work(monkeypatch)
    counts = []
    for n in (200, 800):
        work.clear()
        if method == "exact":
            _exact(l2r, chain(n, left))
        else:
            restore_sentence(l2r, chain(n, left), method=method, n_samples=300)
        counts.append(dict(work))
    small, large = counts
    assert sum(small.values()) > 0
    for step, done in large.items():  # 4x the words: at most about 4x the work of every step, not 16x
        # (a deep slot's edit distances are bounded by SLOT_WORK, however long its strings)
        assert done <= 5 * small.get(step, 0) + 2 * sample_choice.SLOT_WORK, (step, small.get(step), done)


# --------------------------------------------------------------------------- plausible output
@pytest.mark.parametrize("left", [True, False])
def test_the_marks_of_a_deep_slot_are_the_models_expectation(left):
    """With the identity channel (mode "attach") a slot's surface is its underlying string, whose
    expected length is the sum over the halves meeting there of their puncteme's expected length:
    where 300 constituents meet, the decoded string is about that long, no longer; and no slot
    anywhere gets more marks than its expectation allows."""
    model = toy_model("attach")
    sent = chain(300, left)
    (prior,), _ = sentence_priors(model, [sent])
    lengths = np.array([len(p) for p in model.grammar.punctemes])
    expected = np.array([sum(float(prior.probs[w] @ lengths[prior.pairs[w][:, side]]) for w, side in parts)
                         for parts in prior.slot_parts])
    got = np.array([len(c.surface) for c in restore_sentence(model, sent, n_samples=500)])
    deep = int(np.argmax(expected))
    assert deep == (0 if left else 300) and expected[deep] > 50
    assert abs(got[deep] - expected[deep]) <= 0.1 * expected[deep]
    assert (got <= 1.2 * expected + 3).all()


@pytest.mark.parametrize("direction", ["l2r", "r2l"])
def test_deep_chain_samples_follow_the_node_marginals(direction):
    """The pairs drawn for a 600-word chain have the model's frequencies (no underflow, no
    degenerate distribution however many nodes): the mean number of non-empty left punctemes,
    summed over the chain, equals its expectation."""
    model = toy_model(direction)
    sent = chain(600, True)
    (prior,), _ = sentence_priors(model, [sent])
    N = 400
    chosen = sampling.draw_pairs(prior, N, np.random.default_rng(0), len(model.grammar.punctemes) + 1)
    nonempty = np.array([len(p) > 0 for p in model.grammar.punctemes])
    expected = sum(float(prior.probs[w] @ nonempty[prior.pairs[w][:, 0]]) for w in range(prior.n))
    drawn = nonempty[chosen[:, 0, :]].sum(axis=0)  # per sample
    sd = np.sqrt(sum(float(q * (1 - q)) for q in (prior.probs[w] @ nonempty[prior.pairs[w][:, 0]]
                                                     for w in range(prior.n))))
    assert abs(drawn.mean() - expected) < 5 * sd / np.sqrt(N)


@pytest.fixture(scope="module")
def shipped():
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.shipped import default_model_path

    return PunctModel.from_disk(default_model_path("en"))


@pytest.mark.parametrize("sent", [chain(6, True), chain(8, True), chain(6, False), chain(8, False),
                                  random_tree(12, 12), random_tree(20, 20)],
                         ids=["left6", "left8", "right6", "right8", "random12", "random20"])
def test_sampling_equals_exact_where_comparable(shipped, sent):
    """The shipped model on trees small enough for the beam of the exact marginals to hold most of
    their mass: the per-slot decoder chooses what the exact decoder chooses at every slot.  (On
    longer chains the beam keeps ever less of slot 0's mass, 9 % at 20 words, and the two part.)"""
    assert min(sum(m.values()) for m in slot_marginals(shipped, sent)) > 0.7
    sampled = [c.surface for c in restore_sentence(shipped, sent, n_samples=4000, seed=1)]
    exact = [c.surface for c in restore_sentence(shipped, sent, method="marginal")]
    assert sampled == exact


def test_exact_on_the_120_word_chain(shipped):
    """Before: ValueError 'attempt to get argmin of an empty sequence' (every state of slot 0 fell
    below the pruning threshold).  Now the states are rescaled: slot 0 keeps a marginal, every
    slot a choice with a probability in [0, 1]."""
    sent = chain(120, True)
    choices = _exact(shipped, sent)
    assert [c.surface for c in restore_sentence(shipped, sent)] == [c.surface for c in choices]
    assert len(choices) == 121
    assert all(0.0 <= c.prob <= 1.0 and np.isfinite(c.prob) for c in choices)
    marg = exact_mbr.slot_marginals(shipped, sent)[0]
    assert marg and all(p >= 0 for p in marg.values())
    assert choices[0].surface in marg


def test_mbr_index_refuses_empty_input():
    with pytest.raises(ValueError, match="E124"):
        mbr.mbr_index([], [(1,)], [1.0])
    with pytest.raises(ValueError, match="E124"):
        mbr.mbr_index([(1,)], [], [])
    with pytest.raises(ValueError, match="E125"):
        mbr.mbr_index([(1,)], [(1,), (2,)], [1.0])


# --------------------------------------------------------------------------- fast paths = plain paths
def _all(model, sent, **kw):
    return (restore_sentence(model, sent, method="slot", **kw), restore_sentence(model, sent, method="sample", **kw),
            sample_punctuation(model, sent, **kw))


@pytest.mark.parametrize("left", [True, False])
def test_wide_slots_sampled_half_by_half_as_the_others(l2r, monkeypatch, left):
    sent = chain(60, left)  # one slot of 60 halves: sampled by _wide_slot
    fast = _all(l2r, sent, n_samples=300, seed=4)
    monkeypatch.setattr(sampling, "_WIDE", 10 ** 6)  # every slot through the grouped path
    assert _all(l2r, sent, n_samples=300, seed=4) == fast


def test_surfaces_numbered_alike_with_and_without_integer_keys(r2l, monkeypatch):
    sent = random_tree(80, 3)
    fast = _all(r2l, sent, n_samples=300, seed=2)
    monkeypatch.setattr(sampling, "_KEY_BITS", 1)  # no surface fits a key: _number_strings everywhere
    assert _all(r2l, sent, n_samples=300, seed=2) == fast


@pytest.mark.parametrize("seed", [0, 1])
def test_slot_picks_equal_the_plain_risk_argmin(l2r, seed):
    """slot_picks (closed forms, length bound, batched distances) = the plain rule over _risks."""
    (prior,), channel = sentence_priors(l2r, [random_tree(120, seed)])
    slots = sampling.sample_slots(prior, l2r.grammar, channel, 500, np.random.default_rng(seed))
    plain = []
    for s in slots:
        which = sample_choice._candidates(s)
        r = sample_choice._risks(s, which)
        plain.append(int(which[np.lexsort((which, -s.counts[which], r))[0]]))
    assert sample_choice.slot_picks(slots) == plain
    risks = sample_choice.batch_risks(slots, [np.arange(len(s.strings)) for s in slots])
    for s, r in zip(slots, risks):
        assert (r == sample_choice._risks(s, np.arange(len(s.strings)))).all()


def test_exact_choices_equal_mbr_index(l2r):
    (prior,), channel = sentence_priors(l2r, [random_tree(40, 5)])
    margs = [exact_mbr.slot_marginal(prior, i, l2r.grammar, channel) for i in range(prior.n + 1)]
    for (marg, scale), (best, p) in zip(margs, exact_mbr.exact_choices(margs)):
        ranked = sorted(marg, key=lambda x: (-marg[x], x))
        support = [x for x in ranked[:mbr.EXACT_BEAM] if marg[x] >= mbr.EXACT_SUPPORT_MIN] or ranked[:1]
        assert best == ranked[mbr.mbr_index(ranked[:mbr.EXACT_CANDIDATES], support, [marg[x] for x in support])]
        assert p == pytest.approx(marg[best] * np.exp(scale))


def test_exact_transition_table_shared_by_threads(r2l, monkeypatch):
    """The exact decoder's transition table is built lazily and shared across calls; threads that
    fill it at once get what one thread alone gets."""
    from concurrent.futures import ThreadPoolExecutor

    sents = [random_tree(30, s) for s in range(8)] + [chain(40, True)]
    monkeypatch.setattr(exact_mbr, "_TRANSITIONS", {})
    alone = [_exact(r2l, s) for s in sents]
    for _ in range(3):
        monkeypatch.setattr(exact_mbr, "_TRANSITIONS", {})  # an empty table again: every thread fills it
        with ThreadPoolExecutor(4) as pool:
            together = list(pool.map(lambda s: _exact(r2l, s), sents))
        assert together == alone


def test_exact_chunks_change_nothing(r2l, monkeypatch):
    """The exact decoder expands a half's candidates in chunks of whole punctemes (bounded memory):
    tiny chunks give the same marginals and choices as one chunk."""
    sents = [random_tree(25, 7), chain(30, False)]
    whole = [(_exact(r2l, s), exact_mbr.slot_marginals(r2l, s)) for s in sents]
    monkeypatch.setattr(exact_mbr, "EXACT_CHUNK", 16)
    assert [(_exact(r2l, s), exact_mbr.slot_marginals(r2l, s)) for s in sents] == whole
