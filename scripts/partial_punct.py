"""Partially punctuated input completed, not wiped: keep a random half of the gold marks of
lowercased 10-sentence streams in the input, restore, and score the other gaps.

Reports, for ``load("en")`` (or ``--model``): how many kept marks survive (all of a gap's kept
marks still there, in order; and how many of those gaps got nothing added), and on the
gaps whose marks were not kept, the edit distance per gap (characters, lower is better) and the
F1 of the stream classes (M: , ; :  F: . ? !), once from the partial input and once from the
same words with no marks at all.

    python scripts/partial_punct.py ../shared/ud/en_ewt/en_ewt-ud-test.conllu --output metrics/en_ewt/restore/partial_punct.json
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from spacy_punctgen.decode.render import OPENING


def levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def stream_input(words, gaps, kept) -> str:
    """The words with the kept gaps' marks written: closing marks after the word, openers before
    the next word."""
    out = []
    pending_open = ""
    for i, w in enumerate(words):
        out.append(pending_open + w)
        pending_open = ""
        if i in kept:
            marks = gaps[i].split()
            k = next((j for j, m in enumerate(marks) if m in OPENING), len(marks))
            out[-1] += "".join(marks[:k])
            pending_open = "".join(marks[k:])
    return " ".join(out)


def main() -> None:
    from spacy_punctgen.api.load import load
    from spacy_punctgen.api.stream import restore_text
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.evaluation.stream import align_gaps, prf, sentence_streams, stream_class

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("conllu")
    p.add_argument("--output", required=True)
    p.add_argument("--model", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="first N streams only (0: all)")
    args = p.parse_args()
    sents, _ = preprocess_file(args.conllu)
    streams = sentence_streams(sents, 10, lower=True)
    if args.limit:
        streams = streams[:args.limit]
    nlp = load("en", model=args.model)
    rng = random.Random(args.seed)
    counts = {"partial": [0, 0, 0, 0], "nothing": [0, 0, 0, 0]}  # edits, tp, fp, fn
    kept_total = kept_ok = kept_exact = n_other = 0
    for s in streams:
        marked = [i for i, g in enumerate(s.gold) if g]
        kept = {i for i in marked if rng.random() < 0.5}
        for name, text in (("partial", stream_input(s.words, s.gold, kept)),
                           ("nothing", stream_input(s.words, s.gold, set()))):
            pred, _ = align_gaps(s.words, restore_text(nlp, text))
            for i, g in enumerate(s.gold):
                gold = g.replace(" ", "")
                if i in kept:
                    if name == "partial":
                        kept_total += 1
                        it = iter(pred[i])
                        kept_ok += all(ch in it for ch in gold)  # every kept mark is there, in order
                        kept_exact += pred[i] == gold
                    continue
                if name == "partial":
                    n_other += 1
                c = counts[name]
                c[0] += levenshtein(pred[i], gold)
                gl, pl = stream_class(gold), stream_class(pred[i])
                c[1] += gl is not None and gl == pl
                c[2] += pl is not None and gl != pl
                c[3] += gl is not None and gl != pl
    res = {"conllu": args.conllu, "seed": args.seed, "streams": len(streams), "kept_marks": kept_total,
           "kept_marks_surviving": kept_ok,
           "kept_gaps_unchanged": kept_exact, "other_gaps": n_other}
    for name, (edits, tp, fp, fn) in counts.items():
        res[name] = {"edits_per_gap": edits / max(1, n_other), **prf(tp, fp, fn)}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
