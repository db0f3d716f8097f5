"""AED of restoration on parsed trees against the parser's LAS (paper Figure 4), as a PNG.

Usage (project.yml ``plot-aed-las``):
    python scripts/plot_aed_las.py OUT.png --metrics metrics TREEBANK [TREEBANK ...] [--points OUT.json]

For each treebank, one point per parser of unpunctuated text: the full one
(``parser_depunct.json`` with ``restore/punctgen_parsed.json``) and the degraded ones
(``parser_depunct_frac<F>.json`` with ``restore/punctgen_parsed_frac<F>.json``, workflow
``degraded``); x = the parser's LAS on the depunctuated test split, y = punctgen's AED
with that parser's trees. The AED on gold trees (``restore/punctgen_gold.json``) is drawn
as a dashed line. A parser without a restoration file is skipped and listed on stderr.
``--points`` also writes the plotted numbers as JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _aed(data: dict) -> float:
    """AED of an ``evaluate-restore`` result (top-level ``aed``) or a baseline's (``test.aed``)."""
    return data["aed"] if "aed" in data else data["test"]["aed"]


def points(root: Path, treebank: str) -> Dict[str, object]:
    """LAS/AED pairs of one treebank, sorted by training fraction, plus the gold-tree AED."""
    folder = root / treebank
    pts: List[dict] = []
    skipped = []
    for parser in sorted(folder.glob("parser_depunct*.json")):
        suffix = parser.stem[len("parser_depunct"):]  # "" or "_frac0.1"
        restore = folder / "restore" / f"punctgen_parsed{suffix}.json"
        if not restore.is_file():
            skipped.append(str(restore))
            continue
        p = _read(parser)
        pts.append({"fraction": p.get("train_fraction", 1.0), "las": p["dep_las"], "uas": p.get("dep_uas"),
                    "aed": _aed(_read(restore)), "parser": str(parser), "restore": str(restore)})
    gold = folder / "restore" / "punctgen_gold.json"
    return {"treebank": treebank, "points": sorted(pts, key=lambda d: d["fraction"]),
            "aed_gold": _aed(_read(gold)) if gold.is_file() else None, "skipped": skipped}


def plot(series: List[dict], out: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        raise ValueError("plot_aed_las needs matplotlib: pip install 'spacy-punctgen[plots]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for k, s in enumerate(series):
        color = f"C{k}"
        xs = [100 * p["las"] for p in s["points"]]
        ys = [p["aed"] for p in s["points"]]
        ax.plot(xs, ys, "o-", color=color, label=f"{s['treebank']} (parsed trees)")
        for p, x, y in zip(s["points"], xs, ys):
            ax.annotate(f"{100 * p['fraction']:g}%", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
        if s["aed_gold"] is not None:
            ax.axhline(s["aed_gold"], color=color, linestyle="--", linewidth=1, label=f"{s['treebank']} (gold trees)")
    ax.set_xlabel("LAS of the parser of unpunctuated text (%)")
    ax.set_ylabel("AED (punctgen)")
    ax.set_title("Restoration error vs. parser quality")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=150)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output", type=Path, help="PNG to write")
    p.add_argument("treebanks", nargs="+")
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--points", type=Path, default=None, help="also write the points as JSON here")
    args = p.parse_args(argv)
    try:
        series = [points(args.metrics, tb) for tb in args.treebanks]
        for s in series:
            for path in s["skipped"]:
                print(f"plot_aed_las: {s['treebank']}: no {path}, parser skipped", file=sys.stderr)
        if not any(s["points"] for s in series):
            raise ValueError("no parser with a restoration file: run `evaluate` (and `degraded`) first")
        plot(series, args.output)
    except (OSError, ValueError, KeyError) as e:
        print(f"plot_aed_las: {e}", file=sys.stderr)
        return 1
    if args.points:
        args.points.write_text(json.dumps(series, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"output": str(args.output), "n_points": sum(len(s["points"]) for s in series)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
