"""scripts/pool_folds.py: a cross-validated treebank's folds pooled into one test set."""
import json
import math
import shutil
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.conllu import find_split
from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.evaluation.metrics import gold_slots, restoration_report
from spacy_punctgen.evaluation.predictions import record, write_predictions
from spacy_punctgen.data.preprocess import preprocess_file
from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "assets" / "sample"
K = 3
SOURCES = [find_split(SAMPLE, s) for s in ("train", "dev", "test")]


def _fold(tmp: Path, j: int, systems=("punctgen", "trivial"), ppl=None, las=0.8, keep=True):
    """Run what the workflow leaves for fold j: its test files, predictions and metrics, then keep-fold."""
    name = f"en_x_cv{j}"
    test = tmp / "corpus" / name / "punct" / "test.conllu"
    convert_file(SOURCES, test, part="test", cv=(K, j))
    convert_file(SOURCES, tmp / "corpus" / name / "depunct" / "test.conllu", part="test", cv=(K, j), depunct=True)
    gold = preprocess_file(test)[0]
    folder = tmp / "metrics" / name
    folder.mkdir(parents=True)
    (folder / "parser_depunct.json").write_text(json.dumps({"dep_las": las, "dep_uas": las + 0.05}))
    for system in systems:
        preds = tmp / "training" / name / "predictions" / f"{system}_gold.jsonl"
        perfect = system.startswith("punctgen")
        write_predictions(preds, (record(s.slots if perfect else [()] * len(s.slots), s.sent_id) for s in gold))
        m = {"system": system, "protocol": "cv", "aed_gold": 0.0, "predictions_gold": str(preds),
             "predictions_parsed": str(preds), "n_slots": sum(len(s.slots) for s in gold),
             "perplexity_per_slot": (ppl or {}).get(system)}
        (folder / f"{system}.json").write_text(json.dumps(m))
    if keep:
        assert load_script("keep_fold").main([name, "--metrics", str(tmp / "metrics"),
                                              "--corpus", str(tmp / "corpus")]) == 0
    return gold


def _run(tmp: Path, *extra):
    pf = load_script("pool_folds")
    return pf.main(["en_x", "--cv-folds", str(K), "--metrics", str(tmp / "metrics"), "--corpus", str(tmp / "corpus"),
                    "--training", str(tmp / "training"), *extra])


def test_pooled_figures_are_those_of_one_test_set(tmp_path, capsys):
    ppls = [1.1, 1.3, 1.2]
    golds = [_fold(tmp_path, j, ppl={"punctgen": ppls[j]}, las=0.7 + 0.1 * j) for j in range(K)]
    # the folds pool from what keep-fold kept in metrics/ (committed), as in a fresh clone
    words = [sum(1 for _ in open(tmp_path / "corpus" / f"en_x_cv{j}" / "depunct" / "test.conllu")
                 if _.strip() and not _.startswith("#")) for j in range(K)]
    shutil.rmtree(tmp_path / "training")
    shutil.rmtree(tmp_path / "corpus")
    stale = tmp_path / "metrics" / "en_x" / "crf_old.json"  # a non-CV run's file: the pooled folder is rewritten
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    kept = tmp_path / "metrics" / "en_x" / "earlier" / "crf_old.json"  # a record of earlier runs stays
    kept.parent.mkdir()
    kept.write_text("{}")
    assert _run(tmp_path) == 0
    assert not stale.exists() and kept.exists()
    pooled_test = tmp_path / "corpus" / "en_x" / "punct" / "test.conllu"
    assert [s.sent_id for s in read_conllu(pooled_test)] == [s.sent_id for p in SOURCES for s in read_conllu(p)]
    gold = gold_slots(preprocess_file(pooled_test)[0])
    assert gold == [g for fold in golds for g in gold_slots(fold)]
    out = tmp_path / "metrics" / "en_x"
    pg = json.loads((out / "punctgen.json").read_text())
    tr = json.loads((out / "trivial.json").read_text())
    assert pg["aed_gold"] == pg["aed_parsed"] == 0.0 and pg["protocol"] == "3-fold cv" and pg["cv_folds"] == K
    expected = restoration_report(gold, [[()] * len(g) for g in gold])
    assert tr["aed_gold"] == pytest.approx(expected["aed"]) and tr["edits_gold"] == expected["edits"]
    assert tr["n_sentences"] == len(gold) and tr["n_slots"] == expected["n_slots"]
    assert tr["perplexity_per_slot"] is None  # not reported by every fold
    slots = [sum(len(s.slots) for s in g) for g in golds]
    assert pg["perplexity_per_slot"] == pytest.approx(
        math.exp(sum(n * math.log(p) for n, p in zip(slots, ppls)) / sum(slots)))
    assert pg["parser_las"] == pytest.approx(sum(w * (0.7 + 0.1 * j) for j, w in enumerate(words)) / sum(words))
    assert [f["fold"] for f in pg["per_fold"]] == ["en_x_cv0", "en_x_cv1", "en_x_cv2"]
    pooled_preds = Path(tr["predictions_gold"])
    assert sum(1 for _ in pooled_preds.open()) == len(gold)
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["systems"]["trivial"]["aed_gold"] > 0

    # the table shows the pooled treebank, not its folds, with the permutation test over every sentence
    rt = load_script("results_table")
    table = tmp_path / "table.md"
    assert rt.main(["--metrics", str(tmp_path / "metrics"), "--corpus", str(tmp_path / "corpus"),
                    "--output", str(table), "--permutations", "100"]) == 0
    text = table.read_text()
    assert "| en_x | punctgen | 3-fold cv |" in text and "en_x_cv" not in text
    assert f"sign flips over {len(gold)} sentences" in text


def test_errors_write_nothing(tmp_path, capsys):
    for j in range(K - 1):
        _fold(tmp_path, j)
    assert _run(tmp_path) == 1  # fold 2 not run
    _fold(tmp_path, K - 1, keep=False)
    assert _run(tmp_path) == 1  # fold 2 run but not kept
    assert not (tmp_path / "metrics" / "en_x").exists()
    shutil.rmtree(tmp_path / "metrics" / "en_x_cv2")
    _fold(tmp_path, K - 1, systems=("punctgen",))
    assert _run(tmp_path) == 1  # trivial missing from fold 2
    assert not (tmp_path / "metrics" / "en_x").exists()
    # a kept predictions file that does not match its fold's test sentences
    (tmp_path / "metrics" / "en_x_cv2" / "trivial.json").write_text(
        (tmp_path / "metrics" / "en_x_cv1" / "trivial.json").read_text())
    preds = tmp_path / "metrics" / "en_x_cv2" / "kept" / "predictions"
    (preds / "trivial_gold.jsonl").write_text("\n".join((preds / "punctgen_gold.jsonl").read_text().splitlines()[:-1]) + "\n")
    capsys.readouterr()
    assert _run(tmp_path) == 1
    assert "trivial_gold.jsonl: 78 predictions for the 79 test sentences of en_x_cv2" in capsys.readouterr().err
    assert not (tmp_path / "metrics" / "en_x").exists()


def test_keep_fold_copies_exactly_and_checks(tmp_path, capsys):
    """keep-fold copies a fold's test files and predictions byte for byte, or nothing."""
    kf = load_script("keep_fold")
    args = ["--metrics", str(tmp_path / "metrics"), "--corpus", str(tmp_path / "corpus")]
    _fold(tmp_path, 0, keep=False)
    assert kf.main(["en_x_cv0", *args]) == 0
    kept = tmp_path / "metrics" / "en_x_cv0" / "kept"
    assert (kept / "test.conllu").read_bytes() == (tmp_path / "corpus" / "en_x_cv0" / "punct" / "test.conllu").read_bytes()
    assert (kept / "test.depunct.conllu").read_bytes() == (
        tmp_path / "corpus" / "en_x_cv0" / "depunct" / "test.conllu").read_bytes()
    for system in ("punctgen", "trivial"):
        src = tmp_path / "training" / "en_x_cv0" / "predictions" / f"{system}_gold.jsonl"
        assert (kept / "predictions" / src.name).read_bytes() == src.read_bytes()
    assert json.loads(capsys.readouterr().out.strip())["predictions"] == ["punctgen_gold.jsonl", "trivial_gold.jsonl"]

    # a predictions file one sentence short: an error naming it, and the old kept folder stays whole
    pred = tmp_path / "training" / "en_x_cv0" / "predictions" / "trivial_gold.jsonl"
    before = (kept / "predictions" / "trivial_gold.jsonl").read_bytes()
    pred.write_text("\n".join(pred.read_text().splitlines()[:-1]) + "\n")
    assert kf.main(["en_x_cv0", *args]) == 1
    assert "trivial_gold.jsonl" in capsys.readouterr().err
    assert (kept / "predictions" / "trivial_gold.jsonl").read_bytes() == before

    # not a fold of a cross-validation, not run, a bad name
    m = tmp_path / "metrics" / "en_x_cv0" / "punctgen.json"
    m.write_text(json.dumps({**json.loads(m.read_text()), "protocol": "standard"}))
    assert kf.main(["en_x_cv0", *args]) == 1
    assert "not a cross-validation fold" in capsys.readouterr().err
    assert kf.main(["en_x_cv1", *args]) == 1
    assert "no system metrics" in capsys.readouterr().err
    assert kf.main(["../x", *args]) == 1
    assert "plain folder name" in capsys.readouterr().err


def test_bad_treebank_name(tmp_path, capsys):
    pf = load_script("pool_folds")
    for name in ("", "..", "a/b"):
        assert pf.main([name, "--metrics", str(tmp_path)]) == 1
        assert "plain folder name" in capsys.readouterr().err


def test_fewer_folds_than_convert_allows(tmp_path, capsys):
    """convert needs a test, a dev and a training block, so 2 folds cannot have been run."""
    pf = load_script("pool_folds")
    assert pf.main(["en_x", "--cv-folds", "2", "--metrics", str(tmp_path)]) == 1
    assert "at least 3" in capsys.readouterr().err
