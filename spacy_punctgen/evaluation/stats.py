"""``punctgen stats``: the paper's Table 2 statistics for CoNLL-U files.

Why: before training anything, one should see how much punctuation a treebank
has and how many sentences preprocessing drops (non-leaf punctuation, nothing
left, lifted arcs), computed by exactly the code the model uses.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

from spacy_punctgen.data.preprocess import PrepStats, preprocess_file
from spacy_punctgen.errors import Errors

COLUMNS = [
    ("file", "file"),
    ("sentences", "sents"),
    ("words", "words"),
    ("punct_pct", "%punct"),
    ("punct_types", "#types"),
    ("omitted_nonleaf", "#omit non-leaf"),
    ("omitted_empty", "#omit empty"),
    ("nonprojective", "#non-proj"),
]


def expand_paths(paths: List[str]) -> List[Tuple[str, List[Tuple[str, Path]]]]:
    """Group inputs: a directory yields its ``*.conllu`` files (labelled ``dir/file``)."""
    groups = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            files = sorted(p.glob("*.conllu"))
            if not files:
                raise FileNotFoundError(Errors.E549.format(path=p))
            name = p.resolve().name
            groups.append((f"{name}/ (all)", [(f"{name}/{f.name}", f) for f in files]))
        elif p.is_file():
            groups.append(("", [(arg, p)]))
        else:
            raise FileNotFoundError(Errors.E550.format(path=arg))
    return groups


def _row(label: str, stats: PrepStats) -> Dict[str, object]:
    return {"file": label, **stats.to_dict()}


def compute(paths: List[str]) -> Dict[str, object]:
    """Per-file rows, per-directory subtotals and the grand total.

    ``_rows`` (not part of the JSON) lists them in display order.
    """
    files, dirs, ordered = [], [], []
    total = PrepStats()
    for dir_label, members in expand_paths(paths):
        subtotal = PrepStats()
        for label, path in members:
            _, stats = preprocess_file(path)
            files.append(_row(label, stats))
            ordered.append(files[-1])
            subtotal += stats
        if dir_label:
            dirs.append(_row(dir_label, subtotal))
            ordered.append(dirs[-1])
        total += subtotal
    result = {"files": files, "dirs": dirs, "total": _row("total", total)}
    result["_rows"] = ordered + [result["total"]]
    return result


def _cells(r: Dict[str, object], columns) -> List[str]:
    return [f"{r['punct_pct']:.1f}" if k == "punct_pct" else str(r[k]) for k, _ in columns]


def markdown_table(result: Dict[str, object]) -> str:
    head = "| " + " | ".join(h for _, h in COLUMNS) + " |"
    rule = "|---" + "|---:" * (len(COLUMNS) - 1) + "|"
    body = []
    for r in result["_rows"]:
        cells = _cells(r, COLUMNS)
        if r["file"].endswith("/ (all)") or r is result["total"]:
            cells = [f"**{c}**" for c in cells]
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, rule] + body)


def plain_table(result: Dict[str, object]) -> str:
    rows = result["_rows"]
    width = max(len(r["file"]) for r in rows)
    widths = [max(len(h), 8) for _, h in COLUMNS[1:]]
    lines = [f"{'file':<{width}}  " + "  ".join(f"{h:>{w}}" for (_, h), w in zip(COLUMNS[1:], widths))]
    for r in rows:
        cells = _cells(r, COLUMNS[1:])
        lines.append(f"{r['file']:<{width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
    return "\n".join(lines)


