"""``project.yml`` and the studies' ``experiments/<study>/project.yml``: structure checks (fast) and
the whole sample workflow end to end (slow). The checks read every project file as one project, each
study command as it runs (in the repository root, ``experiments/at_root.py``), so they are the checks
of the single project.yml the files were split from."""
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
import srsly

from spacy_punctgen import cli
from spacy_punctgen.data.conllu import find_split

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "project.yml"
AT_ROOT = "python ../at_root.py "
STEPS = ["preprocess", "train-parser", "train-parser-punct", "evaluate-parser", "parse-test", "train", "evaluate",
         "package"]
WORKFLOWS = {
    "all": STEPS,
    "degraded": ["preprocess-degraded", "train-parser-degraded", "evaluate-parser-degraded", "parse-test-degraded",
                 "restore-degraded"],
    "mixture": ["train-parser-seed", "parse-test-seed", "evaluate-mixture"],
    "kbest": ["parse-kbest", "restore-kbest"],
    "sampled-trees": ["sampled-trees-curve"],
    "domain": ["domain-restore"],
    "packages": ["package-shipped"],
    "jackknife": ["jackknife-parse", "train-on-parsed", "evaluate-on-parsed"],
    "baselines": [f"baseline-{s}" for s in ("trivial", "crf_lexical", "crf_tagger", "attn_tagger", "spacy_tagger")],
    "fold": ["keep-fold"],
    "cross-validation": ["fold-table", "pool-folds"],
    "results": ["results-table", "plot-aed-las"],
    "benchmarks": ["bench"],
    "stream": ["preprocess-stream", "train-parser-stream", "evaluate-parser-stream"],
    "truecase": ["preprocess-truecase", "train-truecaser", "evaluate-truecaser"],
    "what-learned": ["train-xi", "learned", "learned-summary"],
    "stream-model": ["train-stream-punctgen", "ship-stream-model", "lexical-expert"],
    "stream-restore": ["stream-restore-trivial", "stream-restore-shipped", "stream-restore-sentence-model",
                       "stream-restore-shipped-f1", "stream-restore-crf_lexical",
                       "stream-restore-table"],
    "ted": ["ted-shipped", "ted-crf_lexical", "ted-punctgen", "ted-punctgen-stream", "ted-sentence-model",
            "ted-crf_lexical-matched", "ted-adapt", "ted-table"],
    "single-sentence": ["sentence-end-expert", "single-shipped", "single-trivial", "single-crf_lexical", "single-table"],
    "correction": ["correct-train", "correct-eval", "correct-table"],
    "rephrasing": ["rephrase-eval", "rephrase-table"],
}
#: the studies' files that hold these workflows (experiments/<study>/project.yml); studies added
#: since have their own checks (test_project_files.py)
#: the workflows of the core project.yml (the shipped models); the others are studies
CORE = ["all", "stream", "stream-model", "packages"]
STUDIES = [p for p in sorted((ROOT / "experiments").glob("*/project.yml"))
           if set(srsly.read_yaml(p).get("workflows", {})) & (set(WORKFLOWS) - set(CORE))]
#: commands run by hand, in no workflow: ship-parser replaces the package's shipped parser; resume-parser-stream is its second training stage
BY_HAND = ["ship-parser", "ship-truecaser", "resume-parser-stream"]
# The order the workflows are run in (docs/workflow.md): each one reads what the earlier ones wrote.
ORDER = ["all", "stream", "truecase", "degraded", "mixture", "kbest", "sampled-trees", "jackknife", "baselines", "domain", "packages", "fold", "cross-validation", "results", "benchmarks", "what-learned", "stream-restore", "stream-model", "single-sentence", "ted", "correction", "rephrasing"]
LOCAL_UD = {"ud_dir": "../shared/ud/en_ewt", "treebank": "en_ewt"}
DEV_AS_TRAIN = {"ud_dir": "../shared/ud/es_ancora_ud14", "treebank": "es_ancora_ud14", "lang": "es",
                "protocol": "dev-as-train"}


def _rooted(command: dict) -> dict:
    """A study's command as the repository root sees it: its script lines as ``at_root.py`` runs
    them there, its deps and outputs (relative to ``experiments/<study>/``) relative to the root."""
    assert all(line.startswith(AT_ROOT) for line in command["script"]), command["name"]
    out = dict(command, script=[line[len(AT_ROOT):] for line in command["script"]])
    for key in ("deps", "outputs"):
        assert all(p.startswith("../../") for p in command.get(key, [])), (command["name"], key)
        out[key] = [p[len("../../"):] for p in command.get(key, [])]
    return out


def raw_projects():
    """Every project file unresolved, merged: vars, workflows, commands (as the root sees them)."""
    merged = {"vars": {}, "workflows": {}, "commands": []}
    for path in [PROJECT, *STUDIES]:
        raw = srsly.read_yaml(path)
        merged["vars"].update(raw["vars"])
        merged["workflows"].update(raw.get("workflows", {}))
        merged["commands"] += [c if path == PROJECT else _rooted(c) for c in raw["commands"]]
    return merged


def substituted(**vars_):
    """Every project file with its variables substituted (weasel's own code; creates no directories),
    merged into one project whose study commands are seen from the root (``_rooted``)."""
    from weasel.schemas import ProjectConfigSchema, validate
    from weasel.util.config import substitute_project_variables

    merged = {"vars": {}, "workflows": {}, "commands": [], "assets": []}
    for path in [PROJECT, *STUDIES]:
        config = srsly.read_yaml(path)
        assert validate(ProjectConfigSchema, config) == []
        config = substitute_project_variables(config, {f"vars.{k}": v for k, v in vars_.items()})
        merged["vars"].update(config["vars"])
        merged["workflows"].update(config.get("workflows", {}))
        merged["commands"] += [c if path == PROJECT else _rooted(c) for c in config["commands"]]
        merged["assets"] += config.get("assets", [])
    merged["vars"].update(vars_)  # weasel overrides the values it substitutes, not this copy
    return merged


def _norm(path: str) -> PurePosixPath:
    return PurePosixPath(os.path.normpath(path))


def _under(path: str, folder: str) -> bool:
    p, f = _norm(path), _norm(folder)
    return p == f or f in p.parents


def test_project_yml_parses_with_the_documented_vars():
    core = srsly.read_yaml(PROJECT)
    for key in ("lang", "treebank", "ud_repo", "ud_version", "ud_dir", "gpu", "max_steps"):
        assert key in core["vars"], key
    assert list(core["workflows"]) == CORE
    assert not any("assets" in srsly.read_yaml(path) for path in STUDIES)  # the UD asset is the core's
    raw = raw_projects()
    assert raw["workflows"] == WORKFLOWS
    assert sorted(c["name"] for c in raw["commands"]) == sorted([n for w in WORKFLOWS.values() for n in w] + BY_HAND)
    # the default runs on the shipped sample
    ud_dir = ROOT / raw["vars"]["ud_dir"]
    assert ud_dir == ROOT / "assets" / "sample"
    assert all(find_split(ud_dir, s) is not None for s in ("train", "dev", "test"))


@pytest.mark.parametrize("vars_", [{}, LOCAL_UD, DEV_AS_TRAIN], ids=["default", "local-ud", "dev-as-train"])
def test_every_dep_is_an_earlier_output_or_an_input(vars_):
    config = substituted(**vars_)
    ud_dir = config["vars"]["ud_dir"]
    commands = {c["name"]: c for c in config["commands"]}
    produced = []
    for name in (n for w in ORDER for n in config["workflows"][w]):
        cmd = commands[name]
        assert cmd.get("outputs"), f"{name}: without outputs weasel never skips it"
        for dep in cmd.get("deps", []):
            ok = (any(_under(dep, out) for out in produced) or _under(dep, ud_dir)
                  # the folder every system writes into
                  or (name in ("results-table", "fold-table", "pool-folds") and dep == "metrics")
                  or (name == "keep-fold" and dep == f"metrics/{config['vars']['treebank']}")
                  or (dep.split("/")[0] in ("configs", "scripts") and (ROOT / dep).is_file())
                  # the shipped models and the TED file (`stream-restore`, `ted`)
                  or (dep.startswith("spacy_punctgen/shipped/") and (ROOT / dep).is_dir())
                  or dep == config["vars"]["ted_tsv"])
            assert ok, f"{name}: dep {dep} is neither produced earlier, nor under {ud_dir}, nor a repo file"
        produced.extend(cmd["outputs"])
    # nothing is written into the UD folder
    assert not any(_under(out, ud_dir) for out in produced)


@pytest.mark.parametrize("vars_", [{}, LOCAL_UD], ids=["default", "local-ud"])
def test_ud_dir_is_never_an_asset_destination(vars_):
    config = substituted(**vars_)
    ud_dir = config["vars"]["ud_dir"]
    for asset in config["assets"]:
        dest = asset["dest"]
        assert not _under(ud_dir, dest) and not _under(dest, ud_dir)
        assert not dest.startswith("..") and _under(dest, "assets/ud")  # git-ignored, inside the project
        if "git" in asset:
            assert asset["git"]["repo"] == f"https://github.com/UniversalDependencies/{config['vars']['ud_repo']}"
            assert asset["git"]["branch"] == config["vars"]["ud_version"]


def _git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_assets_clone_the_treebank_repository_offline(tmp_path):
    """`spacy project assets` clones ${ud_github}/${ud_repo} at ${ud_version} into assets/ud/ (here: a local repo)."""
    mirror = tmp_path / "mirror"
    repo = mirror / "UD_Sample-Test"
    repo.mkdir(parents=True)
    for f in (ROOT / "assets" / "sample").glob("*-ud-*.conllu"):
        shutil.copy(f, repo / f.name)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "sample")
    _git(repo, "tag", "r9.9")
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(PROJECT, proj / "project.yml")
    cmd = [sys.executable, "-m", "spacy", "project", "assets", str(proj), "--vars.ud_github", str(mirror),
           "--vars.ud_repo", "UD_Sample-Test", "--vars.ud_version", "r9.9"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dest = proj / "assets" / "ud" / "UD_Sample-Test"
    assert all(find_split(dest, s) is not None for s in ("train", "dev", "test"))
    assert (dest / "en_sample-ud-test.conllu").read_bytes() == (ROOT / "assets" / "sample" / "en_sample-ud-test.conllu").read_bytes()


def _script_lines(vars_=LOCAL_UD):
    config = substituted(**vars_)
    for cmd in config["commands"]:
        for line in cmd["script"]:
            yield cmd["name"], shlex.split(line)


def test_scripts_need_no_shell():
    for name, argv in _script_lines():
        assert argv[0] == "python", f"{name}: {argv}"
        assert not {">", ">>", "|", "&&", ";", "<"} & set(argv), f"{name}: weasel runs no shell"


def test_punctgen_cli_calls_use_existing_commands_and_options():
    parser = cli.build_parser()
    seen = set()
    for name, argv in _script_lines():
        if argv[1:3] == ["-m", "spacy_punctgen"]:
            args = parser.parse_args(argv[3:])  # SystemExit on an unknown command or option
            seen.add(args.command)
        if argv[1:2] == ["scripts/save_metrics.py"] and "--" in argv:
            inner = argv[argv.index("--") + 1:]
            assert inner[1:3] == ["-m", "spacy_punctgen"]
            seen.add(parser.parse_args(inner[3:]).command)
    assert seen == {"convert", "train", "evaluate", "evaluate-restore", "baseline", "bench", "learned", "learned-summary",
                    "evaluate-stream", "stream-table", "adapt"}


TUNED = {"crf_lexical": {"c2": [0.01, 0.1, 0.3, 1.0, 3.0, 10.0]},
         "crf_tagger": {"learn_rate": [0.0005, 0.001, 0.002], "dropout": [0.2, 0.4]},
         "attn_tagger": {"learn_rate": [0.0005, 0.001, 0.002], "dropout": [0.2, 0.4]},
         "spacy_tagger": {"learn_rate": [0.0005, 0.001, 0.002]}}


@pytest.mark.parametrize("system", sorted(TUNED))
@pytest.mark.parametrize("untuned", [False, True], ids=["grid", "untuned"])
def test_baselines_are_tuned_on_dev_by_the_workflow(system, untuned):
    from spacy_punctgen.baselines.tune import parse_grid

    vars_ = {f"{system}_tune": ""} if untuned else {}
    parser = cli.build_parser()
    trained = [argv for name, argv in _script_lines(vars_) if name == f"baseline-{system}" and "--train" in argv]
    assert len(trained) == 1
    args = parser.parse_args(trained[0][trained[0].index("--") + 4:])
    assert args.system == system and args.dev
    assert parse_grid(args.tune) == ({} if untuned else TUNED[system])
    # each fitted point is kept, so a stopped grid resumes (git-ignored, beside the saved system)
    assert args.tune_cache == f"training/en_sample/baselines/{system}.grid"


def test_protocol_reaches_every_train_and_dev_conversion():
    """With protocol=dev-as-train, every train/dev file (parsers and punctgen alike) comes from UD dev."""
    parser = cli.build_parser()
    n = 0
    for name, argv in _script_lines(DEV_AS_TRAIN):
        if argv[1:4] == ["-m", "spacy_punctgen", "convert"]:
            args = parser.parse_args(argv[3:])
            if args.split in ("train", "dev"):
                assert args.protocol == "dev-as-train" and args.heldout == 0.1, (name, argv)
                n += 1
            else:
                assert args.split == "test"
    assert n == 9  # punct/depunct x train/dev, the degraded training file, the stream parser's punct and stream train/dev
    # punctgen and the baselines read the converted files, never the UD folder
    for name, argv in _script_lines(DEV_AS_TRAIN):
        # (bench measures speed on the raw UD splits, whatever the evaluation protocol)
        # (the stream documents are cut from the UD folder with the same protocol as convert)
        assert not any(a.startswith("../shared/ud") for a in argv[3:]) or argv[3] in ("convert", "bench"), (name, argv)


def test_cv_fold_reaches_every_conversion():
    """With protocol=cv, train, dev and test of every conversion are blocks of the same fold."""
    parser = cli.build_parser()
    cv = {**DEV_AS_TRAIN, "protocol": "cv", "cv_folds": 7, "cv_fold": 3, "treebank": "cs_cltt_cv3"}
    splits = []
    for name, argv in _script_lines(cv):
        if argv[1:4] == ["-m", "spacy_punctgen", "convert"] and name != "domain-restore":
            # (domain-restore converts another treebank's own test split, whatever the protocol)
            args = parser.parse_args(argv[3:])
            assert (args.protocol, args.cv_folds, args.cv_fold) == ("cv", 7, 3), (name, argv)
            splits.append(args.split)
    assert sorted(splits) == sorted(["train", "dev", "test"] * 3 + ["train"] + ["train", "dev"])  # + stream documents, degraded, stream punct


def test_parser_config_accepts_the_overrides():
    from spacy.util import load_config

    for name, argv in _script_lines():
        if argv[1:4] != ["-m", "spacy", "train"]:
            continue
        overrides = {}
        i = 4
        while i < len(argv):
            if argv[i].startswith("--") and "." in argv[i]:
                overrides[argv[i][2:]] = argv[i + 1]
                i += 2
            else:
                i += 1
        assert {"paths.train", "paths.dev", "nlp.lang", "training.max_steps", "training.patience"} <= set(overrides)
        typed = {k: (int(v) if v.lstrip("-").isdigit() else v) for k, v in overrides.items()}
        cfg = load_config(ROOT / argv[4], overrides=typed, interpolate=True)
        assert cfg["training"]["max_steps"] == typed["training.max_steps"]
        truecaser = argv[4] == "configs/truecase.cfg"
        assert cfg["nlp"]["pipeline"] == (["punctgen_truecase"] if truecaser else ["tok2vec", "tagger", "morphologizer", "parser"])


@pytest.mark.slow
def test_sample_workflow_end_to_end_and_rerun_skips(tmp_path):
    """`spacy project run all` on the shipped sample with tiny training, in a temp copy; then a rerun skips."""
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(PROJECT, proj / "project.yml")
    for folder in ("configs", "scripts"):
        shutil.copytree(ROOT / folder, proj / folder)
    shutil.copytree(ROOT / "assets" / "sample", proj / "assets" / "sample")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    tiny = ["--vars.max_steps", "20", "--vars.eval_frequency", "10", "--vars.punctgen_epochs", "1",
            "--vars.restore_samples", "20"]
    run = [sys.executable, "-m", "spacy", "project", "run", "all", str(proj), *tiny]
    first = subprocess.run(run, capture_output=True, text=True, env=env, timeout=1200)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-4000:]

    metrics = proj / "metrics" / "en_sample"
    for name in ("parser_depunct", "parser_punct"):
        data = json.loads((metrics / f"{name}.json").read_text())
        assert 0.0 <= data["dep_las"] <= data["dep_uas"] <= 1.0
    pg = json.loads((metrics / "punctgen.json").read_text())
    for key in ("perplexity_per_slot", "aed_gold", "aed_parsed", "parser_las", "n_sentences", "n_slots"):
        assert key in pg
    assert pg["perplexity_per_slot"] > 1.0 and pg["n_sentences"] == 35
    assert 0.0 <= pg["aed_gold"] and 0.0 <= pg["aed_parsed"] and "missing" not in pg
    assert pg["protocol"] == "standard" and Path(pg["predictions_parsed"]).name == "punctgen_parsed.jsonl"
    assert (proj / "corpus" / "en_sample" / "depunct" / "test.parsed.conllu").is_file()
    assert pg["parser_las"] == json.loads((metrics / "parser_depunct.json").read_text())["dep_las"]
    assert (proj / "corpus" / "en_sample" / "depunct" / "train.spacy").is_file()
    pipeline = proj / "training" / "en_sample" / "pipeline"
    assert (pipeline / "punctgen" / "model").is_dir()
    assert "model = null" in (pipeline / "config.cfg").read_text()
    assert list((proj / "packages").glob("en_punctgen_en_sample-0.0.0/dist/*.tar.gz"))

    second = subprocess.run(run, capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0, second.stdout[-4000:]
    for step in STEPS:
        assert f"Skipping '{step}': nothing changed" in second.stdout, step
    assert "Running command" not in second.stdout
