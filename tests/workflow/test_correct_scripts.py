"""scripts/correct_eval.py and scripts/correct_table.py on the sample treebank (docs/correction.md)."""
import json
from pathlib import Path

import pytest

import spacy_punctgen

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
MODEL = Path(spacy_punctgen.__file__).resolve().parent / "shipped" / "en_ewt"


def test_correct_eval_and_table(tmp_path, load_script, capsys):
    ev = load_script("correct_eval")
    out = tmp_path / "metrics" / "en_sample" / "correct" / "correct.json"
    noise = tmp_path / "noise.json"
    assert ev.main([str(MODEL), str(SAMPLE / "en_sample-ud-test.conllu"), str(SAMPLE / "en_sample-ud-dev.conllu"),
                    "--treebank", "en_sample", "--output", str(out), "--noise-out", str(noise)]) == 0
    m = json.loads(out.read_text(encoding="utf-8"))
    systems = m["systems"]
    assert set(systems) == {"as_is", "punctgen_restore", "punctgen_correct", "punctgen_correct_configured"}
    assert systems["as_is"]["f05"] == 0.0 and systems["as_is"]["needed"] > 0
    assert systems["as_is"]["edits"] > 0
    # correction repairs more than it breaks; restoration from the tree alone does not
    assert systems["punctgen_correct"]["aed"] < systems["as_is"]["aed"] < systems["punctgen_restore"]["aed"]
    assert json.loads(noise.read_text())["eps"] == m["noise"]["eps"]
    # every damaged slot got at least one error (two errors can meet in one slot)
    assert sum(v["applied"] for v in m["damage_test"].values()) >= systems["as_is"]["needed"]
    capsys.readouterr()
    table = load_script("correct_table")
    md = tmp_path / "correction.md"
    assert table.main(["--metrics", str(tmp_path / "metrics"), "--output", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert "| en_sample | leave as is |" in text and "punctgen correction, rates fitted" in text
    assert table.main(["--metrics", str(tmp_path / "none")]) == 1


@pytest.mark.slow
def test_correct_train_and_paper_rows(tmp_path, load_script, capsys):
    train = load_script("correct_train")
    cm_dir = tmp_path / "correct_paper"
    assert train.main([str(MODEL), str(SAMPLE / "en_sample-ud-dev.conllu"), "--output", str(cm_dir), "--sample", "30",
                       "--seeds", "1", "2", "--max-iter", "20", "--attach-scale", "0.5"]) == 0
    from spacy_punctgen.model.correction import CorrectionModel

    cm = CorrectionModel.from_disk(cm_dir)
    tr = cm.meta["training"]
    assert tr["clean_sentences"] == 30 and tr["sample"] == 30 and tr["seeds"] == [1, 2] and cm.attach_scale == 0.5
    ev = load_script("correct_eval")
    out = tmp_path / "metrics" / "en_sample" / "correct" / "correct.json"
    args = [str(MODEL), str(SAMPLE / "en_sample-ud-test.conllu"), str(SAMPLE / "en_sample-ud-dev.conllu"),
            "--treebank", "en_sample", "--output", str(out), "--limit", "40"]
    assert ev.main(args + ["--paper-model", str(cm_dir)]) == 0
    m = json.loads(out.read_text(encoding="utf-8"))
    row = m["systems"]["punctgen_correct_paper"]
    assert row["n_sentences"] == m["systems"]["as_is"]["n_sentences"] == m["n_sentences"] > 0
    assert set(m["dev_methods"]) == {"as_is", "noise", "paper"} and m["default_method"] in ("noise", "paper")
    best = min(("noise", "paper"), key=lambda k: (m["dev_methods"][k]["aed"], -m["dev_methods"][k]["f05"]))
    assert m["default_method"] == best
    # --add-paper on a file written without it gives the same rows
    out2 = tmp_path / "again.json"
    assert ev.main(args[:-4] + ["--output", str(out2), "--limit", "40"]) == 0
    assert "punctgen_correct_paper" not in json.loads(out2.read_text(encoding="utf-8"))["systems"]
    assert ev.main(args[:-4] + ["--output", str(out2), "--paper-model", str(cm_dir), "--add-paper"]) == 0
    m2 = json.loads(out2.read_text(encoding="utf-8"))
    assert m2["systems"]["punctgen_correct_paper"] == row and m2["dev_methods"] == m["dev_methods"]
    capsys.readouterr()
    table = load_script("correct_table")
    md = tmp_path / "correction.md"
    assert table.main(["--metrics", str(tmp_path / "metrics"), "--output", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert "the paper's method" in text and f"default method **{m['default_method']}**" in text
