"""Paired significance of punctgen's commas against the best companion system, per treebank and
tree kind: ``metrics/<treebank>/companions/significance.json``.

Usage: python experiments/companions/scripts/companions_significance.py [--metrics metrics]
    [--permutations 10000] [--seed 0]

In every ``metrics/<treebank>/companions/`` folder, for gold and for parsed trees: the best other
system is the ``trigram_hmm`` or ``crf_syntax`` variant with the highest comma F1, and each
``punctgen_*`` record is tested against it on the same test sentences, by approximate
randomisation over sentences of precision, recall, F1 and SER
(:func:`spacy_punctgen.baselines.trigram_hmm.comma_significance`, from the records'
``sentence_counts``).  A tree kind with companions but no punctgen record, or a record without
per-sentence counts, is listed under ``untested`` with the reason, so the table can say so.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spacy_punctgen.baselines.trigram_hmm import comma_significance

SCORES = ("precision", "recall", "f1", "ser")


def records(folder: Path):
    out = []
    for path in sorted(folder.glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf8"))
        if isinstance(rec, dict) and all(k in rec for k in ("system", "variant", "trees", *SCORES)):
            out.append(rec)
    return out


def stem(rec: dict) -> str:
    return f"{rec['system']}_{rec['variant']}"


def significance(recs, n_permutations: int = 10000, seed: int = 0) -> dict:
    """The tests of one treebank's records (see the module docstring)."""
    tests, untested = [], []
    for trees in ("gold", "parsed"):
        others = [r for r in recs if r["system"] != "punctgen" and r["trees"] == trees]
        if not others:
            continue
        best = max(others, key=lambda r: r["f1"])
        mine = [r for r in recs if r["system"] == "punctgen" and r["trees"] == trees]
        if not mine:
            untested.append({"trees": trees, "against": stem(best),
                             "reason": "no punctgen restoration of these test sentences"})
        for rec in mine:
            missing = [stem(r) for r in (rec, best) if "sentence_counts" not in r]
            if missing:
                untested.append({"trees": trees, "system": stem(rec), "against": stem(best),
                                 "reason": f"no per-sentence comma counts in {', '.join(missing)}"})
                continue
            test = comma_significance(rec["sentence_counts"], best["sentence_counts"], n_permutations, seed)
            tests.append({"trees": trees, "system": stem(rec), "against": stem(best),
                          **{k: rec[k] for k in SCORES}, **{f"{k}_against": best[k] for k in SCORES},
                          **test})
    return {"tests": tests, "untested": untested}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metrics", default="metrics")
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    written = 0
    for folder in sorted(Path(a.metrics).glob("*/companions")):
        recs = records(folder)
        if not recs:
            continue
        result = {"treebank": folder.parent.name, "test": "approximate randomisation over sentences "
                  "(P, R, F1); sign-flip of per-sentence fp + fn (SER)", "n_permutations": a.permutations,
                  "seed": a.seed, **significance(recs, a.permutations, a.seed)}
        (folder / "significance.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf8")
        written += 1
        for t in result["tests"]:
            print(f"{result['treebank']} {t['trees']}: {t['system']} F1 {t['f1']:.3f} vs {t['against']} "
                  f"{t['f1_against']:.3f}: p(P) {t['p_precision']:.4f} p(R) {t['p_recall']:.4f} "
                  f"p(F1) {t['p_f1']:.4f} p(SER) {t['p_ser']:.4f}")
        for u in result["untested"]:
            print(f"{result['treebank']} {u['trees']}: untested ({u['reason']})")
    if not written:
        print(f"no companion metrics under {a.metrics}/*/companions", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
