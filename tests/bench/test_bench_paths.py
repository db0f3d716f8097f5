"""The benchmark reads data from its arguments or the working directory, never from where
the package happens to be installed."""
from pathlib import Path

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


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
def test_a_workers_peak_is_its_own_not_the_parents():
    """ru_maxrss survives execve: a worker started by a large process reported that process's
    size (the transcript section read 627 MB after the restore section, 289 MB alone)."""
    import subprocess
    import sys

    ballast = bytearray(300 * 2**20)  # the parent at 300 MB or more, touched
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    code = "from spacy_punctgen.bench.suite import peak_rss_mb; print(peak_rss_mb())"
    peak = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert peak < 250, peak
    del ballast
