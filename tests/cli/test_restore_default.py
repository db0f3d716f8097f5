"""``punctgen restore`` right after ``pip install``: no flags means the shipped English pipeline
(``spacy_punctgen.load("en")``) reading each input line as one stream of any length, in
windows; ``--parser`` / ``--model`` replace either half; refusals are one line, exit status 1.

Everything runs through the real entry point (``spacy_punctgen.cli.main``, or
``python -m spacy_punctgen`` where stdin must be a real pipe).
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import refused, run

from spacy_punctgen.cli import restore as restore_cmd
from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.api.load import shipped_parser_path
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.testing.env import package_env

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
MODEL = default_model_path("en")
PARSER = shipped_parser_path("en")
TEXT = ("when i came home he left and then we went to the store\n"
        "\n"
        "she said that she would come tomorrow but she did not\n")
FINAL = (".", "?", "!", "…")


def words(text: str):
    return re.findall(r"\w+", text)


def check_restored(src: str, out_lines):
    """One output line per input line, every word kept in order, a final mark on each text."""
    src_lines = src.splitlines()
    assert len(out_lines) == len(src_lines), (src_lines, out_lines)
    for a, b in zip(src_lines, out_lines):
        assert words(b) == words(a), (a, b)
        if a.strip():
            assert b.rstrip().endswith(FINAL) or b.rstrip()[:-1].endswith(FINAL), b  # a closing quote may follow
        else:
            assert b == ""


def sample_words():
    """The sample treebank's words that are letters and digits only, lowercased: a transcript."""
    return [f.lower() for name in ("train", "dev", "test")
            for s in read_conllu(SAMPLE / f"en_sample-ud-{name}.conllu") for f in s.forms if f.isalnum()]


# ------------------------------------------------------------------ no flags
def test_no_flags_reads_stdin():
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "restore"], input=TEXT.encode("utf-8"),
                          env=package_env(), capture_output=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr.decode()
    check_restored(TEXT, proc.stdout.decode("utf-8").splitlines())
    assert proc.stderr.decode() == ""  # stderr is not a terminal: no progress bar


@pytest.mark.parametrize("text", ["", "\n", "\n\n"])
def test_empty_input_gives_empty_lines(tmp_path, capsys, text):
    """Nothing to restore prints nothing but the input's (empty) lines, not the result's fields."""
    src = tmp_path / "empty.txt"
    src.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "restore", src)
    assert code == 0, err
    assert out == text


def test_no_flags_reads_a_file(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, "restore", src, "--json")
    assert code == 0, err
    result = json.loads(out.splitlines()[-1])
    check_restored(TEXT, result["texts"])
    assert result["parser"] == "shipped" and result["model"] == "shipped (en)"
    assert result["words"] == len(TEXT.split())
    # -o writes the same lines
    dest = tmp_path / "out" / "restored.txt"
    code, out, err = run(capsys, "restore", src, "-o", dest)
    assert code == 0, err
    assert dest.read_text(encoding="utf-8").splitlines() == result["texts"]


@pytest.mark.slow
def test_a_20000_word_line_keeps_every_word(tmp_path, capsys):
    pool = sample_words()
    text = " ".join((pool * (20_000 // len(pool) + 1))[:20_000])
    src = tmp_path / "transcript.txt"
    src.write_text(text + "\n", encoding="utf-8")
    dest = tmp_path / "restored.txt"
    code, out, err = run(capsys, "restore", src, "-o", dest, "--json")
    assert code == 0, err
    restored = dest.read_text(encoding="utf-8").splitlines()
    assert len(restored) == 1
    assert words(restored[0]) == text.split()
    assert len(re.findall(r"[.?!]", restored[0])) > 100  # sentences were found inside the line


def test_progress_bar_only_when_asked_or_on_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(restore_cmd, "PROGRESS_DELAY", 0)
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, "restore", src)
    assert code == 0 and err == ""  # captured stderr is not a terminal
    code, out, err = run(capsys, "restore", src, "--progress")
    assert code == 0
    assert "punctgen restore" in err and f"/{len(TEXT.split())}" in err and "word" in err, err
    check_restored(TEXT, out.splitlines())  # the bar never reaches stdout


# ------------------------------------------------------------------ --parser / --model
def test_parser_and_model_together_parse_each_line_whole(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, "restore", src, "--parser", PARSER, "--model", MODEL, "--method", "slot",
                         "--n-samples", "50", "--json")
    assert code == 0, err
    result = json.loads(out.splitlines()[-1])
    assert result["parser"] == str(PARSER) and result["model"] == str(MODEL)
    assert result["sentences"] >= 2 and result["n_samples"] == 50
    check_restored(TEXT, result["texts"])


def test_model_alone_goes_with_the_shipped_parser(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, "restore", src, "--model", MODEL, "--json")
    assert code == 0, err
    result = json.loads(out.splitlines()[-1])
    assert result["parser"] == "shipped" and result["model"] == str(MODEL)
    check_restored(TEXT, result["texts"])
    # the model given is the one read
    line = refused(capsys, "restore", src, "--model", tmp_path / "no_model")
    assert "[E606]" in line and "no_model" in line
    (tmp_path / "empty_model").mkdir()
    line = refused(capsys, "restore", src, "--model", tmp_path / "empty_model")
    assert "[E004]" in line and "empty_model" in line


def test_parser_alone_goes_with_the_shipped_model(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, "restore", src, "--parser", PARSER, "--json")
    assert code == 0, err
    result = json.loads(out.splitlines()[-1])
    assert result["parser"] == str(PARSER) and result["model"] == "shipped (en)" and "sentences" in result
    check_restored(TEXT, result["texts"])
    line = refused(capsys, "restore", src, "--parser", tmp_path / "no_parser")
    assert "[E620]" in line and "no_parser" in line


# ------------------------------------------------------------------ --truecaser
@pytest.fixture(scope="module")
def truecaser_dir(tmp_path_factory):
    """A tiny truecaser (a few updates on one sentence): the flag's path to load, not its quality."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    import spacy_punctgen.truecasing.truecaser  # noqa: F401  (registers the factory)

    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen_truecase")
    ws, tags = ["i", "went", "to", "london", "with", "nasa"], ["Title", "lower", "lower", "Title", "lower", "UPPER"]
    examples = [Example(nlp.make_doc(" ".join(ws)), Doc(nlp.vocab, words=ws, tags=tags))] * 8
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    out = tmp_path_factory.mktemp("truecaser")
    nlp.to_disk(out)
    return out


def test_truecaser_capitalises_the_restored_text(tmp_path, capsys, truecaser_dir):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, "restore", src, "--truecaser", truecaser_dir, "--json")
    assert code == 0, err
    texts = json.loads(out.splitlines()[-1])["texts"]
    check_restored(TEXT.lower(), [t.lower() for t in texts])
    assert all(t[0].isupper() for t in texts if t), texts  # every restored sentence starts with a capital
    line = refused(capsys, "restore", src, "--truecaser", PARSER)  # a pipeline without a truecaser
    assert "[E087]" in line


# ------------------------------------------------------------------ refusals
def test_a_missing_input_file_is_one_line_exit_1():
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "restore", "no_such_transcript.txt"],
                          env=package_env(), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == "punctgen restore: error: [E618] No such input file: no_such_transcript.txt"


def test_flags_that_do_not_apply_are_refused(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    assert "[E634]" in refused(capsys, "restore", src, "--max-length", "100")
    assert "[E635] --truecase" in refused(capsys, "restore", src, "--parser", PARSER, "--truecase")
    assert "[E636]" in refused(capsys, "restore", src, "--truecaser", tmp_path / "none")
    assert "[E051]" in refused(capsys, "restore", src, "--lang", "xx")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    assert "[E619]" in refused(capsys, "restore", bad)


def test_lexical_restores_with_the_shipped_expert(tmp_path, capsys, monkeypatch):
    """``--lexical`` gives the component the expert shipped beside the model (the same choices as
    ``load(lexical=True)``), and the text stays the user's."""
    import spacy_punctgen
    from spacy_punctgen.pipeline.shipped import lexical_expert_path

    try:
        lexical_expert_path("en")
    except ValueError as err:
        pytest.skip(str(err))
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, "restore", src, "--lexical", "--json")
    assert code == 0, err
    texts = json.loads(out.splitlines()[-1])["texts"]
    check_restored(TEXT, texts)
    nlp = spacy_punctgen.load("en", lexical=True)
    assert texts == [spacy_punctgen.restore_text(nlp, line) for line in TEXT.splitlines()]
