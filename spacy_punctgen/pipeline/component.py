"""The ``punctgen`` spaCy component: analysis and restoration of punctuation, trainable in
``spacy train``.

A thin layer over :class:`PunctModel`.  Each sentence of a parsed Doc is
depunctuated (:mod:`doc_convert`) and, depending on ``mode``:

``mode = "analyze"`` (default; punctuated text): the best underlying tree ``T'`` is decoded:

* ``doc._.underlying_punct``: one dict per slot of every sentence: ``sentence``,
  ``slot``, ``after`` (index of the word token before the slot, None for slot 0),
  ``underlying`` and ``surface`` token tuples (``underlying`` is None where the
  model gives the sentence's punctuation probability 0);
* ``token._.punct_left`` / ``token._.punct_right``: the punctemes (token tuples) the token's
  constituent sprouts (``None`` on punctuation tokens);
* ``doc._.punct_logprob``: ``Σ log p'(x|T)`` over the Doc's sentences, where ``p'`` is the
  evaluation distribution of ``punct_ppl`` (smoothing + back-off mixture, see model.py):
  finite even where a poor parse makes the punctuation impossible under ``p`` (whose
  ``underlying`` entries are then None).  It costs a second, smoothed DP pass (most of the
  analysis' time when it was computed eagerly), so it is computed when first read, by the
  component that analysed the Doc (with its model at that time), and then kept in the Doc; a
  Doc that is serialised (``to_bytes``; ``nlp.pipe(..., n_process=2)`` does it) or copied carries
  it as a number (:mod:`.extensions`).

Marks the model never saw in training (and a mark written ``^``, the model's own start symbol):
the slot that holds one gets ``underlying`` None (the model has no account of it); the rest of
the sentence, words included, is analysed as if that slot held only its known marks.  In
``punct_logprob`` such a mark is scored as the unknown symbol ``<unk>`` (finite, like unseen
words in language-model perplexity).

Types: the tuples above stay tuples after ``Doc.to_bytes``/``from_bytes`` and with
``nlp.pipe(..., n_process=2)`` (the extensions' getters turn what msgpack gives back as lists
into tuples again).

Threads: one component may be called from several threads at once (a web server's shared
pipeline): the calls that use the model take turns on a lock, so results equal sequential
calls.  Trees: a token whose head lies outside its sentence (Doc sentence starts that cut an
arc) is one of that sentence's roots, as for spaCy's ``Span.root``; heads that form a cycle are
refused with E016.

``mode = "restore"`` (unpunctuated or partly punctuated text): surface punctuation per slot
is chosen by :mod:`spacy_punctgen.decode` (``restore_method``, ``n_samples``, ``seed``) and
*inserted* into the Doc's text (:func:`.restore.slot_insertions`): every character of
``doc.text`` stays, in order; marks go only between whitespace-separated tokens; a gap that
already holds marks keeps them (``repunctuate = true`` deletes the marks at the edges of tokens
first and decides those gaps afresh). A model with a lexical expert (``punctgen adapt`` trains
one) multiplies its evidence into each slot's distribution before the choice
(:mod:`spacy_punctgen.decode.lexical`; ``lexical_weight``: None for the weight chosen on dev, 0
for punctgen alone):

* ``doc._.restored_punct``: one dict per slot: ``sentence``, ``slot``, ``after``,
  ``surface`` (the chosen tokens, the model's own symbols, e.g. ``ABBR.``; for a ``fixed`` slot
  the marks the text already had there), ``prob`` and ``fixed`` (True where the text decided:
  marks already there, or a gap inside a token);
* ``doc._.restored_text``: ``doc.text`` with the marks inserted;
* ``doc._.restored_edits``: where each mark went: ``insertions`` (``(offset in doc.text,
  string)``, in order), ``deletions`` (``(start, end)`` spans, only with ``repunctuate``) and
  ``tokens`` (per whitespace-separated token of ``doc.text``: ``start``, ``end``, and the marks
  inserted ``before`` and ``after`` it).

``mode = "correct"`` (punctuated text that may hold errors): each slot's punctuation is
corrected from the model's slot marginal times a noise model of how writers damage it
(:mod:`.correct`, docs/correction.md): ``doc._.corrected_punct`` (per slot ``observed``,
``surface``, ``prob``) and ``doc._.corrected_text``.  With ``correction_model`` (the folder of a
correction model written by ``scripts/correct_train.py``) the paper's method corrects instead.

Training.  The component is a :class:`TrainablePipe`: its θ and ψ live as float32
params ``theta``/``psi`` of a parameter-only thinc :class:`Model`, the registered
architecture ``spacy_punctgen.PunctModel.v1`` (:mod:`.architectures`, the ``thinc_model``
setting), so spaCy's optimizer (and its parameter averages, via ``use_params``) update them.
``initialize`` builds the inventory and feature dictionary from the Examples' reference Docs
(gold UD trees and punctuation), ``update`` computes the exact gradient of the log-likelihood
with the DP (:meth:`PunctModel.objective_and_gradient`) and hands it to the Model with
``inc_grad``, ``score`` calls the registered scorer ``spacy_punctgen.punct_scorer.v1``
(:mod:`.scorers`, the ``scorer`` setting), which reports ``punct_ppl`` (per-slot perplexity
of the reference punctuation), ``punct_lp`` (``−ln punct_ppl``: higher is better, the one
weighted in model selection) and ``punct_aed`` (AED of restoring the reference punctuation
from the reference trees).  Predictions and scores read the reference/predicted Docs only
through their trees, so in ``spacy train`` a parser must run before ``punctgen`` (e.g.
sourced and frozen; see docs/usage.md).

The model is read the first time the component needs it (E004 for a missing or bad one):
the configured ``model`` path, else the model shipped for the pipeline's language (E003 if
none ships). A saved pipeline is self-contained: ``spacy.load`` loads ``punctgen/model`` from
the pipeline's folder, so the configured path is read only if that is excluded.

Settings are checked when the component is built (E008): ``n_samples`` is an integer from 1
to :data:`MAX_SAMPLES`, ``seed`` an integer >= 0. The model's own settings (channel, direction,
ψ's start, smoothing: :class:`~spacy_punctgen.model.settings.ModelSettings`, the same as
``punctgen train``'s) are the ``[components.punctgen.model_settings]`` block; they matter only
when the component trains a model itself. Several trees per sentence: how they weigh is the
``weights`` setting of the ``punctgen_kbest`` component that made them.

Serialisation (``to_bytes``/``from_bytes``/``to_disk``/``from_disk``, and so ``nlp.to_disk``
and ``spacy.load``) goes through spaCy's serializer dicts, whose keys ``exclude`` takes:
``cfg`` (the settings, ``cfg`` in the component's folder) and ``model`` (the trained
:class:`PunctModel`: the ``model/`` folder, or the model shipped for the language if the
component has not loaded one yet).  Loading restores the saved settings except
:data:`RUNTIME_SETTINGS` (how to run: ``mode``, ``restore_method``, ``n_samples``, ``seed``,
``restore_empty_weight``, ``correction_model``, ``repunctuate``, ``lexical_weight``, ``lexical_model``),
which stay those the loading pipeline's config gave the component.  ``from_disk`` of a folder
without ``model/`` raises E013 (unless ``model`` is excluded).
"""
from __future__ import annotations

import math
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

import numpy as np
import srsly
from spacy import util
from spacy.attrs import IDX
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from thinc.api import Model, Optimizer

from spacy_punctgen.decode.mbr import MAX_SAMPLES, METHODS, check_empty_weight
from spacy_punctgen.errors import Errors, Warnings
from spacy_punctgen.model.lexical import check_weight
from spacy_punctgen.model.sentence_end import check_factor
from spacy_punctgen.model.settings import ModelSettings, default_model_settings
from spacy_punctgen.pipeline.analyze import analyze_docs, doc_logprob
from spacy_punctgen.pipeline.architectures import PUNCT_MODEL_ARCHITECTURE, build_punct_model
from spacy_punctgen.pipeline.correct import predict_corrections, set_corrections
from spacy_punctgen.pipeline.doc_convert import check_doc, docs_quote_xpos, gold_sentences
from spacy_punctgen.pipeline.extensions import register_extensions, set_pending_logprob, set_token_pairs
from spacy_punctgen.pipeline.restore import (FOREIGN_MIN_WORDS, FOREIGN_SHARE, RestoreSettings, apply_edits,
                                             restore_parsed_docs, token_edits, unknown_word_share)
from spacy_punctgen.pipeline.scorers import PUNCT_SCORER, punct_score

MODEL_DIR = "model"
CFG_FILE = "cfg"
#: what the component does with a Doc
MODES = ("analyze", "restore", "correct")
#: Settings of how the component runs: loading a saved component keeps the ones the loading
#: pipeline's config gave it (e.g. ``spacy.load(path, config={"components": {"punctgen":
#: {"mode": "restore"}}})``); every other setting comes from the saved ``cfg``.
RUNTIME_SETTINGS = ("mode", "restore_method", "n_samples", "seed", "restore_empty_weight", "correction_model",
                    "repunctuate", "lexical_weight", "lexical_model", "sentence_end_model", "sentence_end_weight")
_CACHE_LIMIT = 200_000

register_extensions()


def _int_setting(name: str, value, low: int, high: Optional[int]) -> int:
    """``value`` as an int, E008 unless it is an integer (a float with an integer value will
    do, not a bool) within ``[low, high]``."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
        and float(value).is_integer() and value >= low and (high is None or value <= high)
    if not ok:
        allowed = f"integers >= {low}" if high is None else f"integers from {low} to {high:,}"
        raise ValueError(Errors.E008.format(name=name, allowed=allowed, value=value))
    return int(value)


#: the number settings whose range a non-finite value is told (E023); any other number in the
#: component's config (``model_settings``' included) must be finite too
FLOAT_SETTINGS = {
    "restore_empty_weight": " above 0 (1: minimum expected edit distance; below 1: more marks)",
    "lexical_weight": " >= 0, or None (0: punctgen alone; None: the weight chosen on dev)",
    "sentence_end_weight": " >= 0, or None (0: not used; None: the weight chosen on dev)",
}


def check_finite_settings(config: Dict[str, Any], prefix: str = "") -> None:
    """E023 naming the setting for a nan or infinite number anywhere in a ``punctgen`` config
    (``model_settings`` and lists included). Why: spaCy refuses such a config before the factory
    runs, with its E961, which names neither the setting nor the value."""
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            check_finite_settings(value, prefix=f"{name}.")
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (float, np.floating)) and not math.isfinite(item):
                raise ValueError(Errors.E023.format(name=name, allowed=FLOAT_SETTINGS.get(name, ""), value=item))


def _choice_setting(name: str, value, allowed) -> Any:
    if value not in allowed:
        raise ValueError(Errors.E008.format(name=name, allowed=list(allowed), value=value))
    return value


def shipped_model_path(lang: str) -> Optional[Path]:
    """The model shipped with the package for ``lang``, or None (see :mod:`spacy_punctgen.pipeline.shipped`,
    imported here so that loading the factory does not import the model code).  W001 when one
    ships but its files are missing."""
    from spacy_punctgen.pipeline.shipped import SHIPPED, default_model_path

    if str(lang).lower() not in SHIPPED:
        return None
    try:
        return default_model_path(lang)
    except ValueError as err:  # its files are missing: a broken installation
        warnings.warn(Warnings.W001.format(lang=lang, err=err))
        return None


def load_punct_model(path: Path):
    """The :class:`PunctModel` saved at ``path`` (E004 naming the path if it cannot be read)."""
    from spacy_punctgen.model.punct_model import PunctModel

    try:
        return PunctModel.from_disk(path)
    except (OSError, ValueError) as err:
        raise ValueError(Errors.E004.format(path=path, reason=err)) from None


def read_saved_cfg(component_dir: Path, cfg_file: Path) -> Dict[str, Any]:
    """The settings a saved component wrote to ``cfg_file`` (a JSON object); E021 naming the
    file and what is wrong with it when it is not one (truncated, overwritten, not UTF-8)."""
    try:
        saved = srsly.read_json(cfg_file)
    except UnicodeDecodeError as err:
        reason = f"not UTF-8 text: {err}"
    except ValueError as err:  # srsly's JSON decoder: truncated or not JSON at all
        reason = f"not valid JSON: {err}"
    else:
        if isinstance(saved, dict):
            return saved
        reason = f"a JSON {type(saved).__name__}, not an object of settings"
    raise ValueError(Errors.E021.format(path=component_dir, file=cfg_file, reason=reason))


def load_sentence_end_expert(path: Path):
    """The sentence-end expert saved in folder ``path`` (E004 naming the path if it cannot be read)."""
    from spacy_punctgen.model.sentence_end import SentenceEndExpert

    try:
        return SentenceEndExpert.from_disk(path)
    except (OSError, ValueError) as err:
        raise ValueError(Errors.E004.format(path=path, reason=err)) from None


def load_lexical_expert(path: Path):
    """The lexical expert saved in folder ``path`` (E004 naming the path if it cannot be read)."""
    from spacy_punctgen.model.serialize import read_lexical

    try:
        return read_lexical(path)
    except (OSError, ValueError) as err:
        raise ValueError(Errors.E004.format(path=path, reason=err)) from None


@Language.factory(
    "punctgen",
    default_config={
        "model": None,
        "mode": "analyze",
        "restore_method": "marginal",
        "n_samples": 1000,
        "seed": 0,
        "restore_empty_weight": 1.0,
        "correction_model": None,
        "repunctuate": False,
        "lexical_weight": None,
        "lexical_model": None,
        "sentence_end_model": None,
        "sentence_end_weight": None,
        "model_settings": default_model_settings(),
        "thinc_model": {"@architectures": PUNCT_MODEL_ARCHITECTURE},
        "scorer": {"@scorers": PUNCT_SCORER},
    },
    assigns=["doc._.underlying_punct", "doc._.punct_logprob", "token._.punct_left", "token._.punct_right",
             "doc._.restored_punct", "doc._.restored_text", "doc._.restored_edits", "doc._.corrected_punct",
             "doc._.corrected_text"],
    requires=["token.dep", "token.head", "token.pos"],
    default_score_weights={"punct_lp": 1.0, "punct_ppl": None, "punct_aed": None},
)
def make_punctgen(nlp: Language, name: str, model: Optional[str], mode: str, restore_method: str,
                  n_samples: int, seed: int, restore_empty_weight: float, correction_model: Optional[str],
                  repunctuate: bool, lexical_weight: Optional[float], lexical_model: Optional[str],
                  sentence_end_model: Optional[str], sentence_end_weight: Optional[float],
                  model_settings: Dict[str, Any],
                  thinc_model: Model, scorer: Optional[Callable]) -> "PunctGen":
    """``model`` is the path of a trained model (None: the one shipped for ``nlp.lang``);
    ``restore_empty_weight`` the empty string's weight in restoration's risk (1: minimum expected
    edit distance; below 1 more marks, for F1; :func:`decode.mbr.risk_weights`); ``repunctuate``
    whether restoration replaces the marks already at the edges of tokens; ``lexical_weight`` the
    weight of the model's lexical expert in restoration (None: the weight chosen on dev when it was
    trained, 0: punctgen alone; :mod:`spacy_punctgen.decode.lexical`); ``lexical_model`` the folder
    of a lexical expert to restore with (``lexical.json``, ``lexical.npz``: the shipped one,
    ``spacy_punctgen.load(lexical=True)``), in place of any the model carries; ``sentence_end_model``
    the folder of a sentence-end expert (:mod:`spacy_punctgen.model.sentence_end`; ``load()`` sets the
    shipped one) that restores the inputs parsed as one sentence (``doc._.one_sentence_input``) and
    ``sentence_end_weight`` its weight (None: the one chosen on dev; 0: not used); ``model_settings``
    the model's own (:class:`~spacy_punctgen.model.settings.ModelSettings`); ``thinc_model`` the
    registered architecture holding its parameters, ``scorer`` the registered scorer of
    :meth:`PunctGen.score`."""
    return PunctGen(nlp.vocab, thinc_model, name=name, model_path=model, lang=nlp.lang, mode=mode,
                    restore_method=restore_method, n_samples=n_samples, seed=seed,
                    restore_empty_weight=restore_empty_weight, correction_model=correction_model,
                    repunctuate=repunctuate, lexical_weight=lexical_weight, lexical_model=lexical_model,
                    sentence_end_model=sentence_end_model, sentence_end_weight=sentence_end_weight,
                    model_settings=model_settings,
                    scorer=scorer)


class PunctGen(TrainablePipe):
    """See the module docstring.  Settings (``cfg``) come from the pipeline's config and are
    serialised with the trained :class:`PunctModel`."""

    def __init__(self, vocab, model: Model, name: str = "punctgen", *,
                 model_path: Optional[Union[str, Path]] = None, lang: str = "xx", mode: str = "analyze",
                 restore_method: str = "marginal", n_samples: int = 1000, seed: int = 0,
                 restore_empty_weight: float = 1.0, correction_model: Optional[str] = None,
                 repunctuate: bool = False, lexical_weight: Optional[float] = None,
                 lexical_model: Optional[str] = None, sentence_end_model: Optional[str] = None,
                 sentence_end_weight: Optional[float] = None,
                 model_settings: Optional[Dict[str, Any]] = None,
                 scorer: Optional[Callable] = punct_score):
        settings = ModelSettings.from_dict(model_settings)
        _choice_setting("channel", settings.channel, ("full", "attach"))
        self.vocab, self.model, self.name, self.scorer = vocab, model, name, scorer
        self.cfg: Dict[str, Any] = {
            "model": str(model_path) if model_path is not None else None, "lang": lang,
            "mode": _choice_setting("mode", mode, MODES),
            "restore_method": _choice_setting("restore_method", restore_method, METHODS),
            "n_samples": _int_setting("n_samples", n_samples, 1, MAX_SAMPLES),
            "seed": _int_setting("seed", seed, 0, None),
            "restore_empty_weight": check_empty_weight(restore_empty_weight, restore_method),
            "correction_model": str(correction_model) if correction_model is not None else None,
            "repunctuate": _choice_setting("repunctuate", repunctuate, (True, False)),
            "lexical_weight": None if lexical_weight is None else check_weight(lexical_weight),
            "lexical_model": str(lexical_model) if lexical_model is not None else None,
            "sentence_end_model": str(sentence_end_model) if sentence_end_model is not None else None,
            "sentence_end_weight": None if sentence_end_weight is None else check_factor("weight", sentence_end_weight),
            "model_settings": settings.model_dict(),
        }
        self.punct_model = None
        self._prepared: Dict[tuple, Any] = {}
        self._correction = None
        self._sentence_end = None  # (path, expert) of the sentence_end_model setting, read once
        self._language_checked = False  # W002 is judged once
        # calls that use (or replace) the model take turns: its caches are not thread-safe
        self._lock = threading.RLock()

    # ------------------------------------------------------------ the model
    def _set_punct_model(self, pm) -> None:
        """Adopt ``pm``: its θ/ψ become the thinc Model's params."""
        with self._lock:
            self.punct_model = pm
            self._prepared = {}
            self.model.set_param("theta", np.ascontiguousarray(pm.theta, dtype=np.float32))
            self.model.set_param("psi", np.ascontiguousarray(pm.psi, dtype=np.float32))
            self._sync()

    def _sync(self) -> None:
        """Point the PunctModel at the thinc params (the optimizer replaces the arrays, and
        ``use_params`` swaps in averages)."""
        self.punct_model.theta = self.model.get_param("theta")
        self.punct_model.psi = self.model.get_param("psi")

    def require_model(self):
        """The model, read now if need be: the configured ``model`` path, else the one shipped
        for the language (E003 if none)."""
        with self._lock:
            if self.punct_model is None:
                path = self.cfg["model"]
                if path is None:
                    path = shipped_model_path(self.cfg["lang"])
                    if path is None:
                        raise ValueError(Errors.E003.format(lang=self.cfg["lang"]))
                pm = load_punct_model(Path(path))
                if self.cfg["lexical_model"] is not None:
                    pm.lexical = load_lexical_expert(Path(self.cfg["lexical_model"]))
                self._set_punct_model(pm)
            self._sync()
            return self.punct_model

    @property
    def quote_xpos(self) -> bool:
        return bool(self.punct_model.meta.get("quote_xpos", False)) if self.punct_model else False

    def _sentence_end_expert(self):
        """The sentence-end expert of the ``sentence_end_model`` setting (read once), or None."""
        path = self.cfg.get("sentence_end_model")
        if path is None:
            return None
        if self._sentence_end is None or self._sentence_end[0] != path:
            self._sentence_end = (path, load_sentence_end_expert(Path(path)))
        return self._sentence_end[1]

    def _correction_model(self):
        """The paper's correction model of the ``correction_model`` setting (loaded once; None: the
        noise method corrects), docs/correction.md."""
        path = self.cfg.get("correction_model")
        if path is None:
            return None
        if self._correction is None or self._correction[0] != path:
            from spacy_punctgen.model.correction import CorrectionModel

            self._correction = (path, CorrectionModel.from_disk(path))
        return self._correction[1]

    # ------------------------------------------------------------ inference
    def predict(self, docs: Iterable[Doc]) -> List[dict]:
        """Per Doc, the annotations to set (the Docs are not modified)."""
        docs = list(docs)
        with self._lock:
            pm = self.require_model()
            for doc in docs:
                check_doc(doc)
            mode = self.cfg["mode"]
            if mode == "restore":
                self._warn_if_foreign(pm, docs)
                settings = RestoreSettings(self.cfg["restore_method"], self.cfg["n_samples"], self.cfg["seed"],
                                           self.cfg["restore_empty_weight"], self.cfg["repunctuate"],
                                           self.cfg["lexical_weight"], self.cfg["sentence_end_weight"])
                return restore_parsed_docs(pm, docs, settings, self.quote_xpos, self._sentence_end_expert())
            if mode == "correct":
                return predict_corrections(pm, docs, quote_xpos=self.quote_xpos,
                                           correction_model=self._correction_model())
            return analyze_docs(pm, docs, self.quote_xpos)

    def _warn_if_foreign(self, pm, docs: List[Doc]) -> None:
        """W002, once per component, when most words of the first batch large enough to judge are
        unknown to the model (a text in another language; docs/udpipe.md)."""
        if self._language_checked:
            return
        n, share = unknown_word_share(pm, docs)
        if n < FOREIGN_MIN_WORDS:
            return
        self._language_checked = True
        if share > FOREIGN_SHARE:
            message = Warnings.W002.format(share=share, n=n, lang=pm.meta.get("lang", self.cfg["lang"]))
            warnings.warn(message)
            util.logger.warning(message)

    def doc_logprob(self, doc: Doc) -> float:
        """``Σ log p'(x|T)`` over the Doc's sentences (what ``doc._.punct_logprob`` reads,
        computed on first access; :func:`.analyze.doc_logprob`)."""
        check_doc(doc)
        with self._lock:
            return doc_logprob(self.require_model(), doc, self.quote_xpos)

    def set_annotations(self, docs: Iterable[Doc], results: List[dict]) -> None:
        docs = list(docs)
        if results and "corrected_punct" in results[0]:
            set_corrections(docs, results)
            return
        for doc, res in zip(docs, results):
            if "restored_punct" in res:
                doc._.restored_punct = res["restored_punct"]
                doc._.restored_text = apply_edits(doc.text, res["insertions"], res["deletions"])
                doc._.restored_edits = token_edits(doc.text, res["insertions"], res["deletions"])
                continue
            doc._.underlying_punct = res["underlying_punct"]
            set_pending_logprob(doc, self)
            set_token_pairs(doc, doc.to_array(IDX).tolist(), res["tokens"])

    # ------------------------------------------------------------- training
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None
                   ) -> None:
        """Build a new model from the Examples' reference Docs (gold UD trees + punctuation).

        Examples without a parse (``nlp.initialize()`` with no data gives one) cannot teach
        anything: then a configured (or shipped) model is kept, and E005 raised if there is none.
        """
        validate_get_examples(get_examples, "PunctGen.initialize")
        refs = [eg.reference for eg in get_examples()]
        lang = nlp.lang if nlp is not None else self.cfg["lang"]
        quote_xpos = docs_quote_xpos(refs, lang)
        sents = gold_sentences(refs, quote_xpos=quote_xpos)
        with self._lock:
            if not sents:
                if self.punct_model is not None or self.cfg["model"] is not None or \
                        shipped_model_path(self.cfg["lang"]) is not None:
                    self.require_model()
                    return
                raise ValueError(Errors.E005.format(n=len(refs)))
            from spacy_punctgen.training.initial import initial_model

            self._set_punct_model(initial_model(sents, ModelSettings(**self.cfg["model_settings"]),
                                                meta={"quote_xpos": quote_xpos, "lang": lang,
                                                      "trained_with": "spacy", "n_train": len(sents)},
                                                seed=self.cfg["seed"]))

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One gradient step's worth: ``−objective`` of the batch's reference sentences is the
        loss; its exact gradient goes into the thinc Model (``finish_update`` applies it)."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "PunctGen.update")
        with self._lock:
            if self.punct_model is None:
                raise ValueError(Errors.E009)
            pm = self.punct_model
            sents = gold_sentences([eg.reference for eg in examples], quote_xpos=self.quote_xpos)
            if not sents:
                return losses
            batch = [self._prepare(s) for s in sents]
            (theta, psi), backprop = self.model.begin_update(None)
            pm.theta, pm.psi = theta, psi
            res = pm.objective_and_gradient(batch, sparse=True)
            d_theta = np.zeros_like(theta)
            np.add.at(d_theta, res.theta_idx, (-res.theta_val).astype(np.float32))
            d_psi = (-res.grad_psi).astype(np.float32) if res.grad_psi is not None else np.zeros_like(psi)
            backprop((d_theta, d_psi))  # thinc minimises: the gradient of −objective
            if sgd not in (None, False):
                self.finish_update(sgd)
            losses[self.name] += -res.objective
        return losses

    def _prepare(self, sentence):
        """Training-side compiled sentence, cached: spaCy hands us new Examples every epoch."""
        key = (tuple(sentence.words), tuple(sentence.heads), tuple(sentence.deprels), tuple(sentence.upos),
               tuple(sentence.xpos), tuple(sentence.slots))
        got = self._prepared.get(key)
        if got is None:
            if len(self._prepared) >= _CACHE_LIMIT:
                self._prepared.clear()
            got = self._prepared[key] = self.punct_model.prepare(sentence)
        return got

    def finish_update(self, sgd: Optimizer) -> None:
        """Like thinc's, but ψ's learning rate is scaled by ``psi_lr_scale`` (ψ is small and dense)."""
        with self._lock:
            for name, scale in (("theta", 1.0), ("psi", self.cfg["model_settings"]["psi_lr_scale"])):
                if self.model.has_param(name) and self.model.has_grad(name):
                    param, _ = sgd((self.model.id, name), self.model.get_param(name), self.model.get_grad(name),
                                   lr_scale=scale)
                    self.model.set_param(name, param)
            if self.punct_model is not None:
                self._sync()

    def get_loss(self, examples, scores):  # pragma: no cover - update() computes it with the DP
        raise NotImplementedError(Errors.E012)

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Optional[float]]:
        """``punct_ppl``/``punct_lp`` and ``punct_aed`` on the reference Docs (gold trees), from
        the registered scorer (``{}`` with ``scorer = null``), given the model and the restoration
        settings (``kwargs`` override them)."""
        if self.scorer is None:
            return {}
        examples = list(examples)
        validate_examples(examples, "PunctGen.score")
        settings = {key: self.cfg[key] for key in ("restore_method", "n_samples", "seed")}
        settings.update(kwargs)
        with self._lock:
            return self.scorer(examples, punct_model=self.require_model(), quote_xpos=self.quote_xpos, **settings)

    # -------------------------------------------------------- serialisation
    def _model_to_save(self):
        """The model to serialise: the component's, else the configured one or the one shipped
        for its language (adopted, so a saved pipeline depends on neither), else None."""
        with self._lock:
            if self.punct_model is None and (self.cfg["model"] is not None
                                             or shipped_model_path(self.cfg["lang"]) is not None):
                self.require_model()
            if self.punct_model is not None:
                self._sync()
            return self.punct_model

    def _restore_cfg(self, saved: Dict[str, Any]) -> None:
        """Adopt the saved settings, except the :data:`RUNTIME_SETTINGS` this component has (and
        any this version does not know)."""
        self.cfg.update({key: value for key, value in upgrade_cfg(saved).items()
                         if key in self.cfg and key not in RUNTIME_SETTINGS})

    def _serializers(self, kind: str) -> Dict[str, Callable]:
        def model_out(p=None):
            with self._lock:
                pm = self._model_to_save()
                if kind == "bytes":
                    return pm.to_bytes() if pm is not None else b""
                if pm is None:
                    raise ValueError(Errors.E014.format(lang=self.cfg["lang"]))
                pm.to_disk(p)

        if kind == "bytes":
            return {CFG_FILE: lambda: srsly.json_dumps(self.cfg), MODEL_DIR: model_out}
        return {CFG_FILE: lambda p: srsly.write_json(p, self.cfg), MODEL_DIR: model_out}

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        """``cfg`` and ``model`` (empty when there is no model: none given, trained or shipped)."""
        return util.to_bytes(self._serializers("bytes"), exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "PunctGen":
        from spacy_punctgen.model.punct_model import PunctModel

        def load_model(data: Optional[bytes]) -> None:
            if data:  # empty: no model was saved
                self._set_punct_model(PunctModel.from_bytes(data))

        util.from_bytes(bytes_data, {CFG_FILE: lambda b: self._restore_cfg(srsly.json_loads(b)),
                                     MODEL_DIR: load_model}, exclude)
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        """``cfg`` (a JSON file) and ``model/`` (:meth:`PunctModel.to_disk`); E014 when there is
        no model to write (save with ``exclude=["model"]`` then)."""
        util.to_disk(path, self._serializers("disk"), exclude)

    def from_disk(self, path, *, exclude=tuple()) -> "PunctGen":
        path = util.ensure_path(path)

        def load_cfg(p: Path) -> None:
            if p.exists():  # absent in pipelines saved before the settings were serialised
                self._restore_cfg(read_saved_cfg(path, p))

        def load_model(p: Path) -> None:
            if not p.is_dir():
                raise ValueError(Errors.E013.format(path=path, model_dir=p))
            self._set_punct_model(load_punct_model(p))

        util.from_disk(path, {CFG_FILE: load_cfg, MODEL_DIR: load_model}, exclude)
        return self

    def __reduce__(self):
        settings = {k: v for k, v in self.cfg.items() if k not in ("model", "lang")}
        return (_unpickle, (self.vocab, self.name, self.cfg["lang"], settings, self.scorer, self.to_bytes()))


def _unpickle(vocab, name: str, lang: str, settings: dict, scorer: Optional[Callable], data: bytes) -> PunctGen:
    """A pickled component (``nlp.pipe(..., n_process=2)`` under the ``spawn`` start method)."""
    return PunctGen(vocab, build_punct_model(), name=name, lang=lang, scorer=scorer, **settings).from_bytes(data)


#: the model settings that older versions kept flat in the component's cfg and config
LEGACY_MODEL_KEYS = ("channel", "direction", "xi", "min_count", "pairs_mode", "templates", "psi_init",
                     "psi_keep_bias", "psi_lr_scale", "smooth_delta")


def upgrade_cfg(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """A component cfg (or config block) of an older version in today's shape: the flat model
    settings go into ``model_settings``; ``kbest_weights`` (now the ``punctgen_kbest``
    component's ``weights``) is dropped."""
    cfg = dict(cfg)
    moved = {key: cfg.pop(key) for key in LEGACY_MODEL_KEYS if key in cfg}
    cfg.pop("kbest_weights", None)
    if moved:
        cfg["model_settings"] = {**dict(cfg.get("model_settings") or default_model_settings()), **moved}
    return cfg


def upgrade_config(config):
    """A pipeline config (``spacy.load``'s ``config.cfg``, a :class:`thinc.api.Config`) of an older
    version in today's shape (:func:`upgrade_cfg` for every ``punctgen`` component block; a
    ``kbest_weights`` there becomes the ``weights`` of the pipeline's ``punctgen_kbest``
    components). Returns a new Config; ``config`` is not changed."""
    from thinc.api import Config

    out = Config(config).copy()
    components = out.get("components", {})
    weights = None
    for block in components.values():
        if isinstance(block, dict) and block.get("factory") == "punctgen":
            weights = block.get("kbest_weights", weights)
            new = upgrade_cfg(block)
            block.clear()
            block.update(new)
    for block in components.values():
        if isinstance(block, dict) and block.get("factory") == "punctgen_kbest" and weights is not None:
            block.setdefault("weights", weights)
    return out
