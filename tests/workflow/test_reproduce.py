"""``scripts/reproduce.py`` and ``configs/treebanks.yml``: the plan of the restoration table's runs."""
import json
import shlex
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
SHARED_UD = ROOT.parent / "shared" / "ud"
PRIMARY = {"en_ewt", "zh_gsd_ud14", "es_ancora_ud14", "ar_padt_ud12", "hi_hdtb_ud12pre", "fr_sequoia", "cs_cltt"}


@pytest.fixture(scope="module")
def rp(load_script):
    return load_script("reproduce")


def test_shipped_plan_covers_every_primary_treebank_with_known_vars(rp):
    plan = rp.load_plan(ROOT / "configs" / "treebanks.yml")
    assert set(plan) == PRIMARY
    known = set(rp.load_projects()[0]["vars"])
    for name, entry in plan.items():
        assert set(entry["vars"]) <= known, (name, set(entry["vars"]) - known)
        # treebanks without a UD train split are trained on dev (../shared/ud/README.md)
        no_train = name in {"es_ancora_ud14", "ar_padt_ud12", "hi_hdtb_ud12pre"}
        # and tiny ones are cross-validated (cs_cltt: 467 training sentences)
        assert entry["vars"]["protocol"] == ("dev-as-train" if no_train else "cv" if name == "cs_cltt" else "standard")
        assert entry["vars"]["mixture_model"] == "punctgen_jackknife"


def test_commands_are_project_steps_in_workflow_order(rp):
    project = rp.load_projects()[0]
    steps = set(project["workflows"]) | {c["name"] for c in project["commands"]}
    entry = {"vars": {"lang": "hi", "protocol": "dev-as-train", "punctgen_gold_preproc": True},
             "seeds": [3, 1], "degraded": [0.5]}
    cmds = rp.commands("hi_hdtb_ud12pre", entry, Path("../shared/ud"))
    labels = [label for label, _ in cmds]
    assert labels == [f"hi_hdtb_ud12pre: {s}" for s in (
        "all", "baselines", "jackknife", "train-parser-seed 3", "parse-test-seed 3", "train-parser-seed 1",
        "parse-test-seed 1", "evaluate-mixture", "degraded 0.5", "plot-aed-las")]
    where = rp.load_projects()[1]
    for _, argv in cmds:
        assert argv[1:4] == ["-m", "spacy", "project"] and argv[4] == "run" and argv[5] in steps
        # each step runs in the folder of the project file that defines it
        assert argv[6] == str(where[argv[5]]) and (Path(argv[6]) / "project.yml").is_file()
        opts = dict(zip(argv[7::2], argv[8::2]))
        assert opts["--vars.ud_dir"] == "../shared/ud/hi_hdtb_ud12pre"
        assert opts["--vars.treebank"] == "hi_hdtb_ud12pre" and opts["--vars.punctgen_gold_preproc"] == "true"
    opts = lambda i: dict(zip(cmds[i][1][7::2], cmds[i][1][8::2]))  # noqa: E731
    assert opts(3)["--vars.parser_seed"] == "3" and opts(7)["--vars.parser_seed"] == "1"
    assert opts(8)["--vars.parser_fraction"] == "0.5"
    # no seeds: no mixture; no fractions: no figure
    plain = rp.commands("x", {"vars": {"lang": "fr", "protocol": "standard"}, "seeds": [], "degraded": []},
                        Path("../shared/ud"))
    assert [label for label, _ in plain] == ["x: all", "x: baselines", "x: jackknife"]


@pytest.mark.parametrize("text,message", [
    ("common: {}\n", "non-empty 'treebanks'"),
    ("treebanks:\n  t: {vars: {lang: en}}\n", "needs vars 'lang' and 'protocol'"),
    ("treebanks:\n  t: {vars: {lang: en, protocol: standard}, seed: [1]}\n", "unknown keys ['seed']"),
    ("treebanks:\n  t: {vars: {lang: en, protocol: standard}, seeds: [0]}\n", "distinct positive"),
    ("treebanks:\n  t: {vars: {lang: en, protocol: standard}, seeds: [1, 1]}\n", "distinct positive"),
])
def test_bad_plans_are_refused_by_name(rp, tmp_path, text, message):
    f = tmp_path / "t.yml"
    f.write_text(text)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        rp.load_plan(f)


def test_common_vars_are_overridden_per_treebank(rp, tmp_path):
    f = tmp_path / "t.yml"
    f.write_text("common: {max_steps: 2000, punctgen_epochs: 5}\n"
                 "treebanks:\n  t: {vars: {lang: en, protocol: standard, punctgen_epochs: 2}}\n")
    assert rp.load_plan(f)["t"]["vars"] == {"max_steps": 2000, "punctgen_epochs": 2, "lang": "en",
                                            "protocol": "standard"}


def test_dry_run_prints_every_command_and_the_table(rp, capsys):
    assert rp.main(["--dry-run", "--only", "cs_cltt,fr_sequoia"]) == 0
    out = capsys.readouterr().out.splitlines()
    labels = [line[2:] for line in out if line.startswith("# ")]
    assert labels[0] == "cs_cltt_cv0: all" and labels[-1] == "results-table"
    assert labels.index("cs_cltt_cv9: evaluate-mixture") + 3 == labels.index("cs_cltt_cv9: keep-fold") + 2 \
        == labels.index("cs_cltt: fold-table") + 1 == labels.index("cs_cltt: pool-folds") \
        == labels.index("fr_sequoia: all") - 1
    assert "fr_sequoia: jackknife" in labels and not any("fr_sequoia: evaluate-mixture" in x for x in labels)
    commands = [shlex.split(line) for line in out if not line.startswith("# ")]
    assert len(commands) == len(labels) and all(c[1:5] == ["-m", "spacy", "project", "run"] for c in commands)
    # the table reads every treebank's metrics and needs no vars: its deps name no treebank
    # (a fresh clone has no metrics of the default one, the sample)
    assert commands[-1][5:] == ["results-table", str(ROOT / "experiments" / "tables")]
    assert commands[0][5:7] == ["all", str(ROOT)]
    table = next(c for c in rp.load_projects()[0]["commands"] if c["name"] == "results-table")
    assert table["deps"] == ["../../scripts/results_table.py", "../../metrics"]


def test_unknown_treebank_and_missing_ud_folder_are_errors(rp, tmp_path, capsys):
    assert rp.main(["--dry-run", "--only", "xx_nope"]) == 1
    assert "xx_nope" in capsys.readouterr().err
    assert rp.main(["--only", "cs_cltt", "--ud-root", str(tmp_path)]) == 1
    assert "no UD folder for ['cs_cltt']" in capsys.readouterr().err


@pytest.mark.skipif(not SHARED_UD.is_dir(), reason="../shared/ud (the UD treebanks) is not beside the repository")
def test_every_planned_treebank_has_its_ud_folder():
    for name in PRIMARY:
        assert (SHARED_UD / name).is_dir(), name


def test_finished_commands_are_skipped_on_the_next_run_and_a_failure_stops(rp, tmp_path, monkeypatch, capsys):
    (tmp_path / "ud" / "es_ancora_ud14").mkdir(parents=True)
    calls = []
    fail_at = {"label": None}

    def fake_call(cmd, cwd, stdout, stderr):
        calls.append(cmd[5])
        return 3 if cmd[5] == fail_at["label"] else 0

    monkeypatch.setattr(rp.subprocess, "call", fake_call)
    opts = ["--only", "es_ancora_ud14", "--ud-root", str(tmp_path / "ud"), "--log", str(tmp_path / "log"),
            "--done", str(tmp_path / "done")]
    fail_at["label"] = "jackknife"
    assert rp.main(opts) == 3
    assert calls == ["all", "baselines", "jackknife"]
    assert "stopped at 'es_ancora_ud14: jackknife'" in capsys.readouterr().err
    calls.clear()
    fail_at["label"] = None
    assert rp.main(opts) == 0  # resumes at the failed command
    assert calls[:2] == ["jackknife", "train-parser-seed"] and calls[-1] == "results-table"
    calls.clear()
    assert rp.main(opts) == 0  # everything done: only the table is remade
    assert calls == ["results-table"]
    calls.clear()
    assert rp.main(opts + ["--force"]) == 0
    assert calls[0] == "all" and len(calls) == 9


def test_cross_validated_treebank_runs_every_fold_then_pools(rp):
    entry = {"vars": {"lang": "cs", "protocol": "cv", "cv_folds": 3}, "seeds": [1], "degraded": []}
    cmds = rp.commands("cs_cltt", entry, Path("../shared/ud"))
    labels = [label for label, _ in cmds]
    per_fold = ["all", "baselines", "jackknife", "train-parser-seed 1", "parse-test-seed 1", "evaluate-mixture",
                "keep-fold"]
    assert labels == [f"cs_cltt_cv{k}: {s}" for k in range(3) for s in per_fold] + ["cs_cltt: fold-table",
                                                                                   "cs_cltt: pool-folds"]
    for label, argv in cmds:
        opts = dict(zip(argv[7::2], argv[8::2]))
        assert opts["--vars.ud_dir"] == "../shared/ud/cs_cltt" and opts["--vars.protocol"] == "cv"
        if label.startswith("cs_cltt:"):
            step = label.split(": ")[1]
            assert argv[5] == step and opts["--vars.treebank"] == "cs_cltt" and opts["--vars.cv_folds"] == "3"
        else:
            k = label.split(":")[0][-1]
            assert opts["--vars.treebank"] == f"cs_cltt_cv{k}" and opts["--vars.cv_fold"] == k


@pytest.mark.parametrize("text,message", [
    ("treebanks:\n  t: {vars: {lang: cs, protocol: cv}, degraded: [0.5]}\n", "one test split"),
    ("treebanks:\n  t: {vars: {lang: cs, protocol: cv, cv_folds: 2}}\n", "at least 3"),
])
def test_bad_cross_validation_plans(rp, tmp_path, text, message):
    f = tmp_path / "t.yml"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        rp.load_plan(f)


def test_some_folds_only_and_no_pooling(rp, capsys, tmp_path):
    entry = {"vars": {"lang": "cs", "protocol": "cv", "cv_folds": 4}, "seeds": [], "degraded": []}
    some = lambda folds: [label for label, _ in rp.commands("cs_cltt", entry, Path("../shared/ud"), folds,  # noqa: E731
                                                            metrics=tmp_path)]
    assert some([3, 2]) == [f"cs_cltt_cv{k}: {s}" for k in (2, 3) for s in ("all", "baselines", "jackknife", "keep-fold")] \
        + ["cs_cltt: fold-table"]  # the folds kept so far, even when they cannot be pooled yet
    assert some([0, 1, 2, 3])[-1] == "cs_cltt: pool-folds"
    with pytest.raises(ValueError, match="folds 0..3"):
        rp.commands("cs_cltt", entry, Path("../shared/ud"), folds=[4])
    # folds kept before in this clone (an earlier session) count as run: then pool-folds
    for k in (0, 1):
        kept = tmp_path / f"cs_cltt_cv{k}" / "kept"
        (kept / "predictions").mkdir(parents=True)
        (kept / "kept.json").write_text(json.dumps({"predictions": {"trivial_gold.jsonl": {}}}))
        (kept / "test.conllu").write_text("")
        (kept / "predictions" / "trivial_gold.jsonl").write_text("")
    capsys.readouterr()
    assert some([3, 2])[-1] == "cs_cltt: pool-folds" and "cs_cltt_cv0: all" not in some([3, 2])
    assert "pool-folds left out" not in capsys.readouterr().err
    # a fold kept in another clone has only its record here (copies are not committed): no pooling
    (tmp_path / "cs_cltt_cv1" / "kept" / "predictions" / "trivial_gold.jsonl").unlink()
    assert some([3, 2])[-2:] == ["cs_cltt_cv3: keep-fold", "cs_cltt: fold-table"]
    assert "pool-folds left out: folds [1] are not kept in this clone" in capsys.readouterr().err
    (tmp_path / "cs_cltt_cv0" / "kept" / "kept.json").unlink()  # not kept at all
    assert some([3, 2])[-1] == "cs_cltt: fold-table"
    assert rp.main(["--dry-run", "--only", "cs_cltt", "--folds", "5,6,7,8,9", "--metrics", str(tmp_path)]) == 0
    out = [line[2:] for line in capsys.readouterr().out.splitlines() if line.startswith("# ")]
    assert out[0] == "cs_cltt_cv5: all" and not any("pool-folds" in x or "_cv4:" in x for x in out)
    assert rp.main(["--dry-run", "--only", "cs_cltt", "--folds", "12"]) == 1
    assert "--folds" in capsys.readouterr().err


def test_step_vars_are_those_its_commands_read(rp):
    project = rp.load_projects()[0]
    baselines = rp.step_vars(project, "baselines")
    assert {"crf_lexical_tune", "treebank", "spacy_tagger_tune"} <= baselines
    assert "crf_lexical_tune" not in rp.step_vars(project, "jackknife")
    assert "parser_seed" in rp.step_vars(project, "train-parser-seed")
    assert "punctgen_templates" in rp.step_vars(project, "all") and "parser_seed" not in rp.step_vars(project, "all")
    # a var's default that reads another var brings that one in
    fake = {"vars": {"a": "x/${vars.b}", "b": "y"}, "commands": [{"name": "c", "script": ["echo ${vars.a}"]}]}
    assert rp.step_vars(fake, "c") == {"a", "b"}
    with pytest.raises(ValueError, match="no command 'nope'"):
        rp.step_vars(fake, "nope")


def test_changing_one_var_reruns_only_the_steps_that_read_it(rp, tmp_path, monkeypatch):
    (tmp_path / "ud" / "es_ancora_ud14").mkdir(parents=True)
    calls = []
    monkeypatch.setattr(rp.subprocess, "call", lambda cmd, cwd, stdout, stderr: calls.append(cmd[5]) or 0)
    opts = ["--ud-root", str(tmp_path / "ud"), "--log", str(tmp_path / "log"), "--done", str(tmp_path / "done")]
    config = tmp_path / "t.yml"
    plan = "treebanks:\n  es_ancora_ud14: {vars: {lang: es, protocol: dev-as-train, crf_lexical_tune: '%s'}, seeds: [1, 2]}\n"
    config.write_text(plan % "c2=1.0")
    assert rp.main(opts + ["--config", str(config)]) == 0 and len(calls) == 9
    calls.clear()
    config.write_text(plan % "c2=1.0,3.0")  # a baseline's grid: only `baselines` reads it
    assert rp.main(opts + ["--config", str(config)]) == 0
    assert calls == ["baselines", "results-table"]
    calls.clear()
    config.write_text((plan % "c2=1.0,3.0").replace("protocol: dev-as-train", "protocol: dev-as-train, parser_fraction: 0.5"))
    assert rp.main(opts + ["--config", str(config)]) == 0
    assert calls == ["results-table"]  # no planned step reads parser_fraction (degraded is not planned)
    # a done line of a step project.yml no longer has matches nothing; a line that is not a
    # `spacy project run` is an error, not a silent rerun
    with (tmp_path / "done").open("a") as f:
        f.write("-m spacy project run gone-step /x --vars.lang es\n")
    calls.clear()
    assert rp.main(opts + ["--config", str(config)]) == 0 and calls == ["results-table"]
    with (tmp_path / "done").open("a") as f:
        f.write("garbage\n")
    assert rp.main(opts + ["--config", str(config)]) == 1


def test_skip_leaves_out_named_steps(rp, capsys, tmp_path):
    """--skip lets two processes share a treebank's independent steps; unknown names are errors."""
    base = ["--dry-run", "--only", "cs_cltt", "--folds", "2", "--metrics", str(tmp_path)]
    assert rp.main([*base, "--skip", "jackknife,train-parser-seed,parse-test-seed,evaluate-mixture,keep-fold,"
                                     "fold-table,pool-folds,results-table"]) == 0
    out = [line[2:] for line in capsys.readouterr().out.splitlines() if line.startswith("# ")]
    assert out == ["cs_cltt_cv2: all", "cs_cltt_cv2: baselines"]
    assert rp.main([*base, "--skip", "all,baselines,keep-fold,fold-table,results-table"]) == 0
    out = [line[2:] for line in capsys.readouterr().out.splitlines() if line.startswith("# ")]
    assert out[0] == "cs_cltt_cv2: jackknife" and out[-1] == "cs_cltt_cv2: evaluate-mixture"
    assert rp.main([*base, "--skip", "baseline"]) == 1
    assert "--skip: ['baseline'] are not workflows or commands of project.yml" in capsys.readouterr().err


def test_a_rerun_step_is_collected_again_by_keep_fold(rp, tmp_path, monkeypatch):
    """keep-fold (and fold-table, pool-folds, results-table) read no var that changes, so they always run."""
    (tmp_path / "ud" / "cs_cltt").mkdir(parents=True)
    calls = []
    monkeypatch.setattr(rp.subprocess, "call", lambda cmd, cwd, stdout, stderr: calls.append(cmd[5]) or 0)
    opts = ["--ud-root", str(tmp_path / "ud"), "--log", str(tmp_path / "log"), "--done", str(tmp_path / "done"),
            "--metrics", str(tmp_path / "metrics"), "--folds", "1", "--config", str(tmp_path / "t.yml")]
    plan = "treebanks:\n  cs_cltt: {vars: {lang: cs, protocol: cv, cv_folds: 3, crf_lexical_tune: '%s'}}\n"
    (tmp_path / "t.yml").write_text(plan % "c2=1.0")
    assert rp.main(opts) == 0 and calls == ["all", "baselines", "jackknife", "keep-fold", "fold-table", "results-table"]
    calls.clear()
    (tmp_path / "t.yml").write_text(plan % "c2=1.0,3.0")
    assert rp.main(opts) == 0 and calls == ["baselines", "keep-fold", "fold-table", "results-table"]
