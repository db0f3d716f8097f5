"""Write results/paper003.md: paper 003's systems (CPP, UPP) beside the project's stream systems
(the shipped cascade, crf_lexical, trivial: metrics/<treebank>/stream/*.json where they were
measured on the same streams) per treebank, with approximate-randomisation tests against
crf_lexical, the trees' UAS (the cascade's parser's too: metrics/<treebank>/paper003/cascade_uas.json)
and decoding speed; the TED dev block (metrics/ted/paper003/*.json beside metrics/ted/stream/*.json,
tested against crf_lexical and the shipped cascade); live mode by the delay (UPP: live.json, the
shipped pipeline over a sliding window: live_shipped.json, on TED too) and UPP's full stops as
evidence for the shipped pipeline (upp_then_punctgen.json), UPP's marks as soft evidence on its slots
(upp_evidence.json, on TED too), the size of a pruned UPP against its F1 (upp_compact.json); and the
paper's own figures (SYSTEMS.md).

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
#: the TED systems of experiments/streams shown beside ours (metrics/ted/stream/<name>.json)
TED_OTHERS = ("shipped", "punctgen_ted_stream", "adapt", "crf_lexical")
TED_OURS = ("cpp", "upp", "upp_fine", "cpp_ted", "upp_ted", "upp_ted_fine")
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
    cascade = load(ROOT / "metrics" / tb / "paper003" / "cascade_uas.json")
    if cascade and cascade["n_units"] == ref["n_units"] and cascade["n_words"] == ref["n_words"]:
        out.append(f"| {cascade['system']} (the cascade's spaCy parser, parsing as restoration does) | "
                   f"{100 * cascade['uas']:.1f} | {100 * cascade['uas_nonroot']:.1f} | "
                   f"{100 * cascade['tag_accuracy']:.1f} | – | {cascade['words_per_second']} | "
                   f"{cascade['parse_seconds']} | – | – |")
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
    out += live_section(tb) + evidence_section(tb) + soft_evidence_section(tb) + compact_section(tb)
    return "\n".join(out) + "\n"


def live_section(tb: str) -> list:
    """Live mode by the delay: UPP (metrics/<tb>/paper003/live.json) and the shipped pipeline over a
    sliding window (live_shipped.json), each with its batch row, and the two tested at each delay."""
    lives = [r for r in (load(ROOT / "metrics" / tb / "paper003" / f"{m}.json") for m in ("live", "live_shipped")) if r]
    if not lives:
        return []
    keys = ("M", "F", "overall", "mixed")
    out = ["", "Live mode (one word at a time, marks final once emitted): F1 by the delay in words (the most a word "
           "waits; batch = the whole stream at once). live_upp re-decodes the words since its last full stop at every "
           "word; live_shipped restores a window (the pending words after up to 30 emitted ones, their marks written) "
           "every `step` words and emits the words with at least delay - step + 1 words after them "
           "(`spacy_punctgen/api/window_live.py`). Seconds to emission are wall-clock on a shared machine; CPU ms "
           "per word is process time.", "",
           "| system | delay (words) | step | M F1 | F F1 | overall F1 | mixed F1 | largest wait (words) | mean wait "
           "(words) | mean seconds to emission | CPU ms per word |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for live in lives:
        for d, r in live["delays"].items():
            sc = r["scores"]
            out.append(f"| {live['system']} | {d} | {r.get('step', 1)} | "
                       + " | ".join(f"{100 * sc[k]['f1']:.1f}" for k in keys)
                       + f" | {r['max_wait_words']} | {r.get('mean_wait_words', float('nan')):.1f} | "
                       f"{r['mean_seconds_to_emission']:.4f} | {r['cpu_ms_per_word']:.3f} |")
        b = live["batch"]
        cpu = f"{b['cpu_ms_per_word']:.3f}" if "cpu_ms_per_word" in b else "–"
        out.append(f"| {live['system']} | batch | – | "
                   + " | ".join(f"{100 * b['scores'][k]['f1']:.1f}" for k in keys)
                   + f" | – | – | – | {cpu} |")
    if len(lives) == 2 and lives[0]["n_units"] == lives[1]["n_units"] and lives[0]["n_words"] == lives[1]["n_words"]:
        from spacy_punctgen.evaluation.stream import CLASSIFIERS, compare_systems

        upp, shipped = lives
        cells = []
        for d in shipped["delays"]:
            a, b = shipped["delays"][d], upp["delays"].get(d)
            if b is None or "counts" not in b:
                continue
            t = compare_systems(a["counts"], b["counts"], CLASSIFIERS["stream"][1], a["errors"], b["errors"])
            diff = 100 * (a["scores"]["overall"]["f1"] - b["scores"]["overall"]["f1"])
            cells.append(f"delay {d}: {diff:+.1f} (p = {t['p_overall_f1']:.4f})")
        if cells:
            out += ["", f"{shipped['system']} against {upp['system']} at the same delay, overall F1 difference in "
                    "points (approximate randomisation over the streams, 10000 permutations): "
                    + "; ".join(cells) + "."]
    return out


def evidence_section(tb: str) -> list:
    """UPP's full stops as evidence for punctgen's restoration (upp_then_punctgen.json)."""
    ev = load(ROOT / "metrics" / tb / "paper003" / "upp_then_punctgen.json")
    if not ev:
        return []
    keys = ("M", "F", "overall", "mixed")
    out = ["", "UPP's sentence boundaries as evidence for the shipped pipeline (`scripts/upp_then_punctgen.py`, same "
           "streams): upp_then_punctgen writes UPP's full stops into the text as `.` before restoration (written marks "
           "are kept and conditioned on); upp_segments_punctgen gives them to the parser as its sentence boundaries "
           "only (`is_sent_start` preset on every token), restoration deciding every slot.", "",
           "| system | M P / R / F1 | F P / R / F1 | overall P / R / F1 | mixed P / R / F1 | sentence ends F1 |",
           "|---|---:|---:|---:|---:|---:|"]
    for name, r in ev["systems"].items():
        sc = r["scores"]
        out.append(f"| {name} | " + " | ".join(f"{100 * sc[k]['precision']:.1f} / {100 * sc[k]['recall']:.1f} / "
                                              f"**{100 * sc[k]['f1']:.1f}**" for k in keys)
                   + f" | {100 * r['restored_boundaries']['f1']:.1f} |")
    out += ["", f"Paired tests (approximate randomisation over the streams, {ev['permutations']} permutations): "
            + "; ".join(f"{pair}: " + ", ".join(f"p({k[2:-3]}) = {v:.4f}" for k, v in t.items() if k.endswith("_f1"))
                        for pair, t in ev["tests"].items()) + "."]
    return out


def soft_evidence_section(tb: str) -> list:
    """UPP's mark distribution as class factors on the shipped pipeline's slots (upp_evidence.json)."""
    ev = load(ROOT / "metrics" / tb / "paper003" / "upp_evidence.json")
    if not ev:
        return []
    keys = ("COMMA", "PERIOD", "QUESTION", "overall", "mixed") if ev["kind"] == "ted" else ("M", "F", "overall", "mixed")
    held = "the TED training block's last tenth" if ev["kind"] == "ted" else "the dev streams"
    out = ["", "UPP's marks as soft evidence on the shipped pipeline's slots (`scripts/upp_evidence.py`; "
           "`incremental/evidence.py`, `decode/incremental_evidence.py`): after each word, UPP's distribution over N / M / F "
           "(the softmax of its perceptron scores of the mark variants of the action that consumed the word on its best "
           "analysis) over UPP's training class frequencies, raised to the weight w, multiplies punctgen's slot marginal "
           "in the compiled marginal decoder (M as `, : ;`, F as `. ? !`); upp_soft_lexical multiplies it with the shipped "
           f"lexical expert at the expert's own weight ({ev['expert_weight']}). w chosen by overall F1 on {held}: "
           f"upp_soft w = {ev['chosen']['upp_soft']}, upp_soft_lexical w = {ev['chosen']['upp_soft_lexical']}.", "",
           "| system | " + " | ".join(f"{k} P / R / F1" for k in keys) + " | sentence ends F1 |",
           "|---|" + "---:|" * (len(keys) + 1)]
    for name, r in ev["systems"].items():
        sc = r["scores"]
        out.append(f"| {name} | " + " | ".join(f"{100 * sc[k]['precision']:.1f} / {100 * sc[k]['recall']:.1f} / "
                                              f"**{100 * sc[k]['f1']:.1f}**" for k in keys)
                   + f" | {100 * r['restored_boundaries']['f1']:.1f} |")
    curve = ev["held_out_overall_f1"]
    ws = list(curve["upp_soft"])
    out += ["", f"Overall F1 on {held} by w:", "", "| w | " + " | ".join(ws) + " |", "|---|" + "---:|" * len(ws)]
    for fam, d in curve.items():
        out.append(f"| {fam} | " + " | ".join(f"{100 * d[w]:.1f}" for w in ws) + " |")
    if "held_out_upp_overall_f1" in ev:
        out += ["", f"UPP alone on the same held-out text: {100 * ev['held_out_upp_overall_f1']:.1f}."]
    out += ["", f"Paired tests (approximate randomisation over the units, {ev['permutations']} permutations): "
            + "; ".join(f"{pair}: " + ", ".join(f"p({k[2:-3]}) = {v:.4f}" for k, v in t.items() if k.endswith("_f1"))
                        for pair, t in ev["tests"].items()) + "."]
    return out


def compact_section(tb: str) -> list:
    """UPP pruned by weight magnitude (and stored as float16, or trained with fewer hash buckets):
    its compressed size against its dev F1 (upp_compact.json)."""
    c = load(ROOT / "metrics" / tb / "paper003" / "upp_compact.json")
    if not c:
        return []
    out = ["", f"A compact UPP (`scripts/compact.py`; measured, not shipped): every averaged weight with |w| < t set to 0 "
           f"(the parser's and the POS tagger's), stored as float32 or float16 in a compressed npz (which "
           f"`IncrementalPunctuator.from_disk` reads), against overall F1 on the {c['n_units']} {c['split']} streams "
           f"(the full model's npz as saved: {c['saved_npz_bytes'] / 2 ** 20:.1f} MB). Fits: at most "
           f"{c['budget_mb']} MB and at most {c['tolerance_points']} points below the full model.", "",
           "| hash buckets | t | dtype | non-zero weights (parser + tagger) | npz compressed, MB | M F1 | F F1 | overall F1 | "
           "drop (points) | fits |", "|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in c["curve"]:
        out.append(f"| 2^{int(r['n_buckets']).bit_length() - 1} | {r['threshold']} | {r['dtype']} | "
                   f"{r['nonzero_W'] + r['nonzero_tagger']:,} | {r['npz_compressed_mb']:.2f} | {100 * r['M_f1']:.1f} | "
                   f"{100 * r['F_f1']:.1f} | {100 * r['overall_f1']:.1f} | {r['overall_f1_drop_points']:+.2f} | "
                   f"{'yes' if r['fits'] else 'no'} |")
    best = c.get("smallest_fitting")
    out += ["", "Smallest that fits: " + (f"2^{int(best['n_buckets']).bit_length() - 1} buckets, t = {best['threshold']}, "
                                          f"{best['dtype']}, {best['npz_compressed_mb']:.2f} MB, overall F1 "
                                          f"{100 * best['overall_f1']:.1f}." if best else "none.")]
    test = load(ROOT / "metrics" / tb / "paper003" / "upp_compact_test.json")
    if test:  # the same variants on the test streams, as a check of the dev choice
        out += ["", f"The same variants on the {test['n_units']} {test['split']} streams (a check; nothing chosen on them):", "",
                "| hash buckets | t | dtype | npz compressed, MB | overall F1 | drop (points) |", "|---:|---:|---|---:|---:|---:|"]
        for r in test["curve"]:
            out.append(f"| 2^{int(r['n_buckets']).bit_length() - 1} | {r['threshold']} | {r['dtype']} | "
                       f"{r['npz_compressed_mb']:.2f} | {100 * r['overall_f1']:.1f} | {r['overall_f1_drop_points']:+.2f} |")
    return out


def _diff(a: dict, b: dict, test: dict, key: str) -> str:
    return f"{100 * (a['scores'][key]['f1'] - b['scores'][key]['f1']):+.1f} ({test[f'p_{key}_f1']:.4f})"


def ted_section() -> str:
    """The TED dev block: ours beside the streams study's systems (same block, same units)."""
    from spacy_punctgen.evaluation.stream import compare_reports, markdown_table

    ours = [r for r in (load(ROOT / "metrics" / "ted" / "paper003" / f"{m}.json") for m in TED_OURS) if r]
    if not ours:
        return ""
    ref = ours[0]
    same = ("n_units", "n_words", "dev_block", "unit_words")
    others = [r for r in (load(ROOT / "metrics" / "ted" / "stream" / f"{m}.json") for m in TED_OTHERS) if r]
    others = [r for r in others if all(r.get(k) == ref[k] for k in same)]
    reports = others + ours
    names = {r["system"] for r in reports}
    out = ["### TED talks (IWSLT 2012 dev file): the dev block, zero-shot and trained on the training block", "",
           f"The dev block of experiments/streams (words {ref['dev_block'][0]}-{ref['dev_block'][1]} of "
           f"`{Path(ref['test']).name}`, after the first {ref['train_share']:.0%}), one lowercased stream, scored in "
           f"units of {ref['unit_words']} words. Paper 003's models decode it in windows of {ref['window']} words, each "
           f"cut after its last full stop at least {ref['margin']} words before its end (`incremental/windows.py`). "
           "cpp, upp, upp_fine: the en_ewt models (zero-shot); cpp_ted, upp_ted, upp_ted_fine: trained on the "
           "training block's silver documents (the shipped parser's trees of the unpunctuated stream, the gold marks; "
           "`scripts/ted_silver.py`). The other rows are metrics/ted/stream/*.json (results/ted.md): the shipped "
           "cascade, punctgen trained on the same silver trees, `punctgen adapt`, the lexical CRF trained on the "
           "training block.", ""]
    reference = "crf_lexical" if "crf_lexical" in names else ref["system"]
    out += [markdown_table(compare_reports(reports, reference=reference), ""), ""]
    against = [n for n in (reference, "shipped", "punctgen_ted_stream") if n in names and n not in TED_OURS]
    if against:
        tests = {n: compare_reports(reports, reference=n)["tests"] for n in against}
        by_name = {r["system"]: r for r in reports}
        out += [f"Paper 003's models against {', '.join(against)} (punctgen_ted_stream: punctgen trained on the same "
                "silver trees): F1 difference in points (p, approximate randomisation over the units, 10000 "
                "permutations)", "",
                "| system | " + " | ".join(f"{k} vs {n}" for n in against for k in ("overall", "mixed")) + " |",
                "|---|" + "---:|" * (2 * len(against))]
        for r in ours:
            cells = [_diff(r, by_name[n], tests[n][r["system"]], k) for n in against for k in ("overall", "mixed")]
            out.append(f"| {r['system']} | " + " | ".join(cells) + " |")
        out.append("")
    mf = [{**r["stream"], "system": r["system"], "kind": "stream"} for r in ours if "stream" in r]
    if mf:
        out += ["As paper 003 scores (M = COMMA, F = PERIOD or QUESTION; same units):", "",
                "| system | M P / R / F1 | F P / R / F1 | overall P / R / F1 | mixed P / R / F1 | decoding words/s | "
                "training, s | best epoch |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r, m in zip([r for r in ours if "stream" in r], mf):
            tr = r.get("train", {})
            out.append(f"| {r['system']} | " + " | ".join(
                f"{100 * m['scores'][k]['precision']:.1f} / {100 * m['scores'][k]['recall']:.1f} / "
                f"**{100 * m['scores'][k]['f1']:.1f}**" for k in ("M", "F", "overall", "mixed"))
                + f" | {r['words_per_second']} | {tr.get('seconds')} | {tr.get('best_epoch')} of {tr.get('epochs')} |")
        pairs = [("upp", "cpp"), ("upp_ted", "cpp_ted"), ("upp_ted", "upp"), ("upp_ted_fine", "upp_fine")]
        by_name = {m["system"]: m for m in mf}
        lines = []
        for a, b in pairs:
            if a in by_name and b in by_name:
                t = compare_reports([by_name[b], by_name[a]], reference=b)["tests"][a]
                lines.append(f"{a} against {b}: " + ", ".join(f"p({k[2:-3]}) = {v:.4f}" for k, v in t.items()
                                                            if k.endswith("_f1")))
        if lines:
            out += ["", "Paired tests (approximate randomisation, 10000 permutations): " + "; ".join(lines) + "."]
    silver = load(ROOT / "metrics" / "ted" / "paper003" / "silver.json")
    if silver:
        al = silver["alignment"]
        out += ["", f"Silver documents: {silver['docs']} of {silver['stream_sents']} parsed sentences each "
                f"({silver['doc_words']} words, {al['sentences']} parser sentences; {al['placed']} of {al['marks']} "
                f"gold marks placed), the last tenth choosing the epoch; parsing took {silver['seconds']} s."]
    return "\n".join(out) + "\n"


def ted_live_section() -> str:
    """The shipped pipeline live over the TED dev block (metrics/ted/paper003/live_shipped.json)."""
    live = load(ROOT / "metrics" / "ted" / "paper003" / "live_shipped.json")
    if not live:
        return ""
    keys = ("COMMA", "PERIOD", "QUESTION", "overall", "mixed")
    out = ["### TED dev block, live: the shipped pipeline over a sliding window", "",
           f"The dev block (words {live['dev_block'][0]}-{live['dev_block'][1]}) fed one word at a time as one stream, "
           f"scored in units of {live['unit_words']} words as above (batch = `restore_text` of the whole block, the "
           "shipped cascade).", "",
           "| delay (words) | step | COMMA F1 | PERIOD F1 | QUESTION F1 | overall F1 | mixed F1 | largest wait (words) | "
           "mean seconds to emission | CPU ms per word |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for d, r in live["delays"].items():
        sc = r["scores"]
        out.append(f"| {d} | {r['step']} | " + " | ".join(f"{100 * sc[k]['f1']:.1f}" for k in keys)
                   + f" | {r['max_wait_words']} | {r['mean_seconds_to_emission']:.4f} | {r['cpu_ms_per_word']:.3f} |")
    b = live["batch"]
    out.append("| batch | – | " + " | ".join(f"{100 * b['scores'][k]['f1']:.1f}" for k in keys)
               + f" | – | – | {b['cpu_ms_per_word']:.3f} |")
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
    ted = ted_section()
    if ted:
        parts += [ted, ""]
    ted_soft = soft_evidence_section("ted")
    if ted_soft:
        parts += ["### TED dev block: UPP's marks as soft evidence on the shipped pipeline's slots (upp_ted)"] + ted_soft + [""]
    ted_live = ted_live_section()
    if ted_live:
        parts += [ted_live, ""]
    parts += [DESIGN, PAPER]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text("\n".join(parts))
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
