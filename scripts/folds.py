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
sentences back in the input's order, checking that every sentence's words are unchanged.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import conllu

from parse_conllu import write_sentences  # scripts/ is on sys.path when a script runs


def _read(path: Path) -> list:
    with path.open(encoding="utf-8") as f:
        return list(conllu.parse_incr(f))


def _check_k(k: int, n: int, src: Path) -> None:
    if k < 2:
        raise ValueError(f"--k must be at least 2, not {k}")
    if n < k:
        raise ValueError(f"{src}: {n} sentences cannot make {k} folds")


def split(src: Path, folder: Path, k: int) -> dict:
    """Write ``train.fold<j>.conllu`` and ``heldout.fold<j>.conllu`` for ``j`` in 0..k-1."""
    sentences = _read(src)
    _check_k(k, len(sentences), src)
    sizes = []
    for j in range(k):
        write_sentences([s for i, s in enumerate(sentences) if i % k != j], folder / f"train.fold{j}.conllu")
        held = [s for i, s in enumerate(sentences) if i % k == j]
        write_sentences(held, folder / f"heldout.fold{j}.conllu")
        sizes.append(len(held))
    return {"input": str(src), "folder": str(folder), "k": k, "n_sentences": len(sentences), "heldout_sizes": sizes}


def _forms(sentence) -> list:
    return [t["form"] for t in sentence if isinstance(t["id"], int)]


def merge(src: Path, folder: Path, dest: Path, k: int) -> dict:
    """The parsed folds back in ``src``'s order; every sentence's words must match ``src``."""
    sentences = _read(src)
    _check_k(k, len(sentences), src)
    parsed = []
    for j in range(k):
        path = folder / f"heldout.fold{j}.parsed.conllu"
        fold = _read(path)
        expected = (len(sentences) - j + k - 1) // k
        if len(fold) != expected:
            raise ValueError(f"{path}: {len(fold)} sentences, but fold {j} of {src} holds {expected}")
        parsed.append(fold)
    out = []
    for i, sentence in enumerate(sentences):
        p = parsed[i % k][i // k]
        if _forms(p) != _forms(sentence):
            raise ValueError(f"{folder}/heldout.fold{i % k}.parsed.conllu: sentence {i // k + 1} has words "
                             f"{_forms(p)[:8]}..., but sentence {i + 1} of {src} has {_forms(sentence)[:8]}...")
        out.append(p)
    write_sentences(out, dest)
    return {"input": str(src), "output": str(dest), "k": k, "n_sentences": len(out)}


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
