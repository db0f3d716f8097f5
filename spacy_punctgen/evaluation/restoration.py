"""``punctgen evaluate-restore``: punctuation restoration on a test treebank (paper §6.1).

Every kept test sentence is decoded from its tree alone -- the gold tree, or with
``--parsed`` the same sentence's tree from a parser of depunctuated text (a CoNLL-U
file holding the depunctuated test sentences, aligned by ``sent_id`` when both files
have them, else by order) -- and scored against the gold slots of TEST with
:func:`metrics.restoration_report` (AED, comma P/R/F1).  With ``--parsed`` the
parser's UAS/LAS against the gold depunctuated trees are reported too (both trees
projectivised, relations compared without subtypes' case).

Several ``--parsed`` files (repeated, or one comma-separated list) give several trees per
sentence, e.g. from parsers of different training data or seeds; punctuation is then
decoded from the uniform mixture of the trees' ``p(x | T_k)`` (paper footnote 20,
:func:`decode.restore_mixtures`), and each parser's scores are reported under ``parsers``.
"""
from __future__ import annotations

import glob
import time
from pathlib import Path
from typing import List, Optional

from spacy_punctgen.decode.mbr import restore_mixtures
from spacy_punctgen.evaluation.metrics import gold_slots, require_sentences, restoration_report
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.evaluation.predictions import record, write_predictions
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.data.parsed import attachment_scores, parsed_sentences
from spacy_punctgen.errors import Errors


def parsed_paths(parsed) -> List[str]:
    """``--parsed`` values as a list of paths: None, one path, or paths and comma-separated lists.

    An item with a glob pattern (``*``, ``?``, ``[``) stands for the files it matches, sorted,
    so a workflow command can name parses whose number it does not know (``spacy project``
    runs commands without a shell); a pattern that matches nothing is an error."""
    if not parsed:
        return []
    items = [parsed] if isinstance(parsed, (str, Path)) else list(parsed)
    paths: List[str] = []
    for p in (p.strip() for item in items for p in str(item).split(",")):
        if not p:
            continue
        if glob.has_magic(p):
            matched = sorted(glob.glob(p))
            if not matched:
                raise ValueError(Errors.E547.format(pattern=p))
            paths.extend(matched)
        else:
            paths.append(p)
    if not paths:
        raise ValueError(Errors.E548.format(parsed=parsed))
    return paths


def evaluate_restore(model: PunctModel, test, parsed=None, method: str = "marginal", n_samples: int = 1000,
                     seed: int = 0, predictions: Optional[str] = None, limit: int = 0) -> dict:
    if limit < 0:
        raise ValueError(Errors.E553.format(limit=limit))
    gold, stats = preprocess_file(test)
    require_sentences(gold, stats, test, "restore")
    if limit:
        gold = gold[:limit]
    paths = parsed_paths(parsed)
    parses = [parsed_sentences(p, gold) for p in paths]
    tree_sets = [list(ts) for ts in zip(*parses)] if parses else [[g] for g in gold]
    t0 = time.perf_counter()
    choices = restore_mixtures(model, tree_sets, method=method, n_samples=n_samples, seed=seed)
    seconds = time.perf_counter() - t0
    pred = [[c.surface for c in sent] for sent in choices]
    report = restoration_report(gold_slots(gold), pred)
    trees = "gold" if not paths else (paths[0] if len(paths) == 1 else paths)
    out = {"test": str(test), "trees": trees, "method": method,
           "n_samples": n_samples if method != "marginal" else None, "seed": seed,
           **report, "n_omitted": stats.omitted_nonleaf + stats.omitted_empty,
           "decode_seconds": round(seconds, 3),
           "sentences_per_second": round(len(gold) / seconds, 2) if seconds > 0 else None}
    if len(parses) == 1:
        out["parser"] = attachment_scores(gold, parses[0])
    elif parses:
        out["n_trees"] = len(parses)
        out["parsers"] = [{"parsed": p, **attachment_scores(gold, t)} for p, t in zip(paths, parses)]
    if predictions:
        write_predictions(predictions, (record(p, g.sent_id, [c.prob for c in ch])
                                        for p, g, ch in zip(pred, gold, choices)))
        out["predictions"] = str(predictions)
    return out


