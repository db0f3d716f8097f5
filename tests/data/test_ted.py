"""The TED ``word<TAB>label`` reader and its train/dev blocks (spacy_punctgen/data/ted.py)."""
from pathlib import Path

import pytest

from spacy_punctgen.data.ted import LABEL_MARKS, read_ted, split_blocks

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "iwslt" / "dev2012.tsv"

SAMPLE = "hello\tCOMMA\nworld\tPERIOD\nhow\tO\nare\tO\nyou\tQUESTION\n\tCOMMA\nfine\tPERIOD\nthanks\tO\nbye\tPERIOD\n"


def _write(tmp_path, text):
    p = tmp_path / "t.tsv"
    p.write_text(text, encoding="utf-8")
    return p


def test_labels_become_marks_and_empty_words_are_dropped(tmp_path):
    t = read_ted(_write(tmp_path, SAMPLE))
    assert t.words == ["hello", "world", "how", "are", "you", "fine", "thanks", "bye"]
    assert t.marks == [",", ".", "", "", "?", ".", "", "."]
    assert t.n_empty == 1


@pytest.mark.parametrize("line", ["hello COMMA", "hello\tCOMMA\textra", "hello\tcomma", "hello\tEXCLAMATION",
                                  "two words\tO"])
def test_malformed_line_names_file_and_line(tmp_path, line):
    p = _write(tmp_path, "ok\tO\n" + line + "\n")
    with pytest.raises(ValueError, match=r"E768.*t\.tsv:2"):
        read_ted(p)


def test_empty_file(tmp_path):
    with pytest.raises(ValueError, match="E769"):
        read_ted(_write(tmp_path, "\n\n"))


def test_blocks_contiguous_disjoint_and_cut_at_a_sentence_end(tmp_path):
    t = read_ted(_write(tmp_path, SAMPLE))
    (a, b), (c, d) = split_blocks(t, 0.3)
    assert a == 0 and b == c and d == len(t)  # contiguous, disjoint, covering
    # 0.3 * 8 = 2.4 -> 2; words[1] ("world") ends a sentence, so the cut stays at 2
    assert b == 2
    (_, b2), _ = split_blocks(t, 0.4)  # round(3.2) = 3 -> moved to after "you?"
    assert b2 == 5 and t.marks[b2 - 1] == "?"
    assert t.block(b2, len(t)).words == ["fine", "thanks", "bye"]
    for share in (0.0, 1.0, -1, 2):
        with pytest.raises(ValueError, match="E770"):
            split_blocks(t, share)
    with pytest.raises(ValueError, match="E771"):
        split_blocks(read_ted(_write(tmp_path, "a\tO\nb\tPERIOD\n")), 0.9)


def test_shared_dev2012():
    if not SHARED.exists():
        pytest.skip(f"IWSLT data not available at {SHARED}")
    t = read_ted(SHARED)
    # the README's counts: 295,790 labelled words, 22,444 of them COMMA; plus 10 empty-word lines
    assert len(t) == 295790 and t.n_empty == 10
    assert sum(m == "," for m in t.marks) == 22444 and sum(m == "?" for m in t.marks) == 1514
    (a, b), (c, d) = split_blocks(t, 0.8)
    assert a == 0 and b == c and d == len(t) and t.marks[b - 1] in (".", "?")
    assert (b, d - c) == (236633, 59157)  # the cut docs/evaluation_streams.md reports
    assert set(t.marks) <= set(LABEL_MARKS.values())
