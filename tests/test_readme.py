"""The README's quick start prints what the README shows (the shipped pipeline, offline)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _quick_start():
    text = README.read_text(encoding="utf8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, flags=re.S)
    code = next(body for lang, body in blocks if lang == "python")
    shown = next(body for lang, body in blocks if lang == "")
    return code, shown


def test_quick_start_is_at_most_five_lines():
    code, _ = _quick_start()
    assert 0 < len(code.strip().splitlines()) <= 5


def test_quick_start_prints_what_the_readme_shows(tmp_path, shipped_parser):
    code, shown = _quick_start()
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout == shown
