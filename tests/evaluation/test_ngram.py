"""The trigram models (Kneser–Ney, add-k) of spacy_punctgen/evaluation/ngram.py."""
import math
import random

import pytest

from spacy_punctgen.evaluation.ngram import BOS, EOS, UNK, AddKTrigram, KneserNeyTrigram

TOY = [["a", "b", "c"], ["a", "b", "b"], ["b", "c", "a", ","], ["c", ",", "a", "b", "."]]


@pytest.fixture(scope="module")
def lm():
    return KneserNeyTrigram().fit(TOY)


@pytest.mark.parametrize("context", [(BOS, BOS), (BOS, "a"), ("a", "b"), ("b", "c"), ("zz", "b"), ("c", "zz")])
def test_sums_to_one(lm, context):
    assert sum(lm.prob(w, context) for w in lm.vocab) == pytest.approx(1.0, abs=1e-12)


def test_hand_computed(lm):
    # unigram continuation counts N1+(. w) over the distinct bigrams (v, w) that occur as
    # the last two tokens of a trigram
    bigrams = set()
    for s in TOY:
        t = [BOS, BOS] + s + ["</s>"]
        bigrams.update(zip(t[1:-1], t[2:]))
    cont1 = {}
    for _, w in bigrams:
        cont1[w] = cont1.get(w, 0) + 1
    total = len(bigrams)
    d1, d2, d3 = lm.d1, lm.d2, lm.d3
    V = len(lm.vocab)
    p1 = lambda w: (max(cont1.get(w, 0) - d1, 0) + d1 * len(cont1) / V) / total
    # p(b | a) at the bigram level: continuation counts N1+(. a w): (BOS,a,b), (",",a,b) for w = b;
    # (c,a,",") ; so N1+(. a .) = 3 and a has 2 distinct continuations
    p2_b_a = (max(2 - d2, 0) + d2 * 2 * p1("b")) / 3
    # trigram (BOS, a): c(BOS a b) = 2, c(BOS a .) = 2, one distinct follower
    assert lm.prob("b", (BOS, "a")) == pytest.approx((2 - d3 + d3 * 1 * p2_b_a) / 2)
    assert lm.prob("c", (BOS, "a")) == pytest.approx(d3 * 1 * ((0 + d2 * 2 * p1("c")) / 3) / 2)


def test_unknown_word(lm):
    assert lm.token("never-seen") == UNK
    p = lm.prob("never-seen", ("a", "b"))
    assert 0 < p < lm.prob("c", ("a", "b"))
    assert p == lm.prob(UNK, ("a", "b"))


def test_shuffled_text_is_less_likely():
    rng = random.Random(0)
    words = "the cat sat on the mat , and the dog ate the bone .".split()
    train = [words[: rng.randint(4, len(words))] for _ in range(50)]
    lm = KneserNeyTrigram().fit(train)
    shuffled = [rng.sample(s, len(s)) for s in train]
    assert lm.perplexity(train)["perplexity"] < lm.perplexity(shuffled)["perplexity"]


def test_keep_filter_and_errors(lm):
    full = lm.perplexity(TOY)
    part = lm.perplexity(TOY, keep=lambda tri: "," in tri)
    assert part["tokens"] < full["tokens"]
    assert full["mean_logprob"] == pytest.approx(-math.log(full["perplexity"]))
    with pytest.raises(ValueError, match="E862"):
        lm.perplexity(TOY, keep=lambda tri: False)
    with pytest.raises(ValueError, match="E860"):
        KneserNeyTrigram().fit([])
    with pytest.raises(ValueError, match="E861"):
        KneserNeyTrigram().prob("a", (BOS, BOS))


@pytest.mark.parametrize("context", [(BOS, BOS), (BOS, "a"), ("a", "b"), ("zz", "b")])
def test_add_k_sums_to_one(context):
    lm = AddKTrigram(0.001).fit(TOY)
    assert sum(lm.prob(w, context) for w in lm.vocab) == pytest.approx(1.0, abs=1e-12)


def test_add_k_hand_computed():
    k = 0.5
    lm = AddKTrigram(k).fit(TOY)
    # vocabulary: a b c , . plus </s> and <unk>
    assert lm.vocab == sorted(["a", "b", "c", ",", ".", EOS, UNK])
    V = 7
    # c(<s> a b) = 2 of c(<s> a ·) = 2
    assert lm.prob("b", (BOS, "a")) == pytest.approx((2 + k) / (2 + k * V))
    # an unseen trigram in a seen context, and an unknown word (scored as <unk>)
    assert lm.prob("c", (BOS, "a")) == pytest.approx(k / (2 + k * V))
    assert lm.prob("zz", (BOS, "a")) == lm.prob(UNK, (BOS, "a"))
    # an unseen context: uniform
    assert lm.prob("a", ("c", "c")) == pytest.approx(1 / V)
    # perplexity of one sentence from its probabilities
    s = ["a", "b", "c"]
    ps = [lm.prob("a", (BOS, BOS)), lm.prob("b", (BOS, "a")), lm.prob("c", ("a", "b")), lm.prob(EOS, ("b", "c"))]
    assert lm.perplexity([s])["perplexity"] == pytest.approx(math.exp(-sum(map(math.log, ps)) / 4))


def test_add_k_errors():
    for k in (0, -1.0, float("nan"), float("inf"), "0.1"):
        with pytest.raises(ValueError, match="E869"):
            AddKTrigram(k)
    with pytest.raises(ValueError, match="E861"):
        AddKTrigram().prob("a", (BOS, BOS))
    with pytest.raises(ValueError, match="E860"):
        AddKTrigram().fit([])
