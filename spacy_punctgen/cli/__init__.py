"""Command-line entry: ``python -m spacy_punctgen COMMAND`` and the ``punctgen`` script.

Each subcommand lives in its own module and registers itself here with
:func:`command`.  A command function returns a JSON-serialisable dict; with
``--json`` the CLI prints that dict as one JSON object on the last line of
stdout, otherwise a readable summary.
"""
from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from typing import Callable, Dict, List, Optional

# Modules whose import registers subcommands (kept lazy so `--help` is fast).
_COMMAND_MODULES = [
    "spacy_punctgen.cli.stats",
    "spacy_punctgen.cli.convert",
    "spacy_punctgen.cli.train",
    "spacy_punctgen.cli.evaluate",
    "spacy_punctgen.cli.restore",
    "spacy_punctgen.cli.evaluate_restore",
    "spacy_punctgen.cli.baseline",
    "spacy_punctgen.cli.bench",
    "spacy_punctgen.cli.demo",
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
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as err:  # a module not written yet
            if err.name != mod:
                raise


def _print_human(result: dict) -> None:
    text = result.get("_text")
    if text:
        print(text)
    else:
        for key, value in result.items():
            if not key.startswith("_"):
                print(f"{key}: {value}")


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


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    progress = logging.getLogger(PROGRESS_LOGGER)
    level = progress.level
    progress.setLevel(logging.INFO)
    try:
        result = _REGISTRY[args.command]["func"](args)
    except (ValueError, FileNotFoundError) as err:
        if args.json:
            print(json.dumps({"error": str(err)}, ensure_ascii=False))
        print(f"punctgen {args.command}: error: {err}", file=sys.stderr)
        return 1
    finally:
        progress.setLevel(level)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if not k.startswith("_")}, ensure_ascii=False))
    else:
        _print_human(result)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
