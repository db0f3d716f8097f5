"""Stream documents written and read back (TED's silver documents go through such a file): the
same words, tags, heads and gaps, the classes made for the label set they are read with; a
damaged file names its line."""
import json

import pytest

from spacy_punctgen.incremental.labels import FINE, PAPER
from spacy_punctgen.incremental.streams import StreamDoc, load_docs, save_docs


def test_documents_round_trip(sample_docs, tmp_path):
    docs = sample_docs[1]
    save_docs(docs, tmp_path / "d" / "docs.jsonl")
    again = load_docs(tmp_path / "d" / "docs.jsonl", PAPER)
    assert again == docs
    for d in again:  # still reachable gold
        assert len(d.oracle(PAPER)) == 2 * len(d.words)


def test_the_classes_come_from_the_gaps_for_the_label_set_read(tmp_path):
    doc = StreamDoc(["why", "not", "ok", "then"], ["ADV", "PART", "INTJ", "ADV"], [-1, 0, -1, 2],
                    ["", "?", ",", "."], [0, 2, 1, 2])
    save_docs([doc], tmp_path / "docs.jsonl")
    assert load_docs(tmp_path / "docs.jsonl", PAPER)[0].marks == [0, 2, 1, 2]
    assert load_docs(tmp_path / "docs.jsonl", FINE)[0].marks == [0, 3, 1, 2]


@pytest.mark.parametrize("line, problem", [
    ("not json", "JSONDecodeError"),
    (json.dumps({"words": ["a"], "upos": ["X"], "heads": [-1]}), "KeyError"),
    (json.dumps({"words": ["a", "b"], "upos": ["X"], "heads": [-1, 0], "gaps": ["", "."]}), "1 tags"),
    (json.dumps({"words": ["a", "b"], "upos": ["X", "X"], "heads": [-1, 2], "gaps": ["", "."]}), "each head"),
])
def test_a_damaged_file_names_its_line(tmp_path, line, problem):
    good = json.dumps({"words": ["a"], "upos": ["X"], "heads": [-1], "gaps": ["."]})
    (tmp_path / "docs.jsonl").write_text(good + "\n\n" + line + "\n")
    with pytest.raises(ValueError, match="E937") as err:
        load_docs(tmp_path / "docs.jsonl", PAPER)
    assert "line 3" in str(err.value) and problem in str(err.value)
