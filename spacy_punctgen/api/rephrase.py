"""``spacy_punctgen.rephrase(doc, order_model)``: a parsed Doc's sentences with the
dependents of nouns and verbs reordered and the punctuation regenerated through the
channel (docs/rephrasing.md); the work is in :mod:`spacy_punctgen.decode.rephrase`.

The ordering model chooses the setting: one from :meth:`OrderModel.fit` (or
``fit_order_model(..., setting="half")``) reorders each sentence's surface tree, punctuation
tokens included, and keeps the words' order (the paper's Half); one from
:meth:`OrderModel.fit_underlying` (``fit_order_model(..., setting="full")``) reorders the
recovered underlying tree, which has no punctuation token (the paper's Full)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
from spacy.tokens import Doc

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import detect_quote_xpos, preprocess_sentence
from spacy_punctgen.decode.render import render_text
from spacy_punctgen.decode.rephrase import (
    OrderModel,
    rephrase_sentence,
    surface_tree,
    underlying_tree,
    underlying_word_order,
    word_order,
)
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.doc_convert import check_doc, span_to_ud
from spacy_punctgen.pipeline.shipped import default_model_path

SETTINGS = ("half", "full")


def fit_order_model(path, model: Optional[PunctModel] = None, setting: str = "full",
                    punctemes: bool = False) -> OrderModel:
    """An ordering model from the trees of the CoNLL-U file ``path``: ``setting="half"``
    from its surface trees, ``"full"`` from its underlying trees as ``model`` (default the
    shipped English one) recovers them (``punctemes``: condition on each dependent's
    punctemes too)."""
    if setting not in SETTINGS:
        raise ValueError(Errors.E870.format(setting=setting, settings=", ".join(SETTINGS)))
    uds = read_conllu(path)
    qx = detect_quote_xpos(path, uds)
    items = [(ud, s) for ud, s in ((ud, preprocess_sentence(ud, qx)[0]) for ud in uds) if s is not None]
    if setting == "half":
        return OrderModel.fit(surface_tree(ud, s) for ud, s in items)
    pm = model if model is not None else PunctModel.from_disk(default_model_path())
    analysed = pm.analyze([s for _, s in items]) if items else []
    return OrderModel.fit_underlying((underlying_tree(s, p) for (_, s), (p, _) in zip(items, analysed) if p is not None),
                                     punctemes=punctemes)


def rephrase(doc: Doc, order_model: OrderModel, model: Optional[PunctModel] = None, seed: int = 0,
             quote_xpos: bool = False) -> List[str]:
    """One text per sentence of ``doc`` (which needs a UD parse): its best underlying
    punctuation (``model``, default the shipped English one), its words reordered by
    ``order_model`` (drawn with ``seed``; the surface tree is reordered for a model from
    :meth:`OrderModel.fit`, the underlying tree for one from :meth:`OrderModel.fit_underlying`),
    its slots the channel's most probable surface.  A sentence without words, or whose
    punctuation the model cannot derive, comes back as is."""
    check_doc(doc)
    pm = model if model is not None else PunctModel.from_disk(default_model_path())
    items = []
    for sent in doc.sents:
        ud, _ = span_to_ud(sent)
        ps = preprocess_sentence(ud, quote_xpos)[0] if ud.forms else None
        items.append((sent.text, ud, ps))
    kept = [ps for _, _, ps in items if ps is not None]
    analysed = iter(pm.analyze(kept) if kept else [])
    rng, phi, cache = np.random.default_rng(seed), pm.phi(), {}
    out = []
    for text, ud, ps in items:
        pairs = next(analysed)[0] if ps is not None else None
        if pairs is None:
            out.append(text)
            continue
        if order_model.underlying:
            tree = underlying_tree(ps, pairs)
            order = underlying_word_order(tree, order_model.keys(tree, rng))
        else:
            tree = surface_tree(ud, ps)
            order = word_order(tree, order_model.keys(tree, rng))
        r = rephrase_sentence(pm, ps, order, pairs, phi, cache)
        out.append(render_text(r.words, [" "] * (len(r.words) - 1) + [""], r.slots))
    return out
