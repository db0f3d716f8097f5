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

import argparse
import glob
import time
from pathlib import Path
from typing import List, Optional, Sequence

from .cli import command
from .conllu_io import read_conllu
from .decode import METHODS, restore_mixtures
from .metrics import gold_slots, restoration_report
from .model import PunctModel
from .predictions import record, write_predictions
from .preprocess import PunctSentence, preprocess_file, preprocess_sentence
from .restore import as_words


def parsed_sentences(path, gold: Sequence[PunctSentence]) -> List[PunctSentence]:
    """The parsed trees of PATH, one per gold sentence, with the gold words checked."""
    path = Path(path)
    uds = read_conllu(path)
    by_id = {ud.sent_id: ud for ud in uds if ud.sent_id is not None}
    use_ids = all(g.sent_id is not None for g in gold) and all(g.sent_id in by_id for g in gold)
    if not use_ids and len(uds) != len(gold):
        raise ValueError(f"{path}: {len(uds)} parsed sentences for {len(gold)} test sentences, and their "
                         f"sent_ids do not match: cannot align them")
    out = []
    for k, g in enumerate(gold):
        ud = by_id[g.sent_id] if use_ids else uds[k]
        ps, reason = preprocess_sentence(as_words(ud), split_abbreviations=False)  # already depunctuated
        where = f"{path}:{ud.line} (sent_id {ud.sent_id!r})"
        if ps is None:
            raise ValueError(f"{where}: no words ({reason})")
        if ps.words != g.words:
            raise ValueError(f"{where}: words {ps.words[:8]}... differ from the depunctuated test sentence "
                             f"{g.sent_id!r} {g.words[:8]}...")
        out.append(ps)
    return out


def attachment_scores(gold: Sequence[PunctSentence], pred: Sequence[PunctSentence]) -> dict:
    n = uas = las = 0
    for g, p in zip(gold, pred):
        for hg, hp, dg, dp in zip(g.heads, p.heads, g.deprels, p.deprels):
            n += 1
            if hg == hp:
                uas += 1
                las += dg.lower() == dp.lower()
    return {"uas": uas / n if n else 0.0, "las": las / n if n else 0.0, "n_words": n}


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
                raise ValueError(f"--parsed pattern {p!r} matches no file")
            paths.extend(matched)
        else:
            paths.append(p)
    if not paths:
        raise ValueError(f"--parsed {parsed!r} names no file")
    return paths


def evaluate_restore(model: PunctModel, test, parsed=None, method: str = "slot", n_samples: int = 1000,
                     seed: int = 0, predictions: Optional[str] = None, limit: int = 0) -> dict:
    gold, stats = preprocess_file(test)
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
           "n_samples": n_samples if method != "exact" else None, "seed": seed,
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


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model directory written by `train`")
    p.add_argument("test", help="CoNLL-U file, or a UD folder (uses its *-ud-test.conllu)")
    p.add_argument("--parsed", action="append", default=None,
                   help="CoNLL-U of the same sentences, depunctuated and parsed (default: gold trees); "
                        "repeat it or give a comma-separated list to decode from the mixture of the trees")
    p.add_argument("--method", choices=METHODS, default="slot",
                   help="slot: per-slot MBR from samples; sample: the paper's MBR over sampled sentences; "
                        "exact: per-slot MBR from exact slot marginals")
    p.add_argument("--n-samples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--predictions", default=None, help="write predictions here (JSONL)")
    p.add_argument("--limit", type=int, default=0, help="only the first N test sentences (0 = all)")


@command("evaluate-restore", "Punctuation restoration on a test treebank: AED and comma P/R/F1", _arguments)
def evaluate_restore_cli(args) -> dict:
    from .train import resolve_split

    model = PunctModel.from_disk(args.model)
    result = evaluate_restore(model, resolve_split(args.test, "test"), args.parsed, args.method,
                              args.n_samples, args.seed, args.predictions, args.limit)
    result["_text"] = "\n".join(f"{k}: {v}" for k, v in result.items())
    return result
