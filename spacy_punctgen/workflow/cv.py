"""Cross-validation (protocol ``cv``): each fold ``k`` of a treebank runs the whole workflow as
the treebank ``<treebank>_cv<k>``; ``keep-fold`` then keeps what pooling needs in
``metrics/<treebank>_cv<k>/kept/`` (``scripts/keep_fold.py``), ``fold-table`` tabulates the
kept folds and ``pool-folds`` pools them (``scripts/fold_table.py``, ``scripts/pool_folds.py``).

What is kept, and where it lives: the record ``kept/kept.json`` (committed: the fold's test
sentences and words, and a SHA-256 of the test file and of each prediction file) and the
copies of the fold's test file and test predictions beside it (``kept/test.conllu``,
``kept/predictions/*.jsonl``: local to the clone that ran the fold, never committed, like
every prediction file and copy of test data). A fold counts as kept once its record is
there, so the fold table reads kept folds in any clone; pooling and the permutation test
need the copies, and say which folds to rerun (:func:`copies_not_here`) where they are not.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from spacy_punctgen.workflow.metrics_files import read_json_object
from spacy_punctgen.errors import Errors


def fold_name(treebank: str, fold: int) -> str:
    """The treebank name a fold runs under (scripts/reproduce.py uses the same)."""
    return f"{treebank}_cv{fold}"


def check_plain_name(name: str, what: str) -> None:
    """Refuse a treebank or fold name that is not one folder name (it becomes ``metrics/<name>``)."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(Errors.E700.format(what=what, name=name))


def kept_paths(metrics: Path, fold: str) -> Dict[str, Path]:
    """Where ``keep-fold`` keeps fold ``fold``: its record, its test file and its predictions
    (``predictions/<file name>``)."""
    kept = metrics / fold / "kept"
    return {"dir": kept, "record": kept / "kept.json", "punct": kept / "test.conllu",
            "predictions": kept / "predictions"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kept_record(fold: str, test: Path, n_sentences: int, n_words: int, predictions: Dict[str, Path]) -> dict:
    """What ``kept.json`` holds: the fold's test sentences (those preprocessing keeps), its test
    words (the weights of the pooled LAS) and a SHA-256 of the test file and of each predictions
    file (``{file name: path}``), so regenerated copies can be checked against the committed
    metrics."""
    return {"fold": fold, "test_sentences": n_sentences, "test_words": n_words, "test_sha256": sha256(test),
            "predictions": {name: {"sha256": sha256(path)} for name, path in sorted(predictions.items())}}


def read_kept_record(metrics: Path, fold: str) -> dict:
    path = kept_paths(metrics, fold)["record"]
    if not path.is_file():
        raise ValueError(Errors.E701.format(fold=fold, path=path))
    return read_json_object(path)


def missing_copies(metrics: Path, fold: str) -> List[Path]:
    """The local copies (test file, predictions) that fold ``fold``'s record names but this
    clone lacks; every copy when the fold is not kept at all."""
    paths = kept_paths(metrics, fold)
    try:
        names = sorted(read_kept_record(metrics, fold).get("predictions") or {})
    except ValueError:
        return [paths["record"], paths["punct"]]
    wanted = [paths["punct"]] + [paths["predictions"] / n for n in names]
    return [p for p in wanted if not p.is_file()]


def copies_not_here(treebank: str, folds: Sequence[int], example: Path) -> str:
    """Why pooling or a permutation test cannot run here, and how to regenerate what it needs."""
    ks = ",".join(str(k) for k in folds)
    return (f"the kept test file and predictions of fold(s) {ks} of {treebank} are not in this clone "
            f"(e.g. {example}): keep-fold's copies in metrics/<fold>/kept/ are local, only their record "
            f"kept.json is committed. Regenerate them by rerunning those folds' workflows and keep-fold here: "
            f"python scripts/reproduce.py --only {treebank} --folds {ks}")


def weighted(values: List[Optional[float]], weights: List[float]) -> Optional[float]:
    if any(v is None for v in values) or not sum(weights):
        return None
    return sum(v * w for v, w in zip(values, weights)) / sum(weights)


def fold_parser(metrics: Path, fold: str) -> dict:
    """A kept fold's parser of unpunctuated text: its test LAS and UAS (``parser_depunct.json``,
    None where missing) and its test words (from the kept record), the weights of the pooled
    LAS and UAS."""
    path = metrics / fold / "parser_depunct.json"
    scores = read_json_object(path) if path.is_file() else {}
    return {"las": scores.get("dep_las"), "uas": scores.get("dep_uas"),
            "words": read_kept_record(metrics, fold)["test_words"]}
