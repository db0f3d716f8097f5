"""Re-parse a CoNLL-U file's words with a trained spaCy pipeline and write the predicted trees.

Usage (project.yml ``parse-test``, ``parse-test-kbest``):
    python scripts/parse_conllu.py MODEL IN.conllu OUT.conllu [--batch-size 256] [--kbest K [--compare-greedy]
        [--search beam|sample [--temperature T] [--seed S]]]

With ``--kbest K`` the parser searches with a beam of width K
(:func:`spacy_punctgen.parsing.kbest.kbest_trees`) and K files are written, ``OUT.k1.conllu``
... ``OUT.kK.conllu``: file ``j`` holds each sentence's ``j``-th most probable distinct tree, or its
most probable one where the beam found fewer than ``j`` -- so the uniform mixture over the K
files (``evaluate-restore --parsed 'OUT.k*.conllu'``) weighs the best tree by the beam slots it
fills.  The trees' probabilities go to ``OUT.kbest.json`` (per sentence, one per distinct tree,
in the files' order).  ``--search sample``: the greedy parse and K - 1 trees drawn from the
parser's transition probabilities at ``--temperature`` (:mod:`spacy_punctgen.parsing.parser_samples`);
file 1 holds the greedy tree, the others the further distinct trees by frequency, and the
json file each tree's share of the K (``kbest_weighting.py --weights beam`` weighs by it: the
Monte Carlo mixture of the K trees).  ``--compare-greedy`` also parses the same sentences greedily in the same
run and reports the cost of the beam parse against it (``cost_vs_greedy``: thread CPU seconds
of the parse only, files not included; a few sentences are parsed first to warm up).

Why: restoration on *parsed* trees (AED parsed, the paper's Table 4 and Figure 4) needs
the depunctuated test sentences with the trees a parser of unpunctuated text predicts
instead of the gold ones. Each sentence is parsed on its own (gold segmentation and gold
words, as in the paper): a ``Doc`` built from the FORM column, every token but the first
marked as not starting a sentence, so spaCy's parser keeps it one tree. UPOS (from the
morphologizer), XPOS (tagger), HEAD and DEPREL are replaced; everything else, comments
included (``# sent_id``, ``# punct_slots``), is copied, so the output lines up with the
input sentence for sentence. Multiword-token ranges and empty nodes are copied unchanged
and not parsed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc

from spacy_punctgen.workflow.conllu_files import read_sentences, write_sentences


def _words(sentence) -> list:
    return [tok for tok in sentence if isinstance(tok["id"], int)]


def _doc(nlp, words, where: str) -> Doc:
    if not words:
        raise ValueError(f"{where}: sentence without words")
    doc = Doc(nlp.vocab, words=[w["form"] for w in words])
    for i, token in enumerate(doc):
        token.is_sent_start = i == 0
    return doc


def _fill(sentence, words, doc: Doc, where: str, tree=None) -> None:
    """Copy the doc's tags and its tree (or ``tree``: a kbest ``ParsedTree`` of it) into ``words``."""
    heads = tree.heads if tree is not None else [t.head.i for t in doc]
    deps = tree.deps if tree is not None else [t.dep_ for t in doc]
    roots = [i for i, h in enumerate(heads) if h == i]
    if len(roots) != 1:
        raise ValueError(f"{where}: the parser returned {len(roots)} roots for one sentence")
    for i, (word, token) in enumerate(zip(words, doc)):
        word["upos"] = token.pos_ or "X"
        word["xpos"] = token.tag_ or "_"
        word["head"] = 0 if heads[i] == i else heads[i] + 1
        word["deprel"] = "root" if heads[i] == i else (deps[i] or "dep")


def kbest_paths(dest: Path, k: int) -> list:
    stem = dest.name[:-len(".conllu")] if dest.name.endswith(".conllu") else dest.name
    return [dest.with_name(f"{stem}.k{j + 1}.conllu") for j in range(k)]


def _best_thread_cpu(make_input, run, repeats: int):
    """The least thread CPU seconds of ``repeats`` runs of ``run(make_input())`` (the input is made
    outside the timing), and the last run's input and output."""
    best = None
    for _ in range(max(1, repeats)):
        arg = make_input()
        c0 = time.thread_time()
        out = run(arg)
        cpu = time.thread_time() - c0
        best = cpu if best is None else min(best, cpu)
    return best, arg, out


def parse_file_kbest(model, src: Path, dest: Path, k: int, batch_size: int = 256,
                     compare_greedy: bool = False, search: str = "beam", temperature: float = 1.0,
                     seed: int = 0, timing_repeats: int = 1) -> dict:
    """``--kbest K``: K files of trees from one parser's beam (module docstring).  The CPU figures
    are the best of ``timing_repeats`` runs (the trees are the same every run)."""
    import copy

    from spacy_punctgen.parsing.kbest import kbest_trees

    nlp = spacy.load(model) if not hasattr(model, "pipe") else model
    sentences = read_sentences(src)

    def make_docs():
        return [_doc(nlp, _words(s), f"{src}: sentence {i + 1}") for i, s in enumerate(sentences)]

    def trees_of(docs):
        return kbest_trees(nlp, docs, k, batch_size=batch_size, search=search, temperature=temperature, seed=seed)

    timing = {}
    if compare_greedy:
        trees_of(make_docs()[:64])  # warm-up
        list(nlp.pipe(make_docs()[:64], batch_size=batch_size))
        greedy_cpu, _, _ = _best_thread_cpu(make_docs, lambda d: list(nlp.pipe(d, batch_size=batch_size)),
                                            timing_repeats)
        timing["greedy_cpu_seconds"] = round(greedy_cpu, 2)
    t0 = time.perf_counter()
    cpu, docs, trees = _best_thread_cpu(make_docs, trees_of, timing_repeats)
    seconds = time.perf_counter() - t0
    timing["cpu_seconds"] = round(cpu, 2)
    if compare_greedy and timing["greedy_cpu_seconds"] > 0:
        timing["cost_vs_greedy"] = round(cpu / timing["greedy_cpu_seconds"], 3)
        timing["timing_repeats"] = max(1, timing_repeats)
    paths = kbest_paths(Path(dest), k)
    for j, path in enumerate(paths):
        out = copy.deepcopy(sentences)
        for i, (sentence, doc, ts) in enumerate(zip(out, docs, trees)):
            _fill(sentence, _words(sentence), doc, f"{src}: sentence {i + 1}", ts[j] if j < len(ts) else ts[0])
        write_sentences(out, path)
    probs = Path(str(paths[0])[:-len(".k1.conllu")] + ".kbest.json")
    probs.write_text(json.dumps([[round(t.prob, 6) for t in ts] for ts in trees]) + "\n", encoding="utf-8")
    return {"model": str(model), "input": str(src), "outputs": [str(p) for p in paths], "k": k, "search": search,
            **({"temperature": temperature, "seed": seed} if search == "sample" else {}),
            "n_sentences": len(sentences), "mean_distinct_trees": round(sum(map(len, trees)) / max(1, len(trees)), 3),
            "seconds": round(seconds, 2), **timing}


def parse_file(model, src: Path, dest: Path, batch_size: int = 256) -> dict:
    """Parse every sentence of ``src`` with ``model``; write ``dest`` atomically; return counts."""
    nlp = spacy.load(model) if not hasattr(model, "pipe") else model
    if "parser" not in nlp.pipe_names:
        raise ValueError(f"{model}: the pipeline has no parser")
    sentences = read_sentences(src)
    t0 = time.perf_counter()
    docs = []
    for k, sentence in enumerate(sentences):
        docs.append(_doc(nlp, _words(sentence), f"{src}: sentence {k + 1}"))
    parsed = list(nlp.pipe(docs, batch_size=batch_size))
    n_words = 0
    for k, (sentence, doc) in enumerate(zip(sentences, parsed)):
        words = _words(sentence)
        _fill(sentence, words, doc, f"{src}: sentence {k + 1} ({sentence.metadata.get('sent_id', 'no sent_id')})")
        n_words += len(words)
    write_sentences(sentences, dest)
    return {"model": str(model), "input": str(src), "output": str(dest), "n_sentences": len(sentences),
            "n_words": n_words, "seconds": round(time.perf_counter() - t0, 2)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="spaCy pipeline directory with a parser (e.g. .../parser-depunct/model-best)")
    p.add_argument("input", type=Path, help="CoNLL-U file whose words are parsed")
    p.add_argument("output", type=Path, help="CoNLL-U file to write")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--kbest", type=int, default=0,
                   help="write K files of the beam's K best distinct trees (see the module docstring)")
    p.add_argument("--compare-greedy", action="store_true",
                   help="with --kbest: also time a greedy parse of the same sentences (cost_vs_greedy)")
    p.add_argument("--search", choices=("beam", "sample"), default="beam",
                   help="with --kbest: the beam's K best, or the greedy parse and K - 1 drawn trees")
    p.add_argument("--temperature", type=float, default=1.0, help="with --search sample (1: the parser's own)")
    p.add_argument("--seed", type=int, default=0, help="with --search sample")
    args = p.parse_args(argv)
    try:
        if args.kbest:
            result = parse_file_kbest(args.model, args.input, args.output, args.kbest, args.batch_size,
                                      compare_greedy=args.compare_greedy, search=args.search,
                                      temperature=args.temperature, seed=args.seed)
        else:
            result = parse_file(args.model, args.input, args.output, args.batch_size)
    except (ValueError, OSError) as e:
        print(f"parse_conllu: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
