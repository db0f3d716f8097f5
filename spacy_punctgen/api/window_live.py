"""Live punctuation with a restore pipeline (the shipped one, ``spacy_punctgen.load("en")``):
words in as they arrive, punctuated text out, at most ``delay`` words late, never revised.

Why this way: the pipeline restores a whole text at once (parse, then decode every slot), so
live text gets a sliding window: the words not yet emitted, after some already emitted as left
context, *with the marks already emitted written in the text*. Restoration keeps a written mark
and conditions the other slots on it (docs/decoding.md), so the window's left context is the
text as it was emitted, and nothing emitted changes. A gap emitted without a mark is free in the
window (the text cannot say "no mark here"); what restoration puts there is ignored.

The schedule: a restoration runs when the oldest pending word has waited ``delay`` words; it
emits every pending word that has at least ``delay - step + 1`` words after it, so the next
restoration comes ``step`` words later and no word waits longer than ``delay``. ``step``
(default ``max(1, delay // 2)``) bounds the CPU: about one restoration per ``step`` words. The
window starts after the last emitted full stop (``. ? !``) when that is within ``context``
words, else ``context`` emitted words back. While the stream is open, a full stop that
restoration puts after the window's last word is not emitted (the window's end is not the
stream's: only delay 0 emits that word); at ``close`` it is.

What is emitted: each word as given, the marks chosen after it (closing marks) and before the
next word (openers such as an opening quote, emitted with that word), joined by single spaces.
Case is never changed (a truecaser in the pipeline is not used). The window is parsed as part
of a stream: a pipeline's one-sentence rule for short inputs (``load(single_sentence_words=)``)
is off while a window is restored.
"""
from __future__ import annotations

import bisect
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional

from spacy_punctgen.errors import Errors
from spacy_punctgen.incremental.live import Emission, LivePunctuator, check_delay, complete_words
from spacy_punctgen.incremental.live import live as incremental_live
from spacy_punctgen.incremental.model import IncrementalPunctuator

#: a mark that ends a sentence: the window starts after the last one emitted
FULL_STOPS = frozenset(".?!")
#: the default most emitted words of left context in a window
DEFAULT_CONTEXT = 30


@dataclass
class WindowEmission(Emission):
    """An :class:`~spacy_punctgen.incremental.live.Emission` with the marks emitted before the
    word (``opening``: an opening quote or bracket; ``mark`` holds the marks after it)."""

    opening: str = ""


def default_step(delay: int) -> int:
    """Restorations come every ``max(1, delay // 2)`` words by default."""
    return max(1, delay // 2)


def _ends_sentence(marks: str) -> bool:
    return any(ch in FULL_STOPS for ch in marks)


@contextmanager
def _as_stream(nlp):
    """``nlp`` with its one-sentence rule for short inputs off (a window is a piece of a stream);
    the setting is put back afterwards."""
    saved = getattr(nlp, "punctgen_single_words", 0)
    if saved:
        nlp.punctgen_single_words = 0
    try:
        yield nlp
    finally:
        if saved:
            nlp.punctgen_single_words = saved


@dataclass
class WindowLivePunctuator:
    """The state of one live stream over a restore pipeline: ``push`` chunks, then ``close``;
    each returns the text finalised by it (see the module docstring)."""

    nlp: Any
    delay: int = 10
    words_in: bool = False  # True: each pushed item is one word; False: text chunks
    step: Optional[int] = None  # restore every this many words (None: max(1, delay // 2))
    context: int = DEFAULT_CONTEXT
    words: List[str] = field(default_factory=list)
    closing: List[str] = field(default_factory=list)  # per emitted word, the marks after it
    opening: List[str] = field(default_factory=list)  # per emitted word, the marks before it
    log: List[WindowEmission] = field(default_factory=list)
    n_restorations: int = 0
    _partial: str = ""
    _next_opening: Optional[str] = None  # openers chosen for the next word (None: not yet chosen)
    _arrival: List[float] = field(default_factory=list)

    def __post_init__(self):
        check_delay(self.delay)
        if self.step is None:
            self.step = default_step(self.delay)
        for name, value in (("step", self.step), ("context", self.context)):
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name == "step" else 0):
                raise ValueError(Errors.E938.format(name=name, value=value))
        self.step = min(self.step, self.delay + 1)
        if not hasattr(self.nlp, "pipe_names"):
            raise TypeError(Errors.E939.format(kind=type(self.nlp).__name__))
        from spacy_punctgen.api.stream import restore_edits

        restore_edits(self.nlp, "")  # E058 now, not at the first word, for a pipeline that cannot restore

    @property
    def n_emitted(self) -> int:
        return len(self.closing)

    def push(self, chunk: str) -> str:
        new, self._partial = complete_words(self._partial, chunk, self.words_in)
        out = []
        for w in new:
            self.words.append(w)
            self._arrival.append(time.perf_counter())
            if len(self.words) - 1 - self.n_emitted >= self.delay:  # the oldest pending word is due
                out.append(self._emit(len(self.words) - (self.delay - self.step + 1), closed=False))
        return "".join(out)

    def close(self) -> str:
        """The end of the stream (or a cut, even mid-word): emit everything pending."""
        if self._partial:
            self.words.append(self._partial)
            self._arrival.append(time.perf_counter())
            self._partial = ""
        return self._emit(len(self.words), closed=True)

    def _window_start(self) -> int:
        start = max(0, self.n_emitted - self.context)
        for k in range(self.n_emitted - 1, start - 1, -1):
            if _ends_sentence(self.closing[k]):
                return k + 1
        return start

    def _restore(self, start: int) -> tuple:
        """The window from word ``start`` restored: per window word, the marks chosen after it
        and before it (only in gaps the window's text leaves free)."""
        from spacy_punctgen.api.stream import restore_edits

        tokens = []
        for k in range(start, len(self.words)):
            if k < self.n_emitted:
                tokens.append(self.opening[k] + self.words[k] + self.closing[k])
            elif k == self.n_emitted and self._next_opening:
                tokens.append(self._next_opening + self.words[k])
            else:
                tokens.append(self.words[k])
        starts, pos = [], 0
        for tok in tokens:
            starts.append(pos)
            pos += len(tok) + 1
        with _as_stream(self.nlp) as nlp:
            insertions = restore_edits(nlp, " ".join(tokens))["insertions"]
        self.n_restorations += 1
        after: Dict[int, str] = {}
        before: Dict[int, str] = {}
        for offset, marks in insertions:
            i = bisect.bisect_right(starts, offset) - 1
            if offset == starts[i]:
                before[i] = before.get(i, "") + marks
            elif offset == starts[i] + len(tokens[i]):
                after[i] = after.get(i, "") + marks
        return after, before

    def _emit(self, upto: int, closed: bool) -> str:
        """Restore the window once and emit words until ``upto`` of them are out."""
        upto = min(upto, len(self.words))
        if upto <= self.n_emitted:
            return ""
        start = self._window_start()
        after, before = self._restore(start)
        now = time.perf_counter()
        pieces = []
        while self.n_emitted < upto:
            k = self.n_emitted
            i = k - start
            opening = self._next_opening if self._next_opening is not None else before.get(i, "").strip()
            closing = after.get(i, "")
            if k == len(self.words) - 1 and not closed and _ends_sentence(closing):
                closing = ""  # the window's end is not the stream's
            closing = closing.rstrip()
            self.opening.append(opening)
            self.closing.append(closing)
            self._next_opening = before.get(i + 1, "").strip() if k + 1 < len(self.words) else None
            self.log.append(WindowEmission(k, self.words[k], closing, k + 1, len(self.words), now - self._arrival[k],
                                           opening=opening))
            pieces.append((" " if k else "") + opening + self.words[k] + closing)
        return "".join(pieces)


def window_live(nlp, chunks: Iterable[str], delay: int = 10, words: bool = False, step: Optional[int] = None,
                context: int = DEFAULT_CONTEXT, state: Optional[WindowLivePunctuator] = None) -> Iterator[str]:
    """Punctuate a stream as it arrives with a restore pipeline: yield each piece of finalised
    text (empty ones skipped) as soon as it is final; joined they are the whole punctuated
    stream. Pass ``state`` to read the emission log (delays, timings) afterwards."""
    lp = state if state is not None else WindowLivePunctuator(nlp, delay, words, step, context)
    for chunk in chunks:
        piece = lp.push(chunk)
        if piece:
            yield piece
    piece = lp.close()
    if piece:
        yield piece


def live(model, chunks: Iterable[str], delay: int = 10, words: bool = False, max_window: int = 200, state=None, *,
         step: Optional[int] = None, context: int = DEFAULT_CONTEXT) -> Iterator[str]:
    """``spacy_punctgen.live``: punctuation of a stream as it arrives, at most ``delay`` words
    late and never revised, with an incremental model (UPP or CPP:
    :func:`spacy_punctgen.incremental.live.live`, ``max_window``) or a restore pipeline such as
    ``spacy_punctgen.load("en")`` (:func:`window_live`, ``step`` and ``context``)."""
    if isinstance(model, IncrementalPunctuator) or isinstance(state, LivePunctuator):
        return incremental_live(model, chunks, delay, words, max_window, state)
    if not hasattr(model, "pipe_names"):
        raise TypeError(Errors.E939.format(kind=type(model).__name__))
    return window_live(model, chunks, delay, words, step, context, state)
