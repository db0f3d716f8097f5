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

import argparse
import sys
import time
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

from .cli import command
from .conllu_io import UDSentence
from .decode import METHODS, SlotChoice, restore_sentences
from .features import OPEN_TO_CLOSE
from .preprocess import ABBR, PunctSentence, preprocess_sentence

OPENERS = frozenset(OPEN_TO_CLOSE) - {"``"}  # ``…'' are PTB XPOS names, never surface text


def as_words(ud: UDSentence) -> UDSentence:
    """The sentence with every token treated as a word: a parser of unpunctuated text may
    still tag a word ``PUNCT`` or attach it as ``punct``, which must not delete the word."""
    upos = ["X" if u == "PUNCT" else u for u in ud.upos]
    deprels = ["dep" if d.split(":")[0].lower() == "punct" else d for d in ud.deprels]
    return UDSentence(ud.ids, ud.forms, upos, ud.xpos, ud.heads, deprels, ud.space_after, ud.sent_id,
                      ud.text, ud.path, ud.line)


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
    from .doc_convert import check_doc, span_to_ud

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


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", default="-", help="text file, one sentence or paragraph per line "
                                                          "(default: stdin)")
    p.add_argument("--parser", required=True,
                   help="spaCy pipeline (path or package name) with a UD parser trained on depunctuated text")
    p.add_argument("--model", required=True, help="punctuation model directory written by `train`")
    p.add_argument("--method", choices=METHODS, default="slot")
    p.add_argument("--n-samples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", "-o", default=None, help="write the punctuated lines here (default: stdout)")


def _read_lines(src: str) -> List[str]:
    if src == "-":
        return sys.stdin.read().splitlines()
    path = Path(src)
    if not path.is_file():
        raise FileNotFoundError(f"No such input file: {path}")
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err})") from None


def _load_parser(name: str):
    import spacy

    try:
        nlp = spacy.load(name)
    except OSError as err:
        raise ValueError(f"cannot load the spaCy pipeline {name!r}: {err}") from None
    if "parser" not in nlp.pipe_names and not any(getattr(p, "name", "") == "parser" for _, p in nlp.pipeline):
        raise ValueError(f"the spaCy pipeline {name!r} has no dependency parser (pipes: {nlp.pipe_names})")
    return nlp


@command("restore", "Punctuate unpunctuated text: parse it, then decode punctuation by minimum Bayes risk",
         _arguments)
def restore_cli(args) -> dict:
    from .model import PunctModel

    model = PunctModel.from_disk(args.model)
    nlp = _load_parser(args.parser)
    lines = _read_lines(args.input)
    t0 = time.perf_counter()
    idx = [i for i, line in enumerate(lines) if line.strip()]
    docs = list(nlp.pipe([lines[i].strip() for i in idx]))
    restored = restore_docs(model, docs, args.method, args.n_samples, args.seed)
    texts = list(lines)  # blank lines stay blank
    n_sent = 0
    for i, (text, chs) in zip(idx, restored):
        texts[i] = text.rstrip()
        n_sent += len(chs)
    seconds = time.perf_counter() - t0
    result = {"lines": len(lines), "sentences": n_sent, "method": args.method,
              "n_samples": args.n_samples if args.method != "exact" else None,
              "seconds": round(seconds, 3)}
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        result["output"] = str(out)
        result["_text"] = f"wrote {len(texts)} lines ({n_sent} sentences) to {out}"
    else:
        result["texts"] = texts
        result["_text"] = "\n".join(texts)
    return result
