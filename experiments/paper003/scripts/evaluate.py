"""Score a trained CPP / UPP model in paper 003's setting: the treebank's test split in streams of
10 consecutive sentences, lowercased and depunctuated; P/R/F1 of M, F, overall and mixed
(``spacy_punctgen.evaluation.stream``, the project's stream scores, with the per-stream counts the
significance tests need), the UAS of its trees against the projectivised gold trees
(``spacy_punctgen.incremental.scoring``, as cascade_uas.py scores the cascade's parser), and its
decoding speed (optionally beside a spaCy parser's on the same streams).

Usage:
    python experiments/paper003/scripts/evaluate.py MODEL UD_DIR --output OUT.json [--name upp]
        [--split test] [--stream-sents 10] [--beam K] [--spacy-parser DIR]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def spacy_seconds(parser_dir, streams) -> dict:
    """Seconds a spaCy pipeline takes to parse the same streams (pre-tokenised words)."""
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(parser_dir)
    docs = [Doc(nlp.vocab, words=s.words) for s in streams]
    t0 = time.perf_counter()
    for doc in docs:
        for _name, proc in nlp.pipeline:
            doc = proc(doc)
    return {"spacy_parser": str(parser_dir), "spacy_seconds": round(time.perf_counter() - t0, 2)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a model folder written by train.py")
    p.add_argument("ud_dir", help="UD folder with the split to score")
    p.add_argument("--output", required=True)
    p.add_argument("--name", default=None, help="the system's name (default: the model's mode)")
    p.add_argument("--split", default="test")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--beam", type=int, default=None, help="decoding beam (default: the model's)")
    p.add_argument("--spacy-parser", default=None, help="also time this spaCy pipeline on the same streams")
    args = p.parse_args(argv)

    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.evaluation.stream import evaluate_predictions, sentence_streams, stream_report
    from spacy_punctgen.incremental.model import IncrementalPunctuator
    from spacy_punctgen.incremental.scoring import attachment_scores
    from spacy_punctgen.incremental.streams import sentence_docs

    model = IncrementalPunctuator.from_disk(args.model)
    path = find_split(args.ud_dir, args.split)
    sentences = preprocess_file(path)[0]
    streams = sentence_streams(sentences, size=args.stream_sents, lower=True)
    docs = sentence_docs(sentences, model.labels, args.stream_sents)
    t0 = time.perf_counter()
    predicted, heads = [], []
    for doc in docs:
        h, marks = model.predict(doc.words, beam=args.beam)
        heads.append(h)
        predicted.append([model.labels.marks[m] for m in marks])
    seconds = time.perf_counter() - t0
    n_words = sum(len(d.words) for d in docs)
    attachment = attachment_scores(heads, [d.heads for d in docs])
    tagged = [model.tagger(d.words) for d in docs]
    tag_accuracy = sum(a == b for d, t in zip(docs, tagged) for a, b in zip(t, d.upos)) / n_words
    moved = sum(a != b for d in docs for a, b in zip(d.train_heads(model.labels), d.heads)) / n_words
    info = {"test": str(path), "stream_sents": args.stream_sents, "model": args.model,
            "mode": model.mode, "labels": model.labels.name, "beam": args.beam or model.beam,
            "uas": attachment["uas"], "uas_nonroot": attachment["uas_nonroot"],
            "tag_accuracy": tag_accuracy, "heads_moved_by_segmentation": moved,
            "decode_seconds": round(seconds, 2), "words_per_second": round(n_words / seconds),
            "train": {k: model.meta.get(k) for k in ("train", "best_epoch", "epochs", "seconds", "train_words")},
            "treebank": Path(args.ud_dir).name}
    # the finer classes users want (comma, period, question mark: the IWSLT folding of the marks)
    info["ted_scores"] = evaluate_predictions(streams, predicted, "ted")["scores"]
    if args.spacy_parser:
        try:
            info.update(spacy_seconds(args.spacy_parser, streams))
        except (ImportError, OSError, ValueError) as err:  # the timing is a side figure: keep the scores
            info["spacy_error"] = f"{type(err).__name__}: {err}"
    report = stream_report(args.name or model.mode, streams, predicted, "stream", **info)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report) + "\n")
    s = report["scores"]
    print(json.dumps({"system": report["system"], **{k: round(100 * s[k]["f1"], 1) for k in ("M", "F", "overall", "mixed")},
                      "uas": round(100 * info["uas"], 1), "words_per_second": info["words_per_second"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
