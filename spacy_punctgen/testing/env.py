"""The environment of a subprocess that must import the same ``spacy_punctgen`` as the caller."""
import os
from pathlib import Path

import spacy_punctgen


def package_env(**extra):
    """Environment for a subprocess that must import the *same* spacy_punctgen as this test
    process: the installed package in CI (with its compiled core), the source tree in a
    developer's in-place build. Run such subprocesses outside the repository root."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = str(Path(spacy_punctgen.__file__).resolve().parents[1])
    return env

