"""Score a trained spaCy parser on a test set and save the scores with the data protocol.

Usage (project.yml ``evaluate-parser``):
    python scripts/evaluate_parser.py MODEL TEST.spacy OUT.json [--train-data TRAIN.spacy] \
        [--set treebank=en_ewt --set protocol=standard --set parser=depunct ...] [--gpu-id -1]

Why a script instead of ``spacy evaluate --output``: the metrics file must say how the
parser was trained (train split or "dev-as-train", training fraction, sentences), so
that LAS figures from different protocols are never mixed silently. The scores are
spaCy's own (``spacy.cli.evaluate.evaluate``: ``dep_las``, ``dep_uas``, ``pos_acc``,
``tag_acc``, ... as fractions; the parser scorer leaves out ``punct`` arcs) and keep
their names, so ``scripts/save_metrics.py`` reads them as before. ``--gold-preproc``
scores the parser on the gold words and sentences, as the parser of unpunctuated text is
used (``parse_conllu.py`` parses gold words); without it spaCy re-tokenises the text,
which for Chinese means one token per character.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return text.lower() == "true"


def _n_docs(path: Path) -> int:
    from spacy.tokens import DocBin

    return len(DocBin().from_disk(path))


def evaluate_parser(model: str, test: Path, train_data=None, extra=None, gpu_id: int = -1,
                    gold_preproc: bool = False) -> dict:
    from spacy.cli.evaluate import evaluate

    scores = evaluate(model, test, use_gpu=gpu_id, gold_preproc=gold_preproc, silent=True)
    keep = {k: v for k, v in scores.items() if k in ("dep_las", "dep_uas", "pos_acc", "tag_acc", "morph_acc",
                                                     "sents_f", "speed", "dep_las_per_type")}
    meta = json.loads((Path(model) / "meta.json").read_text(encoding="utf-8"))
    result = {**keep, "model": str(model), "test_data": str(test), "n_test_docs": _n_docs(test),
              "spacy_version": meta.get("spacy_version"), "pipeline": meta.get("pipeline"),
              "dev_performance": {k: v for k, v in (meta.get("performance") or {}).items()
                                  if k in ("dep_las", "dep_uas", "pos_acc", "tag_acc")}}
    if train_data is not None:
        result["train_data"] = str(train_data)
        result["n_train_docs"] = _n_docs(Path(train_data))
    result["gold_preproc"] = gold_preproc
    result.update(extra or {})
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("test", type=Path, help=".spacy test data (from spacy convert)")
    p.add_argument("output", type=Path)
    p.add_argument("--train-data", type=Path, default=None, help="the .spacy file the parser was trained on")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra fields (JSON values)")
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--gold-preproc", type=_bool, nargs="?", const=True, default=False, metavar="true|false",
                   help="parse the gold words and sentences (spaCy's --gold-preproc), not re-tokenised text")
    args = p.parse_args(argv)
    extra = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            p.error(f"--set needs KEY=VALUE, got {item!r}")
        extra[key] = _value(value)
    for path in (args.test, args.train_data):
        if path is not None and not path.is_file():
            print(f"evaluate_parser: no such file: {path}", file=sys.stderr)
            return 1
    result = evaluate_parser(args.model, args.test, args.train_data, extra, args.gpu_id, args.gold_preproc)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("dep_las", "dep_uas") if k in result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
