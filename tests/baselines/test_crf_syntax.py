"""crf_syntax (paper 004): its dependency features on hand-built UD trees of the paper's own
examples (values worked out by hand, with where UD's attachment makes them differ from the
paper's FTB/PDT trees), and a fit on the sample that overfits, predicts commas only and reloads."""
from pathlib import Path

import pytest

from spacy_punctgen.baselines import get_system
from spacy_punctgen.baselines.base import load_baseline
from spacy_punctgen.baselines.crf_syntax import (SyntacticCRF, comma_view, dep_cross, is_coord, is_coord_cz,
                                                 is_mod, parse_groups, tree_features)
from spacy_punctgen.baselines.trigram_hmm import comma_scores
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_file
from spacy_punctgen.evaluation.metrics import gold_slots

pytest.importorskip("pycrfsuite", reason="crf_syntax needs python-crfsuite")
SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"

# "les pommes, les poires et les bananes": poires and bananes are conj of pommes, et cc of bananes
FRUIT = dict(heads=[1, -1, 3, 1, 6, 6, 1], deprels=["det", "root", "det", "conj", "cc", "det", "conj"],
             upos=["DET", "NOUN", "DET", "NOUN", "CCONJ", "DET", "NOUN"])
# "lundi et mardi, je prendrai le premier train"
TRAIN = dict(heads=[4, 2, 0, 4, -1, 7, 7, 4], deprels=["obl", "cc", "conj", "nsubj", "root", "det", "amod", "obj"])
# "v Praze, Brně, Ostravě a Plzni"
CITIES = dict(heads=[1, -1, 1, 1, 5, 1], deprels=["case", "root", "conj", "conj", "cc", "conj"])


def test_is_coord():
    # the paper (FTB trees): F T T F F F F; in UD 'et' and the third 'les' also see bananes' conj arc
    values = [is_coord(FRUIT["heads"], FRUIT["deprels"], FRUIT["upos"], i) for i in range(7)]
    assert values == [False, True, True, False, True, True, False]


def test_is_mod():
    # the paper: 0 1 2 -1 -1 -1 0 -1; in UD 'lundi' heads 'lundi et mardi', so only mardi ends it
    assert [is_mod(TRAIN["heads"], TRAIN["deprels"], i) for i in range(8)] == [-1, -1, 2, -1, -1, -1, 0, -1]


def test_dep_cross():
    # the paper: coord depcoord LEFTmod LEFTsubj obj obj obj NIL (FTB labels)
    assert [dep_cross(TRAIN["heads"], TRAIN["deprels"], i) for i in range(8)] == [
        "conj", "conj", "LEFTobl", "LEFTnsubj", "obj", "obj", "obj", "NIL"]


def test_is_coord_cz():
    # conjuncts before 'a': Praze (2 more before 'a'), Brně (1), Ostravě (0); 'v', 'a', Plzni: -1
    assert [is_coord_cz(CITIES["heads"], CITIES["deprels"], i) for i in range(6)] == [-1, 2, 1, 0, -1, -1]
    # no coordinating word: every conjunct counts to the end; a conjunct with a dependent to its right
    heads, rels = [-1, 2, 0, 2], ["root", "amod", "conj", "nmod"]  # A, big B C (C under B)
    assert [is_coord_cz(heads, rels, i) for i in range(4)] == [1, -1, -1, 0]


def test_tree_features_and_groups():
    sent = PunctSentence(["lundi", "et", "mardi", "je", "prendrai", "le", "premier", "train"], ["X"] * 8, ["_"] * 8,
                         TRAIN["deprels"], TRAIN["heads"], [()] * 9)
    feats = tree_features(sent, parse_groups("pos+DepCross+DepLabel"))
    assert feats[2] == ["DepCross=LEFTobl", "DepLabel=conj"]
    assert parse_groups("DepCross+pos") == ["lex", "pos", "DepCross"]
    with pytest.raises(ValueError, match="E905"):
        parse_groups("lex+Prosody")
    model = SyntacticCRF()
    model.groups = parse_groups("lex")
    assert all(not any("=" in f and f.split("=")[0][0].isupper() for f in x) for x in model._xseq(sent))


@pytest.fixture(scope="module")
def sample():
    return (preprocess_file(SAMPLE / "en_sample-ud-train.conllu")[0],
            preprocess_file(SAMPLE / "en_sample-ud-test.conllu")[0])


def test_fits_the_sample_and_reloads(sample, tmp_path):
    train, test = sample
    model = get_system("crf_syntax")().fit(train, features="lex+pos+IsCoord+IsMod+DepCross+DepLabel+IsCoordCz",
                                          max_iterations=40)
    pred = model.predict(test)
    assert [len(p) for p in pred] == [len(s.words) + 1 for s in test]
    assert all(set(p) <= {(), (",",)} for p in pred)
    assert comma_scores(gold_slots(train), model.predict(train))["f1"] > 0.8
    assert gold_slots([comma_view(s) for s in test]) == [[(",",) if "," in x else () for x in s.slots] for s in test]
    again = load_baseline(model.to_disk(tmp_path / "crf_syntax"))
    assert isinstance(again, SyntacticCRF) and again.groups == model.groups and again.predict(test) == pred
    with pytest.raises(ValueError, match="E571"):
        model.slot_log_probs(test)
    with pytest.raises(ValueError, match="E576"):
        SyntacticCRF().fit(train, window=3)
