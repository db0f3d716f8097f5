"""A saved model is checked whole on load (issue 23, item 9).

A model trained on the sample is written to disk; each case corrupts exactly one thing in one
of its three files (``cfg.json``, ``inventory.json``, ``params.npz``) and loading must refuse it
with our ValueError naming that file and the problem.  Before these checks, each of the cases
below loaded without complaint and then failed far away (IndexError, TypeError), produced NaN
or positive log-probabilities, or silently changed predictions.  The valid model still loads
and round-trips byte for byte, and so does the shipped one.
"""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.model.punct_model import CFG_FILE, INVENTORY_FILE, PARAMS_FILE, PunctModel
from spacy_punctgen.model.serialize import npz_bytes
from spacy_punctgen.pipeline.shipped import default_model_path
from spacy_punctgen.training.train import TrainConfig, train_model

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
FILES = (CFG_FILE, INVENTORY_FILE, PARAMS_FILE)


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory):
    """A small model of the sample's training split (one epoch), on disk."""
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    cfg = TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0, direction="r2l", progress=False, min_count=2)
    model, _ = train_model(train, [], cfg)
    model.meta["quote_xpos"] = True
    out = tmp_path_factory.mktemp("valid") / "model"
    model.to_disk(out)
    return out


@pytest.fixture
def model_dir(trained_dir, tmp_path):
    """A fresh copy of the valid model, for one case to corrupt."""
    out = tmp_path / "model"
    shutil.copytree(trained_dir, out)
    return out


# ---------------------------------------------------------------- corruptions of one thing
def _edit_json(name):
    def deco(fn):
        def apply(path: Path):
            data = json.loads((path / name).read_text(encoding="utf-8"))
            fn(data)
            (path / name).write_text(json.dumps(data), encoding="utf-8")
        apply.file = name
        return apply
    return deco


def _edit_params(fn):
    def apply(path: Path):
        with np.load(path / PARAMS_FILE) as npz:
            params = {k: npz[k].copy() for k in npz.files}
        fn(params)
        (path / PARAMS_FILE).write_bytes(npz_bytes(params))
    apply.file = PARAMS_FILE
    return apply


def _first_pairs(inv):
    return next(iter(inv["pairs"].values()))


@_edit_json(INVENTORY_FILE)
def pair_id_9999(inv):
    _first_pairs(inv).append([0, 9999])


@_edit_json(INVENTORY_FILE)
def pair_id_negative(inv):
    _first_pairs(inv).append([-1, 0])


@_edit_json(INVENTORY_FILE)
def pair_not_a_pair(inv):
    _first_pairs(inv).append([0, 1, 2])


@_edit_json(INVENTORY_FILE)
def pair_id_float(inv):
    _first_pairs(inv).append([0, 1.5])


@_edit_json(INVENTORY_FILE)
def relation_key_not_normalised(inv):
    inv["pairs"]["ACL:relcl"] = inv["pairs"].pop(next(iter(inv["pairs"])))


@_edit_json(INVENTORY_FILE)
def word_count_string(inv):
    word = sorted(inv["word_counts"])[0]
    inv["word_counts"][word] = str(inv["word_counts"][word])


@_edit_json(INVENTORY_FILE)
def word_count_bool(inv):
    inv["word_counts"][sorted(inv["word_counts"])[0]] = True


@_edit_json(INVENTORY_FILE)
def word_count_negative(inv):
    inv["word_counts"][sorted(inv["word_counts"])[0]] = -3


@_edit_json(INVENTORY_FILE)
def puncteme_int(inv):
    inv["punctemes"][2] = 7


@_edit_json(INVENTORY_FILE)
def puncteme_token_int(inv):
    inv["punctemes"][2] = [7]


@_edit_json(INVENTORY_FILE)
def duplicate_symbol(inv):
    inv["symbols"][3] = inv["symbols"][2]


@_edit_json(INVENTORY_FILE)
def duplicate_puncteme(inv):
    inv["punctemes"][3] = inv["punctemes"][2]


@_edit_json(INVENTORY_FILE)
def unknown_symbol(inv):
    inv["punctemes"][2] = inv["punctemes"][2] + ["\u203d"]


@_edit_json(INVENTORY_FILE)
def min_count_fraction(inv):
    inv["min_count"] = 2.7


@_edit_json(INVENTORY_FILE)
def min_count_negative(inv):
    inv["min_count"] = -1


@_edit_json(CFG_FILE)
def backoff_eps_2(cfg):
    cfg["backoff_eps"] = 2


@_edit_json(CFG_FILE)
def backoff_eps_string(cfg):
    cfg["backoff_eps"] = "1e-6"


@_edit_json(CFG_FILE)
def xi_nan(cfg):
    cfg["xi"] = float("nan")  # json writes NaN, and Python's json reads it back


@_edit_json(CFG_FILE)
def xi_huge_int(cfg):
    cfg["xi"] = 10 ** 400  # a JSON integer no float holds


@_edit_json(CFG_FILE)
def smooth_delta_string(cfg):
    cfg["smooth_delta"] = "0.001"


@_edit_json(CFG_FILE)
def n_symbols_wrong(cfg):
    cfg["n_symbols"] += 1


@_edit_json(CFG_FILE)
def quote_xpos_string(cfg):
    cfg["meta"]["quote_xpos"] = "no"


@_edit_json(CFG_FILE)
def meta_not_an_object(cfg):
    cfg["meta"] = ["quote_xpos"]


@_edit_json(CFG_FILE)
def templates_duplicated(cfg):
    cfg["features"]["templates"].append("rel")


@_edit_json(CFG_FILE)
def templates_a_string(cfg):
    cfg["features"]["templates"] = "rel"


@_edit_params
def theta_nan(params):
    params["theta"][len(params["theta"]) // 2] = np.nan


@_edit_params
def theta_inf(params):
    params["theta"][0] = np.inf


@_edit_params
def psi_nan(params):
    params["psi"][2, 3, 1] = np.nan


@_edit_params
def backoff_tok_nan(params):
    params["backoff_tok_logp"][2] = np.nan


@_edit_params
def backoff_tok_unnormalised(params):
    params["backoff_tok_logp"][1:] -= 1.0


@_edit_params
def backoff_tok_as_ints(params):
    params["backoff_tok_logp"] = np.zeros(params["backoff_tok_logp"].shape, dtype=np.int64)


@_edit_params
def backoff_len_nan(params):
    params["backoff_len_logp"][0] = np.nan


@_edit_params
def backoff_len_positive(params):
    params["backoff_len_logp"][1] = 332.0


@_edit_params
def backoff_len_neg_inf(params):
    params["backoff_len_logp"][1] = -np.inf


#: case -> (corruption, what the message must say besides the file's path)
CASES = {
    "pair_id_9999": (pair_id_9999, ["E539", "[0, 9999]", "run from 0 to"]),
    "pair_id_negative": (pair_id_negative, ["E539", "[-1, 0]", "run from 0 to"]),
    "pair_not_a_pair": (pair_not_a_pair, ["E538", "pairs[", "[0, 1, 2]"]),
    "pair_id_float": (pair_id_float, ["E538", "pairs[", "1.5"]),
    "relation_key_not_normalised": (relation_key_not_normalised, ["E539", "'ACL:relcl'", "relation_key"]),
    "word_count_string": (word_count_string, ["E538", "word_counts[", "integer count"]),
    "word_count_bool": (word_count_bool, ["E538", "word_counts[", "True"]),
    "word_count_negative": (word_count_negative, ["E538", "word_counts[", "-3"]),
    "puncteme_int": (puncteme_int, ["E538", "punctemes[2]", "found 7"]),
    "puncteme_token_int": (puncteme_token_int, ["E538", "punctemes[2]", "found [7]"]),
    "duplicate_symbol": (duplicate_symbol, ["E539", "symbols holds", "twice (at 2 and 3)"]),
    "duplicate_puncteme": (duplicate_puncteme, ["E539", "punctemes holds", "twice (at 2 and 3)"]),
    "unknown_symbol": (unknown_symbol, ["E539", "punctemes[2]", "'\u203d'", "'symbols'"]),
    "min_count_fraction": (min_count_fraction, ["E538", "min_count", "2.7"]),
    "min_count_negative": (min_count_negative, ["E538", "min_count", "-1"]),
    "backoff_eps_2": (backoff_eps_2, ["E224", "backoff_eps"]),
    "backoff_eps_string": (backoff_eps_string, ["E226", "backoff_eps"]),
    "xi_nan": (xi_nan, ["E226", "'xi'"]),
    "xi_huge_int": (xi_huge_int, ["E226", "'xi'", "finite number", "..."]),
    "smooth_delta_string": (smooth_delta_string, ["E226", "smooth_delta"]),
    "n_symbols_wrong": (n_symbols_wrong, ["E226", "n_symbols"]),
    "quote_xpos_string": (quote_xpos_string, ["E226", "meta.quote_xpos", "'no'"]),
    "meta_not_an_object": (meta_not_an_object, ["E226", "'meta'"]),
    "templates_duplicated": (templates_duplicated, ["E226", "features.templates", "distinct", "repeated", "'rel'"]),
    "templates_a_string": (templates_a_string, ["E226", "features.templates"]),
    "theta_nan": (theta_nan, ["E227", "'theta'", "nan"]),
    "theta_inf": (theta_inf, ["E227", "'theta'", "index 0", "inf"]),
    "psi_nan": (psi_nan, ["E227", "'psi'"]),
    "backoff_tok_nan": (backoff_tok_nan, ["E228", "backoff_tok_logp", "entry 2"]),
    "backoff_tok_unnormalised": (backoff_tok_unnormalised, ["E228", "backoff_tok_logp", "sum to"]),
    "backoff_tok_as_ints": (backoff_tok_as_ints, ["E204", "backoff_tok_logp"]),
    "backoff_len_nan": (backoff_len_nan, ["E228", "backoff_len_logp", "entry 0"]),
    "backoff_len_positive": (backoff_len_positive, ["E228", "backoff_len_logp", "332.0 > 0"]),
    "backoff_len_neg_inf": (backoff_len_neg_inf, ["E228", "backoff_len_logp", "entry 1", "-inf"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_corrupted_model_is_refused_naming_file_and_field(case, model_dir):
    corrupt, needles = CASES[case]
    before = {name: (model_dir / name).read_bytes() for name in FILES}
    corrupt(model_dir)
    changed = [name for name in FILES if (model_dir / name).read_bytes() != before[name]]
    assert changed == [corrupt.file], "each case corrupts exactly one file"
    with pytest.raises(ValueError) as info:
        PunctModel.from_disk(model_dir)
    msg = str(info.value)
    assert str(model_dir / corrupt.file) in msg, msg
    for needle in needles:
        assert needle in msg, (needle, msg)


@pytest.mark.parametrize("case", ["theta_nan", "backoff_len_positive", "quote_xpos_string", "pair_id_9999"])
def test_corrupted_bytes_name_the_part(case, model_dir):
    """The same checks on :meth:`PunctModel.from_bytes`, naming the blob's part."""
    import srsly

    corrupt, needles = CASES[case]
    corrupt(model_dir)
    part = {CFG_FILE: "cfg", INVENTORY_FILE: "inventory", PARAMS_FILE: "params"}[corrupt.file]
    blob = srsly.msgpack_dumps({"cfg": (model_dir / CFG_FILE).read_text(encoding="utf-8"),
                                "inventory": (model_dir / INVENTORY_FILE).read_text(encoding="utf-8"),
                                "params": (model_dir / PARAMS_FILE).read_bytes()})
    with pytest.raises(ValueError) as info:
        PunctModel.from_bytes(blob)
    msg = str(info.value)
    assert f"model bytes ({part})" in msg, msg
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_valid_model_loads_and_round_trips_byte_identically(trained_dir, tmp_path):
    model = PunctModel.from_disk(trained_dir)
    model.to_disk(tmp_path / "again")
    for name in FILES:
        assert (tmp_path / "again" / name).read_bytes() == (trained_dir / name).read_bytes(), name
    back = PunctModel.from_disk(tmp_path / "again")
    assert back.to_bytes() == model.to_bytes()
    assert PunctModel.from_bytes(model.to_bytes()).to_bytes() == model.to_bytes()


def test_shipped_model_passes_validation_and_round_trips(tmp_path):
    shipped = Path(default_model_path("en"))
    model = PunctModel.from_disk(shipped)
    model.to_disk(tmp_path / "copy")
    for name in FILES:
        assert (tmp_path / "copy" / name).read_bytes() == (shipped / name).read_bytes(), name


def test_constructor_refuses_bad_backoff_eps_and_xi(trained_dir):
    inv = PunctModel.from_disk(trained_dir).inventory
    for eps in (2, -0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="E224"):
            PunctModel(inv, backoff_eps=eps)
    for xi in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="E225"):
            PunctModel(inv, xi=xi)
    assert PunctModel(inv, backoff_eps=0.0).backoff_eps == 0.0
