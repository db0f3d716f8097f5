"""Re-parse a CoNLL-U file's words with a trained spaCy pipeline and write the predicted trees.

Usage (project.yml ``parse-test``, ``parse-test-kbest``):
    python scripts/parse_conllu.py MODEL IN.conllu OUT.conllu [--batch-size 256] [--kbest K [--compare-greedy]
        [--search beam|sample [--temperature T] [--seed S]]]

With ``--kbest K`` the parser searches with a beam of width K
(:func:`spacy_punctgen.parsing.kbest.kbest_trees`) and K files are written, ``OUT.k1.conllu``
... ``OUT.kK.conllu``: file ``j`` holds each sentence's ``j``-th most probable distinct tree, or its
most probable one where the beam found fewer than ``j`` -- so the uniform mixture over the K
files (``evaluate-restore --parsed 'OUT.k*.conllu'``) weighs the best tree by the beam slots it
fills.  The trees' probabilities go to ``OUT.kbest.json`` (per sentence, one per distinct tree,
in the files' order).  ``--search sample``: the greedy parse and K - 1 trees drawn from the
parser's transition probabilities at ``--temperature`` (:mod:`spacy_punctgen.parsing.parser_samples`);
file 1 holds the greedy tree, the others the further distinct trees by frequency, and the
json file each tree's share of the K (``kbest_weighting.py --weights beam`` weighs by it: the
Monte Carlo mixture of the K trees).  ``--compare-greedy`` also parses the same sentences greedily in the same
run and reports the cost of the beam parse against it (``cost_vs_greedy``: thread CPU seconds
of the parse only, files not included; a few sentences are parsed first to warm up).

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
from pathlib import Path


from spacy_punctgen.workflow.parsing_files import parse_file, parse_file_kbest  # noqa: F401 (also used by tests)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="spaCy pipeline directory with a parser (e.g. .../parser-depunct/model-best)")
    p.add_argument("input", type=Path, help="CoNLL-U file whose words are parsed")
    p.add_argument("output", type=Path, help="CoNLL-U file to write")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--kbest", type=int, default=0,
                   help="write K files of the beam's K best distinct trees (see the module docstring)")
    p.add_argument("--compare-greedy", action="store_true",
                   help="with --kbest: also time a greedy parse of the same sentences (cost_vs_greedy)")
    p.add_argument("--search", choices=("beam", "sample"), default="beam",
                   help="with --kbest: the beam's K best, or the greedy parse and K - 1 drawn trees")
    p.add_argument("--temperature", type=float, default=1.0, help="with --search sample (1: the parser's own)")
    p.add_argument("--seed", type=int, default=0, help="with --search sample")
    args = p.parse_args(argv)
    try:
        if args.kbest:
            result = parse_file_kbest(args.model, args.input, args.output, args.kbest, args.batch_size,
                                      compare_greedy=args.compare_greedy, search=args.search,
                                      temperature=args.temperature, seed=args.seed)
        else:
            result = parse_file(args.model, args.input, args.output, args.batch_size)
    except (ValueError, OSError) as e:
        print(f"parse_conllu: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
