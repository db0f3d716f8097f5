"""``punctgen convert``: write UD trees as plain CoNLL-U for training spaCy parsers.

Why: restoration (docs/model.md §5) parses *unpunctuated* text, so it needs a parser
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

``--protocol dev-as-train`` is for treebanks whose train split is not available
(es_ancora_ud14, ar_padt_ud12, hi_hdtb_ud12pre): a seeded random ``--heldout``
share of the UD *dev* file is the dev set (``--split dev``), the rest of it is the
training set (``--split train``), and test is UD test. The two parts never overlap
and are the same in both modes; ``--fraction`` then applies within the part.

``--protocol cv --cv-folds K --cv-fold J`` is K-fold cross-validation for treebanks
too small to split once (cs_cltt: 467 training sentences): the folder's train, dev and
test files are pooled in that order and cut into K contiguous blocks of sentences
(contiguous, so that a document's neighbouring sentences stay in one block); block ``J``
is the test set, block ``J + 1`` (mod K) the dev set, and the other K - 2 blocks the
training set. Running every J and pooling the test predictions (``scripts/pool_folds.py``)
scores every sentence of the treebank exactly once.
"""
from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import List, Optional, Sequence, TextIO, Union

from spacy_punctgen.data.conllu import UDSentence, read_conllu
from spacy_punctgen.data.preprocess import (
    OMIT_EMPTY, OMIT_NONLEAF, PunctSentence, detect_quote_xpos, is_punct, preprocess_sentence,
)
from spacy_punctgen.errors import Errors

PathLike = Union[str, Path]


def clean_field(value: Optional[str]) -> str:
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
        cols = [str(i + 1), clean_field(ud.forms[i]), "_", clean_field(ud.upos[i]), clean_field(ud.xpos[i]), "_",
                str(ud.heads[i]), clean_field(ud.deprels[i]), "_", misc]
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
        cols = [str(i + 1), clean_field(word), "_", clean_field(ps.upos[i]), clean_field(ps.xpos[i]), "_",
                str(head), clean_field(ps.deprels[i]), "_", "_"]
        out.write("\t".join(cols) + "\n")
    out.write("\n")


def select_fraction(n: int, fraction: float, seed: int) -> List[int]:
    """Sorted indices of ``round(fraction * n)`` sentences (at least one when ``n > 0``)."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(Errors.E514.format(fraction=fraction))
    if fraction == 1.0 or n == 0:
        return list(range(n))
    k = min(n, max(1, round(fraction * n)))
    return sorted(random.Random(seed).sample(range(n), k))


PROTOCOLS = ("standard", "dev-as-train", "cv")
SPLITS = ("train", "dev", "test")


def protocol_part(split: Optional[str], protocol: str) -> tuple:
    """``(file split to read, part)`` for a requested split.

    part is None (the whole file), "rest" / "heldout" (dev-as-train's parts of UD dev), or,
    with ``cv``, the split itself (its blocks of the pooled files; the file split is then None).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(Errors.E515.format(protocols=", ".join(PROTOCOLS), protocol=protocol))
    if protocol == "cv":
        if split not in SPLITS:
            raise ValueError(Errors.E516.format(protocol="cv"))
        return None, split
    if protocol == "standard" or split == "test":
        return split, None
    if split not in ("train", "dev"):
        raise ValueError(Errors.E516.format(protocol="dev-as-train"))
    return "dev", ("rest" if split == "train" else "heldout")


def cv_parts(n: int, folds: int, fold: int) -> dict:
    """``{"train", "dev", "test"}`` -> sorted sentence indices of ``folds``-fold cross-validation.

    Sentence ``i`` is in block ``i * folds // n`` (contiguous blocks whose sizes differ by at
    most one); test = block ``fold``, dev = block ``fold + 1`` (mod ``folds``), train = the rest.
    """
    if folds < 3:
        raise ValueError(Errors.E517.format(folds=folds))
    if not 0 <= fold < folds:
        raise ValueError(Errors.E518.format(last=folds - 1, fold=fold))
    if n < folds:
        raise ValueError(Errors.E519.format(n=n, folds=folds))
    block = [i * folds // n for i in range(n)]
    dev = (fold + 1) % folds
    return {"test": [i for i in range(n) if block[i] == fold],
            "dev": [i for i in range(n) if block[i] == dev],
            "train": [i for i in range(n) if block[i] not in (fold, dev)]}


def heldout_indices(n: int, heldout: float, seed: int) -> List[int]:
    """The held-out share of ``n`` sentences (a seeded sample that differs from ``--fraction``'s)."""
    if not 0.0 < heldout < 1.0:
        raise ValueError(Errors.E520.format(heldout=heldout))
    return sorted(random.Random(f"heldout-{seed}").sample(range(n), min(n - 1, max(1, round(heldout * n)))))


def convert_file(
    src: Union[PathLike, Sequence[PathLike]],
    dest: PathLike,
    depunct: bool = False,
    fraction: float = 1.0,
    seed: int = 0,
    quote_xpos: Optional[bool] = None,
    slots_comment: bool = True,
    part: Optional[str] = None,
    heldout: float = 0.1,
    cv: Optional[tuple] = None,
) -> dict:
    """Convert one CoNLL-U file (or several, pooled in order); return counts. The output is written atomically.

    ``part``: None = every sentence; without ``cv``, "heldout" = the held-out share and
    "rest" = the others; with ``cv = (folds, fold)``, "train" / "dev" / "test" = that
    split's blocks (:func:`cv_parts`).
    """
    sources = [Path(s) for s in ([src] if isinstance(src, (str, Path)) else src)]
    if not sources:
        raise ValueError(Errors.E521)
    dest = Path(dest)
    sentences = [s for path in sources for s in read_conllu(path)]
    pool = list(range(len(sentences)))
    if cv is not None:
        if part not in SPLITS:
            raise ValueError(Errors.E522.format(splits=SPLITS, part=part))
        pool = cv_parts(len(sentences), *cv)[part]
    elif part is not None:
        if part not in ("rest", "heldout"):
            raise ValueError(Errors.E523.format(part=part))
        if len(sentences) < 2:
            raise ValueError(Errors.E524.format(path=sources[0], n=len(sentences)))
        held = heldout_indices(len(sentences), heldout, seed)
        pool = held if part == "heldout" else sorted(set(pool) - set(held))
    chosen = [sentences[pool[i]] for i in select_fraction(len(pool), fraction, seed)]
    if quote_xpos is None:
        quote_xpos = detect_quote_xpos(sources[0], sentences)  # decided on every input sentence
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
                ps, reason = preprocess_sentence(ud, quote_xpos, gold_tags=True)
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
        "input": str(sources[0]) if len(sources) == 1 else [str(p) for p in sources],
        "output": str(dest),
        "mode": "depunct" if depunct else "punct",
        "sentences_in": len(sentences),
        "selected": len(chosen),
        "fraction": fraction,
        "seed": seed,
        "part": part or "all",
        "heldout": heldout if part and cv is None else None,
        **({"cv_folds": cv[0], "cv_fold": cv[1]} if cv is not None else {}),
        "quote_xpos": bool(quote_xpos),
        **counts,
        "omitted": counts["omitted_nonleaf"] + counts["omitted_empty"],
    }


