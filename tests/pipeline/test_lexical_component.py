"""The component restores with the model's lexical expert (saved beside the model), at the
weight chosen when it was trained or at ``lexical_weight``; the expert travels with every
serialisation of the component."""
import pickle

import numpy as np
import pytest
import spacy

import spacy_punctgen
from spacy_punctgen.api.stream import restore_text
from spacy_punctgen.model.lexical import CLASSES, LexicalExpert
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import restore_model_path

TEXT = "so what do you think we should do about it i think we should go home now"


def _question_expert(weight=1.0):
    """An expert that puts a question mark after every word whatever the words (its bias alone)."""
    expert = LexicalExpert(length=64, weight=weight)
    params = expert.params()
    params["b"] = np.zeros(len(CLASSES), np.float32)
    params["b"][CLASSES.index("?")] = 30.0
    expert.set_params(params)
    return expert


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("lexical")
    plain = PunctModel.from_disk(restore_model_path("en"))
    plain.to_disk(base / "plain")
    plain.lexical = _question_expert()
    plain.to_disk(base / "with")
    return base / "plain", base / "with"


def _restored(nlp, text=TEXT):
    return restore_text(nlp, text)


def test_the_expert_is_used_and_weight_zero_is_punctgen_alone(model_dirs, shipped_parser):
    plain, with_expert = model_dirs
    alone = _restored(spacy_punctgen.load("en", model=plain))
    used = _restored(spacy_punctgen.load("en", model=with_expert))
    assert used != alone and used.count("?") >= 10  # the expert's overwhelming '?' evidence
    off = _restored(spacy_punctgen.load("en", model=with_expert, config={"lexical_weight": 0.0}))
    assert off == alone
    with pytest.raises(Exception, match="E996"):
        spacy_punctgen.load("en", model=with_expert, config={"lexical_weight": -1.0})


def test_the_expert_travels_with_the_component(model_dirs, shipped_parser, tmp_path):
    _, with_expert = model_dirs
    nlp = spacy_punctgen.load("en", model=with_expert)
    want = _restored(nlp)
    nlp.to_disk(tmp_path / "pipe")
    assert _restored(spacy.load(tmp_path / "pipe")) == want
    pg = nlp.get_pipe("punctgen")
    back = spacy_punctgen.load("en", model=with_expert)
    back.get_pipe("punctgen").from_bytes(pg.to_bytes())
    assert _restored(back) == want
    assert _restored(pickle.loads(pickle.dumps(nlp))) == want


def test_sampling_decoders_do_not_read_the_expert(model_dirs, shipped_parser):
    plain, with_expert = model_dirs
    cfg = {"restore_method": "slot", "n_samples": 50, "seed": 3}
    assert _restored(spacy_punctgen.load("en", model=with_expert, config=cfg)) == \
        _restored(spacy_punctgen.load("en", model=plain, config=cfg))


def test_load_adds_an_expert_from_a_folder(model_dirs, shipped_parser, tmp_path):
    from spacy_punctgen.pipeline.shipped import ship_lexical

    plain, with_expert = model_dirs
    shipped = ship_lexical(with_expert, tmp_path / "en_test_lexical", "en_test")
    assert sorted(p.name for p in shipped.iterdir()) == ["LICENSE", "lexical.json", "lexical.npz"]
    assert "UD en_test" in (shipped / "LICENSE").read_text(encoding="utf-8")
    want = _restored(spacy_punctgen.load("en", model=with_expert))
    nlp = spacy_punctgen.load("en", model=plain, lexical=shipped)
    assert _restored(nlp) == want  # the folder's expert, beside a model that has none
    assert nlp.get_pipe("punctgen").cfg["lexical_model"] == str(shipped)
    with pytest.raises(ValueError, match="E004"):
        _restored(spacy_punctgen.load("en", model=plain, lexical=tmp_path / "nothing"))
    with pytest.raises(ValueError, match="E994"):
        ship_lexical(plain, tmp_path / "none", "en_test")


def test_the_shipped_expert(shipped_parser):
    from spacy_punctgen.pipeline.shipped import lexical_expert_path

    try:
        path = lexical_expert_path("en")
    except ValueError as err:
        pytest.skip(str(err))
    nlp = spacy_punctgen.load("en", lexical=True)
    restored = _restored(nlp)
    assert nlp.get_pipe("punctgen").require_model().lexical is not None
    assert restored.replace(",", "").replace(".", "").replace("?", "").split() == TEXT.split()
    assert (path / "LICENSE").read_text(encoding="utf-8").count("CC BY-SA 4.0") == 1
    with pytest.raises(ValueError, match="E999"):
        lexical_expert_path("xx")
