"""A results-table metrics file for a tree-free baseline from its saved test predictions.

Usage:
    python scripts/metrics_from_predictions.py TEST.conllu PRED.jsonl OUT.json \
        --set system=spacy_tagger --set perplexity_per_slot=1.4484 [--set KEY=VALUE ...]

Why: a baseline run outside the workflow (e.g. a dev-tuned one, ``docs/lab/results_baselines.md``)
leaves only its predictions; ``results_table.py`` needs ``metrics/<treebank>/<system>.json``.
AED and comma P/R/F1 are recomputed here from the predictions against the gold slots of
TEST (``metrics.restoration_report``).  The baselines read no tree, so the same predictions
stand for gold and for parsed trees (``aed_parsed = aed_gold``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def metrics(test: Path, pred: Path) -> dict:
    from spacy_punctgen.evaluation.metrics import gold_slots, restoration_report
    from spacy_punctgen.evaluation.predictions import read_predictions, slots_of
    from spacy_punctgen.data.preprocess import preprocess_file

    gold = preprocess_file(test)[0]
    records = read_predictions(pred)
    if len(records) != len(gold):
        raise ValueError(f"{pred}: {len(records)} predictions for {len(gold)} test sentences of {test}")
    r = restoration_report(gold_slots(gold), slots_of(records))
    return {"aed_gold": r["aed"], "aed_parsed": r["aed"], "comma_f1_gold": r["comma"]["f1"],
            "comma_f1_parsed": r["comma"]["f1"], "edits": r["edits"], "n_sentences": len(gold),
            "n_slots": r["n_slots"], "predictions_gold": str(pred), "predictions_parsed": str(pred),
            "test": str(test)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("test", type=Path)
    p.add_argument("predictions", type=Path)
    p.add_argument("output", type=Path)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra fields (JSON values)")
    args = p.parse_args(argv)
    try:
        extra = {}
        for item in args.set:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ValueError(f"--set needs KEY=VALUE, got {item!r}")
            extra[key] = _value(value)
        for path in (args.test, args.predictions):
            if not path.is_file():
                raise ValueError(f"no such file: {path}")
        result = {**metrics(args.test, args.predictions), **extra}
    except (OSError, ValueError) as e:
        print(f"metrics_from_predictions: {e}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("aed_gold", "comma_f1_gold")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
