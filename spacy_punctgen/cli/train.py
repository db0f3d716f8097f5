"""``punctgen train``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.training.train`."""
from __future__ import annotations
import argparse
from pathlib import Path
from spacy_punctgen.data.conllu import resolve_split  # noqa: F401  (also imported from here by demo, bench, evaluate_restore)
from spacy_punctgen.features.templates import ALL_TEMPLATES, DEFAULT_TEMPLATES

from spacy_punctgen.cli import (bounded, check_output_dir, command, finite_float, non_negative_float,
                                non_negative_int, positive_float, positive_int, seed_int, to_json)
from spacy_punctgen.evaluation.metrics import require_sentences
from spacy_punctgen.training.train import TrainConfig, parse_templates, train_model, with_parsed_trees
from spacy_punctgen.data.preprocess import load_split
from spacy_punctgen.errors import Errors


def _one_or_list(paths):
    """The model's record of ``--parsed-train``: the path itself for one file (as before), else the list."""
    if paths is None or len(paths) > 1:
        return paths
    return paths[0]


def _arguments(p: argparse.ArgumentParser) -> None:
    d = TrainConfig()
    p.add_argument("train", help="training CoNLL-U file, or a UD folder (uses its *-ud-train.conllu)")
    p.add_argument("dev", help="dev CoNLL-U file, or a UD folder (uses its *-ud-dev.conllu)")
    p.add_argument("--output", "-o", required=True, help="model directory to write")
    p.add_argument("--channel", "--mode", dest="channel", choices=["full", "attach"], default=d.channel,
                   help="full: ATTACH + NOISYCHANNEL; attach: no channel (the paper's ablation)")
    p.add_argument("--direction", choices=["auto", "l2r", "r2l"], default=d.direction)
    p.add_argument("--epochs", type=non_negative_int, default=d.epochs)
    p.add_argument("--lr", type=positive_float, default=d.lr)
    p.add_argument("--batch-size", type=positive_int, default=d.batch_size)
    p.add_argument("--sentences-per-epoch", type=non_negative_int, default=d.sentences_per_epoch,
                   help="sentences drawn per epoch (paper: 400); 0 = full pass")
    p.add_argument("--xi", type=non_negative_float, default=d.xi, help="posterior-regularisation weight ξ")
    p.add_argument("--l2", type=non_negative_float, default=d.l2, help="L2 coefficient ς (whole-treebank objective)")
    p.add_argument("--seed", type=seed_int, default=d.seed)
    p.add_argument("--theta-init", type=non_negative_float, default=d.theta_init, help="std of initial θ (paper: 1)")
    p.add_argument("--psi-init", type=non_negative_float, default=d.psi_init, help="std of initial ψ (paper: 1)")
    p.add_argument("--psi-keep-bias", type=finite_float, default=d.psi_keep_bias,
                   help="added to the initial 'keep' logits (0 = paper's plain N(0,1) start)")
    p.add_argument("--psi-lr-scale", type=non_negative_float, default=d.psi_lr_scale,
                   help="learning-rate multiplier for the channel parameters ψ")
    p.add_argument("--average", action="store_true", help="score and keep moving averages of the parameters")
    p.add_argument("--patience", type=non_negative_int, default=d.patience,
                   help="stop after this many epochs without a better dev perplexity (0 = never)")
    p.add_argument("--max-seconds", type=non_negative_float, default=d.max_seconds,
                   help="stop before an epoch (with its dev evaluation) that would end past this many seconds")
    p.add_argument("--smooth-delta", type=bounded(float, 0, 1, high_open=True), default=d.smooth_delta,
                   help="evaluation-time smoothing: mass given to pairs outside W_d (0 = off)")
    p.add_argument("--min-count", type=non_negative_int, default=d.min_count, help="rare-word threshold")
    p.add_argument("--pairs-mode", choices=["full", "halves"], default=d.pairs_mode)
    p.add_argument("--templates", default=None,
                   help="comma-separated feature templates; 'default' stands for the default set "
                        f"({','.join(DEFAULT_TEMPLATES)}), e.g. default,global_words; known: "
                        f"{','.join(ALL_TEMPLATES)}")
    p.add_argument("--jobs", type=positive_int, default=d.jobs, help="processes for --direction auto (max 2)")
    p.add_argument("--parsed-train", nargs="+", default=None, metavar="FILE",
                   help="depunctuated CoNLL-U with a parser's trees of the training sentences (e.g. jackknifed, "
                        "scripts/folds.py): train on those trees with the gold punctuation; several files (e.g. "
                        "trees drawn from the fold parsers) each add every sentence once more with their trees")
    p.add_argument("--keep-gold", action="store_true",
                   help="with --parsed-train: train on the gold trees as well (each sentence twice)")
    p.add_argument("--parsed-dev", default=None,
                   help="the parser's trees of the dev sentences: select epochs and direction on those")
    p.add_argument("--quiet", action="store_true", help="no progress output")


@command("train", "Train a punctuation model (full or ATTACH) and keep the best on dev", _arguments)
def train_cli(args) -> dict:
    templates = parse_templates(args.templates)
    cfg = TrainConfig(channel=args.channel, direction=args.direction, epochs=args.epochs, lr=args.lr,
                      batch_size=args.batch_size, sentences_per_epoch=args.sentences_per_epoch,
                      xi=args.xi, l2=args.l2, seed=args.seed, theta_init=args.theta_init,
                      psi_init=args.psi_init, psi_keep_bias=args.psi_keep_bias, psi_lr_scale=args.psi_lr_scale,
                      average=args.average, smooth_delta=args.smooth_delta,
                      patience=args.patience, max_seconds=args.max_seconds, min_count=args.min_count,
                      pairs_mode=args.pairs_mode, templates=templates, jobs=args.jobs,
                      progress=not args.quiet)
    check_output_dir(args.output, "--output")
    train_path = resolve_split(args.train, "train")
    dev_path = resolve_split(args.dev, "dev")
    train_sents, train_stats, quote_xpos = load_split(train_path)
    dev_sents, dev_stats, _ = load_split(dev_path)
    if args.keep_gold and not args.parsed_train:
        raise ValueError(Errors.E623)
    if args.parsed_train:
        parsed = [sent for path in args.parsed_train for sent in with_parsed_trees(train_sents, path)]
        train_sents = train_sents + parsed if args.keep_gold else parsed
    if args.parsed_dev:
        dev_sents = with_parsed_trees(dev_sents, args.parsed_dev)
    if not train_sents:
        raise ValueError(Errors.E624.format(path=train_path))
    require_sentences(dev_sents, dev_stats, args.parsed_dev or dev_path, "select the model on")
    model, summary = train_model(train_sents, dev_sents, cfg)
    model.meta.update({"train_file": str(train_path), "dev_file": str(dev_path), "quote_xpos": quote_xpos,
                       "parsed_train": _one_or_list(args.parsed_train), "keep_gold": bool(args.keep_gold),
                       "parsed_dev": args.parsed_dev})
    out = model.to_disk(args.output)
    (Path(out) / "training.json").write_text(to_json(summary, indent=2) + "\n",
                                             encoding="utf-8")
    result = {
        "output": str(out),
        "mode": model.mode,
        "direction": model.direction,
        "directions_tried": summary["directions_tried"],
        "dev_perplexity_per_slot": summary["dev_perplexity_per_slot"],
        "best_epoch": summary["best_epoch"],
        "n_features": model.n_features,
        "n_train": len(train_sents),
        "n_dev": len(dev_sents),
        "train_omitted": train_stats.omitted_nonleaf + train_stats.omitted_empty,
        "train_seconds": summary["train_seconds"],
        "prepare_seconds": summary["prepare_seconds"],
    }
    lines = [f"{k}: {v}" for k, v in result.items()]
    result["_text"] = "\n".join(lines)
    return result
