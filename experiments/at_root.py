"""Run one command line of a study (``experiments/<study>/project.yml``) in the repository root.

Usage: ``python ../at_root.py python -m spacy_punctgen ...`` (weasel runs it from the study's folder).

Why: weasel runs a project's commands in the project's own folder, but the metrics files record
the paths they were given (prediction files, read back by ``results-table`` and ``keep-fold``) and
the committed ones, like the core ``project.yml``, are relative to the repository root. So every
study command runs there, with the same paths as before the studies had their own files; only
``deps`` and ``outputs``, which weasel itself checks, are written relative to the study's folder
(``../../``). A leading ``python`` is this interpreter, as weasel does it.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv) -> int:
    if not argv:
        print("usage: python at_root.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    cmd = [sys.executable, *argv[1:]] if argv[0] in ("python", "python3") else list(argv)
    return subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
