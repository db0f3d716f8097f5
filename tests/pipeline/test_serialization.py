"""The punctgen component's serialisation: spaCy serializer dicts with ``cfg`` and ``model``,
``exclude``, byte-identical round trips, the settings that survive (and those the loading
pipeline's config keeps), and clear errors for a missing model."""
import pickle

import pytest
import spacy
import srsly

from spacy_punctgen.pipeline import component
from spacy_punctgen.pipeline.component import RUNTIME_SETTINGS

TRAINING_SETTINGS = {"direction": "l2r", "min_count": 3, "pairs_mode": "full", "templates": ["rel", "upos"],
                     "psi_init": 0.5, "psi_keep_bias": 2.0, "psi_lr_scale": 4.0, "smooth_delta": 0.01, "xi": 0.1}


@pytest.fixture(scope="module")
def source(model_dir):
    """A component with a model and non-default settings of every kind."""
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(model_dir), "mode": "restore", "restore_method": "sample",
                                     "n_samples": 50, "seed": 3, "model_settings": TRAINING_SETTINGS})
    return nlp


def blank_pipe(lang="en", **config):
    return spacy.blank(lang).add_pipe("punctgen", config=config)


def analyses(nlp, docs):
    return [(d._.underlying_punct, d._.punct_logprob) for d in (nlp(doc) for doc in docs)]


def test_bytes_round_trip_is_byte_identical_and_keeps_the_settings(source):
    pipe = source.get_pipe("punctgen")
    data = pipe.to_bytes()
    other = blank_pipe(**{k: pipe.cfg[k] for k in RUNTIME_SETTINGS}).from_bytes(data)
    assert other.cfg == pipe.cfg
    assert other.to_bytes() == data
    assert set(srsly.msgpack_loads(data)) == {"cfg", "model"}


def test_loading_keeps_the_runtime_settings_of_the_loading_config(source):
    """How to run (mode, restore method, samples, seed) is the loading pipeline's choice; what
    the model was trained with comes from the saved settings."""
    pipe = source.get_pipe("punctgen")
    other = blank_pipe().from_bytes(pipe.to_bytes())
    assert {k: other.cfg[k] for k in RUNTIME_SETTINGS} == {"mode": "analyze", "restore_method": "marginal",
                                                          "n_samples": 1000, "seed": 0,
                                                          "restore_empty_weight": 1.0, "correction_model": None,
                                                          "repunctuate": False, "lexical_weight": None,
                                                          "lexical_model": None, "sentence_end_model": None,
                                                          "sentence_end_weight": None}
    assert {k: other.cfg["model_settings"][k] for k in TRAINING_SETTINGS} == TRAINING_SETTINGS
    assert other.cfg["model"] == pipe.cfg["model"]


def test_bytes_exclude(source, model_dir):
    pipe = source.get_pipe("punctgen")
    no_cfg = blank_pipe().from_bytes(pipe.to_bytes(), exclude=["cfg"])
    assert no_cfg.cfg == blank_pipe().cfg
    assert no_cfg.punct_model is not None
    assert "cfg" not in srsly.msgpack_loads(pipe.to_bytes(exclude=["cfg"]))

    no_model = blank_pipe("xx").from_bytes(pipe.to_bytes(), exclude=["model"])
    assert no_model.punct_model is None
    assert no_model.cfg["model_settings"]["direction"] == "l2r"
    assert set(srsly.msgpack_loads(pipe.to_bytes(exclude=["model"]))) == {"cfg"}


def test_disk_round_trip_is_byte_identical(source, tmp_path):
    pipe = source.get_pipe("punctgen")
    pipe.to_disk(tmp_path / "a")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["cfg", "model"]
    assert srsly.read_json(tmp_path / "a" / "cfg") == pipe.cfg
    other = blank_pipe(**{k: pipe.cfg[k] for k in RUNTIME_SETTINGS}).from_disk(tmp_path / "a")
    assert other.cfg == pipe.cfg
    assert other.to_bytes() == pipe.to_bytes()
    other.to_disk(tmp_path / "b")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_disk_exclude(source, tmp_path):
    pipe = source.get_pipe("punctgen")
    pipe.to_disk(tmp_path / "no_model", exclude=["model"])
    assert [p.name for p in (tmp_path / "no_model").iterdir()] == ["cfg"]
    pipe.to_disk(tmp_path / "no_cfg", exclude=["cfg"])
    assert [p.name for p in (tmp_path / "no_cfg").iterdir()] == ["model"]
    pipe.to_disk(tmp_path / "both")
    only_model = blank_pipe().from_disk(tmp_path / "both", exclude=["cfg"])
    assert only_model.cfg == blank_pipe().cfg and only_model.punct_model is not None
    only_cfg = blank_pipe("xx").from_disk(tmp_path / "no_model", exclude=["model"])
    assert only_cfg.punct_model is None and only_cfg.cfg["model_settings"]["templates"] == ["rel", "upos"]


def test_missing_model_directory_is_a_clear_error(source, tmp_path):
    pipe = source.get_pipe("punctgen")
    pipe.to_disk(tmp_path / "p", exclude=["model"])
    with pytest.raises(ValueError, match=r"E013.*" + str(tmp_path / "p" / "model").replace("\\", r"\\")):
        blank_pipe().from_disk(tmp_path / "p")
    with pytest.raises(ValueError, match="E013"):
        blank_pipe().from_disk(tmp_path / "nothing-here")


def test_missing_model_directory_of_a_saved_pipeline_is_a_clear_error(source, tmp_path):
    import shutil

    source.to_disk(tmp_path / "pipe")
    shutil.rmtree(tmp_path / "pipe" / "punctgen" / "model")
    with pytest.raises(ValueError, match=r"E013.*punctgen.model"):
        spacy.load(tmp_path / "pipe")


def test_saving_without_any_model_is_a_clear_error(tmp_path):
    pipe = blank_pipe("xx")  # nothing given, trained or shipped
    with pytest.raises(ValueError, match="E014.*'xx'"):
        pipe.to_disk(tmp_path / "p")
    pipe.to_disk(tmp_path / "p", exclude=["model"])  # its settings alone can be saved
    assert srsly.read_json(tmp_path / "p" / "cfg") == pipe.cfg
    assert srsly.msgpack_loads(pipe.to_bytes())["model"] == b""  # bytes (and pickles) need no model
    assert blank_pipe("xx").from_bytes(pipe.to_bytes()).punct_model is None


def test_an_unused_shipped_model_is_saved_with_the_pipeline(model_dir, monkeypatch, tmp_path, gold_docs):
    """A component that would load its language's shipped model on first use writes that model,
    so the saved pipeline does not depend on what ships later."""
    monkeypatch.setattr(component, "shipped_model_path", lambda lang: model_dir if lang == "en" else None)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen")
    assert pipe.punct_model is None
    nlp.to_disk(tmp_path / "pipe")
    assert (tmp_path / "pipe" / "punctgen" / "model" / "params.npz").is_file()
    monkeypatch.setattr(component, "shipped_model_path", lambda lang: None)
    loaded = spacy.load(tmp_path / "pipe")
    assert analyses(loaded, gold_docs(loaded, 3)) == analyses(nlp, gold_docs(nlp, 3))


def test_saved_pipeline_keeps_settings_and_takes_config_overrides(source, tmp_path, gold_docs):
    source.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert loaded.get_pipe("punctgen").cfg == source.get_pipe("punctgen").cfg
    analyze = spacy.load(tmp_path / "pipe", config={"components": {"punctgen": {"mode": "analyze"}}})
    pipe = analyze.get_pipe("punctgen")
    assert pipe.cfg["mode"] == "analyze" and pipe.cfg["model_settings"]["direction"] == "l2r"
    doc = analyze(gold_docs(analyze, 1)[0])
    assert doc._.underlying_punct and doc._.restored_punct is None


def test_pipelines_saved_before_the_settings_were_serialised_still_load(source, tmp_path, gold_docs):
    pipe = source.get_pipe("punctgen")
    source.to_disk(tmp_path / "pipe")
    (tmp_path / "pipe" / "punctgen" / "cfg").unlink()  # the earlier layout: model/ only
    loaded = spacy.load(tmp_path / "pipe")
    assert loaded.get_pipe("punctgen").to_bytes() == pipe.to_bytes()
    old_bytes = srsly.msgpack_dumps({"model": pipe.punct_model.to_bytes()})  # the earlier bytes
    other = blank_pipe(**{k: pipe.cfg[k] for k in RUNTIME_SETTINGS}).from_bytes(old_bytes)
    assert other.punct_model is not None and other.cfg["model_settings"]["direction"] == "r2l"  # its own settings kept
    assert blank_pipe().from_bytes(srsly.msgpack_dumps({"model": None})).punct_model is None


def test_pickle_keeps_settings_scorer_and_model(source):
    pipe = source.get_pipe("punctgen")
    again = pickle.loads(pickle.dumps(pipe))
    assert again.cfg == pipe.cfg
    assert again.scorer is pipe.scorer
    assert again.to_bytes() == pipe.to_bytes()


def test_a_pipeline_saved_with_the_old_flat_config_loads(model_dir, tmp_path, gold_docs):
    """Pipelines saved before the model settings moved into ``model_settings`` (and
    ``kbest_weights`` into ``punctgen_kbest``) load with ``load_pipeline``; ``spacy.load``
    refuses their config, naming the old key."""
    import shutil
    from pathlib import Path

    from confection import ConfigValidationError

    import spacy_punctgen

    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(model_dir), "mode": "restore"})
    nlp.to_disk(tmp_path / "p")
    legacy = Path(__file__).resolve().parents[1] / "fixtures" / "legacy_punctgen_config.cfg"
    shutil.copy(legacy, tmp_path / "p" / "config.cfg")
    with pytest.raises(ConfigValidationError, match="direction|psi_keep_bias|kbest_weights"):
        spacy.load(tmp_path / "p")
    loaded = spacy_punctgen.load_pipeline(tmp_path / "p")
    pipe = loaded.get_pipe("punctgen")
    assert pipe.cfg["mode"] == "restore" and "direction" not in pipe.cfg
    doc = gold_docs(nlp, 1)[0]
    assert loaded(doc.copy())._.restored_text == nlp(doc.copy())._.restored_text
