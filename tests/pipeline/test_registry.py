"""The punctgen component's registered functions: its thinc model is the architecture
``spacy_punctgen.PunctModel.v1`` and its scores come from the scorer
``spacy_punctgen.punct_scorer.v1``; both are named in its config and resolved by spaCy."""
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.training import Example
from thinc.api import Config, Model

from spacy_punctgen.pipeline.architectures import build_punct_model
from spacy_punctgen.pipeline.scorers import punct_score
from spacy_punctgen.testing.env import package_env

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = "spacy_punctgen.PunctModel.v1"
SCORER = "spacy_punctgen.punct_scorer.v1"


@spacy.registry.scorers("test_punctgen.recording_scorer.v1")
def make_recording_scorer():
    def score(examples, **kwargs):
        return {"n_examples": len(list(examples)), **{k: kwargs[k] for k in ("restore_method", "n_samples", "seed")},
                "got_model": kwargs["punct_model"] is not None}

    return score


def examples(nlp, gold_docs, n=6):
    return [Example(doc.copy(), doc) for doc in gold_docs(nlp, n)]


def test_the_architecture_and_the_scorer_are_registered():
    assert spacy.registry.architectures.get(ARCHITECTURE) is build_punct_model
    assert spacy.registry.scorers.get(SCORER)() is punct_score


def test_the_architecture_holds_the_parameters_and_takes_their_gradients():
    model = spacy.registry.architectures.get(ARCHITECTURE)()
    assert isinstance(model, Model) and model.param_names == ("theta", "psi")
    model.set_param("theta", np.ones(3, dtype=np.float32))
    model.set_param("psi", np.zeros((2, 2, 4), dtype=np.float32))
    (theta, psi), backprop = model.begin_update(None)
    assert theta.shape == (3,) and psi.shape == (2, 2, 4)
    backprop((np.full(3, 2.0, dtype=np.float32), np.ones((2, 2, 4), dtype=np.float32)))
    assert model.get_grad("theta").tolist() == [2.0, 2.0, 2.0] and model.get_grad("psi").sum() == 16


def test_the_default_config_names_them(nlp):
    block = nlp.config["components"]["punctgen"]
    assert block["thinc_model"] == {"@architectures": ARCHITECTURE}
    assert block["scorer"] == {"@scorers": SCORER}
    pipe = nlp.get_pipe("punctgen")
    assert pipe.model.name == "punctgen_params" and pipe.scorer is punct_score
    assert "model" in block and block["model"] is not None  # the path setting is unchanged


def test_evaluate_reports_the_scorer_keys(nlp, gold_docs):
    scores = nlp.evaluate(examples(nlp, gold_docs))
    assert 1.0 < scores["punct_ppl"] < 5.0
    assert scores["punct_lp"] == pytest.approx(-math.log(scores["punct_ppl"]))
    assert 0.0 <= scores["punct_aed"] < 1.0
    assert nlp.get_pipe("punctgen").score(examples(nlp, gold_docs)) == {
        k: scores[k] for k in ("punct_ppl", "punct_lp", "punct_aed")}


def test_a_configured_scorer_gets_the_model_and_the_restoration_settings(model_dir, gold_docs):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen", config={"model": str(model_dir), "n_samples": 7, "seed": 2,
                                            "scorer": {"@scorers": "test_punctgen.recording_scorer.v1"}})
    egs = examples(nlp, gold_docs, 3)
    assert pipe.score(egs) == {"n_examples": 3, "restore_method": "marginal", "n_samples": 7, "seed": 2,
                               "got_model": True}
    assert pipe.score(egs, seed=5)["seed"] == 5  # keyword arguments override the settings


def test_no_scorer_scores_nothing(model_dir, gold_docs):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen", config={"model": str(model_dir), "scorer": None})
    assert pipe.score(examples(nlp, gold_docs, 2)) == {}


def test_the_training_config_names_them_and_builds_the_component():
    cfg = spacy.util.load_config(ROOT / "configs" / "punctgen_train.cfg", interpolate=True)
    block = dict(cfg["components"]["punctgen"])
    assert block.pop("factory") == "punctgen"
    assert block["thinc_model"] == {"@architectures": ARCHITECTURE}
    assert block["scorer"] == {"@scorers": SCORER}
    pipe = spacy.blank("en").add_pipe("punctgen", config=block)
    assert pipe.scorer is punct_score and pipe.model.name == "punctgen_params"


def _without_registered_blocks(config_path):
    cfg = Config().from_disk(config_path, interpolate=False)
    del cfg["components"]["punctgen"]["thinc_model"], cfg["components"]["punctgen"]["scorer"]
    cfg.to_disk(config_path)
    assert "@architectures" not in config_path.read_text(encoding="utf8")


def test_a_saved_pipeline_resolves_them_in_a_fresh_interpreter(nlp, tmp_path):
    """Loading needs no import of spacy_punctgen: the factory's entry point registers the
    factory, the architecture and the scorer.  A config from before they were registered
    (no thinc_model/scorer blocks) gets the defaults."""
    nlp.to_disk(tmp_path / "pipe")
    nlp.to_disk(tmp_path / "old")
    _without_registered_blocks(tmp_path / "old" / "config.cfg")
    code = ("import sys, spacy\n"
            "for path in sys.argv[1:]:\n"
            "    nlp = spacy.load(path)\n"
            "    block = nlp.config['components']['punctgen']\n"
            "    print(block['thinc_model']['@architectures'], block['scorer']['@scorers'],\n"
            "          type(nlp.get_pipe('punctgen').scorer).__name__)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "pipe"), str(tmp_path / "old")],
                          capture_output=True, text=True, env=package_env(), cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [f"{ARCHITECTURE} {SCORER} function"] * 2
