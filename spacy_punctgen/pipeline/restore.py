"""Restoration of parsed Docs: the component's ``mode="restore"`` (paper §6.1).

Each sentence's slots are decoded from
its tree or trees (:mod:`spacy_punctgen.decode`), and the restored text is the Doc's own text
with marks *inserted* (:func:`slot_insertions`), so that every character the user wrote stays,
in order: marks go only into the gaps between whitespace-separated tokens (before the
whitespace, openers after it), a gap that already holds a mark keeps it and gets nothing more,
and a gap inside a token (``credit's``, ``2013-2014``, ``🍕🍺``) gets nothing. Languages
written without spaces between words (:data:`UNSPACED_LANGS`) take marks between any two
words.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from spacy_punctgen.decode.mbr import SlotChoice, check_empty_weight, restore_mixtures, restore_sentence, restore_sentences
from spacy_punctgen.data.preprocess import ABBR
from spacy_punctgen.decode.render import DASHES, OPENING, gap_marks
from spacy_punctgen.formats.insertions import token_spans
from spacy_punctgen.decode.incremental_evidence import combine_evidence
from spacy_punctgen.decode.lexical import restore_with_lexical
from spacy_punctgen.decode.mixture import restore_weighted_mixtures
from spacy_punctgen.parsing.kbest import alternative_trees, check_weighting, kbest_weighting
from spacy_punctgen.pipeline.doc_convert import punct_sentences

#: languages written without spaces between words: marks may go between any two words
UNSPACED_LANGS = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo"})


@dataclass(frozen=True)
class RestoreSettings:
    """How the component restores: the decoder (``method``, ``n_samples``, ``seed``), the empty
    string's weight in the risk, and whether marks already in the text are replaced."""

    method: str = "marginal"
    n_samples: int = 1000
    seed: int = 0
    empty_weight: float = 1.0
    repunctuate: bool = False
    lexical_weight: Optional[float] = None  # the lexical expert's (None: its own; 0: not used)
    sentence_end_weight: Optional[float] = None  # the sentence-end expert's (None: its own; 0: not used)



# ------------------------------------------------------------- the component's path
def _tree_sets(doc, sents: List[tuple], quote_xpos: bool) -> Tuple[List[List[Any]], List[List[float]]]:
    """Per sentence of ``sents`` (the Doc's own analysis), its trees: its own, then each other
    analysis that a ``punctgen_kbest`` component left in the Doc
    (:func:`~spacy_punctgen.parsing.kbest.alternative_trees`) that is one tree of the sentence
    with the same words; and their beam probabilities."""
    own_prob, others = alternative_trees(doc)
    sets = [[ps] for _, ps, _ in sents]
    probs = [[own_prob if own_prob is not None else 1.0] for _ in sents]
    for alt in others:
        theirs = {si: ps for si, ps, _ in punct_sentences(doc, quote_xpos=quote_xpos, heads=alt.heads, deps=alt.deps)}
        for q, (si, ps, _) in enumerate(sents):
            other = theirs.get(si)
            if other is not None and list(other.words) == list(ps.words):
                sets[q].append(other)
                probs[q].append(alt.prob)
    return sets, probs


def _beam_weights(weights: List[List[float]]) -> List[List[float]]:
    """The beam's tree probabilities as mixture weights (a sentence whose trees all have 0: equal)."""
    return [w if sum(w) > 0 else [1.0] * len(w) for w in weights]


def decode_tree_sets(model, tree_sets: List[List[Any]], weights: List[List[float]], weighting: str,
                     settings: RestoreSettings, evidence: Optional[List[Any]] = None,
                     lexical_weight: Union[float, Sequence[float]] = 0.0) -> Iterable[List[SlotChoice]]:
    """The slot choices of each sentence from its trees. The deterministic decoders take all
    sentences in one call; the sampled ones one sentence at a time, so that a sentence's draws
    never depend on the batch it came in. One tree each: exactly the one-tree decoders; several:
    their mixture, weighed equally (``"uniform"``) or by the beam's probabilities renormalised
    over the trees kept (``"beam"``)."""
    method, ew = settings.method, check_empty_weight(settings.empty_weight, settings.method)
    check_weighting(weighting, method)
    if evidence is not None:  # the experts' evidence beside the trees (expert_setting)
        return iter(restore_with_lexical(model, tree_sets, evidence, lexical_weight, ew,
                                         _beam_weights(weights) if weighting == "beam" else None))
    deterministic = method == "marginal"
    if all(len(ts) == 1 for ts in tree_sets):
        trees = [ts[0] for ts in tree_sets]
        if deterministic:
            return iter(restore_sentences(model, trees, method=method, empty_weight=ew))
        return (restore_sentence(model, ps, method=method, n_samples=settings.n_samples, seed=settings.seed)
                for ps in trees)
    if weighting == "beam":
        return iter(restore_weighted_mixtures(model, tree_sets, _beam_weights(weights), ew))
    if deterministic:
        return iter(restore_mixtures(model, tree_sets, method=method, empty_weight=ew))
    return (restore_mixtures(model, [ts], method=method, n_samples=settings.n_samples, seed=settings.seed)[0]
            for ts in tree_sets)


def expert_setting(expert, weight: Optional[float], settings: RestoreSettings) -> Tuple[Optional[Any], float]:
    """An expert (the lexical or the sentence-end one) and its weight, when restoration uses it:
    the ``"marginal"`` decoder and a weight above 0 (``weight``, the setting, or if None the
    expert's own)."""
    if expert is None or settings.method != "marginal":
        return None, 0.0
    weight = expert.weight if weight is None else weight
    return (expert, weight) if weight > 0 else (None, 0.0)


def slot_evidence(docs: List[Any], sents: List[List[tuple]], lexical, lexical_weight: float, sentence_end,
                  sentence_end_weight: float) -> Tuple[Optional[List[Any]], Any]:
    """Per sentence, the evidence rows multiplied into its slots and the weight they are raised
    to, or ``(None, 0.0)`` when no expert applies: the lexical expert's over every sentence; the
    sentence-end expert's over the sentences of a Doc the pipeline parsed as one sentence
    (``doc._.one_sentence_input``), multiplied into the lexical rows already raised to their weight
    (those sentences then take weight 1)."""
    lex = None if lexical is None else [
        [q for q in lexical.sentence_evidence([ps for _, ps, _ in doc_sents])] for doc_sents in sents]
    single = [sentence_end is not None and bool(doc._.one_sentence_input) for doc in docs]
    if lex is None and not any(single):
        return None, 0.0
    evidence: List[Any] = []
    weights: List[float] = []
    for k, (doc_sents, one) in enumerate(zip(sents, single)):
        rows = lex[k] if lex is not None else [None] * len(doc_sents)
        if not one:
            evidence.extend(rows)
            weights.extend([lexical_weight] * len(rows))
            continue
        ends = sentence_end.slot_evidence([ps.words for _, ps, _ in doc_sents], sentence_end_weight)
        for q, e in zip(rows, ends):
            evidence.append(combine_evidence([(q, lexical_weight), (e, 1.0)]))
            weights.append(1.0)
    return evidence, weights


def restore_parsed_docs(model, docs: List[Any], settings: RestoreSettings, quote_xpos: bool,
                        sentence_end=None) -> List[dict]:
    """Per Doc, what the component sets: ``restored_punct`` (one entry per slot) and
    ``insertions`` into ``doc.text`` (:func:`slot_insertions`). Each Doc is converted to
    sentences once. ``sentence_end``: the sentence-end expert for the Docs parsed as one sentence
    (:func:`slot_evidence`), or None."""
    sents = [[(si, ps, wt) for si, ps, wt in punct_sentences(doc, quote_xpos=quote_xpos) if ps is not None]
             for doc in docs]
    tree_sets: List[List[Any]] = []
    weights: List[List[float]] = []
    weighting = "uniform"
    for doc, doc_sents in zip(docs, sents):
        sets, probs = _tree_sets(doc, doc_sents, quote_xpos)
        tree_sets.extend(sets)
        weights.extend(probs)
        weighting = kbest_weighting(doc) or weighting
    # the slots the text fixes are evidence (decode/evidence.py); the others are decoded given them
    masks = [m for doc, doc_sents in zip(docs, sents)
             for m in observed_slots(doc, [wt for _, _, wt in doc_sents], settings.repunctuate)]
    for ts, mask in zip(tree_sets, masks):
        for ps in ts:
            ps.observed = mask
    lexical, lexical_weight = expert_setting(getattr(model, "lexical", None), settings.lexical_weight, settings)
    sentence_end, sentence_end_weight = expert_setting(sentence_end, settings.sentence_end_weight, settings)
    evidence, lexical_weight = slot_evidence(docs, sents, lexical, lexical_weight, sentence_end, sentence_end_weight)
    choices = decode_tree_sets(model, tree_sets, weights, weighting, settings, evidence, lexical_weight)
    out = []
    for doc, doc_sents in zip(docs, sents):
        decoded = [(wt, next(choices)) for _, _, wt in doc_sents]
        entries, insertions, deletions = slot_insertions(doc, [si for si, _, _ in doc_sents], decoded,
                                                         settings.repunctuate)
        out.append({"restored_punct": entries, "insertions": insertions, "deletions": deletions})
    return out


def _gap(doc, text: str, a: int, b: int, unspaced: bool) -> Tuple[int, int, List[Any], bool]:
    """The gap between word tokens ``a`` (-1: the Doc's start) and ``b`` (``len(doc)``: its end):
    its start and stop offsets in ``text`` (``doc.text``, which spaCy builds anew on every read,
    so it is passed in), the mark tokens in it, and whether marks may be inserted there (it holds
    whitespace, or is an end of the Doc, or the language has no spaces)."""
    start = doc[a].idx + len(doc[a].text) if a >= 0 else 0
    stop = doc[b].idx if b < len(doc) else len(text)
    marks = [doc[k] for k in range(a + 1, b) if not doc[k].is_space] if b > a + 1 else []
    free = a < 0 or b >= len(doc) or unspaced or any(ch.isspace() for ch in text[start:stop])
    return start, stop, marks, free


def slot_insertions(doc, sentence_ids: Sequence[int], decoded: Sequence[Tuple[List[int], List[SlotChoice]]],
                    repunctuate: bool = False) -> Tuple[List[dict], List[Tuple[int, str]], List[Tuple[int, int]]]:
    """The restored punctuation of ``doc`` as edits of ``doc.text``.

    ``decoded``: per sentence, its word tokens and each slot's choice. A slot whose gap holds
    marks already keeps exactly those (reported ``fixed``, with the marks written there); a gap
    inside a token gets nothing (``fixed``, empty); a free gap gets the choice: closing marks at
    the end of the word before it, openers (and what follows them) at the start of the word after
    it. With ``repunctuate`` the marks at the edges of whitespace-separated tokens are deleted
    first (``deletions``: (start, end) spans) and those gaps are free; marks inside a token stay.

    Returns the entries of ``doc._.restored_punct``, the insertions ``(offset, text)`` in
    ``doc.text`` (sorted, stable), and the deletions."""
    text = doc.text
    entries: List[dict] = []
    insertions: List[list] = []  # [offset, side, entry, marks]
    deletions: List[Tuple[int, int]] = []
    gaps = _slot_gaps(doc, text, [wt for wt, _ in decoded], repunctuate, deletions)
    for si, (wt, choices) in zip(sentence_ids, decoded):
        for i, choice in enumerate(choices):
            a, b, start, stop, marks, free = next(gaps)
            prev_word = doc[a].text if a >= 0 else None
            entry = {"sentence": si, "slot": i, "after": wt[i - 1] if i else None}
            if marks or not free:
                entries.append({**entry, "surface": tuple(t.text for t in marks), "prob": 1.0, "fixed": True})
                continue
            surface = tuple(m for m in choice.surface if is_insertable(m))
            written = gap_marks(prev_word, surface)
            k = 0
            while k < len(written) and written[k] not in OPENING:
                k += 1
            closing, opening = written[:k], written[k:]
            spaced = any(ch.isspace() for ch in text[start:stop])
            close = [(" " + m) if (m in DASHES and spaced) else m for m in closing]
            e = len(entries)
            if a < 0:  # nothing before: every mark closes up to the first word
                insertions.append([stop, 0, e, list(written)])
            elif b >= len(doc):  # nothing after: every mark closes up to the last word
                insertions.append([start, 0, e, close + list(opening)])
            else:
                insertions.append([start, 0, e, close])
                insertions.append([stop, 1, e, list(opening)])
            entries.append({**entry, "surface": surface, "prob": float(choice.prob), "fixed": False})
    insertions.sort(key=lambda x: (x[0], x[1]))  # stable: slots in order at one offset
    _balance(text, insertions, entries)
    return entries, [(off, "".join(marks)) for off, _, _, marks in insertions if marks], sorted(deletions)


def is_insertable(mark: str) -> bool:
    """Whether restoration may write the model's symbol ``mark``: a mark of punctuation only (the
    abbreviation dot too). A treebank's inventory may hold a "mark" with a letter or digit in it
    (EWT has ``1?!?!?``), or ``<unk>``; writing one would add a character that is not a mark."""
    return mark == ABBR or (bool(mark) and not any(ch.isalnum() for ch in mark))


def _slot_gaps(doc, text: str, word_lists: Sequence[Sequence[int]], repunctuate: bool,
               deletions: Optional[List[Tuple[int, int]]] = None) -> Iterable[tuple]:
    """Per slot of each sentence (its word tokens ``word_lists[k]``), in order: the word tokens
    around its gap (``a``, ``b``), the gap's offsets in ``text``, the mark tokens it keeps and
    whether marks may be inserted there (:func:`_gap`). With ``repunctuate`` the marks at the
    edges of whitespace-separated tokens are not kept, and their spans are appended to
    ``deletions`` (once each)."""
    unspaced = doc.lang_ in UNSPACED_LANGS
    order = [w for wt in word_lists for w in wt]
    nxt = {w: (order[k + 1] if k + 1 < len(order) else len(doc)) for k, w in enumerate(order)}
    prv = {w: (order[k - 1] if k else -1) for k, w in enumerate(order)}
    first = order[0] if order else len(doc)
    deleted = set()
    for wt in word_lists:
        n = len(wt)
        for i in range(n + 1):
            a = wt[i - 1] if i else prv[wt[0]]
            b = wt[i] if i < n else nxt[wt[-1]] if n else first
            start, stop, marks, free = _gap(doc, text, a, b, unspaced)
            if marks and repunctuate and free and all(_at_token_edge(text, t) for t in marks):
                for t in marks:
                    if t.i not in deleted and deletions is not None:
                        deleted.add(t.i)
                        deletions.append((t.idx, t.idx + len(t.text)))
                marks = []
            yield a, b, start, stop, marks, free


def observed_slots(doc, word_lists: Sequence[Sequence[int]], repunctuate: bool = False) -> List[Tuple[bool, ...]]:
    """Per sentence, per slot: whether the text fixes it (its gap keeps marks the user wrote, or
    is inside a token and can take none): the slots restoration conditions the others on."""
    gaps = _slot_gaps(doc, doc.text, word_lists, repunctuate)
    return [tuple(bool(marks) or not free for _, _, _, _, marks, free in itertools.islice(gaps, len(wt) + 1))
            for wt in word_lists]


#: paired marks: an inserted closer needs an opener before it, an inserted opener a closer after it
PAIRS = {"\u201c": "\u201d", "\u2018": "\u2019", "(": ")", "[": "]", "{": "}", "\u00ab": "\u00bb",
         "\u2039": "\u203a", "\u300c": "\u300d", "\u300e": "\u300f", "\uff08": "\uff09"}
_CLOSERS = {c: o for o, c in PAIRS.items()}


def _balance(text: str, insertions: List[list], entries: List[dict]) -> None:
    """Leave out inserted paired marks that pair with nothing (``fun,” i think``; ``((((`` with
    no closing bracket): each inserted closer must close an opener before it (inserted or
    written), each inserted opener be closed after it. The text's own marks are never touched;
    the entries of ``restored_punct`` lose the marks left out."""
    events = [(off, 0, q, j) for q, (off, _, _, marks) in enumerate(insertions) for j, _ in enumerate(marks)]
    events += [(i, 1, -1, -1) for i, ch in enumerate(text) if ch in PAIRS or ch in _CLOSERS]
    events.sort(key=lambda e: (e[0], e[1]))
    stack, drop = [], set()
    for off, kind, q, j in events:
        mark = text[off] if kind == 1 else insertions[q][3][j].strip()
        if mark in PAIRS:
            stack.append((mark, q, j))
        elif mark in _CLOSERS:
            if stack and stack[-1][0] == _CLOSERS[mark]:
                stack.pop()
            elif kind == 0:
                drop.add((q, j))
    drop.update((q, j) for _, q, j in stack if q >= 0)
    for q, j in sorted(drop, reverse=True):
        mark = insertions[q][3].pop(j).strip()
        entry = entries[insertions[q][2]]
        surface = list(entry["surface"])
        if mark in surface:
            surface.remove(mark)
        entry["surface"] = tuple(surface)


def _at_token_edge(text: str, tok) -> bool:
    """Whether the mark token sits at an edge of its whitespace-separated token (whitespace or an
    end of the text on one side of it)."""
    lo, hi = tok.idx, tok.idx + len(tok.text)
    return lo == 0 or text[lo - 1].isspace() or hi == len(text) or text[hi].isspace() or \
        (hi < len(text) and not text[hi].isalnum()) or (lo > 0 and not text[lo - 1].isalnum())


def apply_edits(text: str, insertions: Sequence[Tuple[int, str]], deletions: Sequence[Tuple[int, int]] = ()) -> str:
    """``text`` with the insertions ``(offset, string)`` made and the deleted spans ``(start, end)``
    left out (offsets into ``text``; insertions at one offset in their order)."""
    out: List[str] = []
    pos = 0
    events = sorted([(lo, 0, hi) for lo, hi in deletions] + [(off, 1, s) for off, s in insertions],
                    key=lambda e: (e[0], e[1]))
    for off, kind, value in events:
        if off > pos:
            out.append(text[pos:off])
            pos = off
        if kind == 0:
            pos = max(pos, value)
        else:
            out.append(value)
    out.append(text[pos:])
    return "".join(out)


def token_edits(text: str, insertions: Sequence[Tuple[int, str]],
                deletions: Sequence[Tuple[int, int]] = ()) -> Dict[str, Any]:
    """``doc._.restored_edits``: the insertions and deletions, and per whitespace-separated token
    of ``text`` its span and the marks inserted ``before`` and ``after`` it (enough to map the
    restored text back to the input's characters and words, e.g. for subtitles or word times)."""
    tokens = [{"start": lo, "end": hi, "before": "", "after": ""} for lo, hi in token_spans(text)]
    starts = {t["start"]: t for t in tokens}
    ends = {t["end"]: t for t in tokens}
    for off, s in insertions:
        if off in ends:
            ends[off]["after"] += s
        elif off in starts:
            starts[off]["before"] += s
        else:  # inside a run of characters (a language written without spaces)
            holder = next((t for t in tokens if t["start"] < off < t["end"]), None)
            if holder is not None:
                holder.setdefault("inside", []).append((off - holder["start"], s))
    return {"insertions": [tuple(x) for x in insertions], "deletions": [tuple(x) for x in deletions],
            "tokens": tokens}


#: the unknown share of a text's words above which it probably is not the model's language
FOREIGN_SHARE = 0.5
#: the fewest words the share is judged on
FOREIGN_MIN_WORDS = 8


def unknown_word_share(model, docs) -> Tuple[int, float]:
    """How many alphabetic words ``docs`` hold and the share of them the model never saw in
    training (in any case): most words unknown means the text is probably in another language."""
    seen = model.inventory.word_counts
    words = [t.text for doc in docs for t in doc if t.is_alpha]
    unknown = sum(1 for w in words if w not in seen and w.lower() not in seen)
    return len(words), (unknown / len(words) if words else 0.0)
