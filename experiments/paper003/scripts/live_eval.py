"""Live mode measured: overall F1 on the 10-sentence lowercased test streams as a function of the
delay (words a mark may come late), the time from a word's arrival to its emission and the CPU
time per word, with a model trained by train.py, or the shipped pipeline over a sliding window
(MODEL ``shipped``: ``spacy_punctgen.load("en")``, api/window_live.py), fed one word at a time.

The shipped pipeline's output text is aligned back to the words as ``punctgen evaluate-stream
shipped`` aligns it (``align_gaps``); its batch row is ``restore_text`` of each whole stream (the
shipped cascade, as that command runs it). ``--ted TSV``: the TED dev block instead (the words
after the first ``--train-share``, one stream fed word by word), scored by COMMA / PERIOD /
QUESTION in units of ``--unit-words`` words, as ``evaluate-stream`` scores TED.

Usage:
    python experiments/paper003/scripts/live_eval.py MODEL|shipped UD_DIR --output OUT.json [--delays 0 2 5 10 20]
        [--step N] [--context 30]
    python experiments/paper003/scripts/live_eval.py shipped --ted TSV --output OUT.json [--train-share 0.8]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def _units(args):
    """(streams fed to the system, how the scored units are cut from them, kind, info)."""
    from spacy_punctgen.evaluation import stream as S

    if args.ted:
        from spacy_punctgen.data.ted import read_ted, split_blocks

        text = read_ted(args.ted)
        (t0, t1), (d0, d1) = split_blocks(text, args.train_share, args.ted)
        dev = text.block(d0, d1)
        info = {"test": args.ted, "dev_block": [d0, d1], "train_share": args.train_share,
                "unit_words": args.unit_words, "treebank": "ted"}
        return [S.Stream(dev.words, dev.marks)], "ted", info
    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.preprocess import preprocess_file

    path = find_split(args.ud_dir, args.split)
    streams = S.sentence_streams(preprocess_file(path)[0], size=args.stream_sents, lower=True)
    return streams, "stream", {"test": str(path), "stream_sents": args.stream_sents, "treebank": Path(args.ud_dir).name}


def _scored(streams, predicted, kind, unit_words):
    """The scores (evaluate_predictions) of the predictions, TED's one stream cut into its units."""
    from spacy_punctgen.evaluation import stream as S

    if kind == "ted":
        whole = streams[0]
        streams = S.word_blocks(whole.words, whole.gold, unit_words)
        predicted = [predicted[0][i:i + unit_words] for i in range(0, len(whole.words), unit_words)]
    return S.evaluate_predictions(streams, predicted, kind)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a model folder written by train.py, or 'shipped' (the shipped pipeline)")
    p.add_argument("ud_dir", nargs="?", default=None)
    p.add_argument("--output", required=True)
    p.add_argument("--split", default="test")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--delays", type=int, nargs="*", default=[0, 2, 5, 10, 20])
    p.add_argument("--step", type=int, default=None, help="shipped: restore every N words (default: delay // 2)")
    p.add_argument("--context", type=int, default=None, help="shipped: the most emitted words of left context")
    p.add_argument("--ted", default=None, help="a TED word<TAB>label file: its dev block instead of UD_DIR's streams")
    p.add_argument("--train-share", type=float, default=0.8)
    p.add_argument("--unit-words", type=int, default=500)
    args = p.parse_args(argv)
    if (args.ud_dir is None) == (args.ted is None):
        p.error("give UD_DIR or --ted TSV")

    import numpy as np

    from spacy_punctgen.evaluation.stream import align_gaps

    streams, kind, info = _units(args)
    missing = [0]  # word characters the shipped pipeline's output lacked (align_gaps)
    shipped = args.model == "shipped"
    if shipped:
        import spacy_punctgen
        from spacy_punctgen.api.window_live import DEFAULT_CONTEXT, WindowLivePunctuator

        nlp = spacy_punctgen.load("en")
        context = DEFAULT_CONTEXT if args.context is None else args.context

        def gaps_of(words, text):
            gaps, n_missing = align_gaps(words, text)
            missing[0] += n_missing
            return gaps

        def batch(words):
            return gaps_of(words, spacy_punctgen.restore_text(nlp, " ".join(words)))

        def live_state(delay):
            return WindowLivePunctuator(nlp, delay, words_in=True, step=args.step, context=context)

        def live_gaps(words, lp, pieces):
            return gaps_of(words, "".join(pieces))

        system = "live_shipped"
        info.update(model="shipped", context=context)
    else:
        from spacy_punctgen.incremental.live import LivePunctuator
        from spacy_punctgen.incremental.model import IncrementalPunctuator

        model = IncrementalPunctuator.from_disk(args.model)

        def batch(words):
            return model.gaps(words)

        def live_state(delay):
            return LivePunctuator(model, delay, words_in=True)

        def live_gaps(words, lp, pieces):
            return [e.mark for e in lp.log]

        system = f"live_{model.mode}"
        info.update(model=args.model)
    out = {"system": system, **info, "kind": kind, "delays": {}}
    cpu0, t0 = time.process_time(), time.perf_counter()
    missing[0] = 0
    res = _scored(streams, [batch(s.words) for s in streams], kind, args.unit_words)
    out["batch"] = {"scores": res["scores"], "counts": res["counts"], "errors": res["errors"],
                    "missing_word_chars": missing[0],
                    "seconds": round(time.perf_counter() - t0, 1),
                    "cpu_ms_per_word": 1000 * (time.process_time() - cpu0) / res["n_words"]}
    for delay in args.delays:
        predicted, waits, seconds, restorations = [], [], [], 0
        missing[0] = 0
        cpu0 = time.process_time()
        for s in streams:
            lp = live_state(delay)
            pieces = [lp.push(w) for w in s.words]
            pieces.append(lp.close())
            predicted.append(live_gaps(s.words, lp, pieces))
            waits += [e.emitted_at - e.arrived_at for e in lp.log]
            seconds += [e.seconds for e in lp.log]
            restorations += getattr(lp, "n_restorations", 0)
        cpu = time.process_time() - cpu0
        res = _scored(streams, predicted, kind, args.unit_words)
        n = res["n_words"]
        row = {"scores": res["scores"], "counts": res["counts"], "errors": res["errors"],
               "max_wait_words": int(max(waits)), "mean_wait_words": float(np.mean(waits)),
               "mean_seconds_to_emission": float(np.mean(seconds)),
               "p95_seconds_to_emission": float(np.percentile(seconds, 95)), "cpu_ms_per_word": 1000 * cpu / n}
        if shipped:
            row.update(step=lp.step, restorations=restorations, missing_word_chars=missing[0])
        out["delays"][str(delay)] = row
        sc = res["scores"]
        keys = ("COMMA", "PERIOD", "QUESTION", "overall", "mixed") if kind == "ted" else ("M", "F", "overall", "mixed")
        print(json.dumps({"delay": delay, **{k: round(100 * sc[k]["f1"], 1) for k in keys},
                          "cpu_ms_per_word": round(1000 * cpu / n, 3)}), flush=True)
    out["n_units"], out["n_words"] = res["n_units"], res["n_words"]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
