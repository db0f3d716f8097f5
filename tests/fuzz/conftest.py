"""Fixtures of the fuzz tests: blank English pipelines running the shipped model in each mode,
the shipped model's folder; and a terminal summary of how many inputs each property tried."""
import sys
from pathlib import Path

import pytest
import spacy

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fuzz_strategies, whatever the import mode

import fuzz_strategies  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[2] / "spacy_punctgen" / "shipped" / "en_ewt"


def blank_pipeline(mode: str, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"mode": mode, **config})
    return nlp


@pytest.fixture(scope="session")
def shipped_dir():
    assert (SHIPPED / "params.npz").is_file(), SHIPPED
    return SHIPPED


@pytest.fixture(scope="session")
def pipelines():
    """``pipelines(mode, key, run)``: one blank English pipeline per (mode, key, run) for the
    session, its ``punctgen`` running the shipped model (loaded at once).  Restoration draws
    ``n_samples=100`` in the bounded default run (fast) and the default 1000 in the long run."""
    cache = {}

    def get(mode: str, key: str = "main", run: str = "default"):
        if (mode, key, run) not in cache:
            nlp = blank_pipeline(mode, **({"n_samples": 100} if run == "default" and mode == "restore" else {}))
            nlp.get_pipe("punctgen").require_model()
            cache[mode, key, run] = nlp
        return cache[mode, key, run]

    return get


def pytest_terminal_summary(terminalreporter):
    if fuzz_strategies.COUNTS:
        terminalreporter.section("punctgen fuzz: inputs tried per property")
        for name, n in sorted(fuzz_strategies.COUNTS.items()):
            terminalreporter.write_line(f"{name}: {n}")
        fuzz_strategies.write_report()
