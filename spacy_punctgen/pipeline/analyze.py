"""Analysis of parsed, punctuated Docs: each slot's underlying marks and each token's punctemes.

The component's ``mode="analyze"`` (:mod:`.component`) calls :func:`analyze_docs` with its
model; the decoding itself is :func:`spacy_punctgen.model.analysis.analyze_underlying` (one
compile and one ATTACH scoring per sentence for the whole batch).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Tuple

from spacy.tokens import Doc

from spacy_punctgen.data.inventory import BOS, UNK_SYMBOL
from spacy_punctgen.pipeline.doc_convert import punct_sentences


def unseen_mark(model, tok: str) -> bool:
    """Whether ``model`` has no symbol for the mark ``tok`` (never seen in training, or written
    like its start symbol ``^``)."""
    return tok == BOS or model.inventory.symbol_id(tok) == 1


def scored_view(ps):
    """``ps`` as ``doc._.punct_logprob`` scores it: a mark written ``^`` becomes the unknown
    symbol (``^`` is the model's sentence-start symbol, which no slot may hold)."""
    if not any(tok == BOS for x in ps.slots for tok in x):
        return ps
    return dataclasses.replace(ps, slots=[tuple(UNK_SYMBOL if t == BOS else t for t in x) for x in ps.slots])


def analyze_docs(model, docs: List[Doc], quote_xpos: bool) -> List[dict]:
    """Per Doc, ``{"underlying_punct": entries, "tokens": {token index: (left, right)}}``.

    A slot holding a mark the model has no symbol for is analysed as if it held only its known
    marks, and reported with ``underlying`` None; so is every slot of a sentence whose
    punctuation the model gives probability 0 (no explanation exists: say so rather than guess).
    """
    from spacy_punctgen.model.analysis import analyze_underlying

    sents = [[(si, ps, wt) for si, ps, wt in punct_sentences(doc, quote_xpos=quote_xpos)
              if ps is not None]  # only punctuation: nothing sprouts it
             for doc in docs]
    viewed, unseen_slots = [], []
    for doc_sents in sents:
        for _, ps, _ in doc_sents:
            unseen = {i for i, x in enumerate(ps.slots) if x and any(unseen_mark(model, t) for t in x)}
            if unseen:
                ps = dataclasses.replace(ps, slots=[tuple(t for t in x if not unseen_mark(model, t)) if i in unseen
                                                    else x for i, x in enumerate(ps.slots)])
            viewed.append(ps)
            unseen_slots.append(unseen)
    results = iter(zip(analyze_underlying(model, viewed), unseen_slots))
    out = []
    for doc_sents in sents:
        entries: List[dict] = []
        tokens: Dict[int, Tuple[tuple, tuple]] = {}
        for si, ps, word_tokens in doc_sents:
            (lr, u), unseen = next(results)
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


def doc_logprob(model, doc: Doc, quote_xpos: bool) -> float:
    """``Σ log p'(x|T)`` over the Doc's sentences: ``log_probs`` of ``prepare_eval`` with the
    back-off mixture, as ``punct_ppl`` scores a sentence."""
    sents = [scored_view(ps) for _, ps, _ in punct_sentences(doc, quote_xpos=quote_xpos) if ps is not None]
    if not sents:
        return 0.0
    return float(sum(model.log_probs(model.prepare_eval(sents), backoff=True).tolist()))
