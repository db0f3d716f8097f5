"""The ``punctgen`` spaCy component: analysis and restoration of punctuation, trainable in
``spacy train``.

A thin layer over :class:`PunctModel`.  Each sentence of a parsed Doc is
depunctuated (:mod:`doc_convert`) and, depending on ``mode``:

``mode = "analyze"`` (default; punctuated text): the best underlying tree ``T'`` is decoded:

* ``doc._.underlying_punct``: one dict per slot of every sentence: ``sentence``,
  ``slot``, ``after`` (index of the word token before the slot, None for slot 0),
  ``underlying`` and ``surface`` token sequences (``underlying`` is None where the
  model gives the sentence's punctuation probability 0);
* ``token._.punct_left`` / ``token._.punct_right``: the punctemes the token's
  constituent sprouts (``None`` on punctuation tokens);
* ``doc._.punct_logprob``: ``Σ log p'(x|T)`` over the Doc's sentences, where ``p'`` is the
  evaluation distribution of ``punct_ppl`` (smoothing + back-off mixture, see model.py):
  finite even where a poor parse makes the punctuation impossible under ``p`` (whose
  ``underlying`` entries are then None).

``mode = "restore"`` (unpunctuated text; any punctuation already there is ignored and
replaced): surface punctuation per slot is chosen by :func:`decode.restore_sentence`
(``restore_method``, ``n_samples``, ``seed``):

* ``doc._.restored_punct``: one dict per slot: ``sentence``, ``slot``, ``after``,
  ``surface`` (the chosen tokens, the model's own symbols, e.g. ``ABBR.``) and ``prob``;
* ``doc._.restored_text``: the text with the punctuation inserted, exactly the text of
  :func:`doc_convert.insert_punctuation` ``(doc)``, which returns that Doc.

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

Serialisation (``to_bytes``/``from_bytes``/``to_disk``/``from_disk``, and so ``nlp.to_disk``
and ``spacy.load``) goes through spaCy's serializer dicts, whose keys ``exclude`` takes:
``cfg`` (the settings, ``cfg`` in the component's folder) and ``model`` (the trained
:class:`PunctModel`: the ``model/`` folder, or the model shipped for the language if the
component has not loaded one yet).  Loading restores the saved settings except
:data:`RUNTIME_SETTINGS` (how to run: ``mode``, ``restore_method``, ``n_samples``, ``seed``),
which stay those the loading pipeline's config gave the component.  ``from_disk`` of a folder
without ``model/`` raises E013 (unless ``model`` is excluded).
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np
import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Token
from spacy.training import Example, validate_examples, validate_get_examples
from thinc.api import Model, Optimizer

from spacy_punctgen.pipeline.doc_convert import check_doc, punct_sentences, docs_quote_xpos, gold_sentences, insert_punctuation
from spacy_punctgen.errors import Errors, Warnings
from spacy_punctgen.data.underlying import underlying_sequences
from spacy_punctgen.pipeline.architectures import PUNCT_MODEL_ARCHITECTURE, build_punct_model
from spacy_punctgen.pipeline.scorers import PUNCT_SCORER, punct_score

MODEL_DIR = "model"
CFG_FILE = "cfg"
MODES = ("analyze", "restore")
#: Settings of how the component runs: loading a saved component keeps the ones the loading
#: pipeline's config gave it (e.g. ``spacy.load(path, config={"components": {"punctgen":
#: {"mode": "restore"}}})``); every other setting comes from the saved ``cfg``.
RUNTIME_SETTINGS = ("mode", "restore_method", "n_samples", "seed")
_CACHE_LIMIT = 200_000


def _register_extensions() -> None:
    for name in ("underlying_punct", "punct_logprob", "restored_punct", "restored_text"):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    for name in ("punct_left", "punct_right"):
        if not Token.has_extension(name):
            Token.set_extension(name, default=None)


_register_extensions()


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
        "restore_method": "slot",
        "n_samples": 1000,
        "seed": 0,
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
        "thinc_model": {"@architectures": PUNCT_MODEL_ARCHITECTURE},
        "scorer": {"@scorers": PUNCT_SCORER},
    },
    assigns=["doc._.underlying_punct", "doc._.punct_logprob", "token._.punct_left", "token._.punct_right",
             "doc._.restored_punct", "doc._.restored_text"],
    requires=["token.dep", "token.head", "token.pos"],
    default_score_weights={"punct_lp": 1.0, "punct_ppl": None, "punct_aed": None},
)
def make_punctgen(nlp: Language, name: str, model: Optional[str], mode: str, restore_method: str,
                  n_samples: int, seed: int, channel: str, direction: str, xi: float, min_count: int,
                  pairs_mode: str, templates: Optional[List[str]], psi_init: float, psi_keep_bias: float,
                  psi_lr_scale: float, smooth_delta: float, thinc_model: Model,
                  scorer: Optional[Callable]) -> "PunctGen":
    """``model`` is the path of a trained model (None: the one shipped for ``nlp.lang``);
    ``thinc_model`` the registered architecture holding its parameters, ``scorer`` the
    registered scorer of :meth:`PunctGen.score`."""
    return PunctGen(nlp.vocab, thinc_model, name=name, model_path=model, lang=nlp.lang, mode=mode,
                    restore_method=restore_method, n_samples=n_samples, seed=seed, channel=channel,
                    direction=direction, xi=xi, min_count=min_count, pairs_mode=pairs_mode,
                    templates=templates, psi_init=psi_init, psi_keep_bias=psi_keep_bias,
                    psi_lr_scale=psi_lr_scale, smooth_delta=smooth_delta, scorer=scorer)


class PunctGen(TrainablePipe):
    """See the module docstring.  Settings (``cfg``) come from the pipeline's config and are
    serialised with the trained :class:`PunctModel`."""

    def __init__(self, vocab, model: Model, name: str = "punctgen", *,
                 model_path: Optional[Union[str, Path]] = None, lang: str = "xx", mode: str = "analyze",
                 restore_method: str = "slot", n_samples: int = 1000, seed: int = 0, channel: str = "full",
                 direction: str = "r2l", xi: float = 0.0, min_count: int = 5, pairs_mode: str = "halves",
                 templates: Optional[List[str]] = None, psi_init: float = 1.0, psi_keep_bias: float = 3.0,
                 psi_lr_scale: float = 10.0, smooth_delta: float = 0.001,
                 scorer: Optional[Callable] = punct_score):
        if mode not in MODES:
            raise ValueError(Errors.E008.format(name="mode", allowed=list(MODES), value=mode))
        from spacy_punctgen.decode.mbr import METHODS

        if restore_method not in METHODS:
            raise ValueError(Errors.E008.format(name="restore_method", allowed=list(METHODS), value=restore_method))
        if int(n_samples) < 1:
            raise ValueError(Errors.E008.format(name="n_samples", allowed="integers >= 1", value=n_samples))
        if channel not in ("full", "attach"):
            raise ValueError(Errors.E008.format(name="channel", allowed=["full", "attach"], value=channel))
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg: Dict[str, Any] = {
            "model": str(model_path) if model_path is not None else None, "lang": lang, "mode": mode,
            "restore_method": restore_method, "n_samples": int(n_samples), "seed": int(seed),
            "channel": channel, "direction": direction, "xi": float(xi), "min_count": int(min_count),
            "pairs_mode": pairs_mode, "templates": list(templates) if templates else None,
            "psi_init": float(psi_init), "psi_keep_bias": float(psi_keep_bias),
            "psi_lr_scale": float(psi_lr_scale), "smooth_delta": float(smooth_delta),
        }
        self.scorer = scorer
        self.punct_model = None
        self._prepared: Dict[tuple, Any] = {}
        if model_path is not None:
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
        if self.punct_model is None:
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

    # ------------------------------------------------------------ inference
    def predict(self, docs: Iterable[Doc]) -> List[dict]:
        """Per Doc, the annotations to set (the Docs are not modified)."""
        docs = list(docs)
        self._require_model()
        for doc in docs:
            check_doc(doc)
        if self.cfg["mode"] == "restore":
            return [self._restore(doc) for doc in docs]
        return self._analyze(docs)

    def _analyze(self, docs: List[Doc]) -> List[dict]:
        """All sentences of the batch go to :meth:`PunctModel.analyze` together (one compile
        and one ATTACH scoring per sentence, shared by the Viterbi pass and ``p'(x|T)``)."""
        pm = self.punct_model
        sents = [[(si, ps, wt) for si, ps, wt in punct_sentences(doc, quote_xpos=self.quote_xpos)
                  if ps is not None]  # only punctuation: nothing sprouts it
                 for doc in docs]
        results = iter(pm.analyze([ps for doc_sents in sents for _, ps, _ in doc_sents]))
        out = []
        for doc_sents in sents:
            entries: List[dict] = []
            tokens: Dict[int, Tuple[tuple, tuple]] = {}
            total = 0.0
            for si, ps, word_tokens in doc_sents:
                lr, logprob = next(results)
                total += logprob
                # p(x|T) = 0 leaves lr None: no explanation exists, so say so rather than guess
                u = underlying_sequences(ps.heads, lr) if lr is not None else [None] * len(ps.slots)
                for i, x in enumerate(ps.slots):
                    entries.append({"sentence": si, "slot": i, "after": word_tokens[i - 1] if i else None,
                                    "underlying": tuple(u[i]) if u[i] is not None else None,
                                    "surface": tuple(x)})
                if lr is not None:
                    for w, tok_i in enumerate(word_tokens):
                        tokens[tok_i] = (tuple(lr[w][0]), tuple(lr[w][1]))
            out.append({"underlying_punct": entries, "punct_logprob": total, "tokens": tokens})
        return out

    def _restore_slots(self, ps) -> list:
        from spacy_punctgen.decode.mbr import restore_sentence

        return restore_sentence(self.punct_model, ps, method=self.cfg["restore_method"],
                                n_samples=self.cfg["n_samples"], seed=self.cfg["seed"])

    def _restore(self, doc: Doc) -> dict:
        entries: List[dict] = []
        for si, ps, word_tokens in punct_sentences(doc, quote_xpos=self.quote_xpos):
            if ps is None:
                continue
            ps.slots = [()] * len(ps.slots)  # restoration ignores the punctuation already there
            for i, choice in enumerate(self._restore_slots(ps)):
                entries.append({"sentence": si, "slot": i, "after": word_tokens[i - 1] if i else None,
                                "surface": tuple(choice.surface), "prob": float(choice.prob)})
        return {"restored_punct": entries}

    def set_annotations(self, docs: Iterable[Doc], results: List[dict]) -> None:
        for doc, res in zip(docs, results):
            if "restored_punct" in res:
                doc._.restored_punct = res["restored_punct"]
                doc._.restored_text = insert_punctuation(doc).text
                continue
            doc._.underlying_punct = res["underlying_punct"]
            doc._.punct_logprob = res["punct_logprob"]
            for tok in doc:
                tok._.punct_left, tok._.punct_right = res["tokens"].get(tok.i, (None, None))

    # ------------------------------------------------------------- training
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None
                   ) -> None:
        """Build a new model from the Examples' reference Docs (gold UD trees + punctuation).

        Examples without a parse (``nlp.initialize()`` with no data gives one) cannot teach
        anything: then a configured (or shipped) model is kept, and E005 raised if there is none.
        """
        from spacy_punctgen.model.features import FeatureConfig
        from spacy_punctgen.data.inventory import PunctInventory
        from spacy_punctgen.model.punct_model import PunctModel

        validate_get_examples(get_examples, "PunctGen.initialize")
        refs = [eg.reference for eg in get_examples()]
        lang = nlp.lang if nlp is not None else self.cfg["lang"]
        quote_xpos = docs_quote_xpos(refs, lang)
        sents = gold_sentences(refs, quote_xpos=quote_xpos)
        if not sents:
            if self.punct_model is not None or shipped_model_path(self.cfg["lang"]) is not None:
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

    def finish_update(self, sgd: Optimizer) -> None:
        """Like thinc's, but ψ's learning rate is scaled by ``psi_lr_scale`` (ψ is small and dense)."""
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
        return self.scorer(examples, punct_model=self._require_model(), quote_xpos=self.quote_xpos, **settings)

    # -------------------------------------------------------- serialisation
    def _model_to_save(self):
        """The model to serialise: the component's, else the one shipped for its language
        (adopted, so a saved pipeline does not depend on what ships later), else None."""
        if self.punct_model is None and shipped_model_path(self.cfg["lang"]) is not None:
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
        return (_unpickle, (self.vocab, self.name, settings, self.scorer, self.to_bytes()))


def _unpickle(vocab, name: str, settings: dict, scorer: Optional[Callable], data: bytes) -> PunctGen:
    return PunctGen(vocab, build_punct_model(), name=name, scorer=scorer, **settings).from_bytes(data)
