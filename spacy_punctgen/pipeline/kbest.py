"""Several trees of a sentence from ONE spaCy parser: the distinct final analyses of its beam.

Why: restoration decoded from a mixture of trees (``decode.mbr.restore_mixtures``) beats
restoration from one tree, but a mixture of separately trained parsers costs one parser each.
spaCy's transition-based parser can search with a beam (``beam_width`` > 1) using the weights
of a greedily trained model; the beam's final states are whole analyses with the parser's own
probabilities (``moves.get_beam_parses``).  Analyses that differ only in their transition
sequence give the same tree and are merged (probabilities summed).
"""
from __future__ import annotations

from typing import Dict, Iterable, List, NamedTuple, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from spacy_punctgen.errors import Errors


class ParsedTree(NamedTuple):
    """One analysis: ``heads[i]`` the head's token index (``i`` itself for a root), ``deps[i]``
    the label (``ROOT`` for a root), ``prob`` its share of the beam's final probability mass."""

    prob: float
    heads: Tuple[int, ...]
    deps: Tuple[str, ...]


def _check(nlp: Language, k) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1024:
        raise ValueError(Errors.E097.format(k=k))
    if "parser" not in nlp.pipe_names:
        raise ValueError(Errors.E098.format(pipes=nlp.pipe_names))


def _trees(doc: Doc, parses: Sequence[Tuple[float, List[Tuple[int, int, str]]]], k: int) -> List[ParsedTree]:
    """The beam's distinct trees (empty if it returned none: spaCy leaves out analyses without
    arcs, e.g. of a one-word sentence)."""
    merged: Dict[Tuple[tuple, tuple], float] = {}
    n = len(doc)
    for prob, arcs in parses:
        heads, deps = list(range(n)), ["ROOT"] * n  # arcs leave roots out
        for head, child, label in arcs:
            if 0 <= head < n and 0 <= child < n:
                heads[child], deps[child] = head, label
        key = (tuple(heads), tuple(deps))
        merged[key] = merged.get(key, 0.0) + float(prob)
    total = sum(merged.values())
    ranked = sorted(merged.items(), key=lambda kv: -kv[1])[:k]
    return [ParsedTree(p / total if total > 0 else 1.0 / len(ranked), h, d) for (h, d), p in ranked]


def kbest_trees(nlp: Language, docs: Iterable[Doc], k: int, batch_size: int = 256) -> List[List[ParsedTree]]:
    """Per Doc, up to ``k`` distinct trees from the pipeline's parser searching with a beam of
    width ``k``, most probable first (``k = 1``: the greedy parse).  The components before the
    parser run as usual; sentence starts already set on the Docs are respected as the greedy
    parser respects them.  The Docs are annotated by the earlier components only."""
    _check(nlp, k)
    names = nlp.pipe_names
    parser = nlp.get_pipe("parser")
    before = [(name, proc) for name, proc in nlp.pipeline[:names.index("parser")]]
    out: List[List[ParsedTree]] = []
    docs = list(docs)
    width = parser.cfg.get("beam_width", 1)
    try:
        parser.cfg["beam_width"] = k
        for a in range(0, len(docs), batch_size):
            batch = docs[a:a + batch_size]
            for _, proc in before:
                batch = list(proc.pipe(batch, batch_size=batch_size))
            docs[a:a + batch_size] = batch
            trees = [[] for _ in batch]
            if k > 1:
                beams = parser.predict(batch)
                trees = [_trees(doc, parser.moves.get_beam_parses(beam), k) for doc, beam in zip(batch, beams)]
            greedy = [i for i, t in enumerate(trees) if not t]
            if greedy:
                parser.cfg["beam_width"] = 1
                for i in greedy:
                    d = parser(batch[i].copy())
                    trees[i] = [ParsedTree(1.0, tuple(t.head.i for t in d), tuple(t.dep_ for t in d))]
                parser.cfg["beam_width"] = k
            out.extend(trees)
    finally:
        parser.cfg["beam_width"] = width
    return out
