"""Live mode measured: overall F1 on the 10-sentence lowercased test streams as a function of the
delay (words a mark may come late), the time from a word's arrival to its emission and the CPU
time per word, with a model trained by train.py fed one word at a time.

Usage:
    python experiments/paper003/scripts/live_eval.py MODEL UD_DIR --output OUT.json [--delays 0 2 5 10 20]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("ud_dir")
    p.add_argument("--output", required=True)
    p.add_argument("--split", default="test")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--delays", type=int, nargs="*", default=[0, 2, 5, 10, 20])
    args = p.parse_args(argv)

    import numpy as np

    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.evaluation.stream import evaluate_predictions, sentence_streams
    from spacy_punctgen.incremental.live import LivePunctuator
    from spacy_punctgen.incremental.model import IncrementalPunctuator

    model = IncrementalPunctuator.from_disk(args.model)
    path = find_split(args.ud_dir, args.split)
    streams = sentence_streams(preprocess_file(path)[0], size=args.stream_sents, lower=True)
    out = {"system": f"live_{model.mode}", "model": args.model, "test": str(path), "stream_sents": args.stream_sents,
           "treebank": Path(args.ud_dir).name, "delays": {}}
    batch = [model.gaps(s.words) for s in streams]
    res = evaluate_predictions(streams, batch, "stream")
    out["batch"] = {"scores": res["scores"]}
    for delay in args.delays:
        predicted, waits, seconds = [], [], []
        cpu0 = time.process_time()
        for s in streams:
            lp = LivePunctuator(model, delay, words_in=True)
            for w in s.words:
                lp.push(w)
            lp.close()
            predicted.append([e.mark for e in lp.log])
            waits += [e.emitted_at - e.arrived_at for e in lp.log]
            seconds += [e.seconds for e in lp.log]
        cpu = time.process_time() - cpu0
        res = evaluate_predictions(streams, predicted, "stream")
        n = res["n_words"]
        out["delays"][str(delay)] = {
            "scores": res["scores"], "counts": res["counts"], "errors": res["errors"],
            "max_wait_words": int(max(waits)), "mean_wait_words": float(np.mean(waits)),
            "mean_seconds_to_emission": float(np.mean(seconds)), "p95_seconds_to_emission": float(np.percentile(seconds, 95)),
            "cpu_ms_per_word": 1000 * cpu / n}
        s = res["scores"]
        print(json.dumps({"delay": delay, **{k: round(100 * s[k]["f1"], 1) for k in ("M", "F", "overall", "mixed")},
                          "cpu_ms_per_word": round(1000 * cpu / n, 3)}), flush=True)
    out["n_units"], out["n_words"] = res["n_units"], res["n_words"]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
