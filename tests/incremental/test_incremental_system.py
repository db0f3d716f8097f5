"""The transition system on hand-built trees: every gold tree with its marks is reachable, the
oracle's sequence rebuilds it (in Python and in the compiled loops), and the paper's example."""
import itertools

import pytest

from spacy_punctgen.evaluation.stream import stream_class
from spacy_punctgen.incremental.labels import FINE, PAPER
from spacy_punctgen.incremental.system import LA, RA, RE, SH, State, code, oracle, segment_heads, segments
from spacy_punctgen.inference import incremental as K

N, M, F = 0, 1, 2


def is_projective_forest(heads):
    n = len(heads)
    for d, h in enumerate(heads):
        if h < 0:
            continue
        lo, hi = min(d, h), max(d, h)
        for k in range(lo + 1, hi):
            a = k
            while a >= 0 and a != h:
                a = heads[a]
            if a != h:
                return False
    # roots do not sit inside another tree's span
    for r in (i for i in range(n) if heads[i] < 0):
        for d, h in enumerate(heads):
            if h >= 0 and min(d, h) < r < max(d, h):
                return False
    return True


def is_forest(heads):
    for i in range(len(heads)):
        seen, a = set(), i
        while a >= 0:
            if a in seen:
                return False
            seen.add(a)
            a = heads[a]
    return True


def one_tree_per_segment(heads, marks, is_full):
    for start, end in segments(marks, is_full):
        if any(not start <= heads[i] < end for i in range(start, end) if heads[i] >= 0):
            return False
        if sum(heads[i] < 0 for i in range(start, end)) != 1:
            return False
    return True


def check_reproduced(heads, marks, labels=PAPER):
    codes = oracle(heads, marks, labels.is_full)
    assert len(codes) == 2 * len(heads)
    st = State(len(heads), labels.is_full)
    for c in codes:
        st.apply(c)
    assert st.done and st.heads == list(heads) and st.marks == list(marks)
    h, m, ok = K.replay(codes, len(heads), labels.is_full)
    assert ok and list(h) == list(heads) and list(m) == list(marks)


def test_paper_figure_2():
    """'so could you tell me' -> 'so, could you tell me?': the paper's own action sequence."""
    heads = [3, 3, 3, -1, 3]
    marks = [1, 0, 0, 0, 3]  # so "," ... me "?"
    codes = oracle(heads, marks, FINE.is_full)
    assert codes == [code(SH, 1), code(SH, 0), code(SH, 0), LA, LA, LA, code(SH, 0), code(RA, 3), RE, RE]
    check_reproduced(heads, marks, FINE)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_every_projective_tree_with_every_marking_is_reachable(n):
    """Exhaustive over small streams: every head vector that is one projective tree per full-stop
    segment, with every mark sequence, is rebuilt exactly by the oracle's actions."""
    checked = 0
    for heads in itertools.product(range(-1, n), repeat=n):
        heads = list(heads)
        if any(h == i for i, h in enumerate(heads)) or not is_forest(heads) or not is_projective_forest(heads):
            continue
        for marks in itertools.product((N, M, F), repeat=n):
            if one_tree_per_segment(heads, marks, PAPER.is_full):
                check_reproduced(heads, list(marks))
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("n", [2, 3, 4])
def test_any_forest_and_marking_becomes_a_reachable_gold(n):
    """Sentences that end without a full stop, full stops inside a sentence, non-projective
    trees: segment_heads makes each of them one projective tree per segment, arcs inside a
    segment kept where they can be."""
    for heads in itertools.product(range(-1, n), repeat=n):
        heads = list(heads)
        if any(h == i for i, h in enumerate(heads)) or not is_forest(heads):
            continue
        for marks in itertools.product((N, M, F), repeat=n):
            marks = list(marks)
            fixed = segment_heads(heads, marks, PAPER.is_full)
            assert is_forest(fixed) and is_projective_forest(fixed)
            assert one_tree_per_segment(fixed, marks, PAPER.is_full)
            if one_tree_per_segment(heads, marks, PAPER.is_full) and is_projective_forest(heads):
                assert fixed == heads
            check_reproduced(fixed, marks)


def test_hand_built_stream_of_two_sentences():
    # "yes i agree . do you , really ?" without the marks: 'yes' hangs from agree
    words = "yes i agree do you really".split()
    heads = [2, 2, -1, -1, 3, 3]
    marks = [M, N, F, N, M, F]
    assert segment_heads(heads, marks, PAPER.is_full) == heads
    codes = oracle(heads, marks, PAPER.is_full)
    assert codes[:6] == [code(SH, M), code(SH, N), LA, LA, code(SH, F), RE]
    check_reproduced(heads, marks)
    assert len(words) == len(heads)


def test_constraints_in_the_state():
    st = State(4, PAPER.is_full)
    st.apply(code(SH, N))
    st.apply(code(SH, N))  # two headless words on the stack
    assert not st.legal(code(RA, F))  # would leave two trees: proceeding constraint
    assert st.legal(code(RA, N))
    st.apply(LA)
    st.apply(code(SH, N))
    assert not st.legal(RE)  # a headless word cannot be popped mid-stream
    st = State(3, PAPER.is_full)
    st.apply(code(SH, F))  # a one-word sentence
    assert st.legal_codes(3) == [RE]  # succeeding constraint
    st.apply(RE)
    assert st.legal(code(SH, N)) and not st.forced


def test_labels_agree_with_the_stream_scores():
    for gap in ["", ",", ";", ":", ".", "?", "!", ", .", "?!", "\u201c", ") ,", "...", "-"]:
        assert PAPER.classes[PAPER.classify(gap)] == (stream_class(gap) or "N")
    assert [FINE.classify(g) for g in ["", ";", "!", "? ."]] == [0, 1, 2, 3]
