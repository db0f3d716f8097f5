"""Training documents of CPP / UPP from the TED training block: silver trees, gold marks.

TED has no treebank, so the trees come from the shipped parser of unpunctuated text, as
``scripts/ted_punctgen.py --trees stream`` gets them for punctgen: the training block
(``spacy_punctgen.data.ted.split_blocks``, the cut ``evaluate-stream`` makes; the dev block is
never read) is parsed as restoration parses it, as one lowercased unpunctuated stream
(``spacy_punctgen.api.stream_training``: the parser's own sentences and trees, its tagger's UPOS,
each gold mark put back after the word it follows), and every ``--stream-sents`` consecutive
parsed sentences become one document (``spacy_punctgen.incremental.streams.sentence_docs``), whose
full stops (the gold's) cut the parser's trees where they fall inside one
(``segment_heads``), as EWT's unmarked sentence ends do.

Usage:
    python experiments/paper003/scripts/ted_silver.py TSV OUT.jsonl [--train-share 0.8]
        [--stream-sents 10] [--parser DIR] [--metrics OUT.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tsv", help="TED word<TAB>label file")
    p.add_argument("output", help="the documents (.jsonl) to write")
    p.add_argument("--train-share", type=float, default=0.8)
    p.add_argument("--stream-sents", type=int, default=10, help="parsed sentences per document")
    p.add_argument("--parser", default=None, help="spaCy parser (default: the shipped English parser)")
    p.add_argument("--metrics", default=None, help="write the record here (JSON)")
    args = p.parse_args(argv)

    from spacy_punctgen.api.load import restore_parser
    from spacy_punctgen.api.stream_training import AlignmentCounts, stream_training_sentences
    from spacy_punctgen.data.ted import read_ted, split_blocks
    from spacy_punctgen.incremental.labels import PAPER
    from spacy_punctgen.incremental.streams import save_docs, sentence_docs

    t0 = time.perf_counter()
    text = read_ted(args.tsv)
    (a, b), _ = split_blocks(text, args.train_share, args.tsv)
    block = text.block(a, b)
    nlp = restore_parser("en", args.parser)
    counts = AlignmentCounts()
    sentences = list(stream_training_sentences(nlp, [w.lower() for w in block.words], block.marks,
                                               progress=sys.stderr, counts=counts))
    docs = sentence_docs(sentences, PAPER, args.stream_sents)
    save_docs(docs, args.output)
    record = {"tsv": args.tsv, "train_share": args.train_share, "train_block": [a, b], "output": args.output,
              "parser": args.parser or "shipped", "stream_sents": args.stream_sents, "docs": len(docs),
              "doc_words": sum(len(d.words) for d in docs), "alignment": counts.as_dict(),
              "seconds": round(time.perf_counter() - t0, 1)}
    if args.metrics:
        Path(args.metrics).parent.mkdir(parents=True, exist_ok=True)
        Path(args.metrics).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
