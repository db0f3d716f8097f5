"""``punctgen learned --lang`` and ``punctgen learned-summary`` (spacy_punctgen/cli/learned.py):
the summary table over every results/<treebank>/learned/learned.json of a folder."""
import json
from pathlib import Path

from spacy_punctgen import cli
from spacy_punctgen.testing.toy import toy_model

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "en_fixture-ud-train.conllu"


def _run(capsys, *args):
    code = cli.main([*map(str, args), "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out.strip().splitlines()[-1]), out.err


def _learned(capsys, tmp_path, results, name, lang, xi_model=None):
    model = tmp_path / "model"
    if not model.exists():
        toy_model("r2l").to_disk(model)
    extra = ["--xi-model", xi_model] if xi_model else []
    code, _, err = _run(capsys, "learned", model, "--train", FIXTURE, "-o", results / name / "learned",
                          "--min-count", "1", "--no-plots", "--lang", lang, *extra)
    assert code == 0, err
    return json.loads((results / name / "learned" / "learned.json").read_text(encoding="utf8"))


def test_summary_of_two_treebanks(tmp_path, capsys):
    xi = toy_model("r2l", seed=4)
    xi.xi = 1.0
    xi.to_disk(tmp_path / "model_xi")
    results = tmp_path / "results"
    fr = _learned(capsys, tmp_path, results, "fr_toy", "fr", tmp_path / "model_xi")
    en = _learned(capsys, tmp_path, results, "en_toy", "en")
    assert (fr["lang"], en["lang"]) == ("fr", "en")
    assert "Nunberg's rules describe English ('fr' here)" in (results / "fr_toy" / "learned" / "learned.md").read_text(
        encoding="utf8")
    out = results / "learned_summary.md"
    code, res, err = _run(capsys, "learned-summary", results, "-o", out)
    assert code == 0, err
    assert res["treebanks"] == ["en_toy", "fr_toy"]  # sorted by folder name
    text = out.read_text(encoding="utf8")
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in lines[1:]] == ["| en_toy", "| fr_toy", "| paper (English, UD 1.4)"]
    row = {r["treebank"]: r for r in res["rows"]}["fr_toy"]
    assert row["n_confident"] == fr["channel"]["confident"]["n_confident"]
    assert row["xi_pos"]["xi"] == 1.0 and {r["treebank"]: r for r in res["rows"]}["en_toy"]["xi_pos"] is None
    assert f"| fr_toy | fr | {fr['n_sentences']:,} | {row['n_confident']} |" in text


def test_summary_refuses_a_folder_without_reports(tmp_path, capsys):
    code, _, err = _run(capsys, "learned-summary", tmp_path, "-o", tmp_path / "s.md")
    assert code == 1 and "E795" in err and not (tmp_path / "s.md").exists()
    code, _, err = _run(capsys, "learned-summary", tmp_path / "missing", "-o", tmp_path / "s.md")
    assert code == 1 and "E795" in err


def test_summary_refuses_a_report_that_is_not_one(tmp_path, capsys):
    bad = tmp_path / "xx" / "learned" / "learned.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json", encoding="utf8")
    code, _, err = _run(capsys, "learned-summary", tmp_path, "-o", tmp_path / "s.md")
    assert code == 1 and "E794" in err and str(bad) in err and not (tmp_path / "s.md").exists()
    bad.write_text("[1, 2]", encoding="utf8")
    code, _, err = _run(capsys, "learned-summary", tmp_path, "-o", tmp_path / "s.md")
    assert code == 1 and "E794" in err and "not a JSON object" in err
    bad.write_text(json.dumps({"channel": {}}), encoding="utf8")
    code, _, err = _run(capsys, "learned-summary", tmp_path, "-o", tmp_path / "s.md")
    assert code == 1 and "E794" in err and "channel.confident" in err


def test_summary_output_that_is_a_folder_is_refused(tmp_path, capsys):
    code, _, err = _run(capsys, "learned-summary", tmp_path, "-o", tmp_path)
    assert code == 1 and "E626" in err
