"""Between spaCy Docs and the depunctuated :class:`PunctSentence` the model scores.

The same preprocessing as for treebanks (quote direction, abbreviation dot,
projectivisation) is reused by building a :class:`UDSentence` from the tokens.
Where a user's parse hangs words below a punctuation token (which docs/model.md omits
from treebanks), we cannot omit the user's sentence: the dependents are lifted
to the punctuation's nearest non-punctuation ancestor instead (``lift=True``;
training on gold trees uses ``lift=False`` and omits such sentences, as the
treebank trainer does).  Whitespace tokens (spaCy's ``SPACE``) are neither words
nor punctuation: they are dropped the same way.

The way back, :func:`insert_punctuation`, builds a new Doc with restored
punctuation tokens inserted (see its docstring for spacing and attachment).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import HEAD
from spacy.tokens import Doc, Span

from spacy_punctgen.data.conllu import UDSentence
from spacy_punctgen.decode.render import OPENING, gap_marks, gap_spacing
from spacy_punctgen.errors import Errors
from spacy_punctgen.data.preprocess import (PunctSentence, detect_quote_xpos, is_punct, preprocess_sentence,
                                             subtree_spans)

# Universal relations of UD v2 and v1 (the paper's data is UD 1.4).
UD_RELATIONS = {
    "acl", "advcl", "advmod", "amod", "appos", "aux", "case", "cc", "ccomp", "clf", "compound",
    "conj", "cop", "csubj", "dep", "det", "discourse", "dislocated", "expl", "fixed", "flat",
    "goeswith", "iobj", "list", "mark", "nmod", "nsubj", "nummod", "obj", "obl", "orphan",
    "parataxis", "punct", "reparandum", "root", "vocative", "xcomp",
    "dobj", "nsubjpass", "csubjpass", "auxpass", "foreign", "mwe", "name", "neg", "remnant",
}


def _content_tokens(doc: Doc):
    return [t for t in doc if not t.is_space]


def _has_content(doc: Doc) -> bool:
    """Whether the Doc has a token other than whitespace (stops at the first)."""
    return not all(t.is_space for t in doc)


def check_doc(doc: Doc) -> None:
    """Raise a clear error unless the Doc carries a UD-labelled dependency parse.

    A Doc with no tokens other than whitespace needs no parse: it has no slots.
    """
    toks = _content_tokens(doc)
    if toks and not doc.has_annotation("DEP"):
        raise ValueError(Errors.E001)
    bad = [(t.i, t.text, t.dep_) for t in toks if t.dep_.split(":", 1)[0].lower() not in UD_RELATIONS]
    if bad:
        labels = sorted({d for _, _, d in bad})
        i, text, _ = bad[0]
        raise ValueError(Errors.E002.format(labels=labels[:8], token=text, i=i))


def _lift(heads: List[int], removed: List[bool]) -> List[int]:
    """Re-attach dependents of removed tokens (1-based heads, 0 = root) to the nearest kept
    ancestor; if no kept token is a root any more, the first kept token becomes the root."""
    n = len(heads)
    out = list(heads)
    for i in range(n):
        h = out[i]
        seen = 0
        while h > 0 and removed[h - 1] and seen <= n:
            h = heads[h - 1]
            seen += 1
        out[i] = h if seen <= n else 0
    if not any(out[i] == 0 and not removed[i] for i in range(n)):
        new_root = next(i for i in range(n) if not removed[i])
        for i in range(n):
            if out[i] == 0 or i == new_root:
                out[i] = 0 if i == new_root else new_root + 1
    return out


def _cycle(heads: Sequence[int]) -> Optional[List[int]]:
    """The positions (0-based) of a cycle of ``heads`` (1-based, 0 = root), or None."""
    state = [0] * len(heads)  # 0 unseen, 1 on the current path, 2 leads to a root
    for i in range(len(heads)):
        path, j = [], i
        while j >= 0 and state[j] == 0:
            state[j] = 1
            path.append(j)
            j = heads[j] - 1
        if j >= 0 and state[j] == 1:
            return path[path.index(j):]
        for k in path:
            state[k] = 2
    return None


def span_heads(sent: Span, heads: Optional[Sequence[int]] = None) -> List[int]:
    """The heads of the sentence's tokens within the sentence: 1-based, 0 for a root.

    The sentence's tree is taken as spaCy sees it (``Span.root``): a token whose head lies
    outside the sentence (a Doc whose sentence starts cut an arc) is one of its roots.
    ``heads``: the Doc's heads to use instead of its own (token indices, a root its own head).
    ValueError E016 when heads form a cycle (no tree at all).
    """
    start, end = sent.start, sent.end
    if heads is None:
        heads = [0 if (t.head.i == t.i or not start <= t.head.i < end) else t.head.i - start + 1 for t in sent]
    else:
        heads = [0 if (h == i or not start <= h < end) else h - start + 1
                 for i, h in zip(range(start, end), heads[start:end])]
    cycle = _cycle(heads)
    if cycle is not None:
        raise ValueError(Errors.E016.format(start=start, end=end - 1, cycle=sorted(start + i for i in cycle)))
    return heads


def span_to_ud(sent: Span, lift: bool = True, heads: Optional[Sequence[int]] = None,
               deps: Optional[Sequence[str]] = None) -> Tuple[UDSentence, List[int]]:
    """The sentence as a :class:`UDSentence` (whitespace tokens dropped) and, per UD token,
    its index in the Doc.  Its tree is :func:`span_heads`'s (``heads``/``deps``: the Doc's
    heads and labels to use instead of its own)."""
    all_toks = list(sent)
    labels = [t.dep_ for t in all_toks] if deps is None else list(deps[sent.start:sent.end])
    heads = span_heads(sent, heads)
    space = [t.is_space for t in all_toks]
    doc, end = sent.doc, sent.end
    # whether the token after each one is whitespace (a Token made only for the sentence's last)
    space_next = space[1:] + [end < len(doc) and doc[end].is_space]
    if any(space) and not all(space):
        heads = _lift(heads, space)
    keep = [i for i, s in enumerate(space) if not s]
    new = {old + 1: k + 1 for k, old in enumerate(keep)}
    heads = [new[heads[i]] if heads[i] else 0 for i in keep]
    toks = [all_toks[i] for i in keep]
    deprels = ["root" if h == 0 else labels[i].lower() for i, h in zip(keep, heads)]
    punct = [is_punct(t.pos_, d) for t, d in zip(toks, deprels)]
    if lift and any(punct) and not all(punct):
        heads = _lift(heads, punct)
        deprels = ["root" if h == 0 else (d if d != "root" else "dep") for h, d in zip(heads, deprels)]
    ud = UDSentence(
        ids=list(range(1, len(toks) + 1)),
        forms=[t.text for t in toks],
        upos=[t.pos_ or "X" for t in toks],
        xpos=[t.tag_ or "_" for t in toks],
        heads=heads,
        deprels=deprels,
        space_after=[bool(all_toks[i].whitespace_) or space_next[i] for i in keep],
        text=sent.text,
    )
    return ud, [t.i for t in toks]


def span_to_sentence(sent: Span, quote_xpos: bool = False, lift: bool = True,
                     heads: Optional[Sequence[int]] = None, deps: Optional[Sequence[str]] = None
                     ) -> Tuple[Optional[PunctSentence], List[int]]:
    """The depunctuated sentence and, per word, its token index in the Doc (``heads``/``deps``:
    see :func:`span_to_ud`).

    ``(None, [])`` when the sentence is only punctuation/whitespace, or (``lift=False``)
    when punctuation heads a word.
    """
    ud, index = span_to_ud(sent, lift=lift, heads=heads, deps=deps)
    if not ud.forms:
        return None, []
    ps, _ = preprocess_sentence(ud, quote_xpos=quote_xpos)
    if ps is None:
        return None, []
    words = [i for i, u, d in zip(index, ud.upos, ud.deprels) if not is_punct(u, d)]
    return ps, words


def _is_tree_of(heads: Sequence[int], start: int, end: int) -> bool:
    """Whether ``heads`` (Doc token indices, a root its own head) restricted to the tokens
    ``start..end-1`` is one tree of them: every head inside, one root, no cycle."""
    if any(not start <= h < end for h in heads[start:end]):
        return False
    if sum(h == i for i, h in zip(range(start, end), heads[start:end])) != 1:
        return False
    return _cycle([0 if h == i else h - start + 1 for i, h in zip(range(start, end), heads[start:end])]) is None


def _count(xs) -> str:
    return "no" if xs is None else str(len(xs))


def punct_sentences(doc: Doc, quote_xpos: bool = False, lift: bool = True,
                    heads: Optional[Sequence[int]] = None, deps: Optional[Sequence[str]] = None
                    ) -> Iterator[Tuple[int, Optional[PunctSentence], List[int]]]:
    """``(sentence index, PunctSentence or None, word token indices)`` per sentence of a Doc.

    A sentence of punctuation only (a parser that splits ``GoogleOS ?`` into two sentences)
    belongs to the sentence before it: its marks are that sentence's final slot, and it is
    yielded as ``(index, None, [])``.

    ``heads``/``deps`` (one per token of the Doc: head token index, a root its own head; label):
    another analysis of the Doc's words, e.g. one of the parser's beam
    (:func:`spacy_punctgen.parsing.kbest.alternative_trees`).  The sentences stay the Doc's
    (``doc.sents``) and each is read with these heads and labels; a sentence (with the
    punctuation-only ones joined to it) that they do not make one tree of, i.e. where a head
    lies outside it, or there are several roots, or a cycle, is yielded as ``(index, None, [])``.
    """
    if not _has_content(doc):
        return
    override = heads is not None or deps is not None
    if override and (heads is None or deps is None or len(heads) != len(doc) or len(deps) != len(doc)):
        raise ValueError(Errors.E099.format(
            problem=f"another analysis needs heads and deps, one per token of the Doc ({len(doc)}), "
                    f"not {_count(heads)} heads and {_count(deps)} deps"))
    sents = list(doc.sents)
    # the Doc's heads as token indices, read once (``span_heads`` gives the same trees from them
    # as from each token's ``head``, without making a Token per head)
    tree_heads = heads if override else (np.arange(len(doc), dtype=np.int64)
                                         + doc.to_array(HEAD).astype(np.int64)).tolist()
    if override:
        only_punct = [all(t.is_space or is_punct(t.pos_, deps[t.i].lower()) for t in sent) for sent in sents]
    else:
        only_punct = [all(t.is_space or is_punct(t.pos_, t.dep_.lower()) for t in sent) for sent in sents]
    si = 0
    while si < len(sents):
        last = si
        while not only_punct[si] and last + 1 < len(sents) and only_punct[last + 1]:
            last += 1
        ps, words = None, []
        if override and not only_punct[si] and not _is_tree_of(heads, sents[si].start, sents[last].end):
            for sj in range(si, last + 1):
                yield sj, None, []
            si = last + 1
            continue
        if last > si:
            try:
                ps, words = span_to_sentence(doc[sents[si].start:sents[last].end], quote_xpos=quote_xpos, lift=lift,
                                             heads=tree_heads, deps=deps)
            except ValueError:  # the marks' own heads form no tree: leave them out as before
                last = si
        if last == si:
            ps, words = span_to_sentence(sents[si], quote_xpos=quote_xpos, lift=lift, heads=tree_heads, deps=deps)
        yield si, ps, words
        for sj in range(si + 1, last + 1):
            yield sj, None, []
        si = last + 1


def gold_sentences(docs: Sequence[Doc], quote_xpos: bool = False) -> List[PunctSentence]:
    """Treebank-style sentences of gold-parsed Docs (Examples' references): sentences whose
    punctuation heads a word are omitted, like the treebank trainer does; Docs without a
    parse are skipped."""
    out = []
    for doc in docs:
        if not doc.has_annotation("DEP"):
            continue
        check_doc(doc)
        out.extend(ps for _, ps, _ in punct_sentences(doc, quote_xpos=quote_xpos, lift=False) if ps is not None)
    return out


def docs_quote_xpos(docs: Sequence[Doc], lang: str = "en") -> bool:
    """Whether straight quotes carry PTB XPOS (``\\`\\```/``''``), decided like for a treebank
    file (:func:`detect_quote_xpos`; it trusts XPOS only for English, which it reads from the
    file name, hence the ``{lang}_`` name)."""
    uds = [span_to_ud(s)[0] for d in docs if d.has_annotation("DEP") for s in d.sents]
    return detect_quote_xpos(Path(f"{lang}_docs"), uds)


def doc_from_ud(vocab, ud: UDSentence) -> Doc:
    """A spaCy Doc carrying a UD sentence's gold tokens, UPOS, XPOS and tree."""
    heads = [(h - 1) if h > 0 else i for i, h in enumerate(ud.heads)]
    deps = ["ROOT" if h == 0 else d for h, d in zip(ud.heads, ud.deprels)]
    return Doc(vocab, words=list(ud.forms), spaces=list(ud.space_after), pos=list(ud.upos),
               tags=[x if x != "_" else "" for x in ud.xpos], heads=heads, deps=deps,
               sent_starts=[True] + [False] * (len(ud.forms) - 1))


# ------------------------------------------------------------------ restoration
def punct_attachment(heads: Sequence[int], slot: int, opening: bool,
                     spans: Optional[Sequence[Tuple[int, int]]] = None) -> int:
    """The word (0-based, of the depunctuated sentence) a mark restored at ``slot`` hangs from.

    UD attaches punctuation to the head of the phrase it delimits.  A closing or
    medial mark goes to the highest constituent that ends just before the slot (the
    sentence-final period reaches the root; a comma after a fronted clause, that clause's
    head); an opening mark, or a closing one where no constituent ends there, to the
    highest constituent starting just after the slot.  Both arcs are projective: the
    mark is adjacent to the constituent's yield.  ``spans`` (:func:`subtree_spans` of
    ``heads``) may be passed by a caller that attaches several marks to one tree.
    """
    n = len(heads)
    if spans is None:
        spans = subtree_spans(list(heads))

    def highest(w: int, edge: int, side: int) -> Optional[int]:
        if spans[w][side] != edge:
            return None
        while heads[w] >= 0 and spans[heads[w]][side] == edge:
            w = heads[w]
        return w

    left = highest(slot - 1, slot - 1, 1) if slot > 0 else None
    right = highest(slot, slot, 0) if slot < n else None
    first, second = (right, left) if opening else (left, right)
    if first is not None:
        return first
    if second is not None:
        return second
    return next(w for w in range(n) if heads[w] < 0)  # non-projective leftovers: the root


def insert_punctuation(doc: Doc) -> Doc:
    """A new Doc: ``doc``'s words with the punctuation restored by a ``punctgen`` component in
    ``mode="restore"`` inserted (``doc`` itself is not changed).

    * Punctuation and whitespace tokens already in ``doc`` are dropped: restoration
      replaces the punctuation.
    * Spacing: a mark closes up to the word before it and is followed by the gap's space;
      opening marks (``(``, ``“``, ...) take the space before them and close up to the word
      after; dashes stand between spaces; ``ABBR.`` is written ``.`` and a point after a word
      ending in ``.`` is absorbed: the one policy of :mod:`spacy_punctgen.decode.render`, which
      the ``restore`` command uses too.
    * Each inserted token is UPOS ``PUNCT``, dependency ``punct``, attached by
      :func:`punct_attachment` (UD style: to the head of the phrase it delimits).
    * Words keep their text, tag, POS, morphology, lemma and label; a word whose head was
      dropped hangs from its nearest kept ancestor.  Sentence starts and entities carry over.
    """
    entries = doc._.restored_punct
    if entries is None:
        raise ValueError(Errors.E006)
    by_sent = {}
    for e in entries:
        by_sent.setdefault(e["sentence"], []).append(e)
    toks: List[dict] = []  # one dict per output token
    new_index = {}  # doc token index -> output index
    bounds = [(sent.start, sent.end) for sent in doc.sents] if _has_content(doc) else []
    sentences = list(punct_sentences(doc))
    # each sentence's end for spacing: where the next sentence's first word is (the dropped
    # tokens between hold the gap's space, a punctuation-only sentence included), or the Doc's end
    starts = [words[0] for _, ps, words in sentences if ps is not None and words] + [len(doc)]
    next_start = iter(starts[1:])
    for si, ps, words in sentences:
        if ps is None:
            continue
        end = next(next_start)
        slots = sorted(by_sent.get(si, []), key=lambda e: e["slot"])
        if [e["slot"] for e in slots] != list(range(len(words) + 1)):
            raise ValueError(Errors.E007.format(sentence=si, n=len(words) + 1, got=len(slots)))
        n = len(words)
        spans = subtree_spans(list(ps.heads))
        sent_toks: List[dict] = []
        word_out: List[int] = []
        for i, e in enumerate(slots):
            prev = doc[words[i - 1]] if i else None
            marks = gap_marks(prev.text if prev is not None else None, e["surface"])
            if prev is None:
                flags = [False] * (len(marks) + 1)
            else:
                # the gap is spaced if any dropped token in it was (``word! next``: the space
                # after the dropped ``!`` separates the words)
                stop = doc[words[i]].i if i < n else end
                spaced = any(bool(t.whitespace_) or t.is_space for t in doc[prev.i:stop])
                flags = gap_spacing(marks, spaced)
                sent_toks[-1]["space"] = flags[0]
            for j, m in enumerate(marks):
                sent_toks.append({"text": m, "space": flags[j + 1], "pos": "PUNCT", "tag": "", "dep": "punct",
                                  "lemma": m, "morph": "", "attach": punct_attachment(ps.heads, i, m in OPENING, spans)})
            if i < n:
                w = doc[words[i]]
                word_out.append(len(toks) + len(sent_toks))
                new_index[w.i] = word_out[-1]
                sent_toks.append({"text": w.text, "space": bool(w.whitespace_), "pos": w.pos_, "tag": w.tag_,
                                  "dep": w.dep_, "lemma": w.lemma_, "morph": str(w.morph), "tok": w, "w": i})
        if sent_toks:
            sent_toks[0]["start"] = True
        for t in sent_toks:
            t["word_out"] = word_out
            t["ps_heads"] = ps.heads
            t["bounds"] = bounds[si]
        toks.extend(sent_toks)
    heads = []
    for k, t in enumerate(toks):
        if "attach" in t:
            heads.append(t["word_out"][t["attach"]])
            continue
        tok = t["tok"]
        lo, hi = t["bounds"]  # the sentence's tree as spaCy sees it: arcs leaving it are cut
        if tok.head.i == tok.i or not lo <= tok.head.i < hi:
            heads.append(k)
            continue
        h = tok.head
        while h.i not in new_index and h.head.i != h.i and lo <= h.head.i < hi:
            h = h.head
        if h.i in new_index:
            heads.append(new_index[h.i])
        else:  # hangs from a dropped root: use the depunctuated tree
            ph = t["ps_heads"][t["w"]]
            heads.append(k if ph < 0 else t["word_out"][ph])
    deps = ["ROOT" if h == k else t["dep"] for k, (h, t) in enumerate(zip(heads, toks))]
    deps = ["dep" if d == "ROOT" and h != k else d for k, (h, d) in enumerate(zip(heads, deps))]
    if not toks:
        return Doc(doc.vocab, words=[])
    out = Doc(doc.vocab, words=[t["text"] for t in toks], spaces=[t["space"] for t in toks],
              pos=[t["pos"] for t in toks], tags=[t["tag"] for t in toks], deps=deps, heads=heads,
              lemmas=[t["lemma"] for t in toks], morphs=[t["morph"] for t in toks],
              sent_starts=[bool(t.get("start")) for t in toks])
    ents = []
    for ent in doc.ents:
        inside = [new_index[t.i] for t in ent if t.i in new_index]
        if inside:
            ents.append(Span(out, min(inside), max(inside) + 1, label=ent.label_))
    if ents:
        out.ents = ents
    return out
