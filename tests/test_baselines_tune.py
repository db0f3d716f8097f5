"""Dev grid search of the baselines (``baseline --tune``): the grid is the product of the
options, the chosen point has the lowest dev AED (ties: perplexity, then order), and the
command line keeps that system and reports every point."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.baselines.tune import grid_points, parse_grid, select_on_dev

from conftest import package_env

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample"


def test_parse_grid_and_points():
    grid = parse_grid(["c2=0.1,1", "decoder=viterbi,mbr", ""])
    assert grid == {"c2": [0.1, 1], "decoder": ["viterbi", "mbr"]}
    assert parse_grid(["c2=0.1,1;decoder=viterbi,mbr"]) == grid
    assert grid_points(grid) == [{"c2": 0.1, "decoder": "viterbi"}, {"c2": 0.1, "decoder": "mbr"},
                                 {"c2": 1, "decoder": "viterbi"}, {"c2": 1, "decoder": "mbr"}]
    for bad in (["c2"], ["=1"], ["c2="], ["c2=1", "c2=2"], ["c2=1;c2=2"], ["c2=1;window"]):
        with pytest.raises(ValueError, match="--tune"):
            parse_grid(bad)


def test_select_on_dev_picks_lowest_aed_then_perplexity():
    dev = {0.1: (0.2, 1.5), 0.3: (0.1, 1.4), 1.0: (0.1, 1.3), 3.0: (0.1, 1.3), 10.0: (0.3, 1.1)}
    fitted = []

    def fit(hyper):
        fitted.append(hyper)
        return hyper

    def score(system):
        aed, ppl = dev[system["c2"]]
        return {"aed": aed, "perplexity_per_slot": ppl}

    best, rows = select_on_dev(fit, score, {"c2": list(dev)}, {"window": 2})
    assert best == {"window": 2, "c2": 1.0}  # 0.3 loses on perplexity, 3.0 ties and comes later
    assert fitted == [{"window": 2, "c2": c} for c in dev]
    assert [r["chosen"] for r in rows] == [False, False, True, False, False]
    assert [r["dev_aed"] for r in rows] == [v[0] for v in dev.values()]
    with pytest.raises(ValueError, match="both by --hyper and by --tune"):
        select_on_dev(fit, score, {"c2": [1.0]}, {"c2": 0.1})


def test_cli_tunes_crf_lexical_on_dev(tmp_path):
    cmd = [sys.executable, "-m", "spacy_punctgen", "baseline", "crf_lexical",
           "--train", str(SAMPLE), "--dev", str(SAMPLE), "--test", str(SAMPLE),
           "--hyper", "max_iterations=20", "--tune", "c2=0.001,30", "--save", str(tmp_path / "m"), "--json"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=package_env(), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout.strip().splitlines()[-1])
    rows = result["tuning"]
    assert [r["hyper"] for r in rows] == [{"c2": 0.001}, {"c2": 30}]
    # the two penalties give different dev scores, and the kept model is the better one
    assert rows[0]["dev_aed"] != rows[1]["dev_aed"] or rows[0]["dev_perplexity_per_slot"] != rows[1]["dev_perplexity_per_slot"]
    chosen = min(rows, key=lambda r: (r["dev_aed"], r["dev_perplexity_per_slot"]))
    assert chosen["chosen"] and sum(r["chosen"] for r in rows) == 1
    assert result["hyper"]["c2"] == chosen["hyper"]["c2"] and result["hyper"]["max_iterations"] == 20
    assert result["dev"]["aed"] == chosen["dev_aed"]
    loaded = subprocess.run(cmd[:5] + ["--load", str(tmp_path / "m"), "--test", str(SAMPLE), "--json"],
                            capture_output=True, text=True, env=package_env(), cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout.strip().splitlines()[-1])["hyper"]["c2"] == chosen["hyper"]["c2"]
    with_load = subprocess.run(cmd[:5] + ["--load", str(tmp_path / "m"), "--test", str(SAMPLE), "--tune", "c2=1"],
                               capture_output=True, text=True, env=package_env(), cwd=tmp_path)
    assert with_load.returncode == 1 and "cannot be used with --load" in with_load.stderr
    nodev = subprocess.run(cmd[:5] + ["--train", str(SAMPLE), "--test", str(SAMPLE), "--tune", "c2=1"],
                           capture_output=True, text=True, env=package_env(), cwd=tmp_path)
    assert nodev.returncode == 1 and "--tune needs --dev" in nodev.stderr
