"""Deep trees for the tests of the DP's explicit stack (tests/inference/test_dp_deep_stack.py):
a right-branching chain of ``n`` words (``n`` levels deep) as a DP problem and as a sentence of
the toy model, and a digest of what the DP, the model's analysis and restoration make of it,
computed on the calling thread or in a thread with a small stack.

Run as ``python -m spacy_punctgen.testing.deep_chain N STACK_KB [RESTORE_N]``: prints one JSON
line, the digests on the main thread and in a thread of ``STACK_KB`` KB (a crash of the process,
signal 11, is what the C stack's recursion did before)."""
from __future__ import annotations

import hashlib
import json
import sys
import threading
from typing import Callable, Dict

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.inference.dp import Grammar, build_lattice, inside_outside, sample_posterior, viterbi
from spacy_punctgen.testing.problems import PUNCTEMES, random_phi

RELS = ["nsubj", "ccomp", "appos", "conj", "advmod"]


def chain_heads(n: int):
    """Word i heads word i + 1: every constituent ends at slot n, the tree is n levels deep."""
    return [-1] + list(range(n - 1))


def chain_problem(n: int, seed: int = 0, S: int = 4):
    """A DP problem on the chain: random single marks on a third of the slots, 8 candidate pairs
    per node (single marks on either side among them), random weights and channel."""
    rng = np.random.default_rng(seed)
    slots = [[0]] + [[int(s) for s in rng.integers(1, S, size=int(rng.random() < 0.3))] for _ in range(n)]
    cands = [np.array([(0, 0), (1, 0), (0, 1), (1, 1), (2, 2), (2, 0), (0, 2), (6, 0)]) for _ in range(n)]
    g = Grammar(S, PUNCTEMES)
    lat = build_lattice(g, chain_heads(n), slots, cands)
    p = rng.random(lat.n_candidates) * 0.3 + 0.01
    return g, lat, p, random_phi(rng, S), rng.standard_normal(lat.n_candidates)


def chain_sentence(n: int, slots=None) -> PunctSentence:
    heads = chain_heads(n)
    return PunctSentence(words=["w"] * n, upos=["NOUN"] * n, xpos=["_"] * n,
                         deprels=["root" if h < 0 else RELS[i % 5] for i, h in enumerate(heads)],
                         heads=heads, slots=list(slots) if slots is not None else [()] * (n + 1))


def punctuated_chain(model, n: int, seed: int = 1) -> PunctSentence:
    """The chain with punctuation drawn from ``model`` (so ``p(x|T) > 0``), its last slot, where
    all n constituents end, left empty (else its string holds hundreds of marks)."""
    from spacy_punctgen.decode.mbr import sample_punctuation

    (x,) = sample_punctuation(model, chain_sentence(n), n_samples=1, seed=seed)
    return chain_sentence(n, [tuple(s) for s in x[:-1]] + [()])


def _hash(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes() if isinstance(a, np.ndarray) else repr(a).encode())
    return h.hexdigest()[:16]


def digests(n: int, restore_n: int) -> Dict[str, object]:
    """What the DP (both directions), the toy model's analysis of the punctuated chain and its
    restoration of a ``restore_n``-word chain give, as short hashes and a few figures."""
    from spacy_punctgen.decode.mbr import restore_sentence
    from spacy_punctgen.testing.toy import toy_model

    out: Dict[str, object] = {}
    g, lat, p, phi, tilt = chain_problem(n)
    for r2l in (False, True):
        res = inside_outside(lat, g, p, phi, r2l, tilt=tilt)
        best = viterbi(lat, g, p, phi, r2l)
        draws = sample_posterior(lat, g, p, phi, r2l, 3, seed=0)
        out[f"dp_{int(r2l)}"] = [float(res.logZ), _hash(res.mu, res.counts, res.dmu, res.dcounts, best[1],
                                                        draws)]
    model = toy_model("r2l")
    sent = punctuated_chain(model, n)
    (pairs, logp), = model.analyze([sent])
    out["analysis"] = [pairs is not None, float(logp), _hash(pairs), float(model.log_prob(sent))]
    out["restore"] = _hash([(c.surface, c.prob) for c in restore_sentence(model, chain_sentence(restore_n))])
    return out


def in_thread(fn: Callable[[], object], stack_kb: int) -> object:
    """``fn()`` in a thread with a stack of ``stack_kb`` KB (the process's default restored after)."""
    got = {}
    old = threading.stack_size(stack_kb * 1024)
    try:
        t = threading.Thread(target=lambda: got.update(value=fn()))
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    return got["value"]


if __name__ == "__main__":
    n, stack_kb = int(sys.argv[1]), int(sys.argv[2])
    restore_n = int(sys.argv[3]) if len(sys.argv) > 3 else n
    thread = in_thread(lambda: digests(n, restore_n), stack_kb)
    print(json.dumps({"thread": thread, "main": digests(n, restore_n)}))
