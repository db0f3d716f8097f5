"""Rephrasing (docs/rephrasing.md): reorder the dependents of nouns and verbs and punctuate the
new order three ways, as in Li, Wang & Eisner (2019, Table 6), then score them with trigram
language models.

* ``base``: an ordering model fitted on the surface trees (punctuation tokens are dependents)
  permutes the surface tree; the marks move like words;
* ``half``: the same word order as ``base``; the punctuation is regenerated through the
  channel from the best underlying tree's punctemes;
* ``full``: an ordering model fitted on the recovered underlying trees (depunctuated, no
  punctuation dependents) permutes the underlying tree; the punctuation is regenerated
  through the channel;
* ``full_punctemes``: a variant of ``full`` whose ordering model also conditions on each
  dependent's punctemes.

Two protocols:

* ``lm_on_rephrased`` (the paper's Table 6): a trigram LM is trained on each method's rephrased
  training sentences and scores the original training sentences; with the paper's add-0.001
  LM (``add_k``) and with interpolated Kneser–Ney (``kneser_ney``), and paired permutation
  tests over per-sentence log-probabilities between every two methods;
* ``lm_on_original``: a Kneser–Ney LM trained on the original training sentences scores each
  method's rephrased test sentences.

Perplexity is per token (``</s>`` included) over all trigrams ("all") and over the trigrams
holding a punctuation token ("punctuation"); tokens are lowercased (capitalisation is not
moved with the words).  Writes a JSON object; ``--table`` renders every treebank's as Markdown.

    python scripts/rephrase_eval.py MODEL TRAIN.conllu TEST.conllu --treebank T --protocol P \
        --output metrics/T/rephrase/rephrase.json
    python scripts/rephrase_eval.py --table metrics --output results/rephrase.md
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
from spacy_punctgen.decode.rephrase import (
    ORDERED_HEADS,
    OrderModel,
    baseline_sentence,
    own_keys,
    punctuated_tokens,
    rephrase_sentence,
    surface_tree,
    underlying_tree,
    underlying_word_order,
    word_order,
)
from spacy_punctgen.errors import Errors
from spacy_punctgen.evaluation.metrics import paired_permutation_test
from spacy_punctgen.evaluation.ngram import BOS, EOS, AddKTrigram, KneserNeyTrigram
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.workflow.metrics_files import read_json_object

METHODS = ("base", "half", "full", "full_punctemes")
PAIRS = (("base", "half"), ("base", "full"), ("half", "full"), ("full", "full_punctemes"))
PARTS = ("punctuation", "all")
ADD_K = 0.001

#: The paper's Table 6 (UD 1.4 train splits, add-0.001 trigram LM trained on the rephrased
#: train split, perplexity of the original train split), by language code.
PAPER = {
    "ar": {"name": "Arabic", "punctuation": (156.0, 231.3, 186.1), "all": (540.8, 590.3, 553.4)},
    "zh": {"name": "Chinese", "punctuation": (165.2, 110.0, 61.4), "all": (205.0, 174.4, 78.7)},
    "en": {"name": "English", "punctuation": (98.4, 74.5, 51.0), "all": (140.9, 131.4, 75.4)},
    "hi": {"name": "Hindi", "punctuation": (118.4, 118.8, 91.8), "all": (10.8, 11.0, 9.7)},
    "es": {"name": "Spanish", "punctuation": (266.2, 259.2, 194.5), "all": (346.3, 343.4, 239.3)},
}

#: What "train" is under each data protocol of project.yml.
TRAIN_NOTE = {
    "standard": "UD train",
    "dev-as-train": "UD dev minus the held-out share (no UD train split)",
    "cv": "the training folds of a cross-validation fold",
}


def load(path):
    uds = read_conllu(path)
    qx = detect_quote_xpos(path, uds)
    out = []
    for ud in uds:
        s, _ = preprocess_sentence(ud, qx)
        if s is not None:
            out.append((ud, s))
    return out


def kendall(order):
    """The share of word pairs whose order ``order`` swaps (0: unchanged, 1: reversed)."""
    n = len(order)
    if n < 2:
        return 0.0
    a = np.asarray(order)
    swapped = sum(int((a[i + 1:] < a[i]).sum()) for i in range(n - 1))
    return swapped / (n * (n - 1) / 2)


def rank_shift(items):
    """How often the surface tree's punctuation moves a dependent of a noun or verb: the count
    of such dependents, and of those whose signed rank beside their head differs between the
    surface tree and the depunctuated tree (only then can Base/Half and Full order it differently)."""
    n = shifted = 0
    for ud, s in items:
        st = surface_tree(ud, s)
        so, uo = own_keys(st.heads), own_keys(s.heads)
        for t, w in enumerate(st.word):
            if w >= 0 and s.heads[w] >= 0 and s.upos[s.heads[w]] in ORDERED_HEADS:
                n += 1
                shifted += so[t] != uo[w]
    return {"dependents": n, "shifted": shifted, "share": shifted / n if n else 0.0}


def analyse(model, items):
    """Each sentence's best underlying pairs (None where the model derives none)."""
    return [p for p, _ in model.analyze([s for _, s in items])]


def fit_order_models(items, pairs):
    """The surface ordering model (base, half) and the two underlying ones (full, full_punctemes)."""
    surface = OrderModel.fit(surface_tree(ud, s) for ud, s in items)
    under = [underlying_tree(s, p) for (_, s), p in zip(items, pairs) if p is not None]
    return {"surface": surface, "full": OrderModel.fit_underlying(under),
            "full_punctemes": OrderModel.fit_underlying(under, punctemes=True)}


def rephrase_all(model, orders, items, pairs, seed):
    """Lowercased token lists of the original and of each method's rephrasing, for the
    sentences the model can analyse, plus how much each method moved the words and the
    count of sentences left out.  Base and half share one draw of the surface keys; full and
    full_punctemes one stream of the same seed (so they differ only by the model)."""
    rng = np.random.default_rng(seed)
    rng_full = {name: np.random.default_rng([seed, 1]) for name in ("full", "full_punctemes")}
    phi, cache = model.phi(), {}
    out = {name: [] for name in ("original",) + METHODS}
    moved = {name: [] for name in ("half", "full", "full_punctemes")}
    skipped = 0
    lower = lambda toks: [t.lower() for t in toks]
    for (ud, s), pr in zip(items, pairs):
        tree = surface_tree(ud, s)
        keys = orders["surface"].keys(tree, rng)
        if pr is None:
            skipped += 1
            continue
        out["original"].append(lower(punctuated_tokens(s)))
        out["base"].append(lower(baseline_sentence(tree, keys)))
        order = word_order(tree, keys)
        moved["half"].append(order)
        out["half"].append(lower(punctuated_tokens(rephrase_sentence(model, s, order, pr, phi, cache))))
        under = underlying_tree(s, pr)
        for name in ("full", "full_punctemes"):
            order = underlying_word_order(under, orders[name].keys(under, rng_full[name]))
            moved[name].append(order)
            out[name].append(lower(punctuated_tokens(rephrase_sentence(model, s, order, pr, phi, cache))))
    movement = {name: {"sentences_reordered": float(np.mean([o != sorted(o) for o in orders_])),
                       "kendall_distance": float(np.mean([kendall(o) for o in orders_]))}
                for name, orders_ in moved.items() if orders_}
    if "half" in movement:
        movement["base"] = dict(movement["half"])
    return out, movement, skipped


def token_scores(lm, sentences, marks):
    """Per sentence, the natural-log probability of each token (``</s>`` included) and whether
    its trigram holds a punctuation mark: scored once, then summed every way needed."""
    out = []
    for sent in sentences:
        toks = [BOS, BOS] + list(sent) + [EOS]
        lps = np.asarray(lm.sentence_logprobs(sent))
        mask = np.array([any(t in marks for t in toks[i - 2:i + 1]) for i in range(2, len(toks))], dtype=bool)
        out.append((lps, mask))
    return out


def perplexities(table):
    """``{"all": ..., "punctuation": ...}`` as :meth:`KneserNeyTrigram.perplexity` reports them."""
    out = {}
    for part in PARTS:
        total, n = 0.0, 0
        for lps, mask in table:
            sel = lps if part == "all" else lps[mask]
            total += float(sel.sum())
            n += int(sel.size)
        if not n:
            raise ValueError(Errors.E862)
        out[part] = {"perplexity": float(np.exp(-total / n)), "tokens": n, "mean_logprob": total / n}
    return out


def sentence_nll(table, part):
    """Each sentence's negative log-probability (over its punctuation trigrams only for
    ``part == "punctuation"``): the paired losses of the permutation test."""
    return [-float((lps if part == "all" else lps[mask]).sum()) for lps, mask in table]


def lm_on_rephrased(make_lm, texts, marks, seed):
    """The paper's protocol for one kind of LM: per method, perplexity of the original train
    sentences under an LM trained on that method's rephrased train sentences, and the paired
    permutation tests between methods."""
    tables = {name: token_scores(make_lm().fit(texts[name]), texts["original"], marks) for name in METHODS}
    out = {name: perplexities(tables[name]) for name in METHODS}
    nll = {(name, part): sentence_nll(tables[name], part) for name in METHODS for part in PARTS}
    out["p_value"] = {f"{a}-{b}": {part: paired_permutation_test(nll[a, part], nll[b, part], seed=seed) for part in PARTS}
                      for a, b in PAIRS}
    return out


def evaluate(model_path, train_path, test_path, seed=0, limit=0, treebank="", protocol="standard"):
    t0 = time.time()
    model = PunctModel.from_disk(model_path)
    train, test = load(train_path), load(test_path)
    if limit:
        test = test[:limit]
    tr_pairs, te_pairs = analyse(model, train), analyse(model, test)
    orders = fit_order_models(train, tr_pairs)
    marks = set(model.inventory.symbols[2:])
    tr, tr_moved, tr_skip = rephrase_all(model, orders, train, tr_pairs, seed)
    te, _, te_skip = rephrase_all(model, orders, test, te_pairs, seed + 1)
    paper = {"add_k": lm_on_rephrased(lambda: AddKTrigram(ADD_K), tr, marks, seed),
             "kneser_ney": lm_on_rephrased(KneserNeyTrigram, tr, marks, seed)}
    lm = KneserNeyTrigram().fit(tr["original"])
    ours = {name: perplexities(token_scores(lm, te[name], marks)) for name in ("original",) + METHODS}
    lang = treebank.split("_")[0] if treebank else ""
    return {
        "treebank": treebank, "protocol": protocol, "train_is": TRAIN_NOTE.get(protocol, protocol),
        "model": str(model_path), "train": str(train_path), "test": str(test_path), "seed": seed, "add_k": ADD_K,
        "train_sentences": len(tr["original"]), "train_skipped": tr_skip,
        "test_sentences": len(te["original"]), "test_skipped": te_skip,
        "order_model": {"surface_relations": len(orders["surface"].stats),
                        "underlying_relations": len(orders["full"].stats),
                        "underlying_puncteme_keys": len(orders["full_punctemes"].fine)},
        "movement_train": tr_moved, "rank_shift_train": rank_shift(train),
        "lm_on_rephrased": paper, "lm_on_original": ours,
        "paper": PAPER.get(lang),
        "examples": [{name: " ".join(te[name][i]) for name in ("original",) + METHODS}
                     for i in range(min(5, len(te["original"])))],
        "seconds": round(time.time() - t0, 1),
    }


# ------------------------------------------------------------------ the table

def gather(paths):
    """The metrics objects of ``paths`` (files, or folders searched for */rephrase/rephrase.json), by treebank."""
    files = []
    for p in map(Path, paths):
        files.extend(sorted(p.glob("*/rephrase/rephrase.json")) if p.is_dir() else [p])
    out = {}
    for f in files:
        m = read_json_object(f)
        out[m.get("treebank") or f.parent.parent.name] = m
    return out


def _ppl(m, lm, name, part):
    return m["lm_on_rephrased"][lm][name][part]["perplexity"]


def _row(tb, m, lm, part):
    vals = {name: _ppl(m, lm, name, part) for name in METHODS}
    best = min(("base", "half", "full"), key=vals.get)
    pv = m["lm_on_rephrased"][lm]["p_value"]
    p_vs_best = lambda n: pv.get(f"{n}-{best}", pv.get(f"{best}-{n}", {})).get(part, 0.0)
    bold = {best} | {n for n in ("base", "half", "full") if n != best and p_vs_best(n) >= 0.05}
    cells = [f"**{vals[n]:.1f}**" if n in bold else f"{vals[n]:.1f}" for n in ("base", "half", "full")]
    cells.append(f"{vals['full_punctemes']:.1f}")
    p = m.get("paper") if lm == "add_k" else None
    if p:
        pv = p[part]
        pb = min(range(3), key=lambda i: pv[i])
        cells += [f"**{v}**" if i == pb else f"{v}" for i, v in enumerate(pv)]
    elif lm == "add_k":
        cells += ["", "", ""]
    return f"| {tb} | {part} | " + " | ".join(cells) + " |"


def table(metrics):
    """Markdown: the paper's protocol with the add-0.001 LM beside the paper's Table 6, the same
    with Kneser–Ney, the second protocol, the tests, movement and the data of each treebank."""
    tbs = sorted(metrics)
    out = ["# Rephrasing (Li, Wang & Eisner 2019, §6.3, Table 6)", "",
           ("Made by `scripts/rephrase_eval.py --table metrics` from every `metrics/<treebank>/rephrase/rephrase.json` "
           "(docs/rephrasing.md). Perplexity of the *original* training sentences under a trigram LM trained on each "
           "method's *rephrased* training sentences (lower is better; tokens lowercased). Base: surface ordering model, "
           "marks move as words. Half: Base's word order, punctuation regenerated by the channel from the underlying "
           "punctemes. Full: ordering model trained on the recovered underlying trees (no punctuation dependents), "
           "punctuation regenerated by the channel. Full+p (ours, not in the paper): Full whose ordering model also "
           "conditions on the dependent's punctemes. Bold: the best of Base/Half/Full and every one not significantly "
            "worse than it (paired permutation test, p >= 0.05; tests below); the paper's best (significant there)."), "",
           "## Add-0.001 trigram LM (the paper's LM), beside the paper's Table 6", "",
           "| treebank | trigrams | Base | Half | Full | Full+p | paper Base | paper Half | paper Full |",
           "|---|---|---|---|---|---|---|---|---|"]
    out += [_row(tb, metrics[tb], "add_k", part) for tb in tbs for part in PARTS]
    out += ["", "## Interpolated Kneser–Ney trigram LM, same protocol", "",
            "| treebank | trigrams | Base | Half | Full | Full+p |", "|---|---|---|---|---|---|"]
    out += [_row(tb, metrics[tb], "kneser_ney", part) for tb in tbs for part in PARTS]
    out += ["", "## Paired permutation tests", "",
            ("Two-sided p over the per-sentence log-probabilities of the original training sentences (10,000 sign "
             "flips; 1e-4 is the smallest p it can give)."), "",
            "| treebank | LM | trigrams | Base vs Half | Base vs Full | Half vs Full | Full vs Full+p |",
            "|---|---|---|---|---|---|---|"]
    for tb in tbs:
        for lm, lm_name in (("add_k", "add-0.001"), ("kneser_ney", "Kneser–Ney")):
            pv = metrics[tb]["lm_on_rephrased"][lm]["p_value"]
            for part in PARTS:
                out.append(f"| {tb} | {lm_name} | {part} | "
                           + " | ".join(f"{pv[f'{a}-{b}'][part]:.2g}" if f"{a}-{b}" in pv else "" for a, b in PAIRS) + " |")
    out += ["", "## Kneser–Ney LM trained on the original train, scoring each method's rephrased test sentences", "",
            "| treebank | trigrams | original | Base | Half | Full | Full+p |", "|---|---|---|---|---|---|---|"]
    for tb in tbs:
        r = metrics[tb]["lm_on_original"]
        for part in PARTS:
            out.append(f"| {tb} | {part} | " + " | ".join(f"{r[n][part]['perplexity']:.1f}" for n in ("original",) + METHODS)
                       + " |")
    out += ["", "## How much the words move, and the data", "",
            ("Moved: share of training sentences whose word order changed / mean Kendall distance (share of word "
             "pairs swapped); Base and Half share one order. Rank shift: share of the training dependents of nouns "
             "and verbs whose rank beside the head differs between the surface and the depunctuated tree (a "
             "punctuation token sits between them), where Full's ordering model can differ from Base's. Sentences "
             "without an underlying tree under the model are left out of every method."), "",
            ("| treebank | train is | train sentences (left out) | test sentences (left out) | rank shift "
             "| Base/Half moved | Full moved | Full+p moved | model |"), "|---|---|---|---|---|---|---|---|---|"]
    for tb in tbs:
        m = metrics[tb]
        mv = m["movement_train"]
        f = lambda k, mv=mv: f"{mv[k]['sentences_reordered']:.2f} / {mv[k]['kendall_distance']:.3f}"
        rs = m.get("rank_shift_train")
        shift = f"{rs['share']:.3f}" if rs else ""
        out.append(f"| {tb} | {m['train_is']} | {m['train_sentences']} ({m['train_skipped']}) | "
                   f"{m['test_sentences']} ({m['test_skipped']}) | {shift} | {f('half')} | {f('full')} | {f('full_punctemes')} "
                   f"| `{m['model']}` |")
    missing = [p["name"] for code, p in PAPER.items() if not any(tb.split("_")[0] == code for tb in tbs)]
    out += ["", "The paper used UD 1.4 treebanks and sampled the surface punctuation; we take the channel's most "
            "probable surface string and an ordering model of our own (docs/rephrasing.md), so compare directions "
            "and relative sizes, not absolute values."
            + (f" Paper languages without a row here: {', '.join(missing)}." if missing else "")]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="MODEL TRAIN TEST")
    ap.add_argument("--table", nargs="+", help="render these metrics JSON files (or folders holding "
                                               "*/rephrase/rephrase.json) as one Markdown table")
    ap.add_argument("--output", required=True)
    ap.add_argument("--treebank", default="", help="the treebank's name (its language code first: en_ewt)")
    ap.add_argument("--protocol", default="standard", help="the data protocol the train file was made under")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0, help="first N test sentences (0: all)")
    a = ap.parse_args(argv)
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if a.table:
        absent = [p for p in a.table if not Path(p).exists()]
        if absent:
            ap.error(f"not found: {', '.join(absent)}")
        metrics = gather(a.table)
        if not metrics:
            ap.error(f"no rephrase metrics under {a.table}")
        out.write_text(table(metrics), encoding="utf-8")
        return 0
    if len(a.paths) != 3:
        ap.error("expected MODEL TRAIN TEST")
    m = evaluate(*a.paths, seed=a.seed, limit=a.limit, treebank=a.treebank, protocol=a.protocol)
    out.write_text(json.dumps(m, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
