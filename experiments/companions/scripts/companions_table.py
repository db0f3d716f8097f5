"""Write ``results/companions.md``: per treebank, every variant of ``trigram_hmm`` and ``crf_syntax``
from ``metrics/<treebank>/companions/*.json``, the papers' own figures beside them, and the comma
F1 of ``crf_lexical`` and ``punctgen`` where the core workflow's metrics files hold it.

Usage: python experiments/companions/scripts/companions_table.py [--metrics metrics] [--out results/companions.md]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spacy_punctgen.workflow.metrics_files import fmt

TREEBANKS = [("en_ewt", "en_ewt train / test"),
             ("fr_pooled", "French: fr_sequoia + fr_partut + fr_gsd, every split pooled, 10-fold CV"),
             ("cs_pooled", "Czech: cs_cltt + cs_fictree + cs_cac, every split pooled, 10-fold CV")]

#: the papers' published figures (other data: WSJ §23; FTB and PDT 2.0, 10-fold CV), keyed by
#: (treebank language, system, variant, trees); 001 from SYSTEMS.md, 004 from its Tables 1 and 2
PAPER = {
    ("en", "trigram_hmm", "lm", "gold"): "F .621, sent .470 (001, model 1)",
    ("en", "trigram_hmm", "ec_full_pos", "gold"): "F .748, sent .579 (001, model 10)",
    ("en", "trigram_hmm", "ec_full_pos", "parsed"): "F .701 (001, Collins parses)",
    ("fr", "crf_syntax", "lex", "gold"): "F 38.7, SER 93.6",
    ("fr", "crf_syntax", "lex_pos", "gold"): "F 43.2, SER 85.4",
    ("fr", "crf_syntax", "lex_pos_iscoord", "gold"): "F 46.9, SER 82.7",
    ("fr", "crf_syntax", "lex_pos_ismod", "gold"): "F 48.4, SER 79.5",
    ("fr", "crf_syntax", "lex_pos_depcross", "gold"): "F 75.0, SER 50.7",
    ("fr", "crf_syntax", "all", "gold"): "F 76.4, SER 47.6",
    ("fr", "crf_syntax", "all", "parsed"): "F 76.1, SER 48.4",
    ("cs", "crf_syntax", "lex", "gold"): "F 62.9, SER 62.0",
    ("cs", "crf_syntax", "lex_pos", "gold"): "F 64.1, SER 56.0",
    ("cs", "crf_syntax", "lex_pos_iscoordcz", "gold"): "F 69.6, SER 49.6",
    ("cs", "crf_syntax", "lex_pos_deplabel", "gold"): "F 77.1, SER 39.6",
    ("cs", "crf_syntax", "lex_pos_depcross", "gold"): "F 79.6, SER 36.3",
    ("cs", "crf_syntax", "all", "gold"): "F 91.2, SER 16.8",
    ("cs", "crf_syntax", "all", "parsed"): "F 85.5, SER 27.0",
}
COLUMNS = ["precision", "recall", "f1", "ser", "token_accuracy", "sentence_accuracy"]


def records(folder: Path):
    out = []
    for path in sorted(folder.glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf8"))
        if isinstance(rec, dict) and all(k in rec for k in ["system", "variant", "trees", *COLUMNS]):
            out.append(rec)
    order = {"trigram_hmm": 0, "crf_syntax": 1}
    return sorted(out, key=lambda r: (order.get(r["system"], 9), r["trees"] != "gold", r.get("order", 0)))


def reference_rows(metrics: Path, treebank: str):
    """Comma F1 of the core workflow's systems on the same test set, where it was measured."""
    rows = []
    for system in ("crf_lexical", "punctgen"):
        path = metrics / treebank / f"{system}.json"
        if not path.is_file():
            continue
        rec = json.loads(path.read_text(encoding="utf8"))
        if rec.get("protocol", "standard") != "standard":
            continue
        for trees in ("gold", "parsed"):
            f1 = rec.get(f"comma_f1_{trees}")
            if f1 is not None:
                rows.append(f"| {system} (all marks) | | {trees} | | | {fmt(f1)} | | | | {rec.get('n_sentences', '')} "
                            f"| `{path}` |")
    return rows


def table(metrics: Path, treebank: str, title: str) -> list:
    recs = records(metrics / treebank / "companions")
    if not recs:
        return []
    lang = treebank.split("_")[0]
    lines = [f"## {treebank}", "", title + ".", "",
             "| system | variant | trees | P | R | F1 | SER | token acc. | sentence acc. | sentences | paper |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in recs:
        paper = PAPER.get((lang, r["system"], r["variant"], r["trees"]), "")
        lines.append(f"| {r['system']} | {r['variant']} | {r['trees']} | "
                     + " | ".join(fmt(r[c]) for c in COLUMNS) + f" | {r['n_sentences']} | {paper} |")
    lines.extend(reference_rows(metrics, treebank))
    parsed = [r for r in recs if r["trees"] == "parsed" and "parser_las" in r]
    if parsed:
        lines += ["", f"Parsed trees: `{parsed[0]['parser']}` on the depunctuated test words "
                  f"(UAS {fmt(parsed[0]['parser_uas'])}, LAS {fmt(parsed[0]['parser_las'])}); "
                  "the models are trained on gold trees (paper 004's protocol)."]
    return lines + [""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metrics", default="metrics")
    ap.add_argument("--out", default="results/companions.md")
    a = ap.parse_args(argv)
    metrics = Path(a.metrics)
    body = [line for tb, title in TREEBANKS for line in table(metrics, tb, title)]
    if not body:
        print(f"no companion metrics under {metrics}/*/companions", file=sys.stderr)
        return 1
    head = ["# The companion comma systems of papers 001 and 004", "",
            "Written by `python -m spacy project run companions-table experiments/companions` from "
            "`metrics/<treebank>/companions/*.json`. Input: depunctuated words (every mark removed, as "
            "for punctgen; the papers kept the other marks); a slot is right when it holds a comma exactly "
            "when the gold one does. P/R/F1 and SER (`(fp + fn) / gold commas`) over every slot, token "
            "accuracy over the slots between words, sentence accuracy over whole sentences. `trigram_hmm` "
            "(Shieber & Tao 2003): hidden-event trigram LM + subtree end counts (`ec`); `crf_syntax` "
            "(Cerisara et al.): word CRF with dependency features (`spacy_punctgen/baselines/`). The "
            "`paper` column holds the papers' own figures on their data (WSJ §23; French Treebank; PDT 2.0), "
            "for orientation only. `crf_lexical` and `punctgen` rows (all marks restored; commas counted by "
            "`mark_prf`) come from the core workflow's metrics files on the same test sentences.", ""]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(head + body), encoding="utf8")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
