"""``punctgen restore``: punctuate plain unpunctuated text (paper §6.1).

Each input line (a sentence or a paragraph) is parsed by a spaCy pipeline whose
dependency parser was trained on *depunctuated* UD trees (the ``spacy project``
workflow's ``train-parser``), every parsed sentence becomes a
:class:`PunctSentence` like a treebank sentence (:mod:`doc_convert`), and
:mod:`decode` chooses its punctuation by minimum Bayes risk.

Every token of the input counts as a word, even one the tagger calls ``PUNCT``
(the text is assumed unpunctuated; dropping a word the tagger got wrong would
lose text).  Output: the tokens' own texts with the Doc's spacing (one space where it had
any) and the restored marks placed by the one policy of :mod:`spacy_punctgen.decode.render`.
"""
from __future__ import annotations

from typing import Iterable, List, Tuple

from spacy_punctgen.data.parsed import as_words
from spacy_punctgen.decode.mbr import SlotChoice, restore_sentences
from spacy_punctgen.decode.render import render_text
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_sentence
from spacy_punctgen.errors import Errors



def restoration_inputs(doc) -> List[Tuple[PunctSentence, List[str], List[str]]]:
    """Each sentence of a parsed Doc as the model sees it (a :class:`PunctSentence`, every
    token a word, an abbreviation's dot split off as in training), with the tokens' own texts
    (which the rendered text keeps character for character) and the whitespace after each
    (one space or none)."""
    from spacy_punctgen.pipeline.doc_convert import check_doc, span_to_ud

    check_doc(doc)
    out = []
    for k, sent in enumerate(doc.sents):
        ud, _ = span_to_ud(sent)
        if not ud.forms:  # whitespace only
            continue
        ud = as_words(ud)
        ud.sent_id = str(k)
        ps, reason = preprocess_sentence(ud)
        if ps is None or len(ps.words) != len(ud.forms):
            raise ValueError(Errors.E080.format(text=sent.text, reason=reason))
        out.append((ps, list(ud.forms), [" " if sa else "" for sa in ud.space_after]))
    return out


def restore_docs(model, docs: Iterable, method: str = "marginal", n_samples: int = 1000,
                 seed: int = 0, empty_weight: float = 1.0) -> List[Tuple[str, List[List[SlotChoice]]]]:
    """Punctuated text of each parsed Doc, with the slot choices of its sentences
    (``empty_weight``: :func:`spacy_punctgen.decode.mbr.risk_weights`)."""
    docs = list(docs)
    per_doc = [restoration_inputs(doc) for doc in docs]
    flat = [ps for sents in per_doc for ps, _, _ in sents]
    choices = restore_sentences(model, flat, method=method, n_samples=n_samples, seed=seed, empty_weight=empty_weight)
    out, k = [], 0
    for sents in per_doc:
        text, chs = [], []
        for ps, forms, spaces in sents:
            ch = choices[k]
            k += 1
            text.append(render_text(forms, spaces, [c.surface for c in ch]))
            chs.append(ch)
        out.append(("".join(text), chs))
    return out


