"""Saving and loading a :class:`~.punct_model.PunctModel`: the format, its versions, validation.

A model is three parts: ``cfg.json`` (hyperparameters, sizes, ``meta``), ``inventory.json``
(the punctuation inventory) and ``params.npz`` (θ, ψ, the feature dictionary, the back-off
model), and optionally a fourth, the lexical expert restoration multiplies in
(``lexical.json`` and ``lexical.npz``, :mod:`.lexical`).  :func:`to_disk` writes them into a directory, :func:`to_bytes` into one msgpack blob;
both are deterministic (sorted JSON keys, a deflated .npz with fixed timestamps and order), so
equal models give equal bytes.

Version 2 stores the feature dictionary factorised (distinct context / property hashes), a
deflated params.npz, optional float16 θ.  Version 1 files (flat hash arrays) are still read.
Loading checks every part and names the file (or blob part) that is wrong: the types of the
JSON fields, the inventory's consistency (distinct symbols and punctemes, every token a
symbol, pair ids in range), finite θ and ψ, back-off arrays that are log-probability
distributions, and a ``meta.quote_xpos`` that is a boolean.  So a model that loads also runs.
"""
from __future__ import annotations

import io
import json
import math
import zipfile
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple, Union

import numpy as np

from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.errors import Errors
from spacy_punctgen.features.templates import FeatureConfig, FeatureIndex
from spacy_punctgen.model.lexical import LexicalExpert

FORMAT_NAME = "spacy-punctgen-model"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
CFG_FILE, INVENTORY_FILE, PARAMS_FILE = "cfg.json", "inventory.json", "params.npz"
#: the optional lexical expert (model/lexical.py) beside the model: its settings and weights
LEXICAL_CFG_FILE, LEXICAL_PARAMS_FILE = "lexical.json", "lexical.npz"
PARAM_NAMES = ("theta", "psi", "ctx_keys", "ctx_counts", "prop_keys", "prop_idx",
               "backoff_tok_logp", "backoff_len_logp")
PARAM_NAMES_V1 = ("theta", "psi", "feature_ctx", "feature_prop", "backoff_tok_logp", "backoff_len_logp")


def model_cfg(model) -> dict:
    """The contents of ``cfg.json``."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "mode": model.mode,
        "direction": model.direction,
        "xi": model.xi,
        "backoff_eps": model.backoff_eps,
        "smooth_delta": model.smooth_delta,
        "features": model.feature_config.to_dict(),
        "n_features": model.n_features,
        "n_symbols": model.n_symbols,
        "theta_dtype": model.theta_dtype,
        "meta": model.meta,
    }


def model_params(model) -> Dict[str, np.ndarray]:
    """The arrays of params.npz.  The sorted feature dictionary is stored factorised: the
    distinct context hashes with their feature counts, and per feature the index of its
    property hash among the distinct ones (a few thousand)."""
    ctx, prop = model.index.ctx, model.index.prop
    # = np.unique(ctx, return_counts=True) and np.unique(prop, return_inverse=True), without
    # their sorted copies of 16 M-entry arrays (ctx is sorted; prop has few distinct values)
    starts = np.flatnonzero(np.concatenate([[True], ctx[1:] != ctx[:-1]])) if ctx.size else \
        np.zeros(0, dtype=np.int64)
    ctx_keys = ctx[starts]
    ctx_counts = np.diff(np.append(starts, ctx.size))
    prop_keys = np.unique(prop)
    idx_dtype = np.uint16 if prop_keys.size <= 1 << 16 else np.uint32
    prop_idx = np.searchsorted(prop_keys, prop).astype(idx_dtype)
    return {
        "theta": np.ascontiguousarray(model.theta, dtype=np.dtype(model.theta_dtype)),
        "psi": np.ascontiguousarray(model.psi, dtype=np.float32),
        "ctx_keys": np.ascontiguousarray(ctx_keys, dtype=np.uint64),
        "ctx_counts": np.ascontiguousarray(ctx_counts, dtype=np.uint32),
        "prop_keys": np.ascontiguousarray(prop_keys, dtype=np.uint64),
        "prop_idx": np.ascontiguousarray(prop_idx.ravel(), dtype=idx_dtype),
        "backoff_tok_logp": np.ascontiguousarray(model.backoff_tok_logp, dtype=np.float64),
        "backoff_len_logp": np.ascontiguousarray(model.backoff_len_logp, dtype=np.float64),
    }


def _feature_arrays(params: Dict[str, np.ndarray], version: int, F: int, where: str
                    ) -> Tuple[np.ndarray, np.ndarray]:
    """The flat (ctx, prop) hash arrays of the feature dictionary, from either layout."""
    def bad(name):
        return ValueError(Errors.E204.format(where=where, name=name, sizes=f"n_features={F}"))

    if version == 1:
        for name in ("feature_ctx", "feature_prop"):
            if params[name].dtype != np.uint64 or params[name].shape != (F,):
                raise bad(name)
        return params["feature_ctx"], params["feature_prop"]
    ck, cc, pk, pi = (params[k] for k in ("ctx_keys", "ctx_counts", "prop_keys", "prop_idx"))
    if ck.dtype != np.uint64 or ck.ndim != 1:
        raise bad(name="ctx_keys")
    if cc.dtype != np.uint32 or cc.shape != ck.shape or int(cc.sum(dtype=np.int64)) != F:
        raise bad(name="ctx_counts")
    if pk.dtype != np.uint64 or pk.ndim != 1:
        raise bad(name="prop_keys")
    if pi.dtype not in (np.uint16, np.uint32) or pi.shape != (F,) or (F and int(pi.max()) >= pk.size):
        raise bad(name="prop_idx")
    return np.repeat(ck, cc.astype(np.int64)), pk[pi.astype(np.int64)]


def is_finite_number(v) -> bool:
    """A JSON number that converts to a finite float (not a bool, NaN, infinity or a huge int)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _cfg_problem(cfg: dict, n_symbols: int) -> Optional[Tuple[str, str, object]]:
    """The first cfg field with a wrong type or value, as (field, what it must be, what it is):
    the fields that the model's constructor would otherwise coerce (``float("2")``,
    ``bool("no")``) or never look at (``n_symbols``).  What the constructor itself refuses
    (mode, direction, theta_dtype, the ranges of ``smooth_delta``, ``backoff_eps``, ``xi``)
    it reports, wrapped in E209."""
    for key in ("mode", "direction", "theta_dtype"):
        if key in cfg and not isinstance(cfg[key], str):
            return key, "a string", cfg[key]
    for key in ("xi", "backoff_eps", "smooth_delta"):
        if key in cfg and not is_finite_number(cfg[key]):
            return key, "a finite number", cfg[key]
    if "n_symbols" in cfg and not (type(cfg["n_symbols"]) is int and cfg["n_symbols"] == n_symbols):
        return "n_symbols", f"the inventory's number of symbols, {n_symbols}", cfg["n_symbols"]
    feats = cfg.get("features")
    if not isinstance(feats, dict):
        return "features", "an object with 'templates' and 'properties'", feats
    for key in ("templates", "properties"):
        names = feats.get(key)
        if not (isinstance(names, list) and all(isinstance(t, str) for t in names)):
            return f"features.{key}", "a list of names", names
        if len(set(names)) != len(names):
            dup = next(t for i, t in enumerate(names) if t in names[:i])
            return f"features.{key}", "a list of distinct names, one of them repeated", dup
    meta = cfg.get("meta", {})
    if meta is not None and not isinstance(meta, dict):
        return "meta", "an object", meta
    if meta and "quote_xpos" in meta and not isinstance(meta["quote_xpos"], bool):
        return "meta.quote_xpos", "true or false", meta["quote_xpos"]
    return None


def _check_finite(arr: np.ndarray, name: str, where: str) -> None:
    """θ and ψ hold no NaN or infinity (one vectorised pass; E227 says where)."""
    ok = np.isfinite(arr)
    if not ok.all():
        bad = np.flatnonzero(~ok.ravel())
        raise ValueError(Errors.E227.format(where=where, name=name, n=bad.size, index=int(bad[0]),
                                            value=arr.ravel()[bad[0]]))


def _log_distribution_problem(logp: np.ndarray, offset: int = 0,
                              rest: Optional[np.ndarray] = None) -> Optional[str]:
    """What keeps ``logp`` (with ``rest``: entries that may be ``-inf``) from being the logs of a
    probability distribution (finite, at most 0, probabilities summing to 1), or None.  Anything
    else gives NaN or positive log-probabilities through the back-off mixture."""
    ok = np.isfinite(logp)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        return f"entry {i + offset} is {logp[i]}"
    if (logp > 0).any():
        i = int(np.flatnonzero(logp > 0)[0])
        return f"entry {i + offset} is {logp[i]} > 0"
    rest = np.zeros(0) if rest is None else rest
    if np.isnan(rest).any() or (rest > 0).any():
        return f"entry 0 is {rest[0]}"
    total = float(np.exp(np.concatenate([rest, logp]).astype(np.float64)).sum())
    if not abs(total - 1.0) <= 1e-6:
        return f"its probabilities sum to {total}, not 1"
    return None


def build(cls, cfg: dict, inv_data: dict, params: Dict[str, np.ndarray], where: Dict[str, str]):
    """A ``cls`` (:class:`~.punct_model.PunctModel`) from the three parts, each checked;
    ``where`` names the part (file) in the error messages."""
    if not isinstance(cfg, dict) or cfg.get("format") != FORMAT_NAME:
        raise ValueError(Errors.E205.format(where=where["cfg"], format=FORMAT_NAME))
    version = cfg.get("version")
    if version not in READABLE_VERSIONS:
        raise ValueError(Errors.E206.format(where=where["cfg"], version=version,
                                            readable=", ".join(map(str, READABLE_VERSIONS))))
    try:
        inventory = PunctInventory.from_dict(inv_data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ValueError(Errors.E207.format(where=where["inventory"], err=err)) from None
    problem = _cfg_problem(cfg, len(inventory.symbols))
    if problem is not None:
        field, expected, value = problem
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:80] + "..."
        raise ValueError(Errors.E226.format(where=where["cfg"], field=field, expected=expected, value=shown))
    try:
        model = cls(inventory, FeatureConfig.from_dict(cfg["features"]), mode=cfg["mode"],
                    direction=cfg["direction"], xi=cfg["xi"], backoff_eps=cfg["backoff_eps"],
                    smooth_delta=cfg.get("smooth_delta", 0.0),
                    meta=cfg.get("meta") or {}, theta_dtype=cfg.get("theta_dtype", "float32"))
    except (KeyError, TypeError) as err:
        raise ValueError(Errors.E208.format(where=where["cfg"], err=err)) from None
    except ValueError as err:
        raise ValueError(Errors.E209.format(where=where["cfg"], err=err)) from None
    names = PARAM_NAMES_V1 if version == 1 else PARAM_NAMES
    missing = [k for k in names if k not in params]
    if missing:
        raise ValueError(Errors.E210.format(where=where["params"], missing=missing))
    S = model.n_symbols
    F = cfg.get("n_features", -1)
    if not isinstance(F, int) or F < 0:
        raise ValueError(Errors.E211.format(where=where["cfg"], n_features=F))
    tok, lens = params["backoff_tok_logp"], params["backoff_len_logp"]
    checks = [
        (params["theta"].dtype == np.dtype(model.theta_dtype) and params["theta"].shape == (F,), "theta"),
        (params["psi"].dtype == np.float32 and params["psi"].shape == (S, S, 4), "psi"),
        (tok.dtype.kind == "f" and tok.shape == (S,), "backoff_tok_logp"),
        (lens.dtype.kind == "f" and lens.ndim == 1 and lens.size >= 2, "backoff_len_logp"),
    ]
    for ok, name in checks:
        if not ok:
            raise ValueError(Errors.E204.format(where=where["params"], name=name,
                                                sizes=f"n_features={F}, n_symbols={S}"))
    for name, problem in (("backoff_tok_logp", _log_distribution_problem(tok[1:], 1, tok[:1])),
                          ("backoff_len_logp", _log_distribution_problem(lens))):
        if problem is not None:
            raise ValueError(Errors.E228.format(where=where["params"], name=name, problem=problem))
    ctx, prop = _feature_arrays(params, version, F, where["params"])
    try:
        model.set_index(FeatureIndex(ctx, prop))
    except ValueError as err:
        raise ValueError(Errors.E209.format(where=where["params"], err=err)) from None
    model.theta = params["theta"].astype(np.float32)
    model.psi = params["psi"].copy()
    for name, arr in (("theta", model.theta), ("psi", model.psi)):  # float32 (a float16 θ is slow to check)
        _check_finite(arr, name, where["params"])
    model.backoff_tok_logp = params["backoff_tok_logp"].astype(np.float64)
    model.backoff_len_logp = params["backoff_len_logp"].astype(np.float64)
    return model


def npz_bytes(params: Dict[str, np.ndarray], names: Optional[Sequence[str]] = None) -> bytes:
    """A deterministic, deflated .npz (fixed timestamps, fixed order: ``names``, by default the
    model's :data:`PARAM_NAMES`) readable by ``np.load``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in (PARAM_NAMES if names is None else names):
            arr_buf = io.BytesIO()
            np.lib.format.write_array(arr_buf, params[name], allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, arr_buf.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
    return buf.getvalue()


def read_npz(data: bytes, where: str) -> Dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except Exception as err:  # zipfile.BadZipFile, ValueError, EOFError, OSError...
        raise ValueError(Errors.E212.format(where=where, kind=type(err).__name__, err=err)) from None


def _lexical(cfg_text: Optional[str], params: Optional[bytes], where: str) -> Optional[LexicalExpert]:
    """The lexical expert read from its settings and weights; None when neither is there (E994
    when only one is)."""
    if cfg_text is None and params is None:
        return None
    if cfg_text is None or params is None:
        raise ValueError(Errors.E994.format(problem=f"{where} holds the expert's settings or its weights, not both"))
    try:
        cfg = json.loads(cfg_text)
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as err:
        raise ValueError(Errors.E216.format(path=where, err=err)) from None
    return LexicalExpert.from_cfg(cfg, read_npz(params, where), where)


def _lexical_in(path: Path) -> Optional[LexicalExpert]:
    """The lexical expert saved in folder ``path``, if any (:func:`_lexical`)."""
    cfg, params = path / LEXICAL_CFG_FILE, path / LEXICAL_PARAMS_FILE
    return _lexical(cfg.read_text(encoding="utf-8") if cfg.is_file() else None,
                    params.read_bytes() if params.is_file() else None, str(params))


def read_lexical(path: Union[str, Path]) -> LexicalExpert:
    """The lexical expert saved in folder ``path`` (``lexical.json`` and ``lexical.npz``, as
    :func:`to_disk` writes them beside a model, or alone: the shipped one); E994 if either is missing."""
    expert = _lexical_in(Path(path))
    if expert is None:
        raise ValueError(Errors.E994.format(problem=f"{path} does not hold {LEXICAL_CFG_FILE} and {LEXICAL_PARAMS_FILE}"))
    return expert


def to_bytes(model) -> bytes:
    """Serialise (deterministic): cfg, inventory and parameters in one msgpack blob (and the
    lexical expert, when the model has one)."""
    import srsly

    blob = {
        "cfg": json.dumps(model_cfg(model), sort_keys=True, ensure_ascii=False),
        "inventory": json.dumps(model.inventory.to_dict(), sort_keys=True, ensure_ascii=False),
        "params": npz_bytes(model_params(model)),
    }
    lexical = getattr(model, "lexical", None)
    if lexical is not None:
        blob["lexical_cfg"] = json.dumps(lexical.cfg(), sort_keys=True, ensure_ascii=False)
        blob["lexical_params"] = npz_bytes(lexical.params(), sorted(lexical.params()))
    return srsly.msgpack_dumps(blob)


def from_bytes(cls, data: bytes):
    import srsly

    try:
        blob = srsly.msgpack_loads(data)
        cfg = json.loads(blob["cfg"])
        inv = json.loads(blob["inventory"])
        raw = blob["params"]
        lexical = (blob.get("lexical_cfg"), blob.get("lexical_params"))
    except Exception as err:
        raise ValueError(Errors.E213.format(kind=type(err).__name__, err=err)) from None
    where = {"cfg": "model bytes (cfg)", "inventory": "model bytes (inventory)", "params": "model bytes (params)"}
    model = build(cls, cfg, inv, read_npz(raw, where["params"]), where)
    model.lexical = _lexical(*lexical, "model bytes (lexical expert)")
    return model


def to_disk(model, path: Union[str, Path]) -> Path:
    """Write ``cfg.json``, ``inventory.json`` and ``params.npz`` into directory ``path``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / CFG_FILE).write_text(json.dumps(model_cfg(model), sort_keys=True, ensure_ascii=False, indent=2) + "\n",
                                 encoding="utf-8")
    (path / INVENTORY_FILE).write_text(json.dumps(model.inventory.to_dict(), sort_keys=True,
                                                  ensure_ascii=False) + "\n", encoding="utf-8")
    (path / PARAMS_FILE).write_bytes(npz_bytes(model_params(model)))
    lexical = getattr(model, "lexical", None)
    for name in (LEXICAL_CFG_FILE, LEXICAL_PARAMS_FILE):  # a model without one leaves none behind
        if lexical is None and (path / name).is_file():
            (path / name).unlink()
    if lexical is not None:
        (path / LEXICAL_CFG_FILE).write_text(json.dumps(lexical.cfg(), sort_keys=True, ensure_ascii=False, indent=2)
                                             + "\n", encoding="utf-8")
        (path / LEXICAL_PARAMS_FILE).write_bytes(npz_bytes(lexical.params(), sorted(lexical.params())))
    return path


def from_disk(cls, path: Union[str, Path]):
    path = Path(path)
    if not path.is_dir():
        raise ValueError(Errors.E214.format(path=path))
    files = {k: path / f for k, f in (("cfg", CFG_FILE), ("inventory", INVENTORY_FILE), ("params", PARAMS_FILE))}
    for f in files.values():
        if not f.is_file():
            raise ValueError(Errors.E215.format(path=f))
    loaded = {}
    for k in ("cfg", "inventory"):
        try:
            loaded[k] = json.loads(files[k].read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(Errors.E216.format(path=files[k], err=err)) from None
    params = read_npz(files["params"].read_bytes(), str(files["params"]))
    model = build(cls, loaded["cfg"], loaded["inventory"], params, {k: str(v) for k, v in files.items()})
    model.lexical = _lexical_in(path)
    return model
