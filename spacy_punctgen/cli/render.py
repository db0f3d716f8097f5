"""``punctgen render``: argument parsing and writing the page; the work is done by
:func:`spacy_punctgen.api.picture.render_source` (docs/render.md)."""
from __future__ import annotations

import argparse
from pathlib import Path

from spacy_punctgen.cli import check_output_file, command, positive_int
from spacy_punctgen.errors import Errors
from spacy_punctgen.api.picture import MODES, render_source


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="a CoNLL-U file (.conllu/.conll: gold trees), a text file (one text per line) "
                                 "or a literal text (parsed by --pipeline, default the shipped one)")
    p.add_argument("--output", "-o", required=True, help="the HTML page to write ('-': stdout)")
    p.add_argument("--model", default=None,
                   help="punctuation model directory written by `train` (default: the pipeline's punctgen, "
                        "else the model shipped for the language)")
    p.add_argument("--pipeline", default=None,
                   help="spaCy pipeline (path or package) with a UD parser, to parse text; with CoNLL-U input "
                        "only its punctgen component is used")
    p.add_argument("--mode", choices=MODES, default="analyze",
                   help="analyze the punctuation that is there, or restore it from the words")
    p.add_argument("--limit", type=positive_int, default=100,
                   help="draw at most this many sentences (CoNLL-U) or texts (default: 100)")
    p.add_argument("--lang", default=None, help="language of the blank pipeline for CoNLL-U input (default: en)")
    p.add_argument("--title", default=None, help="the page's title")


@command("render", "Draw the underlying punctuation (tree, punctemes, channel edits) as an HTML page",
         _arguments)
def render_cli(args) -> dict:
    to_stdout = args.output == "-"
    if to_stdout and args.json:
        raise ValueError(Errors.E661)
    check_output_file(args.output, "--output")
    if Path(args.input).is_dir():
        raise IsADirectoryError(Errors.E626.format(flag="input", path=args.input))
    rendering, summary = render_source(args.input, model=args.model, pipeline=args.pipeline, mode=args.mode,
                                       limit=args.limit, lang=args.lang, title=args.title)
    if not rendering.sentences:
        raise ValueError(Errors.E662.format(input=args.input))
    result = dict(summary)
    if to_stdout:
        result["_text"] = rendering.page.rstrip("\n")
        return result
    out = rendering.save(args.output)
    result["output"] = str(out)
    result["_text"] = (f"wrote {out}: {summary['sentences']} sentence(s), {summary['slots']} slots, "
                       f"{summary['edits']} channel edits drawn")
    return result
