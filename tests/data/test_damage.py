"""The seeded punctuation damage generator (spacy_punctgen/data/damage.py)."""
from pathlib import Path

import pytest

from spacy_punctgen.data.damage import ERROR_TYPES, DEFAULT_CONFIG, DamageConfig, damage_sentences
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.testing.toy import LQ, RQ, punct_sentence, toy_sentences

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.fixture(scope="module")
def sample():
    sents = []
    for split in ("train", "dev", "test"):
        sents += preprocess_file(SAMPLE / f"en_sample-ud-{split}.conllu")[0]
    # a sentence with a semicolon between clauses and a quote before the final point
    sents.append(punct_sentence(["it", "rained", "we", "said", "stay"], ["PRON", "VERB", "PRON", "VERB", "VERB"],
                                [1, -1, 3, 1, 3], ["nsubj", "root", "nsubj", "parataxis", "ccomp"],
                                [(), (), (";",), (), (LQ,), (RQ, ".")]))
    return sents + toy_sentences()


def test_same_seed_same_damage_and_words_kept(sample):
    a, ra = damage_sentences(sample, seed=7)
    b, rb = damage_sentences(sample, seed=7)
    c, _ = damage_sentences(sample, seed=8)
    assert [s.slots for s in a] == [s.slots for s in b]
    assert ra.to_dict() == rb.to_dict()
    assert [s.slots for s in a] != [s.slots for s in c]
    for g, d in zip(sample, a):
        assert d.words == g.words and d.heads == g.heads and d.deprels == g.deprels and d.upos == g.upos
        assert len(d.slots) == len(g.slots)
    # the input is not changed
    assert [s.slots for s in sample] != [s.slots for s in a]


def test_damage_depends_on_position_only(sample):
    full, _ = damage_sentences(sample, seed=3)
    part, _ = damage_sentences(sample[:10], seed=3)
    assert [s.slots for s in full[:10]] == [s.slots for s in part]


def test_rates_near_configured_and_every_type_occurs(sample):
    config = DamageConfig(missing_comma=0.2, spurious_comma=0.02, comma_splice=0.3, missing_final=0.1,
                          quote_transposition=0.3, dropped_quote=0.1)
    big = sample * 40
    _, report = damage_sentences(big, seed=0, config=config)
    for t in ERROR_TYPES:
        n, k = report.opportunities[t], report.applied[t]
        assert k > 0, t
        rate = getattr(config, t)
        sd = (rate * (1 - rate) / n) ** 0.5
        assert abs(k / n - rate) < 4 * sd, (t, k, n)


def test_error_types_do_what_they_say():
    s = punct_sentence(["a", "b", "c", "d"], ["NOUN"] * 4, [-1, 0, 0, 0], ["root", "conj", "conj", "conj"],
                       [(), (",",), (";",), ("(",), (")", ".")])
    only = {t: 0.0 for t in ERROR_TYPES}
    for t, expect in [("missing_comma", [(), (), (";",), ("(",), (")", ".")]),
                      ("comma_splice", [(), (",",), (",",), ("(",), (")", ".")]),
                      ("missing_final", [(), (",",), (";",), ("(",), (")",)]),
                      ("quote_transposition", [(), (",",), (";",), ("(",), (".", ")")]),
                      ("dropped_quote", [(), (",",), (";",), (), (".",)])]:
        (d,), _ = damage_sentences([s], config=DamageConfig(**{**only, t: 1.0}))
        assert d.slots == expect, t
    e = punct_sentence(["a", "b", "c"], ["NOUN"] * 3, [-1, 0, 0], ["root", "conj", "conj"], [(), (), (), ()])
    (d,), r = damage_sentences([e], config=DamageConfig(**{**only, "spurious_comma": 1.0}))
    assert d.slots == [(), (",",), (",",), ()] and r.applied["spurious_comma"] == 2


def test_default_damage_is_light(sample):
    bad, report = damage_sentences(sample, seed=0)
    changed = sum(a != b for g, d in zip(sample, bad) for a, b in zip(g.slots, d.slots))
    total = sum(len(g.slots) for g in sample)
    assert 0.002 < changed / total < 0.06
    assert DEFAULT_CONFIG.missing_comma > DEFAULT_CONFIG.spurious_comma


@pytest.mark.parametrize("bad", [{"missing_comma": 1.5}, {"spurious_comma": -0.1}, {"comma_splice": "x"}])
def test_bad_config(bad):
    with pytest.raises(ValueError, match="E820"):
        DamageConfig(**bad)


def test_bad_seed_and_slots(sample):
    with pytest.raises(ValueError, match="E821"):
        damage_sentences(sample, seed=-1)
    s = punct_sentence(["a"], ["NOUN"], [-1], ["root"], [()])
    with pytest.raises(ValueError, match="E822"):
        damage_sentences([s])
