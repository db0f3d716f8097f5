"""Unsegmented, unpunctuated (and partly lowercased) training documents for the stream parser.

Why: real unpunctuated text (speech recognisers, captions) is one long stream with no
sentence boundaries and often no case. A parser trained one depunctuated *sentence* per
document (``convert --depunct`` + ``spacy convert --n-sents 1``, and ``gold_preproc``
training, which splits documents into sentences anyway) never has to find where a
sentence ends. So this module writes *documents*: runs of consecutive depunctuated
sentences (a seeded random length between ``min_sents`` and ``max_sents``), each document
one CoNLL-U block whose words are numbered through the document and whose sentences each
keep their own root (HEAD 0). ``spacy convert --converter conllu --n-sents 1`` turns a
block into one ``Doc`` with several sentences (spaCy marks a sentence start at each
root's left edge), and the parser, trained with ``gold_preproc = false`` so the documents
are kept whole, learns the boundaries of unpunctuated text as part of its transitions.

A seeded share ``lower`` of the documents is lowercased (FORM and ``# text``; tags and trees
unchanged), so the same parser works on ASR-style lowercased streams and on cased text:
the tok2vec's NORM feature is lowercase anyway, but SHAPE/PREFIX/SUFFIX see case, and a
parser that only ever saw cased text leans on capitals to find sentence starts.

The sentences are the depunctuated trees of :mod:`spacy_punctgen.data.convert`
(:func:`~spacy_punctgen.data.preprocess.preprocess_sentence`); sentences it omits (non-leaf
or all-punctuation) are skipped, so a document's sentences are consecutive kept ones. The
same ``protocol``/``part`` selection as ``convert`` applies (``cv`` blocks, dev-as-train's
held-out share), so stream data never crosses the split of the other corpora.

The command line is ``punctgen convert --stream`` (:mod:`spacy_punctgen.cli.convert`).
"""
from __future__ import annotations

import os
import random
from pathlib import Path
from typing import List, Optional, Sequence, TextIO, Tuple, Union

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.convert import SPLITS, clean_field, cv_parts, heldout_indices
from spacy_punctgen.data.preprocess import PunctSentence, detect_quote_xpos, preprocess_sentence
from spacy_punctgen.errors import Errors

PathLike = Union[str, Path]


def document_spans(n: int, min_sents: int, max_sents: int, seed: int) -> List[Tuple[int, int]]:
    """Contiguous ``[start, end)`` spans covering ``range(n)``, each of a seeded random length
    in ``[min_sents, max_sents]`` (the last one may be shorter)."""
    if not 1 <= min_sents <= max_sents:
        raise ValueError(Errors.E535.format(min_sents=min_sents, max_sents=max_sents))
    rng = random.Random(f"stream-docs-{seed}")
    spans, start = [], 0
    while start < n:
        end = min(n, start + rng.randint(min_sents, max_sents))
        spans.append((start, end))
        start = end
    return spans


def lowercase_choices(n_docs: int, share: float, seed: int) -> List[bool]:
    """Which of ``n_docs`` documents are lowercased: exactly ``round(share * n_docs)`` of them,
    a seeded sample."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(Errors.E536.format(share=share))
    chosen = set(random.Random(f"stream-lower-{seed}").sample(range(n_docs), round(share * n_docs)))
    return [i in chosen for i in range(n_docs)]


def write_stream_document(out: TextIO, doc_id: str, sentences: Sequence[PunctSentence],
                          lower: bool = False) -> int:
    """One document as one CoNLL-U block (words numbered through the document, one HEAD 0 per
    sentence); return its number of words."""
    words = [w.lower() if lower else w for ps in sentences for w in ps.words]
    out.write(f"# newdoc id = {doc_id}\n")
    out.write(f"# sent_ids = {' '.join(clean_field(ps.sent_id) for ps in sentences)}\n")
    out.write(f"# text = {' '.join(' '.join(words).split())}\n")
    offset, k = 0, 0
    for ps in sentences:
        for i in range(len(ps.words)):
            head = 0 if ps.heads[i] < 0 else ps.heads[i] + 1 + offset
            cols = [str(offset + i + 1), clean_field(words[k]), "_", clean_field(ps.upos[i]), clean_field(ps.xpos[i]),
                    "_", str(head), clean_field(ps.deprels[i]), "_", "_"]
            out.write("\t".join(cols) + "\n")
            k += 1
        offset += len(ps.words)
    out.write("\n")
    return len(words)


def _select(n: int, part: Optional[str], heldout: float, seed: int, cv: Optional[tuple]) -> List[int]:
    if cv is not None:
        if part not in SPLITS:
            raise ValueError(Errors.E522.format(splits=SPLITS, part=part))
        return cv_parts(n, *cv)[part]
    if part is None:
        return list(range(n))
    if part not in ("rest", "heldout"):
        raise ValueError(Errors.E523.format(part=part))
    held = heldout_indices(n, heldout, seed)
    return held if part == "heldout" else sorted(set(range(n)) - set(held))


def convert_stream_file(
    src: Union[PathLike, Sequence[PathLike]],
    dest: PathLike,
    min_sents: int = 1,
    max_sents: int = 20,
    lower: float = 0.5,
    seed: int = 0,
    part: Optional[str] = None,
    heldout: float = 0.1,
    cv: Optional[tuple] = None,
) -> dict:
    """Write the depunctuated sentences of ``src`` as multi-sentence documents (atomically);
    return counts. ``part``/``heldout``/``cv`` select sentences as
    :func:`spacy_punctgen.data.convert.convert_file` does."""
    sources = [Path(s) for s in ([src] if isinstance(src, (str, Path)) else src)]
    if not sources:
        raise ValueError(Errors.E521)
    sentences = [s for path in sources for s in read_conllu(path)]
    pool = _select(len(sentences), part, heldout, seed, cv)
    quote_xpos = detect_quote_xpos(sources[0], sentences)
    kept: List[PunctSentence] = []
    for i in pool:
        ps, reason = preprocess_sentence(sentences[i], quote_xpos, gold_tags=True)
        if reason is None:
            kept.append(ps)
    if not kept:
        raise ValueError(Errors.E537.format(path=sources[0]))
    spans = document_spans(len(kept), min_sents, max_sents, seed)
    lowered = lowercase_choices(len(spans), lower, seed)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
    n_words = 0
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as out:
            for d, ((start, end), low) in enumerate(zip(spans, lowered)):
                n_words += write_stream_document(out, f"stream-{d}", kept[start:end], low)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return {
        "input": str(sources[0]) if len(sources) == 1 else [str(p) for p in sources],
        "output": str(dest),
        "mode": "stream",
        "sentences_in": len(sentences),
        "sentences": len(kept),
        "omitted": len(pool) - len(kept),
        "documents": len(spans),
        "lowercased": sum(lowered),
        "words": n_words,
        "min_sents": min_sents,
        "max_sents": max_sents,
        "lower": lower,
        "seed": seed,
        "part": part or "all",
    }

