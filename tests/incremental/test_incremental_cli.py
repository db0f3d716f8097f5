"""``punctgen restore --live MODEL``: standard input punctuated as it arrives."""
import json
import subprocess
import sys

from spacy_punctgen.testing.env import package_env


def test_live_restore_writes_every_word_in_order_within_the_delay(sample_model, tmp_path):
    model_dir = tmp_path / "upp"
    sample_model("upp").to_disk(model_dir)
    text = "when i came home he left\ni was sad\nwhere are you going tonight\n"
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "restore", "--live", str(model_dir), "--delay", "3",
                           "--json"], input=text.encode("utf-8"), env=package_env(), capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode("utf-8").strip().splitlines()
    summary = json.loads(lines[-1])
    out = "\n".join(lines[:-1])
    words = [w.strip(",.?!;:") for w in out.split()]
    assert [w for w in words if w] == text.split()
    assert summary["words"] == len(text.split()) and summary["max_delay_words"] <= 3


def test_live_needs_a_model_folder(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "restore", "--live", str(tmp_path / "none")],
                          input=b"hi\n", env=package_env(), capture_output=True, timeout=120)
    assert proc.returncode != 0 and "E606" in proc.stderr.decode()
