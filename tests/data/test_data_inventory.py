"""Puncteme vocabulary, symbols, allowed pairs W_d, rare words, serialisation."""
import json
import random
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import find_split
from spacy_punctgen.data.inventory import PunctInventory, relation_key
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_file, subtree_spans

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def sent(words, heads, deprels, slots):
    n = len(words)
    return PunctSentence(words=words, upos=["X"] * n, xpos=["_"] * n, deprels=deprels,
                         heads=heads, slots=[tuple(s) for s in slots])


TOY = [
    # "Yes, he left."
    sent(["Yes", "he", "left"], [2, 2, -1], ["discourse", "nsubj", "root"], [(), (",",), (), (".",)]),
    # "(x, y)" with a relative clause
    sent(["x", "y"], [-1, 0], ["root", "acl:relcl"], [("(",), (",",), (")",)]),
]


@pytest.fixture(scope="module")
def sample_train():
    return preprocess_file(find_split(SAMPLE, "train"))[0]


def test_punctemes_and_symbols():
    inv = PunctInventory.from_sentences(TOY)
    assert inv.punctemes == [(), ("(",), (")",), (",",), (".",)]
    assert inv.symbols == ["^", "<unk>", "(", ")", ",", "."]
    assert inv.puncteme_id((",",)) == 3 and inv.puncteme_id([]) == 0
    assert inv.puncteme_id(("!",)) is None
    assert inv.symbol_id(".") == 5 and inv.symbol_id("^") == 0 and inv.symbol_id("\u00bf") == 1


def test_pairs_halves_and_full():
    full = PunctInventory.from_sentences(TOY, pairs_mode="full")
    p = {s: full.puncteme_id(s) for s in [(), ("(",), (")",), (",",), (".",)]}
    E, LP, RP, C, D = p[()], p[("(",)], p[(")",)], p[(",",)], p[(".",)]
    assert full.pairs == {
        "discourse": sorted({(E, E), (E, C)}),
        "nsubj": sorted({(E, E), (C, E)}),
        "root": sorted({(E, E), (E, D), (LP, RP)}),
        "acl": sorted({(E, E), (C, RP)}),
    }
    halves = PunctInventory.from_sentences(TOY)  # the default
    assert halves.pairs_mode == "halves"
    assert halves.pairs["root"] == sorted({(E, E), (E, D), (LP, RP), (LP, E), (E, RP)})
    assert halves.pairs["acl"] == sorted({(E, E), (C, RP), (C, E), (E, RP)})


def test_pairs_for_subtypes_and_unseen_relation_backoff():
    inv = PunctInventory.from_sentences(TOY)
    assert relation_key("acl:relcl") == "acl" and relation_key("ROOT") == "root"
    assert inv.pairs_for("acl:relcl") == inv.pairs["acl"] == inv.pairs_for("acl")
    union = inv.pairs_for("vocative")
    assert union == sorted(set().union(*map(set, inv.pairs.values())))
    assert (0, 0) in union


def test_rare_words_become_unk():
    many = TOY * 5 + [sent(["left"], [-1], ["root"], [(), ()])]
    inv = PunctInventory.from_sentences(many, min_count=6)
    assert inv.word_counts["left"] == 6 and inv.word_counts["he"] == 5
    assert inv.word("left") == "left" and inv.word("he") == "UNK" and inv.word("never") == "UNK"
    assert PunctInventory.from_sentences(many).word("he") == "he"  # default min_count 5


def test_every_training_sentence_is_reachable(sample_train):
    inv = PunctInventory.from_sentences(sample_train)
    for s in sample_train:
        for node, (a, b) in enumerate(subtree_spans(s.heads)):
            pair = (inv.puncteme_id(s.slots[a]), inv.puncteme_id(s.slots[b + 1]))
            assert pair in inv.pairs_for(s.deprels[node])
    assert all(inv.symbol_id(t) > 1 for p in inv.punctemes for t in p)
    assert ("ABBR.",) in inv.punctemes or all(("ABBR." not in sl) for s in sample_train for sl in s.slots)


def test_deterministic_and_json_round_trip(sample_train):
    inv = PunctInventory.from_sentences(sample_train)
    shuffled = list(sample_train)
    random.Random(0).shuffle(shuffled)
    assert PunctInventory.from_sentences(shuffled).to_dict() == inv.to_dict()
    text = json.dumps(inv.to_dict(), ensure_ascii=False)
    back = PunctInventory.from_dict(json.loads(text))
    assert back == inv and back.to_dict() == inv.to_dict()
    assert back.pairs_for("nope") == inv.pairs_for("nope")
    assert back.word("the") == inv.word("the") == "the"
    assert inv != PunctInventory.from_sentences(TOY)
    for lst in inv.pairs.values():
        assert lst == sorted(set(lst)) and (0, 0) in lst


def test_bad_arguments():
    with pytest.raises(ValueError):
        PunctInventory.from_sentences(TOY, pairs_mode="sideways")
    with pytest.raises(ValueError):
        PunctInventory({}, [(",",)], ["^", "<unk>"], {})
