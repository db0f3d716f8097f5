"""``punctgen convert``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.data.convert`."""
from __future__ import annotations
import argparse
from pathlib import Path
from spacy_punctgen.data.conllu import find_split, resolve_split

from spacy_punctgen.cli import check_output_file, command, seed_int
from spacy_punctgen.data.convert import PROTOCOLS, SPLITS, convert_file, protocol_part
from spacy_punctgen.errors import Errors


# --fraction, --heldout, --cv-folds and --cv-fold are checked by spacy_punctgen.data.convert, which
# knows how they depend on each other (a fold below the number of folds, enough sentences per
# block): a bad value is a refused input there (exit status 1), not a usage error.
def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="CoNLL-U file, or a UD folder (then give --split)")
    p.add_argument("output", help="CoNLL-U file to write (parent folders are created)")
    p.add_argument("--split", choices=["train", "dev", "test"], default=None,
                   help="with a UD folder as input: convert its *-ud-SPLIT.conllu")
    p.add_argument("--depunct", action="store_true",
                   help="write the depunctuated trees (training data of the parser for unpunctuated text)")
    p.add_argument("--fraction", type=float, default=1.0,
                   help="keep this random fraction of the input sentences (0 < F <= 1)")
    p.add_argument("--seed", type=seed_int, default=0, help="random seed for --fraction")
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


@command("convert", "Write UD trees (normal or depunctuated) as plain CoNLL-U for spaCy parser training",
         _arguments)
def convert_cli(args) -> dict:
    check_output_file(args.output, "output")
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
    result = convert_file(src, args.output, depunct=args.depunct, fraction=args.fraction,
                          seed=args.seed, slots_comment=not args.no_slots_comment, part=part,
                          heldout=args.heldout, cv=cv)
    result["protocol"] = args.protocol
    result["split"] = args.split
    omitted = (f" ({result['omitted_nonleaf']} non-leaf and {result['omitted_empty']} empty omitted)"
               if args.depunct else "")
    inputs = result["input"] if isinstance(result["input"], str) else " + ".join(result["input"])
    fold = f" (fold {cv[1]} of {cv[0]}: {part})" if cv else ""
    result["_text"] = (f"{inputs}{fold} -> {result['output']}: {result['written']} of "
                       f"{result['sentences_in']} sentences written as {result['mode']}{omitted}")
    return result
