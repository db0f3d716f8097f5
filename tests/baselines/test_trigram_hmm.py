"""trigram_hmm (paper 001): subtree end counts on a hand-built tree, the Kneser–Ney model against
probabilities computed by hand, Viterbi against brute force, the comma metrics on hand-counted
slots, and a fit on the sample that overfits its training set and reloads identically."""
import itertools
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest

from spacy_punctgen.baselines import get_system
from spacy_punctgen.baselines.base import load_baseline
from spacy_punctgen.baselines.trigram_hmm import (UNK, VARIANTS, KneserNey, TrigramHMM, brute_force,
                                                  comma_scores, end_counts, viterbi)
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_file
from spacy_punctgen.evaluation.metrics import gold_slots

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def sentence(words, heads, deprels=None, upos=None, slots=None):
    n = len(words)
    return PunctSentence(list(words), list(upos or ["X"] * n), ["_"] * n, list(deprels or ["dep"] * n),
                         list(heads), [tuple(s) for s in (slots or [()] * (n + 1))])


def test_end_counts_of_a_hand_built_tree():
    # the(0) -> dog(1) -> barked(2, root) <- loudly(3); subtrees: the [0,0], dog [0,1],
    # barked [0,3], loudly [3,3]: slot 1 ends 'the', slot 2 'dog', slot 4 'barked' and 'loudly'
    assert end_counts([1, 2, -1, 2]) == [0, 1, 1, 0, 2]
    # a chain to the right: every subtree ends with the last word
    assert end_counts([-1, 0, 1]) == [0, 0, 0, 3]


def test_kneser_ney_bigram_against_hand_computed_values():
    kn = KneserNey(1).fit({(("a",), "b"): 2, (("a",), "c"): 1, (("b",), "c"): 1})
    # discounts: level 1 counts 2,1,1 -> 2/(2+2) = 1/2; continuation counts b:1, c:2 -> 1/(1+2)
    assert kn._d == pytest.approx([1 / 3, 1 / 2])
    # p0(w) = (max(N(w) - 1/3, 0) + 1/3 * 2 types * 1/3 (|V| = b, c, <unk>)) / 3
    p0 = {"b": Fraction(8, 27), "c": Fraction(17, 27), UNK: Fraction(2, 27)}
    for w, p in p0.items():
        assert kn.prob(w, ("zzz",)) == pytest.approx(float(p))  # unseen context: the unigram level
    # p(b | a) = (2 - 1/2 + 1/2 * 2 * 8/27) / 3 ; p(c | a) = (1 - 1/2 + 1/2 * 2 * 17/27) / 3
    assert kn.prob("b", ("a",)) == pytest.approx(97 / 162)
    assert kn.prob("c", ("a",)) == pytest.approx(61 / 162)
    assert kn.prob(UNK, ("a",)) == pytest.approx(4 / 162)
    assert kn.prob("c", ("b",)) == pytest.approx(22 / 27)
    assert kn.prob("b", ("b",)) == pytest.approx(4 / 27)


def test_kneser_ney_sums_to_one_at_every_order():
    rng = random.Random(0)
    toks = ["x", "y", "z", ","]
    counts = {}
    for _ in range(200):
        ev = (tuple(rng.choice(toks) for _ in range(3)), rng.choice(toks))
        counts[ev] = counts.get(ev, 0) + rng.randint(1, 3)
    kn = KneserNey(3).fit(counts)
    for ctx in [("x", "y", "z"), ("q", "y", "z"), ("q", "q", "z"), ("q", "q", "q")]:
        assert sum(kn.prob(w, ctx) for w in kn.vocab) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="E901"):
        kn.prob("x", ("x",))
    with pytest.raises(ValueError, match="E902"):
        KneserNey(2).fit({})


@pytest.mark.parametrize("n", range(0, 8))
def test_viterbi_equals_brute_force(n):
    rng = random.Random(n)
    table = {(i, p, c): rng.gauss(0, 1) for i in range(n + 1) for p in (False, True) for c in (False, True)}

    def logscore(i, decisions):
        return table[(i,) + tuple(decisions)]

    assert viterbi(n, logscore) == brute_force(n, logscore)


@pytest.fixture(scope="module")
def sample():
    return (preprocess_file(SAMPLE / "en_sample-ud-train.conllu")[0],
            preprocess_file(SAMPLE / "en_sample-ud-test.conllu")[0])


@pytest.mark.parametrize("variant", ["ec_threshold", "ec_full_pos"])
def test_decode_maximises_the_model_score(sample, variant):
    train, test = sample
    model = TrigramHMM().fit(train, variant=variant, ec_min=2)
    for sent in [s for s in test if 2 <= len(s.words) <= 9][:4]:
        best = max(itertools.product((False, True), repeat=len(sent.words) - 1),
                   key=lambda p: model.logscore(sent, (False,) + p + (False,)))
        assert model.decode(sent) == [False, *best, False]


def test_comma_scores_on_hand_counted_slots():
    gold = [[(), (",",), (), (".",)], [(), (",", "“"), (",",), ()]]
    pred = [[(), (",",), (",",), ()], [(), (), (",",), ()]]
    s = comma_scores(gold, pred)
    assert (s["tp"], s["fp"], s["fn"]) == (2, 1, 1)
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == pytest.approx(2 / 3)
    assert s["ser"] == pytest.approx(2 / 3)
    assert s["token_accuracy"] == pytest.approx(2 / 4)  # inner slots only
    assert s["sentence_accuracy"] == 0.0
    assert comma_scores(gold[:1], gold[:1])["sentence_accuracy"] == 1.0
    with pytest.raises(ValueError, match="E907"):
        comma_scores(gold, pred[:1])


@pytest.mark.parametrize("variant", VARIANTS)
def test_fits_the_sample_and_reloads(sample, variant, tmp_path):
    train, test = sample[0][:80], sample[1]
    model = get_system("trigram_hmm")().fit(train, variant=variant, min_count=1)
    pred = model.predict(test)
    assert [len(p) for p in pred] == [len(s.words) + 1 for s in test]
    assert all(p[0] == () and p[-1] == () and set(p) <= {(), (",",)} for p in pred)
    fit = comma_scores(gold_slots(train), model.predict(train))
    assert fit["f1"] > 0.8, fit  # it has seen every trigram of its training set
    again = load_baseline(model.to_disk(tmp_path / variant))
    assert isinstance(again, TrigramHMM) and again.predict(test) == pred


def test_bad_settings_are_named(sample):
    train, _ = sample
    with pytest.raises(ValueError, match="E900"):
        TrigramHMM().fit(train, variant="ec")
    with pytest.raises(ValueError, match="E908"):
        TrigramHMM().fit(train, variant="ec_threshold", ec_min=0)
    with pytest.raises(ValueError, match="E576"):
        TrigramHMM().fit(train, order=4)
    with pytest.raises(ValueError, match="E903"):
        TrigramHMM().predict(train)
    with pytest.raises(ValueError, match="E906"):
        TrigramHMM().fit([sentence(["a", "b"], [-1])])
    assert math.isfinite(TrigramHMM().fit(train).logscore(train[0], [False] * (len(train[0].words) + 1)))
