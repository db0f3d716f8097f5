"""``spacy_punctgen.rephrase(doc, order_model)``: a parsed Doc's sentences with the
dependents of nouns and verbs reordered and the punctuation regenerated through the
channel (docs/rephrasing.md); the work is in :mod:`spacy_punctgen.decode.rephrase`."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
from spacy.tokens import Doc

from spacy_punctgen.data.preprocess import preprocess_sentence
from spacy_punctgen.decode.render import render_text
from spacy_punctgen.decode.rephrase import OrderModel, rephrase_sentence, surface_tree, word_order
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.doc_convert import check_doc, span_to_ud
from spacy_punctgen.pipeline.shipped import default_model_path


def rephrase(doc: Doc, order_model: OrderModel, model: Optional[PunctModel] = None, seed: int = 0,
             quote_xpos: bool = False) -> List[str]:
    """One text per sentence of ``doc`` (which needs a UD parse): its best underlying
    punctuation (``model``, default the shipped English one), its words reordered by
    ``order_model`` (drawn with ``seed``), its slots the channel's most probable surface.
    A sentence without words, or whose punctuation the model cannot derive, comes back as is."""
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
        tree = surface_tree(ud, ps)
        r = rephrase_sentence(pm, ps, word_order(tree, order_model.keys(tree, rng)), pairs, phi, cache)
        out.append(render_text(r.words, [" "] * (len(r.words) - 1) + [""], r.slots))
    return out
