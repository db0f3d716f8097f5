"""Altered words of a restored transcript: the input's whitespace-separated tokens that do not
come back whole (``spacy_punctgen.evaluation.text_kept.altered_words``).

    # a treebank's test split as one lowercased, unpunctuated stream, restored by load("en")
    python scripts/altered_words.py stream --conllu ../shared/ud/en_ewt/en_ewt-ud-test.conllu --text out/ewt.txt
    python scripts/altered_words.py stream --ted ../shared/iwslt/dev2012.tsv --text out/ted.txt
    python -m spacy_punctgen restore out/ewt.txt -o out/ewt.restored.txt   # any version's CLI
    python scripts/altered_words.py count out/ewt.txt out/ewt.restored.txt --output metrics/en_ewt/restore/altered_words.json
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def stream_text(args) -> str:
    if args.conllu:
        from spacy_punctgen.data.conllu import read_conllu
        from spacy_punctgen.data.transcript import transcript_text

        return transcript_text(read_conllu(args.conllu), lower=True)
    from spacy_punctgen.data.ted import read_ted, split_blocks

    ted = read_ted(args.ted)
    _, (lo, hi) = split_blocks(ted, 0.8, args.ted)
    return " ".join(w.lower() for w in ted.words[lo:hi])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stream", help="write the input stream")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--conllu")
    g.add_argument("--ted", help="word<TAB>label file: its dev block (the last 20 %%)")
    s.add_argument("--text", required=True)
    c = sub.add_parser("count", help="count altered words of a restored file against its input")
    c.add_argument("input")
    c.add_argument("restored")
    c.add_argument("--output", required=True)
    args = p.parse_args()
    if args.cmd == "stream":
        Path(args.text).parent.mkdir(parents=True, exist_ok=True)
        Path(args.text).write_text(stream_text(args) + "\n", encoding="utf-8")
        return
    from spacy_punctgen.evaluation.text_kept import altered_words

    text = Path(args.input).read_text(encoding="utf-8")
    restored = Path(args.restored).read_text(encoding="utf-8")
    res = {"input": args.input, **altered_words(text, restored)}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
