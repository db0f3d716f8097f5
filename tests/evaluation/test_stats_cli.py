"""The ``stats`` command, through the project CLI."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen import cli

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
EN = FIX / "en_fixture-ud-train.conllu"
ES = FIX / "es_fixture-ud-test.conllu"
UD = ROOT.parent / "shared" / "ud"


def run_json(capsys, *args):
    code = cli.main(["stats", *map(str, args), "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


def test_json_numbers_for_fixture_files(capsys):
    code, data = run_json(capsys, EN, ES)
    assert code == 0
    en, es = data["files"]
    assert en["file"] == str(EN)
    assert (en["sentences"], en["words"], en["punct_tokens"]) == (7, 41, 13)
    assert (en["omitted_nonleaf"], en["omitted_empty"], en["nonprojective"], en["kept"]) == (1, 1, 1, 5)
    assert en["punct_types"] == 6  # , . ( ABBR. “ ”
    assert en["punct_pct"] == round(100 * 13 / 41, 2)
    assert (es["sentences"], es["words"], es["punct_tokens"], es["punct_types"]) == (5, 27, 11, 5)
    total = data["total"]
    assert (total["sentences"], total["words"], total["punct_tokens"]) == (12, 68, 24)
    assert total["punct_types"] == 8  # union: , . ( ABBR. “ ” ‘ ’
    assert data["dirs"] == []


def test_directory_expands_and_markdown(capsys):
    assert cli.main(["stats", str(FIX), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| file | sents | words | %punct |")
    assert "| fixtures/en_fixture-ud-train.conllu | 7 | 41 | 31.7 | 6 | 1 | 1 | 1 |" in out
    assert "**fixtures/ (all)**" in out and "| **total** | **12** | **68** |" in out
    assert "malformed" not in out  # subfolders are not searched


def test_errors_exit_1_with_message(capsys):
    bad = FIX / "malformed" / "bad_head_range-ud-test.conllu"
    code, data = run_json(capsys, bad)
    assert code == 1 and f"{bad}:10:" in data["error"]
    assert cli.main(["stats", str(FIX / "missing.conllu")]) == 1
    assert "missing.conllu" in capsys.readouterr().err


def test_module_entry_point_subprocess(tmp_path):
    from spacy_punctgen.testing.env import package_env

    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "stats", str(ES), "--json"],
                          capture_output=True, text=True, env=package_env(), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["total"]["sentences"] == 5 and data["total"]["omitted_nonleaf"] == 0


@pytest.mark.ud
def test_zh_gsd_ud14_via_cli(capsys):
    folder = UD / "zh_gsd_ud14"
    if not folder.is_dir():
        pytest.skip(f"UD data not available at {folder}")
    code, data = run_json(capsys, folder)
    assert code == 0
    total = data["total"]
    assert (total["sentences"], total["words"], total["omitted_nonleaf"]) == (4997, 123283, 3)
    assert round(total["punct_pct"], 1) == 13.8
    assert [d["file"] for d in data["dirs"]] == ["zh_gsd_ud14/ (all)"]
