"""results_table --readme / --significance: the per-treebank summary spliced into the README,
and permutation tests kept for clones that lack the prediction files."""
import json
from pathlib import Path

import pytest

from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.evaluation.predictions import record, write_predictions
from spacy_punctgen.data.preprocess import preprocess_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample" / "en_sample-ud-test.conllu"
README = "intro\n<!-- results-summary:start -->\nold row\n<!-- results-summary:end -->\noutro\n"


@pytest.fixture()
def project(tmp_path):
    """metrics/ with two punctgen systems and two baselines on en_x (perfect, one-slot-off, none
    and every other sentence wrong), and a treebank with no baseline, which the summary leaves out."""
    test = tmp_path / "corpus" / "en_x" / "punct" / "test.conllu"
    convert_file(SAMPLE, test)
    gold = preprocess_file(test)[0]
    n_slots = sum(len(s.slots) for s in gold)

    def preds(name, slots_of):
        path = tmp_path / "pred" / f"{name}.jsonl"
        path.parent.mkdir(exist_ok=True)
        write_predictions(path, (record(slots_of(k, s), s.sent_id) for k, s in enumerate(gold)))
        edits = sum(sum(len(set(a) ^ set(b)) for a, b in zip(s.slots, slots_of(k, s))) for k, s in enumerate(gold))
        return str(path), edits / n_slots

    perfect = preds("perfect", lambda k, s: s.slots)
    none = preds("none", lambda k, s: [()] * len(s.slots))
    half = preds("half", lambda k, s: s.slots if k % 2 else [()] * len(s.slots))
    folder = tmp_path / "metrics" / "en_x"
    folder.mkdir(parents=True)
    for name, g, p in (("punctgen", perfect, half), ("punctgen_mix", half, perfect),
                       ("trivial", none, none), ("crf_lexical", half, half)):
        (folder / f"{name}.json").write_text(json.dumps(
            {"system": name, "protocol": "standard", "aed_gold": g[1], "aed_parsed": p[1], "parser_las": 0.8,
             "predictions_gold": g[0], "predictions_parsed": p[0], **({"n_trees": 3} if name == "punctgen_mix" else {})}))
    (tmp_path / "metrics" / "en_y").mkdir()
    (tmp_path / "metrics" / "en_y" / "punctgen.json").write_text(json.dumps({"system": "punctgen", "aed_gold": 0.1}))
    readme = tmp_path / "README.md"
    readme.write_text(README)
    return tmp_path, half[1]


def _run(rt, tmp_path, corpus="corpus"):
    return rt.main(["--metrics", str(tmp_path / "metrics"), "--corpus", str(tmp_path / corpus),
                    "--output", str(tmp_path / "table.md"), "--permutations", "200",
                    "--readme", str(tmp_path / "README.md"), "--significance", str(tmp_path / "sig.json")])


def _rows(tmp_path):
    return [ln for ln in (tmp_path / "README.md").read_text().splitlines() if ln.startswith("| en_")]


def test_summary_row_is_the_best_punctgen_rows_against_the_best_baseline(project, load_script):
    tmp_path, half = project
    rt = load_script("results_table")
    assert _run(rt, tmp_path) == 0
    text = (tmp_path / "README.md").read_text()
    assert text.startswith("intro\n<!-- results-summary:start -->\n| treebank |") and text.endswith(
        "<!-- results-summary:end -->\noutro\n") and "old row" not in text
    # best gold row: punctgen (perfect); best parsed row: punctgen_mix (perfect, 3 parses);
    # best baseline: crf_lexical (every other sentence wrong) beats trivial (all wrong)
    assert _rows(tmp_path) == [f"| en_x | standard | 0.800 | 0.0000 (punctgen) | 0.0000 (punctgen_mix, 3 parses) | "
                               f"{half:.4f} (crf_lexical) | 0.005 (better) |"]  # 1/201: no sign flip does as well
    kept = json.loads((tmp_path / "sig.json").read_text())["tests"]
    assert {(t["system"], t["trees"]) for t in kept} == {(s, t) for s in ("punctgen", "punctgen_mix")
                                                          for t in ("gold", "parsed")}
    assert all(t["baseline"] == "crf_lexical" for t in kept)


def test_kept_tests_fill_in_for_missing_predictions_until_a_system_changes(project, load_script):
    tmp_path, _ = project
    rt = load_script("results_table")
    assert _run(rt, tmp_path) == 0
    before = _rows(tmp_path)
    # a clone without the corpus and predictions: the kept p is reused, and still kept
    assert _run(rt, tmp_path, corpus="no_corpus") == 0
    assert _rows(tmp_path) == before
    assert len(json.loads((tmp_path / "sig.json").read_text())["tests"]) == 4
    # the parsed punctgen row changes: its old test is dropped, never shown against new figures
    m = tmp_path / "metrics" / "en_x" / "punctgen_mix.json"
    data = json.loads(m.read_text())
    data["aed_parsed"] = 0.001
    m.write_text(json.dumps(data))
    assert _run(rt, tmp_path, corpus="no_corpus") == 0
    assert _rows(tmp_path)[0].endswith("| 0.0010 (punctgen_mix, 3 parses) | " + before[0].split(" | ")[5] + " | – |")
    kept = json.loads((tmp_path / "sig.json").read_text())["tests"]
    assert ("punctgen_mix", "parsed") not in {(t["system"], t["trees"]) for t in kept} and len(kept) == 3


def test_readme_without_both_markers_is_an_error_and_nothing_is_written(project, capsys, load_script):
    tmp_path, _ = project
    rt = load_script("results_table")
    (tmp_path / "README.md").write_text("no markers\n")
    assert _run(rt, tmp_path) == 1
    assert "results-summary:start" in capsys.readouterr().err
    assert (tmp_path / "README.md").read_text() == "no markers\n"
    assert not (tmp_path / "table.md").exists() and not (tmp_path / "sig.json").exists()
