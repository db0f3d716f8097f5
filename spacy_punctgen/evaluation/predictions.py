"""Restoration predictions on disk: one JSON object per sentence (JSON Lines), so every
system (punctgen, its decoders, each baseline) writes the same format and
:mod:`spacy_punctgen.evaluation.metrics` scores them all the same way.

Each line: ``{"sent_id": str|null, "slots": [[tok, ...], ...]}`` and optionally
``"slot_probs": [float, ...]`` (the system's probability of each chosen slot string) and
``"logprob": float`` (log-probability the system gives the *gold* slot strings, for
per-slot perplexity).  The files are strict JSON: a probability or log-probability that is not
finite (a gold string the system cannot produce: ``-inf``) is written as ``null``.  Files are
read as UTF-8 with an optional byte-order mark.
"""
import json
import math
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from spacy_punctgen.errors import Errors


def write_predictions(path: Union[str, Path], records: Iterable[Dict]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf8") as f:
        for r in records:
            if "slots" not in r:
                raise ValueError(Errors.E543.format(record=r))
            f.write(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def read_predictions(path: Union[str, Path]) -> List[Dict]:
    path = Path(path)
    if not path.exists():
        raise ValueError(Errors.E544.format(path=path))
    out = []
    with path.open(encoding="utf-8-sig") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(Errors.E545.format(path=path, lineno=i, msg=e.msg)) from None
            if not isinstance(r, dict) or not isinstance(r.get("slots"), list):
                raise ValueError(Errors.E546.format(path=path, lineno=i))
            r["slots"] = [tuple(s) for s in r["slots"]]
            out.append(r)
    return out


def record(slots: Sequence[Sequence[str]], sent_id: Optional[str] = None,
           slot_probs: Optional[Sequence[float]] = None, logprob: Optional[float] = None) -> Dict:
    """One prediction record (see the module docstring)."""
    r: Dict = {"sent_id": sent_id, "slots": [list(s) for s in slots]}
    if slot_probs is not None:
        r["slot_probs"] = [_finite(p) for p in slot_probs]
    if logprob is not None:
        r["logprob"] = _finite(logprob)
    return r


def _finite(x) -> Optional[float]:
    x = float(x)
    return x if math.isfinite(x) else None


def slots_of(records: Sequence[Dict]) -> List[List[Tuple[str, ...]]]:
    return [[tuple(s) for s in r["slots"]] for r in records]
