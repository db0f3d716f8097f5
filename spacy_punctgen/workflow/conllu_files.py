"""CoNLL-U files read and written whole as ``conllu`` library sentences (every column and
comment kept), for the scripts that rewrite trees: ``parse_conllu.py`` and the jackknife."""
from __future__ import annotations

import os
from pathlib import Path

import conllu


def read_sentences(path: Path) -> list:
    """Every sentence of ``path`` (``conllu.TokenList``, comments in ``.metadata``)."""
    with path.open(encoding="utf-8") as f:
        return list(conllu.parse_incr(f))


def write_sentences(sentences, dest: Path) -> None:
    """Write ``conllu`` sentences to ``dest`` atomically (a temporary file, then a rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as out:
            for sentence in sentences:
                out.write(sentence.serialize())
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
