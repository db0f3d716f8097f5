"""UPP's sentence boundaries as evidence for punctgen's restoration (issue 41), on the 10-sentence
lowercased test streams: UPP decodes each stream, and its full stops (F) go to the shipped
pipeline (``spacy_punctgen.load("en")``) in one of two ways:

* ``upp_then_punctgen``: written into the text as ``.`` after their words before restoration;
  restoration keeps a written mark and conditions the other slots on it (decode/evidence.py), and
  the parser reads the written full stops too;
* ``upp_segments_punctgen``: as the parser's sentence boundaries only (``token.is_sent_start``
  set on every token before the parser, which keeps preset boundaries: True after each UPP full
  stop, False elsewhere), no mark written; restoration then decides every slot, the final ones too.

Scored beside the shipped cascade alone and UPP alone on the same streams (M / F / overall /
mixed P/R/F1 and the restored sentence ends), with approximate-randomisation tests over the
streams (10000 permutations) of each combination against both.

Usage:
    python experiments/paper003/scripts/upp_then_punctgen.py MODEL UD_DIR --output OUT.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def segmented_restoration(nlp, words, ends):
    """The restored text of ``words`` parsed with sentence starts exactly after the words in
    ``ends`` (and the first word): the tokenizer, every token's ``is_sent_start`` set, then the
    pipeline's components, ``punctgen`` included."""
    text = " ".join(words)
    starts, pos = set(), 0
    after_end = True
    for k, w in enumerate(words):
        if after_end:
            starts.add(pos)
        after_end = k in ends
        pos += len(w) + 1
    doc = nlp.tokenizer(text)
    for tok in doc:
        tok.is_sent_start = tok.idx in starts
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    return doc._.restored_text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a UPP (or CPP) model folder written by train.py")
    p.add_argument("ud_dir")
    p.add_argument("--output", required=True)
    p.add_argument("--split", default="test")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--permutations", type=int, default=10000)
    args = p.parse_args(argv)

    import numpy as np

    import spacy_punctgen
    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.evaluation import stream as S
    from spacy_punctgen.incremental.model import IncrementalPunctuator

    model = IncrementalPunctuator.from_disk(args.model)
    nlp = spacy_punctgen.load("en")
    path = find_split(args.ud_dir, args.split)
    streams = S.sentence_streams(preprocess_file(path)[0], size=args.stream_sents, lower=True)
    full = model.labels.is_full
    predicted = {name: [] for name in ("shipped", model.mode, f"{model.mode}_then_punctgen",
                                       f"{model.mode}_segments_punctgen")}
    seconds = {name: 0.0 for name in predicted}
    missing = {name: 0 for name in predicted}

    def aligned(name, words, text):
        gaps, n_missing = S.align_gaps(words, text)
        missing[name] += n_missing
        return gaps

    for s in streams:
        t0 = time.perf_counter()
        _, marks = model.predict(s.words)
        seconds[model.mode] += time.perf_counter() - t0
        predicted[model.mode].append([model.labels.marks[m] for m in marks])
        ends = {k for k, m in enumerate(marks) if full[m]}
        t0 = time.perf_counter()
        predicted["shipped"].append(aligned("shipped", s.words, spacy_punctgen.restore_text(nlp, " ".join(s.words))))
        t1 = time.perf_counter()
        written = " ".join(w + ("." if k in ends else "") for k, w in enumerate(s.words))
        predicted[f"{model.mode}_then_punctgen"].append(
            aligned(f"{model.mode}_then_punctgen", s.words, spacy_punctgen.restore_text(nlp, written)))
        t2 = time.perf_counter()
        predicted[f"{model.mode}_segments_punctgen"].append(
            aligned(f"{model.mode}_segments_punctgen", s.words, segmented_restoration(nlp, s.words, ends)))
        t3 = time.perf_counter()
        seconds["shipped"] += t1 - t0
        seconds[f"{model.mode}_then_punctgen"] += t2 - t1
        seconds[f"{model.mode}_segments_punctgen"] += t3 - t2
    gold_ends = [S.gold_boundaries(u) for u in streams]
    reports = {}
    for name, pred in predicted.items():
        reports[name] = S.stream_report(name, streams, pred, "stream", test=str(path), stream_sents=args.stream_sents,
                                        treebank=Path(args.ud_dir).name, seconds=round(seconds[name], 1),
                                        missing_word_chars=missing[name],
                                        restored_boundaries=S.boundary_scores(gold_ends,
                                                                              [S.mark_boundaries(g) for g in pred]))
    classes = S.CLASSIFIERS["stream"][1]
    tests = {}
    for name in list(predicted)[2:]:
        for ref in ("shipped", model.mode):
            tests[f"{name} vs {ref}"] = S.compare_systems(
                np.asarray(reports[name]["counts"]), np.asarray(reports[ref]["counts"]), classes,
                reports[name]["errors"], reports[ref]["errors"], args.permutations, 0)
    out = {"model": args.model, "test": str(path), "treebank": Path(args.ud_dir).name, "n_units": len(streams),
           "n_words": sum(len(s.words) for s in streams), "permutations": args.permutations,
           "systems": reports, "tests": tests}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out) + "\n")
    for name, r in reports.items():
        sc = r["scores"]
        print(json.dumps({"system": name, **{k: round(100 * sc[k]["f1"], 1) for k in ("M", "F", "overall", "mixed")},
                          "sentence_ends_f1": round(100 * r["restored_boundaries"]["f1"], 1),
                          "seconds": r["seconds"]}), flush=True)
    for k, t in tests.items():
        print(k, {n: round(v, 4) for n, v in t.items()}, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
