"""Conditional per-slot perplexity of a trained model on gold trees (MODEL.md §5).

``perplexity_per_slot = exp(−Σ log p(x|T) / Σ (n+1))`` over the kept sentences
of the split, with the model's evaluation-time smoothing (``smooth_delta``)
and, for sentences still impossible, the back-off mixture; both are described
in :mod:`spacy_punctgen.model`.  ``n_impossible`` counts the sentences that
needed the back-off; ``perplexity_per_slot_possible`` is the exact figure over
the others.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from .cli import command
from .model import PunctModel
from .preprocess import preprocess_file
from .conllu_io import resolve_split


def evaluate_model(model: PunctModel, path) -> dict:
    t0 = time.perf_counter()
    sents, stats = preprocess_file(path)
    preps = model.prepare_eval(sents)
    res = model.perplexity(preps)
    return {
        "file": str(path),
        "mode": model.mode,
        "direction": model.direction,
        "perplexity_per_slot": res["perplexity_per_slot"],
        "perplexity_per_slot_possible": res["perplexity_per_slot_possible"],
        "log_prob": res["log_prob"],
        "n_sentences": res["n_sentences"],
        "n_slots": res["n_slots"],
        "n_omitted": stats.omitted_nonleaf + stats.omitted_empty,
        "n_omitted_nonleaf": stats.omitted_nonleaf,
        "n_omitted_empty": stats.omitted_empty,
        "n_impossible": res["n_impossible"],
        "n_nonprojective": stats.nonprojective,
        "seconds": round(time.perf_counter() - t0, 3),
    }


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
