"""scripts/correct_eval.py and scripts/correct_table.py on the sample treebank (docs/correction.md)."""
import json
from pathlib import Path

import spacy_punctgen

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
MODEL = Path(spacy_punctgen.__file__).resolve().parent / "models" / "en_ewt"


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
