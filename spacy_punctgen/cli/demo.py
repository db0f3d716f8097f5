"""``python -m spacy_punctgen demo``: the whole job on the shipped English sample, in a minute.

Trains the full model on ``assets/sample`` (170 EWT training sentences), reports the
test perplexity per slot, then runs the ``punctgen`` spaCy component on gold-parsed
test sentences and prints each slot's underlying and surface punctuation.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from spacy_punctgen.cli import check_output_dir, command, non_negative_int
from spacy_punctgen.errors import Errors

DEFAULT_DATA = Path("assets") / "sample"


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default=str(DEFAULT_DATA), help="folder with *-ud-{train,dev,test}.conllu")
    p.add_argument("--epochs", type=non_negative_int, default=8)
    p.add_argument("--output", default=None, help="where to save the model (default: a temp dir)")
    p.add_argument("--show", type=non_negative_int, default=2, help="test sentences to analyse")


def _fmt(seq) -> str:
    if seq is None:
        return "?"
    return " ".join(seq) if seq else "ε"


@command("demo", "Train on the shipped sample, evaluate, and analyse sentences with the spaCy component", _arguments)
def demo_cli(args) -> dict:
    import spacy

    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.pipeline.doc_convert import doc_from_ud
    from spacy_punctgen.evaluation.perplexity import evaluate_model
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.training.train import TrainConfig, train_model
    from spacy_punctgen.data.conllu import resolve_split

    check_output_dir(args.output, "--output")
    data = Path(args.data)
    if not data.is_dir():
        raise FileNotFoundError(Errors.E617.format(path=data))
    paths = {s: resolve_split(str(data), s) for s in ("train", "dev", "test")}
    train, _ = preprocess_file(paths["train"])
    dev, _ = preprocess_file(paths["dev"])
    cfg = TrainConfig(epochs=args.epochs, sentences_per_epoch=0, progress=False, jobs=1)
    model, summary = train_model(train, dev, cfg)
    out = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="punctgen-demo-"))
    model.to_disk(out)
    result = evaluate_model(model, paths["test"])
    lines = [f"trained on {len(train)} sentences ({summary['direction']} channel chosen on dev), "
             f"model saved to {out}",
             f"test perplexity per slot: {result['perplexity_per_slot']:.4f} "
             f"over {result['n_slots']} slots of {result['n_sentences']} sentences"]
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"model": str(out)})
    shown = []
    for ud in read_conllu(paths["test"])[: max(args.show, 0)]:
        doc = nlp(doc_from_ud(nlp.vocab, ud))
        lines.append("")
        lines.append(doc.text + ("" if doc._.underlying_punct and doc._.underlying_punct[0]["underlying"] is not None
                                 else "   [p(x|T) = 0 under this small model: no underlying explanation]"))
        for e in doc._.underlying_punct:
            if e["surface"] or e["underlying"]:  # underlying None: shown as "?"
                after = doc[e["after"]].text if e["after"] is not None else "^"
                lines.append(f"  slot {e['slot']:>2} after {after!r:14} underlying: {_fmt(e['underlying']):12} "
                             f"surface: {_fmt(e['surface'])}")
        shown.append({"text": doc.text, "log_prob": doc._.punct_logprob,
                      "underlying_punct": [[list(e["underlying"] or []), list(e["surface"])]
                                           for e in doc._.underlying_punct]})
    return {"_text": "\n".join(lines), "model": str(out), "direction": summary["direction"],
            "test_perplexity_per_slot": result["perplexity_per_slot"], "n_test_slots": result["n_slots"],
            "analysed": shown}
