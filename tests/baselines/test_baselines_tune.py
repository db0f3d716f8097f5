"""Dev grid search of the baselines (``baseline --tune``): the grid is the product of the
options, the chosen point has the lowest dev AED (ties: perplexity, then order), and the
command line keeps that system and reports every point."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.baselines.tune import grid_points, parse_grid, select_on_dev

from spacy_punctgen.testing.env import package_env

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


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
    cache_load = subprocess.run(cmd[:5] + ["--load", str(tmp_path / "m"), "--test", str(SAMPLE), "--tune-cache",
                                           str(tmp_path / "g")], capture_output=True, text=True, env=package_env(),
                                cwd=tmp_path)
    assert cache_load.returncode == 1 and "cannot be used with --load" in cache_load.stderr
    nodev = subprocess.run(cmd[:5] + ["--train", str(SAMPLE), "--test", str(SAMPLE), "--tune", "c2=1"],
                           capture_output=True, text=True, env=package_env(), cwd=tmp_path)
    assert nodev.returncode == 1 and "--tune needs --dev" in nodev.stderr


class _FakeCache:
    """select_on_dev's view of PointCache: reports of fitted points, systems loaded on demand."""

    def __init__(self):
        self.points, self.loaded = {}, []

    def report(self, hyper):
        return self.points.get(json.dumps(hyper, sort_keys=True), (None, None))[1]

    def put(self, hyper, system, report):
        self.points[json.dumps(hyper, sort_keys=True)] = (system, report)

    def load(self, hyper):
        self.loaded.append(hyper)
        return self.points[json.dumps(hyper, sort_keys=True)][0]


def test_select_on_dev_resumes_from_the_cache():
    dev = {0.1: 0.3, 1.0: 0.1, 3.0: 0.2}
    fitted = []

    def fit(hyper):
        fitted.append(hyper["c2"])
        return dict(hyper)

    score = lambda s: {"aed": dev[s["c2"]], "perplexity_per_slot": 1.0}  # noqa: E731
    cache = _FakeCache()
    cache.put({"c2": 1.0}, {"c2": 1.0, "from": "cache"}, {"aed": 0.1, "perplexity_per_slot": 1.0})  # a stopped run
    best, rows = select_on_dev(fit, score, {"c2": list(dev)}, {}, cache)
    assert fitted == [0.1, 3.0]  # the cached point is not fitted again
    assert best == {"c2": 1.0, "from": "cache"} and cache.loaded == [{"c2": 1.0}]
    assert [r.get("cached", False) for r in rows] == [False, True, False] and rows[1]["chosen"]
    fitted.clear()
    best, rows = select_on_dev(fit, score, {"c2": list(dev)}, {}, cache)
    assert fitted == [] and all(r["cached"] for r in rows) and best["c2"] == 1.0


def test_cli_tune_cache_resumes_and_refits_when_the_data_change(tmp_path):
    import shutil

    data = tmp_path / "ud"
    shutil.copytree(SAMPLE, data)
    cache = tmp_path / "grid"

    def run(*extra):
        cmd = [sys.executable, "-m", "spacy_punctgen", "baseline", "crf_lexical", "--train", str(data),
               "--dev", str(data), "--test", str(data), "--hyper", "max_iterations=20", "--tune", "c2=0.001,30",
               "--tune-cache", str(cache), "--predictions", str(tmp_path / "p.jsonl"), "--json", *extra]
        res = subprocess.run(cmd, capture_output=True, text=True, env=package_env(), cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout.strip().splitlines()[-1]), (tmp_path / "p.jsonl").read_text()

    first, preds = run()
    assert not any(r.get("cached") for r in first["tuning"]) and len(list(cache.iterdir())) == 2
    again, preds_again = run()
    assert all(r["cached"] for r in again["tuning"])
    assert again["test"] == first["test"] and preds_again == preds and again["hyper"] == first["hyper"]
    # a point whose save was cut short (no point.json) is fitted again
    (sorted(cache.glob("*/point.json"))[0]).unlink()
    third, _ = run()
    assert sum(bool(r.get("cached")) for r in third["tuning"]) == 1
    # other training data: nothing is reused
    train = next(data.glob("*-ud-train.conllu"))
    train.write_text("".join(train.read_text().split("\n\n", 1)[1:]))  # drop the first sentence
    changed, _ = run()
    assert not any(r.get("cached") for r in changed["tuning"]) and len(list(cache.iterdir())) == 4
