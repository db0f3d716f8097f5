"""Pool a cross-validated treebank's folds into one metrics folder, as if it were one test set.

Usage (project.yml ``pool-folds``, after every fold ``<treebank>_cv<k>`` has run):
    python scripts/pool_folds.py cs_cltt --cv-folds 10 [--metrics metrics] [--corpus corpus] \
        [--training training]

Why: with ``--protocol cv`` (``spacy_punctgen convert``) each fold is an ordinary run of the
workflow under the name ``<treebank>_cv<k>``, tested on its own block of the treebank. The
table needs one row per system over the whole treebank, and the permutation test needs
per-sentence losses, so this script concatenates, in fold order, each fold's test file
(into ``corpus/<treebank>/punct/test.conllu``: every sentence of the treebank once) and each
system's test predictions (into ``training/<treebank>/predictions/<system>_{gold,parsed}.jsonl``),
and recomputes AED and comma F1 from them (``metrics.restoration_report``), so the pooled
figures are exactly those of one test set made of the ten blocks. Per-slot perplexity is
pooled as ``exp`` of the slot-weighted mean of the folds' log perplexities (the exact
per-slot perplexity of the pooled log-likelihood), the parser's LAS/UAS as the word-weighted
mean over the folds' test blocks. Each pooled file keeps every fold's own figures under
``per_fold``. A fold's test file and predictions are read from ``metrics/<fold>/kept/``
(written by ``keep-fold``, scripts/keep_fold.py, at the end of each fold), so folds run in
different sessions pool together without their ``training/`` folders. Those copies stay in
the clone that ran the fold (prediction files and test data are not committed; only the
record ``kept/kept.json`` is, with the fold's test words that weight the pooled LAS): a fold
kept in another clone is named, with the command that regenerates its copies here
(``spacy_punctgen.workflow.cv``).
The metrics files of ``metrics/<treebank>/`` (``*.json`` and ``restore/``) are
rewritten whole, so they hold only the pooled result; other subfolders (e.g. ``earlier/``,
records of earlier runs) are left alone.
A system missing from some fold, or predictions that do not match their fold's test
sentences, is an error (nothing is written).
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Optional

from spacy_punctgen.workflow.cv import (check_plain_name, copies_not_here, fold_name, fold_parser, kept_paths,
                                        missing_copies, weighted)
from spacy_punctgen.workflow.metrics_files import read_systems


def _concat(paths: List[Path], dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as out:
        for p in paths:
            text = p.read_text(encoding="utf-8")
            out.write(text if text.endswith("\n") or not text else text + "\n")
    tmp.replace(dest)


def _pooled_perplexity(folds: List[dict]) -> Optional[float]:
    ppl = [m.get("perplexity_per_slot") for m in folds]
    slots = [m.get("n_slots") for m in folds]
    if any(v is None for v in ppl + slots):
        return None
    return math.exp(weighted([math.log(v) for v in ppl], slots))


def pool(treebank: str, k: int, metrics: Path, corpus: Path, training: Path) -> dict:
    """Write the pooled test file, predictions and metrics of ``treebank``; return a summary."""
    from spacy_punctgen.evaluation.metrics import gold_slots, restoration_report
    from spacy_punctgen.evaluation.predictions import read_predictions, slots_of
    from spacy_punctgen.data.preprocess import preprocess_file

    check_plain_name(treebank, "treebank")
    if k < 3:  # as spacy_punctgen convert: each fold needs a test, a dev and a training block
        raise ValueError(f"--cv-folds must be at least 3, got {k}")
    names = [fold_name(treebank, j) for j in range(k)]
    kept = {n: kept_paths(metrics, n) for n in names}
    missing = [n for n in names if not kept[n]["record"].is_file()]
    if missing:
        raise ValueError(f"folds not run and kept yet (no metrics/<fold>/kept/kept.json, written by keep-fold): "
                         f"{missing}")
    not_here = {j: missing_copies(metrics, n) for j, n in enumerate(names)}
    not_here = {j: v for j, v in not_here.items() if v}
    if not_here:
        raise ValueError(copies_not_here(treebank, list(not_here), next(iter(not_here.values()))[0]))
    fold_systems = [read_systems(metrics / n) for n in names]
    systems = sorted(set().union(*fold_systems))
    incomplete = {s: [n for n, fs in zip(names, fold_systems) if s not in fs] for s in systems}
    incomplete = {s: v for s, v in incomplete.items() if v}
    if incomplete:
        raise ValueError(f"systems missing from some folds: {incomplete}")
    if not systems:
        raise ValueError(f"no system metrics in {metrics / names[0]}")

    golds = [gold_slots(preprocess_file(kept[n]["punct"])[0]) for n in names]
    parsers = [fold_parser(metrics, n) for n in names]
    words = [p["words"] for p in parsers]

    # read and check everything before writing anything
    pooled: Dict[str, dict] = {}
    for system in systems:
        per_fold = [fs[system] for fs in fold_systems]
        preds = {}
        for trees in ("gold", "parsed"):
            recorded = [m.get(f"predictions_{trees}") for m in per_fold]
            if not all(recorded):
                continue
            paths = [kept[n]["predictions"] / Path(r).name for n, r in zip(names, recorded)]
            records = []
            for n, path, gold in zip(names, paths, golds):
                recs = read_predictions(path)
                if len(recs) != len(gold):
                    raise ValueError(f"{path}: {len(recs)} predictions for the {len(gold)} test sentences of {n}")
                records.append(recs)
            preds[trees] = (paths, records)
        pooled[system] = {"per_fold": per_fold, "preds": preds}

    out_metrics = metrics / treebank
    out_metrics.mkdir(parents=True, exist_ok=True)
    for stale in out_metrics.glob("*.json"):  # every metrics file the table reads is rewritten
        stale.unlink()
    if (out_metrics / "restore").is_dir():
        shutil.rmtree(out_metrics / "restore")
    test = corpus / treebank / "punct" / "test.conllu"
    _concat([kept[n]["punct"] for n in names], test)
    all_gold = [s for g in golds for s in g]
    protocol = f"{k}-fold cv"
    las, uas = weighted([p["las"] for p in parsers], words), weighted([p["uas"] for p in parsers], words)
    parser_file = out_metrics / "parser_depunct.json"
    parser_file.write_text(json.dumps({
        "dep_las": las, "dep_uas": uas, "treebank": treebank, "parser": "depunct", "protocol": protocol,
        "cv_folds": k, "n_words": sum(words),
        "per_fold": [{"fold": n, **p} for n, p in zip(names, parsers)]}, indent=2) + "\n", encoding="utf-8")
    summary = {}
    for system, data in pooled.items():
        per_fold = data["per_fold"]
        result = {"perplexity_per_slot": _pooled_perplexity(per_fold)}
        for trees, (paths, records) in data["preds"].items():
            slots = slots_of([r for recs in records for r in recs])
            report = restoration_report(all_gold, slots)
            dest = training / treebank / "predictions" / f"{system}_{trees}.jsonl"
            _concat(paths, dest)
            result.update({f"aed_{trees}": report["aed"], f"comma_f1_{trees}": report["comma"]["f1"],
                           f"edits_{trees}": report["edits"], f"predictions_{trees}": str(dest)})
            result["n_slots"] = report["n_slots"]
        n_trees = {m.get("n_trees") for m in per_fold}
        if n_trees != {None}:
            result["n_trees"] = sorted(n_trees, key=str) if len(n_trees) > 1 else n_trees.pop()
        result.update({
            "n_sentences": len(all_gold), "test": str(test), "parser_las": las, "parser_uas": uas,
            "parser_metrics": str(parser_file), "treebank": treebank, "system": system,
            "protocol": protocol, "cv_folds": k,
            "per_fold": [{"fold": n, **{key: m.get(key) for key in
                                        ("aed_gold", "aed_parsed", "perplexity_per_slot", "n_sentences", "n_slots")}}
                         for n, m in zip(names, per_fold)]})
        (out_metrics / f"{system}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                                                    encoding="utf-8")
        summary[system] = {"aed_gold": result.get("aed_gold"), "aed_parsed": result.get("aed_parsed")}
    return {"treebank": treebank, "cv_folds": k, "n_sentences": len(all_gold), "parser_las": las,
            "systems": summary}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("treebank", help="the cross-validated treebank's name; its folds are <treebank>_cv<k>")
    p.add_argument("--cv-folds", type=int, default=10)
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--corpus", type=Path, default=Path("corpus"))
    p.add_argument("--training", type=Path, default=Path("training"))
    args = p.parse_args(argv)
    try:
        summary = pool(args.treebank, args.cv_folds, args.metrics, args.corpus, args.training)
    except (OSError, ValueError) as e:
        print(f"pool_folds: {e}", file=sys.stderr)
        return 1
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
