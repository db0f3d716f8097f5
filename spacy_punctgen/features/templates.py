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
``clause_seq`` (opt.) ``d|seq=aux+nsubj+HEAD+obj``: the children's relations and the head in word
                      order; ``d|inv=1/0`` when ``w`` has a subject: does an ``aux``/``cop`` child
                      precede it (subject-auxiliary inversion, as in questions) (1-2)
``clause_start`` (opt.) ``d|fx=WP``, ``d|f2=what+is``, ``d|fx2=WP+VBZ``: XPOS of the span's first word,
                      its first two words and their XPOS (spans of 2+ words); ``d|wh=WRB|at=0..2``
                      for a wh-XPOS among its first three words (1-4)
``clause_end`` (opt.) ``d|l2=n't+it``, ``d|lx2=RB+PRP``: the span's last two words and their XPOS
                      (tag questions: ``isn't it``, ``right``, ``you know``; spans of 2+ words) (0-2)
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
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np
from spacy.lang.lex_attrs import word_shape

from spacy_punctgen.data.inventory import PunctInventory, relation_key
from spacy_punctgen.data.trees import Forest, forest
from spacy_punctgen.errors import Errors

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
    "clause_seq", "clause_start", "clause_end",
)
#: the templates on by default (the first twenty; everything after ``global`` is an
#: optional extra, see docs/features.md)
DEFAULT_TEMPLATES: Tuple[str, ...] = ALL_TEMPLATES[:ALL_TEMPLATES.index("global") + 1]
#: child relations whose (function) word ``kid_words`` names: in Chinese the marker,
#: coordinator or adposition often decides the punctuation around the constituent
FUNCTION_RELATIONS = frozenset({"mark", "cc", "case", "aux", "cop", "advmod", "discourse",
                                "det", "clf", "dep"})
#: ``clause_seq``: the relations of a clause's subject, and of the words that precede it in a
#: question by subject-auxiliary inversion ("do you", "is it", "can we")
SUBJECT_RELATIONS = frozenset({"nsubj", "csubj", "expl"})
INVERTING_RELATIONS = frozenset({"aux", "cop"})
#: ``clause_start``: the Penn Treebank tags of wh-words (what, which, who, whose, how, why, ...)
WH_XPOS = frozenset({"WDT", "WP", "WP$", "WRB"})
PAIR_PROPERTIES: Tuple[str, ...] = ("pair", "l", "r", "shape")


@dataclass
class FeatureConfig:
    """Which node-context templates and pair properties are on (see the module docstring)."""

    templates: List[str] = field(default_factory=lambda: list(DEFAULT_TEMPLATES))
    properties: List[str] = field(default_factory=lambda: list(PAIR_PROPERTIES))

    def __post_init__(self):
        bad = [t for t in self.templates if t not in ALL_TEMPLATES]
        if bad:
            raise ValueError(Errors.E217.format(bad=bad, known=list(ALL_TEMPLATES)))
        bad = [p for p in self.properties if p not in PAIR_PROPERTIES]
        if bad or not self.properties:
            raise ValueError(Errors.E218.format(properties=list(PAIR_PROPERTIES)))
        if "rel" not in self.templates:
            raise ValueError(Errors.E219)

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


# ---------------------------------------------------------------------------
# The template registry: one small function per template


class Node:
    """What the templates read about one node ``w`` (see :func:`node_contexts`).

    The sentence's fields are computed once per sentence, the node's own fields once per
    node before any template runs.  A field marked *needs X* is ``None`` unless an enabled
    template declares ``needs=X``.  :func:`node_contexts` keeps one ``Node`` per sentence
    and rebinds the node's fields as it moves from node to node (cheaper than a new object
    per node), so a template reads it and returns strings; it never keeps it.
    """

    __slots__ = (
        # -- the sentence
        "sentence",  # the PunctSentence
        "slots",  # observed surface punctuation: slot j precedes word j (n + 1 slots)
        "n",  # number of words
        "heads",  # parent of each word, -1 for a root
        "upos",
        "full",  # lower-cased relations (``acl:relcl``)
        "base",  # base relations (``acl``)
        "children",  # of each word, in word order
        "roots",  # in word order
        "lo",  # first word of each node's span
        "hi",  # last word of each node's span
        "depth",  # 0 for roots
        "words",  # needs WORDS: the forms, rare ones ``UNK``
        "shapes",  # needs SHAPES: spaCy's ``word_shape`` of every form (rare ones too)
        "start_at",  # needs START_END: the outermost constituent starting at each word,
        "end_at",  # ending at each word; -1 where none (that word heads a span)
        # -- the node
        "w",  # the node (its head word)
        "d",  # base[w]: the prefix of every relation-specific context
        "h",  # heads[w]
        "a",  # lo[w]: first word of the span (``l`` lands in slot a)
        "b",  # hi[w]: last word of the span (``r`` lands in slot b + 1)
        "kids",  # children[w]
        "side",  # "L" / "R": w left / right of its parent; "root"
        "prel",  # base[h], "ROOT" for a root
        "lout",  # UPOS of the word before the span, "BOS" at the start
        "rout",  # UPOS of the word after the span, "EOS" at the end
        "edge",  # "first" / "last" / "both" / "none": the span at the start / end of the sentence
        "pword",  # needs WORDS: the word before the span, "BOS" at the start
        "nword",  # needs WORDS: the word after the span, "EOS" at the end
        "punct_in",  # needs PUNCT_IN: [(j, " ".join(slots[j]))] for the punctuated slots a+1..b
    )


#: what a template may need beyond the fields every :class:`Node` has
WORDS, SHAPES, START_END, PUNCT_IN = "words", "shapes", "start_end", "punct_in"

TemplateFn = Callable[[Node], Sequence[str]]
#: template name -> its function; a node's contexts are those of its enabled templates in
#: this (registration) order, which is the order listed in the module docstring
TEMPLATES: Dict[str, TemplateFn] = {}
#: template name -> the optional :class:`Node` fields it reads
TEMPLATE_NEEDS: Dict[str, FrozenSet[str]] = {}
_SURFACE: List[str] = []


def template(name: str, *, needs: Sequence[str] = (), surface: bool = False) -> Callable[[TemplateFn], TemplateFn]:
    """Register the decorated ``fn(node) -> contexts`` as template ``name``.

    ``needs``: the optional :class:`Node` fields it reads (``WORDS``, ``SHAPES``,
    ``START_END``, ``PUNCT_IN``); ``surface``: it reads the observed punctuation in
    ``slots`` (restoration refuses such templates, see ``SURFACE_TEMPLATES``).
    """
    assert name not in TEMPLATES, f"template {name!r} registered twice"
    assert set(needs) <= {WORDS, SHAPES, START_END, PUNCT_IN}, needs

    def register(fn: TemplateFn) -> TemplateFn:
        TEMPLATES[name] = fn
        TEMPLATE_NEEDS[name] = frozenset(needs)
        if surface:
            _SURFACE.append(name)
        return fn

    return register


@template("rel")
def _rel(x: Node):
    return (x.d,)


@template("full")
def _full(x: Node):
    f = x.full[x.w]
    return (f"{x.d}|full={f}",) if f != x.d else ()


@template("upos")
def _upos(x: Node):
    return (f"{x.d}|upos={x.upos[x.w]}",)


@template("dir")
def _dir(x: Node):
    return (f"{x.d}|dir={x.side}",)


@template("dir_upos")
def _dir_upos(x: Node):
    return (f"{x.d}|dir={x.side}|upos={x.upos[x.w]}",)


@template("parent")
def _parent(x: Node):
    pupos = x.upos[x.h] if x.h >= 0 else "ROOT"
    return (f"{x.d}|prel={x.prel}|pupos={pupos}",)


@template("grandparent")
def _grandparent(x: Node):
    g = x.heads[x.h] if x.h >= 0 else -1
    pprel = x.base[g] if g >= 0 else "ROOT"
    return (f"{x.d}|prel={x.prel}|pprel={pprel}",)


@template("depth")
def _depth(x: Node):
    return (f"{x.d}|depth={min(x.depth[x.w], 3)}",)


@template("child")
def _child(x: Node):
    base = x.base
    return [f"{x.d}|child={rel}" for rel in sorted({base[c] for c in x.kids})]


@template("child_side")
def _child_side(x: Node):
    base, w = x.base, x.w
    return [f"{x.d}|child={rel}|side={s}"
            for rel, s in sorted({(base[c], "L" if c < w else "R") for c in x.kids})]


@template("nkids")
def _nkids(x: Node):
    return (f"{x.d}|nkids={min(len(x.kids), 4)}",)


@template("sib")
def _sib(x: Node):
    w, h, base = x.w, x.h, x.base
    group = sorted(x.children[h] + [h]) if h >= 0 else x.roots
    k = group.index(w)
    left = group[k - 1] if k > 0 else None
    right = group[k + 1] if k + 1 < len(group) else None
    ls = "NONE" if left is None else ("HEAD" if left == h else base[left])
    rs = "NONE" if right is None else ("HEAD" if right == h else base[right])
    return (f"{x.d}|lsib={ls}", f"{x.d}|rsib={rs}")


@template("flank")
def _flank(x: Node):
    d, upos = x.d, x.upos
    return (f"{d}|lout={x.lout}", f"{d}|lin={upos[x.a]}", f"{d}|rin={upos[x.b]}", f"{d}|rout={x.rout}")


@template("flank_out")
def _flank_out(x: Node):
    return (f"{x.d}|lout={x.lout}|rout={x.rout}",)


@template("edge")
def _edge(x: Node):
    return (f"{x.d}|edge={x.edge}",)


@template("len")
def _len(x: Node):
    return (f"{x.d}|len={_len_bucket(x.b - x.a + 1)}",)


@template("dist")
def _dist(x: Node):
    return (f"{x.d}|ldist={_len_bucket(x.a)}", f"{x.d}|rdist={_len_bucket(x.n - 1 - x.b)}")


@template("len_upos")
def _len_upos(x: Node):
    return (f"{x.d}|upos={x.upos[x.w]}|len={_len_bucket(x.b - x.a + 1)}",)


@template("neighbors", needs=[START_END])
def _neighbors(x: Node):
    # no constituent starts (ends) there when the next (previous) word heads w's span
    d, a, b, upos, base, lo, hi = x.d, x.a, x.b, x.upos, x.base, x.lo, x.hi
    ctx = []
    if b + 1 >= x.n:
        ctx.append(f"{d}|nxt=EOS")
    elif x.start_at[b + 1] < 0:
        ctx.append(f"{d}|nxt=HEAD|nupos={upos[b + 1]}")
    else:
        v = x.start_at[b + 1]
        ctx.append(f"{d}|nxt={base[v]}|nupos={upos[v]}")
        ctx.append(f"{d}|nxtlen={_len_bucket(hi[v] - lo[v] + 1)}")
    if a == 0:
        ctx.append(f"{d}|prv=BOS")
    elif x.end_at[a - 1] < 0:
        ctx.append(f"{d}|prv=HEAD|pupos={upos[a - 1]}")
    else:
        v = x.end_at[a - 1]
        ctx.append(f"{d}|prv={base[v]}|pupos={upos[v]}")
        ctx.append(f"{d}|prvlen={_len_bucket(hi[v] - lo[v] + 1)}")
    return ctx


@template("inner", surface=True)
def _inner(x: Node):
    # surface punctuation strictly inside the span (slots a+1..b): generated by w's
    # descendants before w's own pair in a bottom-up story (paper's template (d))
    d, a, b, slots = x.d, x.a, x.b, x.slots
    filled = [s for s in slots[a + 1:b + 1] if s]
    nin = min(len(filled), 3)
    ctx = [f"{d}|nin={nin}", f"{d}|nin={nin}|len={_len_bucket(b - a + 1)}"]
    ctx.extend(f"{d}|in={tok}" for tok in sorted({t for s in filled for t in s})[:6])
    if b > a:  # the interior slots next to the boundaries (after the first word, before the last)
        ctx.append(f"{d}|inL={' '.join(slots[a + 1]) or '_'}")
        ctx.append(f"{d}|inR={' '.join(slots[b]) or '_'}")
    return ctx


@template("inner_rel", surface=True)
def _inner_rel(x: Node):
    # which children's boundaries carry the interior punctuation (observed slots a+1..b
    # only, as for ``inner``): a child's pair lands at lo[c] and hi[c]+1
    d, a, b, slots, base = x.d, x.a, x.b, x.slots, x.base
    marks = set()
    for c in x.kids:
        for j, s in ((x.lo[c], "L"), (x.hi[c] + 1, "R")):
            if a < j <= b and slots[j]:
                marks.add(f"{d}|inrel={base[c]}|{s}={' '.join(slots[j])}")
    return sorted(marks)[:6]


@template("inner_upos", needs=[PUNCT_IN], surface=True)
def _inner_upos(x: Node):
    # each punctuated interior slot with the UPOS of the words on both sides of it
    d, upos = x.d, x.upos
    return sorted({f"{d}|inpos={upos[j - 1]}|{s}|{upos[j]}" for j, s in x.punct_in})[:6]


@template("inner_side", needs=[PUNCT_IN], surface=True)
def _inner_side(x: Node):
    # each punctuated interior slot with its side of w's head word (slot j precedes word
    # j), alone and with w's UPOS
    d, w, u = x.d, x.w, x.upos[x.w]
    ctx = []
    for sd, s in sorted({(("L" if j <= w else "R"), s) for j, s in x.punct_in})[:6]:
        ctx.append(f"{d}|hside={sd}|in={s}")
        ctx.append(f"{d}|hside={sd}|in={s}|upos={u}")
    return ctx


@template("inner_count", needs=[PUNCT_IN], surface=True)
def _inner_count(x: Node):
    # how many interior slots are punctuated on each side of w's head word
    nl = sum(1 for j, _ in x.punct_in if j <= x.w)
    counts = f"{x.d}|ninL={min(nl, 3)}|ninR={min(len(x.punct_in) - nl, 3)}"
    return (counts, f"{counts}|upos={x.upos[x.w]}")


@template("kidset")
def _kidset(x: Node):
    base = x.base
    return (f"{x.d}|kids=" + "+".join(sorted({base[c] for c in x.kids})),)


@template("phead", needs=[WORDS])
def _phead(x: Node):
    return (f"{x.d}|phword={x.words[x.h] if x.h >= 0 else 'ROOT'}", f"{x.d}|prel={x.prel}|upos={x.upos[x.w]}")


@template("word_dir", needs=[WORDS])
def _word_dir(x: Node):
    return (f"{x.d}|word={x.words[x.w]}|dir={x.side}",)


@template("kid_words", needs=[WORDS])
def _kid_words(x: Node):
    d, w, base, words = x.d, x.w, x.base, x.words
    return [f"{d}|kw={base[c]}={words[c]}|side={'L' if c < w else 'R'}"
            for c in sorted({c for c in x.kids if base[c] in FUNCTION_RELATIONS})]


@template("edge_upos")
def _edge_upos(x: Node):
    return (f"{x.d}|lout={x.lout}|lin={x.upos[x.a]}", f"{x.d}|rin={x.upos[x.b]}|rout={x.rout}")


@template("word", needs=[WORDS])
def _word(x: Node):
    return (f"{x.d}|word={x.words[x.w]}",)


@template("span_words", needs=[WORDS])
def _span_words(x: Node):
    return (f"{x.d}|fword={x.words[x.a]}", f"{x.d}|lword={x.words[x.b]}")


@template("out_words", needs=[WORDS])
def _out_words(x: Node):
    return (f"{x.d}|pword={x.pword}", f"{x.d}|nword={x.nword}")


@template("global")
def _global(x: Node):
    return ("*", f"*|edge={x.edge}", f"*|upos={x.upos[x.w]}")


@template("global_words", needs=[WORDS])
def _global_words(x: Node):
    words = x.words
    return (f"*|word={words[x.w]}", f"*|fword={words[x.a]}", f"*|lword={words[x.b]}",
            f"*|pword={x.pword}", f"*|nword={x.nword}")


@template("edge_bigrams", needs=[WORDS])
def _edge_bigrams(x: Node):
    # the two words on either side of each boundary slot, as one context: fixed compounds
    # (hi "बात-चीत") and names before an acronym in brackets
    return (f"*|lbi={x.pword}+{x.words[x.a]}", f"*|rbi={x.words[x.b]}+{x.nword}")


@template("global_shapes", needs=[SHAPES])
def _global_shapes(x: Node):
    shapes, a, b = x.shapes, x.a, x.b
    return (f"*|wshape={shapes[x.w]}", f"*|fshape={shapes[a]}", f"*|lshape={shapes[b]}",
            f"*|pshape={shapes[a - 1] if a > 0 else 'BOS'}",
            f"*|nshape={shapes[b + 1] if b + 1 < x.n else 'EOS'}")


@template("clause_seq")
def _clause_seq(x: Node):
    # a question mark belongs to the whole clause: its shape (relations in word order) shows
    # inversion ("aux+nsubj+HEAD" vs "nsubj+aux+HEAD") where no single child relation does
    d, w, base, kids = x.d, x.w, x.base, x.kids
    if not kids:
        return ()
    seq = "+".join("HEAD" if v == w else base[v] for v in sorted(kids + [w]))
    ctx = [f"{d}|seq={seq}"]
    subj = next((c for c in kids if base[c] in SUBJECT_RELATIONS), -1)
    if subj >= 0:
        ctx.append(f"{d}|inv={int(any(c < subj and base[c] in INVERTING_RELATIONS for c in kids))}")
    return ctx


@template("clause_start", needs=[WORDS])
def _clause_start(x: Node):
    # how the constituent opens ("what is", "can you", "do you"): the first two words, their
    # tags (an inverted auxiliary is "MD+PRP" / "VBZ+PRP" whatever the words), an early wh-word
    d, a, b, words, xpos = x.d, x.a, x.b, x.words, x.sentence.xpos
    ctx = [f"{d}|fx={xpos[a]}"]
    if b > a:  # a one-word span's word is span_words' already
        ctx += (f"{d}|f2={words[a]}+{words[a + 1]}", f"{d}|fx2={xpos[a]}+{xpos[a + 1]}")
    wh = next((j for j in range(a, min(a + 3, b + 1)) if xpos[j] in WH_XPOS), -1)
    if wh >= 0:
        ctx.append(f"{d}|wh={xpos[wh]}|at={wh - a}")
    return ctx


@template("clause_end", needs=[WORDS])
def _clause_end(x: Node):
    # how the constituent closes: tag questions ("is n't it", "right", "you know")
    d, a, b, words, xpos = x.d, x.a, x.b, x.words, x.sentence.xpos
    if b == a:  # one word: span_words has it
        return ()
    return (f"{d}|l2={words[b - 1]}+{words[b]}", f"{d}|lx2={xpos[b - 1]}+{xpos[b]}")


#: templates that look at the observed surface punctuation inside the constituent
SURFACE_TEMPLATES = frozenset(_SURFACE)
#: the functions of :data:`DEFAULT_TEMPLATES` in registry order (see :func:`_default_contexts`)
_DEFAULT_FNS = tuple(TEMPLATES[t] for t in TEMPLATES if t in DEFAULT_TEMPLATES)
assert set(TEMPLATES) == set(ALL_TEMPLATES), set(TEMPLATES) ^ set(ALL_TEMPLATES)

_EDGE = {(True, True): "both", (True, False): "first", (False, True): "last", (False, False): "none"}
_PLANS: Dict[Tuple[str, ...], Tuple[Tuple[TemplateFn, ...], FrozenSet[str]]] = {}
_RELATIONS: Dict[str, Tuple[str, str]] = {}


def _plan(templates: Sequence[str]) -> Tuple[Tuple[TemplateFn, ...], FrozenSet[str]]:
    """The functions of the enabled templates in registry order (``rel`` always), and what they need."""
    key = tuple(templates)
    plan = _PLANS.get(key)
    if plan is None:
        bad = [t for t in key if t not in TEMPLATES]
        if bad:
            raise ValueError(Errors.E217.format(bad=bad, known=list(ALL_TEMPLATES)))
        on = set(key) | {"rel"}
        names = [t for t in TEMPLATES if t in on]
        plan = _PLANS[key] = (tuple(TEMPLATES[t] for t in names),
                              frozenset().union(*(TEMPLATE_NEEDS[t] for t in names)))
    return plan


def _relation(deprel: str) -> Tuple[str, str]:
    """``(full, base)`` of a deprel: ``acl:relcl`` -> ``("acl:relcl", "acl")`` (memoised)."""
    rel = _RELATIONS.get(deprel)
    if rel is None:
        full = deprel.lower()
        rel = _RELATIONS[deprel] = (full, relation_key(full))
    return rel


def node_contexts(sentence, inventory: PunctInventory, templates: Sequence[str],
                  fo: Optional[Forest] = None) -> List[List[str]]:
    """The context strings of every node of one :class:`PunctSentence` (see the docstring table).

    A node's contexts are those of the enabled ``templates`` in :data:`TEMPLATES` order
    (``rel`` always comes first); an unknown name raises E217.  ``fo``: the sentence's
    :func:`forest`, when the caller has it.
    """
    fns, needs = _plan(templates)
    x = Node()
    x.sentence, x.slots = sentence, sentence.slots
    x.heads = heads = list(sentence.heads)
    x.n = n = len(heads)
    if fo is None:
        fo = forest(heads)
    x.children, x.roots = children, _ = fo.children, fo.roots
    x.lo, x.hi, x.depth = lo, hi, depth = fo.first, fo.last, fo.depth
    x.upos = upos = list(sentence.upos)
    rels = [_relation(r) for r in sentence.deprels]
    x.full = [f for f, _ in rels]
    x.base = base = [k for _, k in rels]
    x.words = words = [inventory.word(w) for w in sentence.words] if WORDS in needs else None
    if fns == _DEFAULT_FNS:  # the shipped models' templates: one loop instead of a call per template
        return _default_contexts(n, heads, upos, x.full, base, words, children, fo.roots, lo, hi, depth)
    x.shapes = [word_shape(w) for w in sentence.words] if SHAPES in needs else None
    x.start_at = x.end_at = x.pword = x.nword = x.punct_in = None
    if START_END in needs:  # outermost constituent starting / ending at each word
        x.start_at, x.end_at = start_at, end_at = [-1] * n, [-1] * n
        for v in range(n):
            if start_at[lo[v]] < 0 or depth[v] < depth[start_at[lo[v]]]:
                start_at[lo[v]] = v
            if end_at[hi[v]] < 0 or depth[v] < depth[end_at[hi[v]]]:
                end_at[hi[v]] = v
    slots = x.slots if PUNCT_IN in needs else None
    out: List[List[str]] = []
    for w in range(n):
        x.w = w
        x.d = base[w]
        x.h = h = heads[w]
        x.a = a = lo[w]
        x.b = b = hi[w]
        x.kids = children[w]
        x.side = "root" if h < 0 else ("L" if w < h else "R")
        x.prel = base[h] if h >= 0 else "ROOT"
        x.lout = upos[a - 1] if a > 0 else "BOS"
        x.rout = upos[b + 1] if b + 1 < n else "EOS"
        x.edge = _EDGE[a == 0, b == n - 1]
        if words is not None:
            x.pword = words[a - 1] if a > 0 else "BOS"
            x.nword = words[b + 1] if b + 1 < n else "EOS"
        if slots is not None:
            x.punct_in = [(j, " ".join(slots[j])) for j in range(a + 1, b + 1) if slots[j]]
        ctx: List[str] = []
        for fn in fns:
            ctx += fn(x)
        out.append(ctx)
    return out


_LEN_BUCKETS = [_len_bucket(k) for k in range(18)]


def _default_contexts(n, heads, upos, full, base, words, children, roots, lo, hi, depth) -> List[List[str]]:
    """:func:`node_contexts` for :data:`DEFAULT_TEMPLATES`: the registry's templates written out
    in one loop, the same strings in the same order (``tests/model/test_feature_registry.py``
    compares the two on every sentence of the sample); it runs for every sentence analysed."""
    # each node's adjacent siblings (the registry's ``sib``: its parent's children and the
    # parent itself, in word order; the roots for a root), once per sentence
    lsib: List[str] = ["NONE"] * n
    rsib: List[str] = ["NONE"] * n
    for h in range(-1, n):
        if h < 0:
            group = roots
        else:
            kids = children[h]
            if not kids:
                continue
            group = sorted(kids + [h])
        last = len(group) - 1
        for k, v in enumerate(group):
            if v == h:
                continue
            if k > 0:
                u = group[k - 1]
                lsib[v] = "HEAD" if u == h else base[u]
            if k < last:
                u = group[k + 1]
                rsib[v] = "HEAD" if u == h else base[u]
    out: List[List[str]] = []
    buckets = _LEN_BUCKETS
    for w in range(n):
        d = base[w]
        h = heads[w]
        a = lo[w]
        b = hi[w]
        kids = children[w]
        u = upos[w]
        if h < 0:
            side = "root"
            prel = pupos = pprel = "ROOT"
        else:
            side = "L" if w < h else "R"
            prel = base[h]
            pupos = upos[h]
            g = heads[h]
            pprel = base[g] if g >= 0 else "ROOT"
        lout = upos[a - 1] if a > 0 else "BOS"
        rout = upos[b + 1] if b + 1 < n else "EOS"
        edge = _EDGE[a == 0, b == n - 1]
        pword = words[a - 1] if a > 0 else "BOS"
        nword = words[b + 1] if b + 1 < n else "EOS"
        f = full[w]
        ctx = [d, f"{d}|full={f}"] if f != d else [d]
        ctx += (f"{d}|upos={u}", f"{d}|dir={side}", f"{d}|dir={side}|upos={u}",
                f"{d}|prel={prel}|pupos={pupos}", f"{d}|prel={prel}|pprel={pprel}",
                f"{d}|depth={min(depth[w], 3)}")
        if kids:
            ctx += [f"{d}|child={rel}" for rel in sorted({base[c] for c in kids})]
            ctx += [f"{d}|child={rel}|side={sd}" for rel, sd in sorted({(base[c], "L" if c < w else "R") for c in kids})]
        k = b - a + 1
        ctx += (f"{d}|nkids={min(len(kids), 4)}", f"{d}|lsib={lsib[w]}", f"{d}|rsib={rsib[w]}",
                f"{d}|lout={lout}", f"{d}|lin={upos[a]}", f"{d}|rin={upos[b]}", f"{d}|rout={rout}",
                f"{d}|lout={lout}|rout={rout}", f"{d}|edge={edge}",
                f"{d}|len={buckets[k] if k < 18 else '17+'}", f"{d}|word={words[w]}",
                f"{d}|fword={words[a]}", f"{d}|lword={words[b]}", f"{d}|pword={pword}", f"{d}|nword={nword}",
                "*", f"*|edge={edge}", f"*|upos={u}")
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
        self._unit_ids: Dict[int, Dict[str, int]] = {}  # relation id -> context -> unit id
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
        known = self._unit_ids.get(rel_id)
        if known is None:
            known = self._unit_ids[rel_id] = {}
        uid = known.get(context)
        if uid is None:
            uid = len(self._unit_rel)
            known[context] = uid
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

    def sentence_units(self, sentence, fo: Optional[Forest] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rel_ids[n], unit_ptr[n+1], unit_ids[E])``: each node's relation table and context
        units (``fo``: the sentence's :func:`forest`, when the caller has it)."""
        ctxs = node_contexts(sentence, self.inventory, self.config.templates, fo)
        rids = [self.relation_id(d) for d in sentence.deprels]
        ptr = [0]
        units: List[int] = []
        by_rel = self._unit_ids
        for rid, cs in zip(rids, ctxs):
            known = by_rel.get(rid)
            got = list(map(known.get, cs)) if known is not None else [None] * len(cs)
            if None in got:  # new contexts: intern them (in order)
                got = [self.unit_id(rid, c) if u is None else u for c, u in zip(cs, got)]
            units += got
            ptr.append(len(units))
        return np.array(rids, dtype=np.int64), np.array(ptr, dtype=np.int64), np.array(units, dtype=np.int64)


class FeatureIndex:
    """Exact feature dictionary: the ``F`` distinct (context hash, property hash) pairs,
    sorted; feature ``i`` is row ``i``.  Pairs not in the dictionary have no weight."""

    def __init__(self, ctx: np.ndarray, prop: np.ndarray):
        ctx = np.ascontiguousarray(ctx, dtype=np.uint64)
        prop = np.ascontiguousarray(prop, dtype=np.uint64)
        if ctx.ndim != 1 or ctx.shape != prop.shape:
            raise ValueError(Errors.E220)
        if ctx.size > 1:
            inc = (ctx[1:] > ctx[:-1]) | ((ctx[1:] == ctx[:-1]) & (prop[1:] > prop[:-1]))
            if not np.all(inc):
                raise ValueError(Errors.E221)
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
