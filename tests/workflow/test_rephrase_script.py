"""scripts/rephrase_eval.py on the sample treebank (docs/rephrasing.md)."""
import json
from pathlib import Path

import pytest

import spacy_punctgen

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
MODEL = Path(spacy_punctgen.__file__).resolve().parent / "shipped" / "en_ewt"
METHODS = ("base", "half", "full", "full_punctemes")


@pytest.fixture(scope="module")
def run(tmp_path_factory, load_script):
    ev = load_script("rephrase_eval")
    root = tmp_path_factory.mktemp("metrics")
    out = root / "en_sample" / "rephrase" / "rephrase.json"
    assert ev.main([str(MODEL), str(SAMPLE / "en_sample-ud-train.conllu"), str(SAMPLE / "en_sample-ud-test.conllu"),
                    "--treebank", "en_sample", "--output", str(out)]) == 0
    return ev, root, json.loads(out.read_text(encoding="utf-8"))


def test_rephrase_eval(run):
    _, _, m = run
    assert m["treebank"] == "en_sample" and m["paper"]["name"] == "English"
    for lm in ("add_k", "kneser_ney"):
        paper = m["lm_on_rephrased"][lm]
        # every method is scored on the same original sentences under the paper's protocol
        assert len({paper[n]["all"]["tokens"] for n in METHODS}) == 1
        # regenerating the punctuation through the channel beats moving the marks as words
        for part in ("punctuation", "all"):
            assert paper["half"][part]["perplexity"] < paper["base"][part]["perplexity"]
            assert paper["full"][part]["perplexity"] < paper["base"][part]["perplexity"]
            for pair in ("base-half", "base-full", "half-full", "full-full_punctemes"):
                assert 0 < paper["p_value"][pair][part] <= 1
            assert paper["p_value"]["base-full"][part] < 0.05
    ours = m["lm_on_original"]
    assert ours["full"]["punctuation"]["perplexity"] < ours["base"]["punctuation"]["perplexity"]
    assert m["train_sentences"] + m["train_skipped"] == 170
    mv = m["movement_train"]
    assert mv["base"] == mv["half"] and all(0 < mv[n]["kendall_distance"] < 1 for n in ("half", "full"))
    assert set(m["examples"][0]) == {"original", *METHODS}
    # few English dependents have a punctuation token between them and their head
    rs = m["rank_shift_train"]
    assert 0 < rs["shifted"] < 0.05 * rs["dependents"]


def test_table_gathers_every_treebank(run, tmp_path):
    ev, root, m = run
    # a second treebank without a row in the paper
    other = dict(m, treebank="xx_test", paper=None)
    (root / "xx_test" / "rephrase").mkdir(parents=True)
    (root / "xx_test" / "rephrase" / "rephrase.json").write_text(json.dumps(other), encoding="utf-8")
    md = tmp_path / "rephrase.md"
    assert ev.main(["--table", str(root), "--output", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    for tb in ("en_sample", "xx_test"):
        assert f"| {tb} | punctuation |" in text
    assert f"{m['lm_on_rephrased']['add_k']['full']['punctuation']['perplexity']:.1f}" in text
    assert f"{m['lm_on_rephrased']['kneser_ney']['base']['all']['perplexity']:.1f}" in text
    assert "| 98.4 | 74.5 | **51.0** |" in text  # the paper's English row
    for absent_or_empty in ("absent", "empty"):
        (tmp_path / "empty").mkdir(exist_ok=True)
        with pytest.raises(SystemExit):
            ev.main(["--table", str(tmp_path / absent_or_empty), "--output", str(md)])
