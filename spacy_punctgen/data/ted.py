"""The IWSLT 2012 TED-talk punctuation file (``word<TAB>label``, one word a line).

Why: the closest data to real transcripts (lowercased, no sentence or talk boundaries), for
evaluating restoration of long streams. Each line is a word and the label of the punctuation
that follows it: ``O`` (none), ``COMMA``, ``PERIOD``, ``QUESTION``. A label is read as the
mark it stands for (:data:`LABEL_MARKS`), so the file's gold is the same kind of object as a
restorer's output: the marks after each word.

The file has a few lines with an empty word (a tab and a label): they are dropped, and their
labels with them (``TedText.n_empty`` says how many). Anything else that is not
``word<TAB>label`` with a known label is an error naming the line (E768).

The file holds no talk boundaries (talks are not marked, and a talk's first words look like any
other words), so :func:`split_blocks` cuts it into two contiguous blocks of words: the first
``train_share`` to train and the rest to evaluate, the cut moved forward to the first sentence
end (a ``PERIOD`` or ``QUESTION``) so the dev block starts a sentence.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Tuple, Union

from spacy_punctgen.errors import Errors

LABEL_MARKS = {"O": "", "COMMA": ",", "PERIOD": ".", "QUESTION": "?"}
SENTENCE_ENDS = frozenset({".", "?"})


@dataclass
class TedText:
    """Words and the marks after each word (``marks[i]`` follows ``words[i]``)."""

    words: List[str]
    marks: List[str]
    n_empty: int = 0

    def __len__(self) -> int:
        return len(self.words)

    def block(self, start: int, end: int) -> "TedText":
        return TedText(self.words[start:end], self.marks[start:end])


def read_ted(path: Union[str, Path]) -> TedText:
    """Read a ``word<TAB>label`` file (see the module docstring)."""
    path = Path(path)
    words: List[str] = []
    marks: List[str] = []
    n_empty = 0
    labels = ", ".join(LABEL_MARKS)
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2 or parts[1] not in LABEL_MARKS or parts[0] != parts[0].strip() \
                    or any(c.isspace() for c in parts[0]):
                raise ValueError(Errors.E768.format(path=path, line=n, labels=labels, text=line[:80]))
            if not parts[0]:
                n_empty += 1
                continue
            words.append(parts[0])
            marks.append(LABEL_MARKS[parts[1]])
    if not words:
        raise ValueError(Errors.E769.format(path=path))
    return TedText(words, marks, n_empty)


def split_blocks(text: TedText, train_share: float = 0.8, path: Union[str, Path] = "<text>"
                 ) -> Tuple[Tuple[int, int], Tuple[int, int]]:
    """``((0, cut), (cut, n))``: the training and dev blocks, contiguous and disjoint; ``cut`` is
    the first word after a sentence end at or after ``train_share`` of the words."""
    if not 0.0 < train_share < 1.0:
        raise ValueError(Errors.E770.format(share=train_share))
    n = len(text)
    cut = max(1, round(train_share * n))
    while cut < n and text.marks[cut - 1] not in SENTENCE_ENDS:
        cut += 1
    if cut >= n:
        raise ValueError(Errors.E771.format(path=path, n=n))
    return (0, cut), (cut, n)
