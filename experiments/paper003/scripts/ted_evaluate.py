"""Score a trained CPP / UPP model on the TED dev block, beside the project's TED systems
(``metrics/ted/stream/*.json``, written by ``punctgen evaluate-stream ... FILE.tsv``).

The same dev block (``spacy_punctgen.data.ted.split_blocks``: the words after the first
``--train-share``, from a sentence start), decoded as one stream (59k words: window by window,
each window starting after a full stop the one before predicted,
``spacy_punctgen.incremental.windows``), scored as ``evaluate-stream`` scores it: COMMA / PERIOD /
QUESTION, overall and mixed P/R/F1 in units of ``--unit-words`` words (the units of the
significance tests), the restored sentence ends on the whole stream; and, as paper 003 scores,
M (``,``) / F (``.`` ``?``) / mixed in the same units (``stream``).

Usage:
    python experiments/paper003/scripts/ted_evaluate.py MODEL TSV --output OUT.json [--name upp]
        [--train-share 0.8] [--unit-words 500] [--window 200] [--margin 50] [--beam K]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a model folder written by train.py")
    p.add_argument("tsv", help="TED word<TAB>label file")
    p.add_argument("--output", required=True)
    p.add_argument("--name", default=None, help="the system's name (default: the model's mode)")
    p.add_argument("--train-share", type=float, default=0.8)
    p.add_argument("--unit-words", type=int, default=500, help="words per scoring unit")
    p.add_argument("--window", type=int, default=200, help="words decoded at once")
    p.add_argument("--margin", type=int, default=50, help="words of a window after the full stop it is cut at")
    p.add_argument("--beam", type=int, default=None, help="decoding beam (default: the model's)")
    args = p.parse_args(argv)

    from spacy_punctgen.data.ted import read_ted, split_blocks
    from spacy_punctgen.evaluation import stream as S
    from spacy_punctgen.incremental.model import IncrementalPunctuator
    from spacy_punctgen.incremental.windows import predict_windows

    model = IncrementalPunctuator.from_disk(args.model)
    text = read_ted(args.tsv)
    (t0, t1), (d0, d1) = split_blocks(text, args.train_share, args.tsv)
    dev = text.block(d0, d1)
    start = time.perf_counter()
    analysis = predict_windows(model, [w.lower() for w in dev.words], args.window, args.margin, args.beam)
    seconds = time.perf_counter() - start
    gaps = [model.labels.marks[m] for m in analysis.marks]
    whole = S.Stream(dev.words, dev.marks)
    info = {"test": args.tsv, "train_block": [t0, t1], "dev_block": [d0, d1], "n_empty_dropped": text.n_empty,
            "train_share": args.train_share, "unit_words": args.unit_words, "model": args.model,
            "mode": model.mode, "labels": model.labels.name, "beam": args.beam or model.beam,
            "window": args.window, "margin": args.margin, "windows": len(analysis.starts),
            "decode_seconds": round(seconds, 2), "words_per_second": round(len(dev.words) / seconds),
            "train": {k: model.meta.get(k) for k in ("train", "best_epoch", "epochs", "seconds", "train_words")},
            "restored_boundaries": S.boundary_scores([S.gold_boundaries(whole)], [S.mark_boundaries(gaps)])}
    size = args.unit_words
    units = S.word_blocks(whole.words, whole.gold, size)
    predicted = [gaps[i:i + size] for i in range(0, len(gaps), size)]
    info["stream"] = S.evaluate_predictions(units, predicted, "stream")  # paper 003's M / F / mixed
    report = S.stream_report(args.name or model.mode, units, predicted, "ted", **info)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report) + "\n")
    s, m = report["scores"], info["stream"]["scores"]
    print(json.dumps({"system": report["system"], **{k: round(100 * s[k]["f1"], 1) for k in s},
                      **{k: round(100 * m[k]["f1"], 1) for k in ("M", "F")},
                      "words_per_second": info["words_per_second"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
