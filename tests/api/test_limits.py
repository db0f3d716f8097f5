"""Limits and damaged files (issue 38, adversarial item 9): a text longer than ``nlp.max_length``,
a saved pipeline with a damaged file, a nan or infinite setting. Each is refused with our error,
which names the length and the limit, the damaged file, or the setting.

One shipped restore pipeline per module (``restorer``) and one saved copy of it (``saved``); the
tests that need the shipped parser skip with a reason only where its files are absent."""
import re
import shutil

import pytest
import spacy

import spacy_punctgen
from spacy_punctgen.api.load import damaged_file, load, load_pipeline, shipped_parser_path
from spacy_punctgen.cli import main

try:
    PARSER = shipped_parser_path("en")
except ValueError as err:  # the shipped parser's files are absent from this checkout
    PARSER, WHY = None, str(err)
else:
    WHY = ""
needs_parser = pytest.mark.skipif(PARSER is None, reason=f"no shipped parser: {WHY}")

#: about 1,000 characters of one unpunctuated line
TEXT = " ".join(["when i came home he left and i was sad"] * 26)


@pytest.fixture(scope="module")
def restorer():
    return load("en")


@pytest.fixture(scope="module")
def saved(restorer, tmp_path_factory):
    """The shipped restore pipeline saved with ``nlp.to_disk`` (copy it before damaging it)."""
    out = tmp_path_factory.mktemp("saved") / "pipeline"
    restorer.to_disk(out)
    return out


@pytest.fixture
def limited(restorer, monkeypatch):
    """``restorer`` taking at most 500 characters in ``nlp(text)``, in windows of 300 (so that
    TEXT takes the windowed path, which used to skip the limit)."""
    monkeypatch.setattr(restorer, "max_length", 500)
    monkeypatch.setattr(restorer, "punctgen_chunk_chars", 300)
    return restorer


def _says_length_and_limit(message: str) -> None:
    assert message.startswith("[E020]")
    assert f"length {len(TEXT)}" in message and "(500)" in message
    assert "nlp.max_length = " in message and "restore_text" in message


# ------------------------------------------------------------------ nlp.max_length
@needs_parser
def test_nlp_refuses_a_text_longer_than_max_length(limited):
    assert len(TEXT) > limited.punctgen_chunk_chars
    with pytest.raises(ValueError) as refused:
        limited(TEXT)
    _says_length_and_limit(str(refused.value))


@needs_parser
@pytest.mark.parametrize("as_tuples", [False, True])
def test_pipe_refuses_a_text_longer_than_max_length(limited, as_tuples):
    texts = [("when i came home", 0), (TEXT, 1)] if as_tuples else ["when i came home", TEXT]
    with pytest.raises(ValueError) as refused:
        list(limited.pipe(texts, as_tuples=as_tuples))
    _says_length_and_limit(str(refused.value))


@needs_parser
def test_a_text_shorter_than_a_window_gets_the_same_error(restorer, monkeypatch):
    """Below the window the text takes spaCy's path, whose own refusal (E088) would say nothing
    of restore_text: ours comes first."""
    monkeypatch.setattr(restorer, "max_length", 500)
    assert len(TEXT) <= restorer.punctgen_chunk_chars
    with pytest.raises(ValueError) as refused:
        restorer(TEXT)
    _says_length_and_limit(str(refused.value))


@needs_parser
def test_the_limit_is_inclusive_and_restore_text_takes_any_length(limited):
    """A text of exactly ``max_length`` characters is taken, window by window; ``restore_text``
    (documented for text of any length) takes a longer one, keeping every word."""
    limited.max_length = len(TEXT)
    doc = limited(TEXT)
    assert doc.text == TEXT and doc._.restored_text
    limited.max_length = 500
    out = spacy_punctgen.restore_text(limited, TEXT)
    assert re.findall(r"[a-z]+", out) == TEXT.split()


# ------------------------------------------------------------------ damaged files
def _copy(saved, tmp_path):
    out = tmp_path / "pipeline"
    shutil.copytree(saved, out)
    return out


def _truncate(path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])


def _load_with(how: str, path, capsys):
    """Load the pipeline folder ``path`` the way ``how`` says; the error message it gives."""
    if how == "spacy.load":
        spacy.load(path)
    elif how == "load_pipeline":
        load_pipeline(path)
    elif how == "load(parser=)":
        load("en", parser=path)
    else:  # a command line: its one-line refusal
        argv = (["render", "when i came home", "--pipeline", str(path), "-o", str(path.parent / "x.html")]
                if how == "render --pipeline" else ["restore", str(path.parent / "in.txt"), "--parser", str(path)])
        (path.parent / "in.txt").write_text("when i came home he left\n", encoding="utf8")
        code = main(argv)
        _, err = capsys.readouterr()
        assert code == 1 and "Traceback" not in err, err
        return err.strip()
    pytest.fail(f"{how} loaded a damaged pipeline")


@needs_parser
@pytest.mark.parametrize("how", ["spacy.load", "load_pipeline", "load(parser=)", "render --pipeline"])
def test_a_truncated_punctgen_cfg_is_named(saved, tmp_path, capsys, how):
    path = _copy(saved, tmp_path)
    _truncate(path / "punctgen" / "cfg")
    try:
        message = _load_with(how, path, capsys)
    except ValueError as err:
        message = str(err)
    assert "[E021]" in message and str(path / "punctgen" / "cfg") in message and "not valid JSON" in message


@pytest.mark.parametrize("content,reason", [(b"{not json", "not valid JSON"), (b"", "not valid JSON"),
                                            (b"\xff\xfe garbage", "not UTF-8"),
                                            (b"[1, 2]", "a JSON list, not an object")])
def test_every_kind_of_damaged_cfg_is_named(saved, tmp_path, content, reason):
    """The component alone (no parser to load): what is wrong with its ``cfg``."""
    path = _copy(saved, tmp_path)
    (path / "punctgen" / "cfg").write_bytes(content)
    component = spacy.blank("en").add_pipe("punctgen", config={"mode": "restore"})
    with pytest.raises(ValueError, match=r"^\[E021\]") as refused:
        component.from_disk(path / "punctgen")
    assert str(path / "punctgen" / "cfg") in str(refused.value) and reason in str(refused.value)


@needs_parser
@pytest.mark.parametrize("how", ["load_pipeline", "load(parser=)", "render --pipeline", "restore --parser"])
@pytest.mark.parametrize("keep", [0.0, 0.5])
def test_a_truncated_parser_model_is_named(saved, tmp_path, capsys, how, keep):
    path = _copy(saved, tmp_path)
    _truncate(path / "parser" / "model", keep)
    try:
        message = _load_with(how, path, capsys)
    except ValueError as err:
        message = str(err)
    assert "[E022]" in message and str(path / "parser" / "model") in message and "msgpack" in message


@needs_parser
def test_an_intact_pipeline_has_no_damaged_file(saved):
    """Nothing is blamed in a pipeline that loads (so a failure for another reason keeps its own error)."""
    assert damaged_file(saved) is None
    assert damaged_file(PARSER) is None
    assert damaged_file("en_core_web_sm") is None  # a package name: not a folder to look into


# ------------------------------------------------------------------ nan and infinite settings
@pytest.mark.parametrize("config,name", [
    ({"restore_empty_weight": float("nan")}, "restore_empty_weight"),
    ({"restore_empty_weight": float("inf")}, "restore_empty_weight"),
    ({"lexical_weight": float("-inf")}, "lexical_weight"),
    ({"model_settings": {"smooth_delta": float("nan")}}, "model_settings.smooth_delta"),
])
def test_load_names_a_nan_or_infinite_setting(config, name):
    """spaCy refuses such a config before any factory runs (E961, naming no setting): load()
    checks first (before reading the parser, so no shipped parser is needed)."""
    with pytest.raises(ValueError, match=r"^\[E023\]") as refused:
        load("en", config=config)
    assert f"setting {name} must be a finite number" in str(refused.value)


@needs_parser
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_add_pipe_on_a_loaded_pipeline_names_a_nan_setting(restorer, value):
    before = list(restorer.pipe_names)
    with pytest.raises(ValueError, match=r"^\[E023\] The 'punctgen' setting restore_empty_weight"):
        restorer.add_pipe("punctgen", name="second", config={"mode": "restore", "restore_empty_weight": value})
    assert restorer.pipe_names == before


@pytest.mark.parametrize("config,code", [({"restore_empty_weight": -1.0}, "E885"),
                                         ({"restore_empty_weight": 0.0}, "E885"),
                                         ({"lexical_weight": -0.5}, "E996")])
def test_finite_values_out_of_range_keep_their_own_errors(config, code):
    with pytest.raises(ValueError, match=rf"^\[{code}\]"):
        spacy.blank("en").add_pipe("punctgen", config={"mode": "restore", **config})
