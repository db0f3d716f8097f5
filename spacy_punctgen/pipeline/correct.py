"""Punctuation correction of parsed, punctuated Docs (docs/correction.md).

Each sentence of a Doc becomes a :class:`PunctSentence` as in analysis (:func:`punct_sentences`: the
words, the parser's tree of the words, and the punctuation the text has, which is the *observed*
punctuation), :func:`spacy_punctgen.decode.correct.correct_sentences` proposes corrected slot strings,
and the results are

* ``doc._.corrected_punct``: one dict per slot: ``sentence``, ``slot``, ``after`` (the Doc index of
  the word before the slot, None for slot 0), ``observed`` and ``surface`` (the corrected string,
  tuples of marks) and ``prob`` (its posterior probability);
* ``doc._.corrected_text``: the text with the corrections made: an unchanged gap is copied from the
  Doc's text character for character, a changed one is written by the rendering policy of
  :mod:`spacy_punctgen.decode.render` (so a correct text comes back unchanged), its quotes in the
  text's style: straight where the sentence (else the Doc) writes them straight
  (:func:`~spacy_punctgen.data.preprocess.straight_quotes`).

:func:`predict_corrections` computes the per-Doc results without touching the Docs (what a
component's ``predict`` returns), :func:`set_corrections` writes them, :func:`correct_docs` does both.
:func:`correct_ud_sentences` corrects treebank sentences with their own trees (``punctgen correct
FILE.conllu``) by the same road, one Doc per sentence.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, List, Optional, Sequence

from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_punctgen.data.conllu import UDSentence
from spacy_punctgen.data.preprocess import quote_style, straight_quotes
from spacy_punctgen.decode.correct import SlotNoise, correct
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.correction import CorrectionModel
from spacy_punctgen.decode.render import gap_marks, gap_spacing
from spacy_punctgen.pipeline.doc_convert import UD_RELATIONS, check_doc, doc_from_ud, punct_sentences


def _register() -> None:
    for name in ("corrected_punct", "corrected_text"):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)


def _gap_text(marks, prev_word: Optional[str], ws: str) -> str:
    """A changed gap written by the rendering policy; ``ws`` the whitespace the gap had."""
    marks = gap_marks(prev_word, marks)
    if prev_word is None:
        return "".join(marks)
    flags = gap_spacing(marks, bool(ws))
    return (ws if flags[0] else "") + "".join(m + (ws if f else "") for m, f in zip(marks, flags[1:]))


def _sentence_text(doc: Doc, sent, words: List[int], observed, corrected) -> str:
    """The text of one sentence span (with its trailing whitespace) with corrected gaps, whose
    quotes are written straight where the sentence (else the Doc) writes them so."""
    straight = straight_quotes(sent.text, doc.text)
    start = sent.start_char
    end = sent.end_char + len(doc[sent.end - 1].whitespace_)
    bounds = [start] + [b for w in words for b in (doc[w].idx, doc[w].idx + len(doc[w].text))] + [end]
    out = []
    for i in range(len(words) + 1):
        lo, hi = bounds[2 * i], bounds[2 * i + 1]
        original = doc.text[lo:hi]
        if tuple(observed[i]) == tuple(corrected[i]):
            out.append(original)
        else:
            prev = doc[words[i - 1]].text if i else None
            ws = " " if any(c.isspace() for c in original) else ""
            trail = original[len(original.rstrip()):] if i == len(words) else ""
            lead = original[:len(original) - len(original.lstrip())] if i == 0 else ""
            text = _gap_text(quote_style(corrected[i], straight), prev, ws)
            if i == len(words):
                text = text.rstrip() + trail
            out.append(lead + text)
        if i < len(words):
            out.append(doc[words[i]].text)
    return "".join(out)


def predict_corrections(punct_model, docs: Iterable[Doc], noise: Optional[SlotNoise] = None,
                        quote_xpos: bool = False, correction_model: Optional[CorrectionModel] = None) -> List[dict]:
    """Per Doc: ``{"corrected_punct": [...], "corrected_text": str}`` (module docstring).  The Docs
    need a dependency parse (E001/E002 otherwise); all sentences of all Docs are decoded together.
    With ``correction_model`` the paper's method corrects (``method="paper"`` of
    :func:`spacy_punctgen.decode.correct.correct`), else the noise method with ``noise``."""
    docs = list(docs)
    per_doc = []
    for doc in docs:
        check_doc(doc)
        per_doc.append([(si, ps, words) for si, ps, words in punct_sentences(doc, quote_xpos=quote_xpos)])
    flat = [ps for sents in per_doc for _, ps, _ in sents if ps is not None]
    method = "noise" if correction_model is None else "paper"
    corrections = iter(correct(punct_model, flat, method, noise, correction_model) if flat else [])
    out = []
    for doc, sents in zip(docs, per_doc):
        spans = list(doc.sents) if sents else []
        entries, text = [], []
        for si, ps, words in sents:
            if ps is None:
                text.append(spans[si].text_with_ws)
                continue
            ch = next(corrections)
            for i, c in enumerate(ch):
                entries.append({"sentence": si, "slot": i, "after": words[i - 1] if i else None,
                                "observed": tuple(c.observed), "surface": tuple(c.surface), "prob": float(c.prob)})
            text.append(_sentence_text(doc, spans[si], words, [c.observed for c in ch], [c.surface for c in ch]))
        if not sents:
            text.append(doc.text)
        out.append({"corrected_punct": entries, "corrected_text": "".join(text)})
    return out


def set_corrections(docs: Iterable[Doc], results: List[dict]) -> None:
    """Write :func:`predict_corrections`'s results to ``doc._.corrected_punct`` / ``corrected_text``."""
    _register()
    for doc, res in zip(docs, results):
        doc._.corrected_punct = res["corrected_punct"]
        doc._.corrected_text = res["corrected_text"]


def correct_docs(punct_model, docs: Iterable[Doc], noise: Optional[SlotNoise] = None,
                 quote_xpos: bool = False, correction_model: Optional[CorrectionModel] = None) -> List[dict]:
    """Correct the punctuation of parsed Docs: sets ``doc._.corrected_punct`` and
    ``doc._.corrected_text`` and returns the per-Doc results (``correction_model``: as for
    :func:`predict_corrections`)."""
    docs = list(docs)
    results = predict_corrections(punct_model, docs, noise=noise, quote_xpos=quote_xpos,
                                  correction_model=correction_model)
    set_corrections(docs, results)
    return results


def _where(ud: UDSentence) -> str:
    place = f"{ud.path}:{ud.line}" if ud.path else "sentence"
    return place + (f" (sent_id {ud.sent_id})" if ud.sent_id is not None else "")


def _sentence_spacing(ud: UDSentence) -> UDSentence:
    """The sentence with no space after its last word (the text is the sentence's own), and with a
    space between the words of a multiword token whose FORM is not its words run together (``du`` =
    ``de`` + ``le``): the text is written with the words, and ``dele`` would fuse two of them.
    (``Google's`` = ``Google`` + ``'s`` keeps its words together.)"""
    space = list(ud.space_after)
    space[-1:] = [False] * len(space[-1:])
    for first, last, form in ud.multiword:
        if form != "".join(ud.forms[first - 1:last]):
            for k in range(first, last):
                space[k - 1] = True
    return dataclasses.replace(ud, space_after=space)


def _sentence_doc(vocab: Vocab, ud: UDSentence) -> Doc:
    """One treebank sentence as a Doc: its FORMs spaced as SpaceAfter says (never its ``# text``
    comment), its UPOS, XPOS and tree; E017 / E018 name the sentence where it cannot be one."""
    for i, label in enumerate(ud.deprels):
        if label.split(":", 1)[0].lower() not in UD_RELATIONS:
            raise ValueError(Errors.E017.format(where=_where(ud), i=i + 1, form=ud.forms[i], label=label))
    try:
        return doc_from_ud(vocab, _sentence_spacing(ud))
    except ValueError as err:  # spaCy refuses a UPOS that is not UD's, or an empty FORM
        raise ValueError(Errors.E018.format(where=_where(ud), err=err)) from None


def correct_ud_sentences(punct_model, sentences: Sequence[UDSentence], noise: Optional[SlotNoise] = None,
                         quote_xpos: bool = False, correction_model: Optional[CorrectionModel] = None
                         ) -> List[dict]:
    """Correct treebank sentences with their own trees: per sentence, in order, the result of
    :func:`predict_corrections` on a Doc of its words (``corrected_punct``, ``corrected_text``).

    Every sentence comes back.  Its text is its FORMs with the spaces SpaceAfter gives them; where
    punctuation heads words, the words are reattached to the punctuation's nearest word above, as for
    parsed text (:func:`~spacy_punctgen.pipeline.doc_convert.punct_sentences`), instead of the
    sentence being left out as training leaves it out; a sentence with no word comes back as it is.
    """
    vocab = Vocab()
    docs = [_sentence_doc(vocab, ud) for ud in sentences]
    return predict_corrections(punct_model, docs, noise=noise, quote_xpos=quote_xpos,
                               correction_model=correction_model)


_register()
