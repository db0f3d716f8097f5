"""ATTACH feature templates: what ``f(l, r, w)`` looks at (docs/model.md §2).

Why this shape: ``p_θ(l, r | w)`` is a softmax over *all* pairs ``W_d`` of the
node's relation ``d`` (about a hundred pairs per node in English), so scoring
must not materialise one sparse feature vector per (node, pair).  Every feature
is a conjunction of

* a **node context** ``c`` -- a string that describes the node ``w`` and does not
  depend on ``(l, r)``, for example ``conj|child=cc`` -- and
* a **pair property** ``π(l, r)`` -- a string that describes the candidate pair and
  does not depend on the node.

so that ``θ·f(l, r, w) = Σ_{c ∈ C(w)} Σ_k θ[c ⊗ π_k(l, r)]``.  The score of every
pair for one context is a gather from θ; the scores of a node are the sum of
its contexts' rows.  The paper's examples fit this form: ``N.,.,.conj`` is the
context ``conj|upos=NOUN`` conjoined with the pair property ``P=,|,``;
``C.ε.ε.!conj.cc`` is the context ``conj|child=cc`` with ``P=|``.

Node contexts (``d`` is the base relation ``conj`` of ``conj:pass``; every
relation-specific context starts with ``d|``, global ones with ``*|``):

====================  =========================================================
template              value (one context per node unless noted)
====================  =========================================================
``rel``               ``d`` (relation bias)
``full``              ``d|full=acl:relcl`` (only for relations with a subtype)
``upos``              ``d|upos=NOUN`` -- UPOS of ``w``'s head word (paper (a))
``dir``               ``d|dir=L`` / ``R`` / ``root``: ``w`` left or right of its parent
``dir_upos``          ``d|dir=L|upos=NOUN``
``parent``            ``d|prel=root|pupos=VERB``: parent's relation and UPOS (path to root, (b))
``grandparent``       ``d|prel=conj|pprel=root``: two steps toward the root
``depth``             ``d|depth=0..3+``
``child``             ``d|child=cc`` for each distinct child relation (paper (b); several)
``child_side``        ``d|child=cc|side=L`` for each distinct (relation, side) (several)
``nkids``             ``d|nkids=0/1/2/3/4+``
``sib``               ``d|lsib=nsubj`` and ``d|rsib=HEAD``: relation of the adjacent
                      sibling (``HEAD`` = the parent word, ``NONE`` = no neighbour) (2)
``flank``             ``d|lout=DET``, ``d|lin=NOUN``, ``d|rin=NOUN``, ``d|rout=VERB``:
                      UPOS of the words flanking the slots where ``l`` and ``r`` land,
                      ``BOS``/``EOS`` at the sentence edges (paper (c); 4)
``flank_out``         ``d|lout=DET|rout=VERB``
``edge``              ``d|edge=first/last/both/none``: does the constituent start at
                      slot 0 / end at slot n
``len``               ``d|len=1,2,3-4,5-8,9-16,17+`` (span length in words)
``word``              ``d|word=however`` -- head word form (rare words -> ``UNK``)
``span_words``        ``d|fword=``, ``d|lword=`` first/last word of the span (2)
``out_words``         ``d|pword=``, ``d|nword=`` word before / after the span (2)
``global``            ``*``, ``*|edge=..``, ``*|upos=..``: shared across relations (3)
``dist`` (opt.)       ``d|ldist=``, ``d|rdist=``: words before / after the span (buckets)
``len_upos`` (opt.)   ``d|upos=NOUN|len=3-4``
``kidset`` (opt.)     ``d|kids=cc+nsubj``: the set of child relations as one context
``neighbors`` (opt.)  ``d|nxt=conj|nupos=VERB``, ``d|nxtlen=5-8`` and ``d|prv=…``, ``d|prvlen=…``:
                      the outermost constituent on the other side of the r (l) slot
``inner`` (opt.)      ``d|nin=0..3+`` punctuated slots strictly inside the span (also with
                      ``|len=``), ``d|in=,`` for each punctuation token there, ``d|inL=``,
                      ``d|inR=``: the interior slots next to the boundaries (paper (d); see below)
``phead`` (opt.)      ``d|phword=`` parent's head word; ``d|prel=..|upos=..`` (2)
``word_dir`` (opt.)   ``d|word=..|dir=L``
``kid_words`` (opt.)  ``d|kw=case=的|side=R`` per child with a function relation (several)
``edge_upos`` (opt.)  ``d|lout=..|lin=..``, ``d|rin=..|rout=..`` (2)
``inner_rel`` (opt.)  ``d|inrel=advmod|L=,``: children whose boundary slot inside the span is
                      punctuated, with that slot's surface (like ``inner``, reads only x there)
``inner_upos`` (opt.) ``d|inpos=NOUN|,|VERB``: each punctuated interior slot with the UPOS on
                      both sides (at most 6; reads only x inside the span, like ``inner``)
``inner_side`` (opt.) ``d|hside=L|in=,`` (also with ``|upos=``): punctuated interior slots
                      left / right of w's head word (at most 6 slots; like ``inner``)
``inner_count`` (opt.) ``d|ninL=0..3+|ninR=0..3+`` (also with ``|upos=``): punctuated interior
                      slots left / right of w's head word
``global_words`` (opt.) ``*|word=``, ``*|fword=``, ``*|lword=``, ``*|pword=``, ``*|nword=``: the
                      words of ``word``, ``span_words`` and ``out_words`` shared across
                      relations, so they still apply when a parser gets the relation wrong (5)
``global_shapes`` (opt.) ``*|wshape=``, ``*|fshape=``, ``*|lshape=``, ``*|pshape=``, ``*|nshape=``:
                      spaCy's ``word_shape`` of the same five words (``Xx.``, ``dddd``), kept
                      for rare words too, so an unseen initial (hi ``जे``) still looks like one (5)
====================  =========================================================

Pair properties (``K = 4`` per pair; the strings use the puncteme tokens
themselves, so the features do not depend on inventory ids):

* ``P=l|r`` -- the pair itself;
* ``L=l`` and ``R=r`` -- each half alone;
* ``S=..`` -- the pair's *shape*: whether ``l`` / ``r`` is empty, and whether the pair
  is a mirror-image pair like ``( … )`` (``M``), unmatched (``U``, see
  :func:`is_unmatched`) or neither (``-``).

A feature is identified by the pair ``(hash(c), hash(π))`` of 64-bit
``blake2b`` hashes of its two strings (never Python's salted ``hash``), so
feature identities are the same in every process.  The model keeps an *exact*
dictionary: the sorted pairs of all features that fire on a *supported* (node,
pair) of the training data -- a pair whose non-empty halves land on non-empty
surface slots, the only ones the DP can ever give posterior mass (slot 0 always
holds ``^``).  Other features have no weight.  This is the usual "observed
features" restriction of CRF toolkits; the relation-bias context supports every
pair of ``W_d``, so every pair can still be pushed down.

The paper's template (d), "surface punctuation already added to w's
subconstituents", is the optional ``inner`` template.  It conditions ``w``'s pair
on the *observed* surface punctuation in the slots strictly inside ``w``'s span.
This keeps ``p(x|T)`` a proper distribution computed by the same DP: every
constituent with a boundary at an interior slot of ``span(w)`` is a proper
descendant of ``w``, so a bottom-up story (descendants' pairs, then the channel
on the interior slots, then ``w``'s pair) generates those slots before ``w``'s
pair.  The catch: with ``inner`` the prior ``p(T'|T)`` no longer factorises
over nodes independently of ``x`` -- sampling punctuation for an unpunctuated
tree (restoration) must then be ancestral, bottom-up.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from spacy.lang.lex_attrs import word_shape

from spacy_punctgen.data.inventory import PunctInventory, relation_key
from spacy_punctgen.data.trees import forest

# ---------------------------------------------------------------------------
# Symmetric marks (docs/model.md §4)

#: opening mark -> its closing mirror
OPEN_TO_CLOSE: Dict[str, str] = {
    "(": ")", "[": "]", "{": "}", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb",
    "\u2039": "\u203a", "\u00bf": "?", "\u00a1": "!", "\u300c": "\u300d", "\u300a": "\u300b",
    "\u300e": "\u300f", "\u3010": "\u3011", "\u3008": "\u3009", "\u3014": "\u3015",
    "\u3016": "\u3017", "\uff08": "\uff09", "\uff3b": "\uff3d", "\uff5b": "\uff5d",
    "``": "''",
}
#: closing marks that require their opener ("vice versa").  ``?`` and ``!`` are
#: excluded: they close ``¿``/``¡`` in Spanish but are ordinary terminal marks
#: everywhere, and counting every English question mark as unmatched would make
#: the posterior-regularisation term fight the data.
CLOSE_TO_OPEN: Dict[str, str] = {c: o for o, c in OPEN_TO_CLOSE.items() if c not in ("?", "!")}


def is_unmatched(l: Sequence[str], r: Sequence[str]) -> bool:
    """Does the pair hold an unmatched symmetric mark (docs/model.md §4)?

    ``l`` is read left-to-right (outermost first), ``r`` right-to-left (outermost
    first); position ``j`` of one faces position ``j`` of the other.  An opener
    in ``l`` must face its closing mirror, and a closer in ``r`` must face its
    opener.
    """
    rr = list(reversed(r))
    for j, a in enumerate(l):
        if a in OPEN_TO_CLOSE and (j >= len(rr) or rr[j] != OPEN_TO_CLOSE[a]):
            return True
    for j, b in enumerate(rr):
        if b in CLOSE_TO_OPEN and (j >= len(l) or l[j] != CLOSE_TO_OPEN[b]):
            return True
    return False


def is_mirror(l: Sequence[str], r: Sequence[str]) -> bool:
    """Non-empty ``l`` and ``r`` where ``r`` is ``l``'s mirror image, e.g. ``( … )``, ``“ ( … ) ”``."""
    if not l or len(l) != len(r):
        return False
    return all(OPEN_TO_CLOSE.get(a) == b for a, b in zip(l, reversed(r)))


# ---------------------------------------------------------------------------
# Hashing

def stable_hash(text: str) -> int:
    """A 64-bit hash of a string that is identical in every process and platform."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


# ---------------------------------------------------------------------------
# Templates

ALL_TEMPLATES: Tuple[str, ...] = (
    "rel", "full", "upos", "dir", "dir_upos", "parent", "grandparent", "depth", "child",
    "child_side", "nkids", "sib", "flank", "flank_out", "edge", "len", "word", "span_words",
    "out_words", "global", "dist", "len_upos", "kidset", "neighbors", "inner",
    "phead", "word_dir", "kid_words", "edge_upos", "inner_rel", "inner_upos",
    "inner_side", "inner_count", "global_words", "edge_bigrams", "global_shapes",
)
#: the templates on by default (the first twenty; everything after ``global`` is an
#: optional extra, see docs/features.md)
DEFAULT_TEMPLATES: Tuple[str, ...] = ALL_TEMPLATES[:ALL_TEMPLATES.index("global") + 1]
#: child relations whose (function) word ``kid_words`` names: in Chinese the marker,
#: coordinator or adposition often decides the punctuation around the constituent
FUNCTION_RELATIONS = frozenset({"mark", "cc", "case", "aux", "cop", "advmod", "discourse",
                                "det", "clf", "dep"})
#: templates that look at the observed surface punctuation inside the constituent
SURFACE_TEMPLATES = frozenset({"inner", "inner_rel", "inner_upos", "inner_side", "inner_count"})
# templates that read the words (rare ones UNK), mapped once per sentence
_WORD_TEMPLATES = frozenset({"word", "span_words", "out_words", "phead", "word_dir", "kid_words",
                             "global_words", "edge_bigrams"})
# templates that read the list of punctuated interior slots (built once per node)
_INNER_SLOT_TEMPLATES = frozenset({"inner_upos", "inner_side", "inner_count"})
PAIR_PROPERTIES: Tuple[str, ...] = ("pair", "l", "r", "shape")


@dataclass
class FeatureConfig:
    """Which node-context templates and pair properties are on (see the module docstring)."""

    templates: List[str] = field(default_factory=lambda: list(DEFAULT_TEMPLATES))
    properties: List[str] = field(default_factory=lambda: list(PAIR_PROPERTIES))

    def __post_init__(self):
        bad = [t for t in self.templates if t not in ALL_TEMPLATES]
        if bad:
            raise ValueError(f"unknown feature template(s) {bad}; known: {list(ALL_TEMPLATES)}")
        bad = [p for p in self.properties if p not in PAIR_PROPERTIES]
        if bad or not self.properties:
            raise ValueError(f"pair properties must be a non-empty subset of {list(PAIR_PROPERTIES)}")
        if "rel" not in self.templates:
            raise ValueError("the 'rel' template is required (it supports every pair of W_d)")

    def to_dict(self) -> dict:
        return {"templates": list(self.templates), "properties": list(self.properties)}

    @classmethod
    def from_dict(cls, data: dict) -> "FeatureConfig":
        return cls(templates=list(data["templates"]), properties=list(data["properties"]))


def _len_bucket(k: int) -> str:
    if k <= 2:
        return str(k)
    if k <= 4:
        return "3-4"
    if k <= 8:
        return "5-8"
    if k <= 16:
        return "9-16"
    return "17+"


def node_contexts(sentence, inventory: PunctInventory, templates: Sequence[str]) -> List[List[str]]:
    """The context strings of every node of one :class:`PunctSentence` (see the docstring table)."""
    heads = list(sentence.heads)
    n = len(heads)
    fo = forest(heads)
    children, roots, lo, hi, depth = fo.children, fo.roots, fo.first, fo.last, fo.depth
    upos = list(sentence.upos)
    full = [d.lower() for d in sentence.deprels]
    base = [relation_key(d) for d in full]
    tset = set(templates)
    words = [inventory.word(w) for w in sentence.words] if tset & _WORD_TEMPLATES else None
    shapes = [word_shape(w) for w in sentence.words] if "global_shapes" in tset else None
    if "neighbors" in tset:  # outermost constituent starting / ending at each word
        start_at: List[int] = [-1] * n
        end_at: List[int] = [-1] * n
        for v in range(n):
            if start_at[lo[v]] < 0 or depth[v] < depth[start_at[lo[v]]]:
                start_at[lo[v]] = v
            if end_at[hi[v]] < 0 or depth[v] < depth[end_at[hi[v]]]:
                end_at[hi[v]] = v
    out: List[List[str]] = []
    for w in range(n):
        d = base[w]
        h = heads[w]
        ctx = [d]
        if "full" in tset and full[w] != d:
            ctx.append(f"{d}|full={full[w]}")
        if "upos" in tset:
            ctx.append(f"{d}|upos={upos[w]}")
        side = "root" if h < 0 else ("L" if w < h else "R")
        if "dir" in tset:
            ctx.append(f"{d}|dir={side}")
        if "dir_upos" in tset:
            ctx.append(f"{d}|dir={side}|upos={upos[w]}")
        prel = base[h] if h >= 0 else "ROOT"
        if "parent" in tset:
            pupos = upos[h] if h >= 0 else "ROOT"
            ctx.append(f"{d}|prel={prel}|pupos={pupos}")
        if "grandparent" in tset:
            g = heads[h] if h >= 0 else -1
            pprel = base[g] if g >= 0 else "ROOT"
            ctx.append(f"{d}|prel={prel}|pprel={pprel}")
        if "depth" in tset:
            ctx.append(f"{d}|depth={min(depth[w], 3)}")
        kids = children[w]
        if "child" in tset:
            for rel in sorted({base[c] for c in kids}):
                ctx.append(f"{d}|child={rel}")
        if "child_side" in tset:
            for rel, s in sorted({(base[c], "L" if c < w else "R") for c in kids}):
                ctx.append(f"{d}|child={rel}|side={s}")
        if "nkids" in tset:
            ctx.append(f"{d}|nkids={min(len(kids), 4)}")
        if "sib" in tset:
            group = sorted(children[h] + [h]) if h >= 0 else roots
            k = group.index(w)
            left = group[k - 1] if k > 0 else None
            right = group[k + 1] if k + 1 < len(group) else None
            ls = "NONE" if left is None else ("HEAD" if left == h else base[left])
            rs = "NONE" if right is None else ("HEAD" if right == h else base[right])
            ctx.append(f"{d}|lsib={ls}")
            ctx.append(f"{d}|rsib={rs}")
        a, b = lo[w], hi[w]
        lout = upos[a - 1] if a > 0 else "BOS"
        rout = upos[b + 1] if b + 1 < n else "EOS"
        if "flank" in tset:
            ctx.append(f"{d}|lout={lout}")
            ctx.append(f"{d}|lin={upos[a]}")
            ctx.append(f"{d}|rin={upos[b]}")
            ctx.append(f"{d}|rout={rout}")
        if "flank_out" in tset:
            ctx.append(f"{d}|lout={lout}|rout={rout}")
        edge = {(True, True): "both", (True, False): "first", (False, True): "last",
                (False, False): "none"}[(a == 0, b == n - 1)]
        if "edge" in tset:
            ctx.append(f"{d}|edge={edge}")
        if "len" in tset:
            ctx.append(f"{d}|len={_len_bucket(b - a + 1)}")
        if "dist" in tset:
            ctx.append(f"{d}|ldist={_len_bucket(a)}")
            ctx.append(f"{d}|rdist={_len_bucket(n - 1 - b)}")
        if "len_upos" in tset:
            ctx.append(f"{d}|upos={upos[w]}|len={_len_bucket(b - a + 1)}")
        if "neighbors" in tset:
            # no constituent starts (ends) there when the next (previous) word heads w's span
            if b + 1 >= n:
                ctx.append(f"{d}|nxt=EOS")
            elif start_at[b + 1] < 0:
                ctx.append(f"{d}|nxt=HEAD|nupos={upos[b + 1]}")
            else:
                v = start_at[b + 1]
                ctx.append(f"{d}|nxt={base[v]}|nupos={upos[v]}")
                ctx.append(f"{d}|nxtlen={_len_bucket(hi[v] - lo[v] + 1)}")
            if a == 0:
                ctx.append(f"{d}|prv=BOS")
            elif end_at[a - 1] < 0:
                ctx.append(f"{d}|prv=HEAD|pupos={upos[a - 1]}")
            else:
                v = end_at[a - 1]
                ctx.append(f"{d}|prv={base[v]}|pupos={upos[v]}")
                ctx.append(f"{d}|prvlen={_len_bucket(hi[v] - lo[v] + 1)}")
        if "inner" in tset:
            # surface punctuation strictly inside the span (slots a+1..b): generated by w's
            # descendants before w's own pair in a bottom-up story (paper's template (d))
            inner = [sentence.slots[j] for j in range(a + 1, b + 1)]
            filled = [x for x in inner if x]
            nin = min(len(filled), 3)
            ctx.append(f"{d}|nin={nin}")
            ctx.append(f"{d}|nin={nin}|len={_len_bucket(b - a + 1)}")
            for tok in sorted({t for x in filled for t in x})[:6]:
                ctx.append(f"{d}|in={tok}")
            if b > a:  # the interior slots next to the boundaries (after the first word,
                # before the last word)
                ctx.append(f"{d}|inL={' '.join(sentence.slots[a + 1]) or '_'}")
                ctx.append(f"{d}|inR={' '.join(sentence.slots[b]) or '_'}")
        if "inner_rel" in tset:
            # which children's boundaries carry the interior punctuation (observed slots
            # a+1..b only, as for ``inner``): a child's pair lands at lo[c] and hi[c]+1
            marks = set()
            for c in kids:
                for j, s in ((lo[c], "L"), (hi[c] + 1, "R")):
                    if a < j <= b and sentence.slots[j]:
                        marks.add(f"{d}|inrel={base[c]}|{s}={' '.join(sentence.slots[j])}")
            ctx.extend(sorted(marks)[:6])
        if tset & _INNER_SLOT_TEMPLATES:
            # the punctuated interior slots (a+1..b, as for ``inner``) and their strings
            punct_in = [(j, " ".join(sentence.slots[j])) for j in range(a + 1, b + 1) if sentence.slots[j]]
        if "inner_upos" in tset:
            # each punctuated interior slot with the UPOS of the words on both sides of it
            ctx.extend(sorted({f"{d}|inpos={upos[j - 1]}|{x}|{upos[j]}" for j, x in punct_in})[:6])
        if "inner_side" in tset:
            # each punctuated interior slot with its side of w's head word (slot j precedes
            # word j), alone and with w's UPOS
            sides = sorted({(("L" if j <= w else "R"), x) for j, x in punct_in})[:6]
            for sd, x in sides:
                ctx.append(f"{d}|hside={sd}|in={x}")
                ctx.append(f"{d}|hside={sd}|in={x}|upos={upos[w]}")
        if "inner_count" in tset:
            # how many interior slots are punctuated on each side of w's head word
            nl = sum(1 for j, _ in punct_in if j <= w)
            nr = len(punct_in) - nl
            ctx.append(f"{d}|ninL={min(nl, 3)}|ninR={min(nr, 3)}")
            ctx.append(f"{d}|ninL={min(nl, 3)}|ninR={min(nr, 3)}|upos={upos[w]}")
        if "kidset" in tset:
            ctx.append(f"{d}|kids=" + "+".join(sorted({base[c] for c in kids})))
        if "phead" in tset:
            ctx.append(f"{d}|phword={words[h] if h >= 0 else 'ROOT'}")
            ctx.append(f"{d}|prel={prel}|upos={upos[w]}")
        if "word_dir" in tset:
            ctx.append(f"{d}|word={words[w]}|dir={side}")
        if "kid_words" in tset:
            for c in sorted({c for c in kids if base[c] in FUNCTION_RELATIONS}):
                ctx.append(f"{d}|kw={base[c]}={words[c]}|side={'L' if c < w else 'R'}")
        if "edge_upos" in tset:
            ctx.append(f"{d}|lout={lout}|lin={upos[a]}")
            ctx.append(f"{d}|rin={upos[b]}|rout={rout}")
        if "word" in tset:
            ctx.append(f"{d}|word={words[w]}")
        if "span_words" in tset:
            ctx.append(f"{d}|fword={words[a]}")
            ctx.append(f"{d}|lword={words[b]}")
        if words is not None:  # the words just outside the span (out_words, global_words)
            pword = words[a - 1] if a > 0 else "BOS"
            nword = words[b + 1] if b + 1 < n else "EOS"
        if "out_words" in tset:
            ctx.append(f"{d}|pword={pword}")
            ctx.append(f"{d}|nword={nword}")
        if "global" in tset:
            ctx.append("*")
            ctx.append(f"*|edge={edge}")
            ctx.append(f"*|upos={upos[w]}")
        if "global_words" in tset:
            ctx.append(f"*|word={words[w]}")
            ctx.append(f"*|fword={words[a]}")
            ctx.append(f"*|lword={words[b]}")
            ctx.append(f"*|pword={pword}")
            ctx.append(f"*|nword={nword}")
        if "edge_bigrams" in tset:
            # the two words on either side of each boundary slot, as one context: fixed
            # compounds (hi "बात-चीत") and names before an acronym in brackets
            ctx.append(f"*|lbi={pword}+{words[a]}")
            ctx.append(f"*|rbi={words[b]}+{nword}")
        if shapes is not None:
            ctx.append(f"*|wshape={shapes[w]}")
            ctx.append(f"*|fshape={shapes[a]}")
            ctx.append(f"*|lshape={shapes[b]}")
            ctx.append(f"*|pshape={shapes[a - 1] if a > 0 else 'BOS'}")
            ctx.append(f"*|nshape={shapes[b + 1] if b + 1 < n else 'EOS'}")
        out.append(ctx)
    return out


def pair_property_strings(l: Sequence[str], r: Sequence[str], properties: Sequence[str]) -> List[str]:
    """The pair-side property strings of one ``(l, r)`` (tokens joined by a space)."""
    ls, rs = " ".join(l), " ".join(r)
    out = []
    for p in properties:
        if p == "pair":
            out.append(f"P={ls}|{rs}")
        elif p == "l":
            out.append(f"L={ls}")
        elif p == "r":
            out.append(f"R={rs}")
        elif p == "shape":
            kind = "M" if is_mirror(l, r) else ("U" if is_unmatched(l, r) else "-")
            out.append(f"S={int(bool(l))}{int(bool(r))}{kind}")
    return out


@dataclass
class RelationTable:
    """Everything about one relation's allowed pairs ``W_d`` that does not depend on θ.

    The ``K`` property strings of all pairs take ``V`` distinct values (*columns*,
    sorted by hash); pair ``p`` has the values ``pair_cols[p]``, so the pair scores
    of one context with column weights ``t`` are ``t[pair_cols].sum(-1)``.
    """

    rel: str
    pairs: np.ndarray  # int64 (P, 2) puncteme ids, as given by the inventory
    prop_hash: np.ndarray  # uint64 (P, K)
    col_hash: np.ndarray  # uint64 (V,), sorted
    pair_cols: np.ndarray  # int64 (P, K): the columns of each pair's K property values
    unmatched: np.ndarray  # float64 (P,): 1.0 where the pair holds an unmatched mark

    @property
    def size(self) -> int:
        return int(self.pairs.shape[0])

    @property
    def n_cols(self) -> int:
        return int(self.col_hash.shape[0])


class FeatureExtractor:
    """Interns node contexts and relation tables for one inventory and config.

    Context *units* are (relation, context string) pairs: the same global
    context ``*|edge=last`` under two relations scores different pair sets, so
    it gets two units sharing one hash (and therefore sharing weights).
    """

    def __init__(self, inventory: PunctInventory, config: Optional[FeatureConfig] = None):
        self.inventory = inventory
        self.config = config or FeatureConfig()
        self.rel_ids: Dict[str, int] = {}
        self.rel_tables: List[RelationTable] = []
        self._unit_ids: Dict[Tuple[int, str], int] = {}
        self._unit_rel: List[int] = []
        self._unit_hash: List[int] = []
        self._unit_str: List[str] = []
        self._hash_cache: Dict[str, int] = {}

    # -- relations -----------------------------------------------------------
    def relation_id(self, deprel: str) -> int:
        """Id of the relation table used for a node with this (full) deprel."""
        cache = self.__dict__.setdefault("_rel_of_deprel", {})
        rid = cache.get(deprel)
        if rid is not None:
            return rid
        pairs = self.inventory.pairs_for(deprel)
        key = relation_key(deprel)
        if key not in self.inventory.pairs:
            key = "<unseen>"  # pairs_for backs off to the union of all pairs
        rid = self.rel_ids.get(key)
        if rid is None:
            rid = len(self.rel_tables)
            self.rel_ids[key] = rid
            self.rel_tables.append(self._make_table(key, pairs))
        cache[deprel] = rid
        return rid

    def _make_table(self, key: str, pairs: Sequence[Tuple[int, int]]) -> RelationTable:
        pm = self.inventory.punctemes
        arr = np.array(sorted(set(map(tuple, pairs)) | {(0, 0)}), dtype=np.int64).reshape(-1, 2)
        props = [pair_property_strings(pm[l], pm[r], self.config.properties) for l, r in arr]
        ph = np.array([[self._hash(s) for s in row] for row in props], dtype=np.uint64)
        cols = np.unique(ph)
        pair_cols = np.searchsorted(cols, ph).astype(np.int64)
        unm = np.array([is_unmatched(pm[l], pm[r]) for l, r in arr], dtype=np.float64)
        return RelationTable(key, arr, ph, cols, pair_cols, unm)

    def _hash(self, s: str) -> int:
        h = self._hash_cache.get(s)
        if h is None:
            h = self._hash_cache[s] = stable_hash(s)
        return h

    # -- contexts ------------------------------------------------------------
    def unit_id(self, rel_id: int, context: str) -> int:
        key = (rel_id, context)
        uid = self._unit_ids.get(key)
        if uid is None:
            uid = len(self._unit_rel)
            self._unit_ids[key] = uid
            self._unit_rel.append(rel_id)
            self._unit_hash.append(self._hash(context))
            self._unit_str.append(context)
        return uid

    @property
    def n_units(self) -> int:
        return len(self._unit_rel)

    def _unit_arrays(self) -> Tuple[np.ndarray, np.ndarray]:
        """The units' hashes and relations as arrays (rebuilt only after new units)."""
        cached = self.__dict__.get("_unit_arr")
        if cached is None or cached[0].size != len(self._unit_hash):
            cached = self._unit_arr = (np.array(self._unit_hash, dtype=np.uint64),
                                       np.array(self._unit_rel, dtype=np.int64))
        return cached

    def unit_hashes(self, uids: np.ndarray) -> np.ndarray:
        return self._unit_arrays()[0][np.asarray(uids, dtype=np.int64).ravel()]

    def unit_relations(self, uids: np.ndarray) -> np.ndarray:
        return self._unit_arrays()[1][np.asarray(uids, dtype=np.int64).ravel()]

    def unit_string(self, uid: int) -> str:
        return self._unit_str[uid]

    def unit_relation(self, uid: int) -> int:
        return self._unit_rel[uid]

    def sentence_units(self, sentence) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rel_ids[n], unit_ptr[n+1], unit_ids[E])``: each node's relation table and context units."""
        ctxs = node_contexts(sentence, self.inventory, self.config.templates)
        rids = [self.relation_id(d) for d in sentence.deprels]
        ptr = np.zeros(len(ctxs) + 1, dtype=np.int64)
        units: List[int] = []
        known = self._unit_ids
        for w, cs in enumerate(ctxs):
            rid = rids[w]
            for c in cs:
                uid = known.get((rid, c))
                units.append(self.unit_id(rid, c) if uid is None else uid)
            ptr[w + 1] = len(units)
        return np.array(rids, dtype=np.int64), ptr, np.array(units, dtype=np.int64)


class FeatureIndex:
    """Exact feature dictionary: the ``F`` distinct (context hash, property hash) pairs,
    sorted; feature ``i`` is row ``i``.  Pairs not in the dictionary have no weight."""

    def __init__(self, ctx: np.ndarray, prop: np.ndarray):
        ctx = np.ascontiguousarray(ctx, dtype=np.uint64)
        prop = np.ascontiguousarray(prop, dtype=np.uint64)
        if ctx.ndim != 1 or ctx.shape != prop.shape:
            raise ValueError("feature dictionary: ctx and prop must be 1-D arrays of one length")
        if ctx.size > 1:
            inc = (ctx[1:] > ctx[:-1]) | ((ctx[1:] == ctx[:-1]) & (prop[1:] > prop[:-1]))
            if not np.all(inc):
                raise ValueError("feature dictionary must be sorted by (ctx, prop) without repeats")
        self.ctx = ctx
        self.prop = prop

    @property
    def size(self) -> int:
        return int(self.ctx.size)

    @classmethod
    def empty(cls) -> "FeatureIndex":
        return cls(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint64))

    @classmethod
    def from_pairs(cls, ctx: np.ndarray, prop: np.ndarray) -> "FeatureIndex":
        """Build from (possibly repeated, unsorted) pairs."""
        ctx = np.asarray(ctx, dtype=np.uint64).ravel()
        prop = np.asarray(prop, dtype=np.uint64).ravel()
        if ctx.size == 0:
            return cls.empty()
        order = np.lexsort((prop, ctx))
        c, p = ctx[order], prop[order]
        keep = np.ones(c.size, dtype=bool)
        keep[1:] = (c[1:] != c[:-1]) | (p[1:] != p[:-1])
        return cls(c[keep], p[keep])

    def lookup(self, ctx: np.ndarray, prop: np.ndarray) -> np.ndarray:
        """Feature ids of (ctx, prop) pairs (broadcast); -1 where absent."""
        ctx, prop = np.broadcast_arrays(np.asarray(ctx, dtype=np.uint64), np.asarray(prop, dtype=np.uint64))
        out = np.full(ctx.shape, -1, dtype=np.int64)
        flat_c, flat_p, flat_o = ctx.ravel(), prop.ravel(), out.reshape(-1)
        lo = np.searchsorted(self.ctx, flat_c, "left")
        hi = np.searchsorted(self.ctx, flat_c, "right")
        for i in np.flatnonzero(hi > lo):
            j = lo[i] + np.searchsorted(self.prop[lo[i]:hi[i]], flat_p[i])
            if j < hi[i] and self.prop[j] == flat_p[i]:
                flat_o[i] = j
        return out

    def unit_entries(self, hashes: np.ndarray, table: RelationTable) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Known features of contexts ``hashes`` (all scored against ``table``).

        Returns ``(unit, col, feat)``: context ``hashes[unit]`` has feature ``feat`` on
        column ``col`` of ``table``.  Features whose property value does not occur in
        ``table`` are dropped.
        """
        hashes = np.asarray(hashes, dtype=np.uint64)
        lo = np.searchsorted(self.ctx, hashes, "left")
        hi = np.searchsorted(self.ctx, hashes, "right")
        counts = hi - lo
        tot = int(counts.sum())
        if tot == 0:
            z = np.zeros(0, dtype=np.int64)
            return z, z, z
        seg = np.concatenate([[0], np.cumsum(counts)[:-1]])
        feat = np.repeat(lo - seg, counts) + np.arange(tot)
        unit = np.repeat(np.arange(len(hashes)), counts)
        props = self.prop[feat]
        col = np.searchsorted(table.col_hash, props)
        col_c = np.minimum(col, max(table.n_cols - 1, 0))
        ok = table.col_hash[col_c] == props if table.n_cols else np.zeros(tot, dtype=bool)
        return unit[ok], col_c[ok].astype(np.int64), feat[ok].astype(np.int64)
