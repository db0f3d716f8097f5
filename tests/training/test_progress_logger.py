"""Progress of the library (training epochs) goes to spaCy's logger, not to print: silent by
default in library use, shown by the command line (whose results stay on stdout)."""
import json
import logging
from pathlib import Path

from spacy.util import logger as spacy_logger

from spacy_punctgen.cli import PROGRESS_LOGGER, main
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.training.train import TrainConfig, logger, train_model

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def _progress(caplog):
    return [r.getMessage() for r in caplog.records if r.name == PROGRESS_LOGGER]


def test_the_progress_logger_is_a_child_of_spacys():
    assert logger.name == PROGRESS_LOGGER and logger.parent is spacy_logger


def test_training_progress_is_logged_not_printed(caplog, capfd):
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    cfg = TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=20, direction="r2l", progress=True)
    with caplog.at_level(logging.INFO, logger=PROGRESS_LOGGER):
        train_model(train[:20], train[20:30], cfg)
    messages = _progress(caplog)
    assert any("epoch 0: dev perplexity/slot" in m for m in messages)
    assert any(m.startswith("[r2l] epoch 1: train ppl") for m in messages)
    assert capfd.readouterr().out == ""


def test_the_train_command_shows_progress_and_restores_the_level(caplog, capsys, tmp_path):
    before = logging.getLogger(PROGRESS_LOGGER).level
    rc = main(["train", str(SAMPLE / "en_sample-ud-train.conllu"), str(SAMPLE / "en_sample-ud-dev.conllu"),
               "--output", str(tmp_path / "m"), "--epochs", "1", "--sentences-per-epoch", "20",
               "--direction", "r2l", "--json"])
    assert rc == 0
    assert "dev_perplexity_per_slot" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert any("epoch 1: train ppl" in m for m in _progress(caplog))
    assert logging.getLogger(PROGRESS_LOGGER).level == before
