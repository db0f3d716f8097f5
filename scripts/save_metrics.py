"""Run a ``--json`` command and save its result as a metrics file, adding the parsers' scores.

Usage (project.yml ``evaluate``):
    python scripts/save_metrics.py OUT.json [--parser PARSER.json] [--analysis-parser P.json] \
        [--merge KEY=FILE:a.b ...] [--require k1,k2,...] [--set key=value ...] \
        [-- python -m spacy_punctgen evaluate MODEL TEST --json]

Why a script: weasel runs each script line without a shell, so ``> file`` and ``| tail``
are not available. The command's last stdout line must be one JSON object (the
``spacy_punctgen`` CLI convention for ``--json``); an ``"error"`` key or a non-zero exit
fails the step. From spaCy ``evaluate`` output files, ``dep_las``/``dep_uas`` are added
as ``parser_las``/``parser_uas`` (``--parser``: the parser of unpunctuated text, whose
LAS the paper reports next to AED on parsed trees) and ``analysis_parser_las``/
``analysis_parser_uas`` (``--analysis-parser``), unless the command already reported
them. ``--merge aed_gold=metrics/tb/restore/punctgen_gold.json:test.aed`` copies one
field (a dotted path) of another JSON file, so one system's file gathers its
perplexity and its restoration scores on gold and on parsed trees; without a
command after ``--`` the file is built from ``--merge``/``--set``/parsers alone.
Keys named by ``--require`` that were not reported are written as ``null`` and
listed under ``"missing"``, so the file's schema is stable while the evaluation grows.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def _spacy_scores(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {"las": data.get("dep_las"), "uas": data.get("dep_uas")}


_ABSENT = object()


def _merge(spec: str):
    """``KEY=FILE:a.b`` -> (KEY, the value at a.b in FILE's JSON object).

    A trailing ``?`` (``KEY=FILE:a.b?``) makes the field optional: absent -> ``_ABSENT``."""
    key, sep, rest = spec.partition("=")
    path, sep2, dotted = rest.rpartition(":")
    optional = dotted.endswith("?")
    dotted = dotted.rstrip("?")
    if not (sep and sep2 and key and path and dotted):
        raise ValueError(f"--merge needs KEY=FILE:FIELD[.FIELD...][?], got {spec!r}")
    value = json.loads(Path(path).read_text(encoding="utf-8"))
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            if optional:
                return key, _ABSENT
            raise ValueError(f"--merge {spec}: {path} has no field {dotted!r}")
        value = value[part]
    return key, value


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    cmd = argv[cut + 1:]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output", type=Path)
    p.add_argument("--parser", type=Path, default=None, help="spaCy evaluate JSON of the depunctuated-text parser")
    p.add_argument("--analysis-parser", type=Path, default=None, help="spaCy evaluate JSON of the punctuated-text parser")
    p.add_argument("--merge", action="append", default=[], metavar="KEY=FILE:FIELD",
                   help="copy FIELD (dotted path) of another JSON file as KEY")
    p.add_argument("--require", default="", help="comma-separated keys to write (null when not reported)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra fields (JSON values)")
    args = p.parse_args(argv[:cut])
    result = {}
    if cmd:
        if cmd[0] in ("python", "python3"):
            cmd[0] = sys.executable
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            print(f"save_metrics: command failed with exit status {proc.returncode}", file=sys.stderr)
            return proc.returncode
        try:
            result = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError):
            print("save_metrics: the command's last output line is not a JSON object", file=sys.stderr)
            return 1
        if not isinstance(result, dict) or "error" in result:
            print(f"save_metrics: the command reported an error: {result}", file=sys.stderr)
            return 1
        result.pop("_text", None)
    try:
        for spec in args.merge:
            key, value = _merge(spec)
            if value is not _ABSENT:
                result[key] = value
    except (OSError, ValueError) as e:
        print(f"save_metrics: {e}", file=sys.stderr)
        return 1
    for prefix, path in (("parser", args.parser), ("analysis_parser", args.analysis_parser)):
        if path is not None:
            for key, value in _spacy_scores(path).items():
                result.setdefault(f"{prefix}_{key}", value)
            result.setdefault(f"{prefix}_metrics", str(path))
    for item in args.set:
        key, _, value = item.partition("=")
        result[key] = _value(value)
    missing = [k for k in (s.strip() for s in args.require.split(",")) if k and k not in result]
    for key in missing:
        result[key] = None
    if missing:
        result["missing"] = missing
        print(f"save_metrics: not reported by the command (written as null): {', '.join(missing)}",
              file=sys.stderr)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"save_metrics: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
