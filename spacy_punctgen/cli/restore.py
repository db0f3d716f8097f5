"""``punctgen restore``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.pipeline.restore`."""
from __future__ import annotations
import argparse
import sys
import time
from pathlib import Path
from typing import List
from spacy_punctgen.decode.mbr import METHODS

from spacy_punctgen.cli import command
from spacy_punctgen.pipeline.restore import restore_docs
from spacy_punctgen.errors import Errors


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", default="-", help="text file, one sentence or paragraph per line "
                                                          "(default: stdin)")
    p.add_argument("--parser", required=True,
                   help="spaCy pipeline (path or package name) with a UD parser trained on depunctuated text")
    p.add_argument("--model", required=True, help="punctuation model directory written by `train`")
    p.add_argument("--method", choices=METHODS, default="slot")
    p.add_argument("--n-samples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", "-o", default=None, help="write the punctuated lines here (default: stdout)")


def _read_lines(src: str) -> List[str]:
    if src == "-":
        return sys.stdin.read().splitlines()
    path = Path(src)
    if not path.is_file():
        raise FileNotFoundError(Errors.E618.format(path=path))
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise ValueError(Errors.E619.format(path=path, err=err)) from None


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

    model = PunctModel.from_disk(args.model)
    nlp = _load_parser(args.parser)
    lines = _read_lines(args.input)
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
