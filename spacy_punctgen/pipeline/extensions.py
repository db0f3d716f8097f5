"""The ``punctgen`` component's Doc and Token extensions, and the one place that knows where
spaCy keeps their values.

Why a module of its own: the component writes a value for every token of every analysed Doc,
and spaCy's per-token extension setter was a tenth of the analysis' time, so the values are
written straight into ``doc.user_data`` under the keys spaCy's own setters use. That layout is
spaCy's private business; it is pinned here, to the spaCy versions the package supports
(:data:`SPACY_VERSIONS`, checked against spaCy's setters by a test), and nowhere else.

The getters are module functions (bound with :func:`functools.partial`), so the extensions
pickle and ``nlp.pipe(..., n_process=2)`` works under the ``spawn`` start method; they give
tuples back where msgpack (``Doc.to_bytes``) turned tuples into lists.

``doc._.punct_logprob`` costs a second, smoothed DP pass, so it waits until it is read: the Doc
holds a :class:`PendingLogprob` (the component that analysed it) in its place, which becomes a
number when first read, when the Doc is serialised (``to_bytes``: a msgpack encoder) or when it
is copied (``Doc.copy``).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Optional

import srsly
from spacy.tokens import Doc, Token

#: the spaCy versions whose extension-key layout is written below
SPACY_VERSIONS = ">=3.8,<3.9"
#: the Doc extensions holding one dict per slot
ENTRY_EXTENSIONS = ("underlying_punct", "restored_punct")
#: the Token extensions holding a (left, right) pair of punctemes
PAIR_EXTENSIONS = ("punct_left", "punct_right")


def doc_key(name: str) -> tuple:
    """Where spaCy 3.8 keeps Doc extension ``name`` in ``doc.user_data``."""
    return ("._.", name, None, None)


def token_key(name: str, idx: int) -> tuple:
    """Where spaCy 3.8 keeps token extension ``name`` of the token at character ``idx``."""
    return ("._.", name, idx, None)


class PendingLogprob:
    """``doc._.punct_logprob`` before it is first read: the component that analysed ``doc``
    computes it (with its model at that time) when asked."""

    __slots__ = ("component", "doc")

    def __init__(self, component: Any, doc: Doc):
        self.component = component
        self.doc = doc

    def resolve(self) -> float:
        return self.component.doc_logprob(self.doc)

    def __deepcopy__(self, memo) -> float:  # Doc.copy deep-copies user_data: the copy gets the number
        return self.resolve()

    def __reduce__(self):  # pickling a Doc's user_data: the number, not the component
        return (float, (self.resolve(),))


def _encode_pending(obj, chain=None):
    """srsly's msgpack encoder (``Doc.to_bytes``): a pending log-probability is written as its value."""
    if isinstance(obj, PendingLogprob):
        return obj.resolve()
    return obj if chain is None else chain(obj)


srsly.msgpack_encoders.register("spacy_punctgen.pending_logprob", func=_encode_pending)


def _as_tuple(value):
    return tuple(value) if isinstance(value, list) else value


def _get_entries(name: str, doc: Doc):
    entries = doc.user_data.get(doc_key(name))
    if entries:
        for e in entries:
            for field in ("underlying", "surface"):
                if isinstance(e.get(field), list):
                    e[field] = tuple(e[field])
    return entries


def _set_entries(name: str, doc: Doc, value) -> None:
    doc.user_data[doc_key(name)] = value


def _get_pair(name: str, tok: Token):
    return _as_tuple(tok.doc.user_data.get(token_key(name, tok.idx)))


def _set_pair(name: str, tok: Token, value) -> None:
    tok.doc.user_data[token_key(name, tok.idx)] = value


def _get_logprob(doc: Doc) -> Optional[float]:
    key = doc_key("punct_logprob")
    value = doc.user_data.get(key)
    if isinstance(value, PendingLogprob):
        value = doc.user_data[key] = value.resolve()
    return value


def _set_logprob(doc: Doc, value: Optional[float]) -> None:
    doc.user_data[doc_key("punct_logprob")] = value


def register_extensions() -> None:
    """Register the component's extensions (once; the component module does it on import)."""
    for name in ENTRY_EXTENSIONS:
        if not Doc.has_extension(name):
            Doc.set_extension(name, getter=partial(_get_entries, name), setter=partial(_set_entries, name))
    if not Doc.has_extension("punct_logprob"):
        Doc.set_extension("punct_logprob", getter=_get_logprob, setter=_set_logprob)
    for name in ("restored_text", "restored_edits"):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    # set by the streaming pipeline on an input it parses as one sentence (api/stream.py one_sentence):
    # restoration then reads the sentence-end expert (model/sentence_end.py)
    if not Doc.has_extension("one_sentence_input"):
        Doc.set_extension("one_sentence_input", default=False)
    for name in PAIR_EXTENSIONS:
        if not Token.has_extension(name):
            Token.set_extension(name, getter=partial(_get_pair, name), setter=partial(_set_pair, name))


def set_pending_logprob(doc: Doc, component: Any) -> None:
    """``doc._.punct_logprob`` is computed by ``component`` when first read."""
    doc.user_data[doc_key("punct_logprob")] = PendingLogprob(component, doc)


def set_token_pairs(doc: Doc, idxs, pairs) -> None:
    """What ``tok._.punct_left, tok._.punct_right = pairs[i]`` stores for the token at character
    ``idxs[i]``, written at once; ``pairs`` maps a token's index to its pair."""
    data, get, none = doc.user_data, pairs.get, (None, None)
    for i, idx in enumerate(idxs):
        left, right = get(i, none)
        data[token_key("punct_left", idx)] = left
        data[token_key("punct_right", idx)] = right
