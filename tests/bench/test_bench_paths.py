"""The benchmark reads data from its arguments or the working directory, never from where
the package happens to be installed."""
import pytest

from spacy_punctgen.bench import suite


def test_no_data_outside_the_repository_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="--data"):
        suite.run_bench(None, quick=True, sections=["dp"])


def test_a_missing_data_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        suite.run_bench(str(tmp_path / "nope"), quick=True, sections=["dp"])


def test_the_package_names_no_repository_path():
    source = open(suite.__file__, encoding="utf8").read()
    assert "shared" not in source and "parents[1]" not in source
