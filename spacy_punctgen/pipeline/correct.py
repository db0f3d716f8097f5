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
  :mod:`spacy_punctgen.decode.render` (so a correct text comes back unchanged).

:func:`predict_corrections` computes the per-Doc results without touching the Docs (what a
component's ``predict`` returns), :func:`set_corrections` writes them, :func:`correct_docs` does both.
"""
from __future__ import annotations

from typing import Iterable, List, Optional

from spacy.tokens import Doc

from spacy_punctgen.decode.correct import SlotNoise, correct
from spacy_punctgen.model.correction import CorrectionModel
from spacy_punctgen.decode.render import gap_marks, gap_spacing
from spacy_punctgen.pipeline.doc_convert import check_doc, punct_sentences


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
    """The text of one sentence span (with its trailing whitespace) with corrected gaps."""
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
            text = _gap_text(corrected[i], prev, ws)
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


_register()
