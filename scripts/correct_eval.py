"""Punctuation correction on damaged test punctuation (project.yml ``correct-eval``; docs/correction.md).

Usage:
    python scripts/correct_eval.py MODEL TEST DEV --output metrics/<treebank>/correct/correct.json \
        [--crf training/<treebank>/baselines/crf_lexical] [--seed 0] [--dev-seed 1] [--limit N]
    python scripts/correct_eval.py MODEL TEST DEV --output FILE --crf CRF --add-crf   # add the CRF row later
    python scripts/correct_eval.py MODEL TEST DEV --output FILE --paper-model DIR [--add-paper]

TEST and DEV: CoNLL-U files, or UD folders (their ``*-ud-test.conllu`` / ``*-ud-dev.conllu``).

1. The gold test and dev sentences are damaged by ``spacy_punctgen.data.damage`` (test with
   ``--seed``, dev with ``--dev-seed``).
2. The noise model's rates are fitted by EM on the damaged dev sentences (``SlotNoise.fit``) and its
   ``eps`` chosen on dev (lowest AED of the corrections, ties by F0.5) from ``EPS_GRID``.
3. On the damaged test sentences, with their gold trees: ``as_is`` (no change), ``punctgen_restore``
   (restoration from the tree, ignoring the input's punctuation), ``crf_lexical_restore`` (with ``--crf``,
   a saved crf_lexical baseline, from the words) and ``punctgen_correct`` are scored by
   ``evaluation.correction.correction_report`` (AED, and P/R/F0.5 of slot changes).
4. With ``--paper-model`` (a correction model of ``scripts/correct_train.py``): ``punctgen_correct_paper``, the
   paper's method, on the same damaged test sentences, and ``dev_methods``: as-is, the noise method (rates
   and ``eps`` as chosen above) and the paper's method on the damaged dev sentences; ``default_method`` is
   the method of lower dev AED.  ``--add-paper`` adds only these to an existing ``--output`` (same files,
   seeds and limit as recorded there).
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
from spacy_punctgen.decode.correct import (SlotNoise, correct_from_marginals, correct_sentences_paper,
                                           correction_marginals)
from spacy_punctgen.decode.mbr import restore_sentences
from spacy_punctgen.evaluation.correction import correction_report, predictions_of
from spacy_punctgen.evaluation.metrics import gold_slots
from spacy_punctgen.model.correction import CorrectionModel
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


def _paper_rows(model, cm, noise, test, dev, seed: int, dev_seed: int) -> dict:
    """The paper's method on damaged test and the dev comparison of the methods (module docstring, 4)."""
    out = {}
    t0 = time.perf_counter()
    bad, _ = damage_sentences(test, seed=seed)
    gold, obs = gold_slots(test), gold_slots(bad)
    out["test"] = _short(correction_report(gold, obs, predictions_of(correct_sentences_paper(model, cm, bad, noise))))
    dev_bad, _ = damage_sentences(dev, seed=dev_seed)
    gold, obs = gold_slots(dev), gold_slots(dev_bad)
    dev_noise = correct_from_marginals(dev_bad, correction_marginals(model, dev_bad), noise)
    out["dev"] = {"as_is": _short(correction_report(gold, obs, obs)),
                  "noise": _short(correction_report(gold, obs, predictions_of(dev_noise))),
                  "paper": _short(correction_report(gold, obs, predictions_of(
                      correct_sentences_paper(model, cm, dev_bad, noise))))}
    out["default"] = min(("noise", "paper"), key=lambda k: (out["dev"][k]["aed"], -out["dev"][k]["f05"]))
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def _record_paper(out: dict, rows: dict, args, cm) -> None:
    out["systems"]["punctgen_correct_paper"] = rows["test"]
    out["dev_methods"] = rows["dev"]
    out["default_method"] = rows["default"]
    out["paper_model"] = str(args.paper_model)
    out["paper_model_training"] = {k: v for k, v in cm.meta.get("training", {}).items() if k != "damage_config"}
    out.setdefault("seconds", {})["paper"] = rows["seconds"]


def _add_paper(args) -> int:
    """The paper's rows for a metrics file written earlier (same files, seeds and limit)."""
    out = json.loads(Path(args.output).read_text(encoding="utf-8"))
    model = PunctModel.from_disk(args.model)
    cm = CorrectionModel.from_disk(args.paper_model)
    test, _ = preprocess_file(resolve_split(args.test, "test"))
    dev, _ = preprocess_file(resolve_split(args.dev, "dev"))
    if out.get("limit"):
        test, dev = test[:out["limit"]], dev[:out["limit"]]
    noise = SlotNoise.from_dict(out["noise"])
    rows = _paper_rows(model, cm, noise, test, dev, out["seed"], out["dev_seed"])
    _record_paper(out, rows, args, cm)
    Path(args.output).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"test": rows["test"], "dev": rows["dev"], "default": rows["default"]}, indent=1))
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
    ap.add_argument("--paper-model", default=None, help="a correction model of scripts/correct_train.py")
    ap.add_argument("--add-paper", action="store_true",
                    help="only add the --paper-model rows to an existing --output (same files and seeds)")
    args = ap.parse_args(argv)
    if args.add_paper and not args.paper_model:
        ap.error("--add-paper needs --paper-model")
    if args.add_crf:
        return _add_crf(args)
    if args.add_paper:
        return _add_paper(args)
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
    if args.paper_model:
        cm = CorrectionModel.from_disk(args.paper_model)
        _record_paper(out, _paper_rows(model, cm, noise, test, dev, args.seed, args.dev_seed), args, cm)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.noise_out:
        Path(args.noise_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.noise_out).write_text(json.dumps(noise.to_dict(), indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out["systems"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
