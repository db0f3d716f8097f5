"""``punctgen stats``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.evaluation.stats`."""
from __future__ import annotations
import argparse
from typing import Dict

from spacy_punctgen.cli import command
from spacy_punctgen.evaluation.stats import compute, markdown_table, plain_table


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="CoNLL-U files or folders of them")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")


@command("stats", "Treebank statistics after preprocessing (paper Table 2)", _arguments)
def stats_command(args: argparse.Namespace) -> Dict[str, object]:
    result = compute(args.paths)
    text = markdown_table(result) if args.markdown else plain_table(result)
    return {**result, "_text": text}
