"""Jackknife folds of a CoNLL-U file, and the merge of their parses back into one file.

Usage (project.yml workflow ``jackknife``):
    python scripts/folds.py split corpus/T/depunct/train.conllu corpus/T/depunct/folds --k 2
    python scripts/folds.py merge corpus/T/depunct/train.conllu corpus/T/depunct/folds corpus/T/depunct/train.parsed.conllu --k 2

Why: a punctuation model trained on gold trees meets a parser's trees at restoration time,
with the parser's errors. Training it on *parsed* training trees (with the gold punctuation)
lets it learn how far to trust them; the standard way to get honest parses of the training
data is jackknifing, as in stacked parsing: sentence ``i`` goes to fold ``i mod k``; the
parser for fold ``j`` is trained on every other fold and parses fold ``j``, so no sentence is
parsed by a model that saw it. ``split`` writes, for each fold ``j``, ``train.fold<j>.conllu``
(all sentences not in fold ``j``: the parser's training data) and ``heldout.fold<j>.conllu``
(fold ``j``); ``merge`` reads ``heldout.fold<j>.parsed.conllu`` and writes the parsed
sentences back in the input's order, checking that every sentence's words are unchanged
(both in ``spacy_punctgen.workflow.jackknife``, which ``scripts/jackknife.py`` uses too).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spacy_punctgen.workflow.jackknife import merge, split


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split", help="write the k folds")
    s.add_argument("input", type=Path)
    s.add_argument("folder", type=Path)
    s.add_argument("--k", type=int, default=2)
    m = sub.add_parser("merge", help="merge the parsed held-out folds back into the input's order")
    m.add_argument("input", type=Path)
    m.add_argument("folder", type=Path)
    m.add_argument("output", type=Path)
    m.add_argument("--k", type=int, default=2)
    args = p.parse_args(argv)
    try:
        if args.cmd == "split":
            result = split(args.input, args.folder, args.k)
        else:
            result = merge(args.input, args.folder, args.output, args.k)
    except (ValueError, OSError) as e:
        print(f"folds: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
