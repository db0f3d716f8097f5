"""``punctgen evaluate``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.evaluation.perplexity`."""
from __future__ import annotations
import argparse
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.data.conllu import resolve_split

from spacy_punctgen.cli import command
from spacy_punctgen.evaluation.perplexity import evaluate_model


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model directory written by `train`")
    p.add_argument("test", help="CoNLL-U file, or a UD folder (uses its *-ud-test.conllu)")


@command("evaluate", "Per-slot conditional perplexity of a trained model on gold trees", _arguments)
def evaluate_cli(args) -> dict:
    model = PunctModel.from_disk(args.model)
    path = resolve_split(args.test, "test")
    result = evaluate_model(model, path)
    result["_text"] = "\n".join(f"{k}: {v}" for k, v in result.items())
    return result
