"""``punctgen learned`` and ``punctgen learned-summary``: argument parsing and writing the
files; the figures come from :mod:`spacy_punctgen.evaluation.learned` (docs/learned.md)."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from spacy_punctgen.cli import (bounded, check_output_dir, check_output_file, command, non_negative_int, positive_int,
                                to_json)
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.errors import Errors
from spacy_punctgen.evaluation.learned import (learned_report, learned_summary, markdown_tables, require_matplotlib,
                                               summary_markdown, write_plots)
from spacy_punctgen.evaluation.metrics import require_sentences
from spacy_punctgen.model.punct_model import PunctModel


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="the model directory (written by `train`, or spacy_punctgen/shipped/en_ewt)")
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
    p.add_argument("--lang", default=None,
                   help="the treebank's language (project.yml's vars.lang): Nunberg's rules are English ones, so "
                        "for another language the tables say they are a yardstick only")


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
                            top_weights=args.top, lang=args.lang)
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


def _summary_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="?", default="results",
                   help="the folder holding <treebank>/learned/learned.json (default: results)")
    p.add_argument("--output", "-o", required=True, help="the Markdown table to write (results/learned_summary.md)")
    p.add_argument("--top", type=positive_int, default=3, help="most symmetric relations shown per model (default: 3)")


@command("learned-summary", "One table over every treebank's `learned` report (results/<treebank>/learned/learned.json): "
                            "confident edits, Nunberg's share, MRR, the most symmetric relations at ξ = 0 and ξ > 0, "
                            "the paper's English figures beside", _summary_arguments)
def learned_summary_cli(args) -> dict:
    check_output_file(args.output, "--output")
    root = Path(args.results)
    if not root.is_dir():
        raise FileNotFoundError(Errors.E795.format(path=root))
    files = sorted(root.glob("*/learned/learned.json"))
    if not files:
        raise FileNotFoundError(Errors.E795.format(path=root))
    reports, paths = {}, {}
    for f in files:
        try:
            report = json.loads(f.read_text(encoding="utf8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(Errors.E794.format(path=f, problem=f"not JSON: {err}")) from None
        if not isinstance(report, dict):
            raise ValueError(Errors.E794.format(path=f, problem="not a JSON object"))
        name = f.parent.parent.name
        reports[name], paths[name] = report, str(f)
    summary = learned_summary(reports, paths, top=args.top)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(summary_markdown(summary), encoding="utf8")
    rows = summary["treebanks"]
    return {"output": str(out), "treebanks": [r["treebank"] for r in rows], "rows": rows,
            "_text": f"wrote {out}: {len(rows)} treebanks ({', '.join(r['treebank'] for r in rows)})"}
