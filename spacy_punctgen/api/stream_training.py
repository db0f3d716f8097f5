"""Training sentences for restoring streams: the parser's own analysis of the unpunctuated
stream, with the gold marks put back into its slots.

Why: at restoration time the punctuation model sees the trees and sentence boundaries that
the stream parser finds in *unpunctuated* text (:func:`spacy_punctgen.api.stream.iter_pieces`).
A model trained on trees of punctuated text (where the marks tell the parser where sentences
end) only ever saw a full stop at the end of a tree, so wherever the stream parser misses a
boundary it cannot put one. Trained on the stream parser's analysis of the depunctuated
training text, with each gold mark in the slot after the word it follows, the model learns
how the marks fall on *those* trees: a full stop inside a tree the parser failed to split, no
full stop where it split wrongly. This is the jackknifing of the workflow (train on the
parses the test will see) for a parser that never saw the training text, e.g. the shipped
English parser on TED talks.

Alignment: the stream is the words joined by single spaces; each token of a parsed piece is
mapped, by its character offset, back to the input word it lies in. The marks that follow an
input word go into the slot after that word's last word token in its sentence (so a word the
tokenizer splits, ``e-mail`` -> ``e - mail``, gets them once, after ``mail``). Slot 0 stays
empty: the streams this is for have no opening marks. Every mark of the input lands in exactly
one slot unless the word it follows yields no word token at all (a word the tokenizer reads as
punctuation only); :func:`stream_training_sentences` counts those.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Iterator, List, Optional, Sequence, TextIO, Tuple

from spacy.language import Language

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors
from spacy_punctgen.pipeline.doc_convert import punct_sentences
from spacy_punctgen.api.stream import DEFAULT_CHUNK_CHARS, iter_pieces


@dataclass
class AlignmentCounts:
    """What :func:`stream_training_sentences` did with the input's marks."""

    words: int = 0
    marks: int = 0          # input words followed by a mark
    placed: int = 0         # of those, put into a slot
    sentences: int = 0
    final_marked: int = 0   # sentences whose final slot holds a mark

    def as_dict(self) -> dict:
        return {"words": self.words, "marks": self.marks, "placed": self.placed,
                "unplaced": self.marks - self.placed, "sentences": self.sentences,
                "final_marked": self.final_marked}


def _check_stream(words: Sequence[str], marks: Sequence[str]) -> None:
    if len(words) != len(marks):
        raise ValueError(Errors.E880.format(n_words=len(words), n_marks=len(marks)))
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w.strip():
            raise ValueError(Errors.E881.format(index=i, word=w))
    for i, m in enumerate(marks):
        if not isinstance(m, str):
            raise ValueError(Errors.E882.format(index=i, mark=m))


def stream_training_sentences(nlp: Language, words: Sequence[str], marks: Sequence[str],
                              chunk_chars: int = DEFAULT_CHUNK_CHARS, progress: Optional[TextIO] = None,
                              counts: Optional[AlignmentCounts] = None) -> Iterator[PunctSentence]:
    """The sentences ``nlp`` (a parser of unpunctuated text, no ``punctgen`` needed) finds in the
    stream ``" ".join(words)``, each with the gold marks in its slots: ``marks[i]`` follows
    ``words[i]``, the marks separated by spaces (``""`` none, ``","``, ``"?"``, ``". ”"``; the
    form of :func:`spacy_punctgen.evaluation.stream.sentence_streams`' gold gaps).
    ``counts`` (optional) is filled as the sentences are yielded."""
    _check_stream(words, marks)
    counts = counts if counts is not None else AlignmentCounts()
    counts.words += len(words)
    counts.marks += sum(1 for m in marks if m.strip())
    starts: List[int] = []
    pos = 0
    for w in words:
        starts.append(pos)
        pos += len(w) + 1
    text = " ".join(words)
    offset = 0
    for piece in iter_pieces(nlp, text, chunk_chars, progress):
        if text[offset:offset + len(piece.text)] != piece.text:  # pieces are contiguous slices
            raise RuntimeError(Errors.E883.format(offset=offset))
        sentences = []
        last_token_of_word = {}
        for _, ps, toks in punct_sentences(piece):
            if ps is None:
                continue
            owners = [bisect_right(starts, offset + piece[t].idx) - 1 for t in toks]
            sentences.append((ps, owners))
            for k, j in enumerate(owners):
                last_token_of_word[j] = (len(sentences) - 1, k)
        for s, (ps, owners) in enumerate(sentences):
            slots: List[Tuple[str, ...]] = [()] * (len(ps.words) + 1)
            for k, j in enumerate(owners):
                if marks[j].strip() and last_token_of_word[j] == (s, k):
                    slots[k + 1] = tuple(marks[j].split())
                    counts.placed += 1
            counts.sentences += 1
            counts.final_marked += bool(slots[-1])
            yield replace(ps, slots=slots)
        offset += len(piece.text)
    if offset != len(text):
        raise RuntimeError(Errors.E883.format(offset=offset))
