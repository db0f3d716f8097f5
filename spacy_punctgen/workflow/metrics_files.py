"""The metrics folder the workflow writes: ``metrics/<treebank>/<system>.json`` (one per
system; ``parser*.json`` are the parsers'), read back for the tables."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict
from spacy_punctgen.errors import Errors


def read_json_object(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(Errors.E706.format(path=path, msg=e.msg)) from None
    if not isinstance(data, dict):
        raise ValueError(Errors.E707.format(path=path))
    return data


def read_systems(folder: Path) -> Dict[str, dict]:
    """``{system: metrics}`` of one treebank folder: every JSON file but ``parser*.json``."""
    systems = {}
    for f in sorted(folder.glob("*.json")):
        if not f.stem.startswith("parser"):
            data = read_json_object(f)
            systems[data.get("system", f.stem)] = data
    return systems


def is_punctgen(name: str) -> bool:
    """Whether a system is one of ours (``punctgen``, ``punctgen_jackknife``, ...), not a baseline."""
    return name.startswith("punctgen")


def fmt(value, digits: int = 3) -> str:
    """A table cell: ``–`` for a missing figure, ``digits`` decimals for a float."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def prediction_losses(pred_path: str, gold) -> "list":
    """Per-sentence edit distances of a predictions file against the gold sentences
    (``preprocess_file``'s), which it must match one for one."""
    from spacy_punctgen.evaluation.metrics import sentence_losses
    from spacy_punctgen.evaluation.predictions import read_predictions, slots_of

    records = read_predictions(pred_path)
    if len(records) != len(gold):
        raise ValueError(Errors.E708.format(path=pred_path, got=len(records), n=len(gold)))
    return sentence_losses([[tuple(s) for s in g.slots] for g in gold], slots_of(records))


def report_training(record: dict, path) -> None:
    """A training script's record: written as JSON to ``path`` (if given, folders made) and
    printed as one JSON line, the last line of the script's output."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record))
