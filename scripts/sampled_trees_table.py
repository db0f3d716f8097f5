"""The Markdown table of AED against the number of trees from ``scripts/sampled_trees_curve.py``
output files (docs/decoding.md, "Trees drawn from the parser").

Usage:
    python scripts/sampled_trees_table.py NAME=CURVE.json [NAME=CURVE.json ...]

One column pair per file (AED and edits), one row per k, and each row's distinct trees per
sentence and parse cost against the greedy parse (from the first file).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def table(curves) -> str:
    names = [n for n, _ in curves]
    rows = {}
    for name, data in curves:
        for r in data["rows"]:
            rows.setdefault(r["k"], {})[name] = r
    head = "| k | " + " | ".join(f"{n} AED (edits)" for n in names) + \
           f" | distinct trees ({names[0]}) | parse cost vs greedy ({names[0]}) |"
    lines = [head, "|" + "---:|" * (len(names) + 3)]
    for k in sorted(rows):
        cells = [f"{rows[k][n]['aed']:.4f} ({rows[k][n]['edits']:,.0f})" if n in rows[k] else "–" for n in names]
        first = rows[k].get(names[0], {})
        cost = first.get("cost_vs_greedy")
        tail = f" | {first['mean_trees']:.2f} | {cost:.2f} |" if cost is not None else " | – | – |"
        lines.append(f"| {k} | " + " | ".join(cells) + tail)
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("curves", nargs="+", help="NAME=path of a sampled_trees_curve.py output")
    args = p.parse_args(argv)
    curves = []
    try:
        for item in args.curves:
            name, sep, path = item.partition("=")
            if not sep:
                raise ValueError(f"{item!r}: give NAME=PATH")
            curves.append((name, json.loads(Path(path).read_text(encoding="utf-8"))))
    except (ValueError, OSError) as e:
        print(f"sampled_trees_table: {e}", file=sys.stderr)
        return 1
    print(table(curves))
    return 0


if __name__ == "__main__":
    sys.exit(main())
