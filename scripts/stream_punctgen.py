"""Train a punctuation model for restoring streams: punctgen on the stream parser's analysis of
unpunctuated, lowercased streams of treebank sentences, with the gold marks put back.

Usage:
    python scripts/stream_punctgen.py TRAIN.conllu DEV.conllu OUTPUT_MODEL [--stream-sents 10]
        [--lower 0.5] [--parser DIR] [--epochs 2] [--direction r2l] [--max-seconds 0]
        [--average] [--compact 0.01] [--metrics OUT.json]

TRAIN and DEV (CoNLL-U files or UD folders, read like ``evaluate-stream``'s test) are cut into
streams of ``--stream-sents`` consecutive sentences and depunctuated (``spacy_punctgen.evaluation.stream.sentence_streams``: the
test streams' form); a seeded share ``--lower`` of them is lowercased (speech-recogniser output
has no case, typed text has; the shipped parser is trained on the same even split); each stream is
parsed in windows as restoration parses it (the parser with the restore tokenizer,
``spacy_punctgen.api.load.restore_parser``), and the parser's sentences, with each
gold mark in the slot after the word it follows, are the training (and dev) sentences
(``spacy_punctgen.api.stream_training``). DEV only picks the epoch. The recipe is the one
the workflow's tuned runs use (lr 0.001, full passes, psi_keep_bias 3, psi_lr_scale 10);
``--compact T`` then drops the features with ``|θ| <= T`` and stores θ as float16, as the shipped
models are (``PunctModel.compacted``), and records the dev perplexity before and after.
"""
from __future__ import annotations

import argparse
import sys
import time


def _sentences(nlp, path, split, size, lower, seed, counts):
    from spacy_punctgen.data.conllu import resolve_split
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.data.stream import lowercase_choices
    from spacy_punctgen.evaluation.stream import sentence_streams
    from spacy_punctgen.api.stream_training import stream_training_sentences

    streams = sentence_streams(preprocess_file(resolve_split(path, split))[0], size=size, lower=False)
    out = []
    for low, stream in zip(lowercase_choices(len(streams), lower, seed), streams):
        words = [w.lower() for w in stream.words] if low else stream.words
        out.extend(stream_training_sentences(nlp, words, stream.gold, counts=counts))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("train", help="CoNLL-U file or UD folder: the training streams' sentences")
    p.add_argument("dev", help="CoNLL-U file or UD folder: the dev streams' sentences (picks the epoch)")
    p.add_argument("output", help="model folder to write")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--lower", type=float, default=0.5, help="share of the streams lowercased (seeded)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compact", type=float, default=None, help="compact the model at this |θ| threshold (float16)")
    p.add_argument("--parser", default=None, help="spaCy parser (default: the shipped English parser)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--direction", default="r2l")
    p.add_argument("--max-seconds", type=float, default=0.0)
    p.add_argument("--average", action="store_true", help="averaged parameters (as the shipped en_ewt model)")
    p.add_argument("--metrics", default=None, help="write the training record here (JSON)")
    args = p.parse_args(argv)

    from spacy_punctgen.api.load import restore_parser
    from spacy_punctgen.api.stream_training import AlignmentCounts
    from spacy_punctgen.training.train import TrainConfig, train_model
    from spacy_punctgen.workflow.metrics_files import report_training

    t0 = time.perf_counter()
    nlp = restore_parser("en", args.parser)  # what load("en", parser=...) parses with
    counts = {"train": AlignmentCounts(), "dev": AlignmentCounts()}
    train = _sentences(nlp, args.train, "train", args.stream_sents, args.lower, args.seed, counts["train"])
    dev = _sentences(nlp, args.dev, "dev", args.stream_sents, args.lower, args.seed, counts["dev"])
    t_parse = time.perf_counter() - t0
    cfg = TrainConfig(direction=args.direction, epochs=args.epochs, lr=0.001, sentences_per_epoch=0,
                      psi_keep_bias=3.0, psi_lr_scale=10.0, max_seconds=args.max_seconds,
                      average=args.average)
    model, info = train_model(train, dev, cfg)
    if args.compact is not None:
        def perplexity_per_slot(m, sents):
            return m.perplexity(m.prepare_eval(sents))["perplexity_per_slot"]

        before = perplexity_per_slot(model, dev)
        n_before = len(model.theta)
        model = model.compacted(args.compact, float16=True)
        info["compacted"] = {"threshold": args.compact, "float16": True, "n_features_before": n_before,
                             "n_features_after": len(model.theta),
                             "dev_perplexity_per_slot_before": before,
                             "dev_perplexity_per_slot_after": perplexity_per_slot(model, dev)}
        model.meta["compacted"] = info["compacted"]
    model.to_disk(args.output)
    record = {"train": args.train, "dev": args.dev, "stream_sents": args.stream_sents,
              "parser": args.parser or "shipped", "sentences_train": len(train), "sentences_dev": len(dev),
              "alignment": {k: c.as_dict() for k, c in counts.items()},
              "parse_seconds": round(t_parse, 1), "total_seconds": round(time.perf_counter() - t0, 1),
              "epochs": args.epochs, "direction": args.direction, "output": args.output,
              "lower": args.lower, "seed": args.seed, "average": args.average,
              "train_info": {k: v for k, v in info.items() if isinstance(v, (int, float, str, dict))}}
    report_training(record, args.metrics)
    return 0


if __name__ == "__main__":
    sys.exit(main())
