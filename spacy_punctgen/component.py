"""The ``punctgen`` spaCy component: explain a parsed Doc's punctuation by its underlying marks.

A thin layer over :class:`PunctModel`: each sentence is depunctuated
(:mod:`doc_convert`), the best underlying tree ``T'`` is decoded by the Cython
core, and the result is exposed as extension attributes:

* ``doc._.underlying_punct``: one dict per slot of every sentence: ``sentence``,
  ``slot``, ``after`` (index of the word token before the slot, None for slot 0),
  ``underlying`` and ``surface`` token sequences (``underlying`` is None where the
  model gives the sentence's punctuation probability 0);
* ``token._.punct_left`` / ``token._.punct_right``: the punctemes the token's
  constituent sprouts (``None`` on punctuation tokens);
* ``doc._.punct_logprob``: ``Σ log p(x|T)`` over the Doc's sentences.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Token
from spacy.util import ensure_path

from .doc_convert import check_doc, span_to_sentence
from .errors import Errors
from .underlying import underlying_sequences

MODEL_DIR = "model"


def _register_extensions() -> None:
    for name in ("underlying_punct", "punct_logprob"):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    for name in ("punct_left", "punct_right"):
        if not Token.has_extension(name):
            Token.set_extension(name, default=None)


_register_extensions()


@Language.factory(
    "punctgen",
    default_config={"model": None},
    assigns=["doc._.underlying_punct", "doc._.punct_logprob", "token._.punct_left", "token._.punct_right"],
    requires=["token.dep", "token.head", "token.pos"],
)
def make_punctgen(nlp: Language, name: str, model: Optional[str]) -> "PunctGen":
    return PunctGen(nlp.vocab, name=name, model_path=model)


class PunctGen(Pipe):
    """Analysis of punctuated text with a trained :class:`PunctModel`."""

    def __init__(self, vocab, name: str = "punctgen", model_path: Optional[Union[str, Path]] = None):
        self.vocab = vocab
        self.name = name
        self.cfg: Dict[str, Any] = {}
        self.punct_model = None
        if model_path is not None:
            self.punct_model = self._load(Path(model_path))

    @staticmethod
    def _load(path: Path):
        from .model import PunctModel

        try:
            return PunctModel.from_disk(path)
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E004.format(path=path, reason=err)) from None

    # ------------------------------------------------------------ inference
    def __call__(self, doc: Doc) -> Doc:
        if self.punct_model is None:
            raise ValueError(Errors.E003)
        check_doc(doc)
        model = self.punct_model
        entries: List[dict] = []
        total = 0.0
        for si, sent in enumerate(doc.sents):
            ps, word_tokens = span_to_sentence(sent, quote_xpos=model.meta.get("quote_xpos", False))
            if ps is None:  # only punctuation: nothing sprouts it
                continue
            lr = model.best_underlying(ps)
            total += model.log_prob(ps)
            # p(x|T) = 0 leaves lr None: no explanation exists, so say so rather than guess
            u = underlying_sequences(ps.heads, lr) if lr is not None else [None] * len(ps.slots)
            for i, x in enumerate(ps.slots):
                entries.append({"sentence": si, "slot": i, "after": word_tokens[i - 1] if i else None,
                                "underlying": tuple(u[i]) if u[i] is not None else None,
                                "surface": tuple(x)})
            if lr is None:
                continue
            for w, tok_i in enumerate(word_tokens):
                doc[tok_i]._.punct_left = tuple(lr[w][0])
                doc[tok_i]._.punct_right = tuple(lr[w][1])
        doc._.underlying_punct = entries
        doc._.punct_logprob = total
        return doc

    # -------------------------------------------------------- serialisation
    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return srsly.msgpack_dumps({"model": self.punct_model.to_bytes() if self.punct_model else None})

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "PunctGen":
        from .model import PunctModel

        data = srsly.msgpack_loads(bytes_data)
        self.punct_model = PunctModel.from_bytes(data["model"]) if data.get("model") else None
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self.punct_model is not None:
            self.punct_model.to_disk(path / MODEL_DIR)

    def from_disk(self, path, *, exclude=tuple()) -> "PunctGen":
        path = ensure_path(path)
        self.punct_model = self._load(path / MODEL_DIR) if (path / MODEL_DIR).exists() else None
        return self
