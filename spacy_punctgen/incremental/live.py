"""Live punctuation: words (or text chunks) in as they arrive, punctuated text out, finalised,
at most ``delay`` words late, never revised.

Why this way: the incremental model decides a word's mark when it consumes the word, but its
beam may still change its mind while the next words come in.  So each arrival re-decodes the
words since the last emitted full stop, with the marks already emitted forced (the beam may
only extend them), and emits the oldest pending words until no more than ``delay`` are pending.
An emitted full stop closes a tree (the proceeding constraint), so later windows start after it
from the empty state, as the model itself goes on after one; only non-full marks are ever
forced, so a legal path always exists.  If no full stop comes for ``max_window`` words the window restarts at
the oldest pending word (the paper's own way of bounding the context).

Text chunks are split on whitespace; a word is complete when whitespace (or the end of the
stream) follows it, so a chunk that ends mid-word holds the word back until it is complete.
The words are emitted as given (the model sees them lowercased), each followed by its mark.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Tuple

from spacy_punctgen.errors import Errors
from spacy_punctgen.incremental.model import IncrementalPunctuator


def check_delay(delay) -> int:
    """``delay`` if it is a whole number of words >= 0 (E931): the live modes' one check."""
    if isinstance(delay, bool) or not isinstance(delay, int) or delay < 0:
        raise ValueError(Errors.E931.format(delay=delay))
    return delay


def complete_words(partial: str, chunk: str, words_in: bool) -> Tuple[List[str], str]:
    """``(words, partial)``: the words ``chunk`` completes, and the start of a word it leaves
    pending (a text chunk that ends mid-word holds the word back until whitespace follows it;
    ``words_in``: every word of the chunk is complete). E932 for a chunk that is not a str."""
    if not isinstance(chunk, str):
        raise TypeError(Errors.E932.format(got=chunk))
    if words_in:
        return chunk.split(), partial
    text = partial + chunk
    new = text.split()
    partial = ""
    if new and not text[-1:].isspace():
        partial = new.pop()
    return new, partial


@dataclass
class Emission:
    """One emitted word: its text with its mark, and when (arrival index of the newest word)."""

    index: int
    word: str
    mark: str
    arrived_at: int  # how many words had arrived when this one did (its own index + 1)
    emitted_at: int  # how many words had arrived when it was emitted
    seconds: float = 0.0  # from its arrival to its emission


@dataclass
class LivePunctuator:
    """The state of one live stream: ``push`` chunks, then ``close``; each returns the text
    finalised by it."""

    model: IncrementalPunctuator
    delay: int = 10
    words_in: bool = False  # True: each pushed item is one word; False: text chunks
    max_window: int = 200
    words: List[str] = field(default_factory=list)
    marks: List[int] = field(default_factory=list)  # emitted marks (classes), one per emitted word
    log: List[Emission] = field(default_factory=list)
    _partial: str = ""
    _window_start: int = 0  # first word after the last emitted full stop (or window restart)
    _arrival: List[float] = field(default_factory=list)

    def __post_init__(self):
        check_delay(self.delay)

    @property
    def n_emitted(self) -> int:
        return len(self.marks)

    def push(self, chunk: str) -> str:
        new, self._partial = complete_words(self._partial, chunk, self.words_in)
        out = []
        for w in new:
            self.words.append(w)
            self._arrival.append(time.perf_counter())
            out.append(self._emit(len(self.words) - self.delay))
        return "".join(out)

    def close(self) -> str:
        """The end of the stream (or a cut, even mid-word): emit everything pending."""
        if self._partial:
            self.words.append(self._partial)
            self._arrival.append(time.perf_counter())
            self._partial = ""
        return self._emit(len(self.words))

    def _emit(self, upto: int) -> str:
        """Emit words until ``upto`` of them are out (at most as many as have arrived): one
        decoding of the window, whose best analysis passes through every full stop it emits
        (after one the analysis goes on from the empty state, as a fresh decoding would)."""
        if upto <= self.n_emitted:
            return ""
        if len(self.words) - self._window_start > self.max_window:
            self._window_start = self.n_emitted
        window = self.words[self._window_start:]
        forced = self.marks[self._window_start:] + [-1] * (len(self.words) - self.n_emitted)
        _, marks = self.model.predict([w.lower() for w in window], forced=forced)
        pieces = []
        now = time.perf_counter()
        full = self.model.labels.is_full
        offset = self._window_start
        while self.n_emitted < upto:
            k = self.n_emitted
            m = marks[k - offset]
            self.marks.append(m)
            mark = self.model.labels.marks[m]
            self.log.append(Emission(k, self.words[k], mark, k + 1, len(self.words), now - self._arrival[k]))
            pieces.append((" " if k else "") + self.words[k] + mark)
            if full[m]:  # a closed tree: the next window starts after it
                self._window_start = k + 1
        return "".join(pieces)


def live(model: IncrementalPunctuator, chunks: Iterable[str], delay: int = 10, words: bool = False,
         max_window: int = 200, state: Optional[LivePunctuator] = None) -> Iterator[str]:
    """Punctuate a stream as it arrives: yield each piece of finalised text (possibly empty
    strings are skipped) as soon as it is final; concatenated they are the whole punctuated
    stream.  ``words``: each item of ``chunks`` is one word (else text chunks, split on
    whitespace).  Pass ``state`` to read the emission log (delays, timings) afterwards."""
    lp = state if state is not None else LivePunctuator(model, delay, words, max_window)
    for chunk in chunks:
        piece = lp.push(chunk)
        if piece:
            yield piece
    piece = lp.close()
    if piece:
        yield piece
