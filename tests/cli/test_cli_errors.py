"""Hostile command lines (issue 23, items 10-14 and 16): every refusal is one line on stderr
that names the path or flag, exit status 1 (refused input) or 2 (bad command line), no
traceback; the JSON on stdout is strict; a byte-order mark is not part of the first word; a
line too long for the parser is refused with what to do instead.

Everything runs through the real entry point: ``spacy_punctgen.cli.main`` (the function the
``punctgen`` script calls) or ``python -m spacy_punctgen`` in a subprocess, on the shipped
sample (``assets/sample``), the shipped English model and a tiny parser trained here.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import spacy_punctgen
from spacy_punctgen import cli
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.testing.env import package_env

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
TRAIN = SAMPLE / "en_sample-ud-train.conllu"
DEV = SAMPLE / "en_sample-ud-dev.conllu"
TEST = SAMPLE / "en_sample-ud-test.conllu"
MODEL = Path(spacy_punctgen.__file__).resolve().parent / "shipped" / "en_ewt"

ALL_PUNCT = ("# sent_id = p1\n# text = ...\n1\t...\t...\tPUNCT\t:\t_\t0\troot\t_\t_\n\n"
             "# sent_id = p2\n# text = !\n1\t!\t!\tPUNCT\t.\t_\t0\troot\t_\t_\n\n")


def strict_json(line: str):
    """json.loads that refuses NaN and Infinity, which are not JSON."""
    def refuse(const):
        raise AssertionError(f"not valid JSON: {const}")

    return json.loads(line, parse_constant=refuse)


def run(capsys, *argv):
    """``(exit status, stdout lines, stderr)`` of ``punctgen ARGV``."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out.strip().splitlines(), err


def refused(capsys, *argv, status=1):
    """Run a command that must be refused; return its one-line message."""
    code, out, err = run(capsys, *argv)
    assert code == status, (code, out, err)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("punctgen ")]
    assert len(lines) == 1, err
    if status == 1 and "--json" in map(str, argv):
        assert strict_json(out[-1])["error"] in lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def parser_dir(tiny_parser):
    """A tiny UD parser (one pass over 40 of the sample's depunctuated trees): restore needs one."""
    return tiny_parser(40, 1)


# ------------------------------------------------------------- item 10: paths
def test_a_directory_for_an_output_file_is_a_one_line_error_in_a_subprocess(tmp_path):
    """``python -m spacy_punctgen convert`` with a folder as output: no IsADirectoryError traceback."""
    (tmp_path / "out").mkdir()
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "convert", str(TEST), "out"],
                          cwd=tmp_path, env=package_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert proc.stderr.startswith("punctgen convert: error: [E626] output out: is a directory")
    assert not list((tmp_path).glob(".out*"))  # no temporary file left behind


def test_directories_given_for_output_files_are_refused_before_the_work(tmp_path, capsys, parser_dir):
    folder = tmp_path / "folder"
    folder.mkdir()
    src = tmp_path / "in.txt"
    src.write_text("he left\n", encoding="utf-8")
    cases = [
        ["convert", TEST, folder],
        ["restore", src, "--parser", parser_dir, "--model", MODEL, "-o", folder],
        ["evaluate-restore", MODEL, TEST, "--predictions", folder, "--limit", "2"],
        ["baseline", "trivial", "--train", TRAIN, "--test", TEST, "--predictions", folder],
        ["bench", "--data", SAMPLE, "--markdown", folder],
    ]
    for argv in cases:
        line = refused(capsys, *argv, "--json")
        assert "[E626]" in line and str(folder) in line and "is a directory" in line, line
    assert not any(folder.iterdir())


def test_bench_checks_its_paths_before_training(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    for flag, code in (("--parser", "[E602]"), ("--model", "[E606]")):
        status, _, err = run(capsys, "bench", "--data", SAMPLE, flag, afile, "--sections", "analysis")
        assert status == 1 and "Traceback" not in err
        assert code in err and str(afile) in err
        assert "training:" not in err  # refused before the model is trained


def test_a_directory_as_restore_input_is_named(tmp_path, capsys, parser_dir):
    line = refused(capsys, "restore", tmp_path, "--parser", parser_dir, "--model", MODEL)
    assert "[E626]" in line and str(tmp_path) in line


def test_an_existing_file_as_train_output_is_refused_before_training(tmp_path, capsys):
    existing = tmp_path / "model"
    existing.write_text("not a model folder\n", encoding="utf-8")
    line = refused(capsys, "train", TRAIN, DEV, "--output", existing, "--epochs", "50", "--quiet", "--json")
    assert "[E627]" in line and str(existing) in line and "is a file" in line
    assert existing.read_text(encoding="utf-8") == "not a model folder\n"
    # a file where a parent folder should be
    line = refused(capsys, "train", TRAIN, DEV, "--output", existing / "sub", "--epochs", "0", "--quiet")
    assert "[E625]" in line and str(existing) in line
    line = refused(capsys, "demo", "--train", "--output", existing, "--epochs", "0")
    assert "[E627]" in line and str(existing) in line


def test_operating_system_errors_name_the_path(tmp_path, capsys, monkeypatch):
    """Permission denied (or any other OSError with a file name) while a command works: one
    line with the path and the reason, exit status 1.  (Tests run as root here, so a read-only
    folder would not refuse anything: the writer is made to fail as the OS would.)"""
    import spacy_punctgen.cli.convert as convert_cmd

    target = tmp_path / "locked" / "out.conllu"

    def denied(src, dest, **kwargs):
        raise PermissionError(13, "Permission denied", str(dest))

    monkeypatch.setattr(convert_cmd, "convert_file", denied)
    line = refused(capsys, "convert", TEST, target, "--json")
    assert line == f"punctgen convert: error: [E625] {target}: permission denied"

    def exists(src, dest, **kwargs):
        raise FileExistsError(17, "File exists", str(dest))

    monkeypatch.setattr(convert_cmd, "convert_file", exists)
    assert refused(capsys, "convert", TEST, target).endswith(f"[E625] {target}: already exists")


# ------------------------------------------------------- item 11: nothing to score
@pytest.mark.parametrize("content", ["", ALL_PUNCT], ids=["empty", "all-punctuation"])
def test_nothing_to_score_is_an_error_not_a_perfect_score(tmp_path, capsys, content):
    test = tmp_path / "nothing-ud-test.conllu"
    test.write_text(content, encoding="utf-8")
    n = content.count("# sent_id")
    for argv in (["evaluate", MODEL, test],
                 ["evaluate-restore", MODEL, test],
                 ["baseline", "trivial", "--train", TRAIN, "--test", test]):
        line = refused(capsys, *argv, "--json")
        assert "[E551]" in line and str(test) in line and f"{n} sentences read" in line, line
    # a dev file without sentences: refused before training, not an arbitrary direction
    line = refused(capsys, "train", TRAIN, test, "--output", tmp_path / "m", "--epochs", "1", "--quiet")
    assert "[E551]" in line and str(test) in line
    assert not (tmp_path / "m").exists()


def test_train_model_refuses_to_choose_a_direction_without_dev():
    from spacy_punctgen.training.train import TrainConfig, train_model

    train, _ = preprocess_file(TRAIN)
    with pytest.raises(ValueError, match="E563"):
        train_model(train[:20], [], TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=0, direction="auto", progress=False))


def test_undefined_figures_are_json_null(tmp_path, capsys):
    """Without smoothing, a sentence with an unseen mark is impossible; the perplexity over
    the possible sentences is then undefined: null, not NaN (which is not JSON)."""
    model = tmp_path / "m0"
    code, out, err = run(capsys, "train", TRAIN, DEV, "-o", model, "--epochs", "0", "--smooth-delta", "0",
                         "--direction", "r2l", "--quiet", "--json")
    assert code == 0, err
    strict_json((model / "training.json").read_text(encoding="utf-8"))
    weird = tmp_path / "weird.conllu"
    weird.write_text("# sent_id = q1\n# text = Go \u203d now\n"
                     "1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n"
                     "2\t\u203d\t\u203d\tPUNCT\t.\t_\t1\tpunct\t_\t_\n"
                     "3\tnow\tnow\tADV\tRB\t_\t1\tadvmod\t_\t_\n\n", encoding="utf-8")
    code, out, err = run(capsys, "evaluate", model, weird, "--json")
    assert code == 0, err
    res = strict_json(out[-1])
    assert res["n_impossible"] == 1 and res["perplexity_per_slot_possible"] is None
    assert res["perplexity_per_slot"] > 1


# ------------------------------------------------------------ item 12: numbers
@pytest.mark.parametrize("argv,flag", [
    (["evaluate-restore", MODEL, TEST, "--limit", "-1"], "--limit"),
    (["evaluate-restore", MODEL, TEST, "--n-samples", "0"], "--n-samples"),
    (["evaluate-restore", MODEL, TEST, "--seed", "-1"], "--seed"),
    (["evaluate-restore", MODEL, TEST, "--limit", "two"], "--limit"),
    (["restore", "in.txt", "--parser", "p", "--model", MODEL, "--n-samples", "-5"], "--n-samples"),
    (["restore", "in.txt", "--parser", "p", "--model", MODEL, "--max-length", "0"], "--max-length"),
    (["train", TRAIN, DEV, "-o", "m", "--batch-size", "0"], "--batch-size"),
    (["train", TRAIN, DEV, "-o", "m", "--epochs", "-3"], "--epochs"),
    (["train", TRAIN, DEV, "-o", "m", "--lr", "nan"], "--lr"),
    (["train", TRAIN, DEV, "-o", "m", "--seed", str(2 ** 32)], "--seed"),
    (["train", TRAIN, DEV, "-o", "m", "--smooth-delta", "1"], "--smooth-delta"),
    (["convert", TEST, "out.conllu", "--seed", "-2"], "--seed"),
    (["bench", "--repeats", "0"], "--repeats"),
    (["demo", "--show", "-1"], "--show"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_numbers_are_usage_errors(capsys, argv, flag):
    line = refused(capsys, *argv, status=2)
    assert line.startswith(f"punctgen {argv[0]}: error: argument {flag}: [E6"), line


def test_limit_zero_is_every_sentence_and_a_limit_is_honoured(capsys):
    code, out, _ = run(capsys, "evaluate-restore", MODEL, TEST, "--limit", "3", "--n-samples", "20", "--json")
    assert code == 0 and strict_json(out[-1])["n_sentences"] == 3


def test_evaluate_restore_refuses_a_negative_limit_in_the_library_too():
    from spacy_punctgen.evaluation.restoration import evaluate_restore
    from spacy_punctgen.model.punct_model import PunctModel

    with pytest.raises(ValueError, match="E553"):
        evaluate_restore(PunctModel.from_disk(MODEL), TEST, limit=-1, n_samples=10)


# --------------------------------------------------------- item 13: byte-order mark
def test_restore_keeps_a_byte_order_mark_where_it_was(tmp_path, capsys, parser_dir):
    src = tmp_path / "bom.txt"
    src.write_bytes("\ufeffwhen I came he left\nshe stayed\n".encode("utf-8"))
    code, out, err = run(capsys, "restore", src, "--parser", parser_dir, "--model", MODEL, "--n-samples", "50",
                         "--json")
    assert code == 0, err
    texts = strict_json(out[-1])["texts"]
    assert len(texts) == 2 and not any("\ufeff" in t for t in texts)
    written = tmp_path / "out.txt"
    code, _, err = run(capsys, "restore", src, "--parser", parser_dir, "--model", MODEL, "--n-samples", "50",
                       "-o", written)
    assert code == 0, err
    got = written.read_bytes().decode("utf-8")
    assert got.startswith("\ufeffwhen") and got.count("\ufeff") == 1 and got.endswith("\n")
    assert texts[0].startswith("when") or texts[0][1:].startswith("when"), texts  # maybe an opening mark


def test_restore_drops_a_byte_order_mark_on_stdin(parser_dir):
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "restore", "--parser", str(parser_dir),
                           "--model", str(MODEL), "--n-samples", "20", "--json"],
                          input="\ufeffhe left\n".encode("utf-8"), env=package_env(), capture_output=True,
                          timeout=300, cwd=parser_dir.parent)
    assert proc.returncode == 0, proc.stderr.decode()
    texts = strict_json(proc.stdout.decode("utf-8").strip().splitlines()[-1])["texts"]
    assert "\ufeff" not in texts[0] and "he" in texts[0]


def test_predictions_files_with_a_byte_order_mark_are_read(tmp_path):
    from spacy_punctgen.evaluation.predictions import read_predictions

    path = tmp_path / "pred.jsonl"
    path.write_bytes('\ufeff{"sent_id": "a", "slots": [[], ["."]]}\n'.encode("utf-8"))
    assert read_predictions(path)[0]["slots"] == [(), (".",)]


# ------------------------------------------------- item 14: bench outside the repo
def test_bench_quick_outside_the_repository_says_what_to_do(tmp_path):
    """From a folder without assets/sample (as an installed package is run): a one-line
    message naming --data and the repository root, exit status 1, no traceback.  (Fixed by
    commit c56fad4; the package ships no copy of the sample: setup.cfg's package_data holds
    the model, not assets/.)"""
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "bench", "--quick", "--sections", "dp"],
                          cwd=tmp_path, env=package_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "[E605]" in proc.stderr and "--data" in proc.stderr and "repository root" in proc.stderr
    assert str(tmp_path) in proc.stderr


# ------------------------------------------------------- item 16: very long lines
def test_a_line_longer_than_the_parser_takes_is_refused_before_parsing(tmp_path, capsys, parser_dir):
    src = tmp_path / "long.txt"
    words = ("word " * 220_000).strip()  # 1.1 million characters on one line (spaCy's limit: 1,000,000)
    src.write_text("a short line\n" + words + "\n", encoding="utf-8")
    line = refused(capsys, "restore", src, "--parser", parser_dir, "--model", MODEL, "--json")
    assert "[E631]" in line and f"{src}, line 2: {len(words)} characters" in line, line
    assert "Split the input" in line and "--max-length" in line and "E088" not in line
    # the limit is the user's to set, both ways
    short = tmp_path / "short.txt"
    short.write_text("when I came he left and she stayed\n", encoding="utf-8")
    line = refused(capsys, "restore", short, "--parser", parser_dir, "--model", MODEL, "--max-length", "20")
    assert "[E631]" in line and "line 1: 34 characters" in line and "(20," in line
    code, out, err = run(capsys, "restore", short, "--parser", parser_dir, "--model", MODEL,
                         "--max-length", "40", "--n-samples", "20", "--json")
    assert code == 0, err

