"""``punctgen adapt``: refusals (exit 1, one ``[Ennn]`` line, no traceback), a bad command line
(exit 2), and one adaptation of a tiny text whose model ``punctgen restore --model`` uses."""
import json
from pathlib import Path

import pytest

from cli_helpers import run
from spacy_punctgen.workflow.adapt import is_mark

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample" / "en_sample-ud-train.conllu"


def refused(capsys, *argv):
    code, out, err = run(capsys, "adapt", *argv)
    assert code == 1, (code, out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("punctgen adapt: error: [E"), err
    return lines[0]


@pytest.fixture
def own_text(tmp_path):
    texts = [line[len("# text = "):] for line in SAMPLE.read_text(encoding="utf-8").splitlines()
             if line.startswith("# text = ")][:40]
    path = tmp_path / "minutes.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return path


def test_refusals(capsys, tmp_path, own_text):
    assert "[E983]" in refused(capsys, "--output", tmp_path / "m")
    assert "[E984]" in refused(capsys, tmp_path / "missing.txt", "--output", tmp_path / "m")
    (tmp_path / "bare.txt").write_text("nothing to learn here\n", encoding="utf-8")
    assert "[E986]" in refused(capsys, tmp_path / "bare.txt", "--output", tmp_path / "m")
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep me", encoding="utf-8")
    assert "[E987]" in refused(capsys, own_text, "--output", taken)
    assert (taken / "mine.txt").read_text(encoding="utf-8") == "keep me"


def test_refusal_as_json(capsys, tmp_path):
    code, out, _ = run(capsys, "adapt", tmp_path / "missing.txt", "--output", tmp_path / "m", "--json")
    assert code == 1 and json.loads(out.strip().splitlines()[-1])["error"].startswith("[E984]")


@pytest.mark.parametrize("flags", [["--share", "0"], ["--share", "1.5"], ["--dev-share", "1"], ["--epochs", "0"],
                                   ["--format", "srt"], ["--max-seconds", "-1"]])
def test_bad_command_line(capsys, tmp_path, own_text, flags):
    code, _, _ = run(capsys, "adapt", own_text, "--output", tmp_path / "m", *flags)
    assert code == 2


def test_adapt_then_restore(capsys, tmp_path, own_text, shipped_parser):
    out = tmp_path / "model"
    code, stdout, err = run(capsys, "adapt", own_text, "--output", out, "--epochs", "1", "--json")
    assert code == 0, err
    record = json.loads(stdout.strip().splitlines()[-1])
    assert record["output"] == str(out) and record["words"]["train"] > 0
    assert json.loads((out / "adapt.json").read_text(encoding="utf-8"))["files"] == record["files"]
    assert "parsing" in err  # the progress bar, on stderr

    source = "when i came home he left and i was sad so i called my mother she said it was fine\n"
    (tmp_path / "talk.txt").write_text(source, encoding="utf-8")
    code, restored, err = run(capsys, "restore", tmp_path / "talk.txt", "--model", out)
    assert code == 0, err
    assert restored != source
    assert "".join(c for c in restored if not is_mark(c)).split() == source.split()

    code, stdout, err = run(capsys, "adapt", own_text, "--output", out, "--epochs", "1", "--no-lowercase",
                            "--dev-share", "0")
    assert code == 0, err  # a folder adapt wrote may be written again
    assert "wrote the adapted model to" in stdout and f"--model {out}" in stdout
    assert json.loads((out / "adapt.json").read_text(encoding="utf-8"))["settings"]["lowercase"] is False


def test_force_writes_into_a_folder_with_other_files(capsys, tmp_path, own_text, shipped_parser):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    code, _, err = run(capsys, "adapt", own_text, "--output", out, "--epochs", "1", "--force")
    assert code == 0, err
    assert (out / "params.npz").is_file() and (out / "notes.txt").is_file()
