"""``punctgen adapt``: a restoration model adapted to the user's own punctuated text (argument
parsing and the summary; the work is :mod:`spacy_punctgen.workflow.adapt`, the guide
docs/adapt.md)."""
from __future__ import annotations

import argparse
import sys

from spacy_punctgen.cli import bounded, command, non_negative_float, positive_int


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="punctuated text (UTF-8) or word<TAB>label files (O, COMMA, PERIOD, QUESTION)")
    p.add_argument("--output", "-o", required=True, help="model folder to write")
    p.add_argument("--format", choices=("auto", "text", "tsv", "conllu"), default="auto",
                   help="auto: a file whose non-empty lines are all word<TAB>label is read as such, a CoNLL-U file "
                        "as the punctuated text of its sentences, any other as plain punctuated text")
    p.add_argument("--dev", nargs="+", default=None, metavar="FILE",
                   help="files that are the dev text, read whole (then --dev-share is not used)")
    p.add_argument("--base-model", default=None,
                   help="keep this punctgen model ('shipped': the shipped restoration model) and train only the "
                        "lexical expert beside it")
    p.add_argument("--share", type=bounded(float, 0, 1, low_open=True), default=1.0,
                   help="train on the first share of each file's words only (cut at a sentence start; for a .tsv "
                        "file the training block of `evaluate-stream --train-share`)")
    p.add_argument("--dev-share", type=bounded(float, 0, 1, high_open=True), default=0.1,
                   help="the last share of the words used that chooses the epoch (0: none, the last epoch kept)")
    p.add_argument("--epochs", type=positive_int, default=2)
    p.add_argument("--max-seconds", type=non_negative_float, default=0.0,
                   help="stop before a training epoch that would end past this many seconds (0: never)")
    p.add_argument("--parser", default=None,
                   help="spaCy pipeline folder with the parser to train on (default: the shipped English one); "
                        "restore with the same --parser")
    p.add_argument("--no-lowercase", dest="lowercase", action="store_false",
                   help="keep the words' case (default: lowercased, as recogniser output usually is)")
    p.add_argument("--templates", default=None,
                   help="the model's feature templates, comma-separated, 'default' for the default set "
                        "(default: default,clause_seq,clause_start,clause_end)")
    p.add_argument("--no-lexical", dest="lexical", action="store_false",
                   help="no lexical expert beside the model (default: one, its weight chosen on the dev text)")
    p.add_argument("--lexical-buckets", type=positive_int, default=None,
                   help="the lexical expert's hash buckets per class (default 1048576; 262144 makes it a quarter "
                        "of the size, slightly weaker)")
    p.add_argument("--force", action="store_true",
                   help="write into an output folder that holds files not written by adapt")


@command("adapt", "Adapt the restoration model to your own punctuated text (plain text or word<TAB>label files)",
         _arguments)
def adapt_cli(args) -> dict:
    from spacy_punctgen.training.train import parse_templates
    from spacy_punctgen.workflow.adapt import adapt

    record = adapt(args.files, args.output, fmt=args.format, share=args.share, dev_share=args.dev_share,
                   epochs=args.epochs, max_seconds=args.max_seconds, parser=args.parser,
                   lowercase=args.lowercase, force=args.force, progress=sys.stderr,
                   templates=parse_templates(args.templates), lexical=args.lexical, dev_paths=args.dev,
                   base_model=args.base_model, lexical_buckets=args.lexical_buckets)
    words, sents, secs = record["words"], record["sentences"], record["seconds"]
    restore = f"punctgen restore FILE --model {record['output']}" + (f" --parser {args.parser}" if args.parser else "")
    result = dict(record)
    result["_text"] = (f"wrote the adapted model to {record['output']}: {words['train']:,} words "
                       f"({sents['train']:,} sentences) to train, {words['dev']:,} ({sents['dev']:,}) to choose the "
                       + (f"epoch (best: {record['training']['best_epoch']}), " if record["training"] else
                          f"lexical expert's weight (punctgen model kept: {record['base_model']}), ")
                       + f"{secs['total']:.0f} s\n"
                       + (f"lexical expert: weight {record['lexical']['weight']:g} (chosen on the dev text)"
                          + ("" if record["lexical"]["kept"] else ", so not kept") + "\n"
                          if record["lexical"] else "")
                       + f"use it: {restore}")
    return result
