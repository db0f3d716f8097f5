"""Restoration from several trees of ONE parser, against the number of trees: the curve of AED
against k, with each k's parse cost as a multiple of the greedy parse timed in the same run.

Usage:
    python scripts/sampled_trees_curve.py PARSER MODEL PUNCT.conllu DEPUNCT.conllu OUT.json
        [--ks 1,2,4,8,16] [--search sample|beam] [--temperature 1.0] [--seed 0]
        [--weights beam|uniform] [--predictions DIR] [--work DIR]

For each k, ``scripts/parse_conllu.py --kbest k`` parses DEPUNCT (the depunctuated sentences,
gold words and segmentation) with PARSER, searching with the beam or drawing trees
(``--search sample``: the greedy parse and k - 1 trees drawn at ``--temperature``,
``spacy_punctgen.parsing.parser_samples``), and ``scripts/kbest_weighting.py`` restores every
sentence of PUNCT with MODEL from the mixture of its distinct trees, weighed by their
probabilities (``--weights beam``: the beam's, or for draws each tree's share of the k, i.e.
the Monte Carlo mixture) or equally.  k = 1 is the greedy parse.  OUT.json gets one row per k:
AED, edits, comma P/R/F1, distinct trees per sentence, the parse's thread CPU seconds and
``cost_vs_greedy`` (the greedy parse of the same sentences timed in the same run; each the least of
``--timing-repeats`` runs, 3 by default: one run on a shared machine is too noisy); with
``--predictions DIR`` each k's predictions go to ``DIR/k<k>.jsonl`` (for
``scripts/permutation_test.py``).  The tree files go to ``--work`` (default: a temporary folder)
and are not kept.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from spacy_punctgen.workflow.kbest_eval import evaluate
from spacy_punctgen.workflow.parsing_files import parse_file_kbest


def curve(parser, model, punct: Path, depunct: Path, ks, search: str = "sample", temperature: float = 1.0,
          seed: int = 0, weights: str = "beam", predictions=None, work=None, timing_repeats: int = 3) -> dict:
    import spacy

    nlp = spacy.load(parser)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(work or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for k in ks:
            trees = folder / f"{depunct.stem}.{search}{k}.conllu"
            parse = parse_file_kbest(nlp, depunct, trees, k, compare_greedy=True, search=search,
                                     temperature=temperature, seed=seed, timing_repeats=timing_repeats)
            pred = Path(predictions) / f"k{k}.jsonl" if predictions else None
            t0 = time.perf_counter()
            report = evaluate(model, punct, trees, k, weights if k > 1 else "uniform", predictions=pred)
            rows.append({"k": k, "aed": report["aed"], "edits": report["edits"], "n_slots": report["n_slots"],
                         "comma": report["comma"], "mean_trees": report["mean_trees"],
                         "parse_cpu_seconds": parse["cpu_seconds"], "greedy_cpu_seconds": parse["greedy_cpu_seconds"],
                         "cost_vs_greedy": parse.get("cost_vs_greedy"),
                         "decode_seconds": report["decode_seconds"], "seconds": round(time.perf_counter() - t0, 1),
                         **({"predictions": str(pred)} if pred else {})})
            print(json.dumps(rows[-1]), file=sys.stderr)
    return {"parser": str(parser), "model": str(model), "test": str(punct), "depunct": str(depunct),
            "search": search, "weights": weights, "seed": seed, "timing_repeats": timing_repeats,
            **({"temperature": temperature} if search == "sample" else {}), "rows": rows}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("parser", help="spaCy pipeline folder with the parser")
    p.add_argument("model", help="punctuation model folder")
    p.add_argument("punct", type=Path, help="gold punctuated CoNLL-U file")
    p.add_argument("depunct", type=Path, help="its depunctuated copy (convert --depunct)")
    p.add_argument("output", type=Path, help="JSON file to write")
    p.add_argument("--ks", default="1,2,4,8,16", help="comma-separated numbers of trees")
    p.add_argument("--search", choices=("sample", "beam"), default="sample")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weights", choices=("beam", "uniform"), default="beam")
    p.add_argument("--predictions", default=None, help="folder for each k's predictions (k<k>.jsonl)")
    p.add_argument("--work", default=None, help="folder for the tree files (default: temporary)")
    p.add_argument("--timing-repeats", type=int, default=3,
                   help="the parse costs are the least CPU of this many runs each (greedy and each k)")
    args = p.parse_args(argv)
    try:
        ks = [int(k) for k in args.ks.split(",") if k.strip()]
        if not ks or any(k < 1 for k in ks):
            raise ValueError(f"--ks must list numbers of trees >= 1, not {args.ks!r}")
        if args.timing_repeats < 1:
            raise ValueError(f"--timing-repeats must be at least 1, not {args.timing_repeats}")
        result = curve(args.parser, args.model, args.punct, args.depunct, ks, args.search, args.temperature,
                       args.seed, args.weights, args.predictions, args.work, args.timing_repeats)
    except (ValueError, OSError) as e:
        print(f"sampled_trees_curve: {e}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"output": str(args.output), "aed": {r["k"]: round(r["aed"], 5) for r in result["rows"]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
