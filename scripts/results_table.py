"""One Markdown table of every system on every treebank, from ``metrics/<treebank>/<system>.json``.

Usage (project.yml ``results``):
    python scripts/results_table.py [--metrics metrics] [--corpus corpus] [--output results.md] \
        [--permutations 10000] [--readme README.md] [--significance results/significance.json]

Rows: treebank x system (every JSON file of a treebank folder except the parser files
``parser*.json``; a folder whose systems all have protocol ``cv`` is one fold of a
cross-validation, shown only through its treebank's pooled folder, scripts/pool_folds.py); columns: data protocol, per-slot perplexity, AED on gold trees, AED on
parsed trees, comma F1 (gold trees), LAS of the parser of unpunctuated text. Below the
table, per treebank, a paired permutation test (``metrics.paired_permutation_test``
over per-sentence edit distances, ``metrics.sentence_losses``) between ``punctgen`` (and
every other ``punctgen*`` system, e.g. ``punctgen_mixture``: restoration from several
parses) and the baseline with the lowest AED on gold trees, on gold and on parsed trees, when both
prediction files (``predictions_gold``/``predictions_parsed`` in the metrics files) and
the gold test file ``corpus/<treebank>/punct/test.conllu`` exist. Why a script: the
figures are written by separate commands, one file per system; the table is only read.

``--readme`` also writes the *summary* (one row per treebank with baselines: the best
``punctgen*`` AED on gold and on parsed trees, the best baseline, and the paired permutation
test between the best parsed punctgen row and that baseline) between the README's lines
``<!-- results-summary:start -->`` and ``<!-- results-summary:end -->``. A test needs the
prediction files, which are not committed (``training/``), so ``--significance`` keeps every
test computed in a JSON file and the summary reuses a kept one while both systems' AEDs in
``metrics/`` are still those it was computed from: a fresh clone that runs one treebank
does not blank the others' p-values, and a changed system is never given an old p. Each
treebank whose test file or prediction files are missing is named on stderr, with how to
regenerate them (rerun its workflows).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

from spacy_punctgen.workflow.metrics_files import fmt, is_punctgen, prediction_losses, read_json_object, read_systems

COLUMNS = ["treebank", "system", "protocol", "ppl/slot", "AED gold", "AED parsed", "comma F1", "parser LAS"]


def _comma_f1(m: dict) -> Optional[float]:
    value = m.get("comma_f1_gold", m.get("comma_f1"))
    if isinstance(value, dict):
        value = value.get("f1")
    return value


def load_metrics(root: Path) -> Dict[str, Dict[str, dict]]:
    """``{treebank: {system: metrics}}`` from ``root/<treebank>/<system>.json``."""
    out: Dict[str, Dict[str, dict]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        systems = read_systems(folder)
        if systems and not all(m.get("protocol") == "cv" for m in systems.values()):
            out[folder.name] = systems
    return out


def _protocol(treebank: str, m: dict, root: Path) -> str:
    if m.get("protocol"):
        return m["protocol"]
    parser = root / treebank / "parser_depunct.json"
    if parser.is_file():
        return json.loads(parser.read_text(encoding="utf-8")).get("protocol", "–")
    return "–"


def table(metrics: Dict[str, Dict[str, dict]], root: Path) -> List[List[str]]:
    rows = []
    for tb, systems in metrics.items():
        order = sorted(systems, key=lambda s: (not is_punctgen(s), s != "punctgen", s))
        for name in order:
            m = systems[name]
            rows.append([tb, name, _protocol(tb, m, root), fmt(m.get("perplexity_per_slot")),
                         fmt(m.get("aed_gold")), fmt(m.get("aed_parsed")), fmt(_comma_f1(m)),
                         fmt(m.get("parser_las"))])
    return rows


def markdown(rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" if i < 3 else "---:" for i in range(len(COLUMNS))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _tests(metrics: Dict[str, Dict[str, dict]], corpus: Path, n_permutations: int,
           not_here: Optional[List[str]] = None) -> List[dict]:
    """Every computable test: each punctgen system and tree kind vs. the best baseline on gold trees.
    A test whose test file or prediction files are not here is left out and, with ``not_here``,
    named there (one line per treebank)."""
    from spacy_punctgen.evaluation.metrics import paired_permutation_test
    from spacy_punctgen.data.preprocess import preprocess_file

    out = []
    for tb, systems in metrics.items():
        variants = sorted((k for k in systems if is_punctgen(k)), key=lambda k: (k != "punctgen", k))
        best = _best_baseline(systems)
        if not variants or best is None:
            continue
        test = corpus / tb / "punct" / "test.conllu"
        pairs = [(systems[v].get(f"predictions_{t}"), systems[best].get(f"predictions_{t}"), v, t)
                 for v in variants for t in ("gold", "parsed")]
        absent = [test] if not test.is_file() else sorted({Path(f) for a, b, _, _ in pairs if a and b
                                                           for f in (a, b) if not Path(f).is_file()})
        if absent and not_here is not None:
            not_here.append(f"{tb}: {len(absent)} file(s) not here, e.g. {absent[0]}")
        if not test.is_file():
            continue
        gold = None
        for a, b, name, trees in pairs:
            if not (a and b and Path(a).is_file() and Path(b).is_file()):
                continue
            if gold is None:
                gold = preprocess_file(test)[0]
                n_slots = sum(len(g.slots) for g in gold)
            la, lb = prediction_losses(a, gold), prediction_losses(b, gold)
            out.append({"treebank": tb, "system": name, "baseline": best, "trees": trees,
                        "aed": float(la.sum()) / n_slots, "aed_baseline": float(lb.sum()) / n_slots,
                        "n_sentences": len(gold), "permutations": n_permutations,
                        "p": paired_permutation_test(la, lb, n_permutations=n_permutations)})
    return out


def significance_lines(tests: List[dict]) -> List[str]:
    """One line per test, below the table."""
    return [f"- {t['treebank']}, {t['trees']} trees: {t['system']} AED {t['aed']:.4f} vs "
            f"{t['baseline']} {t['aed_baseline']:.4f}; paired permutation test "
            f"({t['permutations']} sign flips over {t['n_sentences']} sentences) p = {t['p']:.4g}"
            for t in tests]


def _best_baseline(systems: Dict[str, dict]) -> Optional[str]:
    baselines = {k: v for k, v in systems.items() if not is_punctgen(k) and v.get("aed_gold") is not None}
    return min(baselines, key=lambda k: baselines[k]["aed_gold"]) if baselines else None


def _key(t: dict) -> str:
    return f"{t['treebank']}|{t['system']}|{t['baseline']}|{t['trees']}"


def kept_tests(tests: List[dict], path: Optional[Path], metrics: Dict[str, Dict[str, dict]]) -> Dict[str, dict]:
    """The tests computed now, plus those kept in ``path`` whose two systems still have the
    AEDs they were computed from (rounded to 1e-9); every other kept test is dropped."""
    kept: Dict[str, dict] = {}
    if path is not None and path.is_file():
        data = read_json_object(path)
        for t in data.get("tests", []):
            systems = metrics.get(t.get("treebank"), {})
            a, b = systems.get(t.get("system"), {}), systems.get(t.get("baseline"), {})
            trees = t.get("trees")
            if (a.get(f"aed_{trees}") is not None and b.get(f"aed_{trees}") is not None
                    and abs(a[f"aed_{trees}"] - t["aed"]) < 1e-9 and abs(b[f"aed_{trees}"] - t["aed_baseline"]) < 1e-9
                    and _best_baseline(systems) == t["baseline"]):
                kept[_key(t)] = t
    for t in tests:
        kept[_key(t)] = t
    return dict(sorted(kept.items()))


SUMMARY_COLUMNS = ["treebank", "protocol", "parser LAS", "punctgen, gold trees", "punctgen, parsed trees",
                   "best baseline", "p (parsed, vs best baseline)"]


def summary(metrics: Dict[str, Dict[str, dict]], root: Path, tests: Dict[str, dict]) -> str:
    """One row per treebank that has baselines (see the module docstring)."""
    lines = ["| " + " | ".join(SUMMARY_COLUMNS) + " |",
             "|---|---|" + "---:|" * 3 + "---|---:|"]
    for tb, systems in metrics.items():
        best = _best_baseline(systems)
        variants = [k for k in systems if is_punctgen(k)]
        gold = [k for k in variants if systems[k].get("aed_gold") is not None]
        parsed = [k for k in variants if systems[k].get("aed_parsed") is not None]
        if best is None or not gold or not parsed:
            continue
        g = min(gold, key=lambda k: (systems[k]["aed_gold"], k))
        q = min(parsed, key=lambda k: (systems[k]["aed_parsed"], k))
        las = next((systems[k]["parser_las"] for k in (q, *variants) if systems[k].get("parser_las") is not None), None)
        n_trees = systems[q].get("n_trees")
        trees = f", {n_trees} parses" if isinstance(n_trees, int) and n_trees > 1 else ""
        t = tests.get(_key({"treebank": tb, "system": q, "baseline": best, "trees": "parsed"}))
        if t is None:
            p = "–"
        else:
            p = f"{t['p']:.2g} ({'better' if t['aed'] < t['aed_baseline'] else 'worse' if t['aed'] > t['aed_baseline'] else 'equal'})"
        lines.append("| " + " | ".join([
            tb, _protocol(tb, systems[q], root), fmt(las),
            f"{systems[g]['aed_gold']:.4f} ({g})", f"{systems[q]['aed_parsed']:.4f} ({q}{trees})",
            f"{systems[best]['aed_parsed' if systems[best].get('aed_parsed') is not None else 'aed_gold']:.4f} ({best})",
            p]) + " |")
    return "\n".join(lines) + "\n"


MARK_START, MARK_END = "<!-- results-summary:start -->", "<!-- results-summary:end -->"


def splice(text: str, block: str, where: str) -> str:
    """``text`` with everything between the two marker lines replaced by ``block``."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln.strip() == MARK_START]
    ends = [i for i, ln in enumerate(lines) if ln.strip() == MARK_END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(f"{where}: needs one line {MARK_START!r} and, after it, one line {MARK_END!r}")
    return "".join(lines[:starts[0] + 1]) + block + "".join(lines[ends[0]:])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--corpus", type=Path, default=Path("corpus"))
    p.add_argument("--output", type=Path, default=None, help="write the Markdown here (default: stdout)")
    p.add_argument("--permutations", type=int, default=10000)
    p.add_argument("--exclude", action="append", default=[], metavar="TREEBANK",
                   help="leave this treebank folder out (e.g. en_sample, the smoke run's)")
    p.add_argument("--readme", type=Path, default=None,
                   help="also write the per-treebank summary between this file's results-summary markers")
    p.add_argument("--significance", type=Path, default=None,
                   help="keep every permutation test here (JSON) and reuse those still valid in the summary")
    args = p.parse_args(argv)
    try:
        metrics = {tb: m for tb, m in load_metrics(args.metrics).items() if tb not in args.exclude}
        text = markdown(table(metrics, args.metrics))
        not_here: List[str] = []
        tests = _tests(metrics, args.corpus, args.permutations, not_here)
        kept = kept_tests(tests, args.significance, metrics)
        readme = None
        if args.readme is not None:
            readme = splice(args.readme.read_text(encoding="utf-8"), summary(metrics, args.metrics, kept),
                            str(args.readme))
    except (OSError, ValueError) as e:
        print(f"results_table: {e}", file=sys.stderr)
        return 1
    for line in not_here:
        print(f"results_table: no permutation test here for {line}", file=sys.stderr)
    if not_here:
        print("results_table: prediction files and test files are not committed (training/, corpus/); rerun a "
              "treebank's workflows to regenerate them (python scripts/reproduce.py --only <treebank>). Until then "
              "the summary reuses the tests kept in --significance (results/significance.json) while still valid.",
              file=sys.stderr)
    sig = significance_lines(tests)
    if sig:
        text += "\nPunctgen vs. the best baseline (lowest AED on gold trees):\n\n" + "\n".join(sig) + "\n"
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.significance is not None:
        args.significance.parent.mkdir(parents=True, exist_ok=True)
        args.significance.write_text(json.dumps({"tests": list(kept.values())}, indent=2, sort_keys=True) + "\n",
                                     encoding="utf-8")
    if readme is not None:
        args.readme.write_text(readme, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
