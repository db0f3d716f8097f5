"""Grid search of a baseline's hyperparameters on dev.

Why: the issue asks for every baseline tuned honestly on dev, in the workflow rather than
by hand.  ``--tune c2=0.01,0.1,1.0`` fits one system per point of the grid (the product
of every ``--tune`` option, on top of the fixed ``--hyper`` values), scores each on dev
and keeps the one with the lowest dev AED; ties go to the lower dev perplexity, then to
the earlier point.  Test is never looked at.

``--tune-cache DIR`` keeps every fitted point on disk (:class:`PointCache`), so a grid
search that was stopped resumes at the first point not yet fitted: one en_ewt
crf_lexical fit takes an hour or more, longer than a stopped session leaves.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from spacy_punctgen.errors import Errors


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
            raise ValueError(Errors.E587.format(item=item))
        key, values = item.split("=", 1)
        if not key or not values:
            raise ValueError(Errors.E587.format(item=item))
        if key in grid:
            raise ValueError(Errors.E588.format(key=key))
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


class PointCache:
    """Fitted grid points in a folder: one subfolder per point with the saved system and,
    written last, ``point.json`` (its hyperparameters and dev report).

    A point is reused only if everything that made it is unchanged: the system's name, its
    hyperparameters, the bytes of the training and dev files and the source files of the
    baselines package (all hashed into the subfolder's name); anything else is refitted.
    """

    def __init__(self, folder: Union[str, Path], system: str, data_files: Sequence[Union[str, Path]]):
        self.folder = Path(folder)
        h = hashlib.sha256(system.encode("utf-8"))
        for path in data_files:
            h.update(b"\0file\0" + Path(path).read_bytes())
        for src in sorted(Path(__file__).resolve().parent.glob("*.py")):
            h.update(b"\0src\0" + src.name.encode("utf-8") + b"\0" + src.read_bytes())
        self._base = h.hexdigest()

    def _dir(self, hyper: Dict) -> Path:
        key = hashlib.sha256((self._base + json.dumps(hyper, sort_keys=True)).encode("utf-8")).hexdigest()
        return self.folder / key[:24]

    def report(self, hyper: Dict) -> Optional[Dict]:
        """The dev report of an already fitted point, or None."""
        meta = self._dir(hyper) / "point.json"
        if not meta.is_file():
            return None
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, OSError) as err:
            raise ValueError(Errors.E594.format(path=meta, err=f"{type(err).__name__}: {err}",
                                                folder=meta.parent)) from None
        dev = data.get("dev") if isinstance(data, dict) else None
        if not (isinstance(dev, dict) and isinstance(dev.get("aed"), (int, float))):
            raise ValueError(Errors.E594.format(path=meta, err="no dev report with an 'aed'", folder=meta.parent))
        return dev if data.get("hyper") == json.loads(json.dumps(hyper)) else None

    def put(self, hyper: Dict, system, report: Dict) -> None:
        folder = self._dir(hyper)
        system.to_disk(folder / "system")
        tmp = folder / f".point.json.tmp{os.getpid()}"
        tmp.write_text(json.dumps({"hyper": hyper, "dev": report}, sort_keys=True), encoding="utf-8")
        tmp.replace(folder / "point.json")

    def load(self, hyper: Dict):
        from spacy_punctgen.baselines.base import load_baseline

        return load_baseline(self._dir(hyper) / "system")


def select_on_dev(fit: Callable[[Dict], object], score_dev: Callable[[object], Dict],
                  grid: Dict[str, list], fixed: Dict,
                  cache: Optional[PointCache] = None) -> Tuple[object, List[Dict]]:
    """Fit ``fit({**fixed, **point})`` for every grid point and return the system with
    the best dev report (lowest AED, then lowest perplexity) and one row per point.

    With ``cache``, a point fitted before is not fitted again (its row says ``cached``), and
    each newly fitted point is stored as soon as it is scored."""
    overlap = set(grid) & set(fixed)
    if overlap:
        raise ValueError(Errors.E589.format(keys=sorted(overlap)))
    best, best_hyper, best_key, best_i, rows = None, None, None, -1, []
    for i, point in enumerate(grid_points(grid)):
        hyper = {**fixed, **point}
        rep = cache.report(hyper) if cache is not None else None
        system, cached = None, rep is not None
        if rep is None:
            system = fit(hyper)
            rep = score_dev(system)
            if cache is not None:
                cache.put(hyper, system, rep)
        ppl = rep.get("perplexity_per_slot")
        rows.append({"hyper": point, "dev_aed": rep["aed"], "dev_perplexity_per_slot": ppl,
                     "chosen": False, **({"cached": True} if cached else {})})
        key = (rep["aed"], float("inf") if ppl is None else ppl)
        if best_key is None or key < best_key:
            best, best_hyper, best_key, best_i = system, hyper, key, i
    rows[best_i]["chosen"] = True
    if best is None:  # the best point came from the cache
        best = cache.load(best_hyper)
    return best, rows
