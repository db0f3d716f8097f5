"""The trained models that ship inside the package (``spacy_punctgen/shipped/<name>/``).

Why a module of its own: the spaCy component, the CLI and the tests all need to find the
default model of a language without knowing where the package is installed.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

from spacy_punctgen.errors import Errors
from spacy_punctgen.model.punct_model import CFG_FILE, INVENTORY_FILE, PARAMS_FILE

MODELS_DIR = Path(__file__).resolve().parents[1] / "shipped"
#: language code -> shipped model directory name (trained on that UD treebank's train split)
SHIPPED: Dict[str, str] = {"en": "en_ewt"}
#: language code -> shipped *restoration* model directory name: trained on the shipped parser's
#: own analysis of unpunctuated streams (workflow ``stream-model``), what ``load(lang)`` restores with
SHIPPED_RESTORE: Dict[str, str] = {"en": "en_ewt_stream"}


#: language code -> shipped lexical expert directory name (``lexical.json``, ``lexical.npz``), trained
#: beside the restoration model (workflow ``lexical-expert``); ``load(lang, lexical=True)`` adds it
SHIPPED_LEXICAL: Dict[str, str] = {"en": "en_ewt_lexical"}
#: language code -> shipped sentence-end expert directory name (``sentence_end.json``, ``.npz``;
#: experiments/streams workflow ``sentence-end-expert``): ``load(lang)`` restores the inputs it
#: parses as one sentence with it
SHIPPED_SENTENCE_END: Dict[str, str] = {"en": "en_ewt_sentence_end"}


def sentence_end_expert_path(lang: str = "en") -> Optional[Path]:
    """The directory of the sentence-end expert shipped for ``lang``, or None if none ships (or its
    files are missing from this installation)."""
    from spacy_punctgen.model.sentence_end import SENTENCE_END_CFG_FILE, SENTENCE_END_PARAMS_FILE

    name = SHIPPED_SENTENCE_END.get(str(lang).lower())
    path = MODELS_DIR / name if name is not None else None
    if path is None or not ((path / SENTENCE_END_CFG_FILE).is_file() and (path / SENTENCE_END_PARAMS_FILE).is_file()):
        return None
    return path


def ship_sentence_end(expert_dir, dest, treebank: str, license_name: str = "CC BY-SA 4.0") -> Path:
    """Copy the sentence-end expert saved in ``expert_dir`` into the package folder ``dest``,
    written back by its own serialiser, with a ``LICENSE`` naming its data (UD ``treebank``) and
    the licence its weights inherit."""
    from spacy_punctgen.model.sentence_end import SentenceEndExpert

    dest = SentenceEndExpert.from_disk(expert_dir).to_disk(dest)
    (Path(dest) / "LICENSE").write_text(
        f"The sentence-end expert's weights were trained on UD {treebank} (train; dev chose its weight and inner "
        f"factor) and inherit its licence: {license_name}.\n"
        f"Made by the workflow command `sentence-end-expert` (experiments/streams/project.yml) with "
        f"scripts/sentence_end_expert.py.\n", encoding="utf-8")
    return Path(dest)


def lexical_expert_path(lang: str = "en") -> Path:
    """The directory of the lexical expert shipped for ``lang``; ValueError naming the language if
    none ships (or if its files are missing from this installation)."""
    name = SHIPPED_LEXICAL.get(str(lang).lower())
    path = MODELS_DIR / name if name is not None else None
    if path is None or not ((path / "lexical.json").is_file() and (path / "lexical.npz").is_file()):
        raise ValueError(Errors.E999.format(lang=lang, shipped=", ".join(sorted(SHIPPED_LEXICAL)), path=path))
    return path


def default_model_path(lang: str = "en") -> Path:
    """The directory of the model shipped for ``lang``; ValueError naming the language if none
    ships (or if its files are missing from this installation)."""
    name = SHIPPED.get(str(lang).lower())
    if name is None:
        raise ValueError(Errors.E010.format(lang=lang, shipped=", ".join(sorted(SHIPPED))))
    return _model_files(lang, MODELS_DIR / name)


def restore_model_path(lang: str = "en") -> Path:
    """The directory of the restoration model shipped for ``lang`` with its parser (trained on that
    parser's trees and sentence boundaries of unpunctuated streams), else :func:`default_model_path`."""
    name = SHIPPED_RESTORE.get(str(lang).lower())
    if name is None:
        return default_model_path(lang)
    return _model_files(lang, MODELS_DIR / name)


def _model_files(lang: str, path: Path) -> Path:
    missing = [f for f in (CFG_FILE, INVENTORY_FILE, PARAMS_FILE) if not (path / f).is_file()]
    if missing:
        raise ValueError(Errors.E011.format(lang=lang, path=path, missing=", ".join(missing)))
    return path


def sample_transcript_path(lang: str = "en") -> Path:
    """The sample transcript shipped for ``lang`` (``shipped/samples/<lang>_transcript.txt``: treebank
    test sentences lowercased, without punctuation); ValueError naming the language if none."""
    path = MODELS_DIR / "samples" / f"{lang}_transcript.txt"
    if not path.is_file():
        raise ValueError(Errors.E096.format(lang=lang, path=path))
    return path


def write_shipped(nlp, dest, *, name: str, license_name: str, source: str, description: str) -> Path:
    """Write the pipeline ``nlp`` to ``dest`` (a package folder under ``models/``), replacing what
    was there, with a meta naming it, its data and the licence its weights inherit.  Written by
    spaCy itself (``to_disk``) into a temporary sibling first, so ``dest`` is never half written."""
    import shutil

    nlp.meta["name"] = name
    nlp.meta["license"] = license_name
    nlp.meta["sources"] = [{"name": source, "license": license_name}]
    nlp.meta["description"] = description
    dest = Path(dest)
    tmp = dest.with_name(f".{dest.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    nlp.to_disk(tmp)
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return dest


def ship_lexical(model_dir, dest, treebank: str, license_name: str = "CC BY-SA 4.0") -> Path:
    """Copy the lexical expert of the model in ``model_dir`` (one ``punctgen adapt`` wrote) into the
    package folder ``dest`` (``lexical.json``, ``lexical.npz``, what :func:`lexical_expert_path`
    finds), written back by the expert's own serialiser, with a ``LICENSE`` naming its data (UD
    ``treebank``) and the licence its weights inherit."""
    import json

    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.model.serialize import LEXICAL_CFG_FILE, LEXICAL_PARAMS_FILE, npz_bytes

    expert = PunctModel.from_disk(model_dir).lexical
    if expert is None:
        raise ValueError(Errors.E994.format(problem=f"{model_dir} holds no lexical expert to ship"))
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    params = expert.params()
    (dest / LEXICAL_CFG_FILE).write_text(json.dumps(expert.cfg(), sort_keys=True, ensure_ascii=False, indent=2) + "\n",
                                         encoding="utf-8")
    (dest / LEXICAL_PARAMS_FILE).write_bytes(npz_bytes(params, sorted(params)))
    (dest / "LICENSE").write_text(
        f"The lexical expert's weights were trained on UD {treebank} (train; dev chose its weight) and inherit "
        f"its licence: {license_name}.\n"
        f"Made by the workflow command `lexical-expert` (project.yml) with `punctgen adapt ... --base-model shipped`.\n",
        encoding="utf-8")
    return dest

