"""``punctgen learned``: argument parsing and writing the files; the figures come from
:mod:`spacy_punctgen.evaluation.learned` (docs/learned.md)."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from spacy_punctgen.cli import bounded, check_output_dir, command, non_negative_int, positive_int, to_json
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.errors import Errors
from spacy_punctgen.evaluation.learned import learned_report, markdown_tables, require_matplotlib, write_plots
from spacy_punctgen.evaluation.metrics import require_sentences
from spacy_punctgen.model.punct_model import PunctModel


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="the model directory (written by `train`, or spacy_punctgen/models/en_ewt)")
    p.add_argument("--train", required=True,
                   help="the CoNLL-U file the model was trained on: its 1-best underlying trees give the bigram "
                        "counts and the per-relation figures")
    p.add_argument("--output-dir", "-o", required=True, help="folder for learned.json, learned.md and the PNGs")
    p.add_argument("--xi-model", default=None,
                   help="a model of the same treebank trained with another ξ: its symmetric pairs are reported too")
    p.add_argument("--max-sentences", type=non_negative_int, default=0,
                   help="analyse only the first N training sentences (0 = all)")
    p.add_argument("--threshold", type=bounded(float, 0, 1, high_open=True), default=0.75,
                   help="a confident edit's probability exceeds this (default: 0.75, the paper's)")
    p.add_argument("--min-count", type=non_negative_int, default=25,
                   help="confident edits are looked for among bigrams seen this often (default: 25, the paper's)")
    p.add_argument("--top", type=positive_int, default=10, help="heaviest ATTACH weights kept per relation")
    p.add_argument("--no-plots", action="store_true", help="write no PNG (matplotlib not needed)")
    p.add_argument("--title", default=None, help="the tables' and plots' title (default: the output folder's parent)")


def _model(path: str, flag: str) -> PunctModel:
    if not (Path(path) / "cfg.json").is_file():
        raise FileNotFoundError(Errors.E793.format(path=f"{flag} {path}"))
    return PunctModel.from_disk(path)


@command("learned", "What a model learned: its channel against Nunberg's rules, symmetric punctemes by relation, "
                    "its heaviest ATTACH weights (tables, JSON and heat maps)", _arguments)
def learned_cli(args) -> dict:
    check_output_dir(args.output_dir, "--output-dir")
    if not args.no_plots:
        try:
            require_matplotlib()
        except ImportError as err:
            raise ValueError(str(err)) from None
    if Path(args.train).is_dir():
        raise IsADirectoryError(Errors.E626.format(flag="--train", path=args.train))
    t0 = time.perf_counter()
    model = _model(args.model, "model")
    xi_model = _model(args.xi_model, "--xi-model") if args.xi_model else None
    sents, stats = preprocess_file(args.train)
    require_sentences(sents, stats, args.train, "analyse")
    if args.max_sentences:
        sents = sents[:args.max_sentences]
    report = learned_report(model, sents, xi_model, threshold=args.threshold, min_count=args.min_count,
                            top_weights=args.top)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    title = args.title if args.title is not None else out.parent.name
    report["model"]["path"] = str(args.model)
    report["train_file"] = str(args.train)
    (out / "learned.json").write_text(to_json(report, indent=1) + "\n", encoding="utf8")
    (out / "learned.md").write_text(markdown_tables(report, title), encoding="utf8")
    files = [str(out / "learned.json"), str(out / "learned.md")]
    if not args.no_plots:
        files += [str(p) for p in write_plots(report, out, title)]
    conf, mrr = report["channel"]["confident"], report["channel"]["mrr"]
    result = {"output_dir": str(out), "files": files, "n_sentences": report["n_sentences"],
              "n_confident": conf["n_confident"], "n_nunberg": conf["n_nunberg"], "mrr": mrr["mrr"],
              "mrr_confident": mrr["mrr_confident"], "seconds": round(time.perf_counter() - t0, 1)}
    result["_text"] = (f"wrote {len(files)} files to {out}: {conf['n_nunberg']} of {conf['n_confident']} confident "
                       f"edits are Nunberg's; MRR {mrr['mrr']:.3f} ({mrr['n_rules']} rules), "
                       f"{mrr['mrr_confident']:.3f} on confident bigrams")
    return result
