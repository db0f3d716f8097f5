"""``python -m spacy_punctgen demo``: what the package does, in a minute, offline.

By default, punctuates the shipped sample transcript (``spacy_punctgen/shipped/samples/``, a
lowercased EWT passage without punctuation) with the shipped English pipeline
(``spacy_punctgen.load("en")``), prints it, then explains the punctuation of its first sentences
with the analysis pipeline (``load("en", mode="analyze")``): each slot's underlying and surface
punctuation.  With ``--train``: trains the full model on ``assets/sample`` (170 EWT training
sentences), reports the test perplexity per slot and analyses gold-parsed test sentences.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from spacy_punctgen.cli import check_output_dir, command, non_negative_int
from spacy_punctgen.errors import Errors

DEFAULT_DATA = Path("assets") / "sample"


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--train", action="store_true",
                   help="train on --data and analyse its test sentences instead of using the shipped pipeline")
    p.add_argument("--data", default=str(DEFAULT_DATA), help="with --train: folder with *-ud-{train,dev,test}.conllu")
    p.add_argument("--epochs", type=non_negative_int, default=8, help="with --train")
    p.add_argument("--output", default=None, help="with --train: where to save the model (default: a temp dir)")
    p.add_argument("--show", type=non_negative_int, default=2, help="sentences to analyse")


def _fmt(seq) -> str:
    if seq is None:
        return "?"
    return " ".join(seq) if seq else "ε"


def _slot_lines(doc) -> list:
    lines = []
    for e in doc._.underlying_punct:
        if e["surface"] or e["underlying"]:  # underlying None: shown as "?"
            after = doc[e["after"]].text if e["after"] is not None else "^"
            lines.append(f"  slot {e['slot']:>2} after {after!r:14} underlying: {_fmt(e['underlying']):12} "
                         f"surface: {_fmt(e['surface'])}")
    return lines


def _shipped_demo(args) -> dict:
    from spacy_punctgen.api.load import load
    from spacy_punctgen.pipeline.shipped import sample_transcript_path
    from spacy_punctgen.api.stream import restore_text

    transcript = sample_transcript_path("en").read_text(encoding="utf-8").strip()
    restored = restore_text(load("en"), transcript)
    lines = ["transcript (spacy_punctgen/shipped/samples/en_transcript.txt):", transcript, "",
             "punctuated by spacy_punctgen.load('en'):", restored]
    analyzer = load("en", mode="analyze")
    shown = []
    for sent in list(analyzer(restored).sents)[: args.show]:
        doc = analyzer(sent.text)
        lines += ["", doc.text] + _slot_lines(doc)
        shown.append({"text": doc.text, "underlying_punct": [[list(e["underlying"] or []), list(e["surface"])]
                                                             for e in doc._.underlying_punct]})
    return {"_text": "\n".join(lines), "transcript": transcript, "restored_text": restored, "analysed": shown}


@command("demo", "Punctuate the shipped sample transcript and explain its punctuation (--train: train on a "
                 "sample first)", _arguments)
def demo_cli(args) -> dict:
    if not args.train:
        return _shipped_demo(args)
    return _train_demo(args)


def _train_demo(args) -> dict:
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
        lines += _slot_lines(doc)
        shown.append({"text": doc.text, "log_prob": doc._.punct_logprob,
                      "underlying_punct": [[list(e["underlying"] or []), list(e["surface"])]
                                           for e in doc._.underlying_punct]})
    return {"_text": "\n".join(lines), "model": str(out), "direction": summary["direction"],
            "test_perplexity_per_slot": result["perplexity_per_slot"], "n_test_slots": result["n_slots"],
            "analysed": shown}
