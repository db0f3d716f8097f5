"""Restoration of a test file from the K trees of each sentence that ``parse_conllu.py --kbest``
wrote, weighed ``padded``, ``uniform`` or ``beam`` (``scripts/kbest_weighting.py`` documents the
weightings; ``scripts/sampled_trees_curve.py`` evaluates through it too).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.errors import Errors
from spacy_punctgen.data.parsed import parsed_sentences
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.mbr import restore_mixtures
from spacy_punctgen.decode.mixture import restore_weighted_mixtures
from spacy_punctgen.evaluation.metrics import gold_slots, require_sentences, restoration_report
from spacy_punctgen.model.punct_model import PunctModel


def evaluate(model_dir, test, parsed: Path, k: int, weights: str, predictions=None) -> dict:
    """The report of module docstring's weighting ``weights``; ``predictions``: also write the
    predictions there (``spacy_punctgen.evaluation.predictions`` format, for
    ``scripts/permutation_test.py``)."""
    model = PunctModel.from_disk(model_dir)
    gold, stats = preprocess_file(test)
    require_sentences(gold, stats, test, "restore")
    stem = parsed.name[:-len(".conllu")] if parsed.name.endswith(".conllu") else parsed.name
    paths = [parsed.with_name(f"{stem}.k{j + 1}.conllu") for j in range(k)]
    probs = json.loads(parsed.with_name(f"{stem}.kbest.json").read_text(encoding="utf-8"))
    ids = [ud.sent_id for ud in read_conllu(paths[0])]
    if len(ids) != len(probs):
        raise ValueError(Errors.E709.format(path=paths[0], n=len(ids), m=len(probs)))
    if all(i is not None for i in ids) and all(g.sent_id is not None for g in gold):
        order = {i: q for q, i in enumerate(ids)}
        if any(g.sent_id not in order for g in gold):
            raise ValueError(Errors.E710.format(path=paths[0], test=test))
        order = [order[g.sent_id] for g in gold]
    elif len(ids) == len(gold):  # no sent_ids (e.g. UD 1.4): sentence for sentence, as parsed_sentences
        order = list(range(len(gold)))
    else:
        raise ValueError(Errors.E711.format(path=paths[0], n=len(ids), test=test, m=len(gold)))
    parses = [parsed_sentences(p, gold) for p in paths]
    if weights == "padded":
        sets = [list(ts) for ts in zip(*parses)]
        w = [[1.0] * k for _ in gold]
    else:
        m = [len(probs[order[q]]) for q in range(len(gold))]
        sets = [[parses[j][q] for j in range(m[q])] for q in range(len(gold))]
        w = [probs[order[q]][:m[q]] if weights == "beam" else [1.0] * m[q] for q in range(len(gold))]
    t0 = time.perf_counter()
    if weights == "beam":
        choices = restore_weighted_mixtures(model, sets, w)
    else:
        choices = restore_mixtures(model, sets, method="marginal")
    seconds = time.perf_counter() - t0
    pred = [[c.surface for c in sent] for sent in choices]
    if predictions is not None:
        from spacy_punctgen.evaluation.predictions import record, write_predictions

        write_predictions(predictions, (record(slots, g.sent_id, [c.prob for c in sent])
                                        for slots, sent, g in zip(pred, choices, gold)))
    return {"test": str(test), "parsed": str(parsed), "k": k, "weights": weights, "method": "marginal",
            **restoration_report(gold_slots(gold), pred),
            "mean_trees": round(sum(map(len, sets)) / max(1, len(sets)), 3),
            "decode_seconds": round(seconds, 2)}
