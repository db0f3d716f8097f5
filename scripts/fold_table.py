"""The kept folds of a cross-validation so far: test AED per system, one column per fold.

Usage (project.yml ``fold-table``):
    python scripts/fold_table.py cs_cltt [--metrics metrics] [--output results/folds_cs_cltt.md]

Why: ``pool-folds`` needs every fold, but a 10-fold cross-validation is run a few folds per
session (``reproduce.py --folds``), and each finished fold is kept in ``metrics/<tb>_cv<k>/``.
This reads only those committed folders and writes, in Markdown: the parser's test LAS
(over the kept folds together: weighted by test words, as ``pool-folds`` weights it) and
each system's test AED on gold and on parsed trees per fold, with the AED over the kept
folds together (edits over slots, i.e. each fold's AED weighted by its slots: what
``pool-folds`` will report once these folds are all there are), and the baselines' points
chosen on dev (``baseline --tune``) per fold. Below the table, the paired permutation test
(as ``results-table``'s) over the kept folds' test sentences together, from the kept
predictions: the ``punctgen*`` system with the lowest AED on parsed trees against the
baseline with the lowest AED. A fold counts once ``keep-fold`` has kept it (its committed
record ``metrics/<fold>/kept/kept.json``); a fold that is run but not kept is left out. The
permutation test needs the kept predictions, which stay in the clone that ran the fold: where
some are not here, the earlier table's test (``--output`` as it was) is kept if it was computed
from the same edits, and otherwise the table says so in its place; either way it names the folds
to rerun.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from spacy_punctgen.workflow.cv import (check_plain_name, copies_not_here, fold_name, fold_parser, kept_paths,
                                        missing_copies, weighted)
from spacy_punctgen.workflow.metrics_files import (fmt, is_punctgen, prediction_losses, read_json_object,
                                                   read_systems)


def kept_folds(treebank: str, metrics: Path) -> Dict[int, Dict[str, dict]]:
    """``{k: {system: metrics}}`` for every fold ``<treebank>_cv<k>`` that ``keep-fold`` kept."""
    check_plain_name(treebank, "treebank")
    prefix = fold_name(treebank, 0)[:-1]
    folds = {}
    for folder in sorted(metrics.glob(f"{prefix}*")):
        suffix = folder.name[len(prefix):]
        if folder.is_dir() and suffix.isdigit() and kept_paths(metrics, folder.name)["record"].is_file():
            folds[int(suffix)] = read_systems(folder)
    if not folds:
        raise ValueError(f"no kept fold of {treebank} in {metrics} (metrics/{prefix}<k>/kept/, written by keep-fold)")
    return dict(sorted(folds.items()))


def _pooled(ms: List[Optional[dict]], key: str) -> Optional[float]:
    """Edits over slots across folds (each fold's AED times its slots); None if a fold lacks it."""
    if any(m is None or not m.get("n_slots") for m in ms):
        return None
    return weighted([m.get(key) for m in ms], [m["n_slots"] for m in ms])


def chosen_point(restore: Path) -> Optional[str]:
    """The dev-chosen grid point recorded by ``baseline --tune`` in ``restore/<system>_gold.json``."""
    if not restore.is_file():
        return None
    tuning = read_json_object(restore).get("tuning") or []
    chosen = [t.get("hyper") for t in tuning if isinstance(t, dict) and t.get("chosen")]
    if len(chosen) != 1 or not isinstance(chosen[0], dict):
        return None
    return ", ".join(f"{k} {v}" for k, v in chosen[0].items()) + f" (of {len(tuning)})"


def kept_test(treebank: str, folds: Dict[int, Dict[str, dict]], metrics: Path, a: Tuple[str, str],
              b: Tuple[str, str], n_permutations: int) -> dict:
    """Paired permutation test of ``a`` against ``b`` (``(system, trees)``) over every kept fold's
    test sentences, from the kept predictions."""
    import numpy as np
    from spacy_punctgen.evaluation.metrics import paired_permutation_test
    from spacy_punctgen.data.preprocess import preprocess_file

    losses: Dict[Tuple[str, str], list] = {a: [], b: []}
    n_slots = 0
    for k, systems in folds.items():
        kept = kept_paths(metrics, fold_name(treebank, k))
        gold = preprocess_file(kept["punct"])[0]
        n_slots += sum(len(g.slots) for g in gold)
        for system, trees in (a, b):
            recorded = systems[system].get(f"predictions_{trees}")
            if not recorded:
                raise ValueError(f"fold {k}: {system} names no {trees}-tree predictions")
            losses[(system, trees)].append(prediction_losses(str(kept["predictions"] / Path(recorded).name), gold))
    la, lb = (np.concatenate(losses[x]) for x in (a, b))
    return {"aed_a": float(la.sum()) / n_slots, "aed_b": float(lb.sum()) / n_slots, "edits_a": float(la.sum()),
            "edits_b": float(lb.sum()), "n_sentences": int(la.size), "n_slots": n_slots,
            "permutations": n_permutations, "p": paired_permutation_test(la, lb, n_permutations=n_permutations)}


def _edits(ms: List[Optional[dict]], key: str) -> Tuple[Optional[int], Optional[int]]:
    """Edits and slots over the folds (each fold's AED times its slots), as kept_test counts them."""
    if any(m is None or m.get(key) is None or not m.get("n_slots") for m in ms):
        return None, None
    return round(sum(m[key] * m["n_slots"] for m in ms)), sum(m["n_slots"] for m in ms)


def _earlier_test(previous: Optional[str], a: str, b: str, edits_a, edits_b, n_slots) -> Optional[str]:
    """The earlier table's test line of ``a`` against ``b``, if it was computed from these very
    edits (so from the same predictions, as far as the metrics can tell)."""
    if previous is None or None in (edits_a, edits_b):
        return None
    for line in previous.splitlines():
        if (line.startswith(f"Kept folds together: {a} on parsed trees ") and "p = " in line
                and f"({edits_a} edits) vs the best baseline {b} " in line
                and f"({edits_b} edits) over {n_slots} slots;" in line):
            return line
    return None


def _significance(treebank: str, folds: Dict[int, Dict[str, dict]], metrics: Path, n_permutations: int,
                  previous: Optional[str] = None) -> List[str]:
    ks = list(folds)
    together = lambda s, key: _pooled([folds[k].get(s) for k in ks], key)  # noqa: E731
    systems = set().union(*folds.values())
    ours = {s: together(s, "aed_parsed") for s in systems if is_punctgen(s)}
    theirs = {s: together(s, "aed_gold") for s in systems if not is_punctgen(s)}
    ours, theirs = ({s: v for s, v in d.items() if v is not None} for d in (ours, theirs))
    if not ours or not theirs:
        return []
    a, b = min(ours, key=ours.get), min(theirs, key=theirs.get)
    not_here = {k: missing_copies(metrics, fold_name(treebank, k)) for k in ks}
    not_here = {k: v for k, v in not_here.items() if v}
    if not_here:
        why = copies_not_here(treebank, list(not_here), next(iter(not_here.values()))[0])
        edits_a, n_slots = _edits([folds[k].get(a) for k in ks], "aed_parsed")
        edits_b, n_slots_b = _edits([folds[k].get(b) for k in ks], "aed_gold")
        earlier = _earlier_test(previous, a, b, edits_a, edits_b, n_slots) if n_slots == n_slots_b else None
        if earlier is not None:
            return ["", earlier, "", f"(That test is the earlier table's, computed from the same edits: here {why}.)"]
        return ["", f"Kept folds together: {a} on parsed trees vs the best baseline {b}: no paired permutation "
                    f"test here, since {why}."]
    t = kept_test(treebank, folds, metrics, (a, "parsed"), (b, "gold"), n_permutations)
    verdict = "fewer edits" if t["edits_a"] < t["edits_b"] else "more edits" if t["edits_a"] > t["edits_b"] else "tied"
    verdict += ", significant at 0.05" if t["p"] < 0.05 else ", not significant at 0.05"
    return ["", f"Kept folds together: {a} on parsed trees {t['aed_a']:.4f} ({t['edits_a']:.0f} edits) vs the best "
                f"baseline {b} {t['aed_b']:.4f} ({t['edits_b']:.0f} edits) over {t['n_slots']} slots; paired "
                f"permutation test ({t['permutations']} sign flips over {t['n_sentences']} sentences) "
                f"p = {t['p']:.4g} ({verdict})."]


def markdown(treebank: str, folds: Dict[int, Dict[str, dict]], metrics: Path, n_permutations: int = 10000,
             previous: Optional[str] = None) -> str:
    """The table (see the module docstring); ``previous``: the earlier table, whose permutation
    test is kept where the predictions to redo it are not here but the edits are unchanged."""
    ks = list(folds)
    systems = sorted(set().union(*folds.values()), key=lambda s: (not is_punctgen(s), s))
    head = "| system | trees | " + " | ".join(f"fold {k}" for k in ks) + " | kept folds together |"
    rule = "|---|---|" + "---:|" * (len(ks) + 1)
    parsers = [fold_parser(metrics, fold_name(treebank, k)) for k in ks]
    las = weighted([p["las"] for p in parsers], [p["words"] for p in parsers])
    rows = ["| parser of unpunctuated text | LAS | " + " | ".join(fmt(p["las"], 3) for p in parsers)
            + f" | {fmt(las, 3)} |"]
    for s in systems:
        ms = [folds[k].get(s) for k in ks]
        baseline = not is_punctgen(s)  # words only: its two columns are equal
        for trees in (("gold",) if baseline else ("gold", "parsed")):
            key = f"aed_{trees}"
            cells = [fmt(m.get(key) if m else None, 4) for m in ms]
            rows.append(f"| {s} | {'words' if baseline else trees} | " + " | ".join(cells)
                        + f" | {fmt(_pooled(ms, key), 4)} |")
    n = [max((m.get("n_sentences") or 0) for m in folds[k].values()) for k in ks]
    out = [f"{treebank}: {len(ks)} kept folds ({', '.join(map(str, ks))}), {sum(n)} test sentences; "
           "test AED (edits per slot)", "", head, rule, *rows]
    out += _significance(treebank, folds, metrics, n_permutations, previous)
    points = {s: [chosen_point(metrics / fold_name(treebank, k) / "restore" / f"{s}_gold.json") for k in ks]
              for s in systems}
    tuned = [s for s in systems if any(points[s])]
    if tuned:
        out += ["", "Baseline points chosen on dev (lowest dev AED of the grid):", "",
                "| system | " + " | ".join(f"fold {k}" for k in ks) + " |", "|---|" + "---|" * len(ks)]
        for s in tuned:
            cells = [fmt(point) for point in points[s]]
            out.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("treebank", help="the cross-validated treebank, e.g. cs_cltt (its folds are <treebank>_cv<k>)")
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--output", type=Path, default=None, help="write the Markdown here (default: stdout)")
    p.add_argument("--permutations", type=int, default=10000)
    args = p.parse_args(argv)
    try:
        if args.permutations < 1:
            raise ValueError(f"--permutations must be at least 1, got {args.permutations}")
        previous = args.output.read_text(encoding="utf-8") if args.output and args.output.is_file() else None
        text = markdown(args.treebank, kept_folds(args.treebank, args.metrics), args.metrics, args.permutations,
                        previous)
    except (OSError, ValueError) as e:
        print(f"fold_table: {e}", file=sys.stderr)
        return 1
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
