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
  component that analysed the Doc (with its model at that time), and then kept in the Doc: a
  Doc that goes through ``to_bytes`` (``nlp.pipe(..., n_process=2)`` does) or ``copy`` keeps it,
  or computes it on first read wherever that component is loaded (E017 elsewhere).

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

``mode = "restore"`` (unpunctuated text; any punctuation already there is ignored and
replaced): surface punctuation per slot is chosen by :func:`decode.restore_sentence`
(``restore_method``, ``n_samples``, ``seed``):

* ``doc._.restored_punct``: one dict per slot: ``sentence``, ``slot``, ``after``,
  ``surface`` (the chosen tokens, the model's own symbols, e.g. ``ABBR.``) and ``prob``;
* ``doc._.restored_text``: the text with the punctuation inserted, exactly the text of
  :func:`doc_convert.insert_punctuation` ``(doc)``, which returns that Doc.

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

``model = null``: the model shipped for the pipeline's language (if one ships) is loaded
the first time the component needs it; otherwise using it raises E003.

Settings are checked when the component is built (E008): ``n_samples`` is an integer from 1
to :data:`MAX_SAMPLES`, ``seed`` an integer >= 0.

A saved pipeline is self-contained: ``spacy.load`` builds the component without reading the
configured ``model`` path (it may be gone) and loads ``punctgen/model`` from the pipeline's
folder; only if that is excluded is the configured path read, when the model is first needed.
Built any other way, the component reads ``model`` at once (E004 for a missing or bad one).

Serialisation (``to_bytes``/``from_bytes``/``to_disk``/``from_disk``, and so ``nlp.to_disk``
and ``spacy.load``) goes through spaCy's serializer dicts, whose keys ``exclude`` takes:
``cfg`` (the settings, ``cfg`` in the component's folder) and ``model`` (the trained
:class:`PunctModel`: the ``model/`` folder, or the model shipped for the language if the
component has not loaded one yet).  Loading restores the saved settings except
:data:`RUNTIME_SETTINGS` (how to run: ``mode``, ``restore_method``, ``n_samples``, ``seed``,
``kbest_weights``, ``restore_empty_weight``),
which stay those the loading pipeline's config gave the component.  ``from_disk`` of a folder
without ``model/`` raises E013 (unless ``model`` is excluded).
"""
from __future__ import annotations

import dataclasses
import sys
import threading
import uuid
import warnings
import weakref
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np
import srsly
from spacy import util
from spacy.attrs import IDX
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Token
from spacy.training import Example, validate_examples, validate_get_examples
from thinc.api import Model, Optimizer

from spacy_punctgen.decode.mbr import (MAX_SAMPLES, METHODS, check_empty_weight, restore_mixtures, restore_sentence,
                                       restore_sentences)
from spacy_punctgen.pipeline.correct import predict_corrections, set_corrections
from spacy_punctgen.pipeline.doc_convert import check_doc, punct_sentences, docs_quote_xpos, gold_sentences, insert_punctuation
from spacy_punctgen.pipeline.kbest import alternative_trees, check_weighting, restore_weighted_mixtures
from spacy_punctgen.errors import Errors, Warnings
from spacy_punctgen.data.inventory import BOS, UNK_SYMBOL
from spacy_punctgen.pipeline.architectures import PUNCT_MODEL_ARCHITECTURE, build_punct_model
from spacy_punctgen.pipeline.scorers import PUNCT_SCORER, punct_score

MODEL_DIR = "model"
CFG_FILE = "cfg"
MODES = ("analyze", "restore", "correct")
#: Settings of how the component runs: loading a saved component keeps the ones the loading
#: pipeline's config gave it (e.g. ``spacy.load(path, config={"components": {"punctgen":
#: {"mode": "restore"}}})``); every other setting comes from the saved ``cfg``.
RUNTIME_SETTINGS = ("mode", "restore_method", "n_samples", "seed", "kbest_weights", "restore_empty_weight",
                    "correction_model")
_CACHE_LIMIT = 200_000

# -------------------------------------------------------------- the extensions
# Values live in ``doc.user_data`` under the keys spaCy gives attribute extensions, so that
# ``to_bytes``, ``copy`` and ``Doc.from_docs`` carry them as before; the getters give tuples back
# where msgpack (``to_bytes``, ``nlp.pipe(..., n_process=2)``) turned them into lists.
_PENDING_KEY = ("punctgen", "logprob_from")  # the token of the component that analysed the Doc
_ANALYSERS: Dict[str, "weakref.WeakSet[PunctGen]"] = {}  # token -> the components bearing it
_ANALYSERS_LOCK = threading.Lock()


def _doc_key(name: str) -> tuple:
    return ("._.", name, None, None)


def _token_key(name: str, idx: int) -> tuple:
    """Where spaCy keeps token extension ``name`` of the token at character ``idx``."""
    return ("._.", name, idx, None)


def _as_tuple(value):
    return tuple(value) if isinstance(value, list) else value


def _entries_extension(name: str):
    key = _doc_key(name)

    def get(doc: Doc):
        entries = doc.user_data.get(key)
        if entries:
            for e in entries:
                for field in ("underlying", "surface"):
                    if isinstance(e.get(field), list):
                        e[field] = tuple(e[field])
        return entries

    def set_(doc: Doc, value) -> None:
        doc.user_data[key] = value

    return get, set_


def _pair_extension(name: str):
    def get(tok: Token):
        return _as_tuple(tok.doc.user_data.get(_token_key(name, tok.idx)))

    def set_(tok: Token, value) -> None:
        tok.doc.user_data[_token_key(name, tok.idx)] = value

    return get, set_


def _get_logprob(doc: Doc) -> Optional[float]:
    """``doc._.punct_logprob``: the value kept in the Doc, else computed by the component that
    analysed it (its token is in the Doc), kept, and returned; None for a Doc not analysed."""
    value = doc.user_data.get(_doc_key("punct_logprob"))
    if value is not None:
        return value
    token = doc.user_data.get(_PENDING_KEY)
    if token is None:
        return None
    owner = _analyser(token)
    if owner is None:
        raise ValueError(Errors.E017)
    value = owner.doc_logprob(doc)
    doc.user_data[_doc_key("punct_logprob")] = value
    doc.user_data.pop(_PENDING_KEY, None)
    return value


def _set_logprob(doc: Doc, value: Optional[float]) -> None:
    doc.user_data[_doc_key("punct_logprob")] = value
    doc.user_data.pop(_PENDING_KEY, None)


def _register(token: str, component: "PunctGen") -> None:
    with _ANALYSERS_LOCK:
        _ANALYSERS.setdefault(token, weakref.WeakSet()).add(component)


def _analyser(token: str) -> Optional["PunctGen"]:
    with _ANALYSERS_LOCK:
        return next(iter(_ANALYSERS.get(token, ())), None)


def _register_extensions() -> None:
    for name in ("underlying_punct", "restored_punct"):
        if not Doc.has_extension(name):
            get, set_ = _entries_extension(name)
            Doc.set_extension(name, getter=get, setter=set_)
    if not Doc.has_extension("punct_logprob"):
        Doc.set_extension("punct_logprob", getter=_get_logprob, setter=_set_logprob)
    if not Doc.has_extension("restored_text"):
        Doc.set_extension("restored_text", default=None)
    for name in ("punct_left", "punct_right"):
        if not Token.has_extension(name):
            get, set_ = _pair_extension(name)
            Token.set_extension(name, getter=get, setter=set_)


_register_extensions()


def _int_setting(name: str, value, low: int, high: Optional[int]) -> int:
    """``value`` as an int, E008 unless it is an integer (a float with an integer value will
    do, not a bool) within ``[low, high]``."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
        and float(value).is_integer() and value >= low and (high is None or value <= high)
    if not ok:
        allowed = f"integers >= {low}" if high is None else f"integers from {low} to {high:,}"
        raise ValueError(Errors.E008.format(name=name, allowed=allowed, value=value))
    return int(value)


def _loading_saved_pipeline() -> bool:
    """Whether spaCy is building the component in order to load a saved pipeline into it
    (``spacy.load`` of a folder or package runs ``util.load_model_from_path``, which builds the
    pipeline from its config and then calls ``from_disk``, which loads the saved model)."""
    target = getattr(util.load_model_from_path, "__code__", None)
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is target:
            return True
        frame = frame.f_back
    return False


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


@Language.factory(
    "punctgen",
    default_config={
        "model": None,
        "mode": "analyze",
        "restore_method": "marginal",
        "n_samples": 1000,
        "seed": 0,
        "kbest_weights": "uniform",
        "restore_empty_weight": 1.0,
        "channel": "full",
        "direction": "r2l",
        "xi": 0.0,
        "min_count": 5,
        "pairs_mode": "halves",
        "templates": None,
        "psi_init": 1.0,
        "psi_keep_bias": 3.0,
        "psi_lr_scale": 10.0,
        "smooth_delta": 0.001,
        "correction_model": None,
        "thinc_model": {"@architectures": PUNCT_MODEL_ARCHITECTURE},
        "scorer": {"@scorers": PUNCT_SCORER},
    },
    assigns=["doc._.underlying_punct", "doc._.punct_logprob", "token._.punct_left", "token._.punct_right",
             "doc._.restored_punct", "doc._.restored_text", "doc._.corrected_punct", "doc._.corrected_text"],
    requires=["token.dep", "token.head", "token.pos"],
    default_score_weights={"punct_lp": 1.0, "punct_ppl": None, "punct_aed": None},
)
def make_punctgen(nlp: Language, name: str, model: Optional[str], mode: str, restore_method: str,
                  n_samples: int, seed: int, kbest_weights: str, restore_empty_weight: float, channel: str,
                  direction: str, xi: float,
                  min_count: int, pairs_mode: str, templates: Optional[List[str]], psi_init: float,
                  psi_keep_bias: float,
                  psi_lr_scale: float, smooth_delta: float, correction_model: Optional[str], thinc_model: Model,
                  scorer: Optional[Callable]) -> "PunctGen":
    """``model`` is the path of a trained model (None: the one shipped for ``nlp.lang``);
    ``thinc_model`` the registered architecture holding its parameters, ``scorer`` the
    registered scorer of :meth:`PunctGen.score`; ``kbest_weights`` how restoration weighs the
    trees of a sentence that a ``punctgen_kbest`` component left in the Doc (``"uniform"`` or
    ``"beam"``, see :meth:`PunctGen._restore`); ``restore_empty_weight`` the empty string's weight
    in restoration's risk (1: minimum expected edit distance; below 1 more marks, for F1;
    :func:`decode.mbr.risk_weights`)."""
    return PunctGen(nlp.vocab, thinc_model, name=name, model_path=model, lang=nlp.lang, mode=mode,
                    restore_method=restore_method, n_samples=n_samples, seed=seed, kbest_weights=kbest_weights,
                    restore_empty_weight=restore_empty_weight,
                    channel=channel,
                    direction=direction, xi=xi, min_count=min_count, pairs_mode=pairs_mode,
                    templates=templates, psi_init=psi_init, psi_keep_bias=psi_keep_bias,
                    psi_lr_scale=psi_lr_scale, smooth_delta=smooth_delta, correction_model=correction_model,
                    scorer=scorer)


class PunctGen(TrainablePipe):
    """See the module docstring.  Settings (``cfg``) come from the pipeline's config and are
    serialised with the trained :class:`PunctModel`."""

    def __init__(self, vocab, model: Model, name: str = "punctgen", *,
                 model_path: Optional[Union[str, Path]] = None, lang: str = "xx", mode: str = "analyze",
                 restore_method: str = "marginal", n_samples: int = 1000, seed: int = 0,
                 kbest_weights: str = "uniform", restore_empty_weight: float = 1.0, channel: str = "full",
                 direction: str = "r2l", xi: float = 0.0, min_count: int = 5, pairs_mode: str = "halves",
                 templates: Optional[List[str]] = None, psi_init: float = 1.0, psi_keep_bias: float = 3.0,
                 psi_lr_scale: float = 10.0, smooth_delta: float = 0.001, correction_model: Optional[str] = None,
                 scorer: Optional[Callable] = punct_score):
        if mode not in MODES:
            raise ValueError(Errors.E008.format(name="mode", allowed=list(MODES), value=mode))

        if restore_method not in METHODS:
            raise ValueError(Errors.E008.format(name="restore_method", allowed=list(METHODS), value=restore_method))
        n_samples = _int_setting("n_samples", n_samples, 1, MAX_SAMPLES)
        seed = _int_setting("seed", seed, 0, None)
        check_weighting(kbest_weights, restore_method)
        restore_empty_weight = check_empty_weight(restore_empty_weight, restore_method)
        if channel not in ("full", "attach"):
            raise ValueError(Errors.E008.format(name="channel", allowed=["full", "attach"], value=channel))
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg: Dict[str, Any] = {
            "model": str(model_path) if model_path is not None else None, "lang": lang, "mode": mode,
            "restore_method": restore_method, "n_samples": int(n_samples), "seed": int(seed),
            "kbest_weights": kbest_weights, "restore_empty_weight": restore_empty_weight, "channel": channel,
            "direction": direction, "xi": float(xi),
            "min_count": int(min_count),
            "pairs_mode": pairs_mode, "templates": list(templates) if templates else None,
            "psi_init": float(psi_init), "psi_keep_bias": float(psi_keep_bias),
            "psi_lr_scale": float(psi_lr_scale), "smooth_delta": float(smooth_delta),
            "correction_model": str(correction_model) if correction_model is not None else None,
        }
        self.scorer = scorer
        self.punct_model = None
        self._prepared: Dict[tuple, Any] = {}
        # calls that use (or replace) the model take turns: its caches are not thread-safe
        self._lock = threading.RLock()
        self._token = uuid.uuid4().hex  # names this component in the Docs it analyses
        _register(self._token, self)
        if model_path is not None and not _loading_saved_pipeline():
            self._set_punct_model(self._load(Path(model_path)))

    # ------------------------------------------------------------ the model
    @staticmethod
    def _load(path: Path):
        from spacy_punctgen.model.punct_model import PunctModel

        try:
            return PunctModel.from_disk(path)
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E004.format(path=path, reason=err)) from None

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

    def _require_model(self):
        """The model, loaded now if need be: the configured ``model`` path (not read yet when
        spaCy built the component to load a saved pipeline that then brought none), else the
        one shipped for the language (E003 if none)."""
        with self._lock:
            if self.punct_model is None:
                if self.cfg["model"] is not None:
                    path = Path(self.cfg["model"])
                else:
                    path = shipped_model_path(self.cfg["lang"])
                    if path is None:
                        raise ValueError(Errors.E003.format(lang=self.cfg["lang"]))
                self._set_punct_model(self._load(path))
            self._sync()
            return self.punct_model

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

    @property
    def quote_xpos(self) -> bool:
        return bool(self.punct_model.meta.get("quote_xpos", False)) if self.punct_model else False

    def _correction_model(self):
        """The paper's correction model of the ``correction_model`` setting (loaded once; None: the
        noise method corrects), docs/correction.md."""
        path = self.cfg.get("correction_model")
        if path is None:
            return None
        got = getattr(self, "_correction", None)
        if got is None or got[0] != path:
            from spacy_punctgen.model.correction import CorrectionModel

            got = self._correction = (path, CorrectionModel.from_disk(path))
        return got[1]

    # ------------------------------------------------------------ inference
    def predict(self, docs: Iterable[Doc]) -> List[dict]:
        """Per Doc, the annotations to set (the Docs are not modified)."""
        docs = list(docs)
        with self._lock:
            self._require_model()
            for doc in docs:
                check_doc(doc)
            if self.cfg["mode"] == "restore":
                return self._restore(docs)
            if self.cfg["mode"] == "correct":
                return predict_corrections(self.punct_model, docs, quote_xpos=self.quote_xpos,
                                           correction_model=self._correction_model())
            return self._analyze(docs)

    def _unseen(self, tok: str) -> bool:
        """Whether the model has no symbol for the mark ``tok`` (never seen in training, or
        written like its start symbol ``^``)."""
        return tok == BOS or self.punct_model.inventory.symbol_id(tok) == 1

    def _scored_view(self, ps):
        """``ps`` as :meth:`doc_logprob` scores it: a mark written ``^`` becomes the unknown
        symbol (``^`` is the model's sentence-start symbol, which no slot may hold)."""
        if not any(tok == BOS for x in ps.slots for tok in x):
            return ps
        return dataclasses.replace(ps, slots=[tuple(UNK_SYMBOL if t == BOS else t for t in x) for x in ps.slots])

    def _analyze(self, docs: List[Doc]) -> List[dict]:
        """The Viterbi pass only (``doc._.punct_logprob`` waits until it is read), for all
        sentences of the batch together (:func:`~spacy_punctgen.model.analysis.analyze`: one
        compile and one ATTACH scoring per sentence).  A slot holding a mark the model has no
        symbol for is analysed as if it held only its known marks, and reported with
        ``underlying`` None."""
        from spacy_punctgen.model.analysis import analyze_underlying

        pm = self.punct_model
        sents = [[(si, ps, wt) for si, ps, wt in punct_sentences(doc, quote_xpos=self.quote_xpos)
                  if ps is not None]  # only punctuation: nothing sprouts it
                 for doc in docs]
        viewed, unseen_slots = [], []
        unseen_tok = self._unseen
        for doc_sents in sents:
            for _, ps, _ in doc_sents:
                unseen = {i for i, x in enumerate(ps.slots) if x and any(map(unseen_tok, x))}
                if unseen:
                    ps = dataclasses.replace(ps, slots=[tuple(t for t in x if not unseen_tok(t)) if i in unseen
                                                        else x for i, x in enumerate(ps.slots)])
                viewed.append(ps)
                unseen_slots.append(unseen)
        results = iter(zip(analyze_underlying(pm, viewed), unseen_slots))
        out = []
        for doc_sents in sents:
            entries: List[dict] = []
            tokens: Dict[int, Tuple[tuple, tuple]] = {}
            for si, ps, word_tokens in doc_sents:
                (lr, u), unseen = next(results)
                # p(x|T) = 0 leaves lr None: no explanation exists, so say so rather than guess
                if u is None:
                    u = [None] * len(ps.slots)
                for i, x in enumerate(ps.slots):
                    entries.append({"sentence": si, "slot": i, "after": word_tokens[i - 1] if i else None,
                                    "underlying": u[i] if i not in unseen else None, "surface": tuple(x)})
                if lr is not None:  # (tuple, tuple) pairs already (model.puncteme's)
                    tokens.update(zip(word_tokens, (pair if type(pair[0]) is tuple and type(pair[1]) is tuple
                                                    else (tuple(pair[0]), tuple(pair[1])) for pair in lr)))
            out.append({"underlying_punct": entries, "tokens": tokens})
        return out

    def doc_logprob(self, doc: Doc) -> float:
        """``Σ log p'(x|T)`` over the Doc's sentences (what ``doc._.punct_logprob`` reads,
        computed on first access): ``log_probs`` of ``prepare_eval`` with the back-off mixture,
        as ``punct_ppl`` scores a sentence."""
        check_doc(doc)
        with self._lock:
            pm = self._require_model()
            sents = [self._scored_view(ps) for _, ps, _ in punct_sentences(doc, quote_xpos=self.quote_xpos)
                     if ps is not None]
            if not sents:
                return 0.0
            total = 0.0
            for lp in pm.log_probs(pm.prepare_eval(sents), backoff=True).tolist():
                total += lp
            return total

    def _tree_sets(self, doc: Doc, sents: List[tuple]) -> Tuple[List[List[Any]], List[List[float]]]:
        """Per sentence of ``sents`` (the Doc's own analysis), its trees: its own, then each other
        analysis of the beam (:func:`~spacy_punctgen.pipeline.kbest.alternative_trees`) that is
        one tree of the sentence with the same words; and their beam probabilities."""
        own_prob, others = alternative_trees(doc)
        sets = [[ps] for _, ps, _ in sents]
        probs = [[own_prob if own_prob is not None else 1.0] for _ in sents]
        for alt in others:
            theirs = {si: ps for si, ps, _ in punct_sentences(doc, quote_xpos=self.quote_xpos,
                                                              heads=alt.heads, deps=alt.deps)}
            for q, (si, ps, _) in enumerate(sents):
                other = theirs.get(si)
                if other is not None and list(other.words) == list(ps.words):
                    sets[q].append(other)
                    probs[q].append(alt.prob)
        return sets, probs

    def _restore(self, docs: List[Doc]) -> List[dict]:
        """Restoration of every sentence of the batch.  The deterministic decoders take all
        sentences in one call; the sampled ones one sentence at a time, so that a sentence's
        draws never depend on the batch it came in (``seed`` fixes each sentence's stream).

        Several trees: a Doc that a ``punctgen_kbest`` component parsed holds the beam's other
        analyses; each sentence is decoded from the mixture of its own tree and those of the
        other analyses that are one tree of it (the rest are left out for that sentence), weighed
        equally (``kbest_weights = "uniform"``, :func:`decode.mbr.restore_mixtures`) or by the
        beam's probabilities renormalised over the trees kept (``"beam"``,
        :func:`~spacy_punctgen.pipeline.kbest.restore_weighted_mixtures`).  A sentence with one
        tree is decoded exactly as without the component."""
        sents = [[(si, ps, wt) for si, ps, wt in punct_sentences(doc, quote_xpos=self.quote_xpos)
                  if ps is not None] for doc in docs]
        tree_sets: List[List[Any]] = []
        weights: List[List[float]] = []
        for doc, doc_sents in zip(docs, sents):
            sets, probs = self._tree_sets(doc, doc_sents)
            tree_sets.extend(sets)
            weights.extend(probs)
        for ps in (t for ts in tree_sets for t in ts):
            ps.slots = [()] * len(ps.slots)  # restoration ignores the punctuation already there
        method, n_samples, seed = self.cfg["restore_method"], self.cfg["n_samples"], self.cfg["seed"]
        check_weighting(self.cfg["kbest_weights"], method)
        ew = check_empty_weight(self.cfg["restore_empty_weight"], method)
        if all(len(ts) == 1 for ts in tree_sets):
            trees = [ts[0] for ts in tree_sets]
            if method in ("marginal", "exact"):
                choices = iter(restore_sentences(self.punct_model, trees, method=method, empty_weight=ew))
            else:
                choices = (restore_sentence(self.punct_model, ps, method=method, n_samples=n_samples, seed=seed)
                           for ps in trees)
        elif self.cfg["kbest_weights"] == "beam":
            choices = iter(restore_weighted_mixtures(self.punct_model, tree_sets,
                                                     [w if sum(w) > 0 else [1.0] * len(w) for w in weights], ew))
        elif method in ("marginal", "exact"):
            choices = iter(restore_mixtures(self.punct_model, tree_sets, method=method, empty_weight=ew))
        else:
            choices = (restore_mixtures(self.punct_model, [ts], method=method, n_samples=n_samples, seed=seed)[0]
                       for ts in tree_sets)
        out = []
        for doc_sents in sents:
            entries: List[dict] = []
            for si, _, word_tokens in doc_sents:
                for i, choice in enumerate(next(choices)):
                    entries.append({"sentence": si, "slot": i, "after": word_tokens[i - 1] if i else None,
                                    "surface": tuple(choice.surface), "prob": float(choice.prob)})
            out.append({"restored_punct": entries})
        return out

    def set_annotations(self, docs: Iterable[Doc], results: List[dict]) -> None:
        docs = list(docs)
        if results and "corrected_punct" in results[0]:
            set_corrections(docs, results)
            return
        for doc, res in zip(docs, results):
            if "restored_punct" in res:
                doc._.restored_punct = res["restored_punct"]
                doc._.restored_text = insert_punctuation(doc).text
                continue
            doc._.underlying_punct = res["underlying_punct"]
            data = doc.user_data
            data.pop(_doc_key("punct_logprob"), None)  # computed when first read
            data[_PENDING_KEY] = self._token
            # what ``tok._.punct_left, tok._.punct_right = ...`` stores, written at once (the
            # extension's setter per token was a tenth of the analysis)
            get, none = res["tokens"].get, (None, None)
            for i, idx in enumerate(doc.to_array(IDX).tolist()):
                left, right = get(i, none)
                data[_token_key("punct_left", idx)] = left
                data[_token_key("punct_right", idx)] = right

    # ------------------------------------------------------------- training
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None
                   ) -> None:
        """Build a new model from the Examples' reference Docs (gold UD trees + punctuation).

        Examples without a parse (``nlp.initialize()`` with no data gives one) cannot teach
        anything: then a configured (or shipped) model is kept, and E005 raised if there is none.
        """
        validate_get_examples(get_examples, "PunctGen.initialize")
        with self._lock:
            self._initialize([eg.reference for eg in get_examples()], nlp)

    def _initialize(self, refs: List[Doc], nlp: Optional[Language]) -> None:
        from spacy_punctgen.data.inventory import PunctInventory
        from spacy_punctgen.model.features import FeatureConfig
        from spacy_punctgen.model.punct_model import PunctModel

        lang = nlp.lang if nlp is not None else self.cfg["lang"]
        quote_xpos = docs_quote_xpos(refs, lang)
        sents = gold_sentences(refs, quote_xpos=quote_xpos)
        if not sents:
            if self.punct_model is not None or self.cfg["model"] is not None or \
                    shipped_model_path(self.cfg["lang"]) is not None:
                self._require_model()
                return
            raise ValueError(Errors.E005.format(n=len(refs)))
        cfg = self.cfg
        inventory = PunctInventory.from_sentences(sents, min_count=cfg["min_count"], pairs_mode=cfg["pairs_mode"])
        features = FeatureConfig(templates=cfg["templates"]) if cfg["templates"] else FeatureConfig()
        pm = PunctModel(inventory, features, mode=cfg["channel"], direction=cfg["direction"], xi=cfg["xi"],
                        smooth_delta=cfg["smooth_delta"],
                        meta={"quote_xpos": quote_xpos, "lang": lang, "trained_with": "spacy",
                              "n_train": len(sents)})
        prepared = pm.prepare_all(sents)
        pm.initialize(prepared, seed=cfg["seed"], psi_scale=cfg["psi_init"], psi_keep_bias=cfg["psi_keep_bias"])
        self._set_punct_model(pm)
        self._prepared = {}

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One gradient step's worth: ``−objective`` of the batch's reference sentences is the
        loss; its exact gradient goes into the thinc Model (``finish_update`` applies it)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "PunctGen.update")
        with self._lock:
            if self.punct_model is None:
                raise ValueError(Errors.E009)
            self._update(examples, sgd, losses)
        return losses

    def _update(self, examples: List[Example], sgd: Optional[Optimizer], losses: Dict[str, float]) -> None:
        pm = self.punct_model
        sents = gold_sentences([eg.reference for eg in examples], quote_xpos=self.quote_xpos)
        if not sents:
            return
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

    def finish_update(self, sgd: Optimizer) -> None:
        """Like thinc's, but ψ's learning rate is scaled by ``psi_lr_scale`` (ψ is small and dense)."""
        with self._lock:
            for name, scale in (("theta", 1.0), ("psi", self.cfg["psi_lr_scale"])):
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
        the registered scorer (``spacy_punctgen.punct_scorer.v1`` by default; ``{}`` with
        ``scorer = null``), given the model and the restoration settings (``kwargs`` override
        them)."""
        if self.scorer is None:
            return {}
        examples = list(examples)
        validate_examples(examples, "PunctGen.score")
        settings = {key: self.cfg[key] for key in ("restore_method", "n_samples", "seed")}
        settings.update(kwargs)
        with self._lock:
            return self.scorer(examples, punct_model=self._require_model(), quote_xpos=self.quote_xpos,
                               **settings)

    # -------------------------------------------------------- serialisation
    def _model_to_save(self):
        """The model to serialise: the component's, else the configured one or the one shipped
        for its language (adopted, so a saved pipeline depends on neither), else None."""
        with self._lock:
            if self.punct_model is None and (self.cfg["model"] is not None
                                             or shipped_model_path(self.cfg["lang"]) is not None):
                self._require_model()
            if self.punct_model is not None:
                self._sync()
            return self.punct_model

    def _restore_cfg(self, saved: Dict[str, Any]) -> None:
        """Adopt the saved settings, except the :data:`RUNTIME_SETTINGS` this component has (and
        any this version does not know)."""
        self.cfg.update({key: value for key, value in saved.items()
                         if key in self.cfg and key not in RUNTIME_SETTINGS})

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        """``cfg`` and ``model`` (empty when there is no model: none given, trained or shipped)."""
        def model_bytes() -> bytes:
            with self._lock:
                pm = self._model_to_save()
                return pm.to_bytes() if pm is not None else b""

        serializers = {
            CFG_FILE: lambda: srsly.json_dumps(self.cfg),
            MODEL_DIR: model_bytes,
        }
        return util.to_bytes(serializers, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "PunctGen":
        from spacy_punctgen.model.punct_model import PunctModel

        def load_model(data: Optional[bytes]) -> None:
            if data:  # empty (or None, from before cfg was serialised): no model was saved
                self._set_punct_model(PunctModel.from_bytes(data))

        deserializers = {
            CFG_FILE: lambda b: self._restore_cfg(srsly.json_loads(b)),
            MODEL_DIR: load_model,
        }
        util.from_bytes(bytes_data, deserializers, exclude)
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        """``cfg`` (a JSON file) and ``model/`` (:meth:`PunctModel.to_disk`); E014 when there is
        no model to write (save with ``exclude=["model"]`` then)."""
        def save_model(p: Path) -> None:
            with self._lock:
                pm = self._model_to_save()
                if pm is None:
                    raise ValueError(Errors.E014.format(lang=self.cfg["lang"]))
                pm.to_disk(p)

        serializers = {
            CFG_FILE: lambda p: srsly.write_json(p, self.cfg),
            MODEL_DIR: save_model,
        }
        util.to_disk(path, serializers, exclude)

    def from_disk(self, path, *, exclude=tuple()) -> "PunctGen":
        path = util.ensure_path(path)

        def load_cfg(p: Path) -> None:
            if p.exists():  # absent in pipelines saved before the settings were serialised
                self._restore_cfg(srsly.read_json(p))

        def load_model(p: Path) -> None:
            if not p.is_dir():
                raise ValueError(Errors.E013.format(path=path, model_dir=p))
            self._set_punct_model(self._load(p))

        deserializers = {
            CFG_FILE: load_cfg,
            MODEL_DIR: load_model,
        }
        util.from_disk(path, deserializers, exclude)
        return self

    def __reduce__(self):
        settings = {k: v for k, v in self.cfg.items() if k != "model"}
        return (_unpickle, (self.vocab, self.name, settings, self.scorer, self.to_bytes(), self._token))


def _unpickle(vocab, name: str, settings: dict, scorer: Optional[Callable], data: bytes,
              token: Optional[str] = None) -> PunctGen:
    """A pickled component; it keeps the original's token, so that Docs it analyses in another
    process (``nlp.pipe(..., n_process=2)`` with the ``spawn`` start method) compute
    ``doc._.punct_logprob`` with the original once they are back."""
    pg = PunctGen(vocab, build_punct_model(), name=name, scorer=scorer, **settings).from_bytes(data)
    if token is not None:
        pg._token = token
        _register(token, pg)
    return pg
