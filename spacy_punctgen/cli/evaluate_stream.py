"""``punctgen evaluate-stream`` and ``punctgen stream-table``: restoration of long lowercased
streams (argument parsing and the choice of system; the scoring is
:mod:`spacy_punctgen.evaluation.stream`, the TED reader :mod:`spacy_punctgen.data.ted`).

TEST is a CoNLL-U file (or UD folder): its kept sentences in streams of ``--stream-sents``
consecutive sentences, lowercased and depunctuated, scored by M/F; or a ``.tsv`` TED file:
its last ``1 - --train-share`` of the words (the dev block) restored as one stream and scored
by COMMA/PERIOD/QUESTION in units of ``--unit-words`` words.

Every result also scores sentence boundaries on the restored streams (``restored_boundaries``:
a restored ``. ? !`` against the gold sentence ends, each stream's last word left out), and for
``shipped`` the parser's own sentence starts in the same windows the restorer got
(``parser_boundaries``; recorded by a component at the pipeline's end as each window is parsed,
so nothing is parsed twice).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Optional

from spacy_punctgen.cli import (
    bounded,
    check_output_file,
    command,
    non_negative_int,
    positive_float,
    positive_int,
    seed_int,
)
from spacy_punctgen.errors import Errors

SYSTEMS = ("shipped", "crf_lexical", "trivial")
#: the component that records the parser's sentence starts of each window (see the docstring)
SENTENCE_PROBE = "stream_sentence_probe"


class SentenceProbe:
    """A pipeline component that keeps the character offsets of the sentence starts of every Doc
    it sees (one list per Doc, in order) and changes nothing."""

    def __init__(self):
        self.windows = []

    def __call__(self, doc):
        self.windows.append([s.start_char for s in doc.sents] if len(doc) else [])
        return doc


def add_sentence_probe(nlp) -> SentenceProbe:
    """``nlp`` with a :class:`SentenceProbe` last (it runs in each window's parse, after the
    parser and before ``punctgen``, which runs on the kept pieces); returns the probe."""
    from spacy.language import Language

    if not Language.has_factory(SENTENCE_PROBE):
        Language.factory(SENTENCE_PROBE, func=lambda nlp, name: SentenceProbe())
    return nlp.add_pipe(SENTENCE_PROBE, last=True)


def restore_with_sentence_starts(nlp, probe: SentenceProbe, text: str, chunk_chars: Optional[int] = None):
    """``(restore_text(nlp, text, chunk_chars), starts)``: the restored text and the offsets in
    ``text`` where the parser started the sentences of the pieces that were restored (each piece
    is the start of one window, :func:`~spacy_punctgen.api.stream.iter_pieces_at`)."""
    from spacy_punctgen.api.stream import DEFAULT_CHUNK_CHARS, check_text, iter_restored_edits
    from spacy_punctgen.pipeline.restore import apply_edits

    check_text(text)
    out, starts, base = [], [], 0
    for line in text.split("\n"):
        pos = 0
        if line.strip():
            probe.windows.clear()
            for start, end, source, ins, dels in iter_restored_edits(nlp, line, chunk_chars or DEFAULT_CHUNK_CHARS):
                out.append(line[pos:start] + apply_edits(source, ins, dels))
                window = probe.windows[-1] if probe.windows else []
                starts.extend(base + start + o for o in window if o < end - start)
                pos = end
        out.append(line[pos:] + "\n")
        base += len(line) + 1
    return "".join(out)[:-1], starts


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("system", choices=SYSTEMS, help="shipped: spacy_punctgen.load('en') + restore_text; "
                   "crf_lexical: the lexical CRF trained on streams of --train; trivial: a period at each unit's end")
    p.add_argument("test", help="CoNLL-U test file or UD folder (streams of sentences), or a TED .tsv file")
    p.add_argument("--train", default=None, help="CoNLL-U training file or UD folder (crf_lexical on CoNLL-U)")
    p.add_argument("--output", required=True, help="metrics JSON to write")
    p.add_argument("--stream-sents", type=positive_int, default=10, help="sentences per stream (CoNLL-U)")
    p.add_argument("--cased", action="store_true",
                   help="CoNLL-U: keep the words' case (default: lowercased streams, as paper 003)")
    p.add_argument("--train-share", type=bounded(float, 0, 1, low_open=True, high_open=True), default=0.8, help="TED: share of the words in the training block")
    p.add_argument("--unit-words", type=positive_int, default=500, help="TED: words per scoring unit")
    p.add_argument("--whole-file", action="store_true",
                   help="TED: score the whole file (an independent test set, e.g. IWSLT 2011) instead of its "
                        "last 1 - --train-share; crf_lexical then trains on the first --train-share of the "
                        "--train .tsv file")
    p.add_argument("--window", type=positive_int, default=200, help="TED: crf_lexical's window in words")
    p.add_argument("--limit", type=non_negative_int, default=0,
                   help="only the first N test streams (CoNLL-U) or dev words (TED); 0 = all")
    p.add_argument("--train-limit", type=non_negative_int, default=0,
                   help="only the first N training streams / windows for crf_lexical; 0 = all")
    p.add_argument("--max-iterations", type=positive_int, default=100, help="crf_lexical's L-BFGS iterations")
    p.add_argument("--model", default=None, help="shipped: another punctuation model folder (default: the shipped one)")
    p.add_argument("--lexical", action="store_true",
                   help="shipped: restore with the lexical expert shipped beside the model (load(lexical=True))")
    p.add_argument("--parser", default=None,
                   help="shipped: another spaCy pipeline folder with the parser (default: the shipped one)")
    p.add_argument("--kbest", type=positive_int, default=None,
                   help="shipped: the parser's beam width, restoring each sentence from its k best trees "
                        "(default: load()'s, docs/decoding.md)")
    p.add_argument("--kbest-search", choices=("beam", "sample"), default="beam",
                   help="shipped, with --kbest: the beam's k best, or the greedy parse and k - 1 trees drawn from "
                        "the parser's transition probabilities")
    p.add_argument("--kbest-temperature", type=positive_float, default=1.0,
                   help="shipped, with --kbest-search sample: the draws' temperature (1: the parser's own)")
    p.add_argument("--kbest-weights", choices=("uniform", "beam"), default="uniform",
                   help="shipped, with --kbest: the trees of a sentence weighed equally, or by their beam "
                        "probability / share of the draws")
    p.add_argument("--empty-weight", type=positive_float, default=1.0,
                   help="shipped: the empty string's weight in restoration's risk (1: minimum expected edit "
                        "distance; below 1 more marks)")
    p.add_argument("--name", default=None, help="the system's name in the metrics (default: SYSTEM)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra fields for the metrics")


def _units(args):
    """(prediction units, scoring units' builder, kind, training units, info)."""
    from spacy_punctgen.evaluation import stream as S

    if args.test.endswith(".tsv"):
        from spacy_punctgen.data.ted import read_ted, split_blocks

        text = read_ted(args.test)
        if args.whole_file:  # an independent test file: all of it scored; training from --train
            d0, d1 = 0, len(text)
            train_path = args.train if args.train and args.train.endswith(".tsv") else None
            if args.system == "crf_lexical" and train_path is None:
                raise ValueError(Errors.E884.format(path=args.test))
            train_text = read_ted(train_path) if train_path else None
            t0, t1 = split_blocks(train_text, args.train_share, train_path)[0] if train_text else (0, 0)
        else:
            train_path, train_text = args.test, text
            (t0, t1), (d0, d1) = split_blocks(text, args.train_share, args.test)
        if args.limit:
            d1 = min(d1, d0 + args.limit)
        dev = text.block(d0, d1)
        info = {"test": args.test, "train_block": [t0, t1], "dev_block": [d0, d1], "n_empty_dropped": text.n_empty,
                "train_share": args.train_share, "unit_words": args.unit_words}
        if args.whole_file:
            info.update(whole_file=True, train_file=train_path)
        train_units = None
        if train_text is not None:
            train = train_text.block(t0, t1)
            train_units = S.word_blocks(train.words, train.marks, args.window)
        return [S.Stream(dev.words, dev.marks)], "ted", train_units, info
    from spacy_punctgen.data.conllu import resolve_split
    from spacy_punctgen.data.preprocess import preprocess_file

    test = resolve_split(args.test, "test")
    units = S.sentence_streams(preprocess_file(test)[0], args.stream_sents, lower=not args.cased)
    if args.limit:
        units = units[:args.limit]
    train_units = None
    if args.system == "crf_lexical":
        if not args.train:
            raise ValueError(Errors.E775.format(path=args.test))
        train_units = S.sentence_streams(preprocess_file(resolve_split(args.train, "train"))[0], args.stream_sents,
                                         lower=not args.cased)
    return units, "stream", train_units, {"test": str(test), "train": args.train, "stream_sents": args.stream_sents,
                                          "lowercased": not args.cased}


@command("evaluate-stream", "Restoration of long lowercased streams: M/F (or TED COMMA/PERIOD/QUESTION) P/R/F1",
         _arguments)
def evaluate_stream_cli(args) -> dict:
    from spacy_punctgen.evaluation import stream as S

    check_output_file(args.output, "--output")
    extra = dict(kv.split("=", 1) for kv in args.set if "=" in kv)
    units, kind, train_units, info = _units(args)
    info["limit"] = args.limit
    t0 = time.perf_counter()
    parser_starts = []
    if args.system == "shipped":
        import spacy_punctgen
        from spacy_punctgen.api.load import DEFAULT_KBEST

        kbest = DEFAULT_KBEST if args.kbest is None else args.kbest
        nlp = spacy_punctgen.load("en", model=args.model, parser=args.parser, kbest=kbest,
                                  kbest_search=args.kbest_search, kbest_temperature=args.kbest_temperature,
                                  lexical=args.lexical, config={"restore_empty_weight": args.empty_weight,
                                          "kbest_weights": args.kbest_weights})
        info["kbest"] = kbest
        if kbest > 1:
            info.update(kbest_search=args.kbest_search, kbest_weights=args.kbest_weights,
                        **({"kbest_temperature": args.kbest_temperature} if args.kbest_search == "sample" else {}))
        info["empty_weight"] = args.empty_weight
        info["model"] = args.model or "shipped"
        info["lexical"] = "shipped" if args.lexical else None
        info["parser"] = args.parser or "shipped"
        probe = add_sentence_probe(nlp)

        def restore(text):
            restored, starts = restore_with_sentence_starts(nlp, probe, text)
            parser_starts.append(starts)
            return restored

        predictor = S.TextRestorer(restore)
        predicted = [predictor(u.words) for u in units]
        info["missing_word_chars"] = predictor.missing_chars
    elif args.system == "crf_lexical":
        from spacy_punctgen.baselines import get_system

        if args.train_limit:
            train_units = train_units[:args.train_limit]
        crf = get_system("crf_lexical")()
        crf.fit(S.class_sentences(train_units, kind), max_iterations=args.max_iterations)
        info.update(train_units=len(train_units), train_words=sum(len(u.words) for u in train_units),
                    max_iterations=args.max_iterations, fit_seconds=round(time.perf_counter() - t0, 1))
        window = args.window if kind == "ted" else 0
        predicted = [S.tagger_gaps(crf.predict, u.words, window) for u in units]
    else:
        predicted = [S.trivial_gaps(len(u.words)) for u in units]
    info["seconds"] = round(time.perf_counter() - t0, 1)
    # sentence boundaries on the streams as restored (before TED's stream is cut into units)
    gold_ends = [S.gold_boundaries(u) for u in units]
    info["restored_boundaries"] = S.boundary_scores(gold_ends, [S.mark_boundaries(p) for p in predicted])
    if args.system == "shipped":
        info["parser_boundaries"] = S.boundary_scores(
            gold_ends, [S.start_boundaries(u.words, st) for u, st in zip(units, parser_starts)])
    if kind == "ted":  # one stream restored whole, scored in blocks of --unit-words
        whole, size = units[0], args.unit_words
        units = S.word_blocks(whole.words, whole.gold, size)
        predicted = [predicted[0][i:i + size] for i in range(0, len(whole.words), size)]
    report = S.stream_report(args.name or args.system, units, predicted, kind, **info, **extra)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    s = report["scores"]
    rows = [k for k in s]
    report_text = "\n".join(f"{k}: P {100 * s[k]['precision']:.1f} R {100 * s[k]['recall']:.1f} "
                            f"F1 {100 * s[k]['f1']:.1f}" for k in rows)
    for key in ("restored_boundaries", "parser_boundaries"):
        if key in report:
            b = report[key]
            report_text += (f"\nsentence ends ({key.split('_')[0]}): P {100 * b['precision']:.1f} "
                            f"R {100 * b['recall']:.1f} F1 {100 * b['f1']:.1f}")
    return {**{k: v for k, v in report.items() if k not in ("counts", "errors")},
            "_text": report_text + f"\nunits {report['n_units']}, words {report['n_words']}, {info['seconds']} s"}


def _table_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("metrics", nargs="+", help="metrics files of evaluate-stream, one per system")
    p.add_argument("--output", required=True, help="the comparison (JSON)")
    p.add_argument("--table", required=True, help="the Markdown table")
    p.add_argument("--title", default="")
    p.add_argument("--doc", default=None, help="also put the table into this Markdown file, between the lines "
                   "<!-- stream-table:NAME start --> and <!-- stream-table:NAME end --> (NAME: the --table file's stem)")
    p.add_argument("--reference", default="crf_lexical", help="the system every other is tested against")
    p.add_argument("--key", default=None, help="the F1 that picks the best system and the table's p "
                   "(default: mixed for streams, overall for TED)")
    p.add_argument("--permutations", type=positive_int, default=10000)
    p.add_argument("--seed", type=seed_int, default=0)


@command("stream-table", "Compare evaluate-stream metrics files: significance against a reference, a Markdown table",
         _table_arguments)
def stream_table_cli(args) -> dict:
    from spacy_punctgen.evaluation import stream as S

    check_output_file(args.output, "--output")
    check_output_file(args.table, "--table")
    reports = []
    for path in args.metrics:
        try:
            reports.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E774.format(path=path, err=str(err)[:200])) from None
    key = args.key or ("overall" if reports and reports[0].get("kind") == "ted" else "mixed")
    comparison = S.compare_reports(reports, args.reference, key, args.permutations, args.seed, args.metrics)
    comparison["metrics"] = list(args.metrics)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(comparison, indent=1) + "\n", encoding="utf-8")
    table = S.markdown_table(comparison, args.title)
    Path(args.table).parent.mkdir(parents=True, exist_ok=True)
    Path(args.table).write_text(table, encoding="utf-8")
    if args.doc:
        doc = Path(args.doc)
        try:
            text = doc.read_text(encoding="utf-8")
        except OSError as err:
            raise ValueError(Errors.E774.format(path=doc, err=str(err)[:200])) from None
        doc.write_text(S.splice_block(text, table, Path(args.table).stem, str(doc)), encoding="utf-8")
    return {**comparison, "_text": table}
