"""Keep one cross-validation fold's test files and test predictions beside its metrics.

Usage (project.yml ``keep-fold``, the last step of each fold ``<treebank>_cv<k>``):
    python scripts/keep_fold.py cs_cltt_cv3 [--metrics metrics] [--corpus corpus]

Why: a fold's test predictions are written under ``training/`` and its test files under
``corpus/``, which later folds and reruns overwrite or clean, so folds run on different days
could not be pooled. This copies, byte for byte, what ``pool-folds`` reads into
``metrics/<fold>/kept/`` (layout: ``spacy_punctgen.workflow.cv.kept_paths``): the fold's test
file and every prediction file its metrics name, and writes the record ``kept/kept.json``
(the fold's test sentences, its test words from the depunctuated test file, and a SHA-256 of
each copy). Only the record is committed: prediction files and copies of test data stay in
this clone, so pooling in another clone reruns the fold there (``pool-folds`` says so). The
copies are checked first (each predictions file has one record per test sentence that
preprocessing keeps, as ``pool-folds`` checks) and replace the old ``kept/`` folder whole, so
a fold is kept entirely or not at all.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from spacy_punctgen.workflow.cv import check_plain_name, kept_paths, kept_record
from spacy_punctgen.workflow.metrics_files import read_systems


def keep(fold: str, metrics: Path, corpus: Path) -> dict:
    """Copy fold ``fold``'s test files and predictions into ``metrics/<fold>/kept/``; return a summary."""
    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.evaluation.predictions import read_predictions

    check_plain_name(fold, "fold")
    folder = metrics / fold
    systems = read_systems(folder) if folder.is_dir() else {}
    if not systems:
        raise ValueError(f"no system metrics in {folder}: run the fold's workflows first")
    not_cv = sorted(s for s, m in systems.items() if m.get("protocol") != "cv")
    if not_cv:
        raise ValueError(f"{folder}: not a cross-validation fold (protocol of {not_cv} is not 'cv')")
    sources = {"punct": corpus / fold / "punct" / "test.conllu", "depunct": corpus / fold / "depunct" / "test.conllu"}
    for path in sources.values():
        if not path.is_file():
            raise ValueError(f"test file not found: {path}")
    n_test = len(preprocess_file(sources["punct"])[0])  # the sentences pool-folds scores
    preds = {}
    for system, m in sorted(systems.items()):
        for trees in ("gold", "parsed"):
            path = m.get(f"predictions_{trees}")
            if not path:
                continue
            n = len(read_predictions(path))
            if n != n_test:
                raise ValueError(f"{path}: {n} predictions for the {n_test} test sentences of {fold}")
            name = Path(path).name
            if preds.get(name, Path(path)) != Path(path):
                raise ValueError(f"{folder}: two prediction files named {name}: {preds[name]} and {path}")
            preds[name] = Path(path)

    dest = kept_paths(metrics, fold)
    tmp = dest["dir"].with_name(".kept.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "predictions").mkdir(parents=True)
    shutil.copyfile(sources["punct"], tmp / dest["punct"].name)
    for name, src in sorted(preds.items()):
        shutil.copyfile(src, tmp / "predictions" / name)
    n_words = sum(len(s.forms) for s in read_conllu(sources["depunct"]))  # the weight of its parser's LAS
    record = kept_record(fold, sources["punct"], n_test, n_words, preds)
    (tmp / dest["record"].name).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    if dest["dir"].exists():
        shutil.rmtree(dest["dir"])
    tmp.rename(dest["dir"])
    return {"fold": fold, "kept": str(dest["dir"]), "test_sentences": n_test, "predictions": sorted(preds)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("fold", help="the fold's treebank name, <treebank>_cv<k>")
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--corpus", type=Path, default=Path("corpus"))
    args = p.parse_args(argv)
    try:
        summary = keep(args.fold, args.metrics, args.corpus)
    except (OSError, ValueError) as e:
        print(f"keep_fold: {e}", file=sys.stderr)
        return 1
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
