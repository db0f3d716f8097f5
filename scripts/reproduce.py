"""Run the restoration table's workflows for every treebank of ``configs/treebanks.yml``.

Usage (docs/workflow.md, "The whole restoration table"):
    python scripts/reproduce.py [--ud-root ../shared/ud] [--only cs_cltt,hi_hdtb_ud12pre] [--dry-run] [--force]

Why a script: a spaCy workflow runs one treebank with one set of vars, and the table needs
seven treebanks, each with its own language, data protocol, templates and seed parsers. For
each treebank this runs, with ``spacy project run``: the workflows ``all``,
``baselines`` and ``jackknife``; ``train-parser-seed`` and ``parse-test-seed`` for each
seed; ``evaluate-mixture``; the workflow ``degraded`` for each fraction and ``plot-aed-las``;
and finally ``results-table`` once (each step in the project folder whose file defines it: the
core ``project.yml`` or a study's ``experiments/<study>/project.yml``). A treebank with protocol ``cv`` (cross-validation) runs
those steps once per fold, as the treebank ``<name>_cv<k>`` with ``cv_fold`` k, then
``keep-fold`` (the fold's test file and predictions kept in ``metrics/<name>_cv<k>/kept/``,
of which only the record ``kept.json`` is committed), then ``fold-table`` (the kept folds so
far, in ``results/folds_<name>.md``), and then ``pool-folds``, which pools the kept folds into
``metrics/<name>/``. ``--folds`` runs some folds only; ``pool-folds`` still runs when every
other fold is kept already in this clone (by an earlier session here: prediction files and
copies of test data are not committed, so a fold kept in another clone is rerun here first,
with ``--folds``; a line on stderr names such folds). Every command and its exit status go to
``training/reproduce.log``; the first failure stops the run.

Sharing one treebank between two processes (``--skip``): after ``all``, the steps
``baselines``, ``jackknife`` and the seed parsers read only what ``all`` wrote and write
disjoint files, so one process can run ``--skip jackknife,train-parser-seed,parse-test-seed,
evaluate-mixture,keep-fold,fold-table,pool-folds,results-table`` while a second, started once ``all``
is done, runs ``--skip all,baselines,keep-fold,fold-table,pool-folds,results-table``; a last run with no
``--skip`` then finds every step done and runs the rest. (weasel writes ``project.lock``
in place, so two steps ending at the same instant could clash; the driver then stops at that
step, and running it again resumes there.)

Resuming: spaCy's lock file keeps one entry per command name, so after another treebank
has run, every command of the first would look changed and run again. So each command line
that exits 0 is also written to ``training/reproduce.done``, and a later run skips the
lines listed there (``--force`` runs everything). A step counts as done when a listed line
runs the same step in the same project with the same values of the vars that step reads
(``${vars.X}`` in its commands' script, deps and outputs in project.yml, and in the defaults
of those vars): changing one var of a treebank, e.g. a baseline's grid, reruns only the steps
that read it. ``keep-fold``, ``fold-table``, ``pool-folds`` and ``results-table`` (``ALWAYS_RUN``) run every
time: they are cheap, and they must collect what a rerun step wrote. Rerunning a step would not be free even where nothing changed: the lock's one
entry per command name remembers only the last seed parser, so the others would retrain.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import srsly

from spacy_punctgen.workflow.cv import fold_name, missing_copies

ROOT = Path(__file__).resolve().parents[1]


def load_plan(path: Path) -> Dict[str, dict]:
    """``{treebank: {"vars": {...}, "seeds": [...], "degraded": [...]}}``, checked, common vars merged in."""
    data = srsly.read_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("treebanks"), dict) or not data["treebanks"]:
        raise ValueError(f"{path}: needs a non-empty 'treebanks' mapping")
    common = data.get("common") or {}
    plan = {}
    for name, entry in data["treebanks"].items():
        entry = entry or {}
        unknown = set(entry) - {"vars", "seeds", "degraded"}
        if unknown:
            raise ValueError(f"{path}: treebank {name!r} has unknown keys {sorted(unknown)}")
        tb_vars = {**common, **(entry.get("vars") or {})}
        if "lang" not in tb_vars or "protocol" not in tb_vars:
            raise ValueError(f"{path}: treebank {name!r} needs vars 'lang' and 'protocol'")
        seeds = [int(s) for s in entry.get("seeds") or []]
        if any(s <= 0 for s in seeds) or len(set(seeds)) != len(seeds):
            raise ValueError(f"{path}: treebank {name!r}: seeds must be distinct positive integers "
                             f"(seed 0 is the `all` parser's), got {seeds}")
        degraded = [float(f) for f in entry.get("degraded") or []]
        if tb_vars["protocol"] == "cv":
            if degraded:
                raise ValueError(f"{path}: treebank {name!r}: degraded parsers need one test split, "
                                 f"not protocol cv")
            if int(tb_vars.get("cv_folds", 10)) < 3:
                raise ValueError(f"{path}: treebank {name!r}: cv_folds must be at least 3")
        plan[name] = {"vars": tb_vars, "seeds": seeds, "degraded": degraded}
    return plan


# Cheap steps that collect what earlier steps wrote: run every time, since an earlier step may
# have rerun (a baseline's grid changed) while their own vars stayed the same.
ALWAYS_RUN = {"keep-fold", "fold-table", "pool-folds", "results-table"}

_VAR = re.compile(r"\$\{vars\.([A-Za-z0-9_]+)\}")


def load_projects(root: Path = ROOT) -> Tuple[dict, Dict[str, Path]]:
    """The core ``project.yml`` and every study's ``experiments/<study>/project.yml`` as one
    project, and each step's folder; a name defined twice is the first file's (the core's)."""
    merged, where = {"vars": {}, "workflows": {}, "commands": []}, {}
    for path in [root / "project.yml", *sorted((root / "experiments").glob("*/project.yml"))]:
        project = srsly.read_yaml(path)
        for key, value in (project.get("vars") or {}).items():
            merged["vars"].setdefault(key, value)
        for name, steps in (project.get("workflows") or {}).items():
            if name not in where:
                merged["workflows"][name], where[name] = steps, path.parent
        for cmd in project.get("commands") or []:
            if cmd["name"] not in where:
                merged["commands"].append(cmd)
                where[cmd["name"]] = path.parent
    return merged, where


@functools.lru_cache(maxsize=1)
def _step_dirs() -> Dict[str, Path]:
    return load_projects()[1]


def step_vars(project: dict, step: str) -> Set[str]:
    """The vars a workflow or command of ``project`` (project.yml, unresolved) reads."""
    commands = {c["name"]: c for c in project.get("commands", [])}
    names = (project.get("workflows") or {}).get(step, [step])
    unknown = [n for n in names if n not in commands]
    if unknown:
        raise ValueError(f"project.yml has no command {unknown[0]!r} (step {step!r})")
    text = json.dumps([[commands[n].get(k) for k in ("script", "deps", "outputs", "outputs_no_cache")]
                       for n in names])
    used, todo = set(), set(_VAR.findall(text))
    defaults = project.get("vars") or {}
    while todo:  # a var's default may read other vars
        name = todo.pop()
        if name not in used:
            used.add(name)
            todo |= set(_VAR.findall(str(defaults.get(name, ""))))
    return used


def signature(line: str, project: dict) -> Optional[Tuple[str, str, Tuple[Tuple[str, str], ...]]]:
    """``(step, project dir, the values of the vars the step reads)`` of a done line; None for
    a step project.yml no longer has (nothing can match it)."""
    argv = shlex.split(line)
    if argv[:4] != ["-m", "spacy", "project", "run"] or len(argv) < 6:
        raise ValueError(f"not a `spacy project run` line: {line!r}")
    step, root = argv[4], argv[5]
    try:
        used = step_vars(project, step)
    except ValueError:
        return None
    opts = dict(zip(argv[6::2], argv[7::2]))
    values = sorted((k[len("--vars."):], v) for k, v in opts.items()
                    if k.startswith("--vars.") and k[len("--vars."):] in used)
    return step, root, tuple(values)


def _vars(values: dict) -> List[str]:
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            value = str(value).lower()
        out += [f"--vars.{key}", str(value)]
    return out


def commands(name: str, entry: dict, ud_root: Path, folds: Optional[List[int]] = None,
             metrics: Path = ROOT / "metrics") -> List[Tuple[str, List[str]]]:
    """``(label, argv)`` of every ``spacy project run`` for one treebank, in order.

    With protocol ``cv``, each fold runs every step under the name ``<name>_cv<k>`` (its own
    corpus/, training/ and metrics/ folders) and then ``keep-fold``; ``fold-table`` then
    tabulates the folds kept so far, and ``pool-folds`` pools them as ``name``. ``folds`` restricts that to some folds (several sessions can
    share the work): ``pool-folds`` is then left out (and a line on stderr says why) unless every
    fold not listed is kept already in this clone, copies included (``metrics/<name>_cv<k>/kept/``,
    ``spacy_punctgen.workflow.cv.missing_copies``: the copies are not committed).
    """
    # relative to the project when it can be, as the lock file then is
    ud_dir = os.path.relpath(ud_root / name, ROOT) if ud_root.is_absolute() else str(ud_root / name)
    base = {"ud_dir": ud_dir, "treebank": name, **entry["vars"]}
    if entry["vars"]["protocol"] != "cv":
        return _treebank_commands(name, base, entry)
    k = int(entry["vars"].get("cv_folds", 10))
    chosen = list(range(k)) if folds is None else sorted(set(folds))
    if any(not 0 <= f < k for f in chosen):
        raise ValueError(f"--folds: {name} has folds 0..{k - 1}, got {chosen}")
    out = []
    for fold in chosen:
        fold_tb = fold_name(name, fold)
        values = {**base, "treebank": fold_tb, "cv_fold": fold}
        out += _treebank_commands(fold_tb, values, entry)
        out.append((f"{fold_tb}: keep-fold", _run("keep-fold", values)))
    out.append((f"{name}: fold-table", _run("fold-table", base)))
    not_here = [j for j in range(k) if j not in chosen and missing_copies(metrics, fold_name(name, j))]
    if not_here:
        print(f"reproduce: {name}: pool-folds left out: folds {not_here} are not kept in this clone "
              f"(keep-fold's copies of test files and predictions are not committed; --folds "
              f"{','.join(map(str, not_here))} runs them here)", file=sys.stderr)
    else:
        out.append((f"{name}: pool-folds", _run("pool-folds", base)))
    return out


def _run(step: str, values: dict) -> List[str]:
    return [sys.executable, "-m", "spacy", "project", "run", step, str(_step_dirs().get(step, ROOT)), *_vars(values)]


def _treebank_commands(name: str, base: dict, entry: dict) -> List[Tuple[str, List[str]]]:
    run = lambda step, **extra: _run(step, {**base, **extra})  # noqa: E731
    out = [(f"{name}: {w}", run(w)) for w in ("all", "baselines", "jackknife")]
    for seed in entry["seeds"]:
        out.append((f"{name}: train-parser-seed {seed}", run("train-parser-seed", parser_seed=seed)))
        out.append((f"{name}: parse-test-seed {seed}", run("parse-test-seed", parser_seed=seed)))
    if entry["seeds"]:
        out.append((f"{name}: evaluate-mixture", run("evaluate-mixture", parser_seed=entry["seeds"][-1])))
    for fraction in entry["degraded"]:
        out.append((f"{name}: degraded {fraction}", run("degraded", parser_fraction=fraction)))
    if entry["degraded"]:
        out.append((f"{name}: plot-aed-las", run("plot-aed-las")))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", type=Path, default=ROOT / "configs" / "treebanks.yml")
    p.add_argument("--ud-root", type=Path, default=Path("../shared/ud"),
                   help="folder holding one UD folder per treebank; a relative path is relative to the project folder")
    p.add_argument("--only", default="", help="comma-separated treebanks (default: all of the config)")
    p.add_argument("--folds", default="",
                   help="comma-separated folds of the cross-validated (protocol cv) treebanks to run "
                        "(default: all, then pool-folds; with a subset, pool-folds runs only when every "
                        "other fold is already kept, copies included, in --metrics)")
    p.add_argument("--metrics", type=Path, default=ROOT / "metrics",
                   help="the project's metrics folder, where kept folds are looked for (for tests)")
    p.add_argument("--skip", default="",
                   help="comma-separated steps (workflow or command names, e.g. baselines) to leave out of this "
                        "run, so that two processes can share one treebank's independent steps")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.add_argument("--log", type=Path, default=ROOT / "training" / "reproduce.log")
    p.add_argument("--done", type=Path, default=ROOT / "training" / "reproduce.done",
                   help="command lines that finished (skipped next time)")
    p.add_argument("--force", action="store_true", help="run every command, even those listed in --done")
    args = p.parse_args(argv)
    try:
        plan = load_plan(args.config)
        names = [n for n in args.only.split(",") if n] or list(plan)
        unknown = [n for n in names if n not in plan]
        if unknown:
            raise ValueError(f"--only: {unknown} not in {args.config} (known: {list(plan)})")
        missing = [n for n in names if not (ROOT / args.ud_root / n).is_dir()]
        if missing and not args.dry_run:
            raise ValueError(f"no UD folder for {missing} under {args.ud_root} (--ud-root)")
    except (ValueError, OSError) as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 1
    try:
        folds = [int(f) for f in args.folds.split(",") if f.strip()] or None
        steps = [c for n in names for c in commands(n, plan[n], args.ud_root, folds, args.metrics)]
    except ValueError as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 1
    steps.append(("results-table", _run("results-table", {})))
    skip = {x.strip() for x in args.skip.split(",") if x.strip()}
    try:
        project = load_projects()[0]
    except (ValueError, OSError) as e:
        print(f"reproduce: project.yml: {e}", file=sys.stderr)
        return 1
    if skip:
        known = set(project.get("workflows") or {}) | {c["name"] for c in project.get("commands") or []}
        if skip - known:
            print(f"reproduce: --skip: {sorted(skip - known)} are not workflows or commands of project.yml "
                  "or experiments/*/project.yml",
                  file=sys.stderr)
            return 1
    steps = [(label, cmd) for label, cmd in steps if cmd[5] not in skip]
    if args.dry_run:
        for label, cmd in steps:
            print(f"# {label}\n{' '.join(cmd)}")
        return 0
    args.log.parent.mkdir(parents=True, exist_ok=True)
    try:
        lines = [] if args.force or not args.done.exists() else args.done.read_text(encoding="utf-8").splitlines()
        done = {signature(line, project) for line in lines if line.strip()} - {None}
    except (ValueError, OSError) as e:
        print(f"reproduce: {args.done}: {e}", file=sys.stderr)
        return 1
    with args.log.open("a", encoding="utf-8") as log:
        for label, cmd in steps:
            line = shlex.join(cmd[1:])  # without the interpreter's path
            if cmd[5] not in ALWAYS_RUN and signature(line, project) in done:
                print(f"{label}: done before, skipped", flush=True)
                continue
            start = time.time()
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            rc = subprocess.call(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
            status = f"{label}: exit {rc} after {time.time() - start:.0f} s"
            log.write(status + "\n")
            log.flush()
            print(status, flush=True)
            if rc != 0:
                print(f"reproduce: stopped at {label!r}; see {args.log}", file=sys.stderr)
                return rc
            with args.done.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
