"""Write results/paper003.md: paper 003's systems (CPP, UPP) beside the project's stream systems
(the shipped cascade, crf_lexical, trivial: metrics/<treebank>/stream/*.json where they were
measured on the same streams) per treebank, with approximate-randomisation tests against
crf_lexical, the trees' UAS and decoding speed, and the paper's own figures (SYSTEMS.md).

Usage:
    python experiments/paper003/scripts/table.py [--treebanks en_ewt fr_sequoia ...] [--output results/paper003.md]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OTHERS = ("shipped", "shipped_f1", "crf_lexical", "trivial")
DESIGN = """### How the models are built (spacy_punctgen/incremental/, cython_ext/incremental.pyx)

- Transition system: arc-eager (Shift, RightArc, LeftArc, Reduce; Zhang & Nivre 2011, as the paper) over the
  stream with no root token; UPP's Shift/RightArc carry the mark (N, M, F), CPP scores the action type with its
  parser and the mark with a separate classifier from the same features (the state and the action type, i.e.
  the partial tree after the action). Both constraints of the paper: a full stop only when the words since the
  last one form one tree; after it only Reduce until the stack is empty. Every analysis has 2n actions.
- Unlabelled: the paper's templates of Table 2 minus the dependency-label ones (t, T), 58 templates, hashed
  into 2^20 buckets; the scores are UAS.
- Training: averaged perceptron with early update, beam 5 (the paper's), the beam restarted from the gold state
  after each update (a 10-sentence stream has ~200 steps); CPP's parser learns action types that way, its mark
  classifier locally on the gold states (the cascade's independent sub-model). Epoch picked by dev mark F1.
- Gold: the depunctuated, projectivised UD trees of 10 consecutive training sentences, lowercased; where a
  full stop does not end a tree (EWT sentences without a final mark, a ? inside a sentence) the trees are cut
  at the full stops and a segment's further roots hang from its first, so every gold
  analysis is reachable (the share of the test heads so moved is in each table). UAS is scored against the
  unmodified projectivised trees.
- POS tags (the templates need them): a greedy averaged-perceptron tagger of lowercased unpunctuated text,
  jackknifed (4 folds) for the parser's training data (its test accuracy is in each table).
"""

PAPER = """### Paper 003's own figures (IWSLT09 correct transcripts, Table 4; different data: for orientation)

| system | M P / R / F1 | F P / R / F1 | mixed P / R / F1 |
|---|---:|---:|---:|
| CRF baseline | 33.2 / 25.9 / **29.1** | 81.5 / 83.8 / **82.6** | 78.8 / 80.7 / **79.8** |
| CPP | 51.0 / 50.3 / **50.6** | 89.0 / 93.1 / **91.0** | 89.6 / 92.7 / **91.1** |
| UPP | 52.6 / 59.7 / **55.9** | 93.2 / 91.3 / **92.2** | 92.0 / 92.3 / **92.2** |

Its parser (Table 6, texts without punctuation, its own 5 % test split of EWT + OntoNotes): UAS 92.6.
Its IWSLT inputs average 10 words and 1.3 sentences; the streams here are 10 sentences (about 107
words on EWT), lowercased, from web text whose sentences often end without a mark.
"""


def load(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def treebank_section(tb: str) -> str:
    from spacy_punctgen.evaluation.stream import compare_reports, markdown_table

    ours = [r for r in (load(ROOT / "metrics" / tb / "paper003" / f"{m}.json") for m in ("cpp", "upp", "upp_fine")) if r]
    if not ours:
        return ""
    ref = ours[0]
    others = [r for r in (load(ROOT / "metrics" / tb / "stream" / f"{m}.json") for m in OTHERS) if r]
    others = [r for r in others if r["n_units"] == ref["n_units"] and r["n_words"] == ref["n_words"]]
    reports = others + ours
    comparison = compare_reports(reports, reference="crf_lexical" if any(r["system"] == "crf_lexical" for r in reports)
                                 else ours[0]["system"])
    out = [markdown_table(comparison, f"{tb}: 10-sentence lowercased test streams"), ""]
    out.append("| system | UAS (all words) | UAS (non-root words) | POS accuracy | gold heads moved by the segmentation | "
               "decoding words/s | spaCy pipeline on the same streams, s | training, s | best epoch |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in ours:
        tr = r.get("train", {})
        out.append(f"| {r['system']} | {100 * r['uas']:.1f} | {100 * r['uas_nonroot']:.1f} | "
                   f"{100 * r.get('tag_accuracy', float('nan')):.1f} | {100 * r.get('heads_moved_by_segmentation', float('nan')):.1f} % | "
                   f"{r['words_per_second']} | "
                   f"{r.get('spacy_seconds', '–')} (ours: {r['decode_seconds']}) | {tr.get('seconds')} | "
                   f"{tr.get('best_epoch')} of {tr.get('epochs')} |")
    if {"cpp", "upp"} <= {r["system"] for r in ours}:
        t = compare_reports([r for r in ours if r["system"] in ("cpp", "upp")], reference="cpp")["tests"]["upp"]
        out += ["", "UPP against CPP (approximate randomisation, 10000 permutations): "
                + ", ".join(f"p({k[2:-3]}) = {v:.4f}" for k, v in t.items() if k.endswith("_f1"))]
    if any("ted_scores" in r for r in ours):
        out += ["", "The finer classes (comma `, ; :`, period `. !`, question `?`; F1; the paper-class models write "
                "every full stop as a period):", "", "| system | comma F1 | period F1 | question F1 | overall F1 |",
                "|---|---:|---:|---:|---:|"]
        for r in ours:
            if "ted_scores" in r:
                sc = r["ted_scores"]
                out.append(f"| {r['system']} | " + " | ".join(f"{100 * sc[k]['f1']:.1f}" for k in
                                                           ("COMMA", "PERIOD", "QUESTION", "overall")) + " |")
    live = load(ROOT / "metrics" / tb / "paper003" / "live.json")
    if live:
        out += ["", f"Live mode ({live['system']}, one word at a time, marks final once emitted): overall F1 by the "
                "delay in words (batch = the whole stream decoded at once)", "",
                "| delay (words) | M F1 | F F1 | overall F1 | mixed F1 | largest wait (words) | mean seconds "
                "to emission | CPU ms per word |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for d, r in live["delays"].items():
            sc = r["scores"]
            out.append(f"| {d} | " + " | ".join(f"{100 * sc[k]['f1']:.1f}" for k in ("M", "F", "overall", "mixed"))
                       + f" | {r['max_wait_words']} | {r['mean_seconds_to_emission']:.4f} | {r['cpu_ms_per_word']:.3f} |")
        sc = live["batch"]["scores"]
        out.append("| batch | " + " | ".join(f"{100 * sc[k]['f1']:.1f}" for k in ("M", "F", "overall", "mixed"))
                   + " | – | – | – |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--treebanks", nargs="*", default=["en_ewt", "fr_sequoia", "cs_cltt", "zh_gsd_ud14"])
    p.add_argument("--output", default=str(ROOT / "results" / "paper003.md"))
    args = p.parse_args(argv)
    parts = ["# Paper 003: CPP and UPP (joint incremental parsing and punctuation prediction)", "",
             "Generated by `experiments/paper003/scripts/table.py` from `metrics/<treebank>/paper003/{cpp,upp}.json` "
             "and, for the other systems, the project's stream metrics `metrics/<treebank>/stream/*.json` (same "
             "streams: same number of units and words). M = `, ; :`, F = `. ? !`, overall = micro average over M "
             "and F, mixed = any mark against none (segmentation).", ""]
    for tb in args.treebanks:
        sec = treebank_section(tb)
        if sec:
            parts += [sec, ""]
    parts += [DESIGN, PAPER]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text("\n".join(parts))
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
