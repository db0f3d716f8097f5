"""Case accuracy of a truecaser on a test treebank -> a metrics JSON (workflow ``evaluate-truecaser``).

    python scripts/truecase_metrics.py TRUECASER TEST.conllu TRAIN.conllu OUT.json [--streams-sents 10] [--markdown T.md]

TEST and TRAIN are CoNLL-U files or UD folders (then their test / train split). Four figures,
all against the test treebank's own (cased) depunctuated words
(:mod:`spacy_punctgen.truecasing.truecaser`):

* ``gold_sentences``: the truecaser alone on each lowercased gold sentence (its first word is
  the sentence start): what the tagger knows;
* ``pipeline_lower``: ``spacy_punctgen.load(lang, truecase=TRUECASER)`` (the shipped parser and
  punctuation model) on streams of ``--streams-sents`` lowercased sentences: sentence starts
  come from the restored punctuation;
* ``pipeline_cased``: the same streams with their original case (the keep-the-writer's-case rule);
* ``baseline_most_frequent``: each word in its most frequent training form, gold sentence
  starts capitalised.
"""
import argparse
import json
import time
from pathlib import Path

import spacy

from spacy_punctgen.api.load import load
from spacy_punctgen.truecasing.truecaser import (baseline_most_frequent, depunct_words, evaluate_gold_sentences,
                                              evaluate_streams)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("truecaser")
    ap.add_argument("test")
    ap.add_argument("train")
    ap.add_argument("out")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--streams-sents", type=int, default=10)
    ap.add_argument("--markdown", default=None, help="also write the table of docs/workflow.md here")
    args = ap.parse_args(argv)
    test = depunct_words(args.test, "test" if Path(args.test).is_dir() else None)
    train = depunct_words(args.train, "train" if Path(args.train).is_dir() else None)
    result = {"truecaser": args.truecaser, "test": args.test, "train": args.train,
              "n_sentences": len(test), "streams_sents": args.streams_sents}
    t0 = time.perf_counter()
    result["gold_sentences"] = evaluate_gold_sentences(spacy.load(args.truecaser), test)
    result["baseline_most_frequent"] = baseline_most_frequent(train, test)
    nlp = load(args.lang, truecase=args.truecaser)
    result["pipeline_lower"] = evaluate_streams(nlp, test, args.streams_sents, lower=True)
    result["pipeline_cased"] = evaluate_streams(nlp, test, args.streams_sents, lower=False)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    print(json.dumps(result, indent=2))
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(table(result), encoding="utf8")


ROWS = [("gold_sentences", "truecaser alone", "lowercased gold sentences"),
        ("baseline_most_frequent", "most frequent training form", "lowercased gold sentences"),
        ("pipeline_lower", "load(truecase=True): restoration, then truecaser", "lowercased 10-sentence streams"),
        ("pipeline_cased", "load(truecase=True): restoration, then truecaser", "cased 10-sentence streams")]


def table(result) -> str:
    """The markdown table of a metrics file: case accuracy (%) per system and input."""
    lines = ["| system | input | all words | words not lowercase | sentence starts |",
             "|---|---|---:|---:|---:|"]
    for key, system, inp in ROWS:
        r = result[key]
        lines.append(f"| {system} | {inp} | {100 * r['case_acc']:.2f} | {100 * r['case_acc_not_lower']:.2f} "
                     f"| {100 * r['sent_start_acc']:.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
