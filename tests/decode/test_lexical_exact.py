"""decode/lexical.py's per-slot decoder (Python lists, cached edit distances) against its plain
NumPy formulation, written out here as the reference: the same choices and the same
probabilities, bit for bit, on random slots and evidence."""
import numpy as np
import pytest

from spacy_punctgen.decode.lexical import combine_slot, lexical_choices, mbr_choice
from spacy_punctgen.decode.marginal import EXACT_CANDIDATES, EXACT_SUPPORT_MIN
from spacy_punctgen.decode.risk import SlotChoice, mbr_index, risk_weights
from spacy_punctgen.model.lexical import CLASSES, mark_class


def reference_combine(marginal, q, weight):
    if q is None or weight == 0:
        return dict(marginal)
    strings = list(marginal)
    p = np.fromiter(marginal.values(), dtype=np.float64, count=len(strings))
    f = np.power(np.maximum(q, 1e-300), weight)[[CLASSES.index(mark_class(s)) for s in strings]]
    w = p * f
    total = w.sum()
    if not total > 0:
        return dict(marginal)
    w *= p.sum() / total
    order = np.argsort(-w, kind="stable")
    return {strings[j]: float(w[j]) for j in order}


def reference_choice(dist, empty_weight):
    strings = list(dist)
    support = [s for s in strings if dist[s] >= EXACT_SUPPORT_MIN] or strings[:1]
    weights = risk_weights(dist, support, empty_weight)
    candidates = strings[:EXACT_CANDIDATES]
    if all(len(s) <= 1 for s in support) and all(len(s) <= 1 for s in candidates):
        by = dict(zip(support, weights))
        best = max(range(len(candidates)), key=lambda j: (by.get(candidates[j], 0.0), -j))
    else:
        best = mbr_index(candidates, support, weights)
    return SlotChoice(candidates[best], float(dist[candidates[best]]))


def random_slot(rng, alphabet):
    k = int(rng.integers(1, 16))
    strings = {()}
    while len(strings) < k:
        strings.add(tuple(rng.choice(alphabet, size=int(rng.integers(1, 4)))))
    p = rng.dirichlet(np.ones(k) * 0.3) * float(rng.uniform(0.5, 1.0))  # a pruned support's mass
    if rng.random() < 0.2:  # ties
        p = np.round(p, 1)
    p = np.maximum(p, 1e-6 * rng.random(k))
    return dict(sorted(zip(strings, p.tolist()), key=lambda kv: -kv[1]))


def same(a, b):
    return [(c.surface, c.prob.hex()) for c in a] == [(c.surface, c.prob.hex()) for c in b]


@pytest.mark.parametrize("seed", range(4))
def test_choices_equal_the_numpy_formulation_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    alphabet = [",", ".", "?", "!", ":", ";", "”", "“", "(", ")", "-", "…", "ABBR."]
    for _ in range(60):
        n = int(rng.integers(0, 25))
        marginals = [random_slot(rng, alphabet) for _ in range(n + 1)]
        probs = rng.lognormal(0.0, 2.0, size=(n, len(CLASSES)))
        if rng.random() < 0.2:
            probs[rng.random(probs.shape) < 0.3] = 0.0  # below the floor
        for weight in (0.0, 0.75, 1.0, 2.5):
            for ew in (1.0, 0.35):
                want = [reference_choice(reference_combine(m, None if i == 0 else probs[i - 1], weight), ew)
                        for i, m in enumerate(marginals)]
                assert same(lexical_choices(marginals, probs, weight, ew), want)
        for i in range(1, n + 1):
            got, want = combine_slot(marginals[i], probs[i - 1], 0.75, {}), reference_combine(marginals[i], probs[i - 1], 0.75)
            assert list(got) == list(want) and [v.hex() for v in got.values()] == [v.hex() for v in want.values()]
            assert same([mbr_choice(want, 0.5)], [reference_choice(want, 0.5)])


def test_no_evidence_is_punctgen_alone():
    rng = np.random.default_rng(9)
    marginals = [random_slot(rng, [",", ".", "”"]) for _ in range(6)]
    want = [reference_choice(m, 1.0) for m in marginals]
    assert same(lexical_choices(marginals, None, 1.0), want)


def test_an_empty_slot_is_refused():
    with pytest.raises(ValueError, match="E124"):
        mbr_choice({})
    with pytest.raises(ValueError, match="E124"):
        lexical_choices([{(): 1.0}, {}], np.ones((1, len(CLASSES))), 1.0)
