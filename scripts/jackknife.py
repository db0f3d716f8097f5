"""Jackknifed parses of the training sentences: k fold parsers, each parsing the fold it did not see.

Usage (project.yml ``jackknife``):
    python scripts/jackknife.py corpus/T/depunct training/T --k 3 --lang cs --max-steps 2000 [--dropout 0.1] [--jobs 2]

Why: see ``scripts/folds.py`` (split and merge: ``spacy_punctgen.workflow.jackknife``). For each
fold ``j`` this trains the parser of unpunctuated text
(``configs/parser.cfg``, exactly as ``train-parser`` does, with the same dev set) on the other
folds into ``training/T/parser-depunct-fold<j>``, parses ``heldout.fold<j>.conllu`` with it, and
finally merges the folds into ``corpus/T/depunct/train.parsed.conllu``. Folds whose parse
already exists are skipped, so an interrupted run resumes. ``--jobs`` trains that many folds at
once (one CPU thread each).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from spacy_punctgen.workflow.jackknife import merge as jackknife_merge, split as jackknife_split

HERE = Path(__file__).resolve().parent


def _run(cmd, log: Path) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as out:
        out.write("$ " + " ".join(map(str, cmd)) + "\n")
        out.flush()
        rc = subprocess.call([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT, env=env)
    if rc != 0:
        raise RuntimeError(f"{cmd[0]} {cmd[1] if len(cmd) > 1 else ''} exited with {rc}; see {log}")


def _fold(j: int, args) -> dict:
    folds = args.corpus / "folds"
    parsed = folds / f"heldout.fold{j}.parsed.conllu"
    if parsed.exists():
        return {"fold": j, "skipped": True}
    t0 = time.perf_counter()
    model = args.training / f"parser-depunct-fold{j}"
    log = args.training / "logs" / f"jackknife.fold{j}.log"
    _run([sys.executable, "-m", "spacy", "train", args.config, "--output", model,
          "--paths.train", folds / f"train.fold{j}.spacy", "--paths.dev", args.corpus / "dev.spacy",
          "--corpora.train.gold_preproc", "true", "--corpora.dev.gold_preproc", "true",
          "--nlp.lang", args.lang, "--system.seed", str(args.seed), "--training.max_steps", str(args.max_steps),
          "--training.patience", str(args.patience), "--training.eval_frequency", str(args.eval_frequency),
          *(["--training.dropout", str(args.dropout)] if args.dropout is not None else []),
          "--gpu-id", str(args.gpu)], log)
    _run([sys.executable, HERE / "parse_conllu.py", model / "model-best", folds / f"heldout.fold{j}.conllu", parsed], log)
    return {"fold": j, "seconds": round(time.perf_counter() - t0, 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("corpus", type=Path, help="corpus/<treebank>/depunct (train.conllu, dev.spacy)")
    p.add_argument("training", type=Path, help="training/<treebank> (fold parsers and logs go here)")
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--lang", required=True)
    p.add_argument("--config", type=Path, default=HERE.parent / "configs" / "parser.cfg")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=20000)
    p.add_argument("--patience", type=int, default=1600)
    p.add_argument("--eval-frequency", type=int, default=200)
    p.add_argument("--dropout", type=float, default=None,
                   help="the fold parsers' training dropout (default: the config's)")
    p.add_argument("--gpu", type=int, default=-1)
    p.add_argument("--jobs", type=int, default=1)
    args = p.parse_args(argv)
    try:
        folds = args.corpus / "folds"
        split = jackknife_split(args.corpus / "train.conllu", folds, args.k)
        _run([sys.executable, "-m", "spacy", "convert", folds, folds, "--converter", "conllu", "--n-sents", "1"],
             args.training / "logs" / "jackknife.convert.log")
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            done = list(pool.map(lambda j: _fold(j, args), range(args.k)))
        merged = jackknife_merge(args.corpus / "train.conllu", folds, args.corpus / "train.parsed.conllu", args.k)
    except (ValueError, OSError, RuntimeError) as e:
        print(f"jackknife: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"split": split, "folds": done, "merged": merged}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
