"""Stability of restoration: restore the first N dev sentences (each one lowercased, unpunctuated
line), restore the output again, and count the texts that change and those that lose a '?'.

    python scripts/restore_stability.py ../shared/ud/en_ewt/en_ewt-ud-dev.conllu --n 400
"""
import argparse
import json

import spacy_punctgen
from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.transcript import transcript_text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("conllu")
    p.add_argument("--n", type=int, default=400)
    args = p.parse_args()
    nlp = spacy_punctgen.load("en")
    changed = lost = 0
    texts = [transcript_text([u]) for u in read_conllu(args.conllu)[:args.n]]
    for text in texts:
        once = spacy_punctgen.restore_text(nlp, text)
        twice = spacy_punctgen.restore_text(nlp, once)
        changed += once != twice
        lost += once.count("?") > twice.count("?")
    print(json.dumps({"texts": len(texts), "changed_on_second_restore": changed, "lost_question_marks": lost}))


if __name__ == "__main__":
    main()
