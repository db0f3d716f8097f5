"""Scripts for the parsed-tree restoration results: permutation_test, metrics_from_predictions,
and results_table with a second punctgen system (e.g. punctgen_mixture)."""
import json
from pathlib import Path

import pytest

from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.evaluation.predictions import record, write_predictions
from spacy_punctgen.data.preprocess import preprocess_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample" / "en_sample-ud-test.conllu"


@pytest.fixture()
def data(tmp_path):
    test = tmp_path / "corpus" / "en_x" / "punct" / "test.conllu"
    convert_file(SAMPLE, test)
    gold = preprocess_file(test)[0]
    good = tmp_path / "good.jsonl"
    write_predictions(good, (record(s.slots, s.sent_id) for s in gold))
    bad = tmp_path / "bad.jsonl"
    write_predictions(bad, (record([()] * len(s.slots), s.sent_id) for s in gold))
    return test, gold, good, bad


def test_permutation_test_script(data, tmp_path, capsys, load_script):
    test, gold, good, bad = data
    pt = load_script("permutation_test")
    out = tmp_path / "p.json"
    assert pt.main([str(test), str(good), str(bad), str(good), "--permutations", "200", "--output", str(out)]) == 0
    res = json.loads(out.read_text())
    n_slots = sum(len(s.slots) for s in gold)
    edits = sum(len(x) for s in gold for x in s.slots)
    assert res["aed_a"] == 0.0 and res["n_slots"] == n_slots
    first, second = res["comparisons"]
    assert first["aed_b"] == pytest.approx(edits / n_slots) and first["p"] == pytest.approx(1 / 201)
    assert second["p"] == 1.0  # identical predictions
    # predictions of other sentences, or too few, are refused
    short = tmp_path / "short.jsonl"
    write_predictions(short, (record(s.slots, s.sent_id) for s in gold[1:]))
    assert pt.main([str(test), str(good), str(short)]) == 1
    swapped = tmp_path / "swapped.jsonl"
    write_predictions(swapped, (record(s.slots, t.sent_id) for s, t in zip(gold, gold[1:] + gold[:1])))
    assert pt.main([str(test), str(good), str(swapped)]) == 1
    assert "is for sentence" in capsys.readouterr().err


def test_metrics_from_predictions_and_a_second_punctgen_row(data, tmp_path, load_script):
    test, gold, good, bad = data
    mp = load_script("metrics_from_predictions")
    folder = tmp_path / "metrics" / "en_x"
    assert mp.main([str(test), str(bad), str(folder / "trivial.json"), "--set", "system=trivial",
                    "--set", "perplexity_per_slot=1.5"]) == 0
    m = json.loads((folder / "trivial.json").read_text())
    assert m["aed_gold"] == m["aed_parsed"] > 0 and m["perplexity_per_slot"] == 1.5
    assert mp.main([str(test), str(tmp_path / "nope.jsonl"), str(folder / "x.json")]) == 1
    for name in ("punctgen", "punctgen_mixture"):
        (folder / f"{name}.json").write_text(json.dumps(
            {"system": name, "aed_gold": 0.0, "aed_parsed": 0.0, "predictions_gold": None,
             "predictions_parsed": str(good)}))
    rt = load_script("results_table")
    out = tmp_path / "table.md"
    assert rt.main(["--metrics", str(tmp_path / "metrics"), "--corpus", str(tmp_path / "corpus"),
                    "--output", str(out), "--permutations", "100"]) == 0
    text = out.read_text()
    rows = [ln.split(" | ")[1] for ln in text.splitlines() if ln.startswith("| en_x")]
    assert rows == ["punctgen", "punctgen_mixture", "trivial"]
    sig = [ln for ln in text.splitlines() if ln.startswith("- en_x")]
    assert len(sig) == 2 and all("parsed trees" in s and "vs trivial" in s for s in sig)
    assert "punctgen_mixture AED 0.0000" in sig[1]
