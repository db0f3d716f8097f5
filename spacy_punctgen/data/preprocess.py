"""Turn UD trees into depunctuated trees with punctuation slots (docs/model.md §1).

Why: the model generates punctuation from the *depunctuated* tree, so every
sentence becomes ``n`` words, a projective head vector over those words and
``n + 1`` surface punctuation sequences (the slots between words). Sentences
where punctuation heads other tokens cannot be depunctuated and are omitted
(the paper's "#Omit"), as are sentences with no word left.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

from spacy_punctgen.data.conllu import UDSentence, iter_conllu
from spacy_punctgen.data.trees import forest, lift_nonprojective

ABBR = "ABBR."
OMIT_NONLEAF = "nonleaf"
OMIT_EMPTY = "empty"
_XPOS_OPEN, _XPOS_CLOSE = "``", "''"
_DIRECTED = {'"': ("\u201c", "\u201d"), "'": ("\u2018", "\u2019")}  # “ ” and ‘ ’
#: Each directed quote's straight form (“ ” -> ", ‘ ’ -> '): how a text typed with straight
#: quotes writes the marks the model's inventory holds directed.
STRAIGHT_FORM = {directed: straight for straight, pair in _DIRECTED.items() for directed in pair}
#: Marks after which a quote written close up still opens: ``("Hi`` (brackets, directed openers).
_OPENERS = frozenset({"(", "[", "{", "\u201c", "\u2018", "\u00ab", "\u2039", "\u00bf", "\u00a1",
                      "-LRB-", "-LSB-", "-LCB-"})


@dataclass
class PunctSentence:
    """A depunctuated sentence; see the module docstring."""

    words: List[str]
    upos: List[str]
    xpos: List[str]
    deprels: List[str]
    heads: List[int]
    slots: List[Tuple[str, ...]]
    sent_id: Optional[str] = None
    text: Optional[str] = None
    nonprojective: bool = False
    #: restoration only: one flag per slot, whether its ``slots`` entry is what the text has
    #: there (marks the user wrote, or a gap inside a token that can take none); the decoders
    #: condition the other slots on those (decode/evidence.py). None: no slot is (the decoders
    #: ignore ``slots``)
    observed: Optional[Tuple[bool, ...]] = None

    def __len__(self) -> int:
        return len(self.words)


@dataclass
class PrepStats:
    """Counts for one file (or a sum of files), in the spirit of the paper's Table 2."""

    sentences: int = 0
    kept: int = 0
    omitted_nonleaf: int = 0
    omitted_empty: int = 0
    nonprojective: int = 0
    words: int = 0  # syntactic words, punctuation included, over all sentences read
    punct_tokens: int = 0  # UPOS PUNCT, over all sentences read (the paper's "% punct")
    removed_tokens: int = 0  # UPOS PUNCT or deprel punct: what depunctuation removes
    punct_types: Set[str] = field(default_factory=set)  # after preprocessing, kept sentences

    @property
    def punct_pct(self) -> float:
        return 100.0 * self.punct_tokens / self.words if self.words else 0.0

    def __iadd__(self, other: "PrepStats") -> "PrepStats":
        for name in ("sentences", "kept", "omitted_nonleaf", "omitted_empty", "nonprojective",
                     "words", "punct_tokens", "removed_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.punct_types |= other.punct_types
        return self

    def to_dict(self) -> Dict[str, object]:
        return {
            "sentences": self.sentences,
            "words": self.words,
            "punct_tokens": self.punct_tokens,
            "punct_pct": round(self.punct_pct, 2),
            "removed_tokens": self.removed_tokens,
            "punct_types": len(self.punct_types),
            "omitted_nonleaf": self.omitted_nonleaf,
            "omitted_empty": self.omitted_empty,
            "nonprojective": self.nonprojective,
            "kept": self.kept,
        }


_PUNCT_RELS: Dict[str, bool] = {}  # deprel -> whether it is ``punct`` (labels are few)


def is_punct(upos: str, deprel: str) -> bool:
    """docs/model.md §1: UPOS PUNCT or relation ``punct`` (subtypes included)."""
    if upos == "PUNCT":
        return True
    got = _PUNCT_RELS.get(deprel)
    if got is None:
        got = deprel.split(":")[0].lower() == "punct"
        if len(_PUNCT_RELS) < 10_000:  # (any string is a label: keep the memo small)
            _PUNCT_RELS[deprel] = got
    return got


def is_abbreviation(form: str) -> bool:
    """A word like ``etc.`` / ``U.S.`` whose final dot is split off as ``ABBR.``."""
    return len(form) > 1 and form.endswith(".") and form.strip(".") != ""


def _quote_by_position(ud: UDSentence, punct: List[bool], i: int, decided: Dict[int, bool]
                       ) -> Optional[bool]:
    """The direction the text's spacing gives the quote at ``i``, or None where it does not tell.

    A quote written close up to what follows it and not to what precedes it opens (``, "but``,
    ``("I``); one written close up to what precedes it and not to what follows closes (``know," she``,
    ``no".``). Close up to a bracket or opener before it (or a quote ``decided`` opening) counts as
    free on the left; close up to a mark after it other than an opener or a straight quote
    counts as free on the right.
    """
    n = len(ud.forms)
    after_opener = i > 0 and (ud.forms[i - 1] in _OPENERS or decided.get(i - 1) is True)
    tied_left = i > 0 and not ud.space_after[i - 1] and not after_opener
    tied_right = (i + 1 < n and not ud.space_after[i]
                  and not (punct[i + 1] and ud.forms[i + 1] not in _OPENERS and ud.forms[i + 1] not in _DIRECTED))
    if tied_left != tied_right:
        return tied_right
    return None


def quote_directions(ud: UDSentence, punct: List[bool], use_xpos: bool, tags_first: bool = False) -> Dict[int, bool]:
    """Map each straight-quote punctuation token (0-based) to True (opening) / False (closing).

    Order of evidence (docs/model.md §1): the spacing, where the quote is written close up on
    one side only (:func:`_quote_by_position`; it is what the writer typed, and it corrects
    EWT's few wrong quote tags and a tagger's guesses alike); then PTB XPOS (trusted only when
    ``use_xpos``, i.e. English EWT); then the undecided same-character quote dependents of one
    head, paired in order when there is an even number of them; then a quote with no word after
    it in the sentence closes and one with no word before it opens; then alternation within the
    sentence: an undecided quote closes when the last quote of its character opened.
    ``tags_first``: the XPOS tags go before the spacing (a treebank's gold tags, as the shipped
    models were trained on them; a tagger's guesses at run time go after it).
    """
    quotes = [i for i, f in enumerate(ud.forms) if punct[i] and f in _DIRECTED]
    result: Dict[int, bool] = {}
    for i in quotes:
        tagged = use_xpos and ud.xpos[i] in (_XPOS_OPEN, _XPOS_CLOSE)
        by_position = None if tagged and tags_first else _quote_by_position(ud, punct, i, result)
        if by_position is not None:
            result[i] = by_position
        elif tagged:
            result[i] = ud.xpos[i] == _XPOS_OPEN
    groups: Dict[Tuple[int, str], List[int]] = {}
    for i in quotes:
        if i not in result:
            groups.setdefault((ud.heads[i], ud.forms[i]), []).append(i)
    for members in groups.values():
        if len(members) % 2 == 0:
            for k, i in enumerate(members):
                result[i] = k % 2 == 0
    words = [i for i, p in enumerate(punct) if not p]
    for i in quotes:
        if i not in result:
            word_before, word_after = bool(words) and words[0] < i, bool(words) and words[-1] > i
            if word_before != word_after:
                result[i] = word_after
    last_opened: Dict[str, bool] = {}
    for i in quotes:
        if i not in result:
            result[i] = not last_opened.get(ud.forms[i], False)
        last_opened[ud.forms[i]] = result[i]
    return result


def straight_quotes(text: str, context: str = "") -> FrozenSet[str]:
    """The quotation marks (``"``, ``'``) that ``text`` writes straight, so that marks written into
    it keep its style: those it writes straight more often than directed. Where ``text`` holds
    neither form of a mark, ``context`` (e.g. the whole document) decides; where that holds
    neither either, the mark stays directed."""
    out = set()
    for straight, pair in _DIRECTED.items():
        for source in (text, context):
            n_straight = source.count(straight)
            n_directed = sum(source.count(c) for c in pair)
            if n_straight or n_directed:
                if n_straight > n_directed:
                    out.add(straight)
                break
    return frozenset(out)


def quote_style(marks: Iterable[str], straight: FrozenSet[str]) -> Tuple[str, ...]:
    """``marks`` with each directed quote whose straight form is in ``straight``
    (:func:`straight_quotes`) written straight."""
    return tuple(STRAIGHT_FORM[m] if m in STRAIGHT_FORM and STRAIGHT_FORM[m] in straight else m for m in marks)


def _projectivize(heads: List[int]) -> List[int]:
    """Lift non-projective arcs as spaCy's projectivizer does (``nonproj.projectivize``: the
    shortest non-projective arc first, to the grandparent), with the same result, by
    :func:`~spacy_punctgen.data.trees.lift_nonprojective` in near-linear time (spaCy's own is cubic).

    spaCy wants one root pointing to itself, so a virtual root is appended after the last word
    and every real root hangs from it; this also handles forests (an arc lifted past a real root
    lands on the virtual root and becomes a root).  Heads that are not a forest are returned as
    they are, for the tree checks to refuse.
    """
    n = len(heads)
    if any(not -1 <= h < n or h == i for i, h in enumerate(heads)):
        return list(heads)
    abs_heads = [n if h < 0 else h for h in heads] + [n]
    new_heads = lift_nonprojective(abs_heads)
    return [-1 if h == n else h for h in new_heads[:n]]


def preprocess_sentence(
    ud: UDSentence, quote_xpos: bool = False, split_abbreviations: bool = True, gold_tags: bool = False
) -> Tuple[Optional[PunctSentence], Optional[str]]:
    """Return ``(sentence, None)`` or ``(None, reason)`` with reason ``"empty"`` / ``"nonleaf"``.
    ``gold_tags``: the XPOS tags are a treebank's (trusted before the spacing, :func:`quote_directions`).

    An all-punctuation sentence counts as "empty" even if its punctuation heads punctuation.
    ``split_abbreviations=False`` is for trees that are already depunctuated (e.g. a
    parser's output on depunctuated words): splitting again is not idempotent (``Mr..``
    would lose a second dot).
    """
    n = len(ud.forms)
    punct = [is_punct(ud.upos[i], ud.deprels[i]) for i in range(n)]
    if all(punct):
        return None, OMIT_EMPTY
    if any(h > 0 and punct[h - 1] for h in ud.heads):
        return None, OMIT_NONLEAF
    directions = quote_directions(ud, punct, quote_xpos, tags_first=gold_tags)
    new_index = {}
    words: List[str] = []
    slots: List[List[str]] = [[]]
    for i in range(n):
        form = ud.forms[i]
        if punct[i]:
            if i in directions:
                form = _DIRECTED[form][0 if directions[i] else 1]
            slots[-1].append(form)
            continue
        new_index[i + 1] = len(words)
        if split_abbreviations and is_abbreviation(form):
            words.append(form[:-1])
            slots.append([ABBR])
        else:
            words.append(form)
            slots.append([])
    keep = [i for i in range(n) if not punct[i]]
    heads = [new_index[ud.heads[i]] if ud.heads[i] else -1 for i in keep]
    deprels = ["root" if ud.heads[i] == 0 else ud.deprels[i].lower() for i in keep]
    proj_heads = _projectivize(heads)
    return (
        PunctSentence(
            words=words,
            upos=[ud.upos[i] for i in keep],
            xpos=[ud.xpos[i] for i in keep],
            deprels=deprels,
            heads=proj_heads,
            slots=[tuple(s) for s in slots],
            sent_id=ud.sent_id,
            text=ud.text,
            nonprojective=proj_heads != heads,
        ),
        None,
    )


def detect_quote_xpos(path: Union[str, Path], sentences: Iterable[UDSentence]) -> bool:
    """Decide whether a file's straight quotes carry trustworthy PTB XPOS (English EWT).

    Why not everywhere: the PUD treebanks also tag quotes ```` `` ```` / ``''``, but
    wrongly (Hindi PUD tags every ``"`` as opening; Arabic PUD disagrees with the
    pairing evidence 7 % of the time against 1 % in EWT). So XPOS is trusted only
    for English files (name ``en_*``, as UD names them, or a file in a folder so named: the
    workflow's ``corpus/en_ewt/punct/train.conllu``) in which nearly every straight quote carries
    one of the two tags and both directions are common.
    """
    p = Path(path)
    if not any(part.lower().startswith("en_") for part in (p.name, p.parent.name, p.parent.parent.name)):
        return False
    opening = closing = other = 0
    for ud in sentences:
        for i, form in enumerate(ud.forms):
            if form in _DIRECTED and is_punct(ud.upos[i], ud.deprels[i]):
                tag = ud.xpos[i]
                opening += tag == _XPOS_OPEN
                closing += tag == _XPOS_CLOSE
                other += tag not in (_XPOS_OPEN, _XPOS_CLOSE)
    total = opening + closing + other
    return total > 0 and other <= 0.05 * total and min(opening, closing) >= 0.25 * total


def preprocess_sentences(
    sentences: Iterable[UDSentence], quote_xpos: bool = False
) -> Tuple[List[PunctSentence], PrepStats]:
    """Preprocess many sentences and count what happened to them."""
    stats = PrepStats()
    kept: List[PunctSentence] = []
    for ud in sentences:
        stats.sentences += 1
        stats.words += len(ud.forms)
        stats.punct_tokens += sum(u == "PUNCT" for u in ud.upos)
        stats.removed_tokens += sum(is_punct(u, d) for u, d in zip(ud.upos, ud.deprels))
        sent, reason = preprocess_sentence(ud, quote_xpos, gold_tags=True)
        if reason == OMIT_EMPTY:
            stats.omitted_empty += 1
        elif reason == OMIT_NONLEAF:
            stats.omitted_nonleaf += 1
        else:
            kept.append(sent)
            stats.kept += 1
            stats.nonprojective += sent.nonprojective
            for slot in sent.slots:
                stats.punct_types.update(slot)
    return kept, stats


def preprocess_file(
    path: Union[str, Path], quote_xpos: Optional[bool] = None
) -> Tuple[List[PunctSentence], PrepStats]:
    """Read and preprocess one CoNLL-U file (``quote_xpos=None``: :func:`detect_quote_xpos`)."""
    sentences = list(iter_conllu(path))
    if quote_xpos is None:
        quote_xpos = detect_quote_xpos(path, sentences)
    return preprocess_sentences(sentences, quote_xpos)


def subtree_spans(heads: List[int]) -> List[Tuple[int, int]]:
    """First and last word (0-based) of each node's subtree; heads are 0-based, -1 = root.

    For a projective tree the subtree is exactly that contiguous span.
    """
    f = forest(heads)
    return list(zip(f.first, f.last))


def load_split(path) -> Tuple[List[PunctSentence], PrepStats, bool]:
    """Preprocess one CoNLL-U file; also say whether its quote directions came from XPOS."""
    from spacy_punctgen.data.conllu import read_conllu  # noqa: F811

    uds = read_conllu(path)
    quote_xpos = detect_quote_xpos(path, uds)
    sents, stats = preprocess_sentences(uds, quote_xpos)
    return sents, stats, quote_xpos
