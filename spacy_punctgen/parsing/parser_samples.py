"""Trees drawn from ONE spaCy parser's own transition probabilities, its greedy parse first.

Why: restoration from a mixture of trees beats restoration from one tree, but separately trained
parsers cost one parse each, and a beam's analyses are near-duplicates of its best one.  A
transition-based parser defines a distribution over trees: at every step it scores the moves, and
``softmax(scores / T)`` over the moves valid in the state is the probability of the next move
(``T`` a temperature; 1 is the parser's own distribution).  Drawing a move at every step draws a
whole tree.  The draws share what costs most: the token vectors and the precomputed hidden layer
of the batch are computed once (``parser.model.predict(docs)``), and the greedy state and the
``k - 1`` drawn states step through the batch together.

A draw uses the Gumbel-max trick: the argmax over the valid moves of ``scores / T + G`` (``G``
independent standard Gumbel variables) is distributed as ``softmax(scores / T)`` over the valid
moves, and spaCy's own ``transition_states`` takes exactly that argmax (invalid moves are never
chosen), so the transition system's rules stay spaCy's.  The noise is a function of the seed,
the Doc's words, the draw and the step (a counter-based hash, :func:`gumbel_noise`), not of the
batch, so a Doc gets the same trees in any batch and in any process.
"""
from __future__ import annotations

import math
from typing import List, Sequence

import numpy as np
from spacy.attrs import ORTH
from spacy.tokens import Doc

from spacy_punctgen.errors import Errors

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise on ``uint64`` (multiplication wraps modulo 2**64)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> _S30)) * _M1
        x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


def check_temperature(temperature) -> float:
    """``temperature`` as a finite float above 0 (E887 otherwise)."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or \
            not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(Errors.E887.format(value=temperature))
    return float(temperature)


def check_seed(seed) -> int:
    """``seed`` as an int from 0 to 2**63 - 1 (E888 otherwise)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2 ** 63:
        raise ValueError(Errors.E888.format(value=seed))
    return int(seed)


def draw_keys(docs: Sequence[Doc], n_draws: int, seed: int) -> np.ndarray:
    """``(len(docs), n_draws)`` uint64 keys, one per Doc and draw: a hash of the seed, the Doc's
    words (their ``orth`` ids and positions) and the draw's index."""
    with np.errstate(over="ignore"):
        seed_key = mix64(np.uint64(seed) + _GOLDEN)
        draws = mix64(np.arange(1, n_draws + 1, dtype=np.uint64) * _GOLDEN)
    out = np.empty((len(docs), n_draws), dtype=np.uint64)
    for d, doc in enumerate(docs):
        orth = doc.to_array(ORTH).astype(np.uint64)
        positions = mix64(np.arange(1, len(doc) + 1, dtype=np.uint64) ^ seed_key)
        words = np.bitwise_xor.reduce(mix64(orth ^ positions)) if len(doc) else np.uint64(0)
        out[d] = mix64(draws ^ mix64(words ^ seed_key ^ np.uint64(len(doc))))
    return out


def gumbel_noise(keys: np.ndarray, step: int, n_moves: int) -> np.ndarray:
    """``(len(keys), n_moves)`` float32 standard Gumbel variables, a pure function of each key, the
    step and the move (uniforms from 53 bits of the hash, strictly inside (0, 1))."""
    with np.errstate(over="ignore"):
        cols = mix64(np.uint64(step + 1) * _GOLDEN ^ mix64(np.arange(n_moves, dtype=np.uint64) + _M2))
    x = mix64(np.asarray(keys, dtype=np.uint64)[:, None] ^ cols[None, :])
    u = ((x >> _S11).astype(np.float64) + 0.5) * (1.0 / 2 ** 53)
    return (-np.log(-np.log(u))).astype(np.float32)


def tree_of_state(state, strings) -> List[tuple]:
    """The arcs of a final parser state as ``(head, child, label)`` (the beam parses' form)."""
    return [(arc["head"], arc["child"], strings[arc["label"]]) for arc in state.arcs]


def _scores(step_model, live: list) -> np.ndarray:
    """The parser's scores of the live states, ``step_model.predict(live)`` as a float32 array,
    computed once per distinct feature context: draws that followed the same moves (most of them:
    the parser is usually sure) read the same token features, hence get the same scores.  Falls
    back to ``predict`` where the step model is not spaCy 3.8's ``ParserStepModel``."""
    parts = ("get_token_ids", "state2vec", "vec2scores", "_class_mask")
    if not all(hasattr(step_model, p) for p in parts) or "has_upper" not in step_model.attrs:
        return np.array(step_model.predict(live), dtype=np.float32)
    ids = step_model.get_token_ids(live)
    rows = np.ascontiguousarray(ids).view(np.dtype((np.void, ids.dtype.itemsize * ids.shape[1])))[:, 0]
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    vector, _ = step_model.state2vec(ids[first], False)
    if step_model.attrs["has_upper"]:
        scores, _ = step_model.vec2scores(vector, False)
    else:
        scores = vector
    scores = np.array(scores, dtype=np.float32)
    unseen = step_model._class_mask == 0
    if unseen.any():
        scores[:, unseen] = np.nanmin(scores)  # as spaCy's step_forward: unseen classes score lowest
    return scores[inverse.reshape(-1)]


def sample_states(parser, docs: Sequence[Doc], k: int, temperature: float = 1.0, seed: int = 0) -> List[list]:
    """Per Doc, ``k`` final parser states: the greedy parse, then ``k - 1`` draws from the parser's
    transition probabilities at ``temperature`` (module docstring).  Sentence starts already set on
    the Docs are respected, as the greedy parser respects them."""
    temperature, seed = check_temperature(temperature), check_seed(seed)
    docs = list(docs)
    if not docs:
        return []
    parser._ensure_labels_are_added(docs)
    base = parser.moves.init_batch(docs)
    states = [s.copy() if j else s for s in base for j in range(k)]  # copies keep the batch offset
    if not any(len(doc) for doc in docs):
        return [states[d * k:(d + 1) * k] for d in range(len(docs))]
    keys = np.zeros(len(states), dtype=np.uint64)
    drawn = np.zeros(len(states), dtype=bool)
    keys.reshape(len(docs), k)[:, 1:] = draw_keys(docs, k - 1, seed)  # state d * k + j: Doc d's draw j
    drawn.reshape(len(docs), k)[:, 1:] = True
    step_model = parser.model.predict(docs)
    try:
        todo = np.array([i for i, s in enumerate(states) if not s.is_final()], dtype=np.int64)
        limit = 4 * max(len(doc) for doc in docs) + 8  # arc-eager needs at most 2n moves
        step = 0
        while len(todo):
            if step > limit:
                raise RuntimeError(Errors.E889.format(limit=limit))
            live = [states[i] for i in todo]
            scores = _scores(step_model, live)
            rows = np.flatnonzero(drawn[todo])
            if len(rows):
                scores[rows] = scores[rows] / np.float32(temperature) + gumbel_noise(keys[todo[rows]], step,
                                                                                     scores.shape[1])
            parser.transition_states(live, np.ascontiguousarray(scores))
            todo = todo[[not s.is_final() for s in live]]
            step += 1
    finally:
        step_model.clear_memory()
    return [states[d * k:(d + 1) * k] for d in range(len(docs))]

