"""Rephrasing (docs/rephrasing.md): reorder the dependents of nouns and verbs, punctuate the
new order by the channel ("full") or by moving surface punctuation with the words ("base"),
and score both with a Kneser–Ney trigram language model.

Two protocols, both reported:

* ``lm_on_rephrased`` (the paper's Table 6): the LM is trained on the rephrased training
  sentences of each method and scores the original training sentences;
* ``lm_on_original``: the LM is trained on the original training sentences and scores the
  rephrased test sentences of each method.

Perplexity is per token (``</s>`` included) over all trigrams ("all") and over the trigrams
holding a punctuation token ("punctuation"); tokens are lowercased (capitalisation is not
moved with the words).  Writes a JSON object; ``--table`` renders it as Markdown.

    python scripts/rephrase_eval.py MODEL TRAIN.conllu TEST.conllu --output M.json
    python scripts/rephrase_eval.py --table M.json --output results/rephrase.md
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import detect_quote_xpos, preprocess_sentence
from spacy_punctgen.decode.rephrase import (OrderModel, baseline_sentence, punctuated_tokens, rephrase_sentence,
                                            surface_tree, word_order)
from spacy_punctgen.evaluation.metrics import paired_permutation_test
from spacy_punctgen.evaluation.ngram import BOS, EOS, KneserNeyTrigram
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.workflow.metrics_files import read_json_object

#: The paper's Table 6, English row (UD 1.4 train split, add-0.001 trigram LM): base / half / full.
PAPER_EN = {"punctuation": {"base": 98.4, "half": 74.5, "full": 51.0}, "all": {"base": 140.9, "half": 131.4, "full": 75.4}}


def load(path):
    uds = read_conllu(path)
    qx = detect_quote_xpos(path, uds)
    out = []
    for ud in uds:
        s, _ = preprocess_sentence(ud, qx)
        if s is not None:
            out.append((ud, s))
    return out


def rephrase_all(model, order_model, items, seed):
    """(original, full, base) token lists of the sentences the model can analyse, plus the count it cannot."""
    rng = np.random.default_rng(seed)
    analysed = model.analyze([s for _, s in items])
    phi, cache = model.phi(), {}
    orig, full, base, skipped = [], [], [], 0
    for (ud, s), (pairs, _) in zip(items, analysed):
        tree = surface_tree(ud, s)
        keys = order_model.keys(tree, rng)
        if pairs is None:
            skipped += 1
            continue
        lower = lambda toks: [t.lower() for t in toks]
        orig.append(lower(punctuated_tokens(s)))
        full.append(lower(punctuated_tokens(rephrase_sentence(model, s, word_order(tree, keys), pairs, phi, cache))))
        base.append(lower(baseline_sentence(tree, keys)))
    return orig, full, base, skipped


def scores(lm, sentences, marks):
    has_mark = lambda tri: any(t in marks for t in tri)
    return {"all": lm.perplexity(sentences), "punctuation": lm.perplexity(sentences, keep=has_mark)}


def sentence_nll(lm, sentences, marks, part):
    """Each sentence's negative log-probability (over its punctuation trigrams only for
    ``part == "punctuation"``): the paired losses of the permutation test."""
    out = []
    for sent in sentences:
        toks = [BOS, BOS] + list(sent) + [EOS]
        lps = lm.sentence_logprobs(sent)
        out.append(-sum(lp for i, lp in enumerate(lps, start=2)
                        if part == "all" or any(t in marks for t in toks[i - 2:i + 1])))
    return out


def evaluate(model_path, train_path, test_path, seed, limit):
    t0 = time.time()
    model = PunctModel.from_disk(model_path)
    train, test = load(train_path), load(test_path)
    if limit:
        test = test[:limit]
    order_model = OrderModel.fit(surface_tree(ud, s) for ud, s in train)
    marks = set(model.inventory.symbols[2:])
    tr_orig, tr_full, tr_base, tr_skip = rephrase_all(model, order_model, train, seed)
    te_orig, te_full, te_base, te_skip = rephrase_all(model, order_model, test, seed + 1)
    paper, lms = {}, {}
    for name, text in (("full", tr_full), ("base", tr_base)):
        lms[name] = KneserNeyTrigram().fit(text)
        paper[name] = scores(lms[name], tr_orig, marks)
    # the paper's bold marks: a paired permutation test over per-sentence log-probabilities
    paper["p_value"] = {part: paired_permutation_test(sentence_nll(lms["base"], tr_orig, marks, part),
                                                      sentence_nll(lms["full"], tr_orig, marks, part), seed=seed)
                        for part in ("punctuation", "all")}
    lm = KneserNeyTrigram().fit(tr_orig)
    ours = {name: scores(lm, text, marks) for name, text in (("original", te_orig), ("full", te_full), ("base", te_base))}
    return {
        "model": str(model_path), "train": str(train_path), "test": str(test_path), "seed": seed,
        "train_sentences": len(tr_orig), "train_skipped": tr_skip,
        "test_sentences": len(te_orig), "test_skipped": te_skip,
        "lm_on_rephrased": paper, "lm_on_original": ours, "paper_en": PAPER_EN,
        "examples": [{"original": " ".join(o), "full": " ".join(f), "base": " ".join(b)}
                     for o, f, b in list(zip(te_orig, te_full, te_base))[:5]],
        "seconds": round(time.time() - t0, 1),
    }


def table(m):
    f = lambda d: f"{d['perplexity']:.1f}"
    p = m["paper_en"]
    rows = ["| protocol | trigrams | base (marks move as words) | channel (same word order) | paper base | paper half | paper full |", "|---|---|---|---|---|---|---|"]
    for part in ("punctuation", "all"):
        r = m["lm_on_rephrased"]
        rows.append(f"| LM on rephrased train, scores original train | {part} | {f(r['base'][part])} | {f(r['full'][part])} "
                    f"| {p[part]['base']} | {p[part]['half']} | {p[part]['full']} |")
    for part in ("punctuation", "all"):
        r = m["lm_on_original"]
        rows.append(f"| LM on original train, scores rephrased test (original: {f(r['original'][part])}) | {part} "
                    f"| {f(r['base'][part])} | {f(r['full'][part])} | | | |")
    pv = m["lm_on_rephrased"]["p_value"]
    rows.append("")
    rows.append(f"Paired permutation test, base against channel, LM on rephrased train (per-sentence log-probabilities "
                f"of the original train sentences, 10,000 sign flips): p = {pv['punctuation']:.4g} (punctuation "
                f"trigrams), p = {pv['all']:.4g} (all).")
    head = (f"Rephrasing, perplexity of a Kneser–Ney trigram LM (lower is better); {m['train_sentences']} train "
            f"and {m['test_sentences']} test sentences ({m['train_skipped']} and {m['test_skipped']} without an "
            f"underlying tree left out); paper: UD 1.4 English, add-0.001 trigram LM; its \"half\" permutes the words as its "
            f"base does, like our channel column. Made by scripts/rephrase_eval.py.\n\n")
    return head + "\n".join(rows) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="MODEL TRAIN TEST")
    ap.add_argument("--table", help="render this metrics JSON as Markdown")
    ap.add_argument("--output", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0, help="first N test sentences (0: all)")
    a = ap.parse_args(argv)
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if a.table:
        out.write_text(table(read_json_object(Path(a.table))), encoding="utf-8")
        return 0
    if len(a.paths) != 3:
        ap.error("expected MODEL TRAIN TEST")
    m = evaluate(*a.paths, seed=a.seed, limit=a.limit)
    out.write_text(json.dumps(m, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
