"""``punctgen restore --scheduler ADDRESS``: the shipped pipeline on a Dask cluster gives the
same lines, in input order, as ``punctgen restore`` without it; refusals are one line, exit
status 1 (E776-E789)."""
import json
import socket
import sys

import pytest
from cli_helpers import refused, run

from spacy_punctgen import cli

pytest.importorskip("distributed")

TEXT = ("when i came home he left and then we went to the store\n"
        "\n"
        "she said that she would come tomorrow but she did not\n"
        "yes\n"
        "   \n"
        "i think that we should go now because it is late\n"
        "the man who lives next door has a dog and two cats\n")


@pytest.fixture(scope="module")
def scheduler():
    """A local cluster of one worker process: its scheduler's tcp:// address."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "in.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def plain(src, tmp_path_factory):
    """The output of ``punctgen restore`` without --scheduler (bytes of --output)."""
    out = tmp_path_factory.mktemp("plain") / "out.txt"
    assert cli.main(["restore", str(src), "--output", str(out)]) == 0
    return out.read_bytes()


def test_same_lines_as_without_scheduler(capsys, scheduler, src, plain, tmp_path):
    out = tmp_path / "out.txt"
    code, stdout, err = run(capsys, "restore", src, "--scheduler", scheduler, "--partitions", 3, "--output", out)
    assert code == 0, err
    assert out.read_bytes() == plain
    assert len(plain.decode("utf-8").splitlines()) == len(TEXT.splitlines())

    code, stdout, err = run(capsys, "restore", src, "--scheduler", scheduler)
    assert code == 0, err
    assert stdout.encode("utf-8") == plain


def test_json_summary(capsys, scheduler, src, tmp_path):
    code, stdout, err = run(capsys, "restore", src, "--scheduler", scheduler, "--partitions", 2, "--json",
                            "--output", tmp_path / "o.txt")
    assert code == 0, err
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["scheduler"] == scheduler and summary["workers"] == 1 and summary["partitions"] == 2
    assert summary["lines"] == len(TEXT.splitlines())


@pytest.mark.slow  # starts two worker processes of its own
def test_local_cluster(capsys, src, plain, tmp_path):
    out = tmp_path / "out.txt"
    code, _, err = run(capsys, "restore", src, "--scheduler", "local:2", "--partitions", 4, "--output", out)
    assert code == 0, err
    assert out.read_bytes() == plain


# ------------------------------------------------------------------ refusals
def test_partitions_need_a_scheduler(capsys, src):
    assert "[E788] --partitions needs --scheduler" in refused(capsys, "restore", src, "--partitions", 2)


def test_scheduler_takes_no_parser(capsys, src):
    assert "[E789]" in refused(capsys, "restore", src, "--scheduler", "local:1", "--parser", "x")


def test_unreachable_scheduler(capsys, src):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = refused(capsys, "restore", src, "--scheduler", f"127.0.0.1:{port}", "--connect-timeout", 1)
    assert "[E777]" in line and f"127.0.0.1:{port}" in line


@pytest.mark.parametrize("address", ["nonsense://host:1", "local:0"])
def test_bad_address(capsys, src, address):
    assert "[E778]" in refused(capsys, "restore", src, "--scheduler", address)


def test_bad_partition_count(capsys, src):
    code, _, err = run(capsys, "restore", src, "--scheduler", "local:1", "--partitions", 0)
    assert code == 2 and "[E630]" in err  # a usage error, like every count flag


def test_dask_not_installed(capsys, src, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    line = refused(capsys, "restore", src, "--scheduler", "local:1")
    assert "[E776]" in line and "spacy-punctgen[distributed]" in line
