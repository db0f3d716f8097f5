"""Trees drawn from one parser's transition probabilities (pipeline/parser_samples.py, and the
``search="sample"`` of pipeline/kbest.py), with the shipped English parser."""
import math
from collections import Counter

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen.parsing.kbest import kbest_trees
from spacy_punctgen.api.load import shipped_parser_path
from spacy_punctgen.parsing.parser_samples import (check_seed, check_temperature, draw_keys, gumbel_noise,
                                                    sample_states, tree_of_state)

TEXTS = ["when i came home he left i was sad", "the cat sat on the mat", "yes",
         "we went to the shop and bought some bread because we were hungry"]


@pytest.fixture(scope="module")
def parser_nlp():
    return spacy.load(shipped_parser_path("en"))


def _doc(nlp, text):
    doc = Doc(nlp.vocab, words=text.split())
    for i, tok in enumerate(doc):
        tok.is_sent_start = i == 0
    return doc


def _tagged(nlp, docs):
    for name, proc in nlp.pipeline[:nlp.pipe_names.index("parser")]:
        docs = list(proc.pipe(docs))
    return docs


def _key(state, strings):
    return tuple(sorted(tree_of_state(state, strings)))


def _exact_tree_distribution(nlp, doc, temperature):
    """Every transition sequence the parser can take on ``doc``, by brute force (branches below
    1e-7 dropped), each move with probability softmax(scores / T) over the valid moves; the
    probability of each final tree summed over its sequences."""
    parser = nlp.get_pipe("parser")
    moves = parser.moves
    names = [moves.get_class_name(c) for c in range(moves.n_moves)]
    step_model = parser.model.predict([doc])
    dist, dropped = Counter(), 0.0
    stack = [(parser.moves.init_batch([doc])[0], 1.0)]
    while stack:
        state, p = stack.pop()
        if state.is_final():
            dist[_key(state, nlp.vocab.strings)] += p
            continue
        scores = np.asarray(step_model.predict([state]), dtype=np.float64)[0] / temperature
        valid = [c for c in range(moves.n_moves) if moves.is_valid(state, names[c])]
        z = np.exp(scores[valid] - scores[valid].max())
        z /= z.sum()
        for c, q in zip(valid, z):
            if p * q < 1e-7:
                dropped += p * q
                continue
            nxt = state.copy()
            moves.apply_transition(nxt, names[c])
            stack.append((nxt, p * q))
    step_model.clear_memory()
    return dist, dropped


@pytest.mark.parametrize("text,temperature", [("he left early", 1.0), ("she sang loudly", 1.5)])
def test_draws_follow_the_parsers_exact_tree_distribution(parser_nlp, text, temperature):
    doc = _tagged(parser_nlp, [_doc(parser_nlp, text)])[0]
    exact, dropped = _exact_tree_distribution(parser_nlp, doc, temperature)
    assert dropped < 0.01 and abs(sum(exact.values()) + dropped - 1) < 1e-6
    n = 6000
    states = sample_states(parser_nlp.get_pipe("parser"), [doc], n + 1, temperature, seed=3)[0][1:]
    seen = Counter(_key(s, parser_nlp.vocab.strings) for s in states)
    assert sum(c for t, c in seen.items() if t not in exact) <= 3  # only trees of (near) zero mass are unlisted
    likely = [t for t, p in exact.items() if p > 0.005]
    assert len(likely) >= 2  # the test has several trees to tell apart
    for tree in likely:  # each likely tree within 4.5 standard deviations
        p = exact[tree]
        assert abs(seen[tree] / n - p) < 4.5 * math.sqrt(p * (1 - p) / n), (tree, seen[tree] / n, p)
    # total variation over the likely trees and the rest lumped together
    rest_seen, rest_exact = n - sum(seen[t] for t in likely), 1 - sum(exact[t] for t in likely)
    tv = 0.5 * (sum(abs(seen[t] / n - exact[t]) for t in likely) + abs(rest_seen / n - rest_exact))
    assert tv < 0.02, tv


def test_a_flatter_temperature_spreads_the_draws(parser_nlp):
    doc = _tagged(parser_nlp, [_doc(parser_nlp, TEXTS[3])])[0]
    parser = parser_nlp.get_pipe("parser")
    distinct = [len({_key(s, parser_nlp.vocab.strings) for s in sample_states(parser, [doc], 200, t, 0)[0]})
                for t in (0.3, 1.0, 3.0)]
    assert distinct[0] < distinct[1] < distinct[2]


def test_the_first_state_is_the_greedy_parse_and_draws_do_not_depend_on_the_batch(parser_nlp):
    greedy = [(tuple(t.head.i for t in d), tuple(t.dep_ for t in d))
              for d in parser_nlp.pipe([_doc(parser_nlp, t) for t in TEXTS])]
    alone = [kbest_trees(parser_nlp, [_doc(parser_nlp, t)], 6, search="sample", seed=5)[0] for t in TEXTS]
    together = kbest_trees(parser_nlp, [_doc(parser_nlp, t) for t in TEXTS[::-1]], 6, search="sample", seed=5)[::-1]
    assert alone == together
    for g, ts in zip(greedy, together):
        assert (ts[0].heads, ts[0].deps) == g
        assert abs(sum(t.prob for t in ts) - 1) < 1e-12
        assert all(t.prob * 6 == round(t.prob * 6) for t in ts)  # shares of the 6 trees
        assert len({(t.heads, t.deps) for t in ts}) == len(ts)
        assert [t.prob for t in ts[1:]] == sorted((t.prob for t in ts[1:]), reverse=True)
    other_seed = kbest_trees(parser_nlp, [_doc(parser_nlp, t) for t in TEXTS], 6, search="sample", seed=6)
    assert other_seed != together or all(len(ts) == 1 for ts in together)


def test_k_1_samples_nothing(parser_nlp):
    one = kbest_trees(parser_nlp, [_doc(parser_nlp, t) for t in TEXTS], 1, search="sample")
    assert one == kbest_trees(parser_nlp, [_doc(parser_nlp, t) for t in TEXTS], 1)


def test_empty_docs_and_empty_batches(parser_nlp):
    parser = parser_nlp.get_pipe("parser")
    assert sample_states(parser, [], 4) == []
    empty = Doc(parser_nlp.vocab, words=[])
    out = sample_states(parser, [empty, _doc(parser_nlp, "yes indeed")], 3)
    assert [len(s) for s in out] == [3, 3] and all(s.is_final() for st in out for s in st)
    assert kbest_trees(parser_nlp, [Doc(parser_nlp.vocab, words=[])], 4, search="sample")[0][0].heads == ()


def test_noise_is_a_pure_function_of_its_key_and_looks_gumbel():
    keys = draw_keys([], 3, 0)
    assert keys.shape == (0, 3)
    g = gumbel_noise(np.arange(4000, dtype=np.uint64), 7, 50)
    assert g.dtype == np.float32 and np.isfinite(g).all()
    assert np.array_equal(g, gumbel_noise(np.arange(4000, dtype=np.uint64), 7, 50))
    assert not np.array_equal(g, gumbel_noise(np.arange(4000, dtype=np.uint64), 8, 50))
    assert abs(g.mean() - 0.5772) < 0.01 and abs(g.var() - math.pi ** 2 / 6) < 0.03


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1", True, None])
def test_bad_temperature_is_refused(bad):
    with pytest.raises(ValueError, match="E887"):
        check_temperature(bad)


@pytest.mark.parametrize("bad", [-1, 2 ** 63, 1.5, "0", True])
def test_bad_seed_is_refused(bad):
    with pytest.raises(ValueError, match="E888"):
        check_seed(bad)


def test_bad_search_is_refused(parser_nlp):
    with pytest.raises(ValueError, match="E890"):
        kbest_trees(parser_nlp, [_doc(parser_nlp, "yes")], 2, search="sampled")
    with pytest.raises(ValueError, match="E887"):
        kbest_trees(parser_nlp, [_doc(parser_nlp, "yes")], 2, search="sample", temperature=0)


def test_scores_once_per_context_equal_the_parsers_own(parser_nlp):
    """``_scores`` computes each distinct feature context once: the same numbers as the step
    model's ``predict`` on every state, duplicates and states part-way through included."""
    from spacy_punctgen.parsing.parser_samples import _scores

    parser = parser_nlp.get_pipe("parser")
    docs = _tagged(parser_nlp, [_doc(parser_nlp, t) for t in TEXTS])
    step_model = parser.model.predict(docs)
    try:
        states = [s.copy() for s in parser.moves.init_batch(docs) for _ in range(3)]
        for step in range(6):
            live = [s for s in states if not s.is_final()]
            if not live:
                break
            ours = _scores(step_model, live)
            theirs = np.array(step_model.predict(live), dtype=np.float32)
            assert ours.shape == theirs.shape and np.array_equal(ours, theirs)
            noisy = theirs + gumbel_noise(np.arange(len(live), dtype=np.uint64), step, theirs.shape[1])
            parser.transition_states(live, np.ascontiguousarray(noisy))
    finally:
        step_model.clear_memory()
