"""``punctgen restore``: punctuate plain unpunctuated text (paper §6.1).

Each input line (a sentence or a paragraph) is parsed by a spaCy pipeline whose
dependency parser was trained on *depunctuated* UD trees (the ``spacy project``
workflow's ``train-parser``), every parsed sentence becomes a
:class:`PunctSentence` like a treebank sentence (:mod:`doc_convert`), and
:mod:`decode` chooses its punctuation by minimum Bayes risk.

Every token of the input counts as a word, even one the tagger calls ``PUNCT``
(the text is assumed unpunctuated; dropping a word the tagger got wrong would
lose text).  Output: the words with the Doc's spacing (one space where it had any), each punctuation
mark attached to the word before it, except opening quotes and brackets, which
attach to the word after them; the abbreviation dot ``ABBR.`` is written ``.``.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple

from spacy_punctgen.data.parsed import as_words
from spacy_punctgen.decode.mbr import SlotChoice, restore_sentences
from spacy_punctgen.model.features import OPEN_TO_CLOSE
from spacy_punctgen.data.preprocess import ABBR, PunctSentence, preprocess_sentence

OPENERS = frozenset(OPEN_TO_CLOSE) - {"``"}  # ``…'' are PTB XPOS names, never surface text


def punctuate(words: Sequence[str], spaces: Sequence[str], slots: Sequence[Sequence[str]]) -> str:
    """Join ``words`` (``spaces[i]`` = the whitespace after word ``i``) with the ``n + 1`` slot
    strings; see the module docstring for where each mark goes."""
    if len(slots) != len(words) + 1:
        raise ValueError(f"{len(slots)} slots for {len(words)} words")
    out: List[str] = []
    for i in range(len(words) + 1):
        before_ws = []  # marks glued to the previous word
        after_ws = []  # marks glued to the next word (an opener and everything after it)
        for mark in slots[i]:
            mark = "." if mark == ABBR else mark
            (after_ws if after_ws or mark in OPENERS else before_ws).append(mark)
        if i == 0:
            out.append("".join(before_ws + after_ws))
        else:
            out.append("".join(before_ws))
            ws = spaces[i - 1]
            if i < len(words):
                out.append(ws if ws or not after_ws else "")
                out.append("".join(after_ws))
            else:  # nothing follows: openers stay where they are, then the trailing space
                out.append("".join(after_ws) + ws)
        if i < len(words):
            out.append(words[i])
    return "".join(out)


def doc_sentences(doc) -> List[Tuple[PunctSentence, List[str]]]:
    """Each sentence of a parsed Doc as a :class:`PunctSentence` (every token a word) and the
    whitespace after each of its words (one space or none)."""
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
            raise ValueError(f"sentence {sent.text!r}: cannot make one word per token ({reason})")
        out.append((ps, [" " if sa else "" for sa in ud.space_after]))
    return out


def restore_docs(model, docs: Iterable, method: str = "slot", n_samples: int = 1000,
                 seed: int = 0) -> List[Tuple[str, List[List[SlotChoice]]]]:
    """Punctuated text of each parsed Doc, with the slot choices of its sentences."""
    docs = list(docs)
    per_doc = [doc_sentences(doc) for doc in docs]
    flat = [ps for sents in per_doc for ps, _ in sents]
    choices = restore_sentences(model, flat, method=method, n_samples=n_samples, seed=seed)
    out, k = [], 0
    for sents in per_doc:
        text, chs = [], []
        for ps, spaces in sents:
            ch = choices[k]
            k += 1
            text.append(punctuate(ps.words, spaces, [c.surface for c in ch]))
            chs.append(ch)
        out.append(("".join(text), chs))
    return out


