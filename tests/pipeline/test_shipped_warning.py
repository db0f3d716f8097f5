"""A shipped model whose files are missing is a warning (W001), not a silent fall-back; a
language for which none ships is no warning at all."""
import warnings

import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen.pipeline import component, shipped


def test_a_broken_shipped_model_is_a_warning(monkeypatch, tmp_path):
    monkeypatch.setattr(shipped, "MODELS_DIR", tmp_path)  # en_ewt/ is not there
    with pytest.warns(UserWarning, match=r"\[W001\].*'en'.*E011.*cfg\.json"):
        assert component.shipped_model_path("en") is None
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen")
    with pytest.warns(UserWarning, match="W001"), pytest.raises(ValueError, match="E003"):
        pipe(Doc(nlp.vocab, words=["Hello"], heads=[0], deps=["ROOT"], pos=["INTJ"]))


def test_no_model_shipping_is_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert component.shipped_model_path("xx") is None
