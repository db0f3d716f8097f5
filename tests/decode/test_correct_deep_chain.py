"""Correction of deep chains (issue 38): the noise model's ``N(y | x)`` is summed over the derivations
of the observed ``y`` only (:meth:`SlotNoise.damage`), not read from the list of every string the
damage process makes of ``x`` (up to 2^20 of them, cached per string: the slot where a right-branching
chain's constituents meet holds hundreds of marks). Before: a 2,000-word chain took 17 CPU s and
1.5 GB, 8,000 words 78 s and 4.8 GB; now 0.8 s and 2 s, at the same floats."""
import random
import tracemalloc

import pytest

from spacy_punctgen.data.damage import DamageConfig
from spacy_punctgen.decode.correct import (FIRST, INTERIOR, LAST, SlotNoise, correct_from_marginals,
                                           correction_marginals)
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.testing.deep_chain import punctuated_chain

MARKS = [",", ",", ";", ".", "?", "!", "\u201d", "\u201c", ")", "(", ":", "-", "\u2019", '"', "\uff0c", "\uff1b",
         "\u3002"]


class FullListNoise(SlotNoise):
    """The noise model as it was: ``N(y | x)`` read from the whole :meth:`distribution` of ``x``."""

    def prob(self, y, x, pos, comma=","):
        return (1.0 - self.eps) * self.distribution(x, pos, comma).get(tuple(y), 0.0) + self.eps


@pytest.fixture(scope="module")
def model():
    return PunctModel.from_disk(default_model_path("en"))


@pytest.mark.parametrize("rates", [
    DamageConfig(missing_comma=0.3, spurious_comma=0.2, comma_splice=0.4, missing_final=0.3,
                 quote_transposition=0.3, dropped_quote=0.2).rates(),
    {"missing_comma": 1.0, "spurious_comma": 0.0, "comma_splice": 1.0, "missing_final": 0.0,
     "quote_transposition": 1.0, "dropped_quote": 0.0}])
def test_the_derivations_of_y_are_those_of_the_full_list(rates):
    """Same derivations, same order, so the same sum to the bit: random strings of up to 13 marks
    (more than MAX_CHOICES that may change), every string they make and a few they cannot."""
    noise = SlotNoise(rates)
    rng = random.Random(0)
    for _ in range(150):
        x = tuple(rng.choice(MARKS) for _ in range(rng.randint(0, 13)))
        pos, comma = rng.choice([FIRST, INTERIOR, LAST]), rng.choice([",", "\uff0c"])
        dist = noise.distribution(x, pos, comma)
        ys = list(dist)[:30] + [tuple(rng.choice(MARKS) for _ in range(rng.randint(0, len(x) + 1)))
                                for _ in range(4)] + [(), x]
        for y in ys:
            assert noise.derivations_of(y, x, pos, comma) == [
                (a, o) for yy, a, o in noise.derivations(x, pos, comma) if yy == y]
            assert noise.damage(y, x, pos, comma) == dist.get(y, 0.0)


def test_many_swappable_pairs():
    """More pairs of a closing quote and a point than MAX_CHOICES: the later ones never swap."""
    noise = SlotNoise.from_config()
    x = tuple(["\u201d", "."] * 7 + [":"] + [",", ")"] * 5)
    dist = noise.distribution(x, LAST, ",")
    for y in list(dist)[::97] + [x, ()]:
        assert noise.damage(y, x, LAST, ",") == dist.get(y, 0.0)


def test_a_chain_is_corrected_as_from_the_full_lists(model):
    sentence = punctuated_chain(model, 80)
    marginals = correction_marginals(model, [sentence])
    assert correct_from_marginals([sentence], marginals) == \
        correct_from_marginals([sentence], marginals, FullListNoise.from_config())


def test_a_1000_word_chain_is_corrected_in_little_memory(model):
    """Before: the damaged strings of each of the last slot's strings (92 marks long) were listed and
    kept, hundreds of MB."""
    sentence = punctuated_chain(model, 1000)
    marginals = correction_marginals(model, [sentence])
    tracemalloc.start()
    try:
        out = correct_from_marginals([sentence], marginals)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(out[0]) == 1001
    assert peak < 50 * 2 ** 20, peak / 2 ** 20
