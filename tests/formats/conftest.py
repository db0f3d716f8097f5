"""Fixtures of the file-format tests: the sample files and a fake restorer (a test double of
the model: a comma after every third word, a period at the end)."""
from pathlib import Path

import pytest

from spacy_punctgen.formats.insertions import token_spans

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def every_third_word(text):
    """Insertions: ',' after every third token (not the last), '.' after the last."""
    spans = token_spans(text)
    insertions = [(end, ",") for k, (_, end) in enumerate(spans[:-1]) if k % 3 == 2]
    return insertions + ([(spans[-1][1], ".")] if spans else [])


@pytest.fixture
def fake_restorer():
    return every_third_word


@pytest.fixture
def read_fixture():
    """``read_fixture(name)``: the file's text exactly as stored (BOM and line endings kept)."""
    def read(name: str) -> str:
        with (FIXTURES / name).open(encoding="utf8", newline="") as f:
            return f.read()
    return read
