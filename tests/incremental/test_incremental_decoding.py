"""The compiled beam search: the decoding constraints hold on its outputs, beam 1 is greedy, and
the perceptron's updates on toy problems are the ones worked out by hand."""
import numpy as np
import pytest

from spacy_punctgen.incremental.labels import FINE, PAPER
from spacy_punctgen.incremental.system import LA, RA, RE, SH, State, code, split
from spacy_punctgen.inference import incremental as K

BUCKETS = 2 ** 10


def random_problem(rng, n, labels, mode):
    words = rng.integers(0, 50, size=n).astype(np.int32)
    tags = rng.integers(0, 5, size=n).astype(np.int32)
    n_w, n_c = K.n_outputs(mode, len(labels))
    W = rng.normal(size=(BUCKETS, n_w)).astype(np.float32)
    C = rng.normal(size=(BUCKETS, n_c)).astype(np.float32) if n_c else None
    return words, tags, W, C


def check_constraints(codes, n, labels):
    """Explicitly, not through State.legal: each full stop leaves one tree over the words since
    the previous one, and only Reduce follows it until the stack is empty."""
    st = State(n, labels.is_full)
    seg_start = 0
    forced = False
    assert len(codes) == 2 * n
    for c in codes:
        atype, mark = split(c)
        if forced:
            assert atype == RE, "succeeding constraint broken"
        st.apply(c)
        if atype in (SH, RA) and labels.is_full[mark]:
            words = range(seg_start, st.i)
            assert all(st.heads[w] < 0 or seg_start <= st.heads[w] < st.i for w in words)
            assert sum(st.heads[w] < 0 for w in words) == 1, "proceeding constraint broken"
            seg_start = st.i
            forced = True
        if forced and not st.stack:
            forced = False
    assert st.done
    return st


@pytest.mark.parametrize("mode", [K.UPP, K.CPP])
@pytest.mark.parametrize("labels", [PAPER, FINE])
def test_decoded_outputs_obey_the_constraints(mode, labels):
    rng = np.random.default_rng(0)
    n_full = 0
    for trial in range(40):
        n = int(rng.integers(1, 30))
        words, tags, W, C = random_problem(rng, n, labels, mode)
        W[:, :] += 0.5 * (np.arange(W.shape[1]) < len(labels))  # encourage marks on Shift
        for beam in (1, 3, 8):
            codes, heads, marks = K.beam_doc(words, tags, W, None, C, None, mode, labels.is_full, beam)
            st = check_constraints(list(codes), n, labels)
            assert list(heads) == st.heads and list(marks) == st.marks
            n_full += sum(labels.is_full[m] for m in marks)
    assert n_full > 20  # the constraints were exercised


@pytest.mark.parametrize("mode", [K.UPP, K.CPP])
def test_beam_one_is_greedy(mode):
    rng = np.random.default_rng(1)
    for trial in range(30):
        n = int(rng.integers(1, 40))
        words, tags, W, C = random_problem(rng, n, PAPER, mode)
        greedy = K.greedy(words, tags, W, C, mode, PAPER.is_full)
        codes, _, _ = K.beam_doc(words, tags, W, None, C, None, mode, PAPER.is_full, 1)
        assert list(codes) == list(greedy)


def test_upp_perceptron_update_by_hand():
    """One word, gold 'Shift(F) Reduce'.  With zero weights the first legal candidate,
    Shift(N), wins: early update at step 1 puts +1 on Shift(F) (column 2) and -1 on Shift(N)
    (column 0) for each of the initial state's 58 feature buckets (a bucket hit twice moves
    twice), U gets the same times the step count 1; the beam restarts from the gold state and
    the forced Reduce is right.  A second pass makes no update; the average after it is
    W - U/4 = 3/4 W."""
    words, tags = np.array([7], np.int32), np.array([1], np.int32)
    w = K.Weights(BUCKETS, 8)
    gold = [code(SH, 2), RE]
    counter = np.zeros(2)
    K.beam_doc(words, tags, w.W, w.U, None, None, K.UPP, PAPER.is_full, 1, gold, counter)
    f0 = K.state_features([], words, tags, PAPER.is_full, BUCKETS)
    assert len(f0) == 58
    hits = np.bincount(f0.astype(np.int64), minlength=BUCKETS).astype(np.float32)
    expected = np.zeros((BUCKETS, 8), np.float32)
    expected[:, 2] = hits
    expected[:, 0] = -hits
    assert np.array_equal(w.W, expected)
    assert np.array_equal(w.U, expected.astype(np.float64) * 1.0)
    assert list(counter) == [2, 1]
    codes, _, marks = K.beam_doc(words, tags, w.W, w.U, None, None, K.UPP, PAPER.is_full, 1, gold, counter)
    assert list(codes) == gold and list(counter) == [4, 1]
    assert np.allclose(w.averaged(counter[0]), 0.75 * expected)


def test_upp_updates_on_two_words_by_hand():
    """'a b', gold Shift(N) LeftArc Shift(F) Reduce, zero weights, beam 1, ties to the earliest.
    Step 1: Shift(N) is gold.  Step 2 (count 2): Shift(N) beats LeftArc: +1 LeftArc (column 6),
    -1 Shift(N) (column 0) on the buckets f1 of the state after Shift(N) (the shared first step
    cancels); restart from the gold state.  Step 3 (count 3): that state shares buckets with f1
    (same buffer front b), so Shift(N) now scores below 0 and Shift(M) wins the tie with Shift(F):
    +1 Shift(F) (column 2), -1 Shift(M) (column 1) on its buckets f2.  Step 4: the forced Reduce."""
    words, tags = np.array([3, 4], np.int32), np.array([0, 1], np.int32)
    w = K.Weights(BUCKETS, 8)
    gold = [code(SH, 0), LA, code(SH, 2), RE]
    counter = np.zeros(2)
    K.beam_doc(words, tags, w.W, w.U, None, None, K.UPP, PAPER.is_full, 1, gold, counter)
    f1 = K.state_features(gold[:1], words, tags, PAPER.is_full, BUCKETS).astype(np.int64)
    f2 = K.state_features(gold[:2], words, tags, PAPER.is_full, BUCKETS).astype(np.int64)
    h1 = np.bincount(f1, minlength=BUCKETS).astype(np.float64)
    h2 = np.bincount(f2, minlength=BUCKETS).astype(np.float64)
    assert h1[f2].sum() > 0  # the shared buckets that make Shift(N) lose at step 3
    first, second = np.zeros((BUCKETS, 8)), np.zeros((BUCKETS, 8))
    first[:, 6], first[:, 0] = h1, -h1
    second[:, 2], second[:, 1] = h2, -h2
    assert np.array_equal(w.W.astype(np.float64), first + second)
    assert np.array_equal(w.U, 2 * first + 3 * second)
    assert list(counter) == [4, 2]


def test_cpp_mark_classifier_is_trained_locally():
    """CPP, one word, gold Shift(F): the mark classifier predicts N first (zero weights) and is
    updated at once (+1 column SH·F = 2, -1 column SH·N = 0); with it the joint beam then picks
    Shift(F) itself, so the parser's weights never move."""
    words, tags = np.array([7], np.int32), np.array([1], np.int32)
    w, c = K.Weights(BUCKETS, 4), K.Weights(BUCKETS, 6)
    counter = np.zeros(2)
    codes, _, _ = K.beam_doc(words, tags, w.W, w.U, c.W, c.U, K.CPP, PAPER.is_full, 2, [code(SH, 2), RE], counter)
    f0 = K.state_features([], words, tags, PAPER.is_full, BUCKETS)
    hits = np.bincount(f0.astype(np.int64), minlength=BUCKETS).astype(np.float32)
    expected = np.zeros((BUCKETS, 6), np.float32)
    expected[:, 2], expected[:, 0] = hits, -hits
    assert np.array_equal(c.W, expected)
    assert not w.W.any() and counter[1] == 0
    assert list(codes) == [code(SH, 2), RE]


def test_an_illegal_gold_sequence_is_refused():
    words, tags = np.array([1, 2], np.int32), np.array([0, 0], np.int32)
    w = K.Weights(BUCKETS, 8)
    with pytest.raises(ValueError, match="E926"):
        K.beam_doc(words, tags, w.W, w.U, None, None, K.UPP, PAPER.is_full, 2, [RE, RE, RE, RE])
    with pytest.raises(ValueError, match="E922"):
        K.Weights(1000, 8)
    with pytest.raises(ValueError, match="E923"):
        K.beam_doc(words, tags[:1], w.W, None, None, None, K.UPP, PAPER.is_full, 2)
    with pytest.raises(ValueError, match="E924"):
        K.beam_doc(words, tags, w.W, None, None, None, K.UPP, PAPER.is_full, 0)
    with pytest.raises(ValueError, match="E925"):
        K.beam_doc(words, tags, w.W, w.U, None, None, K.UPP, PAPER.is_full, 2, [RE])


def test_forced_marks_are_kept():
    """Live mode forces the marks it has emitted: decoding keeps them; a full stop cannot be forced."""
    rng = np.random.default_rng(3)
    for trial in range(20):
        n = int(rng.integers(2, 30))
        words, tags, W, C = random_problem(rng, n, PAPER, K.UPP)
        k = int(rng.integers(1, n))
        forced = [int(m) for m in rng.integers(0, 2, size=k)] + [-1] * (n - k)
        codes, _, marks = K.beam_doc(words, tags, W, None, None, None, K.UPP, PAPER.is_full, 4, forced=forced)
        assert list(marks[:k]) == forced[:k]
        check_constraints(list(codes), n, PAPER)
    with pytest.raises(ValueError, match="E933"):
        K.beam_doc(words, tags, W, None, None, None, K.UPP, PAPER.is_full, 4, forced=[2] + [-1] * (n - 1))
