"""Write ``tests/fixtures/restore_golden.json``: what the shipped English model computes on
``assets/sample`` (all 170 sentences, gold trees), which ``tests/decode/test_restore_golden.py``
holds every later version of the ATTACH scoring, the priors and the analysis to.

Run from the repository root (``python tests/make_restore_golden.py``) only when these
outputs are *meant* to change; the file records what the code computed when it was written.

Per sentence it stores: the ``marginal`` restoration (one ``[surface, prob]`` per slot,
``restore_sentences``), ATTACH's priors of every node as two checksums (``Σ p`` and
``Σ (j+1)·p`` over the node's pairs, mbr's ``mixture_priors``), and what the ``punctgen``
component reports in analysis (``PunctModel.analyze``: the best pairs and ``log p'(x|T)``).
Floats are written with ``float.hex`` (exact).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "restore_golden.json"
MODEL = ROOT / "spacy_punctgen" / "shipped" / "en_ewt"
SAMPLE = ROOT / "assets" / "sample"


def sentences():
    from spacy_punctgen.data.preprocess import preprocess_file

    out = []
    for split in ("train", "dev", "test"):
        sents, _ = preprocess_file(SAMPLE / f"en_sample-ud-{split}.conllu")
        out += sents
    return out


def outputs(model, sents) -> dict:
    """Everything the fixture records, for ``sents`` under ``model``."""
    from spacy_punctgen.decode import mbr

    choices = mbr.restore_sentences(model, sents)
    (priors), _ = mbr.mixture_priors(model, [[s] for s in sents])
    checks = []
    for (prior,) in priors:
        rows = []
        for p in prior.probs:
            rows.append([float(p.sum()).hex(), float((np.arange(1, len(p) + 1) * p).sum()).hex()])
        checks.append(rows)
    analysed = model.analyze(sents)
    return {
        "restore": [[[list(c.surface), float(c.prob).hex()] for c in cs] for cs in choices],
        "priors": checks,
        "analyze": [[None if pairs is None else [[list(l), list(r)] for l, r in pairs], float(lp).hex()]
                    for pairs, lp in analysed],
    }


def main() -> None:
    from spacy_punctgen.model.punct_model import PunctModel

    model = PunctModel.from_disk(MODEL)
    sents = sentences()
    data = {"n_sentences": len(sents), **outputs(model, sents)}
    FIXTURE.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE} ({len(sents)} sentences, {FIXTURE.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
