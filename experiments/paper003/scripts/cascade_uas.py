"""The UAS of the shipped cascade's parser on paper 003's test streams, counted as evaluate.py
counts CPP's and UPP's.

The same streams (10 consecutive test sentences, lowercased, depunctuated: the documents
evaluate.py scores) are parsed as the cascade parses them when it restores them
(``punctgen evaluate-stream shipped``: ``restore_text`` of the words joined by spaces, i.e. the
restore parser, ``spacy_punctgen.api.load.restore_parser``, over the windows of
``spacy_punctgen.api.stream.iter_pieces_at``); its tokens are aligned to the stream's words and
scored against the same gold heads (``spacy_punctgen.incremental.scoring``: the projectivised
gold trees, each sentence's root -1, the parser's roots at its own sentence starts; no
segmentation moves any gold head here). Also the UPOS accuracy of its tagger on the same words
(a word's tag: its head token's) and the seconds the parse took.

Usage:
    python experiments/paper003/scripts/cascade_uas.py UD_DIR --output OUT.json [--parser DIR]
        [--split test] [--stream-sents 10]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ud_dir", help="UD folder with the split to score")
    p.add_argument("--output", required=True)
    p.add_argument("--parser", default=None, help="spaCy parser (default: the shipped English parser)")
    p.add_argument("--split", default="test")
    p.add_argument("--stream-sents", type=int, default=10)
    args = p.parse_args(argv)

    from spacy_punctgen.api.load import restore_parser
    from spacy_punctgen.api.stream import iter_pieces_at
    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.incremental.labels import PAPER
    from spacy_punctgen.incremental.scoring import align_tokens, attachment_scores
    from spacy_punctgen.incremental.streams import sentence_docs

    path = find_split(args.ud_dir, args.split)
    docs = sentence_docs(preprocess_file(path)[0], PAPER, args.stream_sents)
    nlp = restore_parser("en", args.parser)
    heads, tags, pieces, n_tokens = [], [], 0, 0
    t0 = time.perf_counter()
    for doc in docs:
        starts, token_heads, token_tags = [], [], []
        for offset, piece in iter_pieces_at(nlp, " ".join(doc.words)):
            base = len(starts)
            starts.extend(offset + t.idx for t in piece)
            token_heads.extend(base + t.head.i for t in piece)
            token_tags.extend(t.pos_ for t in piece)
            pieces += 1
        n_tokens += len(starts)
        word_heads, head_tokens = align_tokens(doc.words, starts, token_heads)
        heads.append(word_heads)
        tags.append([token_tags[t] for t in head_tokens])
    seconds = time.perf_counter() - t0
    n_words = sum(len(d.words) for d in docs)
    record = {"system": "shipped", "parser": args.parser or "shipped", "test": str(path),
              "treebank": Path(args.ud_dir).name, "stream_sents": args.stream_sents, "n_units": len(docs),
              "n_words": n_words, "n_tokens": n_tokens, "pieces": pieces,
              **attachment_scores(heads, [d.heads for d in docs]),
              "tag_accuracy": sum(a == b for d, t in zip(docs, tags) for a, b in zip(t, d.upos)) / n_words,
              "parse_seconds": round(seconds, 2), "words_per_second": round(n_words / seconds)}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: round(100 * record[k], 1) for k in ("uas", "uas_nonroot", "tag_accuracy")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
