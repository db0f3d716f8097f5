"""``punctgen convert``: write UD trees as plain CoNLL-U for training spaCy parsers.

Why: restoration (MODEL.md §5) parses *unpunctuated* text, so it needs a parser
trained on the depunctuated trees the model itself sees (:class:`PunctSentence`:
punctuation removed, abbreviation dots split off, arcs projectivised, non-leaf
and all-punctuation sentences omitted). Analysis of punctuated text needs an
ordinary parser, trained on the normal trees. Both are trained with
``spacy convert`` + ``spacy train``, which read CoNLL-U, so this command writes:

* ``--depunct``: one sentence per kept :class:`PunctSentence`: FORM = the
  depunctuated words, UPOS, XPOS, HEAD, DEPREL (lower-case, ``root``) exactly as
  the model sees them; ``# text`` = the words joined by single spaces (no
  ``SpaceAfter=No``: unpunctuated text is space-separated); ``# punct_slots`` =
  the ``n + 1`` surface punctuation sequences as JSON, so the punctuated
  sentence can be recovered from the file.
* default: the normal punctuated basic tree of every sentence (multiword-token
  ranges and empty nodes dropped, ``SpaceAfter=No`` kept, ``# text`` rebuilt
  from the written words so that it matches them).

In both modes LEMMA, FEATS and DEPS are ``_``: only the columns a
tagger/morphologizer/parser learns from are kept (and a morphologizer trained on
empty FEATS learns exactly UPOS; see ``configs/parser.cfg``).

``--fraction F --seed S`` keeps a random ``F`` of the input sentences (chosen over
the *input* sentences, before omissions, so the same ``F``/``S`` picks the same
sentences with and without ``--depunct``), in their original order.
"""
from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path
from typing import List, Optional, Sequence, TextIO, Union

from .cli import command
from .conllu_io import UDSentence, read_conllu, resolve_split
from .preprocess import (
    OMIT_EMPTY, OMIT_NONLEAF, PunctSentence, detect_quote_xpos, is_punct, preprocess_sentence,
)

PathLike = Union[str, Path]


def _clean(value: Optional[str]) -> str:
    """A CoNLL-U field value: never empty, never with tabs or line breaks."""
    if value is None or value == "":
        return "_"
    return " ".join(str(value).split("\n")).replace("\t", " ").replace("\r", " ")


def _comment(key: str, value: Optional[str]) -> str:
    return f"# {key} = {' '.join(str(value).split())}\n" if value else ""


def surface_text(forms: Sequence[str], space_after: Sequence[bool]) -> str:
    """The sentence text implied by the words and their SpaceAfter flags."""
    parts = []
    for i, (form, sa) in enumerate(zip(forms, space_after)):
        parts.append(form)
        if sa and i < len(forms) - 1:
            parts.append(" ")
    return "".join(parts)


def write_punct_sentence(out: TextIO, ud: UDSentence) -> None:
    """The basic tree of one UD sentence (no MWT ranges, no empty nodes)."""
    out.write(_comment("sent_id", ud.sent_id))
    out.write(_comment("text", surface_text(ud.forms, ud.space_after)))
    n = len(ud.forms)
    for i in range(n):
        misc = "_" if ud.space_after[i] or i == n - 1 else "SpaceAfter=No"
        cols = [str(i + 1), _clean(ud.forms[i]), "_", _clean(ud.upos[i]), _clean(ud.xpos[i]), "_",
                str(ud.heads[i]), _clean(ud.deprels[i]), "_", misc]
        out.write("\t".join(cols) + "\n")
    out.write("\n")


def write_depunct_sentence(out: TextIO, ps: PunctSentence, slots_comment: bool = True) -> None:
    """One depunctuated sentence: words, UPOS, XPOS, heads (0 = root), relations."""
    out.write(_comment("sent_id", ps.sent_id))
    out.write(_comment("text", " ".join(ps.words)))
    if slots_comment:
        out.write(f"# punct_slots = {json.dumps([list(s) for s in ps.slots], ensure_ascii=False)}\n")
    for i, word in enumerate(ps.words):
        head = ps.heads[i] + 1  # 0-based with -1 = root  ->  CoNLL-U 1-based with 0 = root
        cols = [str(i + 1), _clean(word), "_", _clean(ps.upos[i]), _clean(ps.xpos[i]), "_",
                str(head), _clean(ps.deprels[i]), "_", "_"]
        out.write("\t".join(cols) + "\n")
    out.write("\n")


def select_fraction(n: int, fraction: float, seed: int) -> List[int]:
    """Sorted indices of ``round(fraction * n)`` sentences (at least one when ``n > 0``)."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"--fraction must be in (0, 1], got {fraction}")
    if fraction == 1.0 or n == 0:
        return list(range(n))
    k = min(n, max(1, round(fraction * n)))
    return sorted(random.Random(seed).sample(range(n), k))


def convert_file(
    src: PathLike,
    dest: PathLike,
    depunct: bool = False,
    fraction: float = 1.0,
    seed: int = 0,
    quote_xpos: Optional[bool] = None,
    slots_comment: bool = True,
) -> dict:
    """Convert one CoNLL-U file; return counts. The output is written atomically."""
    src, dest = Path(src), Path(dest)
    sentences = read_conllu(src)
    chosen = [sentences[i] for i in select_fraction(len(sentences), fraction, seed)]
    if quote_xpos is None:
        quote_xpos = detect_quote_xpos(src, sentences)  # decided on the whole file
    counts = {"written": 0, "omitted_nonleaf": 0, "omitted_empty": 0, "nonprojective": 0,
              "words": 0, "removed_punct": 0}
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as out:
            for ud in chosen:
                if not depunct:
                    write_punct_sentence(out, ud)
                    counts["written"] += 1
                    counts["words"] += len(ud.forms)
                    continue
                ps, reason = preprocess_sentence(ud, quote_xpos)
                if reason == OMIT_NONLEAF:
                    counts["omitted_nonleaf"] += 1
                elif reason == OMIT_EMPTY:
                    counts["omitted_empty"] += 1
                else:
                    write_depunct_sentence(out, ps, slots_comment)
                    counts["written"] += 1
                    counts["words"] += len(ps.words)
                    counts["nonprojective"] += ps.nonprojective
                    counts["removed_punct"] += sum(is_punct(u, d) for u, d in zip(ud.upos, ud.deprels))
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return {
        "input": str(src),
        "output": str(dest),
        "mode": "depunct" if depunct else "punct",
        "sentences_in": len(sentences),
        "selected": len(chosen),
        "fraction": fraction,
        "seed": seed,
        "quote_xpos": bool(quote_xpos),
        **counts,
        "omitted": counts["omitted_nonleaf"] + counts["omitted_empty"],
    }


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="CoNLL-U file, or a UD folder (then give --split)")
    p.add_argument("output", help="CoNLL-U file to write (parent folders are created)")
    p.add_argument("--split", choices=["train", "dev", "test"], default=None,
                   help="with a UD folder as input: convert its *-ud-SPLIT.conllu")
    p.add_argument("--depunct", action="store_true",
                   help="write the depunctuated trees (training data of the parser for unpunctuated text)")
    p.add_argument("--fraction", type=float, default=1.0,
                   help="keep this random fraction of the input sentences (0 < F <= 1)")
    p.add_argument("--seed", type=int, default=0, help="random seed for --fraction")
    p.add_argument("--no-slots-comment", action="store_true",
                   help="with --depunct: omit the '# punct_slots' comment")


@command("convert", "Write UD trees (normal or depunctuated) as plain CoNLL-U for spaCy parser training",
         _arguments)
def convert_cli(args) -> dict:
    src = resolve_split(args.input, args.split)
    result = convert_file(src, args.output, depunct=args.depunct, fraction=args.fraction,
                          seed=args.seed, slots_comment=not args.no_slots_comment)
    omitted = (f" ({result['omitted_nonleaf']} non-leaf and {result['omitted_empty']} empty omitted)"
               if args.depunct else "")
    result["_text"] = (f"{result['input']} -> {result['output']}: {result['written']} of "
                       f"{result['sentences_in']} sentences written as {result['mode']}{omitted}")
    return result

