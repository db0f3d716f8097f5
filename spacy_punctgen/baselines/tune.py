"""Grid search of a baseline's hyperparameters on dev.

Why: the issue asks for every baseline tuned honestly on dev, in the workflow rather than
by hand.  ``--tune c2=0.01,0.1,1.0`` fits one system per point of the grid (the product
of every ``--tune`` option, on top of the fixed ``--hyper`` values), scores each on dev
and keeps the one with the lowest dev AED; ties go to the lower dev perplexity, then to
the earlier point.  Test is never looked at.
"""
from __future__ import annotations

import itertools
import json
from typing import Callable, Dict, List, Tuple


def parse_grid(items: List[str]) -> Dict[str, list]:
    """``["c2=0.1,1.0", "window=1,2"]`` -> ``{"c2": [0.1, 1.0], "window": [1, 2]}``
    (values parsed as JSON where they are JSON, else kept as strings).  One item may hold
    several keys separated by ``;`` (``"c2=0.1,1.0;window=1,2"``), so a single workflow
    variable can name a whole grid."""
    grid: Dict[str, list] = {}
    for item in (part for raw in items or [] for part in raw.split(";")):
        if not item:
            continue
        if "=" not in item:
            raise ValueError(f"--tune expects key=v1,v2,..., got {item!r}")
        key, values = item.split("=", 1)
        if not key or not values:
            raise ValueError(f"--tune expects key=v1,v2,..., got {item!r}")
        if key in grid:
            raise ValueError(f"--tune names {key!r} twice")
        grid[key] = [json_or_str(v) for v in values.split(",")]
    return grid


def json_or_str(value: str):
    """A command-line value: JSON where it parses (numbers, booleans), else the string."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def grid_points(grid: Dict[str, list]) -> List[Dict]:
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def select_on_dev(fit: Callable[[Dict], object], score_dev: Callable[[object], Dict],
                  grid: Dict[str, list], fixed: Dict) -> Tuple[object, List[Dict]]:
    """Fit ``fit({**fixed, **point})`` for every grid point and return the system with
    the best dev report (lowest AED, then lowest perplexity) and one row per point."""
    overlap = set(grid) & set(fixed)
    if overlap:
        raise ValueError(f"{sorted(overlap)} given both by --hyper and by --tune")
    best, best_key, best_i, rows = None, None, -1, []
    for i, point in enumerate(grid_points(grid)):
        system = fit({**fixed, **point})
        rep = score_dev(system)
        ppl = rep.get("perplexity_per_slot")
        rows.append({"hyper": point, "dev_aed": rep["aed"], "dev_perplexity_per_slot": ppl,
                     "chosen": False})
        key = (rep["aed"], float("inf") if ppl is None else ppl)
        if best_key is None or key < best_key:
            best, best_key, best_i = system, key, i
    rows[best_i]["chosen"] = True
    return best, rows
