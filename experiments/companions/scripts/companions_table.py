"""Write ``results/companions.md``: per treebank, every variant of ``trigram_hmm`` and ``crf_syntax``
from ``metrics/<treebank>/companions/*.json``, the papers' own figures beside them, punctgen's rows
where the study restored the same test sentences with it, the comma F1 of ``crf_lexical`` and
``punctgen`` where the core workflow's metrics files hold it, and the paired tests of
``significance.json`` (``companions_significance.py``); paper 002's parser comparison from
``metrics/<treebank>/companions/punct_features_parser.json`` (``punct_features_parser.py``).

Usage: python experiments/companions/scripts/companions_table.py [--metrics metrics] [--out results/companions.md]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spacy_punctgen.workflow.metrics_files import fmt

TREEBANKS = [("en_ewt", "en_ewt train / test"),
             ("fr_sequoia", "fr_sequoia train / test, gold trees"),
             ("cs_cltt", "cs_cltt train / test, gold trees"),
             ("zh_gsd_ud14", "zh_gsd_ud14 (UD 1.4) train / test, gold trees"),
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
SCORES = ("precision", "recall", "f1", "ser")


def records(folder: Path):
    out = []
    for path in sorted(folder.glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf8"))
        if isinstance(rec, dict) and all(k in rec for k in ["system", "variant", "trees", *COLUMNS]):
            out.append(rec)
    order = {"trigram_hmm": 0, "crf_syntax": 1, "punctgen": 2}
    return sorted(out, key=lambda r: (order.get(r["system"], 9), r["trees"] != "gold", r.get("order", 0)))


def reference_rows(metrics: Path, treebank: str, notes: list):
    """Comma F1 of the core workflow's systems on the same test set, where it was measured; a
    system measured under another protocol gets a note in ``notes`` instead of a row."""
    rows = []
    for system in ("crf_lexical", "punctgen"):
        path = metrics / treebank / f"{system}.json"
        if not path.is_file():
            continue
        rec = json.loads(path.read_text(encoding="utf8"))
        if rec.get("protocol", "standard") != "standard":
            notes.append(f"`{path}` ({system}: comma F1 {fmt(rec.get('comma_f1_gold'))} gold, "
                         f"{fmt(rec.get('comma_f1_parsed'))} parsed) is a {rec['protocol']} over every split, "
                         "not this train / test split: no row, no test.")
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
    notes: list = []
    lines.extend(reference_rows(metrics, treebank, notes))
    parsed = [r for r in recs if r["trees"] == "parsed" and "parser_las" in r]
    if parsed:
        lines += ["", f"Parsed trees: `{parsed[0]['parser']}` on the depunctuated test words "
                  f"(UAS {fmt(parsed[0]['parser_uas'])}, LAS {fmt(parsed[0]['parser_las'])}); "
                  "the models are trained on gold trees (paper 004's protocol)."]
    for r in recs:
        if r["system"] == "punctgen" and r["trees"] == "gold":
            notes.append(punctgen_note(r))
    lines += [""] + [f"* {n}" for n in notes] if notes else []
    return lines + [""] + significance_lines(metrics / treebank / "companions" / "significance.json")


#: paper 002's figures (WSJ §23, Penn2Malt dependencies, greedy arc-standard parser; SYSTEMS.md)
PAPER_002 = {"punct": "UAS 90.38 (Table 5, baseline; 90.34 in Table 1)", "depunct": "UAS 89.33 (Table 1, A-S, marks removed)",
             "properties": "UAS 91.32 (Table 5, All-Punc)"}
PARSER_TREEBANKS = ("en_ewt", "zh_gsd_ud14")


def parser_table(metrics: Path) -> list:
    """Paper 002's parser comparison (``punct_features_parser.py summary``): word UAS/LAS over the
    seeds per system, the paired tests, and the analysis check where it was run."""
    lines = []
    for tb in PARSER_TREEBANKS:
        path = metrics / tb / "companions" / "punct_features_parser.json"
        if not path.is_file():
            continue
        summ = json.loads(path.read_text(encoding="utf8"))
        lines += [f"### {tb}", "", "| parser | UAS mean ± std | UAS min-max | LAS mean ± std | LAS min-max | seeds "
                  "| steps | sentences | paper (PTB) |", "|---|---:|---:|---:|---:|---|---:|---:|---|"]
        for system in ("punct", "depunct", "properties"):
            e = summ["systems"].get(system)
            if e is None:
                continue
            cells = []
            for m in ("uas", "las"):
                cells += [f"{100 * e[m]:.2f} ± {100 * e[m + '_std']:.2f}",
                          f"{100 * e[m + '_min']:.2f}-{100 * e[m + '_max']:.2f}"]
            lines.append(f"| {system} | " + " | ".join(cells) + f" | {','.join(map(str, e['seeds']))} | "
                         f"{','.join(map(str, e['max_steps']))} | {','.join(map(str, e['n_sentences']))} | "
                         f"{PAPER_002[system]} |")
        lines.append("")
        for name, t in summ.get("paired", {}).items():
            per_seed = ", ".join(f"{100 * d:+.2f}" for d in t["uas_diff_per_seed"])
            text = f"* {name.replace('_', ' ')}: UAS difference per seed {per_seed}"
            if "uas_seed0_p" in t:
                text += (f"; seed 0, approximate randomisation over sentences: UAS {100 * t['uas_seed0_diff']:+.2f} "
                         f"(p {pval(t['uas_seed0_p'])}), LAS {100 * t['las_seed0_diff']:+.2f} (p {pval(t['las_seed0_p'])})")
            lines.append(text + ".")
        ana = metrics / tb / "companions" / "punct_features_parser_analysis.json"
        if ana.is_file():
            a = json.loads(ana.read_text(encoding="utf8"))
            cells = "; ".join(f"{k} {v['perplexity_per_slot']:.4f}" for k, v in a["trees"].items())
            lines.append(f"* Analysis (does it help us): per-slot perplexity of the gold marks of the test sentences "
                         f"under punctgen `{a['punctgen_model']}` given each seed-0 parser's trees: {cells} "
                         f"(`{ana}`).")
        lines.append("")
    if not lines:
        return []
    return ["## Paper 002: punctuation as properties (`punct_features_parser`)", "",
            "Three spaCy parsers (tok2vec + parser, `experiments/companions/configs/punct_features_parser.cfg`, "
            "the same budget and seeds): `punct` trained and run on the sentences with their punctuation tokens, "
            "`depunct` on the depunctuated words, `properties` on the depunctuated words carrying their neighbouring "
            "marks as properties (Ma, Zhang & Zhu 2014; `spacy_punctgen/parsing/punct_properties.py`). Word UAS/LAS "
            "(punctuation arcs excluded) on the test sentences that depunctuation keeps, against the depunctuated gold "
            "tree; the punct parser's word heads that are marks are mapped to the nearest word ancestor. Mean ± sample "
            "std over seeds. `python experiments/companions/scripts/punct_features_parser.py` "
            "(`companions-002-en`, `companions-002-zh`). The paper's column: its own figures on the WSJ (other "
            "data, parser and budget), for orientation only.", ""] + lines


def punctgen_note(rec: dict) -> str:
    """Where a punctgen row's model comes from, and whether it is the core workflow's record."""
    h = rec.get("hyper", {})
    text = (f"punctgen `{rec['variant']}`: the model `{rec['model']}` restoring every mark (commas scored as "
            f"the companions'; {h.get('method')} MBR, {h.get('n_samples')} samples, seed {h.get('seed')}).")
    ref = rec.get("reference_comma")
    if ref:
        mine = rec["mark_prf_comma"]
        same = "the same as" if rec.get("reference_counts_equal") else "not the same as"
        text += (f" Its comma counts (tp/fp/fn {mine['tp']}/{mine['fp']}/{mine['fn']}, `mark_prf`) are {same} "
                 f"the core workflow's record `{rec['reference']}` ({ref['tp']}/{ref['fp']}/{ref['fn']}, "
                 f"F1 {fmt(ref['f1'])}).")
    return text


def significance_lines(path: Path) -> list:
    """The paired tests of punctgen against the best other system, and what could not be tested."""
    if not path.is_file():
        return []
    sig = json.loads(path.read_text(encoding="utf8"))
    lines = []
    if sig["tests"]:
        lines += [f"Paired tests, punctgen against the best other system (highest F1) on the same test sentences: "
                  f"two-sided p of approximate randomisation over sentences, {sig['n_permutations']} shuffles, "
                  f"seed {sig['seed']} (P, R, F1; SER by the sign-flip test of each sentence's fp + fn, "
                  "which is its randomisation test). `significance.json`.", "",
                  "| trees | system | P | R | F1 | SER | against | P | R | F1 | SER | p (P) | p (R) | p (F1) | p (SER) |",
                  "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for t in sig["tests"]:
            lines.append(f"| {t['trees']} | {t['system']} | " + " | ".join(fmt(t[k]) for k in SCORES)
                         + f" | {t['against']} | " + " | ".join(fmt(t[f'{k}_against']) for k in SCORES)
                         + " | " + " | ".join(pval(t[f"p_{k}"]) for k in SCORES) + " |")
        lines.append("")
    for u in sig["untested"]:
        lines.append(f"Not tested ({u['trees']} trees, against {u['against']}): {u['reason']}.")
    return lines + ([""] if sig["untested"] else [])


def pval(p: float) -> str:
    """Four decimals: 10,000 shuffles cannot give less than 0.0001 (the observed one counts)."""
    return f"{p:.4f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metrics", default="metrics")
    ap.add_argument("--out", default="results/companions.md")
    a = ap.parse_args(argv)
    metrics = Path(a.metrics)
    body = [line for tb, title in TREEBANKS for line in table(metrics, tb, title)]
    body += parser_table(metrics)
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
            "for orientation only. `punctgen` rows: a trained punctgen model restoring every mark of the same "
            "test sentences from the same trees, its commas scored as the companions' (`companions_run.py "
            "punctgen`). `crf_lexical (all marks)` and `punctgen (all marks)` rows (commas counted by "
            "`mark_prf`) come from the core workflow's metrics files on the same test sentences.", ""]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(head + body), encoding="utf8")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
