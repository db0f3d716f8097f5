"""Train a TED-adapted punctuation model: punctgen on the TED training block's punctuated text,
with trees from the shipped parser (TED has no treebank).

Usage:
    python scripts/ted_punctgen.py TSV OUTPUT_MODEL [--train-share 0.8] [--limit-words 0]
        [--dev-share 0.1] [--epochs 2] [--direction r2l] [--max-seconds 0] [--metrics OUT.json]
        [--trees punctuated|stream] [--parser DIR] [--average] [--templates default,NAME,...]

The training block of TSV (``spacy_punctgen.data.ted.split_blocks``, the same cut as
``evaluate-stream``) is written as lowercased text with its marks (``word,`` ``word.`` ``word?``),
parsed in windows by the shipped parser (``spacy_punctgen.api.stream.iter_pieces``: the
parser finds the sentences from the punctuation), and every parsed sentence becomes a training
sentence (``doc_convert.punct_sentences``: the words, the tree, the marks in the slots). With ``--trees stream`` the block is instead parsed as the restorer
will see it, as one unpunctuated stream (``spacy_punctgen.api.stream_training``): the
training sentences are the parser's sentences of the unpunctuated text, with the gold marks put
back into their slots, so the model learns where marks fall on the trees and boundaries that
the stream parser finds. ``--parser`` names another parser than the shipped one. The last
``--dev-share`` of those sentences chooses the epoch; the TED dev block is never seen. The recipe
is the one the workflow's tuned runs use (lr 0.001, full passes, psi_keep_bias 3, psi_lr_scale 10).
``--templates`` chooses the feature templates as ``punctgen train --templates`` does (``default``
stands for the default set, e.g. ``default,clause_seq,clause_start,clause_end``; docs/features.md).
"""
from __future__ import annotations

import argparse
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tsv", help="TED word<TAB>label file")
    p.add_argument("output", help="model folder to write")
    p.add_argument("--train-share", type=float, default=0.8)
    p.add_argument("--limit-words", type=int, default=0, help="only the first N words of the training block")
    p.add_argument("--dev-share", type=float, default=0.1, help="share of the parsed sentences held out for dev")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--direction", default="r2l")
    p.add_argument("--max-seconds", type=float, default=0.0)
    p.add_argument("--average", action="store_true", help="averaged parameters (as the shipped en_ewt model)")
    p.add_argument("--metrics", default=None, help="write the training record here (JSON)")
    p.add_argument("--trees", choices=("punctuated", "stream"), default="punctuated",
                   help="parse the punctuated text (the parser's boundaries from the marks) or the "
                        "unpunctuated stream, as restoration does, with the gold marks put back")
    p.add_argument("--parser", default=None, help="spaCy parser (default: the shipped English parser)")
    p.add_argument("--templates", default=None,
                   help="comma-separated feature templates, 'default' standing for the default set "
                        "(e.g. default,clause_seq,clause_start,clause_end); default: the default set")
    args = p.parse_args(argv)

    import spacy

    from spacy_punctgen.data.ted import read_ted, split_blocks
    from spacy_punctgen.features.templates import FeatureConfig
    from spacy_punctgen.pipeline.doc_convert import punct_sentences
    from spacy_punctgen.api.load import restore_parser, shipped_parser_path
    from spacy_punctgen.api.stream import iter_pieces
    from spacy_punctgen.api.stream_training import AlignmentCounts, stream_training_sentences
    from spacy_punctgen.training.train import TrainConfig, parse_templates, train_model
    from spacy_punctgen.workflow.metrics_files import report_training

    templates = parse_templates(args.templates)
    if templates is not None:  # unknown names fail now, before the parse (E217)
        FeatureConfig(templates=templates)
    t0 = time.perf_counter()
    text = read_ted(args.tsv)
    (a, b), _ = split_blocks(text, args.train_share, args.tsv)
    if args.limit_words:
        b = min(b, a + args.limit_words)
    block = text.block(a, b)
    counts = AlignmentCounts()
    if args.trees == "stream":  # parsed as restoration parses (the restore tokenizer)
        nlp = restore_parser("en", args.parser)
        sents = list(stream_training_sentences(nlp, block.words, block.marks, progress=sys.stderr,
                                               counts=counts))
    else:
        nlp = spacy.load(args.parser or shipped_parser_path("en"))
        punctuated = " ".join(w + m for w, m in zip(block.words, block.marks))
        sents = [ps for piece in iter_pieces(nlp, punctuated, progress=sys.stderr)
                 for _, ps, _ in punct_sentences(piece) if ps is not None]
    t_parse = time.perf_counter() - t0
    n_dev = max(1, round(args.dev_share * len(sents)))
    train, dev = sents[:-n_dev], sents[-n_dev:]
    cfg = TrainConfig(direction=args.direction, epochs=args.epochs, lr=0.001, sentences_per_epoch=0,
                      psi_keep_bias=3.0, psi_lr_scale=10.0, max_seconds=args.max_seconds,
                      average=args.average, templates=templates)
    model, info = train_model(train, dev, cfg)
    model.to_disk(args.output)
    record = {"tsv": args.tsv, "train_block": [a, b], "words": b - a, "sentences_train": len(train),
              "sentences_dev": len(dev), "trees": args.trees,
              "parser": args.parser or "shipped", "parse_seconds": round(t_parse, 1),
              "total_seconds": round(time.perf_counter() - t0, 1), "epochs": args.epochs, "average": args.average,
              "direction": args.direction, "output": args.output,
              "templates": list(cfg.feature_config().templates),
              **({"alignment": counts.as_dict()} if args.trees == "stream" else {}),
              "train_info": {k: v for k, v in info.items() if isinstance(v, (int, float, str))}}
    report_training(record, args.metrics)
    return 0


if __name__ == "__main__":
    sys.exit(main())
