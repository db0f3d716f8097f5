"""``punctgen convert``: argument parsing and printing; the work is done by
:mod:`spacy_punctgen.data.convert` (one tree per sentence) and, with ``--stream``, by
:mod:`spacy_punctgen.data.stream` (depunctuated multi-sentence documents, partly lowercased:
the training data of the shipped parser, the workflow's ``preprocess-stream``)."""
from __future__ import annotations
import argparse
from pathlib import Path
from spacy_punctgen.data.conllu import find_split, resolve_split

from spacy_punctgen.cli import check_output_file, command, seed_int
from spacy_punctgen.data.convert import PROTOCOLS, SPLITS, convert_file, protocol_part
from spacy_punctgen.data.stream import convert_stream_file
from spacy_punctgen.errors import Errors

#: --stream's own options and their defaults (None on the command line = not given)
STREAM_DEFAULTS = {"min_sents": 1, "max_sents": 20, "lower": 0.5}


# --fraction, --heldout, --cv-folds and --cv-fold are checked by spacy_punctgen.data.convert, which
# knows how they depend on each other (a fold below the number of folds, enough sentences per
# block): a bad value is a refused input there (exit status 1), not a usage error. Likewise
# --min-sents, --max-sents and --lower in spacy_punctgen.data.stream.
def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="CoNLL-U file, or a UD folder (then give --split)")
    p.add_argument("output", help="CoNLL-U file to write (parent folders are created)")
    p.add_argument("--split", choices=["train", "dev", "test"], default=None,
                   help="with a UD folder as input: convert its *-ud-SPLIT.conllu")
    p.add_argument("--depunct", action="store_true",
                   help="write the depunctuated trees (training data of the parser for unpunctuated text)")
    p.add_argument("--fraction", type=float, default=1.0,
                   help="keep this random fraction of the input sentences (0 < F <= 1)")
    p.add_argument("--seed", type=seed_int, default=0,
                   help="random seed for --fraction, --heldout, and --stream's document lengths and lowercasing")
    p.add_argument("--protocol", choices=PROTOCOLS, default="standard",
                   help="dev-as-train: train = UD dev minus a held-out share, dev = that share, test = UD test; "
                        "cv: cross-validation blocks of the pooled train, dev and test files")
    p.add_argument("--heldout", type=float, default=0.1,
                   help="with --protocol dev-as-train: share of UD dev held out as the dev set")
    p.add_argument("--cv-folds", type=int, default=10,
                   help="with --protocol cv: number of blocks (folds) of the pooled sentences")
    p.add_argument("--cv-fold", type=int, default=0,
                   help="with --protocol cv: the test block (the next one is dev, the others train)")
    p.add_argument("--no-slots-comment", action="store_true",
                   help="with --depunct: omit the '# punct_slots' comment")
    p.add_argument("--stream", action="store_true",
                   help="write depunctuated multi-sentence documents (runs of consecutive sentences, one "
                        "CoNLL-U block each, a share lowercased): the shipped parser's training data")
    p.add_argument("--min-sents", type=int, default=None,
                   help=f"with --stream: fewest sentences in a document (default {STREAM_DEFAULTS['min_sents']})")
    p.add_argument("--max-sents", type=int, default=None,
                   help=f"with --stream: most sentences in a document (default {STREAM_DEFAULTS['max_sents']})")
    p.add_argument("--lower", type=float, default=None,
                   help=f"with --stream: share of documents lowercased (default {STREAM_DEFAULTS['lower']})")


def _check_mode(args) -> None:
    """Refuse options of the other mode rather than ignore them silently."""
    stream_only = [f"--{k.replace('_', '-')}" for k in STREAM_DEFAULTS if getattr(args, k) is not None]
    if not args.stream:
        if stream_only:
            raise ValueError(Errors.E632.format(flags=", ".join(stream_only)))
        return
    tree_only = [flag for flag, given in (("--depunct", args.depunct), ("--fraction", args.fraction != 1.0),
                                          ("--no-slots-comment", args.no_slots_comment)) if given]
    if tree_only:
        raise ValueError(Errors.E633.format(flags=", ".join(tree_only)))


@command("convert", "Write UD trees (normal or depunctuated, or --stream documents) as plain CoNLL-U for "
                    "spaCy parser training", _arguments)
def convert_cli(args) -> dict:
    check_output_file(args.output, "output")
    _check_mode(args)
    split, part = protocol_part(args.split, args.protocol)
    if part is not None and not Path(args.input).is_dir():
        raise ValueError(Errors.E615.format(protocol=args.protocol))
    cv = None
    if args.protocol == "cv":
        src = [f for f in (find_split(args.input, s) for s in SPLITS) if f is not None]
        if not src:
            raise FileNotFoundError(Errors.E616.format(path=args.input))
        cv = (args.cv_folds, args.cv_fold)
    else:
        src = resolve_split(args.input, split)
    fold = f" (fold {cv[1]} of {cv[0]}: {part})" if cv else ""
    if args.stream:
        opts = {k: STREAM_DEFAULTS[k] if getattr(args, k) is None else getattr(args, k) for k in STREAM_DEFAULTS}
        result = convert_stream_file(src, args.output, seed=args.seed, part=part, heldout=args.heldout, cv=cv,
                                     **opts)
        result["protocol"] = args.protocol
        result["split"] = args.split
        inputs = result["input"] if isinstance(result["input"], str) else " + ".join(result["input"])
        result["_text"] = (f"{inputs}{fold} -> {result['output']}: {result['sentences']} of "
                           f"{result['sentences_in']} sentences in {result['documents']} stream documents "
                           f"({result['lowercased']} lowercased; {result['omitted']} omitted)")
        return result
    result = convert_file(src, args.output, depunct=args.depunct, fraction=args.fraction,
                          seed=args.seed, slots_comment=not args.no_slots_comment, part=part,
                          heldout=args.heldout, cv=cv)
    result["protocol"] = args.protocol
    result["split"] = args.split
    omitted = (f" ({result['omitted_nonleaf']} non-leaf and {result['omitted_empty']} empty omitted)"
               if args.depunct else "")
    inputs = result["input"] if isinstance(result["input"], str) else " + ".join(result["input"])
    result["_text"] = (f"{inputs}{fold} -> {result['output']}: {result['written']} of "
                       f"{result['sentences_in']} sentences written as {result['mode']}{omitted}")
    return result
