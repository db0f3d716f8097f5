"""``punctgen baseline SYSTEM``: train (or load) a restoration baseline, predict the test
split, write the predictions file and score it with :mod:`spacy_punctgen.evaluation.metrics`.

Dev is scored too, so hyperparameters (``--hyper key=value``) are tuned on dev with the
same command; ``--tune key=v1,v2,...`` runs that grid here and keeps the best on dev
(:mod:`.tune`).  ``--parsed-test`` replaces the test sentences' UPOS/XPOS/heads/relations
by those of a parsed copy of the test file (same words), for systems that read them;
purely lexical systems ignore it.
"""
from __future__ import annotations

import argparse
import time
from typing import Dict, List

from spacy_punctgen.cli import check_output_dir, check_output_file, command
from spacy_punctgen.evaluation.metrics import gold_slots, require_sentences, restoration_report
from spacy_punctgen.evaluation.predictions import record, write_predictions
from spacy_punctgen.baselines import SYSTEMS, get_system
from spacy_punctgen.baselines.base import load_baseline
from spacy_punctgen.baselines.slots import perplexity_per_slot
from spacy_punctgen.baselines.tune import PointCache, json_or_str, parse_grid, select_on_dev
from spacy_punctgen.errors import Errors


def parse_hyper(items: List[str]) -> Dict:
    out = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(Errors.E610.format(item=item))
        k, v = item.split("=", 1)
        out[k] = json_or_str(v)
    return out


def apply_parse(gold, path) -> None:
    """Copy the annotations of PATH (a parsed, depunctuated copy of the test file) onto the
    gold sentences.  It is read exactly as ``evaluate-restore --parsed`` reads it (aligned by
    ``sent_id``, words already depunctuated, so abbreviations are not split again), and the
    words must agree."""
    from spacy_punctgen.data.parsed import parsed_sentences

    for g, p in zip(gold, parsed_sentences(path, gold)):
        g.upos, g.xpos, g.heads, g.deprels = p.upos, p.xpos, p.heads, p.deprels


def score(system, sents) -> Dict:
    pred = system.predict(sents)
    rep = restoration_report(gold_slots(sents), pred)
    lps = None
    if system.probabilistic:
        lps = system.slot_log_probs(sents)
        rep["perplexity_per_slot"] = perplexity_per_slot(lps, sents)
    return {"report": rep, "pred": pred, "logprobs": lps}


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("system", choices=sorted(SYSTEMS))
    p.add_argument("--train", help="CoNLL-U file or UD folder (its *-ud-train.conllu)")
    p.add_argument("--dev", help="CoNLL-U file or UD folder (its *-ud-dev.conllu)")
    p.add_argument("--test", required=True, help="CoNLL-U file or UD folder (its *-ud-test.conllu)")
    p.add_argument("--parsed-test", help="parsed copy of the test file (same words)")
    p.add_argument("--predictions", help="write test predictions here (JSON Lines)")
    p.add_argument("--hyper", action="append", default=[], metavar="KEY=VALUE",
                   help="hyperparameter of the system (repeatable; values parsed as JSON)")
    p.add_argument("--tune", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="grid of a hyperparameter (repeatable: the product is searched); "
                        "the system with the lowest dev AED is kept. Needs --dev; an empty "
                        "value is no grid")
    p.add_argument("--tune-cache", metavar="DIR",
                   help="with --tune: keep every fitted grid point here, so that a stopped grid "
                        "search resumes (a point is reused only with the same system, "
                        "hyperparameters, train/dev files and baselines code)")
    p.add_argument("--decoder", choices=("viterbi", "mbr"),
                   help="decode a trained/loaded system this way (CRFs and neural taggers): "
                        "Viterbi/argmax, or per-slot minimum expected edit distance")
    p.add_argument("--save", help="save the trained system to this directory")
    p.add_argument("--load", help="load a saved system instead of training")


@command("baseline", "Train/evaluate a restoration baseline (trivial, CRFs, neural taggers, spaCy tagger)",
         _arguments)
def baseline_cli(args) -> dict:
    from spacy_punctgen.data.preprocess import load_split
    from spacy_punctgen.data.conllu import resolve_split

    check_output_file(args.predictions, "--predictions")
    check_output_dir(args.save, "--save")
    check_output_dir(args.tune_cache, "--tune-cache")
    # the test file is read first, so that an unusable one is refused before any training
    t_test = time.perf_counter()
    test_path = resolve_split(args.test, "test")
    test, test_stats, _ = load_split(test_path)
    require_sentences(test, test_stats, test_path, "score")
    t0 = time.perf_counter()
    t_test = t0 - t_test
    tuning = None
    dev_path = resolve_split(args.dev, "dev") if args.dev else None
    dev = None
    if dev_path:
        dev, dev_stats, _ = load_split(dev_path)
        require_sentences(dev, dev_stats, dev_path, "score")
    if args.load:
        if any(args.tune) or args.tune_cache:
            raise ValueError(Errors.E611)
        system = load_baseline(args.load)
        if system.name != args.system:
            raise ValueError(Errors.E612.format(path=args.load, held=system.name, system=args.system))
    else:
        if not args.train:
            raise ValueError(Errors.E613)
        train_path = resolve_split(args.train, "train")
        train = load_split(train_path)[0]
        grid, fixed = parse_grid(args.tune), parse_hyper(args.hyper)
        if grid:
            if dev is None:
                raise ValueError(Errors.E614)
            cache = (PointCache(args.tune_cache, args.system, [train_path, dev_path])
                     if args.tune_cache else None)
            system, tuning = select_on_dev(
                lambda hyper: get_system(args.system)().fit(train, dev, **hyper),
                lambda s: score(s, dev)["report"], grid, fixed, cache)
        else:
            system = get_system(args.system)().fit(train, dev, **fixed)
    t_fit = time.perf_counter() - t0
    if args.decoder:
        system.set_decoder(args.decoder)
    if args.save:
        system.to_disk(args.save)
    if args.parsed_test:
        apply_parse(test, resolve_split(args.parsed_test, "test"))
    result: Dict = {"system": args.system, "test_file": str(test_path),
                    "hyper": getattr(system, "hyper", {}), "fit_seconds": round(t_fit, 1)}
    if tuning is not None:
        result["tuning"] = tuning
    if dev is not None:
        result["dev"] = score(system, dev)["report"]
    res = score(system, test)
    result["test"] = res["report"]
    if args.predictions:
        lps = res["logprobs"] or [None] * len(test)
        write_predictions(args.predictions, (record(p, s.sent_id, logprob=lp)
                                             for p, s, lp in zip(res["pred"], test, lps)))
        result["predictions"] = args.predictions
    result["seconds"] = round(time.perf_counter() - t0 + t_test, 1)
    lines = [f"{args.system}: fit {result['fit_seconds']} s"]
    for row in tuning or []:
        mark = (" (cached)" if row.get("cached") else "") + (" (chosen)" if row["chosen"] else "")
        lines.append(f"dev grid {row['hyper']}: AED {row['dev_aed']:.4f}{mark}")
    for split in ("dev", "test"):
        if split in result:
            r = result[split]
            ppl = f" ppl/slot {r['perplexity_per_slot']:.4f}" if "perplexity_per_slot" in r else ""
            lines.append(f"{split}: AED {r['aed']:.4f} comma F1 {r['comma']['f1']:.4f}{ppl}")
    result["_text"] = "\n".join(lines)
    return result
