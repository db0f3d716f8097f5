"""Conditional per-slot perplexity of a trained model on gold trees (docs/model.md §5).

``perplexity_per_slot = exp(−Σ log p(x|T) / Σ (n+1))`` over the kept sentences
of the split, with the model's evaluation-time smoothing (``smooth_delta``)
and, for sentences still impossible, the back-off mixture; both are described
in :mod:`spacy_punctgen.model.punct_model`.  ``n_impossible`` counts the sentences that
needed the back-off; ``perplexity_per_slot_possible`` is the exact figure over
the others.
"""
from __future__ import annotations

import time

from spacy_punctgen.evaluation.metrics import require_sentences
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.data.preprocess import preprocess_file


def evaluate_model(model: PunctModel, path) -> dict:
    """The figures of the module docstring; a file with no kept sentence is refused (E551).
    ``perplexity_per_slot_possible`` is NaN when no sentence is possible (null in the CLI's JSON)."""
    t0 = time.perf_counter()
    sents, stats = preprocess_file(path)
    require_sentences(sents, stats, path, "evaluate")
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


