"""Text of any length through a parser + ``punctgen`` pipeline, in bounded memory.

Why: a speech transcript is one long unsegmented stream, and a spaCy pipeline cannot take it
whole: ``nlp.max_length`` (1,000,000 characters) refuses it, and well below that the parser's
memory grows with the Doc (its precomputed hidden layer holds features x hidden x pieces
floats per token: about 12 KB a token for the shipped parser, i.e. > 1 GB for 100,000 words).
So the text is cut into windows of about ``chunk_chars`` characters (at whitespace), each
window is tokenised, tagged and parsed (every component except ``punctgen``), and all of its
sentences but the last are kept; the last one may be cut by the window's end, so the next
window starts where it starts (its words are parsed again, with what follows them). A window
whose parse finds no boundary at all is kept whole (a forced sentence break, so every window
makes progress). Every kept piece is a contiguous slice of the input, so the pieces together
hold every character of the text, in order.

Two ways to use it (both read ``punctgen``'s settings from the pipeline):

* :func:`restore_text` ``(nlp, text)`` -> the punctuated text: ``text`` with marks inserted
  between its whitespace-separated tokens, every character of it kept. It restores each piece
  as soon as it is parsed and keeps only the output string, so memory does not grow with the
  input beyond that string. Each line of the input (a paragraph) is its own stream.
  :func:`iter_restored` yields the output as it goes; :func:`restore_edits` says where each
  mark went; :func:`iter_restored_lines` restores many lines, the short ones in batches.
* :func:`process_long` ``(nlp, text)`` -> one ``Doc`` of the whole text with the pieces' tags,
  trees and sentence boundaries, on which ``punctgen`` then runs once (so
  ``doc._.restored_text``, ``doc._.restored_punct`` or the analysis extensions cover the whole
  text). The Doc grows with the text (a few hundred bytes a token); the parser's memory does
  not. Pipelines from :func:`spacy_punctgen.load` call it from ``nlp(text)`` for texts longer
  than their ``chunk_chars`` (:class:`StreamingLanguage`).

The limits: ``restore_text``, ``restore_edits``, ``iter_restored`` and ``process_long`` take text
of any length. ``nlp(text)`` and ``nlp.pipe`` keep spaCy's ``nlp.max_length`` (a longer str is
refused, E020, as spaCy's own pipelines refuse it, E088): the Doc they return grows with the
text, so a transcript of millions of characters goes through ``restore_text``, or the user
raises ``nlp.max_length``.
"""
from __future__ import annotations

import re
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, TextIO, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from spacy_punctgen.errors import Errors
from spacy_punctgen.formats.insertions import inside_token

#: default window size in characters (about 500-600 English words)
DEFAULT_CHUNK_CHARS = 3000
#: the factory whose components run on the merged Doc rather than on each window
PUNCTGEN_FACTORY = "punctgen"
#: all factories that run there: ``punctgen``, and the truecaser that re-cases its restored text
MERGED_FACTORIES = (PUNCTGEN_FACTORY, "punctgen_truecase")
#: a token after one of these may still start a sentence in a one-sentence input (the text wrote it)
SENTENCE_END_CHARS = frozenset(".?!")


def check_chunk_chars(chunk_chars: int) -> int:
    """``chunk_chars`` as a window size (an int of at least 100 characters; E056 otherwise)."""
    if isinstance(chunk_chars, bool) or not isinstance(chunk_chars, int) or chunk_chars < 100:
        raise ValueError(Errors.E056.format(value=chunk_chars))
    return chunk_chars


def punctgen_names(nlp: Language) -> List[str]:
    """The names of the pipeline's active ``punctgen`` components and truecasers, in pipeline
    order (they run after the merge)."""
    return [name for name in nlp.pipe_names if nlp.get_pipe_meta(name).factory in MERGED_FACTORIES]


def window_end(text: str, start: int, chunk_chars: int) -> int:
    """End of the window that starts at ``start``: the first whitespace at or after
    ``start + chunk_chars`` (the text's end if it is nearer); a run of ``chunk_chars`` characters
    without whitespace (e.g. unsegmented Chinese) is cut where the window is full."""
    end = start + chunk_chars
    if end >= len(text):
        return len(text)
    limit = min(len(text), end + chunk_chars)
    while end < limit and not text[end].isspace():
        end += 1
    return end if end < limit or limit == len(text) else start + chunk_chars


def check_single_words(value) -> int:
    """``value`` as the most words of an input parsed as one sentence (0: none); E054 otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(Errors.E054.format(value=value))
    return value


def is_single_sentence(nlp: Language, text: str) -> bool:
    """Whether ``nlp`` parses ``text`` as one sentence: one line of at most
    ``nlp.punctgen_single_words`` whitespace-separated tokens (0, or a pipeline that is not
    :class:`StreamingLanguage`: never). Why: a short input typed or dictated one sentence at a
    time is one sentence far more often than the stream parser, which cuts 17 % of EWT dev's
    gold sentences, believes; restored as one tree it loses fewer marks (docs/evaluation_streams.md,
    "One sentence at a time")."""
    limit = getattr(nlp, "punctgen_single_words", 0)
    return bool(limit) and "\n" not in text and 0 < len(text.split()) <= limit


def one_sentence(doc: Doc) -> Doc:
    """``doc`` (not yet parsed) with no sentence start after its first token, except after a
    token ending in ``.``, ``?`` or ``!`` that the text already had: the parser then makes one
    tree of the words (it keeps preset boundaries). The Doc is marked
    (``doc._.one_sentence_input``), so that restoration reads the sentence-end expert."""
    from spacy_punctgen.pipeline.extensions import register_extensions

    register_extensions()
    doc._.one_sentence_input = True
    for prev, tok in zip(doc, doc[1:]):
        if not prev.text or prev.text[-1] not in SENTENCE_END_CHARS:
            tok.is_sent_start = False
    return doc


def _parse(nlp: Language, text: str, skip: Sequence[str], single: bool = False) -> Doc:
    # the tokenizer directly: a window is short by construction, whatever nlp.max_length says
    doc = nlp.tokenizer(text)
    if single:
        one_sentence(doc)
    for name, proc in nlp.pipeline:
        if name not in skip:
            doc = proc(doc)
    if any(not t.is_space for t in doc) and not doc.has_annotation("DEP"):  # select_pipes(disable=["parser"])
        raise ValueError(Errors.E001)
    return doc


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(text) -> str:
    """``text`` if it is a str of Unicode text (E057 for another type, E982 for a lone surrogate,
    which no tokenizer or output file can take)."""
    if not isinstance(text, str):
        raise TypeError(Errors.E057.format(type=type(text).__name__))
    found = _SURROGATE.search(text)
    if found:
        raise ValueError(Errors.E982.format(code=ord(found.group()), at=found.start()))
    return text


def iter_pieces_at(nlp: Language, text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                   progress: Optional[TextIO] = None) -> Iterator[Tuple[int, Doc]]:
    """``(offset, piece)``: the parsed pieces of ``text`` (every component except ``punctgen``),
    each the contiguous slice ``text[offset:offset + len(piece.text)]`` ending at a sentence
    boundary (or a forced one), in order; see the module docstring. ``progress``: a stream (e.g.
    ``sys.stderr``) for a one-line progress report once the text has taken more than two seconds."""
    chunk_chars = check_chunk_chars(chunk_chars)
    skip = punctgen_names(nlp)
    start, n = 0, len(text)
    t0 = time.perf_counter()
    shown = False
    single = is_single_sentence(nlp, text) and window_end(text, 0, chunk_chars) == n
    while start < n:
        end = window_end(text, start, chunk_chars)
        doc = _parse(nlp, text[start:end], skip, single)
        cut = len(doc)
        if end < n:
            starts = [s.start for s in doc.sents]
            if len(starts) > 1:
                cut = starts[-1]
        offset = start
        if cut == len(doc):
            piece, start = doc, end
        else:
            piece = doc[:cut].as_doc(copy_user_data=True)
            start += doc[cut].idx
        piece.tensor = piece.tensor[:0] if piece.tensor is not None else piece.tensor
        if progress is not None and time.perf_counter() - t0 > 2.0:
            progress.write(f"\rpunctgen: {start:,} of {n:,} characters ({100.0 * start / n:.0f}%)")
            progress.flush()
            shown = True
        yield offset, piece
    if shown:
        progress.write("\n")
        progress.flush()


def iter_pieces(nlp: Language, text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                progress: Optional[TextIO] = None) -> Iterator[Doc]:
    """The pieces of :func:`iter_pieces_at` without their offsets."""
    for _, piece in iter_pieces_at(nlp, text, chunk_chars, progress):
        yield piece


def process_long(nlp: Language, text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                 progress: Optional[TextIO] = None) -> Doc:
    """One Doc of ``text`` (any length): the pieces of :func:`iter_pieces` joined, then every
    ``punctgen`` component of ``nlp`` run once on the whole Doc."""
    check_text(text)
    pieces = [p for p in iter_pieces(nlp, text, chunk_chars, progress) if len(p)]
    if not pieces:
        doc = nlp.make_doc("")
    else:
        doc = Doc.from_docs(pieces, ensure_whitespace=False, exclude=["tensor", "user_data"])
    del pieces  # the windows' Docs are copied into doc: let them go before punctgen's pass over it
    for name in punctgen_names(nlp):
        doc = nlp.get_pipe(name)(doc)
    return doc


def _restorers(nlp: Language) -> List[str]:
    names = punctgen_names(nlp)
    if not any(nlp.get_pipe(n).cfg.get("mode") == "restore" for n in names if nlp.get_pipe_meta(n).factory
               == PUNCTGEN_FACTORY):
        raise ValueError(Errors.E058.format(pipes=", ".join(nlp.pipe_names)))
    return names


def iter_restored_edits(nlp: Language, text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                        progress: Optional[TextIO] = None) -> Iterator[Tuple[int, int, str, List, List]]:
    """Per piece of one stream, as it is parsed and restored: ``(start, end, source, insertions,
    deletions)``, where ``text[start:end]`` is the piece, ``source`` that slice as the pipeline
    writes it (the slice itself, or re-cased by a truecaser: only case changes) and the edits are
    offsets into the piece. Marks the piece's own restoration put at a forced cut inside a run
    of characters (a window full before any whitespace) are left out, unless the language is
    written without spaces."""
    from spacy_punctgen.pipeline.restore import UNSPACED_LANGS

    names = _restorers(nlp)
    unspaced = nlp.lang in UNSPACED_LANGS
    for offset, piece in iter_pieces_at(nlp, text, chunk_chars, progress):
        end = _piece_end(text, offset, piece)
        if not len(piece):
            yield offset, end, piece.text, [], []
            continue
        for name in names:
            piece = nlp.get_pipe(name)(piece)
        yield (offset, end) + _piece_edits(text, offset, piece, unspaced)


def _piece_end(text: str, offset: int, piece: Doc) -> int:
    """Where ``piece`` ends in ``text`` (E883 if it is not the slice there)."""
    end = offset + len(piece.text)
    if text[offset:end] != piece.text:
        raise ValueError(Errors.E883.format(offset=offset))
    return end


def _piece_edits(text: str, offset: int, piece: Doc, unspaced: bool) -> Tuple[str, List, List]:
    """``(source, insertions, deletions)`` of :func:`iter_restored_edits` for a piece at ``offset``
    of ``text`` that the ``punctgen`` components have restored."""
    edits = piece._.restored_edits or {"insertions": [], "deletions": []}
    cased = getattr(piece._, "truecased_text", None) if piece.has_extension("truecased_text") else None
    source = cased if isinstance(cased, str) and len(cased) == len(piece.text) else piece.text
    ins = [(o, s) for o, s in edits["insertions"] if unspaced or not inside_token(text, offset + o)]
    return source, ins, list(edits["deletions"])


def iter_restored(nlp: Language, text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                  progress: Optional[TextIO] = None) -> Iterator[str]:
    """The restored text of one stream, piece by piece as it is parsed: joined, the strings are
    exactly :func:`restore_text` of ``text`` (no line breaks expected; ``restore_text`` cuts at
    them). ``nlp`` must hold a ``punctgen`` component in restore mode."""
    from spacy_punctgen.pipeline.restore import apply_edits

    pos = 0
    for start, end, source, ins, dels in iter_restored_edits(nlp, text, chunk_chars, progress):
        if start > pos:
            yield text[pos:start]
        yield apply_edits(source, ins, dels)
        pos = end
    if pos < len(text):
        yield text[pos:]


def one_window(text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS) -> bool:
    """Whether :func:`restore_text` takes ``text`` as one piece, parsed whole: one line, not blank,
    of at most ``chunk_chars`` characters."""
    return len(text) <= chunk_chars and "\n" not in text and bool(text.strip())


def _restore_window_batch(nlp: Language, texts: List[str], batch_size: int) -> List[str]:
    """:func:`restore_text` of each of ``texts`` (all :func:`one_window`), the same strings: each
    component's ``pipe`` over the batch, in :func:`iter_pieces_at`'s order (every component but
    the ``punctgen`` ones, a Doc of one sentence where :func:`is_single_sentence`, then those)."""
    from spacy_punctgen.pipeline.restore import UNSPACED_LANGS, apply_edits

    names = _restorers(nlp)
    unspaced = nlp.lang in UNSPACED_LANGS
    docs = [nlp.tokenizer(text) for text in texts]
    for text, doc in zip(texts, docs):
        if is_single_sentence(nlp, text):
            one_sentence(doc)
    for name, proc in nlp.pipeline:
        if name not in names:
            docs = _pipe(proc, docs, batch_size)
    for doc in docs:
        if any(not t.is_space for t in doc) and not doc.has_annotation("DEP"):
            raise ValueError(Errors.E001)
        doc.tensor = doc.tensor[:0] if doc.tensor is not None else doc.tensor
    for text, doc in zip(texts, docs):
        _piece_end(text, 0, doc)
    for name in names:
        docs = _pipe(nlp.get_pipe(name), docs, batch_size)
    return [apply_edits(*_piece_edits(text, 0, doc, unspaced)) if len(doc) else doc.text
            for text, doc in zip(texts, docs)]


def _pipe(proc, docs: List[Doc], batch_size: int) -> List[Doc]:
    """``docs`` through one component, in batches where it has ``pipe``."""
    pipe = getattr(proc, "pipe", None)
    return list(pipe(docs, batch_size=batch_size)) if pipe is not None else [proc(doc) for doc in docs]


#: lines of one window that :func:`iter_restored_lines` restores together
DEFAULT_LINE_BATCH = 256


def iter_restored_lines(nlp: Language, lines: Iterable[str], chunk_chars: int = DEFAULT_CHUNK_CHARS,
                        batch_size: int = DEFAULT_LINE_BATCH, progress: Optional[TextIO] = None
                        ) -> Iterator[Tuple[int, str]]:
    """``(k, piece)``: the restored text of each of ``lines``, piece by piece, lines in order:
    joined, line ``k``'s pieces are :func:`restore_text` of it. Lines of one window
    (:func:`one_window`) are parsed and restored ``batch_size`` at a time, through each
    component's ``pipe`` as ``nlp.pipe`` does (2,000 lines of 5-15 words: 4x faster than one by
    one, the same strings); a longer line streams through :func:`iter_restored`, a blank one is
    itself. ``punctgen restore FILE`` reads its lines with it."""
    chunk_chars = check_chunk_chars(chunk_chars)
    _restorers(nlp)
    pending: List[Tuple[int, str]] = []

    def flush() -> Iterator[Tuple[int, str]]:
        restored = _restore_window_batch(nlp, [line for _, line in pending], batch_size)
        yield from ((k, out) for (k, _), out in zip(pending, restored))
        pending.clear()

    for k, line in enumerate(lines):
        check_text(line)
        if one_window(line, chunk_chars):
            pending.append((k, line))
            if len(pending) >= batch_size:
                yield from flush()
            continue
        yield from flush()
        if "\n" in line:  # several streams: restore_text cuts them
            yield k, restore_text(nlp, line, chunk_chars, progress)
        elif not line.strip():
            yield k, line
        else:
            yield from ((k, piece) for piece in iter_restored(nlp, line, chunk_chars, progress))
    yield from flush()


def restore_text(nlp: Language, text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                 progress: Optional[TextIO] = None) -> str:
    """The punctuated text of ``text`` (any length): ``text`` with marks inserted and nothing
    else changed (every character, whitespace and line break kept; with a truecaser, case
    changes too). Each line is one stream, restored piece by piece (:func:`iter_restored`); a
    line of whitespace only is kept as it is. Memory: one window's parse plus the output string."""
    check_text(text)
    _restorers(nlp)
    return "\n".join("".join(iter_restored(nlp, line, chunk_chars, progress)) if line.strip() else line
                     for line in text.split("\n"))


def restore_edits(nlp: Language, text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                  progress: Optional[TextIO] = None) -> Dict[str, Any]:
    """Where :func:`restore_text` puts each mark: ``insertions`` (``(offset in text, string)``),
    ``deletions`` (``(start, end)``, only with ``repunctuate``) and ``cased`` (``text`` with only
    case changes, or None without a truecaser), so that applying them gives ``restore_text``'s
    output; e.g. for subtitles and word timestamps."""
    check_text(text)
    _restorers(nlp)
    ins: List[Tuple[int, str]] = []
    dels: List[Tuple[int, int]] = []
    cased: List[str] = []
    base = 0
    for line in text.split("\n"):
        pos = 0
        if line.strip():
            for start, end, source, i, d in iter_restored_edits(nlp, line, chunk_chars, progress):
                cased.append(line[pos:start] + source)
                pos = end
                ins.extend((base + start + o, s) for o, s in i)
                dels.extend((base + start + a, base + start + b) for a, b in d)
        cased.append(line[pos:] + "\n")
        base += len(line) + 1
    cased_text = "".join(cased)[:-1]
    return {"insertions": ins, "deletions": dels, "cased": cased_text if cased_text != text else None}


class StreamingLanguage:
    """Mixin for a spaCy ``Language`` class: ``nlp(text)`` and ``nlp.pipe(texts)`` send a text
    longer than ``nlp.punctgen_chunk_chars`` through :func:`process_long` (shorter texts, and
    Docs, take spaCy's ordinary path); a text longer than ``nlp.max_length`` is refused (E020).
    :func:`spacy_punctgen.load` returns such a pipeline; :func:`streaming` makes one from any pipeline."""

    punctgen_chunk_chars: int = DEFAULT_CHUNK_CHARS
    punctgen_progress: Optional[TextIO] = None
    #: inputs of at most this many words are parsed as one sentence (0: never; :func:`is_single_sentence`)
    punctgen_single_words: int = 0

    def _single(self, text):
        """A short one-line ``text`` as a Doc to be parsed as one sentence; anything else as it is."""
        if isinstance(text, str) and len(text) <= self.punctgen_chunk_chars and is_single_sentence(self, text):
            return one_sentence(self.make_doc(text))
        return text

    def _check_length(self, text) -> None:
        """Refuse a str longer than ``nlp.max_length`` (E020), as spaCy's own ``nlp(text)`` and
        ``nlp.pipe`` do (its E088): the Doc grows with the text even when the parser does not.
        Docs pass; :func:`restore_text` and :func:`process_long` take text of any length."""
        if isinstance(text, str) and len(text) > self.max_length:
            raise ValueError(Errors.E020.format(length=len(text), max_length=self.max_length,
                                                chunk_chars=self.punctgen_chunk_chars))

    def create_pipe(self, factory_name: str, name: Optional[str] = None, *, config=None, **kwargs):
        """spaCy's, after E023 for a nan or infinite number in a ``punctgen`` config (spaCy's own
        check, E961, runs before any factory and names no setting)."""
        if factory_name == PUNCTGEN_FACTORY and isinstance(config, dict):
            from spacy_punctgen.pipeline.component import check_finite_settings

            check_finite_settings(config)
        if config is not None:
            kwargs["config"] = config
        return super().create_pipe(factory_name, name, **kwargs)

    def __call__(self, text, *, disable: Iterable[str] = (), component_cfg=None):
        if isinstance(text, str):
            check_text(text)
            self._check_length(text)
        if isinstance(text, str) and len(text) > self.punctgen_chunk_chars and not disable and not component_cfg:
            return process_long(self, text, self.punctgen_chunk_chars, self.punctgen_progress)
        return super().__call__(self._single(text), disable=disable, component_cfg=component_cfg)

    def pipe(self, texts, *, as_tuples: bool = False, batch_size=None, disable=(), component_cfg=None,
             n_process: int = 1):
        if as_tuples:
            for text, context in texts:
                yield self(text, disable=disable, component_cfg=component_cfg), context
            return
        short: List = []
        for text in texts:
            self._check_length(text)
            if isinstance(text, str) and len(text) > self.punctgen_chunk_chars:
                if short:
                    yield from super().pipe(short, batch_size=batch_size, disable=disable,
                                            component_cfg=component_cfg, n_process=n_process)
                    short = []
                yield self(text, disable=disable, component_cfg=component_cfg)
            else:
                short.append(self._single(text) if isinstance(text, str) else text)
        if short:
            yield from super().pipe(short, batch_size=batch_size, disable=disable,
                                    component_cfg=component_cfg, n_process=n_process)


    def __reduce_ex__(self, protocol):
        """Pickle as the ordinary Language class plus the mixin (the class itself is made at run
        time, so pickle could not find it by name; ``nlp.pipe(n_process=2)`` under ``spawn``)."""
        reduced = super().__reduce_ex__(protocol)
        base = next(c for c in type(self).__mro__[1:] if c is not StreamingLanguage and issubclass(c, Language))
        return (_new_streaming, (base,)) + tuple(reduced[2:])


def _new_streaming(base: type):
    cls = _streaming_class(base)
    return cls.__new__(cls)


_CLASSES: dict = {}


def _streaming_class(cls: type) -> type:
    if issubclass(cls, StreamingLanguage):
        return cls
    if cls not in _CLASSES:
        _CLASSES[cls] = type(f"Streaming{cls.__name__}", (StreamingLanguage, cls),
                             {"__module__": __name__})
    return _CLASSES[cls]


def streaming(nlp: Language, chunk_chars: int = DEFAULT_CHUNK_CHARS,
              progress: Optional[TextIO] = None, single_words: int = 0) -> Language:
    """Make ``nlp`` (in place; also returned) take texts longer than a window (up to
    ``nlp.max_length``) in ``nlp(text)`` and ``nlp.pipe``: its class becomes a subclass of its own
    class with :class:`StreamingLanguage` mixed in (``isinstance(nlp, type(old))`` still holds; a pipeline
    saved with ``nlp.to_disk`` loads back as the ordinary class). ``single_words``: a one-line
    input of at most that many words is parsed as one sentence (0: never; :func:`is_single_sentence`)."""
    nlp.__class__ = _streaming_class(type(nlp))
    nlp.punctgen_chunk_chars = check_chunk_chars(chunk_chars)
    nlp.punctgen_progress = progress
    nlp.punctgen_single_words = check_single_words(single_words)
    return nlp
