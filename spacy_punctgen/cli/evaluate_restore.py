"""``punctgen evaluate-restore``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.evaluation.restoration`."""
from __future__ import annotations
import argparse
from spacy_punctgen.decode.mbr import METHODS
from spacy_punctgen.model.punct_model import PunctModel

from spacy_punctgen.cli import check_output_file, command, non_negative_int, positive_int, seed_int
from spacy_punctgen.evaluation.restoration import evaluate_restore


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model directory written by `train`")
    p.add_argument("test", help="CoNLL-U file, or a UD folder (uses its *-ud-test.conllu)")
    p.add_argument("--parsed", action="append", default=None,
                   help="CoNLL-U of the same sentences, depunctuated and parsed (default: gold trees); "
                        "repeat it or give a comma-separated list to decode from the mixture of the trees")
    p.add_argument("--method", choices=METHODS, default="marginal",
                   help="marginal (default): per-slot MBR from exact slot marginals, compiled; slot: per-slot MBR from samples; sample: the paper's MBR over sampled sentences; "
                        "exact: per-slot MBR from exact slot marginals")
    p.add_argument("--n-samples", type=positive_int, default=1000)
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--predictions", default=None, help="write predictions here (JSONL)")
    p.add_argument("--limit", type=non_negative_int, default=0, help="only the first N test sentences (0 = all)")


@command("evaluate-restore", "Punctuation restoration on a test treebank: AED and comma P/R/F1", _arguments)
def evaluate_restore_cli(args) -> dict:
    from spacy_punctgen.data.conllu import resolve_split

    check_output_file(args.predictions, "--predictions")
    model = PunctModel.from_disk(args.model)
    result = evaluate_restore(model, resolve_split(args.test, "test"), args.parsed, args.method,
                              args.n_samples, args.seed, args.predictions, args.limit)
    result["_text"] = "\n".join(f"{k}: {v}" for k, v in result.items())
    return result
