"""docs/model.md's hand-built English example: the best underlying tree is Nunberg's."""
import math

import numpy as np

from spacy_punctgen.inference.dp import ABSORB_LEFT, KEEP, TRANSPOSE, Grammar, build_lattice, inside_outside, viterbi

SYMS = ["^", "<unk>", ",", ".", "“", "”"]
S = {s: i for i, s in enumerate(SYMS)}
PMS = [(), (S[","],), (S["."],), (S["“"],), (S["”"],)]
PM = {(): 0, ",": 1, ".": 2, "“": 3, "”": 4}

# Hail(0) the(1) king(2) Arthur(3) Pendragon(4) who(5) wields(6) Excalibur(7)
HEADS = [-1, 2, 0, 2, 3, 6, 2, 6]
RELS = ["root", "det", "obj", "appos", "flat", "nsubj", "acl", "obj"]
SURFACE = [["^"], [], [], [","], [], [","], [], ["“"], [".", "”"]]


def channel():
    """Mostly keep; absorb ',' into a pending ',' or '.'; transpose '.' past '”' (read right to left)."""
    phi = np.full((len(SYMS), len(SYMS), 4), 0.01)
    phi[..., KEEP] = 0.97
    for a, b, e in [(",", ",", ABSORB_LEFT), (".", ",", ABSORB_LEFT), (".", "”", TRANSPOSE)]:
        phi[S[a], S[b]] = 0.03 / 3
        phi[S[a], S[b], e] = 0.97
    return phi / phi.sum(-1, keepdims=True)


def pairs_and_probs(rel):
    if rel in ("appos", "acl"):  # non-restrictive modifiers like commas on both sides
        pairs = [((), ()), (",", ","), (",", ()), ((), ",")]
        probs = [0.2, 0.6, 0.1, 0.1]
    elif rel == "root":
        pairs, probs = [((), ()), ((), ".")], [0.3, 0.7]
    elif rel == "obj":
        pairs = [((), ()), ("“", "”"), ("“", ()), ((), "”")]
        probs = [0.7, 0.2, 0.05, 0.05]
    else:
        pairs, probs = [((), ()), (",", ())], [0.9, 0.1]
    return np.array([(PM[l], PM[r]) for l, r in pairs]), np.array(probs)


def test_best_underlying_tree_is_nunbergs():
    g = Grammar(len(SYMS), PMS)
    slots = [[S[t] for t in x] for x in SURFACE]
    cands, probs = zip(*(pairs_and_probs(r) for r in RELS))
    lat = build_lattice(g, HEADS, slots, list(cands))
    cand_p = np.array([probs[w][r] for w, r in zip(lat.cand_node, lat.cand_row)])
    phi = channel()
    res = inside_outside(lat, g, cand_p, phi, r2l=True)
    assert res.logZ > -math.inf
    logbest, best = viterbi(lat, g, cand_p, phi, r2l=True)
    chosen = {w: (PMS[lat.cand_l[c]], PMS[lat.cand_r[c]]) for w, c in enumerate(best)}
    comma, quote_l, quote_r, period = (S[","],), (S["“"],), (S["”"],), (S["."],)
    assert chosen[3] == (comma, comma)  # [, Arthur Pendragon ,]
    assert chosen[6] == (comma, comma)  # [, who wields “Excalibur” ,]
    assert chosen[7] == (quote_l, quote_r)  # [“ Excalibur ”]
    assert chosen[0] == ((), period)  # Hail … .
    # the left-to-right channel cannot move '.' inside '”' as cheaply: R2L explains it better
    assert inside_outside(lat, g, cand_p, phi, r2l=False).logZ < res.logZ
