"""``punctgen adapt``: a restoration model adapted to the user's own punctuated text, in one call.

Why: users have punctuated text of their own domain (subtitles, minutes, earlier transcripts)
and no treebank. The recipe that adapts the model to TED talks (``scripts/ted_punctgen.py
--trees stream``: the 46.3 F1 of the README) needs no treebank either: the words are parsed
*without* their marks by the shipped parser, exactly as restoration will parse them
(:func:`~spacy_punctgen.api.stream_training.stream_training_sentences` with
:func:`~spacy_punctgen.api.load.restore_parser`), the gold marks are put back into the slots of
those trees, and a punctgen model is trained on them with the workflow's tuned recipe
(:data:`RECIPE`). This module makes that a product: any number of files, plain punctuated text
or IWSLT-style ``word<TAB>label``, checked before the work starts, with progress bars and a
record of what was done (``adapt.json``) next to the weights.

Two steps, so that other learners can share the data: :func:`read_adaptation_text` reads the
files into the (words, marks) of their training and dev parts (:class:`AdaptationText`), and
:func:`adapt` parses them and trains.

Plain text is read by :func:`split_punctuated` (see there for the rules); ``word<TAB>label``
files by :func:`spacy_punctgen.data.ted.read_ted`. Words are lowercased by default: restoration
usually sees lowercased recogniser output, the shipped stream parser was trained on partly
lowercased streams, and the TED file the recipe was tuned on is lowercased throughout
(``lowercase=False`` keeps the user's case, for a model that restores cased text).
"""
from __future__ import annotations

import contextlib
import json
import re
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple, Union

from spacy_punctgen.about import __version__
from spacy_punctgen.errors import Errors

PathLike = Union[str, Path]

FORMATS = ("auto", "text", "tsv", "conllu")
#: the record written into the model folder; its presence marks a folder adapt may overwrite
RECORD_FILE = "adapt.json"
LICENSE_FILE = "LICENSE"
#: the training recipe of ``scripts/ted_punctgen.py`` (the workflow's tuned runs); ``epochs`` and
#: ``max_seconds`` are :func:`adapt`'s arguments
RECIPE: Dict[str, Any] = {"direction": "r2l", "lr": 0.001, "sentences_per_epoch": 0,
                          "psi_keep_bias": 3.0, "psi_lr_scale": 10.0}
#: the feature templates of an adapted model: the defaults and the clause-type ones, which let the
#: model see questions (docs/features.md, "Clause type": TED dev block QUESTION F1 4.7 -> 16.9)
CLAUSE_TEMPLATES = ("clause_seq", "clause_start", "clause_end")
#: the lexical expert's weight when no dev text chooses it (the best on the TED training block's dev)
LEXICAL_WEIGHT_WITHOUT_DEV = 1.0

# ------------------------------------------------------------------ plain punctuated text
#: Unicode punctuation that is part of a word, not a mark, even at a word's edge (``50%``,
#: ``#1``, ``AT&T``, ``and/or``, ``§ 3``, ``5′``)
WORD_PUNCT = frozenset("%\u2030\u2031#&@*/\\\u00a7\u00b6\u2020\u2021\u2032\u2033\u2034")
APOSTROPHES = frozenset("'\u2019")
#: runs of one of these are one mark (``...``, ``--``, ``!!``); other marks are one character each
RUN_MARKS = frozenset(".!?-")
#: a word's final dot stays in the word after these (``Mr.``, ``Dr.``), and after a word with a
#: dot inside (``U.S.``, ``e.g.``, ``a.m.``)
TITLES = frozenset({"mr", "mrs", "ms", "dr", "prof", "jr", "sr", "st", "vs"})
#: straight quotes after a word are closing quotes, written as the treebanks' directed ones
#: (``data/preprocess.py`` directs quotes the same way)
CLOSING = {'"': "\u201d", "'": "\u2019"}
#: marks that open a phrase: in a token of punctuation only they belong to the next word, so they
#: are left out like a word's leading marks
OPENING_CATEGORIES = ("Ps", "Pi")
OPENING_EXTRA = frozenset("\u00bf\u00a1")  # ¿ ¡ (Po)


def is_mark(ch: str) -> bool:
    """A character that is punctuation (Unicode category P*) and not :data:`WORD_PUNCT`."""
    return unicodedata.category(ch).startswith("P") and ch not in WORD_PUNCT


def _is_opening(ch: str) -> bool:
    return unicodedata.category(ch) in OPENING_CATEGORIES or ch in OPENING_EXTRA


def _mark_tokens(run: str) -> List[str]:
    """A run of mark characters as mark tokens: runs of one :data:`RUN_MARKS` character together,
    every other character alone, straight quotes closing (``."`` -> ``.`` ``”``)."""
    out: List[str] = []
    for ch in run:
        ch = CLOSING.get(ch, ch)
        if out and ch in RUN_MARKS and out[-1][-1] == ch:
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _edges(token: str) -> Tuple[int, int]:
    """``(i, j)``: ``token[i:j]`` is the word, ``token[:i]`` its leading and ``token[j:]`` its
    trailing marks (``i == j`` for a token of marks only)."""
    n = len(token)
    i = 0
    while i < n and is_mark(token[i]) and not (token[i] in APOSTROPHES and i + 1 < n and token[i + 1].isalnum()):
        i += 1
    j = n
    while j > i and is_mark(token[j - 1]) and not (token[j - 1] in APOSTROPHES and j - 2 >= i
                                                   and token[j - 2].isalnum()):
        j -= 1
    if i < j < n and token[j] == "." and token[j + 1:j + 2] != "." and token[j - 1].isalpha():
        core = token[i:j]
        if "." in core or core.lower() in TITLES:  # an abbreviation keeps its dot
            j += 1
    return i, j


@dataclass
class MarkedWords:
    """Words and the marks after each: ``marks[i]`` follows ``words[i]``, its mark tokens
    separated by single spaces (``""``, ``","``, ``". ”"``): the stream form of
    :func:`~spacy_punctgen.api.stream_training.stream_training_sentences`."""

    words: List[str] = field(default_factory=list)
    marks: List[str] = field(default_factory=list)
    dropped: int = 0  # mark characters left out (text), or TSV lines with no word

    def __len__(self) -> int:
        return len(self.words)

    def block(self, start: int, end: int) -> "MarkedWords":
        return MarkedWords(self.words[start:end], self.marks[start:end])

    def n_marked(self) -> int:
        """How many words are followed by a mark."""
        return sum(1 for m in self.marks if m)


def split_punctuated(text: str, lowercase: bool = True) -> MarkedWords:
    """Punctuated text as words and the marks after each.

    Tokens are the whitespace-separated runs of ``text`` (line and paragraph breaks are
    whitespace too). In each token:

    * trailing punctuation is the marks after the word (``word,`` -> ``word`` + ``","``;
      ``end."`` -> ``end`` + ``". ”"``): a run of ``.``, ``!``, ``?`` or ``-`` is one mark
      (``...``, ``--``), every other character one mark, and a straight quote is written as the
      closing quote ``”`` / ``’``, as the treebanks' directed quotes;
    * leading punctuation (an opening quote or bracket) is **left out** (counted in
      ``dropped``): the training streams give slot 0, before a sentence's first word, no marks,
      so a model adapted this way learns closing marks only;
    * punctuation inside the word stays in it (``e-mail``, ``3.14``, ``don't``), and so do an
      abbreviation's final dot (``U.S.``, ``e.g.``, ``Mr.``: a word with a dot inside or one of
      :data:`TITLES`), apostrophes touching a letter or digit (``'cause``, ``students'``) and the
      punctuation of :data:`WORD_PUNCT` (``50%``, ``AT&T``);
    * a token of punctuation only (``Al-Zaman : American``, a spaced dash) adds its marks to
      the previous word's, except its opening marks (``(``, ``“``), which are left out with the
      next word's leading ones; before the first word, everything is left out.

    ``lowercase``: the words lowercased (the marks are unchanged). Without it, the words followed
    by their marks (spaces removed) are the non-space characters of ``text`` minus the left-out
    marks, with straight closing quotes directed.
    """
    out = MarkedWords()
    for token in text.split():
        i, j = _edges(token)
        if i == j:  # punctuation only: it closes the previous word, its openers open the next
            closing = "".join(ch for ch in token if not _is_opening(ch)) if out.words else ""
            out.dropped += len(token) - len(closing)
            if closing:
                out.marks[-1] = " ".join(filter(None, [out.marks[-1], *_mark_tokens(closing)]))
            continue
        out.dropped += i
        word = token[i:j]
        out.words.append(word.lower() if lowercase else word)
        out.marks.append(" ".join(_mark_tokens(token[j:])))
    return out


# ------------------------------------------------------------------ files
_SENTENCE_END = re.compile(r"[.?!\u2026]+")


def ends_sentence(marks: str) -> bool:
    """Whether the marks after a word hold a full stop, question or exclamation mark."""
    return any(_SENTENCE_END.fullmatch(m) for m in marks.split())


def cut_after_sentence(part: MarkedWords, share: float) -> int:
    """The first word after a sentence end at or after ``share`` of ``part``'s words (at least
    1); ``len(part)`` if there is none: the rule of :func:`spacy_punctgen.data.ted.split_blocks`."""
    n = len(part)
    cut = max(1, round(share * n))
    while cut < n and not ends_sentence(part.marks[cut - 1]):
        cut += 1
    return min(cut, n)


def is_tsv_text(text: str) -> bool:
    """Whether every non-empty line is ``word<TAB>LABEL`` with a label of
    :data:`spacy_punctgen.data.ted.LABEL_MARKS` (and there is at least one)."""
    from spacy_punctgen.data.ted import LABEL_MARKS

    line_re = re.compile(r"[^\s]*\t(?:" + "|".join(map(re.escape, LABEL_MARKS)) + r")")
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(line_re.fullmatch(line.rstrip("\r")) for line in lines)


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(Errors.E984.format(path=path, reason=err.strerror or err)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(Errors.E984.format(
            path=path, reason=f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})")) from None


@dataclass
class AdaptationFile:
    """One input file: what was read, and the parts of it that train and choose the epoch."""

    path: str
    fmt: str          # "text", "tsv" or "conllu"
    words: int        # words in the file
    used: int         # the first ``used`` words were taken (``share``); the rest is never seen
    train: MarkedWords
    dev: MarkedWords
    dropped: int = 0  # leading marks left out (text) or lines with no word (TSV)

    def as_dict(self) -> dict:
        return {"path": self.path, "format": self.fmt, "words": self.words, "used_words": self.used,
                "train_words": len(self.train), "dev_words": len(self.dev),
                "marked_words": self.train.n_marked() + self.dev.n_marked(), "dropped": self.dropped}


@dataclass
class AdaptationText:
    """The (words, marks) adaptation learns from: per file, a training part and a dev part (the
    last ``dev_share`` of the words used, from a sentence start on), in file order. Every learner
    that adapts to the same text takes its data from here."""

    files: List[AdaptationFile]
    lowercase: bool = True

    @property
    def train(self) -> List[MarkedWords]:
        return [f.train for f in self.files]

    @property
    def dev(self) -> List[MarkedWords]:
        return [f.dev for f in self.files if len(f.dev)]

    def n_words(self, part: str) -> int:
        return sum(len(m) for m in getattr(self, part))


def check_settings(fmt: str = "auto", share: float = 1.0, dev_share: float = 0.1, epochs: int = 2,
                   max_seconds: float = 0.0) -> None:
    """Refuse settings out of range (E988) before anything is read."""
    problems = []
    if fmt not in FORMATS:
        problems.append(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if not (isinstance(share, (int, float)) and 0.0 < share <= 1.0):
        problems.append(f"share {share!r} is not in (0, 1]")
    if not (isinstance(dev_share, (int, float)) and 0.0 <= dev_share < 1.0):
        problems.append(f"dev_share {dev_share!r} is not in [0, 1)")
    if not (isinstance(epochs, int) and not isinstance(epochs, bool) and epochs >= 1):
        problems.append(f"epochs {epochs!r} is not an integer of at least 1")
    if not (isinstance(max_seconds, (int, float)) and max_seconds >= 0):
        problems.append(f"max_seconds {max_seconds!r} is negative")
    if problems:
        raise ValueError(Errors.E988.format(problems="; ".join(problems)))


def is_conllu_text(text: str) -> bool:
    """Whether the first line that is not a comment or blank is a CoNLL-U word line (10 fields)."""
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if line.strip() and not line.startswith("#"):
            return len(line.split("\t")) == 10
    return False


def conllu_as_text(path: Path) -> str:
    """A treebank file's sentences as the punctuated text they were written as (each sentence's
    ``# text``, or its tokens with their spacing), a space between sentences and a blank line
    before each new document, for :func:`split_punctuated`."""
    from spacy_punctgen.data.conllu import iter_conllu

    parts: List[str] = []
    for ud in iter_conllu(path):  # E5xx names a malformed line
        text = ud.text or "".join(f + ("" if not sp else " ") for f, sp in zip(ud.forms, ud.space_after))
        parts.append(text.strip())
    return " ".join(p for p in parts if p)


def read_file(path: PathLike, fmt: str = "auto", lowercase: bool = True) -> Tuple[MarkedWords, str]:
    """A file's words and marks, and the format it was read in (``"text"``, ``"tsv"`` or
    ``"conllu"``: a treebank's sentences read as the punctuated text they were written as)."""
    path = Path(path)
    text = _read_text(path)
    kind = fmt if fmt != "auto" else ("tsv" if is_tsv_text(text) else "conllu" if is_conllu_text(text) else "text")
    if kind == "conllu":
        text = conllu_as_text(path)
    if kind == "tsv":
        from spacy_punctgen.data.ted import read_ted

        ted = read_ted(path)  # E768 names a line that is not word<TAB>label
        words = list(ted.words)
        words[0] = words[0].removeprefix("\ufeff") or words[0]  # read_ted keeps a byte-order mark
        part = MarkedWords([w.lower() for w in words] if lowercase else words, list(ted.marks), ted.n_empty)
    else:
        part = split_punctuated(text, lowercase=lowercase)
    if not part.words:
        raise ValueError(Errors.E985.format(path=path))
    return part, kind


def read_adaptation_text(paths: Sequence[PathLike], *, fmt: str = "auto", share: float = 1.0,
                         dev_share: float = 0.1, lowercase: bool = True) -> AdaptationText:
    """Read ``paths`` into the training and dev parts of each file.

    ``share`` < 1: only the first ``share`` of each file's words, the cut moved to the next
    sentence start (a ``word<TAB>label`` file is cut by
    :func:`spacy_punctgen.data.ted.split_blocks`, so ``share=0.8`` is exactly the training block
    of ``punctgen evaluate-stream shipped FILE.tsv --train-share 0.8``). ``dev_share``: the last
    share of those words, from a sentence start on, chooses the epoch (a file too short to have
    a sentence start there is split at the word; ``0``: no dev part).
    Refuses no paths (E983), an unreadable file (E984), a file with no words (E985), training
    parts with no mark at all (E986), a ``share`` that leaves nothing after it (E989) and
    settings out of range (E988)."""
    check_settings(fmt, share, dev_share)
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise ValueError(Errors.E983)
    files: List[AdaptationFile] = []
    for path in paths:
        part, kind = read_file(path, fmt, lowercase)
        n = len(part)
        used = n
        if share < 1.0:
            if kind == "tsv":
                from spacy_punctgen.data.ted import TedText, split_blocks

                (_, used), _ = split_blocks(TedText(part.words, part.marks), share, path)  # E771 if none left
            else:
                used = cut_after_sentence(part, share)
                if used >= n:
                    raise ValueError(Errors.E989.format(path=path, share=share, n=n))
        block = part.block(0, used)
        split = used
        if dev_share > 0:
            split = cut_after_sentence(block, 1.0 - dev_share)
            if split >= used:  # no sentence start in the last dev_share: split at the word
                split = min(used, max(1, round((1.0 - dev_share) * used)))
        files.append(AdaptationFile(str(path), kind, n, used, block.block(0, split), block.block(split, used),
                                    part.dropped))
    if not any(f.train.n_marked() for f in files):
        raise ValueError(Errors.E986.format(paths=", ".join(f.path for f in files)))
    return AdaptationText(files, lowercase)


# ------------------------------------------------------------------ the output folder
def check_output(output: PathLike, force: bool = False) -> Path:
    """Refuse (E987), before any work, an output that is a file, or a non-empty folder that
    ``adapt`` did not write (no ``adapt.json``) unless ``force``."""
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise FileExistsError(Errors.E987.format(path=out, problem="is a file"))
    if out.is_dir() and not force and not (out / RECORD_FILE).is_file() and any(out.iterdir()):
        raise FileExistsError(Errors.E987.format(
            path=out, problem=f"is a folder that holds files and no {RECORD_FILE} (not written by adapt)"))
    for parent in out.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise FileExistsError(Errors.E987.format(path=out, problem=f"{parent} is a file"))
            break
    return out


def license_note(files: Sequence[str], parser: Optional[str]) -> str:
    listed = "\n".join(f"  {f}" for f in files)
    analysed = (f"the parser {parser}" if parser else
                "the shipped English parser (spacy_punctgen/shipped/en_ewt_parser, trained on UD English EWT, "
                "CC BY-SA 4.0)")
    return (f"The punctuation model in this folder was trained by `punctgen adapt` (spacy-punctgen {__version__}) "
            f"on the text of:\n{listed}\n\nIts weights derive from that text and inherit its licence: share "
            f"or publish them only as far as the text's own licence and owners allow. The model was trained "
            f"from scratch on {analysed}'s analyses of that text; restoring with it uses that parser, under "
            f"the parser's own licence.\n")


# ------------------------------------------------------------------ parsing and training
def _stream_of(progress: Union[bool, TextIO, None]) -> Optional[TextIO]:
    if progress is True:
        return sys.stderr
    return None if progress is None or progress is False else progress


def parse_parts(nlp, parts: Sequence[MarkedWords], bar=None, counts=None) -> list:
    """The training sentences of ``parts``: each part parsed as one unpunctuated stream, as
    restoration parses it, with its gold marks put back
    (:func:`~spacy_punctgen.api.stream_training.stream_training_sentences`); ``bar`` (tqdm)
    advances by the words parsed."""
    from spacy_punctgen.api.stream_training import stream_training_sentences

    sents = []
    for part in parts:
        left = len(part)
        for ps in stream_training_sentences(nlp, part.words, part.marks, counts=counts):
            sents.append(ps)
            if bar is not None:
                step = min(left, len(ps.words))
                bar.update(step)
                left -= step
        if bar is not None and left:
            bar.update(left)
    return sents


def load_base_model(base_model: PathLike):
    """The punctgen model a lexical-only adaptation keeps: ``"shipped"`` (the shipped English
    restoration model) or a model folder (E004-style errors name a bad one)."""
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.shipped import restore_model_path

    return PunctModel.from_disk(restore_model_path("en") if str(base_model) == "shipped" else base_model)


def train_lexical(model, train_sents: Sequence, dev_sents: Sequence, stream: Optional[TextIO] = None,
                  buckets: Optional[int] = None) -> dict:
    """Train the lexical expert on the sentences' words and gold marks, choose its weight on the
    dev sentences (text order), and attach it to ``model`` unless the weight chosen is 0; the
    record of what was done."""
    from tqdm import tqdm

    from spacy_punctgen.evaluation.lexical import choose_lexical_weight
    from spacy_punctgen.model.lexical import LexicalExpert, sentence_streams

    def bar(epochs):
        return tqdm(epochs, desc="lexical expert", unit="epoch", file=stream or sys.stderr,
                    disable=stream is None, leave=False, dynamic_ncols=True)

    sizes = {} if buckets is None else {"length": buckets}
    expert, info = LexicalExpert.fit(sentence_streams(train_sents), sentence_streams(dev_sents), progress=bar, **sizes)
    if dev_sents:
        weight, table = choose_lexical_weight(model, expert, dev_sents)
    else:
        weight, table = LEXICAL_WEIGHT_WITHOUT_DEV, []
    expert.weight = weight
    model.lexical = expert if weight > 0 else None
    return {"weight": weight, "kept": weight > 0, "dev_table": table,
            "best_dev_log_loss": info["best_dev_log_loss"], "train_gaps": info["train_gaps"],
            "history": info["history"]}


def adapt(paths: Sequence[PathLike], output: PathLike, *, fmt: str = "auto", share: float = 1.0,
          dev_share: float = 0.1, epochs: int = 2, max_seconds: float = 0.0, parser: Optional[PathLike] = None,
          lowercase: bool = True, force: bool = False, progress: Union[bool, TextIO, None] = None,
          templates: Optional[Sequence[str]] = None, lexical: bool = True,
          dev_paths: Optional[Sequence[PathLike]] = None, base_model: Optional[PathLike] = None,
          lexical_buckets: Optional[int] = None) -> dict:
    """Train a restoration model on the punctuated text of ``paths`` and write it to ``output``.

    The text is read by :func:`read_adaptation_text` (``fmt``, ``share``, ``dev_share``,
    ``lowercase``), each part parsed without its marks by ``parser`` (default: the shipped
    English parser) as restoration parses, and the model trained by
    :func:`~spacy_punctgen.training.train.train_model` with :data:`RECIPE` for ``epochs`` epochs
    (``max_seconds`` > 0: no epoch that would end past it), the epoch with the best dev
    perplexity kept; ``templates``: its feature templates (None: the defaults and
    :data:`CLAUSE_TEMPLATES`). With ``lexical`` a lexical expert is trained on the same text
    (:class:`~spacy_punctgen.model.lexical.LexicalExpert`) and its weight in restoration chosen on
    the dev text (:func:`~spacy_punctgen.evaluation.lexical.choose_lexical_weight`; without dev
    text :data:`LEXICAL_WEIGHT_WITHOUT_DEV`); it is saved with the model, or left out when the
    chosen weight is 0. ``output`` gets the model (``spacy_punctgen.load("en", model=output)``,
    ``punctgen restore --model output``), ``adapt.json`` (the returned record) and a
    ``LICENSE`` note. ``progress``: True or a stream shows progress bars (stderr for True).
    ``dev_paths``: files read whole as the dev text (then ``dev_share`` is not used). ``base_model``:
    a punctgen model folder, or ``"shipped"`` for the shipped restoration model, that is kept as it
    is: only the lexical expert is trained (the text's parse then serves the expert's weight).
    ``lexical_buckets``: the expert's hash buckets per class (None: its default; fewer make a
    smaller, slightly weaker expert, e.g. 2**18 for the one shipped).
    The output is checked first (E987; ``force`` overwrites a folder adapt did not write)."""
    t0 = time.perf_counter()
    check_settings(fmt, share, dev_share, epochs, max_seconds)
    out = check_output(output, force)
    if base_model is not None and not lexical:
        raise ValueError(Errors.E988.format(problems="a base model keeps its punctuation model, so only the lexical "
                                                     "expert is trained: lexical must be on"))
    text = read_adaptation_text(paths, fmt=fmt, share=share, dev_share=0.0 if dev_paths else dev_share,
                                lowercase=lowercase)
    if dev_paths:
        held = read_adaptation_text(dev_paths, fmt=fmt, dev_share=0.0, lowercase=lowercase)
        for f in held.files:  # the whole file is dev text
            f.train, f.dev = f.train.block(0, 0), f.train
        text.files.extend(held.files)
    t_read = time.perf_counter() - t0

    from tqdm import tqdm

    from spacy_punctgen.api.load import restore_parser
    from spacy_punctgen.api.stream_training import AlignmentCounts
    from spacy_punctgen.training.train import TrainConfig, train_model

    stream = _stream_of(progress)
    nlp = restore_parser("en", parser)
    t1 = time.perf_counter()
    counts = {"train": AlignmentCounts(), "dev": AlignmentCounts()}
    n_words = text.n_words("train") + text.n_words("dev")
    with tqdm(total=n_words, desc="parsing", unit="word", file=stream or sys.stderr, disable=stream is None,
              leave=False, dynamic_ncols=True) as bar:
        train_sents = parse_parts(nlp, text.train, bar, counts["train"])
        dev_sents = parse_parts(nlp, text.dev, bar, counts["dev"])
    t_parse = time.perf_counter() - t1

    from spacy_punctgen.features.templates import DEFAULT_TEMPLATES

    templates = list(templates) if templates is not None else list(DEFAULT_TEMPLATES) + list(CLAUSE_TEMPLATES)
    cfg = TrainConfig(epochs=epochs, max_seconds=max_seconds, progress=stream is not None, templates=templates,
                      **RECIPE)
    t2 = time.perf_counter()
    if base_model is not None:
        model, info = load_base_model(base_model), None
        templates = list(model.feature_config.templates)
    else:
        redirect = (contextlib.redirect_stderr(stream) if stream is not None and stream is not sys.stderr
                    else contextlib.nullcontext())
        with redirect:  # train_model's bars write to sys.stderr
            model, info = train_model(train_sents, dev_sents, cfg)
    t_train = time.perf_counter() - t2
    t3 = time.perf_counter()
    lexical_record = train_lexical(model, train_sents, dev_sents, stream, lexical_buckets) if lexical else None
    t_lexical = time.perf_counter() - t3
    out.mkdir(parents=True, exist_ok=True)
    model.to_disk(out)
    record = {
        "spacy_punctgen_version": __version__,
        "output": str(out),
        "files": [f.as_dict() for f in text.files],
        "words": {"train": text.n_words("train"), "dev": text.n_words("dev")},
        "sentences": {"train": len(train_sents), "dev": len(dev_sents)},
        "alignment": {k: c.as_dict() for k, c in counts.items()},
        "seconds": {"read": round(t_read, 1), "load_parser": round(t1 - t0 - t_read, 1), "parse": round(t_parse, 1),
                    "train": round(t_train, 1), "lexical": round(t_lexical, 1),
                    "total": round(time.perf_counter() - t0, 1)},
        "settings": {"format": fmt, "share": share, "dev_share": dev_share, "epochs": epochs,
                     "max_seconds": max_seconds, "lowercase": lowercase,
                     "parser": str(parser) if parser is not None else "shipped", "templates": templates,
                     "lexical": lexical, "lexical_buckets": lexical_buckets, **RECIPE},
        "training": None if info is None else {
            "best_epoch": info["best_epoch"], "dev_perplexity_per_slot": info["dev_perplexity_per_slot"],
            "epochs_run": len(next(iter(info["history"].values()), [])),
            "n_features": info["n_features"], "direction": info["direction"]},
        "base_model": None if base_model is None else str(base_model),
        "lexical": lexical_record,
    }
    (out / RECORD_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / LICENSE_FILE).write_text(license_note([f.path for f in text.files],
                                                 str(parser) if parser is not None else None), encoding="utf-8")
    return record


__all__ = ["AdaptationFile", "AdaptationText", "MarkedWords", "adapt", "check_output", "check_settings",
           "cut_after_sentence", "ends_sentence", "is_mark", "is_tsv_text", "read_adaptation_text", "read_file",
           "split_punctuated", "RECIPE", "RECORD_FILE", "LICENSE_FILE"]
