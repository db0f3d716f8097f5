"""Re-parse a CoNLL-U file's words with a trained spaCy pipeline and write the predicted trees.

Usage (project.yml ``parse-test``):
    python scripts/parse_conllu.py MODEL IN.conllu OUT.conllu [--batch-size 256]

Why: restoration on *parsed* trees (AED parsed, the paper's Table 4 and Figure 4) needs
the depunctuated test sentences with the trees a parser of unpunctuated text predicts
instead of the gold ones. Each sentence is parsed on its own (gold segmentation and gold
words, as in the paper): a ``Doc`` built from the FORM column, every token but the first
marked as not starting a sentence, so spaCy's parser keeps it one tree. UPOS (from the
morphologizer), XPOS (tagger), HEAD and DEPREL are replaced; everything else, comments
included (``# sent_id``, ``# punct_slots``), is copied, so the output lines up with the
input sentence for sentence. Multiword-token ranges and empty nodes are copied unchanged
and not parsed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc

from spacy_punctgen.workflow.conllu_files import read_sentences, write_sentences


def _words(sentence) -> list:
    return [tok for tok in sentence if isinstance(tok["id"], int)]


def _doc(nlp, words, where: str) -> Doc:
    if not words:
        raise ValueError(f"{where}: sentence without words")
    doc = Doc(nlp.vocab, words=[w["form"] for w in words])
    for i, token in enumerate(doc):
        token.is_sent_start = i == 0
    return doc


def _fill(sentence, words, doc: Doc, where: str) -> None:
    roots = [t for t in doc if t.head.i == t.i]
    if len(roots) != 1:
        raise ValueError(f"{where}: the parser returned {len(roots)} roots for one sentence")
    for word, token in zip(words, doc):
        word["upos"] = token.pos_ or "X"
        word["xpos"] = token.tag_ or "_"
        word["head"] = 0 if token.head.i == token.i else token.head.i + 1
        word["deprel"] = "root" if token.head.i == token.i else (token.dep_ or "dep")


def parse_file(model, src: Path, dest: Path, batch_size: int = 256) -> dict:
    """Parse every sentence of ``src`` with ``model``; write ``dest`` atomically; return counts."""
    nlp = spacy.load(model) if not hasattr(model, "pipe") else model
    if "parser" not in nlp.pipe_names:
        raise ValueError(f"{model}: the pipeline has no parser")
    sentences = read_sentences(src)
    t0 = time.perf_counter()
    docs = []
    for k, sentence in enumerate(sentences):
        docs.append(_doc(nlp, _words(sentence), f"{src}: sentence {k + 1}"))
    parsed = list(nlp.pipe(docs, batch_size=batch_size))
    n_words = 0
    for k, (sentence, doc) in enumerate(zip(sentences, parsed)):
        words = _words(sentence)
        _fill(sentence, words, doc, f"{src}: sentence {k + 1} ({sentence.metadata.get('sent_id', 'no sent_id')})")
        n_words += len(words)
    write_sentences(sentences, dest)
    return {"model": str(model), "input": str(src), "output": str(dest), "n_sentences": len(sentences),
            "n_words": n_words, "seconds": round(time.perf_counter() - t0, 2)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="spaCy pipeline directory with a parser (e.g. .../parser-depunct/model-best)")
    p.add_argument("input", type=Path, help="CoNLL-U file whose words are parsed")
    p.add_argument("output", type=Path, help="CoNLL-U file to write")
    p.add_argument("--batch-size", type=int, default=256)
    args = p.parse_args(argv)
    try:
        result = parse_file(args.model, args.input, args.output, args.batch_size)
    except (ValueError, OSError) as e:
        print(f"parse_conllu: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
