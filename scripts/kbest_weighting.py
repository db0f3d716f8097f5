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
import time
from pathlib import Path

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.parsed import parsed_sentences
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.mbr import restore_mixtures
from spacy_punctgen.evaluation.metrics import gold_slots, require_sentences, restoration_report
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.decode.mixture import restore_weighted_mixtures


def evaluate(model_dir, test, parsed: Path, k: int, weights: str, predictions=None) -> dict:
    """The report of module docstring's weighting ``weights``; ``predictions``: also write the
    predictions there (``spacy_punctgen.evaluation.predictions`` format, for
    ``scripts/permutation_test.py``)."""
    model = PunctModel.from_disk(model_dir)
    gold, stats = preprocess_file(test)
    require_sentences(gold, stats, test, "restore")
    stem = parsed.name[:-len(".conllu")] if parsed.name.endswith(".conllu") else parsed.name
    paths = [parsed.with_name(f"{stem}.k{j + 1}.conllu") for j in range(k)]
    probs = json.loads(parsed.with_name(f"{stem}.kbest.json").read_text(encoding="utf-8"))
    ids = [ud.sent_id for ud in read_conllu(paths[0])]
    if len(ids) != len(probs):
        raise ValueError(f"{paths[0]}: {len(ids)} sentences, but the kbest.json file has {len(probs)}")
    if all(i is not None for i in ids) and all(g.sent_id is not None for g in gold):
        order = {i: q for q, i in enumerate(ids)}
        if any(g.sent_id not in order for g in gold):
            raise ValueError(f"{paths[0]}: sent_ids do not match {test}")
        order = [order[g.sent_id] for g in gold]
    elif len(ids) == len(gold):  # no sent_ids (e.g. UD 1.4): sentence for sentence, as parsed_sentences
        order = list(range(len(gold)))
    else:
        raise ValueError(f"{paths[0]}: without sent_ids its {len(ids)} sentences must be {test}'s {len(gold)}")
    parses = [parsed_sentences(p, gold) for p in paths]
    if weights == "padded":
        sets = [list(ts) for ts in zip(*parses)]
        w = [[1.0] * k for _ in gold]
    else:
        m = [len(probs[order[q]]) for q in range(len(gold))]
        sets = [[parses[j][q] for j in range(m[q])] for q in range(len(gold))]
        w = [probs[order[q]][:m[q]] if weights == "beam" else [1.0] * m[q] for q in range(len(gold))]
    t0 = time.perf_counter()
    if weights == "beam":
        choices = restore_weighted_mixtures(model, sets, w)
    else:
        choices = restore_mixtures(model, sets, method="marginal")
    seconds = time.perf_counter() - t0
    pred = [[c.surface for c in sent] for sent in choices]
    if predictions is not None:
        from spacy_punctgen.evaluation.predictions import record, write_predictions

        write_predictions(predictions, (record(slots, g.sent_id, [c.prob for c in sent])
                                        for slots, sent, g in zip(pred, choices, gold)))
    return {"test": str(test), "parsed": str(parsed), "k": k, "weights": weights, "method": "marginal",
            **restoration_report(gold_slots(gold), pred),
            "mean_trees": round(sum(map(len, sets)) / max(1, len(sets)), 3),
            "decode_seconds": round(seconds, 2)}


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
