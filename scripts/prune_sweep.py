"""Restoration's pruning threshold against its choices and speed, to choose ``RESTORE_PRUNE``
(docs/decoding.md, "How much to prune").

Usage:
    python scripts/prune_sweep.py MODEL DEV.conllu OUT.json [--prunes 1e-7,1e-6,1e-5,1e-4,1e-3]

Restores every sentence of DEV (gold trees, gold punctuation ignored) with the ``marginal``
decoder at each threshold (``spacy_punctgen.decode.mbr.RESTORE_PRUNE`` set to it) and writes,
per threshold: AED and edits against DEV's punctuation, the slots whose choice differs from the
first threshold's, and the decoding's CPU sentences per second (one process, after a warm-up).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def sweep(model_dir, dev: Path, prunes) -> dict:
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.decode import mbr
    from spacy_punctgen.evaluation.metrics import gold_slots, restoration_report
    from spacy_punctgen.model.punct_model import PunctModel

    model = PunctModel.from_disk(model_dir)
    gold, _ = preprocess_file(dev)
    slots = gold_slots(gold)
    rows, first = [], None
    saved = mbr.RESTORE_PRUNE
    try:
        for prune in prunes:
            mbr.RESTORE_PRUNE = prune
            mbr.restore_sentences(model, gold[:20], method="marginal")  # warm-up
            c0 = time.process_time()
            choices = mbr.restore_sentences(model, gold, method="marginal")
            cpu = time.process_time() - c0
            pred = [[c.surface for c in s] for s in choices]
            first = pred if first is None else first
            report = restoration_report(slots, pred)
            rows.append({"prune": prune, "aed": report["aed"], "edits": report["edits"],
                         "slots_changed": sum(a != b for p, q in zip(pred, first) for a, b in zip(p, q)),
                         "cpu_sentences_per_second": round(len(gold) / cpu, 1)})
            print(json.dumps(rows[-1]), file=sys.stderr)
    finally:
        mbr.RESTORE_PRUNE = saved
    return {"model": str(model_dir), "dev": str(dev), "n_sentences": len(gold),
            "n_slots": sum(len(s) for s in slots), "rows": rows}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="punctuation model folder")
    p.add_argument("dev", type=Path, help="gold punctuated CoNLL-U file")
    p.add_argument("output", type=Path, help="JSON file to write")
    p.add_argument("--prunes", default="1e-7,1e-6,1e-5,1e-4,1e-3")
    args = p.parse_args(argv)
    try:
        prunes = [float(x) for x in args.prunes.split(",") if x.strip()]
        if not prunes or any(not 0 <= x < 1 for x in prunes):
            raise ValueError(f"--prunes must list thresholds in [0, 1), not {args.prunes!r}")
        result = sweep(args.model, args.dev, prunes)
    except (ValueError, OSError) as e:
        print(f"prune_sweep: {e}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"output": str(args.output), "edits": {r["prune"]: r["edits"] for r in result["rows"]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
