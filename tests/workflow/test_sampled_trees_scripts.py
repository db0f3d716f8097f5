"""The curve of AED against the number of trees drawn from one parser
(scripts/sampled_trees_curve.py, scripts/sampled_trees_table.py, parse_conllu.py --search sample)
on the shipped sample, with the shipped English parser and restoration model."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.api.load import shipped_parser_path
from spacy_punctgen.pipeline.shipped import restore_model_path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"


def _run(args, cwd=None):
    proc = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)
    return proc


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sampled")
    punct, depunct = tmp / "test.conllu", tmp / "test.depunct.conllu"
    for dest, extra in ((punct, []), (depunct, ["--depunct"])):
        proc = _run(["-m", "spacy_punctgen", "convert", SAMPLE / "en_sample-ud-test.conllu", dest, *extra], cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
    return tmp, punct, depunct


def test_curve_rows_predictions_and_table(files):
    tmp, punct, depunct = files
    out = tmp / "curve.json"
    proc = _run([ROOT / "scripts" / "sampled_trees_curve.py", shipped_parser_path("en"), restore_model_path("en"),
                 punct, depunct, out, "--ks", "1,3", "--temperature", "1.5", "--predictions", tmp / "pred",
                 "--timing-repeats", "2"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert (data["search"], data["weights"], data["temperature"], data["timing_repeats"]) == ("sample", "beam", 1.5, 2)
    rows = {r["k"]: r for r in data["rows"]}
    assert set(rows) == {1, 3}
    assert rows[1]["mean_trees"] == 1.0 and 1.0 <= rows[3]["mean_trees"] <= 3.0
    for r in rows.values():
        assert 0 <= r["aed"] <= 1 and r["cost_vs_greedy"] > 0 and r["n_slots"] > 0
        lines = Path(r["predictions"]).read_text(encoding="utf-8").splitlines()
        assert len(lines) == len([ln for ln in punct.read_text(encoding="utf-8").splitlines()
                                  if ln.startswith("# sent_id")])
    md = _run([ROOT / "scripts" / "sampled_trees_table.py", f"test={out}"])
    assert md.returncode == 0, md.stderr
    assert md.stdout.splitlines()[0].startswith("| k | test AED (edits)") and len(md.stdout.splitlines()) == 4


def test_the_same_seed_gives_the_same_trees(files):
    tmp, _, depunct = files
    outs = []
    for name in ("a", "b"):
        proc = _run([ROOT / "scripts" / "parse_conllu.py", shipped_parser_path("en"), depunct, tmp / f"{name}.conllu",
                     "--kbest", "4", "--search", "sample", "--seed", "3"])
        assert proc.returncode == 0, proc.stderr
        outs.append([(tmp / f"{name}.k{j}.conllu").read_text(encoding="utf-8") for j in (1, 2, 3, 4)] +
                    [(tmp / f"{name}.kbest.json").read_text(encoding="utf-8")])
    assert outs[0] == outs[1]
    shares = json.loads(outs[0][-1])
    assert all(abs(sum(s) - 1) < 1e-5 and all(round(x * 4, 4) == round(x * 4) for x in s) for s in shares)


@pytest.mark.parametrize("args, named", [(["--ks", "0,2"], "--ks"), (["--ks", ""], "--ks"),
                                         (["--timing-repeats", "0"], "--timing-repeats")])
def test_bad_settings_are_refused(files, args, named):
    tmp, punct, depunct = files
    proc = _run([ROOT / "scripts" / "sampled_trees_curve.py", shipped_parser_path("en"), restore_model_path("en"),
                 punct, depunct, tmp / "x.json", *args])
    assert proc.returncode == 1 and named in proc.stderr and not (tmp / "x.json").exists()


def test_the_cost_is_the_least_of_the_repeats(monkeypatch):
    from spacy_punctgen.workflow import parsing_files

    clock = iter([0.0, 5.0, 10.0, 12.0, 20.0, 23.0])  # runs of 5, 2 and 3 CPU seconds
    monkeypatch.setattr(parsing_files.time, "thread_time", lambda: next(clock))
    made = []
    best, arg, out = parsing_files.best_thread_cpu(lambda: made.append(len(made)) or len(made), lambda a: a * 10, 3)
    assert best == 2.0 and (arg, out) == (3, 30) and made == [0, 1, 2]


def test_table_refuses_an_unnamed_file(tmp_path):
    md = _run([ROOT / "scripts" / "sampled_trees_table.py", str(tmp_path / "x.json")])
    assert md.returncode == 1 and "NAME=PATH" in md.stderr


def test_prune_sweep_reports_each_threshold(files, tmp_path):
    _, punct, _ = files
    out = tmp_path / "sweep.json"
    proc = _run([ROOT / "scripts" / "prune_sweep.py", restore_model_path("en"), punct, out, "--prunes", "1e-7,1e-5,0.2"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [r["prune"] for r in rows] == [1e-7, 1e-5, 0.2] and rows[0]["slots_changed"] == 0
    assert all(r["cpu_sentences_per_second"] > 0 and 0 <= r["aed"] <= 1 for r in rows)
    bad = _run([ROOT / "scripts" / "prune_sweep.py", restore_model_path("en"), punct, out, "--prunes", "2"])
    assert bad.returncode == 1 and "--prunes" in bad.stderr
