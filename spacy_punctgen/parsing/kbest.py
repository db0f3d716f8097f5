"""Several trees of a sentence from ONE spaCy parser: the distinct final analyses of its beam, or
its greedy parse and trees drawn from its transition probabilities.

Why: restoration decoded from a mixture of trees (``decode.mbr.restore_mixtures``) beats
restoration from one tree, but a mixture of separately trained parsers costs one parser each.
spaCy's transition-based parser can search with a beam (``beam_width`` > 1) using the weights
of a greedily trained model; the beam's final states are whole analyses with the parser's own
probabilities (``moves.get_beam_parses``).  Analyses that differ only in their transition
sequence give the same tree and are merged (probabilities summed).  Labels the projectivising
parser decorated (``obj||xcomp``) are undone as spaCy undoes them for its best analysis
(``nonproj.deprojectivize``).

The other search, ``"sample"`` (:mod:`spacy_punctgen.parsing.parser_samples`): the greedy parse
and ``k - 1`` trees drawn from the parser's transition probabilities at a temperature; the
distinct trees are kept, the greedy one first, each with its share of the ``k`` trees (its
frequency), so that weighing by these shares is the Monte Carlo mixture of the ``k`` trees.
The draws share the batch's token vectors, so ``k`` trees cost far less than ``k`` parses.

Two ways in:

* offline, :func:`kbest_trees` (``scripts/parse_conllu.py --kbest K``: K CoNLL-U files);
* in a pipeline, the ``punctgen_kbest`` component (:class:`KBestParser`,
  ``spacy_punctgen.load(lang, kbest=K)``): it runs the pipeline's (disabled) ``parser`` once per
  batch with a beam of width K, annotates the Docs with the best analysis exactly as the parser
  would with that beam, and keeps the other analyses in ``doc.user_data[KBEST_KEY]``, where the
  ``punctgen`` component's restoration finds them (:func:`alternative_trees`) and decodes each
  sentence from the mixture of the analyses that are a tree of it
  (:func:`spacy_punctgen.decode.mixture.restore_weighted_mixtures` for weights other than uniform).
"""
from __future__ import annotations

from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from spacy_punctgen.data.preprocess import is_punct
from spacy_punctgen.errors import Errors
from spacy_punctgen.parsing.parser_samples import check_seed, check_temperature, sample_states, tree_of_state

#: where the ``punctgen_kbest`` component keeps a Doc's analyses (``doc.user_data``)
KBEST_KEY = ("punctgen", "kbest")
#: the component's factory name
KBEST_COMPONENT = "punctgen_kbest"
#: how a ``punctgen`` component weighs the trees of a sentence (its ``kbest_weights`` setting):
#: equally, or by the beam's probabilities renormalised over the trees kept for the sentence
WEIGHTINGS = ("uniform", "beam")
#: how the trees are searched: the beam's best analyses, or the greedy parse and draws
SEARCHES = ("beam", "sample")


class ParsedTree(NamedTuple):
    """One analysis: ``heads[i]`` the head's token index (``i`` itself for a root), ``deps[i]``
    the label (``ROOT`` for a root), ``prob`` its share of the beam's final probability mass."""

    prob: float
    heads: Tuple[int, ...]
    deps: Tuple[str, ...]


def check_k(k) -> int:
    """``k`` as an int from 1 to 1024 (E097 otherwise)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1024:
        raise ValueError(Errors.E097.format(k=k))
    return k


def check_search(search) -> str:
    """``search`` one of :data:`SEARCHES` (E890 otherwise)."""
    if search not in SEARCHES:
        raise ValueError(Errors.E890.format(search=search))
    return search


def _check(nlp: Language, k) -> None:
    check_k(k)
    if "parser" not in nlp.pipe_names:
        raise ValueError(Errors.E098.format(pipes=nlp.pipe_names))


def _deprojectivize(doc: Doc, heads: List[int], deps: List[str]) -> Tuple[List[int], List[str]]:
    """``heads``/``deps`` with decorated labels (``X||Y``) undone by spaCy's own
    ``nonproj.deprojectivize`` (on a scratch Doc of ``doc``'s words), as the parser's
    ``set_annotations`` undoes them for its best analysis."""
    if not any("||" in d for d in deps):
        return heads, deps
    from spacy.pipeline._parser_internals import nonproj

    scratch = Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
                  heads=heads, deps=deps)
    nonproj.deprojectivize(scratch)
    return [t.head.i for t in scratch], [t.dep_ for t in scratch]


def _analyses(doc: Doc, parses: Sequence[Tuple[float, List[Tuple[int, int, str]]]]
              ) -> Dict[Tuple[tuple, tuple], float]:
    """The beam's distinct analyses of ``doc`` with their summed probabilities, in beam order."""
    merged: Dict[Tuple[tuple, tuple], float] = {}
    n = len(doc)
    for prob, arcs in parses:
        heads, deps = list(range(n)), ["ROOT"] * n  # arcs leave roots out
        for head, child, label in arcs:
            if 0 <= head < n and 0 <= child < n:
                heads[child], deps[child] = head, label
        heads, deps = _deprojectivize(doc, heads, deps)
        key = (tuple(heads), tuple(deps))
        merged[key] = merged.get(key, 0.0) + float(prob)
    return merged


def _trees(doc: Doc, parses: Sequence[Tuple[float, List[Tuple[int, int, str]]]], k: int) -> List[ParsedTree]:
    """The beam's distinct trees (empty if it returned none: spaCy leaves out analyses without
    arcs, e.g. of a one-word sentence)."""
    merged = _analyses(doc, parses)
    total = sum(merged.values())
    ranked = sorted(merged.items(), key=lambda kv: -kv[1])[:k]
    return [ParsedTree(p / total if total > 0 else 1.0 / len(ranked), h, d) for (h, d), p in ranked]


def _sampled_trees(doc: Doc, states: Sequence, strings) -> List[ParsedTree]:
    """The distinct trees of ``states`` (the greedy parse first, then the draws): the greedy tree
    first, the others by frequency (ties: the first drawn first), each with its share of the
    states."""
    drawn: Dict[tuple, int] = {}  # equal arc sets first (cheap), then their trees
    for state in states:
        arcs = tuple(tree_of_state(state, strings))
        drawn[arcs] = drawn.get(arcs, 0) + 1
    merged: Dict[Tuple[tuple, tuple], float] = {}
    for arcs, count in drawn.items():
        for key, _ in _analyses(doc, [(1.0, list(arcs))]).items():
            merged[key] = merged.get(key, 0.0) + count
    greedy, *rest = list(merged.items())
    rest = sorted(rest, key=lambda kv: -kv[1])  # stable: ties keep the order drawn
    return [ParsedTree(c / len(states), h, d) for (h, d), c in [greedy] + rest]


def kbest_trees(nlp: Language, docs: Iterable[Doc], k: int, batch_size: int = 256, search: str = "beam",
                temperature: float = 1.0, seed: int = 0) -> List[List[ParsedTree]]:
    """Per Doc, up to ``k`` distinct trees from the pipeline's parser: with ``search="beam"`` the
    parser searches with a beam of width ``k``, most probable first; with ``"sample"`` the greedy
    parse and ``k - 1`` trees drawn at ``temperature`` (with ``seed``), the greedy tree first,
    ``prob`` each tree's share of the ``k`` (``k = 1``: the greedy parse either way).  The
    components before the parser run as usual; sentence starts already set on the Docs are
    respected as the greedy parser respects them.  The Docs are annotated by the earlier
    components only."""
    _check(nlp, k)
    check_search(search)
    temperature, seed = check_temperature(temperature), check_seed(seed)
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
            if search == "sample":  # k = 1: the greedy parse, batched
                states = sample_states(parser, batch, k, temperature, seed)
                trees = [_sampled_trees(doc, st, nlp.vocab.strings) if len(doc) else []
                         for doc, st in zip(batch, states)]
            elif k > 1:
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


# ------------------------------------------------------------ in a pipeline
class KBestParser:
    """The ``punctgen_kbest`` component: the pipeline's parser (component ``parser``, usually
    disabled so that it does not parse twice) searching with a beam of width ``k``, once per
    batch.  Each Doc gets the beam's best analysis (``parser.set_annotations``: heads, labels,
    sentence starts, as the parser itself would give them with ``beam_width = k``) and, in
    ``doc.user_data[KBEST_KEY]``, the beam's other distinct analyses (at most ``k - 1``, most
    probable first: ``heads``, ``deps``) with ``probs`` (the beam's probability of the best
    analysis, then of each other one) and the Doc's ``orth`` ids (so that a slice
    ``doc[:m].as_doc(copy_user_data=True)`` still finds its analyses: the long-text path cuts its
    windows so).  The parser's own settings are not changed.

    With ``search="sample"`` the Docs get the greedy parse instead (as the parser alone gives it)
    and the other trees are the distinct ones among ``k - 1`` drawn from the parser's transition
    probabilities at ``temperature`` (:mod:`~spacy_punctgen.parsing.parser_samples`; the draws
    depend on ``seed`` and each Doc's words, not on the batch), ``probs`` their shares of the
    ``k`` trees.

    ``k``, ``search``, ``temperature`` and ``seed`` are checked when the component is built (E097,
    E890, E887, E888); a pipeline without the ``parser`` component is refused when the component
    first runs (E098)."""

    def __init__(self, nlp: Language, name: str = KBEST_COMPONENT, k: int = 2, parser: str = "parser",
                 search: str = "beam", temperature: float = 1.0, seed: int = 0, weights: str = "uniform"):
        self.nlp = nlp
        self.name = name
        self.k = check_k(k)
        self.parser_name = parser
        self.search = check_search(search)
        self.temperature = check_temperature(temperature)
        self.seed = check_seed(seed)
        if weights not in WEIGHTINGS:
            raise ValueError(Errors.E099.format(problem=f"weights must be one of {WEIGHTINGS}, not {weights!r}"))
        self.weights = weights

    def _parser(self):
        if self.parser_name not in self.nlp.component_names:
            raise ValueError(Errors.E098.format(pipes=self.nlp.component_names))
        return self.nlp.get_pipe(self.parser_name)

    def __call__(self, doc: Doc) -> Doc:
        self._annotate([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        batch: List[Doc] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= batch_size:
                self._annotate(batch)
                yield from batch
                batch = []
        if batch:
            self._annotate(batch)
            yield from batch

    def _annotate(self, docs: List[Doc]) -> None:
        parser = self._parser()
        if self.k == 1 or not any(len(doc) for doc in docs):
            states = parser.predict(docs)
            parser.set_annotations(docs, states)
            for doc in docs:
                doc.user_data.pop(KBEST_KEY, None)
            return
        if self.search == "sample":
            states = sample_states(parser, docs, self.k, self.temperature, self.seed)
            parser.set_annotations(docs, [st[0] for st in states])
            analyses = [{(t.heads, t.deps): t.prob for t in _sampled_trees(doc, st, self.nlp.vocab.strings)}
                        if len(doc) else {} for doc, st in zip(docs, states)]
        else:
            beams = parser.beam_parse(docs, beam_width=self.k, beam_density=parser.cfg.get("beam_density", 0.0))
            parser.set_annotations(docs, beams)
            analyses = [_analyses(doc, parser.moves.get_beam_parses(beam)) if len(doc) else {}
                        for doc, beam in zip(docs, beams)]
        for doc, merged in zip(docs, analyses):
            if not len(doc):
                doc.user_data.pop(KBEST_KEY, None)
                continue
            best = (tuple(t.head.i for t in doc), tuple(t.dep_ for t in doc))
            others = sorted(((p, key) for key, p in merged.items() if key != best), key=lambda x: -x[0])
            others = others[:self.k - 1]
            doc.user_data[KBEST_KEY] = {
                "orth": [int(t.orth) for t in doc],
                "weights": self.weights,
                "probs": [float(merged.get(best, 0.0))] + [float(p) for p, _ in others],
                "heads": [list(h) for _, (h, _) in others],
                "deps": [list(d) for _, (_, d) in others]}

    # the component has no weights of its own: the parser's are saved with the parser
    def to_disk(self, path, *, exclude=tuple()) -> None:
        pass

    def from_disk(self, path, *, exclude=tuple()) -> "KBestParser":
        return self

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return b""

    def from_bytes(self, data: bytes, *, exclude=tuple()) -> "KBestParser":
        return self


def make_kbest_parser(nlp: Language, name: str, k: int, parser: str, search: str, temperature: float,
                      seed: int, weights: str) -> KBestParser:
    """The ``punctgen_kbest`` factory (registered when this module is imported). ``weights``: how
    restoration weighs the trees it leaves in a Doc (:data:`WEIGHTINGS`), written beside them."""
    return KBestParser(nlp, name, k=k, parser=parser, search=search, temperature=temperature, seed=seed,
                       weights=weights)


if not Language.has_factory(KBEST_COMPONENT):
    Language.factory(KBEST_COMPONENT, func=make_kbest_parser,
                     default_config={"k": 2, "parser": "parser", "search": "beam", "temperature": 1.0, "seed": 0,
                                     "weights": "uniform"},
                     assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"])


class Alternative(NamedTuple):
    """Another analysis of a whole Doc: its beam probability, heads (token indices, a root its
    own) and labels."""

    prob: float
    heads: List[int]
    deps: List[str]


def alternative_trees(doc: Doc) -> Tuple[Optional[float], List[Alternative]]:
    """The beam probability of ``doc``'s own analysis and its other analyses, as the
    ``punctgen_kbest`` component left them (``(None, [])`` for a Doc it did not annotate, or
    whose words are not those it annotated).  A slice ``doc[:m]`` made with its user data keeps
    the first ``m`` tokens' analyses.

    Each token keeps its part: a token that is punctuation in ``doc`` (UPOS ``PUNCT`` or relation
    ``punct``, after any relabelling such as the restore pipeline's ``punctgen_words``) is
    ``punct`` in every analysis, and a word labelled ``punct`` by another analysis is ``dep`` there,
    so that all analyses have the words of ``doc``'s own."""
    data = doc.user_data.get(KBEST_KEY)
    n = len(doc)
    if not data or len(data.get("orth", ())) < n or list(data["orth"][:n]) != [int(t.orth) for t in doc]:
        return None, []
    probs = [float(p) for p in data["probs"]]
    own_punct = [is_punct(t.pos_, t.dep_.lower()) for t in doc]
    out = []
    for prob, heads, deps in zip(probs[1:], data["heads"], data["deps"]):
        heads, deps = [int(h) for h in heads[:n]], list(deps[:n])
        for i, t in enumerate(doc):
            if own_punct[i] and not is_punct(t.pos_, deps[i].lower()):
                deps[i] = "punct"
            elif not own_punct[i] and is_punct(t.pos_, deps[i].lower()):
                deps[i] = "dep"
        out.append(Alternative(prob, heads, deps))
    return probs[0], out


def kbest_weighting(doc: Doc) -> Optional[str]:
    """How the ``punctgen_kbest`` component that parsed ``doc`` asked its trees to be weighed
    (None for a Doc it did not annotate)."""
    data = doc.user_data.get(KBEST_KEY)
    return data.get("weights", "uniform") if data else None


def check_weighting(weighting: str, method: str) -> str:
    """``weighting`` one of :data:`WEIGHTINGS`; ``"beam"`` only with the ``"marginal"`` decoder (E099)."""
    if weighting not in WEIGHTINGS or (weighting == "beam" and method != "marginal"):
        raise ValueError(Errors.E099.format(problem=f"kbest_weights must be one of {WEIGHTINGS} ('beam' with "
                                                    f"restore_method 'marginal'), not {weighting!r} "
                                                    f"(restore_method {method!r})"))
    return weighting
