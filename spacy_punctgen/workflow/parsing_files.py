"""Re-parsing a CoNLL-U file's words with a spaCy pipeline: the predicted trees, or the beam's
(or drawn) K trees of each sentence in K files (``scripts/parse_conllu.py`` documents the
files; ``scripts/sampled_trees_curve.py`` parses through it too).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc

from spacy_punctgen.errors import Errors
from spacy_punctgen.workflow.conllu_files import read_sentences, write_sentences


def _words(sentence) -> list:
    return [tok for tok in sentence if isinstance(tok["id"], int)]


def _doc(nlp, words, where: str) -> Doc:
    if not words:
        raise ValueError(Errors.E712.format(where=where))
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
        raise ValueError(Errors.E713.format(where=where, n=len(roots)))
    for i, (word, token) in enumerate(zip(words, doc)):
        word["upos"] = token.pos_ or "X"
        word["xpos"] = token.tag_ or "_"
        word["head"] = 0 if heads[i] == i else heads[i] + 1
        word["deprel"] = "root" if heads[i] == i else (deps[i] or "dep")


def kbest_paths(dest: Path, k: int) -> list:
    stem = dest.name[:-len(".conllu")] if dest.name.endswith(".conllu") else dest.name
    return [dest.with_name(f"{stem}.k{j + 1}.conllu") for j in range(k)]


def best_thread_cpu(make_input, run, repeats: int):
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
        greedy_cpu, _, _ = best_thread_cpu(make_docs, lambda d: list(nlp.pipe(d, batch_size=batch_size)),
                                            timing_repeats)
        timing["greedy_cpu_seconds"] = round(greedy_cpu, 2)
    t0 = time.perf_counter()
    cpu, docs, trees = best_thread_cpu(make_docs, trees_of, timing_repeats)
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
        raise ValueError(Errors.E714.format(model=model))
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
