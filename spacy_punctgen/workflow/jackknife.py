"""Jackknife folds of a CoNLL-U file, and the merge of their parses back into one file
(``scripts/folds.py`` and ``scripts/jackknife.py``; why: see ``scripts/folds.py``).

Sentence ``i`` goes to fold ``i mod k``. :func:`split` writes, for each fold ``j``,
``train.fold<j>.conllu`` (every sentence not in fold ``j``: the fold parser's training data)
and ``heldout.fold<j>.conllu`` (fold ``j``); :func:`merge` reads
``heldout.fold<j>.parsed.conllu`` and writes the parsed sentences back in the input's order,
checking that every sentence's words are unchanged.
"""
from __future__ import annotations

from pathlib import Path

from spacy_punctgen.workflow.conllu_files import read_sentences, write_sentences
from spacy_punctgen.errors import Errors


def _check_k(k: int, n: int, src: Path) -> None:
    if k < 2:
        raise ValueError(Errors.E702.format(k=k))
    if n < k:
        raise ValueError(Errors.E703.format(src=src, n=n, k=k))


def split(src: Path, folder: Path, k: int) -> dict:
    """Write ``train.fold<j>.conllu`` and ``heldout.fold<j>.conllu`` for ``j`` in 0..k-1."""
    sentences = read_sentences(src)
    _check_k(k, len(sentences), src)
    sizes = []
    for j in range(k):
        write_sentences([s for i, s in enumerate(sentences) if i % k != j], folder / f"train.fold{j}.conllu")
        held = [s for i, s in enumerate(sentences) if i % k == j]
        write_sentences(held, folder / f"heldout.fold{j}.conllu")
        sizes.append(len(held))
    return {"input": str(src), "folder": str(folder), "k": k, "n_sentences": len(sentences), "heldout_sizes": sizes}


def _forms(sentence) -> list:
    return [t["form"] for t in sentence if isinstance(t["id"], int)]


def merge(src: Path, folder: Path, dest: Path, k: int) -> dict:
    """The parsed folds back in ``src``'s order; every sentence's words must match ``src``."""
    sentences = read_sentences(src)
    _check_k(k, len(sentences), src)
    parsed = []
    for j in range(k):
        path = folder / f"heldout.fold{j}.parsed.conllu"
        fold = read_sentences(path)
        expected = (len(sentences) - j + k - 1) // k
        if len(fold) != expected:
            raise ValueError(Errors.E704.format(path=path, got=len(fold), j=j, src=src, expected=expected))
        parsed.append(fold)
    out = []
    for i, sentence in enumerate(sentences):
        p = parsed[i % k][i // k]
        if _forms(p) != _forms(sentence):
            raise ValueError(Errors.E705.format(path=f"{folder}/heldout.fold{i % k}.parsed.conllu", i=i // k + 1,
                                                parsed=_forms(p)[:8], j=i + 1, src=src, words=_forms(sentence)[:8]))
        out.append(p)
    write_sentences(out, dest)
    return {"input": str(src), "output": str(dest), "k": k, "n_sentences": len(out)}
