"""Fuzzing the saved-model format: a copy of the shipped model with one file corrupted
(truncated, bytes flipped, emptied, deleted, replaced by a folder; a JSON value of cfg.json or
inventory.json changed, deleted or added, of any type; an array of params.npz given non-finite
or out-of-range values, another dtype or shape, or deleted, or an array added).

Property: ``PunctModel.from_disk`` raises one of our documented errors (``[Ennn]``), and then the
component refuses the folder with E004; or it loads, and then the component analyses and restores
(the checks of tests/fuzz/fuzz_strategies.py: finite probabilities, every word kept) without any
exception.  Never another exception type.
"""
import json
import shutil
from functools import lru_cache

import numpy as np
import pytest
import spacy
from hypothesis import given
from hypothesis import strategies as st

from fuzz_strategies import (COUNTS, RUNS, DocSpec, assert_documented, check_analyzed, check_restored, guarded,
                             run_property, run_settings,
                             tried)
from spacy_punctgen.model.punct_model import PunctModel

FILES = ["cfg.json", "inventory.json", "params.npz"]
ARRAYS = ["theta", "psi", "ctx_keys", "ctx_counts", "prop_keys", "prop_idx", "backoff_tok_logp",
          "backoff_len_logp"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.sampled_from([0, 1, -1, 2, 9999, 2 ** 31])
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6)
    | st.sampled_from(["^", "<unk>", ",", "", "full", "l2r", "r2l", "float16", "float64", "punct"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=4)

corruptions = st.one_of(
    st.tuples(st.just("truncate"), st.sampled_from(FILES), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.sampled_from(FILES),
              st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=4)),
    st.tuples(st.sampled_from(["delete", "empty", "folder"]), st.sampled_from(FILES)),
    st.tuples(st.just("json"), st.sampled_from(["cfg.json", "inventory.json"]),
              st.lists(st.integers(0, 10 ** 6), min_size=0, max_size=5),
              st.sampled_from(["set", "set", "set", "delete", "add"]), json_values),
    st.tuples(st.just("array"), st.sampled_from(ARRAYS),
              st.sampled_from(["nonfinite", "value", "dtype", "shape", "delete", "extra", "empty"]),
              st.floats(0, 1, exclude_max=True),
              st.sampled_from([np.nan, np.inf, -np.inf, 1e30, -1e30, 6e4, -6e4, 0.0, 1.0, -1.0, 2.0, 700.0,
                               -700.0, 1e-30, 2 ** 63, -5.0]),
              st.sampled_from(["float64", "float32", "float16", "int64", "uint8", "int32", "bool", "uint64",
                               "complex64", "U3"])),
)


@lru_cache(maxsize=1)
def _arrays(shipped):
    with np.load(shipped / "params.npz", allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _walk_set(node, choices, action, value):
    """Walk ``node`` along ``choices`` (an index per level, modulo the size) and change what it
    reaches: set it to ``value``, delete it, or add a key ``value`` in a dict."""
    parent, key = None, None
    for c in choices:
        if isinstance(node, dict) and node:
            k = sorted(node)[c % len(node)]
        elif isinstance(node, list) and node:
            k = c % len(node)
        else:
            break
        parent, key, node = node, k, node[k]
    if action == "add" and isinstance(node, dict):
        node["zz_fuzz"] = value
        return
    if parent is None:  # the whole file
        return value if action == "set" else {}
    if action == "delete":
        del parent[key]
    else:
        parent[key] = value
    return None


def corrupt(folder, shipped, c):
    """Apply corruption ``c`` (a tuple drawn from :data:`corruptions`) to the model in ``folder``."""
    kind = c[0]
    if kind == "array":
        _, name, action, where, value, dtype = c
        arrays = dict(_arrays(shipped))
        a = arrays[name].copy()
        if action in ("nonfinite", "value"):
            if a.size:
                flat = a.reshape(-1)
                i = int(where * flat.size)
                try:
                    with np.errstate(all="ignore"):
                        flat[i] = value if action == "value" or not np.issubdtype(a.dtype, np.integer) \
                            else np.iinfo(a.dtype).max
                except (OverflowError, ValueError):
                    flat[i] = np.iinfo(a.dtype).max if np.issubdtype(a.dtype, np.integer) else value
            arrays[name] = a
        elif action == "dtype":
            with np.errstate(all="ignore"):
                arrays[name] = a.astype(dtype)
        elif action == "shape":
            arrays[name] = a[:-1] if where < 0.4 else (np.concatenate([a, a[:1]]) if where < 0.8 else a.reshape(1, -1))
        elif action == "delete":
            del arrays[name]
        elif action == "extra":
            arrays["fuzz_extra"] = a[:3]
        else:
            arrays[name] = a[:0]
        np.savez(folder / "params.npz", **arrays)
        return
    path = folder / c[1]
    if kind == "json":
        _, _, choices, action, value = c
        data = json.loads(path.read_text(encoding="utf-8"))
        whole = _walk_set(data, choices, action, value)
        path.write_text(json.dumps(data if whole is None else whole), encoding="utf-8")
    elif kind == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[:int(len(data) * c[2])])
    elif kind == "flip":
        data = bytearray(path.read_bytes())
        for where, xor in c[2]:
            data[int(where * len(data))] ^= xor
        path.write_bytes(bytes(data))
    elif kind == "delete":
        path.unlink()
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        path.unlink()
        path.mkdir()


def probe_specs():
    """Docs that exercise the model: a sentence with a comma and a period, quotes, an unseen mark."""
    words = ["when", "I", "came", ",", "he", "said", "“", "hi", "”", "‽"]
    return DocSpec(words, [True] * 10, ["SCONJ", "PRON", "VERB", "PUNCT", "PRON", "VERB", "PUNCT", "INTJ", "PUNCT",
                                        "PUNCT"],
                   [2, 2, 5, 2, 5, 5, 7, 5, 7, 5],
                   ["mark", "nsubj", "advcl", "punct", "nsubj", "ROOT", "punct", "ccomp", "punct", "punct"],
                   ["word"] * 3 + ["punct"] + ["word"] * 2 + ["punct", "word", "punct", "punct"])


def check_model_dir(folder):
    """The property: a documented error (and E004 from the component), or a model that works."""
    try:
        PunctModel.from_disk(folder)
    except Exception as err:  # noqa: BLE001 - the property is about which exceptions
        assert_documented(err)
        nlp = spacy.blank("en")
        nlp.add_pipe("punctgen", config={"model": str(folder)})  # the model is read when first needed
        with pytest.raises(Exception) as info:
            nlp.get_pipe("punctgen").require_model()
        assert_documented(info.value, {"E004"})
        return "refused"
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(folder)})
    nlp.add_pipe("punctgen", name="punctgen_restore", config={"model": str(folder), "mode": "restore",
                                                               "n_samples": 50})
    try:
        doc = nlp(probe_specs().make(nlp.vocab))
    except Exception as err:  # noqa: BLE001 - a model that loads must run
        raise AssertionError(f"the model loaded, then failed: {type(err).__name__}: {err}") from err
    check_analyzed(doc)
    check_restored(doc)
    return "works"


@pytest.mark.parametrize("run", RUNS)
def test_corrupted_model_directories(request, shipped_dir, tmp_path_factory, run):
    @run_settings(run, 12, 3000)
    @given(c=corruptions)
    @guarded
    def prop(c):
        if not tried("model_files.corrupted_dir"):
            return
        folder = tmp_path_factory.mktemp("model")
        for name in FILES:
            shutil.copyfile(shipped_dir / name, folder / name)
        corrupt(folder, shipped_dir, c)
        try:
            COUNTS[f"model_files.corrupted_dir ({check_model_dir(folder)})"] += 1
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    run_property(request.node.name, prop)


@pytest.mark.parametrize("run", RUNS)
def test_corrupted_model_bytes(request, shipped_dir, run):
    blob = _blob(str(shipped_dir))

    @run_settings(run, 8, 2000)
    @given(cut=st.floats(0, 1), flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
                                                max_size=4))
    @guarded
    def prop(cut, flips):
        if not tried("model_files.corrupted_bytes"):
            return
        data = bytearray(blob[:max(0, int(len(blob) * cut))] if cut < 0.9 else blob)
        for where, xor in flips:
            if data:
                data[int(where * len(data))] ^= xor
        try:
            PunctModel.from_bytes(bytes(data))
        except Exception as err:  # noqa: BLE001
            assert_documented(err)

    run_property(request.node.name, prop)


@lru_cache(maxsize=1)
def _blob(shipped):
    return PunctModel.from_disk(shipped).to_bytes()


# ------------------------------------------------------------------ the property can fail
def test_the_shipped_model_works(shipped_dir, tmp_path):
    for name in FILES:
        shutil.copyfile(shipped_dir / name, tmp_path / name)
    assert check_model_dir(tmp_path) == "works"


def test_an_undocumented_load_error_is_caught(shipped_dir, tmp_path, monkeypatch):
    for name in FILES:
        shutil.copyfile(shipped_dir / name, tmp_path / name)

    def broken(path):
        raise KeyError("theta")

    monkeypatch.setattr(PunctModel, "from_disk", staticmethod(broken))
    with pytest.raises(AssertionError, match="KeyError"):
        check_model_dir(tmp_path)


def test_a_model_that_loads_but_misleads_is_caught(shipped_dir, tmp_path, monkeypatch):
    """A loader that let NaN through (issue 23 item 9) fails the property at first use."""
    for name in FILES:
        shutil.copyfile(shipped_dir / name, tmp_path / name)
    original = PunctModel.from_disk

    def nan_backoff(*args, **kwargs):
        pm = original(*args, **kwargs)
        pm.theta = np.full_like(pm.theta, np.nan)
        return pm

    monkeypatch.setattr(PunctModel, "from_disk", staticmethod(nan_backoff))
    with pytest.raises(AssertionError):
        check_model_dir(tmp_path)
