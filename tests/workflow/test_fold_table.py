"""scripts/fold_table.py: the kept folds of a cross-validation so far, before pool-folds can run."""
import json
import re
import shutil

import pytest

from spacy_punctgen.evaluation.metrics import gold_slots, restoration_report
from spacy_punctgen.evaluation.predictions import read_predictions, slots_of


def _scored_fold(cv_folds, j, las):
    """A kept fold whose metrics hold the AEDs of its own predictions, as the workflow writes them."""
    tmp = cv_folds.root
    gold = gold_slots(cv_folds.make(j, las=las, keep=False))
    folder = tmp / "metrics" / f"en_x_cv{j}"
    for path in folder.glob("*.json"):
        if path.stem.startswith("parser"):
            continue
        m = json.loads(path.read_text())
        report = restoration_report(gold, slots_of(read_predictions(m["predictions_gold"])))
        m.update(aed_gold=report["aed"], aed_parsed=report["aed"], n_slots=report["n_slots"],
                 n_sentences=len(gold), parser_las=las)
        path.write_text(json.dumps(m))
    restore = folder / "restore"
    restore.mkdir()
    tuning = [{"hyper": {"c2": c2}, "dev_aed": 0.1, "chosen": c2 == 0.3 + j} for c2 in (0.3, 1.3, 2.3)]
    (restore / "trivial_gold.json").write_text(json.dumps({"system": "trivial", "tuning": tuning}))
    assert cv_folds.keep(f"en_x_cv{j}") == 0


def _cells(text, system, trees):
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| {system} | {trees} |"))
    return [c.strip() for c in line.strip("|").split("|")[2:]]


def test_kept_folds_together_are_what_pool_folds_reports(tmp_path, capsys, cv_folds, load_script):
    ft = load_script("fold_table")
    las = [0.7, 0.8, 0.9]
    for j in range(cv_folds.k):
        _scored_fold(cv_folds, j, las[j])
    # a fold run but not kept yet is left out, and so is a folder that only looks like a fold
    (tmp_path / "metrics" / "en_x_cv7").mkdir()
    shutil.copy(tmp_path / "metrics" / "en_x_cv0" / "trivial.json", tmp_path / "metrics" / "en_x_cv7")
    (tmp_path / "metrics" / "en_x_cvold" / "kept").mkdir(parents=True)
    out = tmp_path / "results" / "folds.md"
    assert ft.main(["en_x", "--metrics", str(tmp_path / "metrics"), "--output", str(out)]) == 0
    text = out.read_text()
    assert text.startswith(f"en_x: {cv_folds.k} kept folds (0, 1, 2),")

    pf = load_script("pool_folds")
    assert pf.main(["en_x", "--cv-folds", str(cv_folds.k), "--metrics", str(tmp_path / "metrics"),
                    "--corpus", str(tmp_path / "corpus"), "--training", str(tmp_path / "training")]) == 0
    capsys.readouterr()
    pooled = {s: json.loads((tmp_path / "metrics" / "en_x" / f"{s}.json").read_text()) for s in ("punctgen", "trivial")}
    assert pooled["trivial"]["aed_gold"] > 0 and pooled["punctgen"]["aed_gold"] == 0
    for system, trees in (("trivial", "words"), ("punctgen", "gold"), ("punctgen", "parsed")):
        cells = _cells(text, system, trees)
        assert len(cells) == cv_folds.k + 1
        key = "aed_gold" if trees == "words" else f"aed_{trees}"
        assert float(cells[-1]) == pytest.approx(pooled[system][key], abs=5e-5)
        per_fold = [f[key] for f in pooled[system]["per_fold"]]
        assert [float(c) for c in cells[:-1]] == pytest.approx(per_fold, abs=5e-5)
    las_cells = _cells(text, "parser of unpunctuated text", "LAS")
    assert [float(c) for c in las_cells[:-1]] == las
    assert float(las_cells[-1]) == pytest.approx(pooled["trivial"]["parser_las"], abs=5e-4)
    assert "| trivial | c2 0.3 (of 3) | c2 1.3 (of 3) | c2 2.3 (of 3) |" in text
    # the test over the kept folds together: the perfect punctgen against the one baseline
    edits = pooled["trivial"]["edits_gold"]
    assert (f"Kept folds together: punctgen on parsed trees 0.0000 (0 edits) vs the best baseline trivial "
            f"{pooled['trivial']['aed_gold']:.4f} ({edits:.0f} edits)") in text
    p = float(re.search(r"p = ([0-9.e-]+) \(fewer edits, significant at 0.05\)", text).group(1))
    assert p == pytest.approx(1 / 10001)  # no sign flip does as well as the observed difference


def test_folds_kept_in_another_clone_count_but_are_not_tested_here(tmp_path, cv_folds, load_script):
    """A fold counts by its committed record kept.json; the permutation test needs the kept copies
    of its test file and predictions, which stay in the clone that ran it: the table says so."""
    for j in range(cv_folds.k):
        _scored_fold(cv_folds, j, 0.8)
    out = tmp_path / "folds.md"
    args = ["en_x", "--metrics", str(tmp_path / "metrics"), "--output", str(out)]
    ft = load_script("fold_table")
    assert ft.main(args) == 0
    tested = [ln for ln in out.read_text().splitlines() if ln.startswith("Kept folds together:")]
    assert len(tested) == 1 and "p = " in tested[0]
    (tmp_path / "metrics" / "en_x_cv1" / "kept" / "predictions" / "trivial_gold.jsonl").unlink()
    # the earlier table's test is kept while the edits it was computed from are those of the metrics
    for _ in range(2):
        assert ft.main(args) == 0
        text = out.read_text()
        assert text.startswith(f"en_x: {cv_folds.k} kept folds (0, 1, 2),")
        assert _cells(text, "parser of unpunctuated text", "LAS")[-1] == "0.800"
        assert tested[0] in text.splitlines() and text.count("p = ") == 1
        assert "the earlier table's" in text and "python scripts/reproduce.py --only en_x --folds 1" in text
    # ... and dropped once they are not
    m = tmp_path / "metrics" / "en_x_cv2" / "trivial.json"
    m.write_text(json.dumps({**json.loads(m.read_text()), "aed_gold": 0.5}))
    assert ft.main(args) == 0
    text = out.read_text()
    assert "no paired permutation test here" in text and "p = " not in text
    assert "python scripts/reproduce.py --only en_x --folds 1" in text


def test_kept_test_of_a_system_against_itself(tmp_path, cv_folds, load_script):
    ft = load_script("fold_table")
    for j in range(cv_folds.k):
        _scored_fold(cv_folds, j, 0.8)
    folds = ft.kept_folds("en_x", tmp_path / "metrics")
    t = ft.kept_test("en_x", folds, tmp_path / "metrics", ("trivial", "gold"), ("trivial", "parsed"), 100)
    assert t["p"] == 1.0 and t["edits_a"] == t["edits_b"] > 0 and t["permutations"] == 100
    assert t["n_sentences"] == sum(folds[k]["trivial"]["n_sentences"] for k in folds)
    with pytest.raises(ValueError, match="names no parsed-tree predictions"):
        folds[1]["trivial"].pop("predictions_parsed")
        ft.kept_test("en_x", folds, tmp_path / "metrics", ("trivial", "gold"), ("trivial", "parsed"), 100)


def test_no_kept_fold_and_bad_names(tmp_path, capsys, cv_folds, load_script):
    ft = load_script("fold_table")
    cv_folds.make(0, keep=False)  # run but not kept
    assert ft.main(["en_x", "--metrics", str(tmp_path / "metrics")]) == 1
    assert "no kept fold of en_x" in capsys.readouterr().err
    assert ft.main(["en_x", "--metrics", str(tmp_path / "metrics"), "--permutations", "0"]) == 1
    assert "--permutations must be at least 1" in capsys.readouterr().err
    for name in ("", "..", "a/b"):
        assert ft.main([name, "--metrics", str(tmp_path / "metrics")]) == 1
        assert "plain folder name" in capsys.readouterr().err
