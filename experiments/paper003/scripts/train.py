"""Train paper 003's CPP or UPP on the 10-sentence lowercased depunctuated streams of a UD
treebank's train split (the epoch picked on its dev streams), or on a file of stream documents
(``ted_silver.py``'s TED documents: silver trees, gold marks), whose last ``--dev-share`` picks
the epoch.

Usage:
    python experiments/paper003/scripts/train.py UD_DIR|DOCS.jsonl OUTPUT_MODEL [--mode upp|cpp] [--epochs 10]
        [--beam 5] [--labels paper|fine] [--buckets 20] [--stream-sents 10] [--dev-share 0.1] [--seed 0]
        [--metrics OUT.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data", help="UD folder with *-ud-train.conllu (and *-ud-dev.conllu), or a .jsonl file of "
                   "stream documents (ted_silver.py)")
    p.add_argument("output", help="model folder to write")
    p.add_argument("--mode", choices=("upp", "cpp"), default="upp")
    p.add_argument("--labels", choices=("paper", "fine"), default="paper")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--beam", type=int, default=5, help="the paper's beam: 5")
    p.add_argument("--buckets", type=int, default=20, help="log2 of the hash buckets")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--dev-share", type=float, default=0.1,
                   help="a .jsonl file: the share of its documents (the last ones) that picks the epoch")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--metrics", default=None, help="write the training record here (JSON)")
    args = p.parse_args(argv)

    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.incremental.labels import get_labels
    from spacy_punctgen.incremental.model import IncrementalPunctuator
    from spacy_punctgen.incremental.streams import load_docs, sentence_docs

    labels = get_labels(args.labels)
    if args.data.endswith(".jsonl"):  # documents made elsewhere: the last ones are the dev set
        docs = load_docs(args.data, labels)
        n_dev = max(1, round(args.dev_share * len(docs))) if 0 < args.dev_share < 1 else 0
        train, dev = docs[:len(docs) - n_dev], docs[len(docs) - n_dev:]
        train_path, dev_path = args.data, f"{args.data} (the last {n_dev} documents)" if n_dev else None
    else:
        train_path, dev_path = find_split(args.data, "train"), find_split(args.data, "dev")
        train = sentence_docs(preprocess_file(train_path)[0], labels, args.stream_sents)
        dev = sentence_docs(preprocess_file(dev_path)[0], labels, args.stream_sents) if dev_path else []
    model = IncrementalPunctuator(args.mode, args.labels, args.beam, 2 ** args.buckets)
    info = model.fit(train, dev, epochs=args.epochs, seed=args.seed, log=lambda s: print(s, flush=True))
    model.meta.update({"train": str(train_path), "dev": str(dev_path) if dev_path else None,
                       "stream_sents": None if args.data.endswith(".jsonl") else args.stream_sents,
                       "seed": args.seed})
    model.to_disk(args.output)
    record = {**model.meta, "output": args.output}
    if args.metrics:
        Path(args.metrics).parent.mkdir(parents=True, exist_ok=True)
        Path(args.metrics).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: v for k, v in info.items() if k != "history"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
