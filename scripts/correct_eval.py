"""Punctuation correction on damaged test punctuation (project.yml ``correct-eval``; docs/correction.md).

Usage:
    python scripts/correct_eval.py MODEL TEST DEV --output metrics/<treebank>/correct/correct.json \
        [--crf training/<treebank>/baselines/crf_lexical] [--seed 0] [--dev-seed 1] [--limit N]
    python scripts/correct_eval.py MODEL TEST DEV --output FILE --crf CRF --add-crf   # add the CRF row later

TEST and DEV: CoNLL-U files, or UD folders (their ``*-ud-test.conllu`` / ``*-ud-dev.conllu``).

1. The gold test and dev sentences are damaged by ``spacy_punctgen.data.damage`` (test with
   ``--seed``, dev with ``--dev-seed``).
2. The noise model's rates are fitted by EM on the damaged dev sentences (``SlotNoise.fit``) and its
   ``eps`` chosen on dev (lowest AED of the corrections, ties by F0.5) from ``EPS_GRID``.
3. On the damaged test sentences, with their gold trees: ``as_is`` (no change), ``punctgen_restore``
   (restoration from the tree, ignoring the input's punctuation), ``crf_lexical_restore`` (with ``--crf``,
   a saved crf_lexical baseline, from the words) and ``punctgen_correct`` are scored by
   ``evaluation.correction.correction_report`` (AED, and P/R/F0.5 of slot changes).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from spacy_punctgen.baselines.base import load_baseline
from spacy_punctgen.data.conllu import resolve_split
from spacy_punctgen.data.damage import DEFAULT_CONFIG, damage_sentences
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.correct import SlotNoise, correct_from_marginals, correction_marginals
from spacy_punctgen.decode.mbr import restore_sentences
from spacy_punctgen.evaluation.correction import correction_report, predictions_of
from spacy_punctgen.evaluation.metrics import gold_slots
from spacy_punctgen.model.punct_model import PunctModel

EPS_GRID = (1e-6, 1e-5, 1e-4, 1e-3)
#: Li, Wang & Eisner (2019), Table 5: English-ESL test (real learner errors, Cambridge learner treebanks)
PAPER_EN_ESL = {
    "restore_trivial": {"aed": 0.052, "f05": 0.779},
    "restore_bilstm_crf": {"aed": 0.051, "f05": 0.787},
    "restore_punctgen_parsed": {"aed": 0.047, "f05": 0.827},
    "correct_punctgen_parsed": {"aed": 0.034, "f05": 0.876},
    "correct_punctgen_gold": {"aed": 0.033, "f05": 0.881},
    "correct_bilstm_crf": {"aed": 0.005, "f05": 0.984},
}


def _short(report: dict) -> dict:
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in report.items()}


def _add_crf(args) -> int:
    """The crf_lexical row for a metrics file written earlier: the same damaged test sentences (the
    damage depends on the seed only), the baseline's restoration from the words."""
    out = json.loads(Path(args.output).read_text(encoding="utf-8"))
    test, _ = preprocess_file(resolve_split(args.test, "test"))
    if out.get("limit"):
        test = test[:out["limit"]]
    bad, _ = damage_sentences(test, seed=out["seed"])
    G, O = gold_slots(test), gold_slots(bad)
    crf = load_baseline(args.crf)
    out["systems"]["crf_lexical_restore"] = _short(correction_report(G, O, [list(p) for p in crf.predict(bad)]))
    out["crf_lexical"] = str(args.crf)
    Path(args.output).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(out["systems"]["crf_lexical_restore"]))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("test", help="test CoNLL-U file or UD folder")
    ap.add_argument("dev", help="dev CoNLL-U file or UD folder (fits the noise model)")
    ap.add_argument("--treebank", default=None, help="name recorded in the output")
    ap.add_argument("--output", required=True)
    ap.add_argument("--crf", default=None, help="a saved crf_lexical baseline")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dev-seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="only the first N sentences of each split")
    ap.add_argument("--noise-out", default=None, help="also write the fitted noise model (JSON) here")
    ap.add_argument("--add-crf", action="store_true",
                    help="only add the --crf row to an existing --output (same test file and seed)")
    args = ap.parse_args(argv)
    if args.add_crf:
        return _add_crf(args)
    model = PunctModel.from_disk(args.model)
    test, _ = preprocess_file(resolve_split(args.test, "test"))
    dev, _ = preprocess_file(resolve_split(args.dev, "dev"))
    if args.limit:
        test, dev = test[:args.limit], dev[:args.limit]
    t0 = time.perf_counter()
    dev_bad, dev_report = damage_sentences(dev, seed=args.dev_seed)
    fitted = SlotNoise.fit(dev, dev_bad)
    dev_margs = correction_marginals(model, dev_bad)
    G, O = gold_slots(dev), gold_slots(dev_bad)
    grid = {}
    for eps in EPS_GRID:
        noise = SlotNoise(fitted.rates, eps=eps, floor=fitted.floor)
        grid[eps] = correction_report(G, O, predictions_of(correct_from_marginals(dev_bad, dev_margs, noise)))
    best = min(EPS_GRID, key=lambda e: (grid[e]["aed"], -grid[e]["f05"]))
    noise = SlotNoise(fitted.rates, eps=best, floor=fitted.floor)
    dev_seconds = time.perf_counter() - t0

    bad, report = damage_sentences(test, seed=args.seed)
    G, O = gold_slots(test), gold_slots(bad)
    systems = {"as_is": correction_report(G, O, O)}
    t0 = time.perf_counter()
    systems["punctgen_restore"] = correction_report(G, O, predictions_of(restore_sentences(model, bad)))
    if args.crf:
        crf = load_baseline(args.crf)
        systems["crf_lexical_restore"] = correction_report(G, O, [list(p) for p in crf.predict(bad)])
    margs = correction_marginals(model, bad)
    systems["punctgen_correct"] = correction_report(G, O, predictions_of(correct_from_marginals(bad, margs, noise)))
    systems["punctgen_correct_configured"] = correction_report(
        G, O, predictions_of(correct_from_marginals(bad, margs, SlotNoise.from_config(DEFAULT_CONFIG, eps=best))))
    out = {
        "treebank": args.treebank or Path(args.test).name, "test": str(args.test), "dev": str(args.dev), "model": str(args.model), "trees": "gold",
        "seed": args.seed, "dev_seed": args.dev_seed, "limit": args.limit,
        "n_sentences": len(test), "n_slots": systems["as_is"]["n_slots"],
        "damage_config": DEFAULT_CONFIG.rates(), "damage_test": report.to_dict(), "damage_dev": dev_report.to_dict(),
        "noise": noise.to_dict(), "eps_grid_dev": {str(e): _short(r) for e, r in grid.items()},
        "systems": {k: _short(v) for k, v in systems.items()},
        "crf_lexical": str(args.crf) if args.crf else None,
        "paper_en_esl_table5": PAPER_EN_ESL,
        "seconds": {"dev": round(dev_seconds, 1), "test": round(time.perf_counter() - t0, 1)},
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.noise_out:
        Path(args.noise_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.noise_out).write_text(json.dumps(noise.to_dict(), indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out["systems"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
