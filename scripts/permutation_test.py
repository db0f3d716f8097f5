"""Paired permutation test between two systems' restoration predictions on one test file.

Usage:
    python scripts/permutation_test.py TEST.conllu A.jsonl B.jsonl [C.jsonl ...] \
        [--permutations 10000] [--seed 0] [--output OUT.json]

A is compared with every other file: AED of each (token edit distance per slot against
the gold slots of TEST's kept sentences) and the two-sided p-value of
``metrics.paired_permutation_test`` over per-sentence edit distances.  Why a script: the
results table (``results_table.py``) tests only ``punctgen*`` against the best baseline
of the metrics folder; this compares any prediction files, e.g. punctgen on parsed trees
against baselines whose predictions live outside ``metrics/``. Prediction files are never
committed: a missing one is an error that says how to regenerate it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def compare(test: Path, a: Path, others, n_permutations: int = 10000, seed: int = 0) -> dict:
    from spacy_punctgen.evaluation.metrics import paired_permutation_test, sentence_losses
    from spacy_punctgen.evaluation.predictions import read_predictions, slots_of
    from spacy_punctgen.data.preprocess import preprocess_file

    gold = preprocess_file(test)[0]
    slots = [[tuple(s) for s in g.slots] for g in gold]
    n_slots = sum(len(s) for s in slots)

    def losses(path: Path):
        records = read_predictions(path)
        if len(records) != len(gold):
            raise ValueError(f"{path}: {len(records)} predictions for {len(gold)} test sentences of {test}")
        for k, (r, g) in enumerate(zip(records, gold)):
            if r.get("sent_id") is not None and g.sent_id is not None and r["sent_id"] != g.sent_id:
                raise ValueError(f"{path}: prediction {k} is for sentence {r['sent_id']!r}, but test sentence "
                                 f"{k} is {g.sent_id!r}")
        return sentence_losses(slots, slots_of(records))

    la = losses(a)
    out = {"test": str(test), "n_sentences": len(gold), "n_slots": n_slots, "permutations": n_permutations,
           "seed": seed, "a": str(a), "aed_a": float(la.sum()) / n_slots, "comparisons": []}
    for b in others:
        lb = losses(b)
        out["comparisons"].append({"b": str(b), "aed_b": float(lb.sum()) / n_slots,
                                   "edits_a": float(la.sum()), "edits_b": float(lb.sum()),
                                   "p": paired_permutation_test(la, lb, n_permutations=n_permutations, seed=seed)})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("test", type=Path, help="the gold test CoNLL-U (punctuated)")
    p.add_argument("a", type=Path, help="predictions (JSONL) of the system under test")
    p.add_argument("others", type=Path, nargs="+", help="predictions of the systems to compare with")
    p.add_argument("--permutations", type=int, default=10000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", type=Path, default=None, help="also write the result here (JSON)")
    args = p.parse_args(argv)
    try:
        for path in [args.test, args.a, *args.others]:
            if not path.is_file():
                raise ValueError(f"no such file: {path} (prediction files and test files are not committed: rerun "
                                 f"the treebank's workflows to regenerate them, e.g. python scripts/reproduce.py "
                                 f"--only <treebank>; results/significance.json records the tests computed so far)")
        result = compare(args.test, args.a, args.others, args.permutations, args.seed)
    except (OSError, ValueError) as e:
        print(f"permutation_test: {e}", file=sys.stderr)
        return 1
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
