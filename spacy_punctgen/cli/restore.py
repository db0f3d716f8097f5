"""``punctgen restore``: argument parsing and printing; the work is done by
:mod:`spacy_punctgen.api.stream` (the shipped pipeline) or :mod:`spacy_punctgen.pipeline.restore`
(a parser of the user's).

Without ``--parser`` the text goes through the pipeline that ships for ``--lang``
(:func:`spacy_punctgen.load`, with ``--model`` in place of the shipped punctuation model if
given): each input line is one stream of any length, parsed and restored in windows of a few
thousand characters (:func:`~spacy_punctgen.api.stream.iter_restored_lines`), so memory does not
grow with the length of a line (only with its vocabulary, and the output text); lines that fit
one window go through the pipeline many at a time (the output is the same as one by one,
:func:`~spacy_punctgen.api.stream.restore_text` of each line). With ``--parser`` each line is
parsed whole by that pipeline (as one text; a line longer than its ``nlp.max_length``, spaCy's
default 1,000,000 characters, is refused before anything is parsed, E631) and restored by
a ``punctgen`` component added to it (with ``punctgen_words``), with ``--model`` or the model
shipped for ``--lang``, marks inserted into the line. ``--truecase`` (the truecaser shipped for ``--lang``) or ``--truecaser PATH`` adds a
truecaser after ``punctgen`` (``load(truecase=...)``), which capitalises the restored text.

``--scheduler ADDRESS`` restores on a Dask cluster instead (:mod:`spacy_punctgen.api.distributed`,
docs/distributed.md): the lines are cut into partitions (``--partitions N``; by default a few per
worker thread, at most 32 lines each), each worker loads the shipped pipeline once, and the
output is the same, line for line and in input order, as without ``--scheduler``. ADDRESS is a
scheduler's ``tcp://HOST:PORT``, or ``local:N`` for N worker processes on this machine.

The input is read as UTF-8, whole; lines are cut at ``\\n`` only. The output is the input with
marks inserted and nothing else changed: every character, line break, blank line, ``\\r`` and
byte-order mark stays (``-o -`` writes to stdout). A progress bar on stderr appears once the
text has taken two seconds, when stderr is a terminal or with ``--progress``.
"""
from __future__ import annotations
import argparse
import sys
import time
from pathlib import Path
from typing import List

from spacy_punctgen.cli import check_output_file, command, emit_text, positive_float, positive_int, seed_int
from spacy_punctgen.decode.mbr import METHODS
from spacy_punctgen.errors import Errors
from spacy_punctgen.formats.restore import FILE_FORMATS, detect_format

#: seconds before the progress bar appears (short inputs never show one)
PROGRESS_DELAY = 2.0


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", default="-", help="text file: one transcript or paragraph per line, of any "
                                                          "length (default: stdin)")
    p.add_argument("--lang", default="en",
                   help="language of the shipped parser and punctuation model used where --parser / --model are "
                        "not given (default: en)")
    p.add_argument("--parser", default=None,
                   help="spaCy pipeline (path or package name) with a UD parser trained on depunctuated text; each "
                        "line is then parsed whole (default: the shipped parser, which reads lines in windows)")
    p.add_argument("--model", default=None,
                   help="punctuation model directory written by `train` (default: the one shipped for --lang)")
    p.add_argument("--lexical", action="store_true",
                   help="also weigh what the words say, with the lexical expert shipped beside the model (more "
                        "accurate on streams, slower: docs/decoding.md)")
    p.add_argument("--method", choices=METHODS, default="marginal")
    p.add_argument("--empty-weight", type=positive_float, default=1.0,
                   help="the empty string's weight in the risk: 1 minimises the expected edit distance; "
                        "below 1 inserts more marks (recall for precision; docs/evaluation_streams.md)")
    p.add_argument("--n-samples", type=positive_int, default=1000)
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--output", "-o", default=None, help="write the punctuated lines here (default: stdout)")
    p.add_argument("--truecase", action="store_true",
                   help="capitalise the output with the truecaser shipped for --lang (without --parser)")
    p.add_argument("--truecaser", default=None,
                   help="capitalise the output with this truecaser pipeline (workflow train-truecaser; "
                        "without --parser)")
    p.add_argument("--progress", action="store_true",
                   help="show the progress bar on stderr even when it is not a terminal")
    p.add_argument("--max-length", type=positive_int, default=None,
                   help="with --parser: longest line in characters (sets the parser's nlp.max_length; default: "
                        "the pipeline's, 1,000,000 for spaCy's defaults). Parsing and restoring one long line "
                        "is slow and memory-hungry (a million characters: minutes and several GB); "
                        "splitting the text into sentences or paragraphs, one per line, is better")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="restore on a Dask cluster: its scheduler's address (tcp://HOST:PORT), or local:N for N "
                        "worker processes on this machine; needs the 'distributed' extra. Same output, in input "
                        "order (docs/distributed.md)")
    p.add_argument("--partitions", type=positive_int, default=None,
                   help="with --scheduler: cut the lines into this many partitions (tasks) of near-equal line "
                        "counts (default: a few per worker thread, at most 32 lines each)")
    p.add_argument("--format", choices=FILE_FORMATS, default=None,
                   help="the input's format: text (lines), srt, vtt or json (a speech recogniser's words with times); "
                        "default: by the file's extension. Subtitles are punctuated across cues, every cue's number, "
                        "timing and line breaks kept; word JSON gets each word's marks appended to it")
    p.add_argument("--repunctuate", action="store_true",
                   help="delete the marks already at the edges of the text's tokens and punctuate afresh (the only "
                        "case in which characters of the input are removed, and only marks)")
    p.add_argument("--live", default=None, metavar="MODEL",
                   help="punctuate standard input as it arrives, line by line, with this incremental model (UPP or "
                        "CPP, trained by experiments/paper003), or 'shipped': the shipped pipeline (--lang, --model) "
                        "restoring a sliding window; each word is written, with its marks, at most --delay words "
                        "after it arrived, and never revised")
    p.add_argument("--delay", type=int, default=10,
                   help="with --live: the most words a word waits before it is written (default: 10)")
    p.add_argument("--live-step", type=positive_int, default=None, metavar="N",
                   help="with --live shipped: restore the window every N words (default: delay // 2, at least 1); "
                        "fewer restorations, less CPU, but the words written together see less of what follows")
    p.add_argument("--connect-timeout", type=positive_float, default=10.0, metavar="SECONDS",
                   help="with --scheduler: seconds to wait for the scheduler to answer (default: 10)")


def read_text(src: str) -> str:
    """The whole input as UTF-8 text, exactly (a byte-order mark included: the output keeps it)."""
    if src == "-":
        raw = getattr(sys.stdin, "buffer", None)
        if raw is None:  # a text stream put in place of stdin
            return sys.stdin.read()
        try:
            return raw.read().decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(Errors.E619.format(path="<stdin>", err=err)) from None
    path = Path(src)
    if path.is_dir():
        raise IsADirectoryError(Errors.E626.format(flag="input", path=path))
    if not path.exists():
        raise FileNotFoundError(Errors.E618.format(path=path))
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(Errors.E619.format(path=path, err=err)) from None


def _split_lines(text: str) -> tuple:
    """The byte-order mark and the lines of ``text``, cut at ``\\n`` only (``\\r``, form feeds
    and other separators stay inside their line, as whitespace)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    return bom, text[len(bom):].split("\n")


def read_lines(src: str) -> List[str]:
    """The input's lines for a line-by-line command (``correct``): cut at ``\\n`` only, a
    byte-order mark, a ``\\r`` before the ``\\n`` and the empty string after a final newline
    dropped."""
    lines = _split_lines(read_text(src))[1]
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _check_lengths(lines: List[str], limit: int, src: str) -> None:
    """Refuse, before parsing, a line longer than the parser takes (spaCy's E088 otherwise)."""
    for k, line in enumerate(lines, 1):
        n = len(line.strip())
        if n > limit:
            raise ValueError(Errors.E631.format(path="<stdin>" if src == "-" else src, line=k, n=n,
                                                limit=limit))


def load_parser_pipeline(name: str):
    from spacy_punctgen.api.load import read_pipeline

    try:
        nlp = read_pipeline(name)  # a damaged file of a saved folder named (E022)
    except OSError as err:
        raise ValueError(Errors.E620.format(name=name, err=err)) from None
    if "parser" not in nlp.pipe_names and not any(getattr(p, "name", "") == "parser" for _, p in nlp.pipeline):
        raise ValueError(Errors.E621.format(name=name, pipes=nlp.pipe_names))
    return nlp


def _progress_bar(args, total: int, unit: str):
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc="punctgen restore", file=sys.stderr, delay=PROGRESS_DELAY,
                disable=not (args.progress or sys.stderr.isatty()), leave=False, dynamic_ncols=True)


def _n_words(text: str) -> int:
    """Whitespace-separated tokens with a letter or digit: the same count before and after
    restoration (marks attach to words or stand alone), so it measures progress."""
    return sum(1 for tok in text.split() if any(ch.isalnum() for ch in tok))


def _restore_shipped(args, lines: List[str]) -> tuple:
    """Each line through the shipped pipeline (:func:`~spacy_punctgen.api.stream.iter_restored_lines`:
    short lines many at a time, long ones in windows); returns the lines and a summary."""
    from spacy_punctgen.api.load import load
    from spacy_punctgen.api.stream import iter_restored_lines

    if args.model is not None and not Path(args.model).is_dir():
        raise FileNotFoundError(Errors.E606.format(path=args.model))
    if args.truecaser is not None and not Path(args.truecaser).is_dir():
        raise FileNotFoundError(Errors.E636.format(path=args.truecaser))
    nlp = load(args.lang, model=args.model, truecase=args.truecaser or args.truecase,
               config=_punctgen_config(args))
    counts = [_n_words(line) for line in lines]
    pieces: List[List[str]] = [[] for _ in lines]
    done = [0] * len(lines)
    with _progress_bar(args, sum(counts), "word") as bar:
        for k, piece in iter_restored_lines(nlp, lines):
            pieces[k].append(piece)
            step = min(_n_words(piece), counts[k] - done[k])
            done[k] += step
            bar.update(step)
        bar.update(sum(counts) - sum(done))
    texts = ["".join(p) for p in pieces]
    return texts, {"parser": "shipped", "words": sum(len(line.split()) for line in lines)}


def _restore_distributed(args, lines: list[str]) -> tuple:
    """The lines restored on the Dask cluster of ``--scheduler``, as :func:`_restore_shipped`
    restores them here (each line one text, in input order)."""
    from spacy_punctgen.api.distributed import iter_texts, require_distributed

    if args.model is not None and not Path(args.model).is_dir():
        raise FileNotFoundError(Errors.E606.format(path=args.model))
    if args.truecaser is not None and not Path(args.truecaser).is_dir():
        raise FileNotFoundError(Errors.E636.format(path=args.truecaser))
    try:
        require_distributed()
    except ImportError as err:  # a refusal of this command, like any other
        raise ValueError(str(err)) from None
    info: dict = {}
    counts = [_n_words(line) for line in lines]
    texts = []
    results = iter_texts(lines, args.scheduler, lang=args.lang, model=args.model,
                         truecase=args.truecaser or args.truecase,
                         config=_punctgen_config(args),
                         partitions=args.partitions, timeout=args.connect_timeout, info=info)
    with _progress_bar(args, sum(counts), "word") as bar:
        for text in results:  # to the end: the cluster is released and info filled in
            bar.update(counts[len(texts)])
            texts.append(text)
    return texts, {"parser": "shipped", "words": sum(len(line.split()) for line in lines),
                   "scheduler": args.scheduler, "workers": info.get("workers"), "partitions": info.get("partitions")}


def _punctgen_config(args) -> dict:
    """The ``punctgen`` settings the command's flags give (shipped, ``--parser`` and distributed
    paths alike; ``--lexical``: the expert shipped for ``--lang``, E999 if none)."""
    config = {"restore_method": args.method, "n_samples": args.n_samples, "seed": args.seed,
              "restore_empty_weight": args.empty_weight, "repunctuate": bool(getattr(args, "repunctuate", False))}
    if getattr(args, "lexical", False):
        from spacy_punctgen.pipeline.shipped import lexical_expert_path

        config["lexical_model"] = str(lexical_expert_path(args.lang))
    return config


def _restore_with_parser(args, lines: List[str]) -> tuple:
    """Each line parsed whole by ``--parser``, then restored by a ``punctgen`` component added to
    it (the model: ``--model``, else the one that restores from that parser's trees,
    :func:`~spacy_punctgen.api.load.restore_model_for`), marks inserted into the line."""
    from spacy_punctgen.api.load import restore_model_for
    from spacy_punctgen.parsing.words import WORDS_COMPONENT, register_words_component

    model = args.model if args.model is not None else restore_model_for(args.lang, args.parser)
    if not Path(model).is_dir():
        raise FileNotFoundError(Errors.E606.format(path=model))
    nlp = load_parser_pipeline(args.parser)
    if args.max_length is not None:
        nlp.max_length = args.max_length
    _check_lengths(lines, nlp.max_length, args.input)
    register_words_component()
    nlp.add_pipe(WORDS_COMPONENT)
    nlp.add_pipe("punctgen", config={"model": str(model), "mode": "restore", **_punctgen_config(args)})
    idx = [i for i, line in enumerate(lines) if line.strip()]
    texts = list(lines)  # blank lines stay as they are
    n_sent = 0
    with _progress_bar(args, len(idx), "line") as bar:
        for i, doc in zip(idx, nlp.pipe([lines[i] for i in idx])):
            texts[i] = doc._.restored_text
            n_sent += len({e["sentence"] for e in doc._.restored_punct})
            bar.update(1)
    return texts, {"parser": str(args.parser), "sentences": n_sent}


def _restore_live(args) -> dict:
    """``--live``: lines of the input pushed to :class:`~spacy_punctgen.incremental.live.LivePunctuator`
    (an incremental model) or :class:`~spacy_punctgen.api.window_live.WindowLivePunctuator`
    (``shipped``: the shipped pipeline) as they come, what it finalises written (and flushed) at once."""
    if args.live == "shipped":
        from spacy_punctgen.api.load import load
        from spacy_punctgen.api.window_live import WindowLivePunctuator

        if args.model is not None and not Path(args.model).is_dir():
            raise FileNotFoundError(Errors.E606.format(path=args.model))
        nlp = load(args.lang, model=args.model, config=_punctgen_config(args))
        state = WindowLivePunctuator(nlp, delay=args.delay, step=args.live_step)
    else:
        from spacy_punctgen.incremental.live import LivePunctuator
        from spacy_punctgen.incremental.model import IncrementalPunctuator

        if not Path(args.live).is_dir():
            raise FileNotFoundError(Errors.E606.format(path=args.live))
        state = LivePunctuator(IncrementalPunctuator.from_disk(args.live), delay=args.delay)
    out = sys.stdout if args.output in (None, "-") else open(args.output, "w", encoding="utf-8", newline="")
    source = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
    t0 = time.perf_counter()
    try:
        for line in source:
            piece = state.push(line)
            if piece:
                out.write(piece)
                out.flush()
        out.write(state.close() + "\n")
        out.flush()
    finally:
        if source is not sys.stdin:
            source.close()
        if out is not sys.stdout:
            out.close()
    delays = [e.emitted_at - e.arrived_at for e in state.log]
    result = {"live": str(args.live), "delay": args.delay, "words": len(state.log),
              "max_delay_words": max(delays) if delays else 0, "seconds": round(time.perf_counter() - t0, 3)}
    if args.live == "shipped":
        result.update(step=state.step, restorations=state.n_restorations)
    if args.output not in (None, "-"):
        result["_text"] = f"wrote {len(state.log)} words to {args.output}"
    else:
        result["_raw"] = ""
    return result


def _restore_file(args, text: str, fmt: str) -> dict:
    """A subtitle or word-timestamp file through the shipped pipeline (:mod:`spacy_punctgen.formats`)."""
    from spacy_punctgen.api.load import load
    from spacy_punctgen.api.stream import restore_edits
    from spacy_punctgen.formats.insertions import Restored
    from spacy_punctgen.formats.restore import restore_file_text

    if args.parser is not None or args.scheduler is not None:
        raise ValueError(Errors.E981.format(fmt=fmt))
    if args.repunctuate:
        raise ValueError(Errors.E980.format(fmt=fmt))
    if args.model is not None and not Path(args.model).is_dir():
        raise FileNotFoundError(Errors.E606.format(path=args.model))
    t0 = time.perf_counter()
    nlp = load(args.lang, model=args.model, truecase=args.truecaser or args.truecase, config=_punctgen_config(args))

    def restorer(part: str) -> Restored:
        edits = restore_edits(nlp, part)
        return Restored(edits["insertions"], edits["cased"])

    out = restore_file_text(text, fmt, restorer)
    result = {"format": fmt, "model": str(args.model) if args.model else f"shipped ({args.lang})",
              "method": args.method, "seconds": round(time.perf_counter() - t0, 3)}
    return emit_text(result, out, args.output, f"a {fmt} file")


@command("restore", "Punctuate unpunctuated text (by default with the shipped pipeline, any length): parse it, "
                    "then decode punctuation by minimum Bayes risk", _arguments)
def restore_cli(args) -> dict:
    check_output_file(args.output, "--output")
    if args.parser is None and args.max_length is not None:
        raise ValueError(Errors.E634)
    if args.parser is not None and (args.truecase or args.truecaser):
        raise ValueError(Errors.E635.format(flag="--truecaser" if args.truecaser else "--truecase"))
    if args.scheduler is None and args.partitions is not None:
        raise ValueError(Errors.E788.format(flag="--partitions"))
    if args.scheduler is not None and args.parser is not None:
        raise ValueError(Errors.E789.format(flag="--parser"))
    if args.live is not None:
        return _restore_live(args)
    text = read_text(args.input)
    fmt = detect_format(None if args.input == "-" else args.input, args.format)
    if fmt != "text":
        return _restore_file(args, text, fmt)
    bom, lines = _split_lines(text)
    t0 = time.perf_counter()
    if args.scheduler is not None:
        texts, summary = _restore_distributed(args, lines)
    elif args.parser is None:
        texts, summary = _restore_shipped(args, lines)
    else:
        texts, summary = _restore_with_parser(args, lines)
    seconds = time.perf_counter() - t0
    n_lines = len(lines) - (1 if len(lines) > 1 and lines[-1] == "" else 0)  # no line after a final newline
    result = {"lines": n_lines, **summary, "model": str(args.model) if args.model else f"shipped ({args.lang})",
              "method": args.method, "n_samples": args.n_samples if args.method != "marginal" else None,
              "seconds": round(seconds, 3)}
    done = f"{n_lines} lines" + (f" ({summary['sentences']} sentences)" if "sentences" in summary else
                                    f" ({summary['words']} words)")
    return emit_text(result, bom + "\n".join(texts), args.output, done)
