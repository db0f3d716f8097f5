"""PunctModel persistence: bytes and disk round-trips are bit-identical; bad dirs fail clearly."""
import json

import numpy as np
import pytest

from spacy_punctgen.model.punct_model import CFG_FILE, FORMAT_VERSION, INVENTORY_FILE, PARAMS_FILE, PunctModel
from spacy_punctgen.model.serialize import npz_bytes
from spacy_punctgen.testing.toy import toy_inventory, toy_sentences


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


def test_truncated_bytes_are_refused(model):
    data = model.to_bytes()
    with pytest.raises(ValueError, match="model bytes"):
        PunctModel.from_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("version", [0, FORMAT_VERSION + 1, "2", None])
def test_incompatible_versions_name_the_file(model, tmp_path, version):
    model.to_disk(tmp_path)
    cfg = json.loads((tmp_path / CFG_FILE).read_text(encoding="utf-8"))
    cfg["version"] = version
    (tmp_path / CFG_FILE).write_text(json.dumps(cfg), encoding="utf-8")
    with pytest.raises(ValueError, match=r"cfg\.json: unsupported format version"):
        PunctModel.from_disk(tmp_path)


def test_inconsistent_feature_arrays_are_refused(model, tmp_path):
    import zipfile

    model.to_disk(tmp_path)
    params = dict(np.load(tmp_path / PARAMS_FILE))
    params["ctx_counts"] = params["ctx_counts"].copy()
    params["ctx_counts"][0] += 1  # no longer sums to n_features
    (tmp_path / PARAMS_FILE).write_bytes(npz_bytes(params))
    with pytest.raises(ValueError, match=r"params\.npz.*ctx_counts"):
        PunctModel.from_disk(tmp_path)
    with zipfile.ZipFile(tmp_path / PARAMS_FILE) as zf:  # the arrays are stored deflated
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zf.infolist())


def test_version_1_files_are_still_read(model, tmp_path):
    """Version 1 stored the feature dictionary as two flat hash arrays, uncompressed."""
    import io
    import zipfile

    model.to_disk(tmp_path)
    cfg = json.loads((tmp_path / CFG_FILE).read_text(encoding="utf-8"))
    cfg["version"] = 1
    del cfg["theta_dtype"]
    (tmp_path / CFG_FILE).write_text(json.dumps(cfg), encoding="utf-8")
    arrays = {"theta": model.theta, "psi": model.psi, "feature_ctx": model.index.ctx,
              "feature_prop": model.index.prop, "backoff_tok_logp": model.backoff_tok_logp,
              "backoff_len_logp": model.backoff_len_logp}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in arrays.items():
            b = io.BytesIO()
            np.lib.format.write_array(b, arr)
            zf.writestr(f"{name}.npy", b.getvalue())
    (tmp_path / PARAMS_FILE).write_bytes(buf.getvalue())
    _same(model, PunctModel.from_disk(tmp_path))


def test_compacted_model_prunes_and_round_trips_float16(model, tmp_path):
    thr = float(np.quantile(np.abs(model.theta), 0.3))
    small = model.compacted(thr, float16=True)
    keep = np.abs(model.theta) > thr
    assert small.n_features == int(keep.sum()) < model.n_features
    np.testing.assert_array_equal(small.index.ctx, model.index.ctx[keep])
    np.testing.assert_allclose(small.theta, model.theta[keep], rtol=1e-3, atol=1e-7)
    assert small.theta.dtype == np.float32 and small.theta_dtype == "float16"
    # bit-identical round trip of what is stored (θ as float16)
    small.to_disk(tmp_path / "a")
    back = PunctModel.from_disk(tmp_path / "a")
    assert back.theta.tobytes() == small.theta.tobytes() and back.theta_dtype == "float16"
    back.to_disk(tmp_path / "b")
    for name in (CFG_FILE, INVENTORY_FILE, PARAMS_FILE):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    with np.load(tmp_path / "a" / PARAMS_FILE) as npz:
        assert npz["theta"].dtype == np.float16
    # pruned features weigh 0: scores equal those of the full model with those weights zeroed
    zeroed = PunctModel.from_bytes(model.to_bytes())
    zeroed.theta = np.where(keep, zeroed.theta.astype(np.float16).astype(np.float32), 0).astype(np.float32)
    for s in toy_sentences():
        assert back.log_prob(s) == pytest.approx(zeroed.log_prob(s), rel=1e-9, abs=1e-9)
    # nothing pruned, float32 kept: identical predictions
    same = model.compacted(0.0 if (model.theta != 0).all() else -1.0)
    assert [same.log_prob(s) for s in toy_sentences()] == [model.log_prob(s) for s in toy_sentences()]
