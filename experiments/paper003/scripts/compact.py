"""How small can UPP be (issue 41, item d)? The trained model's hashed weights pruned by magnitude
(every averaged weight with ``|w| < t`` set to 0, the parser's ``W`` and the POS tagger's alike)
and optionally stored as float16, saved as a compressed npz (``np.savez_compressed``, which
``IncrementalPunctuator.from_disk`` reads as it is: it casts to float32), against overall F1 of
the marks on the treebank's 10-sentence lowercased dev streams (as ``evaluate.py`` scores the test
streams). ``--models``: more models to put on the curve as they are (e.g. trained with fewer
hash buckets, ``train.py --buckets``), each also pruned at every threshold.

Usage:
    python experiments/paper003/scripts/compact.py MODEL UD_DIR --output OUT.json
        [--thresholds 0 0.5 1 2 ...] [--models OTHER_MODEL ...] [--split dev]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def pruned(a: np.ndarray, t: float, half: bool) -> np.ndarray:
    out = np.where(np.abs(a) >= t, a, 0).astype(a.dtype) if t > 0 else a.copy()
    return out.astype(np.float16) if half else out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("ud_dir")
    p.add_argument("--output", required=True)
    p.add_argument("--split", default="dev")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--thresholds", type=float, nargs="*", default=[0, 0.5, 1, 1.5, 2, 3, 4, 6])
    p.add_argument("--models", nargs="*", default=[])
    p.add_argument("--budget-mb", type=float, default=8.0)
    p.add_argument("--tolerance", type=float, default=0.5, help="F1 points below the full model still acceptable")
    args = p.parse_args(argv)

    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.evaluation import stream as S
    from spacy_punctgen.incremental.model import IncrementalPunctuator
    from spacy_punctgen.incremental.tagger import PosTagger

    path = find_split(args.ud_dir, args.split)
    streams = S.sentence_streams(preprocess_file(path)[0], size=args.stream_sents, lower=True)

    def f1_of(model):
        gaps = [model.gaps(s.words) for s in streams]
        return S.evaluate_predictions(streams, gaps, "stream")["scores"]

    rows = []
    reference = None
    for name in [args.model] + list(args.models):
        base = IncrementalPunctuator.from_disk(name)
        W0, C0, T0 = base.W, base.C, base.tagger.W
        for half in (False, True):
            for t in args.thresholds:
                arrays = {"W": pruned(W0, t, half), "tagger": pruned(T0, t, half)}
                if C0 is not None:
                    arrays["C"] = pruned(C0, t, half)
                with tempfile.TemporaryDirectory() as tmp:
                    f = os.path.join(tmp, "weights.npz")
                    np.savez_compressed(f, **arrays)
                    size = os.path.getsize(f)
                model = IncrementalPunctuator.from_disk(name)
                model.W = np.ascontiguousarray(arrays["W"], dtype=np.float32)
                if C0 is not None:
                    model.C = np.ascontiguousarray(arrays["C"], dtype=np.float32)
                model.tagger = PosTagger.from_weights(np.ascontiguousarray(arrays["tagger"], dtype=np.float32),
                                                      base.tagger.tags)
                t0 = time.perf_counter()
                sc = f1_of(model)
                row = {"model": name, "n_buckets": int(W0.shape[0]), "threshold": t,
                       "dtype": "float16" if half else "float32",
                       "nonzero_W": int(np.count_nonzero(arrays["W"])),
                       "nonzero_tagger": int(np.count_nonzero(arrays["tagger"])),
                       "npz_compressed_bytes": size, "npz_compressed_mb": round(size / 2 ** 20, 2),
                       **{f"{k}_f1": sc[k]["f1"] for k in ("M", "F", "overall", "mixed")},
                       "seconds": round(time.perf_counter() - t0, 1)}
                if reference is None:
                    reference = row
                row["overall_f1_drop_points"] = round(100 * (reference["overall_f1"] - row["overall_f1"]), 2)
                row["fits"] = size <= args.budget_mb * 2 ** 20 and row["overall_f1_drop_points"] <= args.tolerance
                rows.append(row)
                print(json.dumps({k: row[k] for k in ("n_buckets", "threshold", "dtype", "npz_compressed_mb",
                                                       "overall_f1", "overall_f1_drop_points", "fits")}), flush=True)
    fitting = [r for r in rows if r["fits"]]
    out = {"model": args.model, "test": str(path), "split": args.split, "treebank": Path(args.ud_dir).name,
           "stream_sents": args.stream_sents, "n_units": len(streams), "budget_mb": args.budget_mb,
           "tolerance_points": args.tolerance, "reference": reference,
           "saved_npz_bytes": os.path.getsize(Path(args.model) / "weights.npz"), "curve": rows,
           "smallest_fitting": min(fitting, key=lambda r: r["npz_compressed_bytes"]) if fitting else None}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
