"""Every project file (the core ``project.yml`` and each study's ``experiments/<study>/project.yml``)
loads with weasel's own loader and names only scripts, modules and commands that exist; the core
stays short enough to read in one sitting; a study command runs, for real, in the repository root.

A study either runs every command in the repository root (``python ../at_root.py ...``: its paths
and vars mean what the core's do) or in its own folder (weasel's default: its paths are relative to
that folder)."""
import importlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "project.yml"
STUDIES = sorted((ROOT / "experiments").glob("*/project.yml"))
PROJECT_FILES = [CORE, *STUDIES]
AT_ROOT = "python ../at_root.py "
_IMPORT = re.compile(r"from ([\w.]+) import ([\w, ]+)")


def _id(path: Path) -> str:
    return str(path.parent.relative_to(ROOT)) if path != CORE else "core"


def _loaded(path: Path, tmp_path: Path) -> dict:
    """weasel's ``load_project_config`` on a copy at the same depth under ``tmp_path`` (the loader
    creates the file's ``directories``: there, not in the repository)."""
    copy = tmp_path / path.relative_to(ROOT)
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, copy)
    from weasel.util import load_project_config

    return load_project_config(copy.parent)


def _at_root(path: Path) -> bool:
    """Whether a study runs its commands in the repository root: all of them, or none."""
    lines = [line for c in srsly.read_yaml(path)["commands"] for line in c["script"]]
    rooted = [line.startswith(AT_ROOT) for line in lines]
    assert all(rooted) or not any(rooted), f"{_id(path)}: some commands run in the root, some not"
    return path != CORE and all(rooted)


def _lines(config: dict, rooted: bool):
    """``(command, argv)`` of every script line, as it runs (through at_root.py: in the root)."""
    for cmd in config["commands"]:
        for line in cmd["script"]:
            yield cmd["name"], shlex.split(line[len(AT_ROOT):] if rooted else line)


def test_there_are_studies():
    assert len(STUDIES) >= 5 and (ROOT / "experiments" / "at_root.py").is_file()


@pytest.mark.parametrize("path", PROJECT_FILES, ids=_id)
def test_loads_with_weasels_loader(path, tmp_path):
    config = _loaded(path, tmp_path)  # schema, workflows naming known commands, vars substituted
    assert config["commands"] and "${" not in str(config["commands"])
    names = [c["name"] for c in config["commands"]]
    assert len(names) == len(set(names))
    for workflow, steps in config.get("workflows", {}).items():
        assert steps and set(steps) <= set(names), workflow


def test_the_core_names_are_not_redefined_by_a_study_that_runs_in_the_root():
    """`scripts/reproduce.py` runs each step in the folder of the file defining it (the core's first)."""
    core = srsly.read_yaml(CORE)
    names = {*core["workflows"], *(c["name"] for c in core["commands"])}
    for path in filter(_at_root, STUDIES):
        raw = srsly.read_yaml(path)
        assert not names & {*raw.get("workflows", {}), *(c["name"] for c in raw["commands"])}, _id(path)


def test_the_core_vars_mean_the_same_in_every_study_that_runs_in_the_root():
    """`--vars.treebank en_ewt` (and every other core var) has the core's default there."""
    core = srsly.read_yaml(CORE)["vars"]
    for path in filter(_at_root, STUDIES):
        for key, value in srsly.read_yaml(path)["vars"].items():
            assert core.get(key, value) == value, f"vars.{key}: {_id(path)}"


@pytest.mark.parametrize("path", PROJECT_FILES, ids=_id)
def test_every_script_module_and_repository_dep_exists(path, tmp_path):
    rooted = _at_root(path)
    cwd = ROOT if path == CORE or rooted else path.parent  # where the commands run
    config = _loaded(path, tmp_path)
    for name, argv in _lines(config, rooted):
        assert argv[0] == "python", name
        if argv[1] == "-m":
            assert importlib.util.find_spec(argv[2]) is not None, f"{name}: no module {argv[2]}"
        elif argv[1] == "-c":
            for module, attrs in _IMPORT.findall(argv[2]):
                mod = importlib.import_module(module)
                for attr in (a.strip() for a in attrs.split(",")):
                    assert hasattr(mod, attr), f"{name}: {module} has no {attr}"
        else:
            assert (cwd / argv[1]).is_file(), f"{name}: no script {argv[1]}"
        for arg in argv[2:]:
            if re.fullmatch(r"(\.\./)*(scripts|configs)/[\w./-]+\.(py|cfg)", arg):
                assert (cwd / arg).is_file(), f"{name}: {arg}"
    for cmd in config["commands"]:
        for dep in cmd.get("deps", []):
            if re.fullmatch(r"(\.\./)*(scripts|configs)/[\w./-]+\.(py|cfg)", dep):
                assert (path.parent / dep).is_file(), f"{cmd['name']}: dep {dep}"
        for item in (*cmd.get("deps", []), *cmd.get("outputs", [])) if rooted else ():
            # weasel checks deps and outputs from the study's folder: written from the root
            assert item.startswith("../../"), f"{cmd['name']}: {item}"


def test_core_is_read_in_one_sitting():
    lines = CORE.read_text(encoding="utf8").splitlines()
    assert len(lines) <= 300
    assert max(len(line) for line in lines) <= 200


def test_a_study_command_runs_in_the_repository_root(tmp_path):
    """`spacy project run CMD experiments/<study>` from a copy: the output lands under the root, the
    metrics record the root-relative path they were given, and a rerun skips."""
    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.convert import convert_file

    proj = tmp_path / "repo"
    shutil.copytree(ROOT / "experiments", proj / "experiments", ignore=shutil.ignore_patterns("project.lock"))
    sample = ROOT / "assets" / "sample"
    test = proj / "corpus" / "en_sample" / "punct" / "test.conllu"
    convert_file(find_split(sample, "test"), test)  # what `preprocess` writes there (protocol standard)
    run = [sys.executable, "-m", "spacy", "project", "run", "stream-restore-trivial",
           str(proj / "experiments" / "streams")]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    first = subprocess.run(run, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    metrics = srsly.read_json(proj / "metrics" / "en_sample" / "stream" / "trivial.json")
    assert metrics["test"] == "corpus/en_sample/punct/test.conllu" and metrics["system"] == "trivial"
    assert not (proj / "experiments" / "streams" / "metrics").exists()
    second = subprocess.run(run, capture_output=True, text=True, env=env, timeout=300)
    assert second.returncode == 0 and "Skipping 'stream-restore-trivial': nothing changed" in second.stdout


@pytest.mark.parametrize("path", PROJECT_FILES, ids=_id)
def test_the_documents_a_command_rewrites_hold_its_markers(path):
    """`results-table --readme F` and `stream-table --doc F` rewrite a block of F between markers."""
    from weasel.util.config import substitute_project_variables

    rooted = _at_root(path)
    cwd = ROOT if path == CORE or rooted else path.parent
    config = substitute_project_variables(srsly.read_yaml(path), {"vars.treebank": "en_ewt"})
    for name, argv in _lines(config, rooted):
        opts = dict(zip(argv, argv[1:]))
        if "--readme" in opts:
            text = (cwd / opts["--readme"]).read_text(encoding="utf8")
            assert "<!-- results-summary:start -->" in text and "<!-- results-summary:end -->" in text, name
        if "--doc" in opts:
            stem = Path(opts["--table"]).stem
            text = (cwd / opts["--doc"]).read_text(encoding="utf8")
            assert f"<!-- stream-table:{stem} start -->" in text and f"<!-- stream-table:{stem} end -->" in text, name
