"""The English model shipped as package data (spacy_punctgen/shipped/en_ewt)."""
import configparser
import math
from pathlib import Path

import pytest

from spacy_punctgen.evaluation.perplexity import evaluate_model
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import MODELS_DIR, SHIPPED, default_model_path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_TEST = ROOT / "assets" / "sample" / "en_sample-ud-test.conllu"
#: measured when the model was shipped (docs/results_model.md): 1.2507 per slot on this file
SAMPLE_PPL_MAX = 1.27


def test_default_model_path_for_english():
    path = default_model_path("en")
    assert path == MODELS_DIR / SHIPPED["en"] and (path / "cfg.json").is_file()
    assert default_model_path("EN") == path


def test_no_model_for_other_languages_names_the_language():
    with pytest.raises(ValueError, match="'xx'"):
        default_model_path("xx")


def test_shipped_model_scores_the_sample_test_file():
    model = PunctModel.from_disk(default_model_path("en"))
    assert model.mode == "full" and model.direction in ("l2r", "r2l")
    res = evaluate_model(model, SAMPLE_TEST)
    assert math.isfinite(res["perplexity_per_slot"])
    assert 1.0 < res["perplexity_per_slot"] < SAMPLE_PPL_MAX
    assert res["n_sentences"] > 20


def test_shipped_model_is_small_and_installed_as_package_data():
    files = list((MODELS_DIR / SHIPPED["en"]).iterdir())
    assert sum(f.stat().st_size for f in files) < 10_000_000
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert "shipped/*/*" in cfg["options.package_data"]["spacy_punctgen"]
