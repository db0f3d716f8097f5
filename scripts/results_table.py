"""One Markdown table of every system on every treebank, from ``metrics/<treebank>/<system>.json``.

Usage (project.yml ``results``):
    python scripts/results_table.py [--metrics metrics] [--corpus corpus] [--output results.md] \
        [--permutations 10000]

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
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

COLUMNS = ["treebank", "system", "protocol", "ppl/slot", "AED gold", "AED parsed", "comma F1", "parser LAS"]


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _comma_f1(m: dict) -> Optional[float]:
    value = m.get("comma_f1_gold", m.get("comma_f1"))
    if isinstance(value, dict):
        value = value.get("f1")
    return value


def read_json_object(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    return data


def read_systems(folder: Path) -> Dict[str, dict]:
    """``{system: metrics}`` of one treebank folder: every JSON file but ``parser*.json``."""
    systems = {}
    for f in sorted(folder.glob("*.json")):
        if not f.stem.startswith("parser"):
            data = read_json_object(f)
            systems[data.get("system", f.stem)] = data
    return systems


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
        order = sorted(systems, key=lambda s: (not _is_punctgen(s), s != "punctgen", s))
        for name in order:
            m = systems[name]
            rows.append([tb, name, _protocol(tb, m, root), _fmt(m.get("perplexity_per_slot")),
                         _fmt(m.get("aed_gold")), _fmt(m.get("aed_parsed")), _fmt(_comma_f1(m)),
                         _fmt(m.get("parser_las"))])
    return rows


def markdown(rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" if i < 3 else "---:" for i in range(len(COLUMNS))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _losses(pred_path: str, gold) -> "list":
    from spacy_punctgen.metrics import sentence_losses
    from spacy_punctgen.predictions import read_predictions, slots_of

    records = read_predictions(pred_path)
    if len(records) != len(gold):
        raise ValueError(f"{pred_path}: {len(records)} predictions for {len(gold)} test sentences")
    return sentence_losses([[tuple(s) for s in g.slots] for g in gold], slots_of(records))


def _is_punctgen(name: str) -> bool:
    return name.startswith("punctgen")


def significance(metrics: Dict[str, Dict[str, dict]], corpus: Path, n_permutations: int) -> List[str]:
    """One line per treebank, punctgen system and tree kind: vs. the best baseline on gold trees."""
    from spacy_punctgen.metrics import paired_permutation_test
    from spacy_punctgen.preprocess import preprocess_file

    lines = []
    for tb, systems in metrics.items():
        variants = sorted((k for k in systems if _is_punctgen(k)), key=lambda k: (k != "punctgen", k))
        baselines = {k: v for k, v in systems.items() if not _is_punctgen(k) and v.get("aed_gold") is not None}
        test = corpus / tb / "punct" / "test.conllu"
        if not variants or not baselines or not test.is_file():
            continue
        best = min(baselines, key=lambda k: baselines[k]["aed_gold"])
        gold = None
        for name, trees in ((v, t) for v in variants for t in ("gold", "parsed")):
            a, b = systems[name].get(f"predictions_{trees}"), baselines[best].get(f"predictions_{trees}")
            if not (a and b and Path(a).is_file() and Path(b).is_file()):
                continue
            if gold is None:
                gold = preprocess_file(test)[0]
            la, lb = _losses(a, gold), _losses(b, gold)
            p = paired_permutation_test(la, lb, n_permutations=n_permutations)
            lines.append(f"- {tb}, {trees} trees: {name} AED {la.sum() / sum(len(g.slots) for g in gold):.4f} vs "
                         f"{best} {lb.sum() / sum(len(g.slots) for g in gold):.4f}; paired permutation test "
                         f"({n_permutations} sign flips over {len(gold)} sentences) p = {p:.4g}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--corpus", type=Path, default=Path("corpus"))
    p.add_argument("--output", type=Path, default=None, help="write the Markdown here (default: stdout)")
    p.add_argument("--permutations", type=int, default=10000)
    p.add_argument("--exclude", action="append", default=[], metavar="TREEBANK",
                   help="leave this treebank folder out (e.g. en_sample, the smoke run's)")
    args = p.parse_args(argv)
    try:
        metrics = {tb: m for tb, m in load_metrics(args.metrics).items() if tb not in args.exclude}
        text = markdown(table(metrics, args.metrics))
        sig = significance(metrics, args.corpus, args.permutations)
    except (OSError, ValueError) as e:
        print(f"results_table: {e}", file=sys.stderr)
        return 1
    if sig:
        text += "\nPunctgen vs. the best baseline (lowest AED on gold trees):\n\n" + "\n".join(sig) + "\n"
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
