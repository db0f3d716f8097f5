"""PunctModel persistence: bytes and disk round-trips are bit-identical; bad dirs fail clearly."""
import json

import numpy as np
import pytest

from spacy_punctgen.model import CFG_FILE, FORMAT_VERSION, INVENTORY_FILE, PARAMS_FILE, PunctModel
from test_features import toy_inventory, toy_sentences


@pytest.fixture(scope="module")
def model():
    sents = toy_sentences()
    m = PunctModel(toy_inventory(sents), mode="full", direction="r2l", xi=0.25)
    preps = m.prepare_all(sents)
    m.initialize(preps, seed=4, theta_scale=0.3, psi_scale=1.0)
    m.meta = {"note": "ünïcode ok", "dev_perplexity_per_slot": 1.2345}
    return m


def _same(a: PunctModel, b: PunctModel):
    assert a.theta.dtype == b.theta.dtype == np.float32
    assert a.theta.tobytes() == b.theta.tobytes()
    assert a.psi.tobytes() == b.psi.tobytes()
    assert a.index.ctx.tobytes() == b.index.ctx.tobytes()
    assert a.index.prop.tobytes() == b.index.prop.tobytes()
    assert a.backoff_tok_logp.tobytes() == b.backoff_tok_logp.tobytes()
    assert a.backoff_len_logp.tobytes() == b.backoff_len_logp.tobytes()
    assert a.inventory == b.inventory
    assert (a.mode, a.direction, a.xi, a.backoff_eps, a.meta) == (b.mode, b.direction, b.xi, b.backoff_eps, b.meta)
    assert a.feature_config == b.feature_config


def test_bytes_round_trip_is_bit_identical(model):
    data = model.to_bytes()
    back = PunctModel.from_bytes(data)
    _same(model, back)
    assert back.to_bytes() == data
    sents = toy_sentences()
    assert [model.log_prob(s) for s in sents] == [back.log_prob(s) for s in sents]


def test_disk_round_trip_is_bit_identical(model, tmp_path):
    model.to_disk(tmp_path / "a")
    back = PunctModel.from_disk(tmp_path / "a")
    _same(model, back)
    back.to_disk(tmp_path / "b")
    for name in (CFG_FILE, INVENTORY_FILE, PARAMS_FILE):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    cfg = json.loads((tmp_path / "a" / CFG_FILE).read_text(encoding="utf-8"))
    assert cfg["version"] == FORMAT_VERSION and cfg["direction"] == "r2l"
    with np.load(tmp_path / "a" / PARAMS_FILE) as npz:  # an ordinary .npz
        assert npz["theta"].tobytes() == model.theta.tobytes()


def test_best_underlying_survives_round_trip(model):
    back = PunctModel.from_bytes(model.to_bytes())
    for s in toy_sentences():
        assert model.best_underlying(s) == back.best_underlying(s)


@pytest.mark.parametrize("name", [CFG_FILE, INVENTORY_FILE, PARAMS_FILE])
def test_missing_file_is_named(model, tmp_path, name):
    model.to_disk(tmp_path)
    (tmp_path / name).unlink()
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        PunctModel.from_disk(tmp_path)


@pytest.mark.parametrize("name", [CFG_FILE, INVENTORY_FILE, PARAMS_FILE])
def test_truncated_file_is_named(model, tmp_path, name):
    model.to_disk(tmp_path)
    data = (tmp_path / name).read_bytes()
    (tmp_path / name).write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        PunctModel.from_disk(tmp_path)


def test_wrong_version_is_refused(model, tmp_path):
    model.to_disk(tmp_path)
    cfg = json.loads((tmp_path / CFG_FILE).read_text(encoding="utf-8"))
    cfg["version"] = FORMAT_VERSION + 1
    (tmp_path / CFG_FILE).write_text(json.dumps(cfg), encoding="utf-8")
    with pytest.raises(ValueError, match=r"cfg\.json.*version"):
        PunctModel.from_disk(tmp_path)


def test_wrong_shapes_are_refused(model, tmp_path):
    model.to_disk(tmp_path)
    cfg = json.loads((tmp_path / CFG_FILE).read_text(encoding="utf-8"))
    cfg["n_features"] += 1
    (tmp_path / CFG_FILE).write_text(json.dumps(cfg), encoding="utf-8")
    with pytest.raises(ValueError, match=r"params\.npz.*theta"):
        PunctModel.from_disk(tmp_path)


def test_not_a_directory(tmp_path):
    with pytest.raises(ValueError, match="not a model directory"):
        PunctModel.from_disk(tmp_path / "nope")


def test_garbage_bytes():
    with pytest.raises(ValueError, match="model bytes"):
        PunctModel.from_bytes(b"\x00garbage")


def test_smooth_delta_round_trips(model):
    model2 = PunctModel.from_bytes(model.to_bytes())
    model2.smooth_delta = 0.002
    back = PunctModel.from_bytes(model2.to_bytes())
    assert back.smooth_delta == 0.002
