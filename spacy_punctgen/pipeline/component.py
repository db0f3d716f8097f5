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
params ``theta``/``psi`` of a parameter-only thinc :class:`Model`, so spaCy's optimizer
(and its parameter averages, via ``use_params``) update them.  ``initialize`` builds the
inventory and feature dictionary from the Examples' reference Docs (gold UD trees and
punctuation), ``update`` computes the exact gradient of the log-likelihood with the DP
(:meth:`PunctModel.objective_and_gradient`) and hands it to the Model with ``inc_grad``,
``score`` reports ``punct_ppl`` (per-slot perplexity of the reference punctuation),
``punct_lp`` (``−ln punct_ppl``: higher is better, the one weighted in model selection)
and ``punct_aed`` (AED of restoring the reference punctuation from the reference trees).
Predictions and scores read the reference/predicted Docs only through their trees, so
in ``spacy train`` a parser must run before ``punctgen`` (e.g. sourced and frozen; see
docs/usage.md).

``model = null``: the model shipped for the pipeline's language (if one ships) is loaded
the first time the component needs it; otherwise using it raises E003.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np
import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Token
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import ensure_path
from thinc.api import Model, Optimizer

from spacy_punctgen.pipeline.doc_convert import check_doc, punct_sentences, docs_quote_xpos, gold_sentences, insert_punctuation
from spacy_punctgen.errors import Errors
from spacy_punctgen.data.underlying import underlying_sequences

MODEL_DIR = "model"
MODES = ("analyze", "restore")
_CACHE_LIMIT = 200_000


def _register_extensions() -> None:
    for name in ("underlying_punct", "punct_logprob", "restored_punct", "restored_text"):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    for name in ("punct_left", "punct_right"):
        if not Token.has_extension(name):
            Token.set_extension(name, default=None)


_register_extensions()


def build_params_model() -> Model:
    """A thinc Model holding only ``theta`` (F,) and ``psi`` (S, S, 4), float32.

    Its forward returns the two arrays; the backward adds the given gradients with
    ``inc_grad``.  The math lives in :class:`PunctModel` (Cython DP), not in thinc layers.
    """
    return Model("punctgen_params", _params_forward, params={"theta": None, "psi": None})


def _params_forward(model: Model, X: Any, is_train: bool):
    params = (model.get_param("theta"), model.get_param("psi"))

    def backprop(d_params):
        d_theta, d_psi = d_params
        model.inc_grad("theta", d_theta)
        model.inc_grad("psi", d_psi)
        return X

    return params, backprop


def shipped_model_path(lang: str) -> Optional[Path]:
    """The model shipped with the package for ``lang``, or None (see :mod:`spacy_punctgen.pipeline.shipped`,
    imported here so that loading the factory does not import the model code)."""
    from spacy_punctgen.pipeline.shipped import default_model_path

    try:
        return default_model_path(lang)
    except ValueError:  # none ships for lang (or its files are missing)
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
    },
    assigns=["doc._.underlying_punct", "doc._.punct_logprob", "token._.punct_left", "token._.punct_right",
             "doc._.restored_punct", "doc._.restored_text"],
    requires=["token.dep", "token.head", "token.pos"],
    default_score_weights={"punct_lp": 1.0, "punct_ppl": None, "punct_aed": None},
)
def make_punctgen(nlp: Language, name: str, model: Optional[str], mode: str, restore_method: str,
                  n_samples: int, seed: int, channel: str, direction: str, xi: float, min_count: int,
                  pairs_mode: str, templates: Optional[List[str]], psi_init: float, psi_keep_bias: float,
                  psi_lr_scale: float, smooth_delta: float) -> "PunctGen":
    return PunctGen(nlp.vocab, build_params_model(), name=name, model_path=model, lang=nlp.lang, mode=mode,
                    restore_method=restore_method, n_samples=n_samples, seed=seed, channel=channel,
                    direction=direction, xi=xi, min_count=min_count, pairs_mode=pairs_mode,
                    templates=templates, psi_init=psi_init, psi_keep_bias=psi_keep_bias,
                    psi_lr_scale=psi_lr_scale, smooth_delta=smooth_delta)


class PunctGen(TrainablePipe):
    """See the module docstring.  Settings (``cfg``) come from the pipeline's config; only the
    trained :class:`PunctModel` is serialised."""

    def __init__(self, vocab, model: Model, name: str = "punctgen", *,
                 model_path: Optional[Union[str, Path]] = None, lang: str = "xx", mode: str = "analyze",
                 restore_method: str = "slot", n_samples: int = 1000, seed: int = 0, channel: str = "full",
                 direction: str = "r2l", xi: float = 0.0, min_count: int = 5, pairs_mode: str = "halves",
                 templates: Optional[List[str]] = None, psi_init: float = 1.0, psi_keep_bias: float = 3.0,
                 psi_lr_scale: float = 10.0, smooth_delta: float = 0.001):
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
        raise NotImplementedError("punctgen computes its loss and gradient inside update()")

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Optional[float]]:
        """``punct_ppl``/``punct_lp`` and ``punct_aed`` on the reference Docs (gold trees)."""
        from spacy_punctgen.evaluation.metrics import aed, gold_slots

        examples = list(examples)
        validate_examples(examples, "PunctGen.score")
        pm = self._require_model()
        sents = gold_sentences([eg.reference for eg in examples], quote_xpos=self.quote_xpos)
        if not sents:
            return {"punct_ppl": None, "punct_lp": None, "punct_aed": None}
        ppl = pm.perplexity(pm.prepare_eval(sents))["perplexity_per_slot"]
        gold = gold_slots(sents)
        pred = [[tuple(c.surface) for c in self._restore_slots(s)] for s in sents]
        return {"punct_ppl": ppl, "punct_lp": -math.log(ppl), "punct_aed": aed(gold, pred)["aed"]}

    # -------------------------------------------------------- serialisation
    def to_bytes(self, *, exclude=tuple()) -> bytes:
        if self.punct_model is not None:
            self._sync()
        return srsly.msgpack_dumps({"model": self.punct_model.to_bytes() if self.punct_model else None})

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "PunctGen":
        from spacy_punctgen.model.punct_model import PunctModel

        data = srsly.msgpack_loads(bytes_data)
        if data.get("model"):
            self._set_punct_model(PunctModel.from_bytes(data["model"]))
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self.punct_model is not None:
            self._sync()
            self.punct_model.to_disk(path / MODEL_DIR)

    def from_disk(self, path, *, exclude=tuple()) -> "PunctGen":
        path = ensure_path(path)
        if (path / MODEL_DIR).exists():
            self._set_punct_model(self._load(path / MODEL_DIR))
        return self

    def __reduce__(self):
        settings = {k: v for k, v in self.cfg.items() if k != "model"}
        return (_unpickle, (self.vocab, self.name, settings, self.to_bytes()))


def _unpickle(vocab, name: str, settings: dict, data: bytes) -> PunctGen:
    return PunctGen(vocab, build_params_model(), name=name, **settings).from_bytes(data)
