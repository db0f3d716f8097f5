"""``punctgen restore FILE`` (the shipped pipeline) restores the lines that fit one window many at
a time (:func:`spacy_punctgen.api.stream.iter_restored_lines`: each component's ``pipe`` over a
batch, as ``nlp.pipe`` does) and writes exactly what restoring each line alone
(:func:`~spacy_punctgen.api.stream.restore_text`) gives: the file's bytes, byte-order mark, CRLF,
blank lines and long lines kept (issue 38: it restored one line per call, about 4x slower than
``nlp.pipe`` on 2,000 short lines)."""
import pytest
from cli_helpers import run

import spacy_punctgen
from spacy_punctgen.api.stream import DEFAULT_CHUNK_CHARS, iter_restored_lines, one_window, restore_text
from spacy_punctgen.pipeline.component import PunctGen

SHORT = ["when i came home he left",
         "she said that she would come tomorrow but she did not",
         "the cat sat on the mat and the dog barked",
         "i think so",
         "where are you going he asked",
         "Mr Smith went to Washington in 2019 and came back",
         "we bought apples oranges and pears",
         "Well, it rained all day",  # punctuated already: its marks are kept
         "  leading and trailing spaces  ",
         "yes",
         "i'm not sure if it's true\r",  # a CRLF file's line keeps its \r
         "he left because she came home late and then they argued about it for hours"]
#: more than one window (DEFAULT_CHUNK_CHARS): streamed in windows between the batched lines
LONG = " ".join(["so we went to the market and bought bread then we walked home"] * 60)
LINES = SHORT[:4] + ["", "   ", LONG] + SHORT[4:] + ["\t \r", LONG[:DEFAULT_CHUNK_CHARS - 5]]


@pytest.fixture(scope="module")
def nlp():
    return spacy_punctgen.load("en")


def test_the_lines_are_what_one_window_means():
    assert len(LONG) > DEFAULT_CHUNK_CHARS and not one_window(LONG)
    assert one_window(LINES[-1]) and not one_window("") and not one_window("   ") and not one_window("a\nb")


@pytest.mark.parametrize("batch_size", [1, 3, 256])
def test_lines_in_batches_equal_each_line_alone(nlp, batch_size):
    pieces = [[] for _ in LINES]
    for k, piece in iter_restored_lines(nlp, LINES, batch_size=batch_size):
        pieces[k].append(piece)
    assert ["".join(p) for p in pieces] == [restore_text(nlp, line) for line in LINES]
    assert len(pieces[LINES.index(LONG)]) > 1  # the long line still streams in windows


def test_a_line_with_a_line_break_is_restored_as_restore_text_cuts_it(nlp):
    text = "when i came home\nhe left"
    got = ["".join(p for k, p in iter_restored_lines(nlp, [text]))]
    assert got == [restore_text(nlp, text)]


def test_cli_batches_lines_and_writes_each_lines_own_restoration(nlp, tmp_path, capsys, monkeypatch):
    sizes = []
    predict = PunctGen.predict

    def counting(self, docs):
        docs = list(docs)
        sizes.append(len(docs))
        return predict(self, docs)

    monkeypatch.setattr(PunctGen, "predict", counting)
    text = "\ufeff" + "\r\n".join(LINES) + "\r\n"
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_bytes(text.encode("utf-8"))
    code, out, err = run(capsys, "restore", src, "-o", dst)
    assert code == 0, err
    lines = text[1:].split("\n")
    want = "\ufeff" + "\n".join(restore_text(nlp, line) for line in lines)
    assert dst.read_bytes() == want.encode("utf-8")
    assert max(sizes) > 1  # several lines in one call of the component: batched


def test_cli_stdout_equals_per_line_restoration(nlp, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(SHORT) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "restore", src)
    assert code == 0, err
    assert out == "\n".join(restore_text(nlp, line) for line in SHORT + [""])
