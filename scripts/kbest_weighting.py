"""Restoration from one parser's k best trees (``scripts/parse_conllu.py --kbest K`` files), with
the trees of a sentence weighed three ways, to choose the weighting on dev.

Usage:
    python scripts/kbest_weighting.py MODEL TEST.conllu PARSED.conllu K [--weights uniform|beam|padded]

``PARSED.conllu`` names the files ``parse_conllu.py`` wrote (``PARSED.k1.conllu`` ...
``PARSED.kK.conllu`` and ``PARSED.kbest.json``).  Sentence ``s`` has ``m_s <= K`` distinct trees
(the length of its list in the json file):

* ``uniform``: the mixture of its ``m_s`` distinct trees, equally weighed: what the pipeline's
  ``punctgen`` component does with ``kbest_weights = "uniform"`` behind ``punctgen_kbest``;
* ``beam``: the same trees weighed by the beam's probabilities, renormalised over them
  (``kbest_weights = "beam"``, :func:`spacy_punctgen.decode.mixture.restore_weighted_mixtures`);
* ``padded``: the uniform mixture of the K files (the best tree repeated where there are fewer
  than K): what ``evaluate-restore --parsed 'PARSED.k*.conllu'`` decodes.

Prints one JSON object: the restoration report (AED, comma P/R/F1) of the ``marginal`` decoder
and the mean number of trees per sentence.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spacy_punctgen.workflow.kbest_eval import evaluate


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="punctuation model folder (e.g. spacy_punctgen/shipped/en_ewt)")
    p.add_argument("test", type=Path, help="gold punctuated CoNLL-U file")
    p.add_argument("parsed", type=Path, help="the OUT.conllu given to parse_conllu.py --kbest")
    p.add_argument("k", type=int, help="the --kbest K of that parse")
    p.add_argument("--weights", choices=("uniform", "beam", "padded"), default="uniform")
    p.add_argument("--predictions", type=Path, default=None, help="also write the predictions here (JSON Lines)")
    args = p.parse_args(argv)
    try:
        print(json.dumps(evaluate(args.model, args.test, args.parsed, args.k, args.weights, args.predictions)))
    except (ValueError, OSError) as e:
        print(f"kbest_weighting: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
