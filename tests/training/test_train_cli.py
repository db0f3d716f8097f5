"""`train` and `evaluate` CLI commands end to end on the shipped EWT sample (seconds)."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.cli import main
from spacy_punctgen.model.punct_model import PunctModel

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
TRAIN = SAMPLE / "en_sample-ud-train.conllu"
DEV = SAMPLE / "en_sample-ud-dev.conllu"
TEST = SAMPLE / "en_sample-ud-test.conllu"


def _run(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr().out.strip().splitlines()
    return rc, json.loads(out[-1])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("m") / "full"
    rc = main(["train", str(TRAIN), str(DEV), "--output", str(out), "--epochs", "2",
               "--sentences-per-epoch", "30", "--direction", "auto", "--seed", "3", "--quiet", "--json"])
    assert rc == 0
    return out


def test_train_writes_a_loadable_model(trained):
    model = PunctModel.from_disk(trained)
    assert model.mode == "full" and model.direction in ("l2r", "r2l")
    assert set(model.meta["directions_tried"]) == {"l2r", "r2l"}
    assert model.meta["quote_xpos"] is True  # EWT-style quotes
    summary = json.loads((trained / "training.json").read_text(encoding="utf-8"))
    assert len(summary["history"]["l2r"]) == 2 and len(summary["history"]["r2l"]) == 2
    best = min(summary["directions_tried"].values())
    assert summary["dev_perplexity_per_slot"] == best


def test_evaluate_reports_perplexity(trained, capsys):
    rc, res = _run(capsys, ["evaluate", str(trained), str(TEST), "--json"])
    assert rc == 0
    for key in ("perplexity_per_slot", "n_sentences", "n_slots", "n_omitted", "n_impossible", "n_nonprojective"):
        assert key in res
    assert res["n_sentences"] > 0 and res["n_slots"] > res["n_sentences"]
    assert 1.0 < res["perplexity_per_slot"] < 50 and math.isfinite(res["perplexity_per_slot"])
    # the number agrees with the model's own log-probabilities
    from spacy_punctgen.data.preprocess import preprocess_file

    model = PunctModel.from_disk(trained)
    sents, _ = preprocess_file(TEST)
    lp = model.log_probs(model.prepare_eval(sents), backoff=True)
    assert abs(math.exp(-lp.sum() / res["n_slots"]) - res["perplexity_per_slot"]) < 1e-9


def test_attach_mode_and_folder_input(tmp_path, capsys):
    out = tmp_path / "attach"
    rc, res = _run(capsys, ["train", str(SAMPLE), str(SAMPLE), "--output", str(out), "--mode", "attach",
                            "--epochs", "1", "--sentences-per-epoch", "20", "--average", "--quiet", "--json"])
    assert rc == 0 and res["mode"] == "attach"
    rc, ev = _run(capsys, ["evaluate", str(out), str(SAMPLE), "--json"])
    assert rc == 0 and ev["file"].endswith("en_sample-ud-test.conllu")


def test_training_is_deterministic_under_a_seed(tmp_path, capsys):
    args = ["--epochs", "1", "--sentences-per-epoch", "15", "--direction", "r2l", "--seed", "11", "--quiet", "--json"]
    for name in ("a", "b"):
        rc, _ = _run(capsys, ["train", str(TRAIN), str(DEV), "--output", str(tmp_path / name)] + args)
        assert rc == 0
    a, b = PunctModel.from_disk(tmp_path / "a"), PunctModel.from_disk(tmp_path / "b")
    assert a.theta.tobytes() == b.theta.tobytes() and a.psi.tobytes() == b.psi.tobytes()


def test_training_improves_on_the_initial_model(tmp_path, capsys):
    rc, res = _run(capsys, ["train", str(TRAIN), str(DEV), "--output", str(tmp_path / "m"), "--epochs", "2",
                            "--sentences-per-epoch", "0", "--direction", "l2r", "--lr", "0.05", "--quiet", "--json"])
    assert rc == 0
    summary = json.loads((tmp_path / "m" / "training.json").read_text(encoding="utf-8"))
    assert summary["best_epoch"] >= 1  # some epoch beat the untrained model on dev


def test_bad_inputs_give_clean_errors(tmp_path, capsys):
    rc = main(["train", str(tmp_path / "missing.conllu"), str(DEV), "--output", str(tmp_path / "x"), "--json"])
    assert rc == 1
    assert "error" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rc = main(["evaluate", str(tmp_path), str(TEST), "--json"])  # not a model dir
    assert rc == 1
    rc = main(["train", str(tmp_path), str(DEV), "--output", str(tmp_path / "y"), "--json"])  # folder w/o train
    assert rc == 1


def test_parallel_directions_match_sequential(tmp_path, capsys):
    args = ["--epochs", "1", "--sentences-per-epoch", "10", "--direction", "auto", "--seed", "5", "--quiet", "--json"]
    for name, jobs in (("seq", "1"), ("par", "2")):
        rc, _ = _run(capsys, ["train", str(TRAIN), str(DEV), "--output", str(tmp_path / name), "--jobs", jobs] + args)
        assert rc == 0
    a, b = PunctModel.from_disk(tmp_path / "seq"), PunctModel.from_disk(tmp_path / "par")
    assert a.direction == b.direction
    assert a.theta.tobytes() == b.theta.tobytes() and a.psi.tobytes() == b.psi.tobytes()
    assert a.meta["directions_tried"] == b.meta["directions_tried"]


def test_patience_stops_early(tmp_path, capsys):
    rc, _ = _run(capsys, ["train", str(TRAIN), str(DEV), "--output", str(tmp_path / "m"), "--epochs", "6",
                          "--sentences-per-epoch", "10", "--lr", "0.5", "--direction", "l2r", "--patience", "1",
                          "--quiet", "--json"])
    assert rc == 0
    summary = json.loads((tmp_path / "m" / "training.json").read_text(encoding="utf-8"))
    hist = summary["history"]["l2r"]
    assert len(hist) <= 6
    if len(hist) < 6:  # stopped: the last epoch did not beat the best
        assert hist[-1]["epoch"] - summary["best_epoch"] >= 1
