"""The lexical expert of an adapted model on its own: its most probable kind of mark after each
word of a TED file's dev block (the part ``--share`` left out, as ``evaluate-stream`` scores it),
scored per class (COMMA, PERIOD, QUESTION) and overall, P/R/F1. What the product of experts is
measured against besides punctgen alone (docs/adapt.md).

Usage:
    python scripts/lexical_expert_alone.py MODEL_DIR TSV [--share 0.8] [--output OUT.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a punctgen model folder with a lexical expert (punctgen adapt)")
    p.add_argument("tsv", help="word<TAB>label file")
    p.add_argument("--share", type=float, default=0.8)
    p.add_argument("--output", default=None)
    args = p.parse_args(argv)

    from spacy_punctgen.data.ted import read_ted, split_blocks
    from spacy_punctgen.model.lexical import CLASSES, mark_class
    from spacy_punctgen.model.punct_model import PunctModel

    expert = PunctModel.from_disk(args.model).lexical
    if expert is None:
        print(f"{args.model} has no lexical expert", file=sys.stderr)
        return 1
    text = read_ted(args.tsv)
    _, (a, b) = split_blocks(text, args.share, args.tsv)
    best = expert.predict(text.words[a:b]).argmax(1)
    tp, fp, fn = Counter(), Counter(), Counter()
    for k, marks in zip(best, text.marks[a:b]):
        gold, guess = mark_class(marks.split()), CLASSES[k]
        if gold and gold == guess:
            tp[gold] += 1
        else:
            fp[guess] += bool(guess)
            fn[gold] += bool(gold)

    def prf(t, f, n):
        P, R = t / max(t + f, 1), t / max(t + n, 1)
        return {"precision": P, "recall": R, "f1": 2 * P * R / (P + R) if P + R else 0.0, "tp": t, "fp": f, "fn": n}

    scores = {name: prf(tp[c], fp[c], fn[c]) for name, c in (("COMMA", ","), ("PERIOD", "."), ("QUESTION", "?"))}
    scores["overall"] = prf(sum(tp.values()), sum(fp.values()), sum(fn.values()))
    record = {"system": "lexical_expert_alone", "model": args.model, "test": args.tsv, "dev_block": [a, b],
              "scores": scores}
    print(" ".join(f"{k} F1 {100 * v['f1']:.1f}" for k, v in scores.items()))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
