"""Command-line entry: ``python -m spacy_punctgen COMMAND`` and the ``punctgen`` script.

Each subcommand lives in its own module and registers itself here with
:func:`command`.  A command function returns a JSON-serialisable dict; with
``--json`` the CLI prints that dict as one JSON object on the last line of
stdout, otherwise a readable summary.

Exit status and errors, the same for every command:

* 0: the command did its work.
* 1: the command refused its input: a missing, unreadable or misplaced path (a directory
  given for a file or the reverse, an output that exists as a file where a folder is
  written, permission denied), a file with nothing to evaluate (empty, or only
  punctuation), a malformed file.  One line ``punctgen COMMAND: error: [Ennn] ...`` on
  stderr names the path (with ``--json`` also ``{"error": ...}`` on stdout); no traceback.
  Output paths are checked before the work starts, so a long run does not fail at the end.
* 2: a bad command line (an unknown flag, a missing argument, a number out of range such as
  ``--limit -1``): argparse's usage message.

The JSON is strict (``allow_nan=False``): a figure that is undefined for the input, e.g.
the perplexity over the possible sentences when no sentence is possible, is ``null``.
Text is read as UTF-8 with an optional byte-order mark (``utf-8-sig``).
"""
from __future__ import annotations

import argparse
import errno
import importlib
import json
import logging
import math
import os
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

from spacy_punctgen.errors import Errors

# Modules whose import registers subcommands (kept lazy so `--help` is fast).
_COMMAND_MODULES = [
    "spacy_punctgen.cli.stats",
    "spacy_punctgen.cli.correct",
    "spacy_punctgen.cli.convert",
    "spacy_punctgen.cli.train",
    "spacy_punctgen.cli.evaluate",
    "spacy_punctgen.cli.restore",
    "spacy_punctgen.cli.evaluate_restore",
    "spacy_punctgen.cli.evaluate_stream",
    "spacy_punctgen.cli.baseline",
    "spacy_punctgen.cli.bench",
    "spacy_punctgen.cli.demo",
    "spacy_punctgen.cli.render",
    "spacy_punctgen.cli.learned",
    "spacy_punctgen.cli.adapt",
]

_REGISTRY: Dict[str, dict] = {}
#: The library's progress messages (training epochs, the benchmark's steps) go to this child of
#: spaCy's logger; a command shows them (on stderr) by setting its level to INFO.
PROGRESS_LOGGER = "spacy.punctgen"


def command(name: str, help: str, arguments: Callable[[argparse.ArgumentParser], None]):
    """Register ``func(args) -> dict`` as subcommand ``name``."""

    def decorator(func):
        _REGISTRY[name] = {"func": func, "help": help, "arguments": arguments}
        return func

    return decorator


def _load_commands() -> None:
    for mod in _COMMAND_MODULES:
        importlib.import_module(mod)


def _print_human(result: dict) -> None:
    if "_raw" in result:  # the command's output exactly (restore: one line per input line, none for none)
        sys.stdout.write(result["_raw"])
        return
    text = result.get("_text")
    if text:
        print(text)
    else:
        for key, value in result.items():
            if not key.startswith("_"):
                print(f"{key}: {value}")


def emit_lines(result: dict, texts: List[str], output: Optional[str], done: str) -> dict:
    """A command's output lines: written to ``output`` (``done`` says what, in the summary), or
    printed exactly, one per line (none for none), into ``result``."""
    if output:
        out = Path(output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        result["output"] = str(out)
        result["_text"] = f"wrote {done} to {out}"
    else:
        result["texts"] = texts
        result["_raw"] = "".join(t + "\n" for t in texts)
    return result


def emit_text(result: dict, text: str, output: Optional[str], done: str) -> dict:
    """A command's output text, exactly (no newline added): written to ``output`` (``-``: stdout;
    ``done`` says what, in the summary), or printed, into ``result``."""
    if output and output != "-":
        out = Path(output)
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        result["output"] = str(out)
        result["_text"] = f"wrote {done} to {out}"
    else:
        lines = text.removeprefix("\ufeff").split("\n")
        result["texts"] = lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines  # one per input line
        result["_raw"] = text
    return result


def build_parser() -> argparse.ArgumentParser:
    _load_commands()
    parser = argparse.ArgumentParser(prog="punctgen", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in sorted(_REGISTRY):
        spec = _REGISTRY[name]
        p = sub.add_parser(name, help=spec["help"], description=spec["help"])
        spec["arguments"](p)
        p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    return parser


# ------------------------------------------------------------------ numeric flags
def _number(text: str, kind):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        if kind is int:
            raise argparse.ArgumentTypeError(Errors.E628.format(value=text)) from None
        raise argparse.ArgumentTypeError(Errors.E629.format(value=text)) from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(Errors.E629.format(value=text))
    return value


def bounded(kind, low=None, high=None, low_open: bool = False, high_open: bool = False):
    """An argparse ``type`` for an int or finite float within ``[low, high]`` (an end is left
    out with ``low_open`` / ``high_open``); anything else is a usage error (exit status 2)
    that says the bounds."""
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    bounds = " and ".join(parts) or "a number"

    def parse(text: str):
        value = _number(text, kind)
        if (low is not None and (value <= low if low_open else value < low)) or \
                (high is not None and (value >= high if high_open else value > high)):
            raise argparse.ArgumentTypeError(Errors.E630.format(bounds=bounds, value=value))
        return value

    parse.__name__ = f"{kind.__name__} {bounds}"
    return parse


#: Shared argparse types: counts, limits, sizes and sample counts, random seeds (NumPy takes
#: 0 .. 2**32-1) and finite numbers.
positive_int = bounded(int, 1)
non_negative_int = bounded(int, 0)
seed_int = bounded(int, 0, 2 ** 32 - 1)
positive_float = bounded(float, 0, low_open=True)
non_negative_float = bounded(float, 0)
finite_float = bounded(float)


# ------------------------------------------------------------------ paths
def check_output_file(path: Optional[str], flag: str) -> None:
    """Refuse, before any work, an output file path that is an existing directory."""
    if path is not None and path != "-" and Path(path).is_dir():
        raise IsADirectoryError(Errors.E626.format(flag=flag, path=path))
    _check_parents(path)


def check_output_dir(path: Optional[str], flag: str) -> None:
    """Refuse, before any work, an output folder path that is an existing file."""
    if path is not None and Path(path).exists() and not Path(path).is_dir():
        raise FileExistsError(Errors.E627.format(flag=flag, path=path))
    _check_parents(path)


def _check_parents(path: Optional[str]) -> None:
    if path is None or path == "-":
        return
    for parent in Path(path).absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(Errors.E625.format(path=parent, reason="is a file, not a directory"))
            return


_REASONS = {
    errno.EISDIR: "is a directory, where a file was expected",
    errno.ENOTDIR: "a part of the path is a file, where a directory was expected",
    errno.EEXIST: "already exists",
    errno.ENOTEMPTY: "is a directory that is not empty",
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.ENAMETOOLONG: "file name too long",
}


def error_message(err: BaseException) -> str:
    """One line for a refused input: our own messages as they are, an operating-system error
    as ``[E625] PATH: reason``."""
    if isinstance(err, OSError) and err.errno is not None and err.filename is not None:
        path = err.filename if err.filename2 is None else f"{err.filename} -> {err.filename2}"
        reason = _REASONS.get(err.errno) or err.strerror or os.strerror(err.errno)
        return Errors.E625.format(path=path, reason=reason)
    return str(err)


def _strict(value):
    """``value`` with every non-finite float replaced by None (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value


def to_json(value, **kwargs) -> str:
    """Strict JSON (non-finite numbers become null), UTF-8 kept as it is."""
    return json.dumps(_strict(value), ensure_ascii=False, allow_nan=False, **kwargs)


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # a usage error (2) or --help (0): argparse has printed it
        return stop.code if isinstance(stop.code, int) else 2
    if not args.command:
        parser.print_help()
        return 2
    progress = logging.getLogger(PROGRESS_LOGGER)
    level = progress.level
    progress.setLevel(logging.INFO)
    try:
        result = _REGISTRY[args.command]["func"](args)
    except (ValueError, OSError) as err:
        message = error_message(err)
        if args.json:
            print(to_json({"error": message}))
        print(f"punctgen {args.command}: error: {message}", file=sys.stderr)
        return 1
    finally:
        progress.setLevel(level)
    if args.json:
        print(to_json({k: v for k, v in result.items() if not k.startswith("_")}))
    else:
        _print_human(result)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
