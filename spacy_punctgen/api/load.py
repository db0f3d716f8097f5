"""``spacy_punctgen.load(lang, mode)``: the shipped pipelines, offline, right after ``pip install``.

Why: restoration needs a parser of *unpunctuated* text and analysis one of punctuated text;
neither is something a user has (spaCy's stock English pipelines use ClearNLP labels, and
``spacy_udpipe`` downloads models trained on punctuated text). So one parser ships inside the
package, ``spacy_punctgen/shipped/en_ewt_parser/`` (a spaCy pipeline folder: tok2vec + tagger +
morphologizer + parser, ``configs/parser_stream.cfg``), trained by the workflow
(``preprocess-stream``, ``train-parser-stream``) on UD English EWT both as depunctuated
multi-sentence documents, half of them lowercased (so it parses unsegmented, unpunctuated,
caseless streams and finds their sentence boundaries), and as normal punctuated documents (so
the same model serves analysis). One model for both halves the package and the training.

``load`` returns an ordinary spaCy ``Language`` (an ``English`` with the four components and
``punctgen``), whose class mixes in :class:`~spacy_punctgen.api.stream.StreamingLanguage`
so that ``nlp(text)`` takes text longer than a window (windows of ``chunk_chars`` characters, see
:mod:`spacy_punctgen.api.stream`; up to ``nlp.max_length``, as in spaCy; ``restore_text``: any length)::

    import spacy_punctgen
    nlp = spacy_punctgen.load("en")                 # restore mode
    print(nlp("when i came he left")._.restored_text)
    nlp = spacy_punctgen.load("en", mode="analyze") # explain the punctuation of normal text

The weights inherit the licence of their training data: UD English EWT is CC BY-SA 4.0.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Optional, TextIO, Tuple, Union

from spacy_punctgen.errors import Errors
from spacy_punctgen.pipeline.shipped import (MODELS_DIR, default_model_path, lexical_expert_path, restore_model_path,
                                             sentence_end_expert_path,
                                             write_shipped)
from spacy_punctgen.api.stream import DEFAULT_CHUNK_CHARS, check_single_words
from spacy_punctgen.parsing.words import WORDS_COMPONENT, keep_words_whole, register_words_component

PathLike = Union[str, Path]

#: language code -> shipped parser directory name (under spacy_punctgen/shipped/)
SHIPPED_PARSERS: Dict[str, str] = {"en": "en_ewt_parser"}
#: what a shipped parser folder must hold (checked before spaCy reads it)
PARSER_FILES = ("config.cfg", "meta.json", "parser/model", "tok2vec/model")
MODES = ("restore", "analyze", "correct")
#: restore mode: the parser searches with a beam of this width and restoration decodes each
#: sentence from the mixture of the beam's trees (``load(..., kbest=K)``; docs/decoding.md,
#: "Several trees from one parser")
DEFAULT_KBEST = 1
#: restore mode: a one-line input of at most this many words is parsed as one sentence, the parser
#: not allowed to cut it (``load(..., single_sentence_words=N)``, 0: never). 40 holds 98.7 % of EWT
#: dev's sentences and stays well below a 10-sentence stream (about 107 words); on EWT dev one
#: sentence per call, AED 0.0972 -> 0.0907 (docs/evaluation_streams.md, "One sentence at a time")
DEFAULT_SINGLE_SENTENCE_WORDS = 40
#: language code -> shipped truecaser directory name (``load(..., truecase=True)``)
SHIPPED_TRUECASERS: Dict[str, str] = {"en": "en_ewt_truecase"}
#: what a shipped truecaser folder must hold
TRUECASER_FILES = ("config.cfg", "meta.json", "punctgen_truecase/model", "punctgen_truecase/cfg")


#: files of a saved spaCy pipeline folder that :func:`damaged_file` decodes, by how they are written
#: (top level, then in every component folder)
PIPELINE_JSON_FILES, PIPELINE_MSGPACK_FILES = ("meta.json", "vocab/strings.json"), ("tokenizer",)
COMPONENT_JSON_FILES, COMPONENT_MSGPACK_FILES = ("cfg",), ("model", "moves")


def _decode_problem(path: Path, as_json: bool) -> Optional[str]:
    """What is wrong with the file ``path`` as JSON (``as_json``) or msgpack, or None."""
    import srsly

    try:
        data = path.read_bytes()
        if as_json:
            srsly.json_loads(data.decode("utf8"))
        else:
            srsly.msgpack_loads(data)
    except UnicodeDecodeError as err:
        return f"not UTF-8 text: {err}"
    except ValueError as err:  # srsly's decoders: truncated, or not that format at all
        return f"not valid {'JSON' if as_json else 'msgpack, as spaCy writes it'}: {err}"
    return None


def damaged_file(folder: PathLike) -> Optional[Tuple[Path, str]]:
    """``(file, what is wrong)`` for the first file of the saved spaCy pipeline ``folder`` that does not
    decode as what spaCy wrote there (``cfg`` files JSON, ``model`` files msgpack, ...); None if every
    one does, or ``folder`` is not a folder (a package name). Why: spaCy's own errors for a
    truncated file (``Unpack failed: incomplete input``) name no file."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    checks = [(folder / f, True) for f in PIPELINE_JSON_FILES] + [(folder / f, False) for f in PIPELINE_MSGPACK_FILES]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        checks += [(sub / f, True) for f in COMPONENT_JSON_FILES] + [(sub / f, False) for f in COMPONENT_MSGPACK_FILES]
    for path, as_json in checks:
        problem = _decode_problem(path, as_json) if path.is_file() else None
        if problem is not None:
            return path, problem
    return None


def naming_damaged_file(source: PathLike, read: Callable[[], Any]) -> Any:
    """``read()`` (which reads the pipeline folder ``source``); a ValueError from it that does not
    name the file at fault becomes E022 naming it, if :func:`damaged_file` finds one."""
    try:
        return read()
    except ValueError as err:
        found = damaged_file(source)
        if found is None or str(found[0]) in str(err):  # not a damaged file, or the error names it
            raise
        raise ValueError(Errors.E022.format(path=source, file=found[0], reason=found[1])) from err


def read_pipeline(source: PathLike, **kwargs):
    """``spacy.load(source, **kwargs)``, with E022 naming the file if one of a saved pipeline
    folder is damaged (truncated ``parser/model``, ...)."""
    import spacy

    return naming_damaged_file(source, lambda: spacy.load(source, **kwargs))


def _shipped_folder(names: Dict[str, str], lang: str, files, unknown: Callable[[], str],
                    incomplete: Callable[[Path, str], str]) -> Path:
    """``MODELS_DIR / names[lang]`` holding every one of ``files``; ``unknown()`` /
    ``incomplete(path, missing)`` give the error message otherwise."""
    name = names.get(str(lang).lower())
    if name is None:
        raise ValueError(unknown())
    path = MODELS_DIR / name
    missing = [f for f in files if not (path / f).is_file()]
    if missing:
        raise ValueError(incomplete(path, ", ".join(missing)))
    return path


def shipped_parser_path(lang: str = "en") -> Path:
    """The folder of the parser shipped for ``lang`` (E051 if none ships, E052 if its files are
    missing from this installation)."""
    return _shipped_folder(
        SHIPPED_PARSERS, lang, PARSER_FILES,
        lambda: Errors.E051.format(lang=lang, shipped=", ".join(sorted(SHIPPED_PARSERS))),
        lambda path, missing: Errors.E052.format(lang=lang, path=path, missing=missing))


def shipped_truecaser_path(lang: str = "en") -> Path:
    """The folder of the truecaser shipped for ``lang`` (E089 if none ships, E090 if its files
    are missing from this installation)."""
    return _shipped_folder(
        SHIPPED_TRUECASERS, lang, TRUECASER_FILES,
        lambda: Errors.E089.format(lang=lang, shipped=", ".join(sorted(SHIPPED_TRUECASERS))),
        lambda path, missing: Errors.E090.format(lang=lang, path=path, missing=missing))


def _check_truecase(truecase) -> Union[bool, PathLike]:
    if isinstance(truecase, (bool, str, Path)) and truecase != "":
        return truecase
    raise ValueError(Errors.E088.format(value=truecase))


def add_truecaser(nlp, lang: str = "en", truecase: Union[bool, PathLike] = True) -> None:
    """Append the ``punctgen_truecase`` component (:mod:`spacy_punctgen.truecasing.truecaser`) to
    ``nlp``, sourced from the shipped truecaser (``truecase=True``) or from the pipeline folder
    ``truecase``. It runs after ``punctgen``, whose restored text it re-cases."""
    from spacy_punctgen.truecasing.truecaser import FACTORY

    source = shipped_truecaser_path(lang) if truecase is True else truecase
    tc_nlp = read_pipeline(source)
    names = [n for n in tc_nlp.pipe_names if tc_nlp.get_pipe_meta(n).factory == FACTORY]
    if not names:
        raise ValueError(Errors.E087.format(path=source, pipes=", ".join(tc_nlp.pipe_names)))
    nlp.add_pipe(names[0], name=FACTORY, source=tc_nlp)


def load(lang: str = "en", mode: str = "restore", *, parser: Optional[PathLike] = None,
         model: Optional[PathLike] = None, chunk_chars: int = DEFAULT_CHUNK_CHARS,
         progress: Optional[TextIO] = None, config: Optional[Dict[str, Any]] = None,
         truecase: Union[bool, PathLike] = False, kbest: int = DEFAULT_KBEST, kbest_search: str = "beam",
         kbest_temperature: float = 1.0, single_sentence_words: int = DEFAULT_SINGLE_SENTENCE_WORDS,
         lexical: Union[bool, PathLike] = False, sentence_end: Union[bool, PathLike, None] = None):
    """The shipped pipeline for ``lang``: parser + ``punctgen`` in ``mode`` ("restore": punctuate
    unpunctuated, possibly unsegmented and lowercased text, ``doc._.restored_text``; "analyze":
    explain the punctuation of normal text; "correct": propose corrections of the punctuation of
    normal text, ``doc._.corrected_text``).

    ``parser``: another spaCy pipeline folder or package name with a UD parser (default: the
    shipped one); ``model``: another punctuation model folder (default: the one shipped for
    ``lang``; in restore mode with the shipped parser (``parser`` None or its folder), the
    restoration model trained on that parser's analysis of unpunctuated streams, :func:`~spacy_punctgen.pipeline.shipped.restore_model_path`); ``config``: further ``punctgen`` settings (e.g. ``{"restore_empty_weight": 0.35}``; ``"model"``
there is the same as ``model``; ``"kbest_weights"`` goes to the ``punctgen_kbest`` component's ``weights``);
    ``chunk_chars``/``progress``: long texts, see :func:`spacy_punctgen.api.stream.streaming`;
    ``truecase``: True adds the shipped truecaser after ``punctgen`` (``doc._.restored_text``
    comes out capitalised, ``doc._.truecased_text`` holds the input re-cased), a path adds that
    truecaser pipeline instead (:func:`add_truecaser`);
    ``kbest`` (restore mode): with K > 1 the parser searches with a beam of width K, once per
    document (component ``punctgen_kbest``, :class:`~spacy_punctgen.parsing.kbest.KBestParser`,
    in place of the disabled ``parser``), and each sentence is restored from the mixture of the
    beam's trees of it (weighed by ``config={"kbest_weights": ...}``); 1 is the greedy parse and
    one tree (E097 for other values; the other modes ignore it).  ``kbest_search="sample"``: the
    greedy parse and K - 1 trees drawn from the parser's transition probabilities at
    ``kbest_temperature`` instead of the beam (:mod:`~spacy_punctgen.parsing.parser_samples`;
    with ``config={"kbest_weights": "beam"}`` the trees weigh by their share of the K draws).
    ``single_sentence_words`` (restore mode): a one-line input (``nlp(text)``, ``nlp.pipe``,
    :func:`~spacy_punctgen.api.stream.restore_text`) of at most that many whitespace-separated
    words is parsed as one sentence (no cut except after a ``.``/``?``/``!`` the text has), as chat
    messages and captions typed one sentence at a time are; 0: the parser decides everywhere
    (E054 for other values; the other modes ignore it).
    ``lexical`` (restore mode): True restores with the lexical expert shipped for ``lang`` beside
    the model (what the words around each gap say, multiplied into punctgen's slot distribution,
    docs/decoding.md "Lexical evidence beside the tree"; E999 if none ships), a path with the
    expert in that folder; False (the default): the model's own, if it carries one
    (``punctgen adapt`` models do).
    ``sentence_end`` (restore mode): the sentence-end expert for the inputs parsed as one sentence
    (``single_sentence_words``; :mod:`spacy_punctgen.model.sentence_end`: the whole sentence's words
    weigh its final mark, and a sentence end inside it is made rare). None (the default): the one
    shipped for ``lang`` when restoring with the shipped parser and restoration model; True: the
    shipped one (E029 if none ships); a path: the expert in that folder; False: none.
    """
    from spacy_punctgen.pipeline.component import check_finite_settings  # (and registers the factory)
    from spacy_punctgen.api.stream import streaming

    if mode not in MODES:
        raise ValueError(Errors.E050.format(mode=mode))
    check_finite_settings(dict(config or {}))  # before spaCy's E961, which names no setting
    truecase = _check_truecase(truecase)
    single_sentence_words = check_single_words(single_sentence_words)
    from spacy_punctgen.parsing.kbest import KBEST_COMPONENT, check_k, check_search
    from spacy_punctgen.parsing.parser_samples import check_temperature

    kbest = check_k(kbest)
    kbest_search, kbest_temperature = check_search(kbest_search), check_temperature(kbest_temperature)
    nlp = restore_parser(lang, parser) if mode == "restore" else _load_parser(lang, parser)
    settings: Dict[str, Any] = dict(config or {})
    settings["mode"] = mode
    weights = settings.pop("kbest_weights", "uniform")  # the punctgen_kbest component's setting
    if model is not None:
        settings["model"] = str(model)
    elif settings.get("model") is None and mode == "restore" and _is_shipped_parser(lang, parser):
        settings["model"] = str(restore_model_path(lang))  # trained on this parser's own trees
    if lexical is not False and mode == "restore":
        settings["lexical_model"] = str(lexical_expert_path(lang) if lexical is True else lexical)
    if mode == "restore":
        expert = _sentence_end_path(lang, sentence_end, shipped=model is None and _is_shipped_parser(lang, parser))
        if expert is not None and settings.get("sentence_end_model") is None:
            settings["sentence_end_model"] = str(expert)
    if mode == "restore" and kbest > 1:
        nlp.add_pipe(KBEST_COMPONENT, after="parser", config={"k": kbest, "parser": "parser", "search": kbest_search,
                                                              "temperature": kbest_temperature, "weights": weights})
        nlp.disable_pipe("parser")
    nlp.add_pipe("punctgen", config=settings)
    if truecase is not False:
        add_truecaser(nlp, lang, truecase)
    return streaming(nlp, chunk_chars=chunk_chars, progress=progress,
                     single_words=single_sentence_words if mode == "restore" else 0)


def _sentence_end_path(lang: str, sentence_end: Union[bool, PathLike, None], shipped: bool) -> Optional[Path]:
    """The sentence-end expert folder :func:`load` restores with (see its ``sentence_end``)."""
    if sentence_end is False:
        return None
    if sentence_end is None or sentence_end is True:
        path = sentence_end_expert_path(lang)
        if path is None and sentence_end is True:
            raise ValueError(Errors.E029.format(lang=lang))
        return path if (sentence_end is True or shipped) else None
    return Path(sentence_end)


def _load_parser(lang: str, parser: Optional[PathLike]):
    register_words_component()
    source = shipped_parser_path(lang) if parser is None else parser
    nlp = read_pipeline(source)
    if "parser" not in nlp.pipe_names:
        raise ValueError(Errors.E053.format(path=source, pipes=", ".join(nlp.pipe_names)))
    return nlp


def _is_shipped_parser(lang: str, parser: Optional[PathLike]) -> bool:
    """No parser given, or the folder of the one shipped for ``lang``."""
    if parser is None:
        return True
    try:
        return Path(parser).resolve() == shipped_parser_path(lang).resolve()
    except (OSError, ValueError):
        return False


def restore_model_for(lang: str = "en", parser: Optional[PathLike] = None) -> Path:
    """The punctuation model that restores from ``parser``'s trees: the shipped restoration model
    for the shipped parser (``parser`` None or its folder), else the model of gold trees."""
    return restore_model_path(lang) if _is_shipped_parser(lang, parser) else default_model_path(lang)


def restore_parser(lang: str = "en", parser: Optional[PathLike] = None):
    """The parsing half of ``load(lang, "restore", parser=parser)``: the parser pipeline with the
    restore tokenizer (:func:`keep_words_whole`) and :func:`words_stay_words`, without
    ``punctgen``. What restoration parses with, so what a restoration model is trained on
    (:mod:`spacy_punctgen.api.stream_training`)."""
    nlp = _load_parser(lang, parser)
    keep_words_whole(nlp)
    nlp.add_pipe(WORDS_COMPONENT)
    return nlp


def ship_parser(src: PathLike, dest: PathLike, *, name: str = "en_ewt_parser",
                license_name: str = "CC BY-SA 4.0", source: str = "UD English EWT") -> Path:
    """Write the trained parser pipeline ``src`` (e.g. ``training/en_ewt/parser-stream/model-best``)
    to ``dest`` (the package's ``shipped/<name>/``), replacing what was there, with its meta
    naming the data it was trained on and the licence its weights inherit (workflow
    ``ship-parser``). The pipeline is written by spaCy itself (``to_disk``), so ``dest`` holds
    exactly what ``spacy.load`` reads."""
    nlp = read_pipeline(src)
    if "parser" not in nlp.pipe_names:
        raise ValueError(Errors.E053.format(path=src, pipes=", ".join(nlp.pipe_names)))
    return write_shipped(nlp, dest, name=name.split("_", 1)[1] if name.startswith(f"{nlp.lang}_") else name,
                         license_name=license_name, source=source,
                         description=("Tagger, morphologizer and UD parser of punctuated and of unpunctuated, "
                                      "unsegmented, partly lowercased English (spacy-punctgen's shipped parser)"))


def load_pipeline(path: PathLike, **kwargs):
    """``spacy.load(path)`` for a pipeline saved by any version of this package: a config whose
    ``punctgen`` block is in an older shape (flat model settings, ``kbest_weights``) is upgraded
    first (:func:`~spacy_punctgen.pipeline.component.upgrade_config`); ``kwargs`` go to
    :func:`spacy.util.load_model_from_config` (``disable``, ``enable``, ``exclude``)."""
    from spacy import util

    from spacy_punctgen.pipeline.component import upgrade_config

    path = Path(path)
    register_words_component()
    import spacy_punctgen.parsing.kbest  # noqa: F401  (registers punctgen_kbest)

    config = upgrade_config(util.load_config(path / "config.cfg", interpolate=False))
    nlp = util.load_model_from_config(config, meta=naming_damaged_file(path, lambda: util.get_model_meta(path)),
                                      **kwargs)
    return naming_damaged_file(path, lambda: nlp.from_disk(path, exclude=kwargs.get("exclude", [])))
