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
