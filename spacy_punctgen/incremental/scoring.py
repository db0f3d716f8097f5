"""Unlabelled attachment scores of streams, for the incremental models and for any other parser of
the same streams (the cascade's spaCy parser), aligned to the same gold words.

Why one place: paper 003's tables put the UAS of CPP / UPP beside that of the shipped cascade's
parser, so both must be counted the same way: per word of the stream, against the projectivised
gold trees of the treebank's sentences (0-based heads through the stream, -1 for a sentence's
root), a root right when both trees make the word a root; ``uas`` over all words,
``uas_nonroot`` over the words that have a gold head.  Neither tree is re-segmented: the gold's
roots are its sentences', the prediction's are wherever the system put them (the incremental
models after each full stop, a spaCy parser at its own sentence starts).

A spaCy parse of a stream has tokens, not the stream's words: :func:`align_tokens` maps the
tokens of a parse of ``" ".join(words)`` back to the words by their character offsets, and gives
each word the head of its *head token*, the first of its tokens whose head lies outside the word
(the word's root token when a tokenizer splits it, ``e - mail``), as the word of that head.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Dict, List, Sequence, Tuple

from spacy_punctgen.errors import Errors


def align_tokens(words: Sequence[str], token_starts: Sequence[int], token_heads: Sequence[int]
                 ) -> Tuple[List[int], List[int]]:
    """``(heads, head_tokens)``: each word's head word (-1: a root) and its head token, from the
    tokens of a parse of ``" ".join(words)``: ``token_starts[t]`` is token ``t``'s character
    offset in that text, ``token_heads[t]`` the index of its head token (``t`` itself for a
    root), tokens in text order."""
    if len(token_starts) != len(token_heads):
        raise ValueError(Errors.E936.format(problem=f"{len(token_starts)} token offsets but "
                                                    f"{len(token_heads)} heads"))
    starts, pos = [], 0
    for w in words:
        starts.append(pos)
        pos += len(w) + 1
    owner = []
    for t, c in enumerate(token_starts):
        if not 0 <= c < pos - 1 or (t and c <= token_starts[t - 1]):
            raise ValueError(Errors.E936.format(problem=f"token {t} starts at character {c}, outside the text "
                                                        f"or not after the token before it"))
        owner.append(bisect_right(starts, c) - 1)
    tokens_of: List[List[int]] = [[] for _ in words]
    for t, j in enumerate(owner):
        tokens_of[j].append(t)
    for h in token_heads:
        if not 0 <= h < len(token_heads):
            raise ValueError(Errors.E936.format(problem=f"head token {h} of {len(token_heads)} tokens"))
    heads, head_tokens = [], []
    for j, toks in enumerate(tokens_of):
        if not toks:
            raise ValueError(Errors.E936.format(problem=f"word {j} ({words[j]!r}) has no token"))
        mine = set(toks)
        top = next((t for t in toks if token_heads[t] == t or token_heads[t] not in mine), toks[0])
        head_tokens.append(top)
        heads.append(-1 if token_heads[top] == top or token_heads[top] in mine else owner[token_heads[top]])
    return heads, head_tokens


def attachment_scores(predicted: Sequence[Sequence[int]], gold: Sequence[Sequence[int]]) -> Dict[str, float]:
    """UAS of predicted head lists (one per stream) against the gold ones (see the module
    docstring): ``uas``, ``uas_nonroot``, and the counts."""
    if len(predicted) != len(gold):
        raise ValueError(Errors.E935.format(problem=f"{len(predicted)} predicted streams, {len(gold)} gold"))
    for k, (p, g) in enumerate(zip(predicted, gold)):
        if len(p) != len(g):
            raise ValueError(Errors.E935.format(problem=f"stream {k} has {len(p)} predicted heads, {len(g)} gold"))
    pairs = [(a, b) for p, g in zip(predicted, gold) for a, b in zip(p, g)]
    nonroot = [(a, b) for a, b in pairs if b >= 0]
    right = sum(a == b for a, b in pairs)
    right_nonroot = sum(a == b for a, b in nonroot)
    return {"uas": right / max(len(pairs), 1), "uas_nonroot": right_nonroot / max(len(nonroot), 1),
            "n_words": len(pairs), "n_nonroot": len(nonroot), "right": right, "right_nonroot": right_nonroot}
