"""`punctgen demo`: the shipped pipeline punctuates the shipped transcript (every word kept, in
order, marks added) and explains the punctuation of its first sentences; --train trains on the
sample first."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.pipeline.shipped import sample_transcript_path

ROOT = Path(__file__).resolve().parents[2]


def _demo(*flags):
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "demo", "--json", *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_demo_punctuates_the_shipped_transcript():
    out = _demo("--show", "1")
    transcript = sample_transcript_path("en").read_text(encoding="utf-8").strip()
    assert out["transcript"] == transcript
    restored = out["restored_text"]
    words = lambda t: re.findall(r"[\w']+", t.lower())  # noqa: E731
    assert words(restored) == words(transcript)
    assert restored.rstrip()[-1] in ".?!" and restored.count(",") + restored.count(".") >= 3
    [analysed] = out["analysed"]
    assert analysed["underlying_punct"] and any(surface for _, surface in analysed["underlying_punct"])


@pytest.mark.slow
def test_demo_train_on_the_sample():
    out = _demo("--train", "--epochs", "1", "--show", "1")
    assert out["test_perplexity_per_slot"] > 1 and len(out["analysed"]) == 1
