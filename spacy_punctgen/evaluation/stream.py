"""Punctuation restoration scored on long unsegmented, lowercased word streams.

Why: restoration of a transcript is judged where the marks fall between its words, not per
treebank slot. A *stream* is a sequence of words without punctuation; each word is followed by
one *gap*, and a gap's marks (a string, possibly empty or of several marks) are put in a
*class* by :func:`stream_class` (middle marks ``M`` / full stops ``F``, as the cascaded
joint parser-punctuator of "Punctuation Prediction with Transition-based Parsing" evaluates)
or :func:`ted_class` (``COMMA`` / ``PERIOD`` / ``QUESTION``, the IWSLT TED-talk benchmark's
labels). The gap before the first word is not scored (it never holds M or F in the gold);
the gap after the last word is (where a stream ends a sentence, its full stop is there).

Classes of a gap (docs/evaluation_streams.md):

* ``F`` if the gap holds any of ``. ? !`` (so ``?!``, ``...`` and ``, .`` are F: the stronger
  boundary wins, as the paper's table maps "multiple punctuations" to F), else ``M`` if it
  holds any of ``, ; :``, else none (quotes, brackets, dashes and nothing at all).
* TED: ``QUESTION`` if any ``?``; else ``PERIOD`` if any of ``. ! ;``; else ``COMMA`` if any of
  ``, :`` or a dash (``-``, ``–``, ``—``); else none (the benchmark's folding of marks).

Scores (:func:`score_labels`): per class ``c``, a gap is a true positive when gold and
prediction are both ``c``, a false positive when only the prediction is ``c``, a false
negative when only the gold is; ``overall`` is the micro average over the classes (a comma
where the gold has a period is one false positive and one false negative: the IWSLT
convention), and ``mixed`` counts a gap as right when both hold *some* class (punctuated or
not, the type ignored: the paper's "mixed" column, i.e. segmentation).

Predicted text is mapped back to the words by :func:`align_gaps` (the characters of the words
are matched in order; every unmatched non-alphanumeric character is a mark of the gap it falls
in), so any system that returns text can be scored, whatever its spacing.

Sentence boundaries (:func:`boundary_scores`): a restored text defines its own sentences, so
a gap whose predicted marks hold any of ``. ? !`` (:func:`mark_boundaries`) is a predicted
boundary, scored against the gold sentence ends (:func:`gold_boundaries`: the last word of each
gold sentence of a CoNLL-U stream, or a ``.``/``?`` label in TED). The gap after each restored
stream's last word is left out (a stream's end is a boundary whatever the system does), so a
TED dev block restored whole loses one position and each 10-sentence stream one. The same
scores of a parser's own sentence starts (:func:`start_boundaries`) say what restoration
changed.

Significance: :func:`paired_randomization_test` swaps two systems' predictions unit by unit
(stream by stream) and recomputes the F1 difference (approximate randomisation); for an
additive loss it is the sign-flip test of :func:`~spacy_punctgen.evaluation.metrics.paired_permutation_test`,
which :func:`compare_systems` also runs on the per-unit number of wrongly classed gaps.
"""
from __future__ import annotations

import difflib
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import ABBR, PunctSentence
from spacy_punctgen.errors import Errors
from spacy_punctgen.evaluation.metrics import paired_permutation_test

STREAM_CLASSES = ("M", "F")
TED_CLASSES = ("COMMA", "PERIOD", "QUESTION")
MIDDLE_MARKS = frozenset(",;:")
FULL_MARKS = frozenset(".?!")
_TED_PERIOD = frozenset(".!;")
_TED_COMMA = frozenset(",:-\u2013\u2014")
#: the representative mark written for a class (training labels of tagging baselines)
CLASS_MARK = {"M": ",", "F": ".", "COMMA": ",", "PERIOD": ".", "QUESTION": "?"}

Label = Optional[str]


def stream_class(marks: str) -> Label:
    """``"F"``, ``"M"`` or None for the marks of one gap (see the module docstring)."""
    if any(c in FULL_MARKS for c in marks):
        return "F"
    if any(c in MIDDLE_MARKS for c in marks):
        return "M"
    return None


def ted_class(marks: str) -> Label:
    """``"QUESTION"``, ``"PERIOD"``, ``"COMMA"`` or None: the IWSLT benchmark's folding."""
    if "?" in marks:
        return "QUESTION"
    if any(c in _TED_PERIOD for c in marks):
        return "PERIOD"
    if any(c in _TED_COMMA for c in marks):
        return "COMMA"
    return None


CLASSIFIERS: Dict[str, Tuple[Callable[[str], Label], Tuple[str, ...]]] = {
    "stream": (stream_class, STREAM_CLASSES), "ted": (ted_class, TED_CLASSES)}


@dataclass
class Stream:
    """One scored unit: its words (as the systems see them) and the gold marks after each word."""

    words: List[str]
    gold: List[str]
    ids: List[str] = field(default_factory=list)
    #: indices of the words that end a gold sentence; None: the gold marks say (TED)
    ends: Optional[List[int]] = None

    def __post_init__(self):
        if len(self.words) != len(self.gold):
            raise ValueError(Errors.E760.format(n_words=len(self.words), n_gaps=len(self.gold)))


def _slot_text(marks: Sequence[str], final: bool) -> str:
    # the abbreviation dot is part of a word like "etc."; at a sentence's end UD writes that one
    # dot for the full stop too, so it counts as "." there and as nothing elsewhere
    return " ".join("." if m == ABBR else m for m in marks if m != ABBR or final)


def sentence_streams(sentences: Sequence[PunctSentence], size: int = 10, lower: bool = True) -> List[Stream]:
    """Streams of ``size`` consecutive sentences (the last may be shorter), words lowercased
    if ``lower``; the gap after a sentence's last word holds its final slot's marks followed
    by the next sentence's opening slot's (the stream's first opening slot is not scored)."""
    if size < 1:
        raise ValueError(Errors.E761.format(size=size))
    if not sentences:
        raise ValueError(Errors.E762)
    out = []
    for start in range(0, len(sentences), size):
        group = sentences[start:start + size]
        words, gold, ends = [], [], []
        for k, s in enumerate(group):
            nxt = group[k + 1].slots[0] if k + 1 < len(group) else ()
            words.extend(w.lower() if lower else w for w in s.words)
            gold.extend(_slot_text(s.slots[i], False) for i in range(1, len(s.words)))
            end = _slot_text(s.slots[len(s.words)], True)
            gold.append(" ".join(t for t in (end, _slot_text(nxt, False)) if t))
            if s.words:
                ends.append(len(words) - 1)
        out.append(Stream(words, gold, [s.sent_id or "" for s in group], ends))
    return out


def word_blocks(words: Sequence[str], gold: Sequence[str], size: int) -> List[Stream]:
    """Consecutive blocks of ``size`` words of one long stream (the last may be shorter): the
    units of the significance test when the text has no other units."""
    if size < 1:
        raise ValueError(Errors.E761.format(size=size))
    return [Stream(list(words[i:i + size]), list(gold[i:i + size])) for i in range(0, len(words), size)]


def align_gaps(words: Sequence[str], text: str) -> Tuple[List[str], int]:
    """The marks ``text`` puts after each word of ``words`` (``text``: the words, in order, with
    marks and whitespace inserted), and the number of word characters ``text`` lacks.

    The words' characters are matched in order, whitespace ignored. A character that does not
    match and is not alphanumeric is a mark of the gap it falls in (one inside a word counts for
    the gap before that word; one before the first word is dropped); a word character missing
    from ``text`` that is not alphanumeric (a restorer may drop the apostrophe of ``'ve``) is
    skipped; any other mismatch is resynchronised on the next common run of characters."""
    gold = "".join(words)
    ends, total = [], 0
    for w in words:
        total += len(w)
        ends.append(total)
    pred = "".join(text.split())
    gaps: List[List[str]] = [[] for _ in words]
    g = p = missing = 0
    while p < len(pred):
        c = pred[p]
        if g < len(gold) and c == gold[g]:
            g += 1
            p += 1
        elif not c.isalnum() or g >= len(gold):
            k = bisect_right(ends, g)
            if k > 0 and not c.isalnum():
                gaps[min(k, len(words)) - 1].append(c)
            p += 1
        elif not gold[g].isalnum():
            g += 1
            missing += 1
        else:
            a, b = gold[g:g + 400], pred[p:p + 400]
            blocks = [m for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
                      if m.size >= 3]
            if not blocks:
                raise ValueError(Errors.E763.format(at=p, got=pred[p:p + 40], expected=gold[g:g + 40]))
            g, p = g + blocks[0].a, p + blocks[0].b
            missing += blocks[0].a
    missing += len(gold) - g
    return ["".join(m) for m in gaps], missing


def _kind(kind: str) -> str:
    if kind not in CLASSIFIERS:
        raise ValueError(Errors.E764.format(kind=kind, kinds=", ".join(CLASSIFIERS)))
    return kind


def unit_counts(gold: Sequence[Label], pred: Sequence[Label], classes: Sequence[str]) -> np.ndarray:
    """``(len(classes) + 1, 3)`` counts (tp, fp, fn) of one unit: one row per class, then the
    ``mixed`` row (any class against none)."""
    if len(gold) != len(pred):
        raise ValueError(Errors.E765.format(n_pred=len(pred), n_gold=len(gold)))
    out = np.zeros((len(classes) + 1, 3), dtype=np.int64)
    for g, p in zip(gold, pred):
        for k, c in enumerate(classes):
            out[k, 0] += g == c and p == c
            out[k, 1] += p == c and g != c
            out[k, 2] += g == c and p != c
        out[-1, 0] += g is not None and p is not None
        out[-1, 1] += p is not None and g is None
        out[-1, 2] += g is not None and p is None
    return out


def prf(tp, fp, fn) -> Dict[str, float]:
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": float(prec), "recall": float(rec), "f1": float(f1),
            "tp": int(tp), "fp": int(fp), "fn": int(fn)}


def _f1(counts: np.ndarray) -> np.ndarray:
    """F1 of count triples along the last axis (0 where undefined)."""
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    den = 2 * tp + fp + fn
    return np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0)


def summarize(counts: np.ndarray, classes: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """Per-class, ``overall`` (micro over the classes) and ``mixed`` P/R/F1 of summed counts."""
    total = np.asarray(counts).reshape(-1, len(classes) + 1, 3).sum(axis=0)
    out = {c: prf(*total[k]) for k, c in enumerate(classes)}
    out["overall"] = prf(*total[:-1].sum(axis=0))
    out["mixed"] = prf(*total[-1])
    return out


def score_labels(gold: Sequence[Sequence[Label]], pred: Sequence[Sequence[Label]],
                 classes: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """P/R/F1 of per-unit gap labels (see the module docstring); an empty evaluation is an error."""
    if len(gold) != len(pred):
        raise ValueError(Errors.E765.format(n_pred=len(pred), n_gold=len(gold)))
    if not sum(len(g) for g in gold):
        raise ValueError(Errors.E766)
    return summarize(np.stack([unit_counts(g, p, classes) for g, p in zip(gold, pred)]), classes)


def paired_randomization_test(counts_a: np.ndarray, counts_b: np.ndarray,
                              n_permutations: int = 10000, seed: int = 0) -> float:
    """Two-sided p-value of the difference in F1 between systems A and B, by
    approximate randomisation: each unit's pair of predictions is swapped with probability 1/2
    and F1 is recomputed. ``counts_*``: ``(n_units, 3)`` tp/fp/fn per unit. The observed
    assignment counts as one permutation, so ``p >= 1/(n_permutations+1)``."""
    a = np.asarray(counts_a, dtype=np.float64)
    b = np.asarray(counts_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(Errors.E542.format(shape_a=a.shape, shape_b=b.shape))
    sa, sb, d = a.sum(axis=0), b.sum(axis=0), b - a
    observed = abs(float(_f1(sa) - _f1(sb)))
    if observed == 0.0:
        return 1.0
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_permutations, 1000):
        k = min(1000, n_permutations - start)
        swap = rng.integers(0, 2, size=(k, a.shape[0])).astype(np.float64)
        moved = swap @ d
        diff = _f1(sa + moved) - _f1(sb - moved)
        hits += int((np.abs(diff) >= observed - 1e-12).sum())
    return (hits + 1) / (n_permutations + 1)


def compare_systems(counts_a: np.ndarray, counts_b: np.ndarray, classes: Sequence[str],
                    errors_a: Sequence[float], errors_b: Sequence[float],
                    n_permutations: int = 10000, seed: int = 0) -> Dict[str, float]:
    """p-values of A against B: approximate randomisation of each class's, ``overall``'s and
    ``mixed``'s F1 over units, and the sign-flip permutation test of the per-unit number of
    gaps whose class is wrong (``errors_*``)."""
    a, b = np.asarray(counts_a), np.asarray(counts_b)
    out = {}
    for k, c in enumerate(classes):
        out[f"p_{c}_f1"] = paired_randomization_test(a[:, k], b[:, k], n_permutations, seed)
    out["p_overall_f1"] = paired_randomization_test(a[:, :-1].sum(axis=1), b[:, :-1].sum(axis=1),
                                                    n_permutations, seed)
    out["p_mixed_f1"] = paired_randomization_test(a[:, -1], b[:, -1], n_permutations, seed)
    out["p_gap_errors"] = paired_permutation_test(errors_a, errors_b, n_permutations, seed)
    return out


def gap_errors(gold: Sequence[Label], pred: Sequence[Label]) -> int:
    """Gaps of one unit whose predicted class is not the gold one (an additive loss)."""
    return sum(g != p for g, p in zip(gold, pred))


def class_sentences(units: Sequence[Stream], kind: str) -> List[PunctSentence]:
    """Units as training/test sentences of a slot-tagging baseline: the words, and each slot
    holding the mark of its gold class (:data:`CLASS_MARK`; slot 0 empty), so the tagger learns
    exactly the scored classes, as the paper's CRF baseline did."""
    classify = CLASSIFIERS[_kind(kind)][0]
    out = []
    for k, u in enumerate(units):
        slots: List[Tuple[str, ...]] = [()]
        for m in u.gold:
            c = classify(m)
            slots.append((CLASS_MARK[c],) if c else ())
        n = len(u.words)
        out.append(PunctSentence(words=list(u.words), upos=["X"] * n, xpos=["_"] * n, deprels=["dep"] * n,
                                 heads=[-1] * n, slots=slots, sent_id=f"unit-{k}"))
    return out


def slots_to_gaps(slots: Sequence[Sequence[str]]) -> List[str]:
    """A slot prediction ``x_0..x_n`` as the marks after each word (``x_0`` is not scored)."""
    return [" ".join(s) for s in list(slots)[1:]]


def windows(n: int, size: int) -> List[Tuple[int, int, int, int]]:
    """Overlapping windows over ``n`` words for a tagger that should not see artificial ends:
    ``(start, end, keep_start, keep_end)``, windows of ``size`` words every ``size // 2`` words,
    each keeping the predictions of its middle half (the first its start, the last its end)."""
    if size < 4:
        raise ValueError(Errors.E761.format(size=size))
    if n <= size:
        return [(0, n, 0, n)]
    step, quarter = size // 2, size // 4
    out, start = [], 0
    while True:
        end = min(n, start + size)
        keep_start = start if start == 0 else start + quarter
        if end == n:
            out.append((start, end, keep_start, n))
            return out
        out.append((start, end, keep_start, start + quarter + step))
        start += step


def trivial_gaps(n: int) -> List[str]:
    """The trivial system: a period at the end of the unit, nothing else."""
    return [""] * (n - 1) + ["."] if n else []


def evaluate_predictions(units: Sequence[Stream], predicted: Sequence[Sequence[str]], kind: str) -> dict:
    """Scores of predicted gap marks (one list per unit) against the units' gold, with the
    per-unit counts and errors the significance tests need."""
    classify, classes = CLASSIFIERS[_kind(kind)]
    if len(predicted) != len(units):
        raise ValueError(Errors.E765.format(n_pred=len(predicted), n_gold=len(units)))
    gold = [[classify(m) for m in u.gold] for u in units]
    pred = []
    for u, p in zip(units, predicted):
        if len(p) != len(u.words):
            raise ValueError(Errors.E767.format(n_pred=len(p), n_words=len(u.words)))
        pred.append([classify(m) for m in p])
    scores = score_labels(gold, pred, classes)
    counts = np.stack([unit_counts(g, p, classes) for g, p in zip(gold, pred)])
    return {"scores": scores, "counts": counts.tolist(),
            "errors": [gap_errors(g, p) for g, p in zip(gold, pred)],
            "n_units": len(units), "n_words": sum(len(u.words) for u in units)}


def gold_boundaries(unit: Stream) -> List[bool]:
    """Per gap of ``unit``: does a gold sentence end there (its ``ends``, else a sentence-final
    mark in its gold, as TED's ``PERIOD``/``QUESTION`` labels are written)."""
    if unit.ends is None:
        return mark_boundaries(unit.gold)
    out = [False] * len(unit.words)
    for i in unit.ends:
        out[i] = True
    return out


def mark_boundaries(gaps: Sequence[str]) -> List[bool]:
    """Per gap: do its marks end a sentence (any of ``. ? !``: the gaps of class ``F``)."""
    return [stream_class(m) == "F" for m in gaps]


def start_boundaries(words: Sequence[str], starts: Sequence[int]) -> List[bool]:
    """Per gap of ``words``: does a sentence start right after it, ``starts`` being the character
    offsets of sentence starts in ``" ".join(words)`` (a parser's, on the text a restorer got).
    A start inside a word is no gap's (restoration puts nothing there either)."""
    first, pos = {}, 0
    for i, w in enumerate(words):
        first[pos] = i
        pos += len(w) + 1
    out = [False] * len(words)
    for c in starts:
        i = first.get(c, 0)
        if i > 0:
            out[i - 1] = True
    return out


def boundary_scores(gold: Sequence[Sequence[bool]], pred: Sequence[Sequence[bool]]) -> dict:
    """P/R/F1 of predicted sentence boundaries (per unit, one flag a gap) against the gold ones,
    each unit's last gap left out (see the module docstring), with the per-unit tp/fp/fn."""
    if len(gold) != len(pred):
        raise ValueError(Errors.E765.format(n_pred=len(pred), n_gold=len(gold)))
    def labels(flags):
        return ["B" if f else None for f in list(flags)[:-1]]

    counts = []
    for g, p in zip(gold, pred):
        if len(g) != len(p):
            raise ValueError(Errors.E767.format(n_pred=len(p), n_words=len(g)))
        counts.append(unit_counts(labels(g), labels(p), ("B",))[0])
    total = np.sum(counts, axis=0) if counts else np.zeros(3, dtype=np.int64)
    return {**prf(*total), "last_gap": "excluded", "n_positions": int(sum(max(len(g) - 1, 0) for g in gold)),
            "counts": np.asarray(counts, dtype=np.int64).reshape(-1, 3).tolist()}


# ---- running systems (the systems come in as callables: this layer knows no pipeline or baseline) ----

def blank_sentence(words: Sequence[str], sent_id: str = "") -> PunctSentence:
    """Words as a sentence with empty slots, the input of a slot-tagging baseline."""
    n = len(words)
    return PunctSentence(words=list(words), upos=["X"] * n, xpos=["_"] * n, deprels=["dep"] * n,
                         heads=[-1] * n, slots=[()] * (n + 1), sent_id=sent_id)


def tagger_gaps(predict: Callable[[List[PunctSentence]], List[Sequence[Sequence[str]]]],
                words: Sequence[str], window: int = 0) -> List[str]:
    """The marks a slot tagger (``predict``: a baseline's ``predict``) puts after each word;
    with ``window`` the words go in overlapping windows (:func:`windows`), so a long stream has
    no artificial sentence ends."""
    n = len(words)
    spans = windows(n, window) if window and n > window else [(0, n, 0, n)]
    preds = predict([blank_sentence(words[s:e], f"w{s}") for s, e, _, _ in spans])
    gaps = [""] * n
    for (s, _e, ks, ke), slots in zip(spans, preds):
        for i in range(ks, ke):
            gaps[i] = " ".join(slots[i - s + 1])
    return gaps


class TextRestorer:
    """A restorer of plain text (``restore``: str -> punctuated str) as a gap predictor;
    counts the word characters its output lacked (:func:`align_gaps`)."""

    def __init__(self, restore: Callable[[str], str]):
        self.restore = restore
        self.missing_chars = 0

    def __call__(self, words: Sequence[str]) -> List[str]:
        gaps, missing = align_gaps(words, self.restore(" ".join(words)))
        self.missing_chars += missing
        return gaps


def stream_report(name: str, units: Sequence[Stream], predicted: Sequence[Sequence[str]], kind: str,
                  **info) -> dict:
    """The metrics file of one system: scores, and the per-unit counts the comparison needs."""
    out = {"system": name, "kind": kind, **evaluate_predictions(units, predicted, kind)}
    out.update(info)
    return out


def _check_report(report, path) -> dict:
    for key in ("system", "kind", "scores", "counts", "errors"):
        if not isinstance(report, dict) or key not in report:
            raise ValueError(Errors.E772.format(path=path, problem=f"no {key!r}"))
    return report


def compare_reports(reports: Sequence[dict], reference: str = "crf_lexical", key: str = "overall",
                    n_permutations: int = 10000, seed: int = 0, paths: Optional[Sequence] = None) -> dict:
    """All systems' scores, and every system tested against ``reference`` (p-values of
    :func:`compare_systems`); ``best`` is the system with the highest F1 of ``key``."""
    paths = list(paths) if paths is not None else [f"report {k}" for k in range(len(reports))]
    reports = [_check_report(r, p) for r, p in zip(reports, paths)]
    kinds = {r["kind"] for r in reports}
    if len(kinds) != 1:
        raise ValueError(Errors.E772.format(path=", ".join(map(str, paths)), problem=f"mixed kinds {sorted(kinds)}"))
    kind = _kind(kinds.pop())
    classes = CLASSIFIERS[kind][1]
    by_name = {r["system"]: r for r in reports}
    out = {"kind": kind, "classes": list(classes), "reference": reference, "key": key,
           "permutations": n_permutations, "seed": seed,
           "systems": {n: {k: v for k, v in r.items() if k not in ("counts", "errors")} for n, r in by_name.items()},
           "best": max(by_name, key=lambda n: by_name[n]["scores"][key]["f1"]), "tests": {}}
    ref = by_name.get(reference)
    if ref is not None:
        for n, r in by_name.items():
            if n == reference:
                continue
            if len(r["counts"]) != len(ref["counts"]):
                raise ValueError(Errors.E765.format(n_pred=len(r["counts"]), n_gold=len(ref["counts"])))
            out["tests"][n] = compare_systems(np.asarray(r["counts"]), np.asarray(ref["counts"]), classes,
                                              r["errors"], ref["errors"], n_permutations, seed)
    return out


def markdown_table(comparison: dict, title: str = "") -> str:
    """A Markdown table of a :func:`compare_reports` result (P/R/F1 in %, p-values against the
    reference); a ``sentence ends`` column (``restored_boundaries``) where a system has one
    (``–`` for metrics files from before it)."""
    rows = list(comparison["classes"]) + ["overall", "mixed"]
    ends = any("restored_boundaries" in r for r in comparison["systems"].values())
    cols = rows + (["sentence ends"] if ends else [])
    head = "| system | " + " | ".join(f"{r} P / R / F1" for r in cols) + f" | p ({comparison['key']} F1 vs {comparison['reference']}) |"
    lines = ([f"### {title}", ""] if title else []) + [head, "|---|" + "---:|" * (len(cols) + 1)]

    def cell(x):
        return f"{100 * x['precision']:.1f} / {100 * x['recall']:.1f} / **{100 * x['f1']:.1f}**"

    for name, r in comparison["systems"].items():
        s = r["scores"]
        cells = [cell(s[k]) for k in rows]
        if ends:
            cells.append(cell(r["restored_boundaries"]) if "restored_boundaries" in r else "–")
        test = comparison["tests"].get(name)
        p = "–" if test is None else f"{test['p_' + comparison['key'] + '_f1']:.4f}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {p} |")
    units = {r["n_units"] for r in comparison["systems"].values()}
    words = {r["n_words"] for r in comparison["systems"].values()}
    note = (f"Units: {', '.join(map(str, sorted(units)))}; words: {', '.join(map(str, sorted(words)))}; "
            f"best by {comparison['key']} F1: {comparison['best']}; p: approximate randomisation over units, "
            f"{comparison['permutations']} permutations, seed {comparison['seed']}.")
    lines += ["", note]
    return "\n".join(lines) + "\n"


def splice_block(text: str, block: str, name: str, where: str) -> str:
    """``text`` (a Markdown document) with the lines between ``<!-- stream-table:NAME start -->``
    and ``<!-- stream-table:NAME end -->`` replaced by ``block``, so a doc shows the generated table."""
    start, end = f"<!-- stream-table:{name} start -->", f"<!-- stream-table:{name} end -->"
    lines = text.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln.strip() == start]
    ends = [i for i, ln in enumerate(lines) if ln.strip() == end]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(Errors.E773.format(path=where, start=start, end=end))
    return "".join(lines[:starts[0] + 1]) + block + "".join(lines[ends[0]:])
