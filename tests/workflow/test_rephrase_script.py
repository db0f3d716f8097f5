"""scripts/rephrase_eval.py on the sample treebank (docs/rephrasing.md)."""
import json
from pathlib import Path

import spacy_punctgen

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
MODEL = Path(spacy_punctgen.__file__).resolve().parent / "models" / "en_ewt"


def test_rephrase_eval_and_table(tmp_path, load_script):
    ev = load_script("rephrase_eval")
    out = tmp_path / "rephrase.json"
    assert ev.main([str(MODEL), str(SAMPLE / "en_sample-ud-train.conllu"), str(SAMPLE / "en_sample-ud-test.conllu"),
                    "--output", str(out)]) == 0
    m = json.loads(out.read_text(encoding="utf-8"))
    paper, ours = m["lm_on_rephrased"], m["lm_on_original"]
    # both methods are scored on the same original sentences under the paper's protocol
    assert paper["base"]["all"]["tokens"] == paper["full"]["all"]["tokens"] > 0
    # regenerating the punctuation through the channel beats moving the marks as words
    for part in ("punctuation", "all"):
        assert paper["full"][part]["perplexity"] < paper["base"][part]["perplexity"]
        assert ours["full"][part]["perplexity"] < ours["base"][part]["perplexity"]
        assert 0 < paper["p_value"][part] <= 1
    assert m["train_sentences"] + m["train_skipped"] == 170
    md = tmp_path / "rephrase.md"
    assert ev.main(["--table", str(out), "--output", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert f"{paper['full']['punctuation']['perplexity']:.1f}" in text
    assert f"{ours['base']['all']['perplexity']:.1f}" in text
