"""Paper 002's companion (``punct_features_parser``, Ma, Zhang & Zhu 2014): three spaCy parsers
trained with the same config, budget and seeds, differing only in their data and embed layer
(experiments/companions/configs/punct_features_parser.cfg):

* ``punct``: the UD sentences with their punctuation tokens (``spacy.MultiHashEmbed.v2``);
* ``depunct``: the depunctuated words and trees (the project's depunctuation; same embed);
* ``properties``: the depunctuated words, each carrying its neighbouring punctuation as
  ``token._.punct_property`` (``spacy_punctgen.PunctPropertyEmbed.v1``;
  spacy_punctgen/parsing/punct_properties.py says how properties are built).

Scoring (``word UAS/LAS``, punctuation arcs excluded), the same for all three: the test
sentences that depunctuation keeps, scored over their depunctuated words against the
depunctuated gold tree (word-to-word heads, projective, relations lower-case, ``root``). The
depunct and properties parsers predict over exactly those words. For the punct parser each word
token's predicted head is mapped to a word: a word whose predicted head is a punctuation token
gets that token's nearest non-punctuation ancestor (as depunctuation reattaches arcs; a word
whose ancestors are all punctuation up to the root becomes a root); punctuation tokens' own arcs
are not scored. Abbreviation dots: the punct parser sees ``etc.`` as one token, the other two the
word ``etc`` (depunctuation splits the dot off); a word is scored once either way. UAS: the head is
right (a root predicted as root); LAS: head and relation (lower-cased) right.

Commands:

* ``train TREEBANK UD_FOLDER --system S --seed K --max-steps N`` trains one parser into
  ``training/companions/punct_features_parser/<tb>/<S>_seed<K>`` and writes
  ``metrics/<tb>/companions/punct_features_parser_<S>_seed<K>.json`` (uas, las, per-sentence
  counts for the paired test, timings);
* ``summary TREEBANK`` writes ``metrics/<tb>/companions/punct_features_parser.json``: mean, std
  (sample, n-1), min, max per system over the seeds, and properties against depunct: the
  per-seed differences and an approximate randomisation test over sentences of the seed-0 models
  (two-sided, swapping the two systems' per-sentence correct counts);
* ``analysis TREEBANK UD_FOLDER --model PUNCTGEN`` ("does it help us"): the shipped punctgen
  model's per-slot perplexity of the gold punctuation of the test sentences given the trees of
  each system's seed-0 parser (and the gold trees), i.e. how well the analysis of a punctuated
  sentence would explain its marks with trees from that parser ->
  ``metrics/<tb>/companions/punct_features_parser_analysis.json``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "experiments" / "companions" / "configs" / "punct_features_parser.cfg"
SYSTEMS = ("punct", "depunct", "properties")
NAME = "punct_features_parser"
PROPERTY_ROWS = 1000
LANGS = {"en_ewt": "en", "zh_gsd_ud14": "zh"}


def _split(folder: Path, split: str) -> Path:
    from spacy_punctgen.data.conllu import resolve_split

    return resolve_split(folder, split)


def _config(system: str, train: Path, dev: Path, lang: str, seed: int, max_steps: int, eval_frequency: int):
    from spacy.util import load_config

    cfg = load_config(CONFIG, interpolate=False)
    cfg["paths"]["train"] = str(train)
    cfg["paths"]["dev"] = str(dev)
    cfg["nlp"]["lang"] = lang
    cfg["system"]["seed"] = seed
    cfg["training"]["max_steps"] = max_steps
    cfg["training"]["eval_frequency"] = eval_frequency
    mode = system
    cfg["corpora"]["train"]["mode"] = mode
    cfg["corpora"]["dev"]["mode"] = mode
    if system == "properties":
        embed = cfg["components"]["tok2vec"]["model"]["embed"]
        embed["@architectures"] = "spacy_punctgen.PunctPropertyEmbed.v1"
        embed["property_rows"] = PROPERTY_ROWS
    return cfg


def _gold(test: Path):
    """Per kept test sentence: the punct-mode item, the depunct item, the properties item."""
    from spacy_punctgen.parsing.punct_properties import read_examples

    return [read_examples(test, mode) for mode in SYSTEMS]


def word_arcs_from_punct(items_punct_sentence, pred_heads, pred_deps):
    """Map a punct parser's tree to word-to-word arcs (module docstring): returns the heads
    (indices into the words, -1 root) and relations of the sentence's non-punctuation tokens."""
    from spacy_punctgen.data.preprocess import is_punct

    words, _spaces, _heads, deprels, upos, _xpos, _ = items_punct_sentence
    punct = [is_punct(u, d) for u, d in zip(upos, deprels)]
    index = {}
    for i, p in enumerate(punct):
        if not p:
            index[i] = len(index)
    heads, deps = [], []
    for i, p in enumerate(punct):
        if p:
            continue
        h = pred_heads[i]
        seen = 0
        while h != i and punct[h] and pred_heads[h] != h and seen <= len(words):
            h = pred_heads[h]
            seen += 1
        if h == i or punct[h]:
            heads.append(-1)
        else:
            heads.append(index[h])
        deps.append(pred_deps[i].lower())
    return heads, deps


def _predict(nlp, docs):
    docs = list(nlp.pipe(docs, batch_size=256))
    return [([t.head.i for t in d], [t.dep_ for t in d]) for d in docs]


def score(system: str, nlp, gold_items):
    """Per-sentence ``(n_words, uas_correct, las_correct)`` and the predicted word trees."""
    from spacy_punctgen.parsing.punct_properties import make_docs

    punct_items, depunct_items, _ = gold_items
    mine = gold_items[SYSTEMS.index(system)]
    docs = [make_docs(nlp.vocab, it)[0] for it in mine]
    preds = _predict(nlp, docs)
    counts, trees = [], []
    for k, (ph, pd) in enumerate(preds):
        if system == "punct":
            heads, deps = word_arcs_from_punct(punct_items[k], ph, pd)
        else:
            heads = [-1 if h == i else h for i, h in enumerate(ph)]
            deps = [d.lower() for d in pd]
        g_words, _s, g_heads, g_deps, *_ = depunct_items[k]
        g_heads = [-1 if h == i else h for i, h in enumerate(g_heads)]
        if len(heads) != len(g_heads):
            raise RuntimeError(f"sentence {k}: {len(heads)} predicted words, {len(g_heads)} gold")
        u = sum(h == g for h, g in zip(heads, g_heads))
        las = sum(h == g and (d == gd or (g < 0 and h < 0)) for h, g, d, gd in zip(heads, g_heads, deps, g_deps))
        counts.append((len(g_heads), u, las))
        trees.append((heads, deps))
    return counts, trees


def cmd_train(args) -> int:
    import spacy
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as train_loop

    import spacy_punctgen.parsing.punct_properties  # noqa: F401  (registers the reader and the layer)

    folder = Path(args.ud)
    train, dev, test = (_split(folder, s) for s in ("train", "dev", "test"))
    lang = args.lang or LANGS.get(args.treebank, "en")
    out = ROOT / "training" / "companions" / NAME / args.treebank / f"{args.system}_seed{args.seed}"
    out.mkdir(parents=True, exist_ok=True)
    cfg = _config(args.system, train, dev, lang, args.seed, args.max_steps, args.eval_frequency or args.max_steps)
    t0 = time.perf_counter()
    nlp = init_nlp(cfg, use_gpu=-1)
    nlp, _ = train_loop(nlp, out, use_gpu=-1, stdout=sys.stdout, stderr=sys.stderr)
    train_s = time.perf_counter() - t0
    nlp = spacy.load(out / "model-last")
    t1 = time.perf_counter()
    counts, _trees = score(args.system, nlp, _gold(test))
    eval_s = time.perf_counter() - t1
    n = sum(c[0] for c in counts)
    result = {
        "system": args.system, "name": NAME, "treebank": args.treebank, "seed": args.seed,
        "max_steps": args.max_steps, "uas": sum(c[1] for c in counts) / n, "las": sum(c[2] for c in counts) / n,
        "n_sentences": len(counts), "n_words": n, "train_seconds": round(train_s, 1),
        "eval_seconds": round(eval_s, 1), "test": str(test.relative_to(ROOT) if test.is_relative_to(ROOT) else test),
        "model": str(out.relative_to(ROOT)), "config": str(CONFIG.relative_to(ROOT)),
        "scoring": "word arcs of the depunctuated gold tree; punct parser's word heads mapped to the nearest "
                   "non-punctuation ancestor",
        "per_sentence": [list(c) for c in counts],
    }
    path = ROOT / args.metrics / args.treebank / "companions" / f"{NAME}_{args.system}_seed{args.seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=None) + "\n", encoding="utf-8")
    print(f"{args.treebank} {args.system} seed {args.seed}: UAS {result['uas']:.4f} LAS {result['las']:.4f} "
          f"(train {train_s:.0f} s, eval {eval_s:.0f} s) -> {path}")
    return 0


def approximate_randomisation(a, b, index, permutations: int, seed: int):
    """Two-sided approximate randomisation over sentences: ``a`` and ``b`` are per-sentence
    ``(n, uas, las)`` lists; ``index`` 1 (UAS) or 2 (LAS). Each shuffle swaps the two systems'
    counts of a sentence with probability 1/2 (numpy's PCG64 seeded with ``seed``). Returns
    (observed difference b - a over the words, add-one p)."""
    import numpy

    n = sum(x[0] for x in a)
    d = numpy.array([y[index] - x[index] for x, y in zip(a, b)], dtype=numpy.int64)
    observed = abs(int(d.sum()))
    rng = numpy.random.Generator(numpy.random.PCG64(seed))
    hits, done = 0, 0
    while done < permutations:
        k = min(1000, permutations - done)
        signs = rng.integers(0, 2, size=(k, len(d)), dtype=numpy.int64) * 2 - 1
        hits += int((numpy.abs(signs @ d) >= observed).sum())
        done += k
    return int(d.sum()) / n, (hits + 1) / (permutations + 1)


def cmd_summary(args) -> int:
    folder = ROOT / args.metrics / args.treebank / "companions"
    runs = {}
    for system in SYSTEMS:
        for path in sorted(folder.glob(f"{NAME}_{system}_seed*.json")):
            r = json.loads(path.read_text(encoding="utf-8"))
            runs.setdefault(system, {})[r["seed"]] = r
    if not runs:
        print(f"no {NAME} runs under {folder}", file=sys.stderr)
        return 1
    summary = {"name": NAME, "treebank": args.treebank, "systems": {}}
    for system, by_seed in runs.items():
        entry = {"seeds": sorted(by_seed), "max_steps": sorted({r["max_steps"] for r in by_seed.values()})}
        for metric in ("uas", "las"):
            vals = [by_seed[s][metric] for s in sorted(by_seed)]
            entry[metric] = statistics.fmean(vals)
            entry[f"{metric}_std"] = statistics.stdev(vals) if len(vals) > 1 else 0.0
            entry[f"{metric}_min"], entry[f"{metric}_max"] = min(vals), max(vals)
            entry[f"{metric}_per_seed"] = vals
        entry["n_sentences"] = sorted({r["n_sentences"] for r in by_seed.values()})
        entry["train_seconds_mean"] = statistics.fmean(r["train_seconds"] for r in by_seed.values())
        summary["systems"][system] = entry
    tests = {}
    for other in ("depunct", "punct"):
        if "properties" in runs and other in runs:
            a, b = runs[other], runs["properties"]
            common = sorted(set(a) & set(b))
            t = {"seeds": common}
            for k, metric in ((1, "uas"), (2, "las")):
                t[f"{metric}_diff_per_seed"] = [b[s][metric] - a[s][metric] for s in common]
                if 0 in common:
                    diff, p = approximate_randomisation(a[0]["per_sentence"], b[0]["per_sentence"], k,
                                                        args.permutations, args.seed)
                    t[f"{metric}_seed0_diff"], t[f"{metric}_seed0_p"] = diff, p
            t["test"] = (f"per-seed differences (properties - {other}, same seed); approximate randomisation over "
                         f"sentences of the seed-0 models, {args.permutations} shuffles, two-sided, add-one p")
            tests[f"properties_vs_{other}"] = t
    summary["paired"] = tests
    out = folder / f"{NAME}.json"
    out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    for system, e in summary["systems"].items():
        print(f"{args.treebank} {system}: UAS {100 * e['uas']:.2f} ± {100 * e['uas_std']:.2f}  "
              f"LAS {100 * e['las']:.2f} ± {100 * e['las_std']:.2f}  (seeds {e['seeds']})")
    print(f"-> {out}")
    return 0


def _tree_sentence(gold, heads, deps):
    """``gold`` (a PunctSentence) with the tree ``heads``/``deps`` (made projective as
    depunctuation makes trees projective, by preprocess_sentence over the words)."""
    from dataclasses import replace

    from spacy_punctgen.data.conllu import UDSentence
    from spacy_punctgen.data.preprocess import preprocess_sentence

    roots = [i for i, h in enumerate(heads) if h < 0]
    heads = list(heads)
    for i in roots[1:]:  # one root: further roots hang from the first (a punct parser's forests)
        heads[i] = roots[0]
    n = len(heads)
    # (relation "dep" for all: a word the parser labelled "punct" must not count as a mark here)
    ud = UDSentence(ids=list(range(1, n + 1)), forms=list(gold.words), upos=list(gold.upos), xpos=list(gold.xpos),
                    heads=[h + 1 if h >= 0 else 0 for h in heads], deprels=["dep"] * n, space_after=[True] * n)
    ps, reason = preprocess_sentence(ud, split_abbreviations=False)
    if ps is None:
        raise RuntimeError(reason)
    deprels = ["root" if h < 0 else d.lower() for h, d in zip(heads, deps)]
    return replace(gold, heads=ps.heads, deprels=deprels), len(roots) - 1


def cmd_analysis(args) -> int:
    import spacy

    import spacy_punctgen.parsing.punct_properties  # noqa: F401
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.model.punct_model import PunctModel

    test = _split(Path(args.ud), "test")
    gold_items = _gold(test)
    gold_sents, _stats = preprocess_file(test)
    if len(gold_sents) != len(gold_items[1]):
        raise RuntimeError(f"{len(gold_sents)} depunctuated test sentences, {len(gold_items[1])} read")
    model = PunctModel.from_disk(ROOT / args.model)
    result = {"name": NAME, "treebank": args.treebank, "punctgen_model": args.model, "seed": 0, "trees": {}}

    def ppl(sents):
        res = model.perplexity(model.prepare_eval(sents))
        return {k: res[k] for k in ("perplexity_per_slot", "perplexity_per_slot_possible", "n_impossible",
                                    "n_sentences", "n_slots")}

    result["trees"]["gold"] = ppl(gold_sents)
    for system in SYSTEMS:
        path = ROOT / "training" / "companions" / NAME / args.treebank / f"{system}_seed0" / "model-last"
        if not path.exists():
            print(f"skip {system}: no {path}", file=sys.stderr)
            continue
        counts, trees = score(system, spacy.load(path), gold_items)
        sents, extra_roots = [], 0
        for g, (h, d) in zip(gold_sents, trees):
            s, extra = _tree_sentence(g, h, d)
            sents.append(s)
            extra_roots += extra
        n = sum(c[0] for c in counts)
        result["trees"][system] = {**ppl(sents), "uas": sum(c[1] for c in counts) / n,
                                   "las": sum(c[2] for c in counts) / n, "extra_roots_reattached": extra_roots}
        print(system, result["trees"][system])
    out = ROOT / args.metrics / args.treebank / "companions" / f"{NAME}_analysis.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"-> {out}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("treebank")
    t.add_argument("ud")
    t.add_argument("--system", choices=SYSTEMS, required=True)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--max-steps", type=int, required=True)
    t.add_argument("--eval-frequency", type=int, default=0, help="0: once, at max_steps")
    t.add_argument("--lang", default=None)
    t.add_argument("--metrics", default="metrics")
    s = sub.add_parser("summary")
    s.add_argument("treebank")
    s.add_argument("--metrics", default="metrics")
    s.add_argument("--permutations", type=int, default=10000)
    s.add_argument("--seed", type=int, default=0)
    a = sub.add_parser("analysis")
    a.add_argument("treebank")
    a.add_argument("ud")
    a.add_argument("--model", required=True)
    a.add_argument("--metrics", default="metrics")
    args = p.parse_args(argv)
    return {"train": cmd_train, "summary": cmd_summary, "analysis": cmd_analysis}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
