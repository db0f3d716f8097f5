"""Loading a saved baseline from damaged files (issue 23, item 15).

Every system is trained small and saved; each case damages one file (binary, truncated,
garbage JSON, a field of the wrong type, weights that are foreign, truncated or of other
labels) and loading must raise our ValueError naming that file, never a bare
UnicodeDecodeError, JSONDecodeError, KeyError, UnpicklingError or a crash (a truncated CRFsuite
model used to kill the process).  ``baseline --load`` on such a folder prints the message and
exits 1, and a damaged tuning-cache entry is reported with the file to delete.
"""
import collections
import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.baselines import get_system
from spacy_punctgen.baselines.base import META_FILE, load_baseline
from spacy_punctgen.baselines.tune import PointCache
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.testing.env import package_env

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
TINY = {
    "trivial": {},
    "crf_lexical": {"max_iterations": 5},
    "crf_tagger": {"epochs": 1, "width": 8, "hidden": 8, "rows": 100},
    "attn_tagger": {"epochs": 1, "width": 8, "hidden": 8, "rows": 100},
    "spacy_tagger": {"max_steps": 4, "eval_frequency": 2},
}
WEIGHTS = {"crf_lexical": "crf.model", "crf_tagger": "model.bin", "attn_tagger": "model.bin"}
BINARY = b"\xb7\x93NUMPY\x00\xff" + bytes(range(256)) * 2  # not UTF-8 from its first byte


@pytest.fixture(scope="module")
def data():
    train = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")[0][:40]
    dev = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")[0][:5]
    return train, dev


@pytest.fixture(scope="module")
def saved(data, tmp_path_factory):
    """Each system, trained small and saved: name -> folder."""
    root = tmp_path_factory.mktemp("saved")
    for name, hyper in TINY.items():
        get_system(name)().fit(data[0], None, **hyper).to_disk(root / name)
    return root


@pytest.fixture
def copy(saved, tmp_path):
    def make(name):
        out = tmp_path / name
        shutil.copytree(saved / name, out)
        return out
    return make


def _meta(folder):
    return json.loads((folder / META_FILE).read_text(encoding="utf-8"))


def _write_meta(folder, meta):
    (folder / META_FILE).write_text(json.dumps(meta), encoding="utf-8")


def _refused(folder, file, *needles):
    with pytest.raises(ValueError) as info:
        load_baseline(folder)
    msg = str(info.value)
    assert str(folder / file) in msg, msg
    for needle in needles:
        assert needle in msg, (needle, msg)
    return msg


# --------------------------------------------------------------------- baseline.json
def _binary(folder):
    (folder / META_FILE).write_bytes(BINARY)


def _truncated(folder):
    raw = (folder / META_FILE).read_bytes()
    (folder / META_FILE).write_bytes(raw[: len(raw) // 2])


def _empty(folder):
    (folder / META_FILE).write_bytes(b"")


def _garbage_json(folder):
    (folder / META_FILE).write_text("[1, 2, 3]", encoding="utf-8")


def _unknown_system(folder):
    meta = _meta(folder)
    meta["system"] = "crf_lexicl"
    _write_meta(folder, meta)


def _state_not_object(folder):
    meta = _meta(folder)
    meta["state"] = ["final", "[\".\"]"]
    _write_meta(folder, meta)


META_CASES = {
    "binary": (_binary, ["E590", "UnicodeDecodeError"]),
    "truncated": (_truncated, ["E590", "JSONDecodeError"]),
    "empty": (_empty, ["E590"]),
    "garbage_json": (_garbage_json, ["E591", "system"]),
    "unknown_system": (_unknown_system, ["E591", "system", "'crf_lexicl'"]),
    "state_not_object": (_state_not_object, ["E591", "state"]),
}


@pytest.mark.parametrize("name", sorted(TINY))
@pytest.mark.parametrize("case", sorted(META_CASES))
def test_damaged_baseline_json_is_named(name, case, copy):
    folder = copy(name)
    damage, needles = META_CASES[case]
    damage(folder)
    _refused(folder, META_FILE, *needles)


# ----------------------------------------------------------- fields of the saved state
def _set(path, value):
    def damage(folder):
        meta = _meta(folder)
        obj = meta["state"]
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value
        _write_meta(folder, meta)
    return damage


def _drop(key):
    def damage(folder):
        meta = _meta(folder)
        del meta["state"][key]
        _write_meta(folder, meta)
    return damage


STATE_CASES = {
    ("trivial", "final_not_a_label"): (_set(["final"], "."), ["E591", "state.final", "'.'"]),
    ("trivial", "final_missing"): (_drop("final"), ["E591", "state.final", "missing"]),
    ("crf_lexical", "vocab_not_words"): (_set(["vocab"], [1, 2]), ["E591", "state.vocab"]),
    ("crf_lexical", "hyper_upos_string"): (_set(["hyper", "upos"], "no"), ["E591", "state.hyper.upos", "true or false"]),
    ("crf_lexical", "hyper_c1_string"): (_set(["hyper", "c1"], "abc"), ["E591", "state.hyper.c1", "number"]),
    ("crf_lexical", "labels_without_unk"): (_set(["labels", "labels"], ["[]"]), ["E591", "state.labels.labels", "<unk>"]),
    ("crf_tagger", "hyper_unknown_key"): (_set(["hyper", "widht"], 8), ["E591", "state.hyper.widht", "unknown"]),
    ("crf_tagger", "hyper_decoder_unknown"): (_set(["hyper", "decoder"], "beam"), ["E591", "state.hyper.decoder"]),
    ("crf_tagger", "labels_not_labels"): (_set(["labels", "labels"], ["[]", "<unk>", ","]),
                                          ["E591", "state.labels.labels[2]", "','"]),
    ("attn_tagger", "labels_repeated"): (_set(["labels", "labels"], ["[]", "[]", "<unk>"]),
                                         ["E591", "state.labels.labels", "repeated"]),
    ("attn_tagger", "history_not_list"): (_set(["history"], {"epoch": 1}), ["E591", "state.history"]),
    ("attn_tagger", "hyper_width_null"): (_set(["hyper", "width"], None), ["E591", "state.hyper.width"]),
    ("spacy_tagger", "tagset_not_tags"): (_set(["tagset"], "[]"), ["E591", "state.tagset"]),
    ("spacy_tagger", "punct_types_not_strings"): (_set(["labels", "punct_types"], [3]),
                                                  ["E591", "state.labels.punct_types"]),
    ("spacy_tagger", "hyper_not_object"): (_set(["hyper"], [1]), ["E591", "state.hyper"]),
}


@pytest.mark.parametrize("name,case", sorted(STATE_CASES))
def test_bad_state_field_is_named(name, case, copy):
    folder = copy(name)
    damage, needles = STATE_CASES[(name, case)]
    damage(folder)
    _refused(folder, META_FILE, *needles)


# ------------------------------------------------------------------------ weights files
def _half(path):
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _head_cut(path):
    path.write_bytes(path.read_bytes()[:20])


def _foreign(path):
    path.write_bytes(BINARY)


def _empty_file(path):
    path.write_bytes(b"")


WEIGHT_CASES = {"truncated_half": _half, "truncated_to_20_bytes": _head_cut, "binary_garbage": _foreign,
                "empty": _empty_file}


@pytest.mark.parametrize("name", sorted(WEIGHTS))
@pytest.mark.parametrize("case", sorted(WEIGHT_CASES))
def test_damaged_weights_are_named(name, case, copy):
    if name == "crf_lexical":
        pytest.importorskip("pycrfsuite")
    folder = copy(name)
    WEIGHT_CASES[case](folder / WEIGHTS[name])
    _refused(folder, WEIGHTS[name], "E592")


def test_truncated_crfsuite_model_is_refused_in_process(copy):
    """CRFsuite reads a truncated model past its end and kills the process (SIGSEGV): run the
    load in a child so that a crash fails this test instead of the whole run."""
    pytest.importorskip("pycrfsuite")
    folder = copy("crf_lexical")
    _half(folder / "crf.model")
    code = ("import sys\nfrom spacy_punctgen.baselines.base import load_baseline\n"
            "try:\n    load_baseline(sys.argv[1])\nexcept ValueError as e:\n    print(e)\n")
    res = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True,
                         env=package_env(), timeout=120)
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert "E592" in res.stdout and str(folder / "crf.model") in res.stdout and "header says" in res.stdout


@pytest.mark.parametrize("name", ["crf_tagger", "attn_tagger"])
def test_pickle_naming_code_is_refused(name, copy):
    """A weights file is a list of bytes; a pickle that names a class or function is refused
    before anything in it runs."""
    folder = copy(name)
    (folder / "model.bin").write_bytes(pickle.dumps([collections.OrderedDict()]))
    _refused(folder, "model.bin", "E592", "E596", "collections.OrderedDict")
    (folder / "model.bin").write_bytes(pickle.dumps({"not": b"a list"}))
    _refused(folder, "model.bin", "E592", "not a list of bytes")


@pytest.mark.parametrize("name", ["crf_tagger", "attn_tagger"])
def test_weights_of_other_labels_are_refused(name, copy):
    folder = copy(name)
    meta = _meta(folder)
    meta["state"]["labels"]["labels"] = [lab for lab in meta["state"]["labels"]["labels"] if lab != "[]"]
    _write_meta(folder, meta)
    _refused(folder, "model.bin", "E592", "nO")


def test_weights_with_missing_parts_are_refused(copy):
    folder = copy("crf_tagger")
    parts = pickle.loads((folder / "model.bin").read_bytes())
    (folder / "model.bin").write_bytes(pickle.dumps(parts[:1]))
    _refused(folder, "model.bin", "E592", "E595")


def test_crfsuite_labels_must_match_the_label_vocabulary(copy):
    pytest.importorskip("pycrfsuite")
    folder = copy("crf_lexical")
    meta = _meta(folder)
    meta["state"]["labels"]["labels"] = ["[]", "<unk>"]
    _write_meta(folder, meta)
    _refused(folder, "crf.model", "E592", "label vocabulary")


# ------------------------------------------------------------------- the spaCy pipeline
def test_damaged_spacy_pipeline_is_named(copy):
    folder = copy("spacy_tagger")
    (folder / "pipeline" / "config.cfg").write_bytes(BINARY)
    _refused(folder, "pipeline", "E592", "spaCy pipeline")


def test_truncated_tagger_weights_are_named(copy):
    folder = copy("spacy_tagger")
    _half(folder / "pipeline" / "tagger" / "model")
    _refused(folder, "pipeline", "E592")


def test_pipeline_without_tagger_is_named(copy):
    import spacy

    folder = copy("spacy_tagger")
    shutil.rmtree(folder / "pipeline")
    spacy.blank("xx").to_disk(folder / "pipeline")
    _refused(folder, "pipeline", "E593", "tagger")


def test_missing_pipeline_is_named(copy):
    folder = copy("spacy_tagger")
    shutil.rmtree(folder / "pipeline")
    _refused(folder, "pipeline", "E579")


# ----------------------------------------------------------- valid saves, CLI, tune cache
@pytest.mark.parametrize("name", sorted(TINY))
def test_valid_saves_still_load_and_predict_the_same(name, saved, data):
    if name == "crf_lexical":
        pytest.importorskip("pycrfsuite")
    fresh = get_system(name)().fit(data[0], None, **TINY[name])
    again = load_baseline(saved / name)
    assert again.name == name
    assert again.predict(data[1]) == load_baseline(saved / name).predict(data[1])
    if name in ("trivial", "crf_lexical"):  # deterministic fits: the same predictions as a fresh one
        assert again.predict(data[1]) == fresh.predict(data[1])


def test_cli_load_of_binary_file_names_it(copy):
    folder = copy("trivial")
    _binary(folder)
    cmd = [sys.executable, "-m", "spacy_punctgen", "baseline", "trivial", "--load", str(folder),
           "--test", str(SAMPLE / "en_sample-ud-test.conllu")]
    res = subprocess.run(cmd, capture_output=True, text=True, env=package_env(), timeout=300)
    assert res.returncode == 1, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "E590" in res.stderr and str(folder / META_FILE) in res.stderr, res.stderr[-2000:]


def test_damaged_tuning_cache_entry_names_the_file(saved, data, tmp_path):
    cache = PointCache(tmp_path / "cache", "trivial", [SAMPLE / "en_sample-ud-train.conllu"])
    system = load_baseline(saved / "trivial")
    cache.put({}, system, {"aed": 0.5})
    assert cache.report({}) == {"aed": 0.5}
    point = next((tmp_path / "cache").glob("*/point.json"))
    point.write_bytes(BINARY)
    with pytest.raises(ValueError) as info:
        cache.report({})
    msg = str(info.value)
    assert "E594" in msg and str(point) in msg and str(point.parent) in msg, msg
    point.write_text('{"hyper": {}, "dev": null}', encoding="utf-8")
    with pytest.raises(ValueError, match="E594"):
        cache.report({})
