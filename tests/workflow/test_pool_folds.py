"""scripts/pool_folds.py: a cross-validated treebank's folds pooled into one test set."""
import hashlib
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.evaluation.metrics import gold_slots, restoration_report


def test_pooled_figures_are_those_of_one_test_set(tmp_path, capsys, cv_folds, load_script):
    ppls = [1.1, 1.3, 1.2]
    golds = [cv_folds.make(j, ppl={"punctgen": ppls[j]}, las=0.7 + 0.1 * j) for j in range(cv_folds.k)]
    # the folds pool from what keep-fold kept in metrics/<fold>/kept/, without training/ and corpus/
    words = [sum(1 for _ in open(tmp_path / "corpus" / f"en_x_cv{j}" / "depunct" / "test.conllu")
                 if _.strip() and not _.startswith("#")) for j in range(cv_folds.k)]
    shutil.rmtree(tmp_path / "training")
    shutil.rmtree(tmp_path / "corpus")
    stale = tmp_path / "metrics" / "en_x" / "crf_old.json"  # a non-CV run's file: the pooled folder is rewritten
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    kept = tmp_path / "metrics" / "en_x" / "earlier" / "crf_old.json"  # a record of earlier runs stays
    kept.parent.mkdir()
    kept.write_text("{}")
    assert cv_folds.pool() == 0
    assert not stale.exists() and kept.exists()
    pooled_test = tmp_path / "corpus" / "en_x" / "punct" / "test.conllu"
    assert [s.sent_id for s in read_conllu(pooled_test)] == [s.sent_id for p in cv_folds.sources for s in read_conllu(p)]
    gold = gold_slots(preprocess_file(pooled_test)[0])
    assert gold == [g for fold in golds for g in gold_slots(fold)]
    out = tmp_path / "metrics" / "en_x"
    pg = json.loads((out / "punctgen.json").read_text())
    tr = json.loads((out / "trivial.json").read_text())
    assert pg["aed_gold"] == pg["aed_parsed"] == 0.0 and pg["protocol"] == "3-fold cv" and pg["cv_folds"] == cv_folds.k
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


def test_errors_write_nothing(tmp_path, capsys, cv_folds):
    for j in range(cv_folds.k - 1):
        cv_folds.make(j)
    assert cv_folds.pool() == 1  # fold 2 not run
    cv_folds.make(cv_folds.k - 1, keep=False)
    assert cv_folds.pool() == 1  # fold 2 run but not kept
    assert not (tmp_path / "metrics" / "en_x").exists()
    shutil.rmtree(tmp_path / "metrics" / "en_x_cv2")
    cv_folds.make(cv_folds.k - 1, systems=("punctgen",))
    assert cv_folds.pool() == 1  # trivial missing from fold 2
    assert not (tmp_path / "metrics" / "en_x").exists()
    # a kept predictions file that does not match its fold's test sentences
    (tmp_path / "metrics" / "en_x_cv2" / "trivial.json").write_text(
        (tmp_path / "metrics" / "en_x_cv1" / "trivial.json").read_text())
    preds = tmp_path / "metrics" / "en_x_cv2" / "kept" / "predictions"
    (preds / "trivial_gold.jsonl").write_text("\n".join((preds / "punctgen_gold.jsonl").read_text().splitlines()[:-1]) + "\n")
    capsys.readouterr()
    assert cv_folds.pool() == 1
    assert "trivial_gold.jsonl: 78 predictions for the 79 test sentences of en_x_cv2" in capsys.readouterr().err
    assert not (tmp_path / "metrics" / "en_x").exists()


def test_folds_kept_in_another_clone_are_named_with_the_command_that_regenerates_them(tmp_path, capsys, cv_folds):
    """Only kept.json is committed: where a fold's copies are not here, pool-folds names the
    folds and how to rerun them, and writes nothing."""
    for j in range(cv_folds.k):
        cv_folds.make(j)
    for j in (0, 2):  # as in a clone that ran fold 1 only
        kept = tmp_path / "metrics" / f"en_x_cv{j}" / "kept"
        for f in [kept / "test.conllu", *(kept / "predictions").iterdir()]:
            f.unlink()
    capsys.readouterr()
    assert cv_folds.pool() == 1
    err = capsys.readouterr().err
    assert "fold(s) 0,2 of en_x are not in this clone" in err
    assert "python scripts/reproduce.py --only en_x --folds 0,2" in err
    assert not (tmp_path / "metrics" / "en_x").exists()


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a clone")
def test_git_ignores_predictions_and_copies_of_test_data_in_metrics():
    """Prediction files and copies of test data are not committed; metrics JSON and kept.json are."""
    root = ROOT
    ignored = ["metrics/cs_cltt_cv0/kept/test.conllu", "metrics/cs_cltt_cv0/kept/predictions/punctgen_gold.jsonl",
               "metrics/en_ewt/predictions.jsonl"]
    committed = ["metrics/cs_cltt_cv0/kept/kept.json", "metrics/cs_cltt_cv0/punctgen.json",
                 "metrics/cs_cltt_cv0/restore/punctgen_gold.json", "metrics/cs_cltt/earlier/README.md"]
    out = subprocess.run(["git", "check-ignore", "--no-index", *ignored, *committed], cwd=root,
                         capture_output=True, text=True).stdout.split()
    assert out == ignored


def test_keep_fold_copies_exactly_and_checks(tmp_path, capsys, cv_folds, load_script):
    """keep-fold copies a fold's test files and predictions byte for byte, or nothing."""
    kf = load_script("keep_fold")
    args = ["--metrics", str(tmp_path / "metrics"), "--corpus", str(tmp_path / "corpus")]
    cv_folds.make(0, keep=False)
    assert kf.main(["en_x_cv0", *args]) == 0
    kept = tmp_path / "metrics" / "en_x_cv0" / "kept"
    assert (kept / "test.conllu").read_bytes() == (tmp_path / "corpus" / "en_x_cv0" / "punct" / "test.conllu").read_bytes()
    record = json.loads((kept / "kept.json").read_text())  # the part that is committed
    depunct = read_conllu(tmp_path / "corpus" / "en_x_cv0" / "depunct" / "test.conllu")
    assert record["test_words"] == sum(len(s.forms) for s in depunct)
    assert record["test_sentences"] == len(preprocess_file(kept / "test.conllu")[0])  # those pool-folds scores
    assert record["test_sha256"] == hashlib.sha256((kept / "test.conllu").read_bytes()).hexdigest()
    for system in ("punctgen", "trivial"):
        src = tmp_path / "training" / "en_x_cv0" / "predictions" / f"{system}_gold.jsonl"
        assert (kept / "predictions" / src.name).read_bytes() == src.read_bytes()
        assert record["predictions"][src.name]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
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


def test_bad_treebank_name(tmp_path, capsys, load_script):
    pf = load_script("pool_folds")
    for name in ("", "..", "a/b"):
        assert pf.main([name, "--metrics", str(tmp_path)]) == 1
        assert "plain folder name" in capsys.readouterr().err


def test_fewer_folds_than_convert_allows(tmp_path, capsys, load_script):
    """convert needs a test, a dev and a training block, so 2 folds cannot have been run."""
    pf = load_script("pool_folds")
    assert pf.main(["en_x", "--cv-folds", "2", "--metrics", str(tmp_path)]) == 1
    assert "at least 3" in capsys.readouterr().err
