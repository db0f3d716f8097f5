"""Reading CoNLL-U: word lines only, spacing from MWT ranges, errors with file:line."""
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import UDSentence, find_split, iter_conllu, read_conllu

FIX = Path(__file__).resolve().parents[1] / "fixtures"
EN = FIX / "en_fixture-ud-train.conllu"
ES = FIX / "es_fixture-ud-test.conllu"


def by_id(path):
    return {s.sent_id: s for s in read_conllu(path)}


def test_reads_all_sentences_with_comments_and_lines():
    sents = read_conllu(EN)
    assert [s.sent_id for s in sents] == [
        "en-1-abbr", "en-2-mwt-quote", "en-3-initial-comma", "en-4-nonleaf",
        "en-5-only-punct", "en-6-nonprojective", "en-7-quoted",
    ]
    first = sents[0]
    assert isinstance(first, UDSentence)
    assert first.text == "We sell apples, pears, etc. at Acme Inc."
    assert first.line == 1 and first.path == str(EN)
    assert sents[1].line == 15  # the sentence's first (comment) line
    assert first.heads[:3] == [2, 0, 2] and first.deprels[1] == "root"
    assert first.ids == list(range(1, 11))


def test_mwt_range_and_empty_node_skipped_spacing_from_range():
    s = by_id(EN)["en-2-mwt-quote"]
    assert s.forms == ["(", '"', "I", "ca", "n't", "."]  # no "can't", no empty node "go"
    assert s.xpos[1] == "``"
    # "ca" is inside the MWT (no space); "n't" gets the range line's SpaceAfter=No
    assert s.space_after == [False, False, True, False, False, True]


def test_mwt_without_space_after_keeps_space():
    s = by_id(ES)["es-5-mwt"]
    assert s.forms == ["Voy", "a", "el", "cine", "."]
    assert s.space_after == [True, False, True, False, True]


def test_sentence_without_comments():
    sents = read_conllu(ES)
    bare = sents[3]
    assert bare.sent_id is None and bare.text is None
    assert bare.forms[0] == "La" and bare.line == 25
    assert bare.xpos == ["_"] * 7


def test_missing_file_names_path(tmp_path):
    missing = tmp_path / "nope-ud-dev.conllu"
    with pytest.raises(FileNotFoundError, match="nope-ud-dev.conllu"):
        read_conllu(missing)


@pytest.mark.parametrize(
    "name, line, what",
    [
        ("bad_columns-ud-test.conllu", 9, "10 tab-separated columns"),
        ("bad_head-ud-test.conllu", 10, "HEAD"),
        ("bad_head_range-ud-test.conllu", 10, r"HEAD 7 not in 0\.\.3"),
    ],
)
def test_malformed_files_name_file_and_line(name, line, what):
    path = FIX / "malformed" / name
    with pytest.raises(ValueError, match=what) as err:
        read_conllu(path)
    assert f"{path}:{line}:" in str(err.value)


def _write(tmp_path, rows, name="x-ud-test.conllu"):
    path = tmp_path / name
    path.write_text("\n".join("\t".join(map(str, r)) if isinstance(r, tuple) else r for r in rows) + "\n\n")
    return path


def test_cycle_and_id_sequence_are_errors(tmp_path):
    cyc = _write(tmp_path, [(1, "a", "a", "X", "_", "_", 2, "dep", "_", "_"),
                            (2, "b", "b", "X", "_", "_", 1, "dep", "_", "_")])
    with pytest.raises(ValueError, match=r"x-ud-test.conllu:\d+: HEAD forms a cycle"):
        read_conllu(cyc)
    gap = _write(tmp_path, [(1, "a", "a", "X", "_", "_", 0, "root", "_", "_"),
                            (3, "b", "b", "X", "_", "_", 1, "dep", "_", "_")], "y-ud-test.conllu")
    with pytest.raises(ValueError, match=r"y-ud-test.conllu:2: word ID 3 out of sequence"):
        read_conllu(gap)


def test_iter_is_lazy_but_checks_existence_on_first_use(tmp_path):
    gen = iter_conllu(tmp_path / "missing.conllu")
    with pytest.raises(FileNotFoundError):
        next(gen)


def test_find_split_globs_and_returns_none(tmp_path):
    (tmp_path / "zz_odd-ud-train.conllu").write_text("")
    assert find_split(tmp_path, "train") == tmp_path / "zz_odd-ud-train.conllu"
    assert find_split(tmp_path, "dev") is None
    assert find_split(FIX, "test") == ES


def test_sample_assets_are_readable():
    sample = Path(__file__).resolve().parents[2] / "assets" / "sample"
    counts = {split: len(read_conllu(find_split(sample, split))) for split in ("train", "dev", "test")}
    assert counts == {"train": 170, "dev": 35, "test": 35}
