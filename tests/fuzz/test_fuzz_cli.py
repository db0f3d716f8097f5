"""Fuzzing the command line: random input files (empty, a byte-order mark, binary, random text,
long lines, CoNLL-U with random damage) and random flag values and paths (missing, a folder for
a file, a file for a folder, a path under a file) for ``restore``, ``evaluate``,
``evaluate-restore``, ``convert`` and ``stats``, through ``spacy_punctgen.cli.main`` and, a few,
through ``python -m spacy_punctgen``.

Property: exit status 0 (strict JSON with ``--json``; ``restore`` keeps every character of every
input line, in order, and the number of lines), 1 with our message ``punctgen CMD: error:
[Ennn] ...`` on stderr (a code of :class:`Errors`), or 2 with argparse's usage message; never a
traceback.  An input without any sentence is never scored as a success.
"""
import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz_strategies import (
    COUNTS,
    ODD_WORDS,
    PUNCT_SEEN,
    PUNCT_UNSEEN,
    RUNS,
    SEEN_WORDS,
    guarded,
    run_property,
    run_settings,
    tried,
)
from hypothesis import given
from hypothesis import strategies as st

from spacy_punctgen.cli import main
from spacy_punctgen.errors import Errors

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
BOM = "\ufeff".encode("utf-8")


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="session")
def parser_dir(tiny_parser):
    """A tiny parser of depunctuated text (one pass over 40 of the sample's depunctuated trees):
    its trees are poor, which is what a fuzz test wants."""
    return tiny_parser(40, 1)


def _sample_blocks():
    text = (SAMPLE / "en_sample-ud-test.conllu").read_text(encoding="utf-8")
    return [b for b in text.split("\n\n") if b.strip()][:40]


BLOCKS = _sample_blocks()


# ------------------------------------------------------------------ random files
text_lines = st.lists(st.one_of(
    st.lists(st.sampled_from(SEEN_WORDS + ODD_WORDS + PUNCT_SEEN + PUNCT_UNSEEN), max_size=25).map(" ".join),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40),
    st.just(""), st.just("   "), st.just("U.S. Mr. Smith left etc."),
), max_size=6).map("\n".join)


@st.composite
def text_files(draw, long_words=300):
    """Bytes of a text file: empty, binary, random text, word lines, a long line; BOM or not."""
    kind = draw(st.sampled_from(["empty", "binary", "text", "text", "text", "long", "crlf"]))
    if kind == "empty":
        data = draw(st.sampled_from([b"", b"\n", b"  \n\n", b"\t"]))
    elif kind == "binary":
        data = draw(st.binary(max_size=120))
    elif kind == "long":
        data = " ".join(draw(st.sampled_from(SEEN_WORDS)) for _ in range(draw(st.integers(50, long_words)))).encode()
    else:
        data = draw(text_lines).encode("utf-8")
        if kind == "crlf":
            data = data.replace(b"\n", b"\r\n")
    if draw(st.integers(0, 4)) == 0:
        data = BOM + data
    return data


@st.composite
def conllu_files(draw):
    """Bytes of a CoNLL-U file: sample sentences, each perhaps damaged (a line dropped or
    duplicated, a column changed, tabs lost, a multiword range or an empty node added), or only
    punctuation; or any text file."""
    if draw(st.integers(0, 5)) == 0:
        return draw(text_files())
    blocks = []
    for _ in range(draw(st.integers(0, 4))):
        lines = draw(st.sampled_from(BLOCKS)).split("\n")
        if draw(st.integers(0, 6)) == 0:  # only punctuation
            lines = ["1\t.\t.\tPUNCT\t.\t_\t0\troot\t_\t_", "2\t,\t,\tPUNCT\t,\t_\t1\tpunct\t_\t_"]
        for _ in range(draw(st.integers(0, 2))):
            i = draw(st.integers(0, len(lines) - 1))
            op = draw(st.sampled_from(["drop", "dup", "column", "tabs", "mwt", "empty_node", "blank"]))
            if op == "drop":
                del lines[i]
            elif op == "dup":
                lines.insert(i, lines[i])
            elif op == "column":
                cols = lines[i].split("\t")
                j = draw(st.integers(0, max(0, len(cols) - 1)))
                cols[j] = draw(st.sampled_from(["", "_", "0", "-1", "99", "x", "1-2", "punct", "PUNCT", "root",
                                                 "1.1", "3:obj", "\u00a0", "‽"]))
                lines[i] = "\t".join(cols)
            elif op == "tabs":
                lines[i] = lines[i].replace("\t", " ")
            elif op == "mwt":
                lines.insert(i, "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_")
            elif op == "empty_node":
                lines.insert(i, "1.1\tgone\tgo\tVERB\t_\t_\t_\t_\t0:root\t_")
            else:
                lines.insert(i, "")
            if not lines:
                lines = [""]
        blocks.append("\n".join(lines))
    data = ("\n\n".join(blocks) + ("\n\n" if blocks else "")).encode("utf-8")
    if draw(st.integers(0, 5)) == 0:
        data = BOM + data
    return data


flag_values = st.one_of(st.integers(1, 30).map(str), st.integers(1, 30).map(str), st.integers(1, 30).map(str),
                        st.integers(-3, 40).map(str),
                        st.sampled_from(["0", "-1", "1e3", "nan", "inf", "-inf", "", "abc", "1.5", "0.5", "4294967296",
                                         "100001", "0x10", " 3", "٣", "1_000", "--json"]))
fractions = st.one_of(st.floats(-1, 2).map(repr), st.sampled_from(["0", "1", "nan", "inf", "x", "1e-9"]))
methods = st.sampled_from(["slot"] * 4 + ["sample"] * 2 + ["marginal"] * 2 + ["exact", "mbr", ""])
output_kinds = st.sampled_from(["new", "nested", "dir", "file", "under_file", "stdout"])


def _output(tmp: Path, kind: str) -> str:
    if kind == "new":
        return str(tmp / "out.txt")
    if kind == "nested":
        return str(tmp / "a" / "b" / "out.txt")
    if kind == "dir":
        (tmp / "adir").mkdir(exist_ok=True)
        return str(tmp / "adir")
    if kind == "file":
        (tmp / "afile").write_text("x", encoding="utf-8")
        return str(tmp / "afile")
    if kind == "under_file":
        (tmp / "afile").write_text("x", encoding="utf-8")
        return str(tmp / "afile" / "out.txt")
    return "-"


def _input(tmp: Path, kind: str, data: bytes, name: str = "in.conllu") -> str:
    if kind == "missing":
        return str(tmp / "missing.conllu")
    if kind == "dir":  # a folder, perhaps a UD-like one holding the file
        (tmp / "ud").mkdir(exist_ok=True)
        (tmp / "ud" / "xx_fuzz-ud-test.conllu").write_bytes(data)
        return str(tmp / "ud")
    path = tmp / name
    path.write_bytes(data)
    return str(path)


input_kinds = st.sampled_from(["file", "file", "file", "file", "missing", "dir"])


@st.composite
def cli_calls(draw, shipped, parser, restore_words=300):
    """``(argv builder, input bytes)``: the argv is built in the example's own folder."""
    cmd = draw(st.sampled_from(["restore", "restore", "evaluate", "evaluate-restore", "convert", "stats"]))
    as_json = draw(st.booleans())
    flags = []
    if cmd == "restore":
        data = draw(text_files(long_words=restore_words))
        in_kind = draw(input_kinds)
        if draw(st.booleans()):
            flags += ["--method", draw(methods)]
        if draw(st.booleans()):
            flags += ["--n-samples", draw(flag_values)]
        if draw(st.booleans()):
            flags += ["--seed", draw(flag_values)]
        if draw(st.integers(0, 3)) == 0:
            flags += ["--max-length", draw(flag_values)]
        out = draw(output_kinds) if draw(st.booleans()) else None
        model_kind = draw(st.sampled_from(["shipped"] * 5 + ["missing", "input"]))

        def argv(tmp):
            inp = _input(tmp, in_kind, data, "in.txt")
            model = str(shipped) if model_kind == "shipped" else (inp if model_kind == "input" else str(tmp / "nomodel"))
            return (["restore", inp, "--parser", str(parser), "--model", model] + flags
                    + (["-o", _output(tmp, out)] if out else []))
    else:
        data = draw(conllu_files())
        in_kind = draw(input_kinds)
        if cmd == "stats":
            markdown = draw(st.booleans())
            extra = draw(st.sampled_from([[], ["missing"], ["self"]]))

            def argv(tmp):
                inp = _input(tmp, in_kind, data)
                more = [str(tmp / "missing2")] if extra == ["missing"] else ([inp] if extra else [])
                return ["stats", inp] + more + (["--markdown"] if markdown else [])
        elif cmd == "convert":
            if draw(st.booleans()):
                flags += ["--depunct"]
            for flag, values in (("--split", st.sampled_from(["train", "dev", "test", "x"])),
                                 ("--fraction", fractions), ("--seed", flag_values),
                                 ("--protocol", st.sampled_from(["standard", "dev-as-train", "cv", "x"])),
                                 ("--heldout", fractions), ("--cv-folds", flag_values), ("--cv-fold", flag_values)):
                if draw(st.integers(0, 3)) == 0:
                    flags += [flag, draw(values)]
            if draw(st.booleans()):
                flags += ["--no-slots-comment"]
            out = draw(output_kinds.filter(lambda k: k != "stdout"))

            def argv(tmp):
                return ["convert", _input(tmp, in_kind, data), _output(tmp, out)] + flags
        else:
            model_kind = draw(st.sampled_from(["shipped"] * 5 + ["missing", "input"]))
            if cmd == "evaluate-restore":
                for flag, values in (("--limit", flag_values), ("--n-samples", flag_values), ("--seed", flag_values),
                                     ("--method", methods)):
                    if draw(st.integers(0, 2)) == 0:
                        flags += [flag, draw(values)]
                pred = draw(output_kinds.filter(lambda k: k != "stdout")) if draw(st.booleans()) else None
                parsed = draw(st.sampled_from([None, None, "input", "missing", "pattern"]))
            else:
                pred = parsed = None

            def argv(tmp):
                inp = _input(tmp, in_kind, data)
                model = str(shipped) if model_kind == "shipped" else (inp if model_kind == "input" else str(tmp / "nomodel"))
                extra = list(flags)
                if pred:
                    extra += ["--predictions", _output(tmp, pred)]
                if parsed:
                    extra += ["--parsed", inp if parsed == "input" else str(tmp / ("*.nothing" if parsed == "pattern"
                                                                                   else "missing.conllu"))]
                return [cmd, model, inp] + extra
    return (lambda tmp: argv(tmp) + (["--json"] if as_json else [])), data, cmd


# ------------------------------------------------------------------ the property
_CODE = re.compile(r"\[(E\d{3})\]")


def _strict_json(line: str):
    def bad(const):
        raise AssertionError(f"non-strict JSON constant {const} in {line[:200]!r}")

    return json.loads(line, parse_constant=bad)


def run_main(argv):
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except BaseException as exc:
        raise AssertionError(f"{argv}: {type(exc).__name__} escaped main: {exc}") from exc
    return rc, out.getvalue(), err.getvalue()


def check_outcome(argv, rc, out, err):
    assert "Traceback" not in err, f"{argv}: traceback on stderr:\n{err[-2000:]}"
    assert rc in (0, 1, 2), f"{argv}: exit status {rc!r}\n{err[-1000:]}"
    if rc == 1:
        codes = _CODE.findall(err)
        assert codes and hasattr(Errors, codes[0]), f"{argv}: exit 1 without our message: {err[-1000:]!r}"
        assert f"punctgen {argv[0]}: error: [" in err, err[-1000:]
    elif rc == 2:
        assert "usage:" in err, f"{argv}: exit 2 without a usage message: {err[-1000:]!r}"
    if "--json" in argv and rc in (0, 1) and out.strip():
        last = _strict_json(out.strip().splitlines()[-1])
        assert isinstance(last, dict) and (rc == 0 or "error" in last), last


def _visible(s: str) -> str:
    return "".join(ch for ch in s if not ch.isspace())


def check_restore_output(argv, rc, out, data: bytes):
    """A successful ``restore`` to stdout with ``--json``: one output line per input line, each
    keeping the input line's characters in order (punctuation only added)."""
    if rc != 0 or argv[0] != "restore" or "--json" not in argv or "-o" in argv:
        return
    texts = _strict_json(out.strip().splitlines()[-1])["texts"]
    lines = data.decode("utf-8-sig").splitlines()
    assert len(texts) == len(lines), (len(texts), len(lines))
    for line, got in zip(lines, texts):
        it = iter(_visible(got))
        missing = [ch for ch in _visible(line) if ch not in it]
        assert not missing, f"restore lost {missing[:5]!r} of {line!r}: {got!r}"


def check_no_empty_success(argv, rc, data: bytes, cmd: str):
    if cmd in ("evaluate", "evaluate-restore") and not data.decode("utf-8", "replace").strip("\ufeff \t\r\n"):
        assert rc != 0, f"{argv}: an empty test file scored as a success"


@pytest.mark.parametrize("run", RUNS)
def test_random_cli_calls(request, shipped_dir, parser_dir, tmp_path_factory, run):
    @run_settings(run, 16, 3000)
    @given(call=cli_calls(shipped_dir, parser_dir, restore_words=300 if run == "default" else 3000))
    @guarded
    def prop(call):
        build, data, cmd = call
        if not tried(f"cli.main[{cmd}]"):
            return
        tmp = tmp_path_factory.mktemp("cli")
        argv = build(tmp)
        rc, out, err = run_main(argv)
        COUNTS[f"  cli {cmd} exit {rc}"] += 1
        check_outcome(argv, rc, out, err)
        check_restore_output(argv, rc, out, data)
        check_no_empty_success(argv, rc, data, cmd)

    run_property(request.node.name, prop)


@pytest.mark.parametrize("run", RUNS)
def test_random_cli_calls_in_a_subprocess(request, shipped_dir, parser_dir, tmp_path_factory, run):
    """The real entry point (``python -m spacy_punctgen``): what reaches the terminal."""
    from spacy_punctgen.testing.env import package_env

    @run_settings(run, 2, 150)
    @given(call=cli_calls(shipped_dir, parser_dir, restore_words=100))
    @guarded
    def prop(call):
        build, data, cmd = call
        if not tried(f"cli.subprocess[{cmd}]"):
            return
        tmp = tmp_path_factory.mktemp("cli")
        argv = build(tmp)
        proc = subprocess.run([sys.executable, "-m", "spacy_punctgen"] + argv, capture_output=True, text=True,
                              encoding="utf-8", errors="replace", env=package_env(), cwd=str(tmp), timeout=600)
        check_outcome(argv, proc.returncode, proc.stdout, proc.stderr)
        check_restore_output(argv, proc.returncode, proc.stdout, data)
        check_no_empty_success(argv, proc.returncode, data, cmd)

    run_property(request.node.name, prop)


# ------------------------------------------------------------------ the property can fail
def test_a_traceback_or_a_bare_exit_is_caught(monkeypatch, tmp_path):
    from spacy_punctgen import cli

    src = tmp_path / "in.conllu"
    src.write_text(BLOCKS[0] + "\n\n", encoding="utf-8")
    rc, out, err = run_main(["stats", str(src)])
    check_outcome(["stats", str(src)], rc, out, err)
    assert rc == 0
    cli._load_commands()

    def boom(args):
        raise IsADirectoryError(21, "Is a directory")  # an OSError without a path: no [E...] code

    monkeypatch.setitem(cli._REGISTRY["stats"], "func", boom)
    rc, out, err = run_main(["stats", str(src)])
    with pytest.raises(AssertionError, match="without our message"):
        check_outcome(["stats", str(src)], rc, out, err)

    def type_error(args):
        raise TypeError("unsupported operand")

    monkeypatch.setitem(cli._REGISTRY["stats"], "func", type_error)
    with pytest.raises(AssertionError, match="escaped main"):
        run_main(["stats", str(src)])


def test_a_lost_character_and_nan_json_are_caught():
    argv = ["restore", "in.txt", "--json"]
    with pytest.raises(AssertionError, match="lost"):
        check_restore_output(argv, 0, json.dumps({"texts": ["Mr Smith left."]}), b"Mr. Smith left")
    with pytest.raises(AssertionError, match="non-strict"):
        check_outcome(["evaluate", "m", "t", "--json"], 0, '{"perplexity_per_slot": NaN}', "")
    with pytest.raises(AssertionError, match="success"):
        check_no_empty_success(["evaluate", "m", "t"], 0, b"\xef\xbb\xbf\n", "evaluate")
