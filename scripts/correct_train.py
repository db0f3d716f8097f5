"""Train the paper's correction model (project.yml ``correct-train``; docs/correction.md, "The paper's method").

Usage:
    python scripts/correct_train.py MODEL TRAIN --output training/<treebank>/correct_paper \
        [--sample N] [--sample-seed 0] [--seeds 101 102 103] [--top-k 16] [--l2 1.0] [--attach-scale fit]

TRAIN: a CoNLL-U file or UD folder (its ``*-ud-train.conllu``).  ``--sample N``: fit on N training sentences
drawn without replacement (seeded; all when N is 0 or at least the split's size).  The damaged copies
are made by ``spacy_punctgen.data.damage`` with ``--seeds`` (none of them is a seed of the evaluation's
damaged dev or test files, which are other sentences anyway).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from spacy_punctgen.data.conllu import resolve_split
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.training.correction import DEFAULT_SEEDS, train_correction_model


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("train", help="training CoNLL-U file or UD folder")
    ap.add_argument("--output", required=True, help="folder for the correction model")
    ap.add_argument("--sample", type=int, default=0, help="fit on this many training sentences (0: all)")
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS), help="damage seeds")
    ap.add_argument("--top-k", type=int, default=16, help="candidate pairs per node (ATTACH's most probable)")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--max-iter", type=int, default=150)
    ap.add_argument("--attach-scale", default="fit", help="'fit' or a fixed scale of ATTACH's log-probability")
    args = ap.parse_args(argv)
    model = PunctModel.from_disk(args.model)
    train, _ = preprocess_file(resolve_split(args.train, "train"))
    n_split = len(train)
    if 0 < args.sample < len(train):
        pick = np.sort(np.random.default_rng(args.sample_seed).choice(len(train), size=args.sample, replace=False))
        train = [train[k] for k in pick.tolist()]
    scale = None if args.attach_scale == "fit" else float(args.attach_scale)
    t0 = time.perf_counter()
    cm = train_correction_model(model, train, seeds=tuple(args.seeds), top_k=args.top_k, l2=args.l2,
                                max_iter=args.max_iter, attach_scale=scale, log=print)
    cm.meta["training"].update({"model": args.model, "train": args.train, "train_split_sentences": n_split,
                                "sample": args.sample, "sample_seed": args.sample_seed,
                                "seconds": round(time.perf_counter() - t0, 1)})
    cm.to_disk(args.output)
    print(json.dumps({k: v for k, v in cm.meta["training"].items() if k != "damage_config"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
