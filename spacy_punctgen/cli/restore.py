"""``punctgen restore``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.pipeline.restore`.

The input is read as UTF-8 (a byte-order mark is dropped, from a file or stdin).  Each line is
parsed as one text, so a line longer than the parser's ``nlp.max_length`` (spaCy's default:
1,000,000 characters) is refused before anything is parsed (E631), with what to do instead:
split the text into lines, or raise the limit with ``--max-length``.
"""
from __future__ import annotations
import argparse
import sys
import time
from pathlib import Path
from typing import List
from spacy_punctgen.decode.mbr import METHODS

from spacy_punctgen.cli import check_output_file, command, positive_int, seed_int
from spacy_punctgen.pipeline.restore import restore_docs
from spacy_punctgen.errors import Errors


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", default="-", help="text file, one sentence or paragraph per line "
                                                          "(default: stdin)")
    p.add_argument("--parser", required=True,
                   help="spaCy pipeline (path or package name) with a UD parser trained on depunctuated text")
    p.add_argument("--model", required=True, help="punctuation model directory written by `train`")
    p.add_argument("--method", choices=METHODS, default="marginal")
    p.add_argument("--n-samples", type=positive_int, default=1000)
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--output", "-o", default=None, help="write the punctuated lines here (default: stdout)")
    p.add_argument("--max-length", type=positive_int, default=None,
                   help="longest line in characters (sets the parser's nlp.max_length; default: the "
                        "pipeline's, 1,000,000 for spaCy's defaults). Parsing and restoring one long line "
                        "is slow and memory-hungry (a million characters: minutes and several GB); "
                        "splitting the text into sentences or paragraphs, one per line, is better")


def _read_lines(src: str) -> List[str]:
    if src == "-":
        return sys.stdin.read().removeprefix("\ufeff").splitlines()
    path = Path(src)
    if path.is_dir():
        raise IsADirectoryError(Errors.E626.format(flag="input", path=path))
    if not path.is_file():
        raise FileNotFoundError(Errors.E618.format(path=path))
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as err:
        raise ValueError(Errors.E619.format(path=path, err=err)) from None


def _check_lengths(lines: List[str], limit: int, src: str) -> None:
    """Refuse, before parsing, a line longer than the parser takes (spaCy's E088 otherwise)."""
    for k, line in enumerate(lines, 1):
        n = len(line.strip())
        if n > limit:
            raise ValueError(Errors.E631.format(path="<stdin>" if src == "-" else src, line=k, n=n,
                                                limit=limit))


def _load_parser(name: str):
    import spacy

    try:
        nlp = spacy.load(name)
    except OSError as err:
        raise ValueError(Errors.E620.format(name=name, err=err)) from None
    if "parser" not in nlp.pipe_names and not any(getattr(p, "name", "") == "parser" for _, p in nlp.pipeline):
        raise ValueError(Errors.E621.format(name=name, pipes=nlp.pipe_names))
    return nlp


@command("restore", "Punctuate unpunctuated text: parse it, then decode punctuation by minimum Bayes risk",
         _arguments)
def restore_cli(args) -> dict:
    from spacy_punctgen.model.punct_model import PunctModel

    check_output_file(args.output, "--output")
    model = PunctModel.from_disk(args.model)
    nlp = _load_parser(args.parser)
    if args.max_length is not None:
        nlp.max_length = args.max_length
    lines = _read_lines(args.input)
    _check_lengths(lines, nlp.max_length, args.input)
    t0 = time.perf_counter()
    idx = [i for i, line in enumerate(lines) if line.strip()]
    docs = list(nlp.pipe([lines[i].strip() for i in idx]))
    restored = restore_docs(model, docs, args.method, args.n_samples, args.seed)
    texts = list(lines)  # blank lines stay blank
    n_sent = 0
    for i, (text, chs) in zip(idx, restored):
        texts[i] = text.rstrip()
        n_sent += len(chs)
    seconds = time.perf_counter() - t0
    result = {"lines": len(lines), "sentences": n_sent, "method": args.method,
              "n_samples": args.n_samples if args.method != "exact" else None,
              "seconds": round(seconds, 3)}
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        result["output"] = str(out)
        result["_text"] = f"wrote {len(texts)} lines ({n_sent} sentences) to {out}"
    else:
        result["texts"] = texts
        result["_text"] = "\n".join(texts)
    return result
