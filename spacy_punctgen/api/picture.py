"""A picture of the underlying tree: HTML/SVG in the style of displaCy (docs/render.md).

:func:`render` draws each sentence of a Doc processed by the ``punctgen`` component as one
SVG, in four bands, top to bottom:

* the dependency tree of the words (punctuation removed, the projective tree the model
  scores): one arc per non-root word, from its head, labelled with its relation;
* the punctemes each constituent sprouts (ATTACH): a bracket under every constituent with a
  non-empty left or right puncteme, from the slot before its first word to the slot after its
  last, with the marks at its two ends, in the constituent's colour;
* at each slot, the underlying string ``u_i`` (every mark in the colour of the constituent
  that sprouted it), the channel's edits that turn it into the surface (NOISYCHANNEL: e.g.
  ``, .`` → ``.`` by ``absorb_left`` in a right-to-left channel), and the surface string
  ``x_i``.

The edits of a slot are the most probable edit sequence of the model's channel that turns
``u_i`` into ``x_i`` (:func:`edit_path`, a Viterbi pass over the machine of
:mod:`spacy_punctgen.model.channel`, whose :data:`~spacy_punctgen.model.channel.EDIT_RULES`
and :func:`~spacy_punctgen.model.channel.apply_edit` say what each edit does).  Without a
model the channel is uniform over the allowed edits (the sequence with the fewest edits
other than ``keep`` is shown) and read right to left, the component's default.

Analysis-mode Docs (``doc._.underlying_punct``) are drawn as analysed.  For restore-mode Docs
(``doc._.restored_punct``) the surface is the restored punctuation, and, with a model, the
underlying tree is the best explanation of it (:meth:`PunctModel.analyze` of the restored
sentence); without a model the underlying string of each slot is its surface.

The result is a :class:`Rendering`: ``.html`` (a fragment, or a whole page with
``page=True``), ``.save(path)`` (always a whole page) and ``_repr_html_`` for Jupyter.  No
script is emitted, and every word, tag, relation and mark is HTML-escaped.

:func:`render_source` is the work of the ``punctgen render`` command: a CoNLL-U file (gold
trees, analysed or restored by a blank pipeline with the model), or text (a file, one text
per line, or a literal string) parsed by a spaCy pipeline with a UD parser.
"""
from __future__ import annotations

import html
import math
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from spacy_punctgen.data.inventory import BOS
from spacy_punctgen.data.trees import tree_structure
from spacy_punctgen.data.underlying import slot_parts, underlying_sequences
from spacy_punctgen.errors import Errors
from spacy_punctgen.inference.dp import EDIT_NAMES
from spacy_punctgen.model.channel import (EDITS, KEEP, apply_edit, bos_edit_mask, channel_prob, channel_probs,
                                          parse_direction)

MODES = ("analyze", "restore")
CONLLU_SUFFIXES = (".conllu", ".conll")
#: Longest underlying string whose total channel probability ``p(x | u)`` is computed (by
#: enumeration); longer ones show the best edit path's probability only.
MAX_ENUMERATED = 10

# ----------------------------------------------------------------------------------------
# the data drawn


@dataclass
class EditStep:
    """One edit other than ``keep`` on the way from ``u_i`` to ``x_i``, in text order."""

    edit: str  #: the machine's name of the edit (``absorb_left``, ``absorb_right``, ``transpose``)
    before: Tuple[str, ...]  #: the two marks it reads, in text order
    after: Tuple[str, ...]  #: what they become, in text order
    string: Tuple[str, ...]  #: the slot's whole string after the edit (slot 0: with ``^``)
    sources: Tuple[Optional[int], ...]  #: per mark of ``string``, the node that sprouted it
    prob: Optional[float]  #: the edit's channel probability ``φ[a, b, e]`` (None without a model)
    gloss: str = ""  #: what the edit does, in words and text order (``'.' absorbed into '?'``)


@dataclass
class SlotView:
    """One slot: underlying and surface marks, where each underlying mark came from, the edits."""

    slot: int
    underlying: Optional[Tuple[str, ...]]  #: None: the model gives the sentence probability 0
    surface: Tuple[str, ...]
    sources: Tuple[Optional[int], ...] = ()  #: per underlying mark, the node that sprouted it
    steps: List[EditStep] = field(default_factory=list)
    path_prob: Optional[float] = None  #: probability of the edit path shown
    channel_prob: Optional[float] = None  #: ``p(x | u)`` summed over every edit path
    explained: bool = True  #: whether an edit path exists (False: drawn without edits)
    restored_prob: Optional[float] = None  #: restore mode: the decoder's probability of ``surface``


@dataclass
class SentenceView:
    """One sentence: the depunctuated words and tree, each node's punctemes, the slots."""

    doc_index: int
    sentence: int
    text: str
    words: List[str]
    upos: List[str]
    heads: List[int]
    deprels: List[str]
    punctemes: Optional[List[Tuple[Tuple[str, ...], Tuple[str, ...]]]]
    slots: List[SlotView]
    mode: str
    direction: str
    model: bool  #: whether a model's channel scored the edits

    @property
    def n_arcs(self) -> int:
        return sum(1 for h in self.heads if h >= 0)


# ----------------------------------------------------------------------------------------
# the channel's edits between u and x


def edit_path(u: Sequence[str], x: Sequence[str], ids: Sequence[int], phi: np.ndarray, r2l: bool
              ) -> Optional[Tuple[List[Tuple[int, int, int]], float]]:
    """The most probable edit sequence of the channel ``phi`` that writes ``x`` from ``u``.

    ``ids[k]`` is the symbol id of ``u[k]`` in ``phi``; marks are matched against ``x`` by
    their text, so two marks that share the ``<unk>`` id stay apart.  Returns the edits as
    ``(edit, a, b)`` with ``a``, ``b`` positions in ``u`` (``a`` the pending mark, ``b`` the one
    read), in the machine's reading order, and the path's log probability; None if no path
    writes ``x``.  Ties go to the path with fewer edits other than ``keep``.
    """
    n = len(u)
    if n == 0:
        return ([], 0.0) if not x else None
    order = list(range(n))[::-1] if r2l else list(range(n))
    target = list(x)[::-1] if r2l else list(x)
    if not target:
        return None
    # state (pending position, marks written) -> (log p, -edits other than keep, path)
    states: Dict[Tuple[int, int], Tuple[float, int, tuple]] = {(order[0], 0): (0.0, 0, ())}
    for b in order[1:]:
        nxt: Dict[Tuple[int, int], Tuple[float, int, tuple]] = {}
        for (a, k), (lp, neg, path) in states.items():
            for edit in EDITS:
                q = float(phi[ids[a], ids[b], edit])
                if q <= 0.0:
                    continue
                written, pending = apply_edit(edit, a, b)
                k2 = k
                if written is not None:
                    if k >= len(target) or u[written] != target[k]:
                        continue
                    k2 = k + 1
                if k2 >= len(target):  # the pending mark still has to be written
                    continue
                cand = (lp + math.log(q), neg - (edit != KEEP), path + ((edit, a, b),))
                old = nxt.get((pending, k2))
                if old is None or cand[:2] > old[:2]:
                    nxt[(pending, k2)] = cand
        states = nxt
    finals = [v for (a, k), v in states.items() if k == len(target) - 1 and u[a] == target[k]]
    if not finals:
        return None
    best = max(finals, key=lambda v: v[:2])
    return list(best[2]), best[0]


def _steps(u: Sequence[str], sources: Sequence[Optional[int]], path: Sequence[Tuple[int, int, int]],
           ids: Sequence[int], phi: np.ndarray, r2l: bool, scored: bool) -> List[EditStep]:
    """The path's edits other than ``keep`` as :class:`EditStep` (text order)."""
    n = len(u)
    order = list(range(n))[::-1] if r2l else list(range(n))

    def text_order(seq):
        return list(seq)[::-1] if r2l else list(seq)

    out: List[EditStep] = []
    written_so_far: List[int] = []
    for t, (edit, a, b) in enumerate(path, start=1):
        written, pending = apply_edit(edit, a, b)
        if written is not None:
            written_so_far.append(written)
        if edit == KEEP:
            continue
        string = text_order(written_so_far + [pending] + order[t + 1:])
        result = text_order(([written] if written is not None else []) + [pending])
        if written is None:  # an absorption: the mark left pending keeps the other
            gloss = f"{u[b if pending == a else a]!r} absorbed into {u[pending]!r}"
        else:  # a transposition: the pending mark moves on past the one read
            gloss = f"{u[a]!r} moves {'left' if r2l else 'right'} past {u[b]!r}"
        out.append(EditStep(
            edit=EDIT_NAMES[edit], before=tuple(u[p] for p in text_order([a, b])),
            after=tuple(u[p] for p in result), string=tuple(u[p] for p in string),
            sources=tuple(sources[p] for p in string),
            prob=float(phi[ids[a], ids[b], edit]) if scored else None, gloss=gloss))
    return out


class _Channel:
    """The channel the edits are found with: a model's ``φ`` and direction, or (no model) the
    uniform channel over the allowed edits, read right to left."""

    def __init__(self, pm=None):
        self.pm = pm
        if pm is not None:
            self.r2l = bool(pm.r2l)
            self.direction = pm.direction
            self.phi = pm.phi()
        else:
            self.direction = parse_direction("r2l")
            self.r2l = True
            self.phi = None

    def ids_and_phi(self, marks: Sequence[str]) -> Tuple[List[int], np.ndarray]:
        if self.pm is not None:
            inv = self.pm.inventory
            return [0 if m == BOS else inv.symbol_id(m) for m in marks], self.phi
        local: Dict[str, int] = {BOS: 0}
        for m in marks:
            local.setdefault(m, len(local))
        n = len(local)
        return [local[m] for m in marks], channel_probs(np.zeros((n, n, len(EDITS))), bos_edit_mask(n, self.r2l))

    def slot(self, view: SlotView, first: bool) -> None:
        """Fill ``view``'s edits (and probabilities, with a model)."""
        if view.underlying is None:
            view.explained = False
            return
        u, x = list(view.underlying), list(view.surface)
        src: List[Optional[int]] = list(view.sources) if view.sources else [None] * len(u)
        if first and u:  # the machine reads '^' in front of slot 0 (docs/model.md §1)
            u, x, src = [BOS] + u, [BOS] + x, [None] + src
        ids, phi = self.ids_and_phi(u)
        found = edit_path(u, x, ids, phi, self.r2l)
        if found is None:
            view.explained = False
            return
        path, logp = found
        scored = self.pm is not None
        view.steps = _steps(u, src, path, ids, phi, self.r2l, scored)
        if scored:
            view.path_prob = math.exp(logp)
            if len(u) <= MAX_ENUMERATED:
                x_ids = [0 if m == BOS else self.pm.inventory.symbol_id(m) for m in x]
                view.channel_prob = float(channel_prob(ids, x_ids, phi, self.r2l))


# ----------------------------------------------------------------------------------------
# Docs -> views


def _sources(heads: Sequence[int], punctemes, underlying: Sequence[Tuple[str, ...]]
             ) -> List[Tuple[Optional[int], ...]]:
    """Per slot, the node that sprouted each underlying mark (in ``u_i``'s order); empty
    tuples where the punctemes do not spell the given underlying string."""
    _, _, _, first, last = tree_structure(heads)
    out = []
    for parts, u in zip(slot_parts(first, last), underlying):
        marks = [(w, m) for w, side in parts for m in punctemes[w][side]]
        ok = u is not None and tuple(m for _, m in marks) == tuple(u)
        out.append(tuple(w for w, _ in marks) if ok else ())
    return out


def _resolve_model(model, lang: str):
    """A :class:`PunctModel` or None from what :func:`render` takes as ``model``."""
    from spacy_punctgen.model.punct_model import PunctModel

    if model is False:
        return None
    if model is None:
        from spacy_punctgen.pipeline.component import shipped_model_path

        path = shipped_model_path(lang)
        return PunctModel.from_disk(path) if path is not None else None
    if isinstance(model, PunctModel):
        return model
    if isinstance(model, (str, Path)):
        try:
            return PunctModel.from_disk(model)
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E073.format(path=model, reason=err)) from None
    require = getattr(model, "require_model", None)  # a PunctGen component
    if callable(require):
        return require()
    pipeline = getattr(model, "pipeline", None)  # a Language holding one
    if pipeline is not None:
        from spacy_punctgen.pipeline.component import PunctGen

        for _, pipe in pipeline:
            if isinstance(pipe, PunctGen):
                return pipe.require_model()
        raise ValueError(Errors.E074.format(pipes=[name for name, _ in pipeline]))
    raise ValueError(Errors.E072.format(what="model", got=type(model).__name__,
                                        expected="a PunctModel, a model directory, a punctgen component, a "
                                                 "pipeline with one, None (the model shipped for the Doc's "
                                                 "language) or False (no model)"))


def sentence_views(doc, pm=None, doc_index: int = 0) -> List[SentenceView]:
    """The views of a Doc processed by a ``punctgen`` component (E070 otherwise)."""
    from spacy_punctgen.pipeline.extensions import register_extensions
    from spacy_punctgen.pipeline.doc_convert import punct_sentences

    register_extensions()
    if doc._.underlying_punct is not None:
        mode, entries = "analyze", doc._.underlying_punct
    elif doc._.restored_punct is not None:
        mode, entries = "restore", doc._.restored_punct
    else:
        raise ValueError(Errors.E070)
    channel = _Channel(pm)
    by_sent: Dict[int, List[dict]] = {}
    for e in entries:
        by_sent.setdefault(e["sentence"], []).append(e)
    quote_xpos = bool(pm.meta.get("quote_xpos", False)) if pm is not None else False
    views: List[SentenceView] = []
    sents = list(doc.sents) if len(doc) else []
    for si, ps, words in punct_sentences(doc, quote_xpos=quote_xpos):
        if ps is None:
            continue
        ents = sorted(by_sent.get(si, []), key=lambda e: e["slot"])
        if [e["slot"] for e in ents] != list(range(len(ps.words) + 1)):
            raise ValueError(Errors.E071.format(sentence=si, n=len(ps.words) + 1, got=len(ents)))
        surfaces = [tuple(e["surface"]) for e in ents]
        punctemes = None
        if mode == "analyze":
            underlying = [tuple(e["underlying"]) if e["underlying"] is not None else None for e in ents]
            pairs = [(doc[t]._.punct_left, doc[t]._.punct_right) for t in words]
            if all(l is not None and r is not None for l, r in pairs):
                punctemes = [(tuple(l), tuple(r)) for l, r in pairs]
        elif pm is not None:
            ps.slots = list(surfaces)
            lr, _ = pm.analyze([ps])[0]
            if lr is not None:
                punctemes = [(tuple(l), tuple(r)) for l, r in lr]
                underlying = [tuple(u) for u in underlying_sequences(ps.heads, punctemes)]
            else:
                underlying = [None] * len(surfaces)
        else:
            underlying = list(surfaces)
        sources = (_sources(ps.heads, punctemes, underlying) if punctemes is not None
                   else [()] * len(surfaces))
        slots = []
        for i, (u, x, src) in enumerate(zip(underlying, surfaces, sources)):
            view = SlotView(slot=i, underlying=u, surface=x, sources=src,
                            restored_prob=float(ents[i]["prob"]) if mode == "restore" else None)
            channel.slot(view, first=i == 0)
            slots.append(view)
        span = sents[si]
        views.append(SentenceView(
            doc_index=doc_index, sentence=si, text=span.text, words=list(ps.words), upos=list(ps.upos),
            heads=list(ps.heads), deprels=list(ps.deprels), punctemes=punctemes, slots=slots, mode=mode,
            direction=channel.direction, model=pm is not None))
    return views


# ----------------------------------------------------------------------------------------
# drawing

_e = html.escape
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22")
FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace"
WORD_SIZE, TAG_SIZE, MARK_SIZE, STEP_SIZE, LABEL_SIZE = 15, 11, 15, 11, 10
LEVEL_H, BRACKET_H, LINE_H = 24, 24, 15
LEFT = 112  # room for the band names
PAD = 14


def _width(text: str, size: float) -> float:
    """An upper estimate of ``text``'s width in a monospace font of ``size`` px (wide East
    Asian characters count twice, combining marks not at all)."""
    cells = sum(0 if unicodedata.combining(c) else (2 if unicodedata.east_asian_width(c) in "WF" else 1)
                for c in text)
    return cells * size * 0.62


def _marks(seq: Sequence[str]) -> str:
    return " ".join(seq)


def _text(x: float, y: float, content: str, size: float, cls: str, fill: str = "#222", anchor: str = "middle",
          extra: str = "", title: Optional[str] = None) -> str:
    tip = f"<title>{_e(title)}</title>" if title else ""
    return (f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}" '
            f'text-anchor="{anchor}"{extra}>{tip}{_e(content)}</text>')


def _colored(x: float, y: float, marks: Sequence[str], sources: Sequence[Optional[int]], colors: Dict[int, str],
             size: float, cls: str, weight: str = "normal", title: Optional[str] = None) -> str:
    """Marks centred at ``x``, each in the colour of the node that sprouted it."""
    tip = f"<title>{_e(title)}</title>" if title else ""
    spans = []
    for k, m in enumerate(marks):
        src = sources[k] if k < len(sources) else None
        fill = colors.get(src, "#222") if src is not None else ("#999" if m == BOS else "#222")
        sep = " " if k else ""
        spans.append(f'<tspan fill="{fill}">{_e(sep + m)}</tspan>')
    return (f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" font-size="{size}" font-weight="{weight}" '
            f'text-anchor="middle">{tip}{"".join(spans)}</text>')


def _arc_levels(heads: Sequence[int]) -> Dict[int, int]:
    """Per dependent, the height level of its arc: one above the highest arc nested in it."""
    arcs = sorted((abs(h - d), min(h, d), max(h, d), d) for d, h in enumerate(heads) if h >= 0)
    level: Dict[int, int] = {}
    done: List[Tuple[int, int, int]] = []
    for _, lo, hi, d in arcs:
        level[d] = 1 + max((lv for a, b, lv in done if lo <= a and b <= hi), default=0)
        done.append((lo, hi, level[d]))
    return level


def _bracket_levels(spans: Sequence[Tuple[int, int, int]]) -> Dict[int, int]:
    """Rows of the constituents' brackets: innermost first, no two in a row sharing a slot."""
    rows: List[List[Tuple[int, int]]] = []
    out: Dict[int, int] = {}
    for a, b, w in sorted(spans, key=lambda s: (s[1] - s[0], s[0])):
        for r, row in enumerate(rows):
            if all(b < lo or a > hi for lo, hi in row):
                row.append((a, b))
                out[w] = r
                break
        else:
            rows.append([(a, b)])
            out[w] = len(rows) - 1
    return out


def _slot_lines(view: SlotView) -> List[Tuple[str, str]]:
    """The channel band of a slot, one ``(kind, text)`` per line."""
    lines: List[Tuple[str, str]] = []
    for k, step in enumerate(view.steps):
        lines.append(("rule", f"{_marks(step.before)} \u2192 {_marks(step.after)}"))
        lines.append(("name", step.edit))
        if k + 1 < len(view.steps):
            lines.append(("string", _marks(step.string)))
    return lines


def _slot_title(view: SlotView, sv: SentenceView) -> str:
    u = "?" if view.underlying is None else (_marks(view.underlying) or "\u03b5")
    parts = [f"slot {view.slot}: underlying {u} \u2192 surface {_marks(view.surface) or chr(0x3b5)}"]
    if view.underlying is None and sv.punctemes is None:
        parts.append("the model gives this sentence's punctuation probability 0: no underlying tree")
    elif view.underlying is None:
        parts.append("this slot holds a mark the model never saw in training: it has no account of it")
    elif not view.explained:
        parts.append("no edit sequence of the channel writes this surface")
    elif view.steps:
        parts.append("edits (" + sv.direction.upper() + "): " + "; ".join(
            f"{s.edit} {_marks(s.before)} \u2192 {_marks(s.after)}, {s.gloss}"
            + (f" (p = {s.prob:.3f})" if s.prob is not None else "") for s in view.steps))
    elif view.underlying:
        parts.append("every bigram kept")
    if view.path_prob is not None:
        parts.append(f"p(edit path) = {view.path_prob:.4f}")
    if view.channel_prob is not None:
        parts.append(f"p(x | u) = {view.channel_prob:.4f}")
    if view.restored_prob is not None:
        parts.append(f"restoration: p(surface) = {view.restored_prob:.4f}")
    return "; ".join(parts)


def render_sentence_svg(sv: SentenceView) -> str:
    """One sentence as an SVG element (see the module docstring for the bands)."""
    n = len(sv.words)
    # -- columns: slot 0, word 0, slot 1, ..., word n-1, slot n
    slot_w, slot_lines = [], []
    for view in sv.slots:
        lines = _slot_lines(view)
        slot_lines.append(lines)
        texts = [(_marks(view.underlying or ()), MARK_SIZE), (_marks(view.surface), MARK_SIZE)]
        texts += [(t, STEP_SIZE if kind != "string" else MARK_SIZE - 2) for kind, t in lines]
        slot_w.append(max(16.0, max(_width(t, s) for t, s in texts)) + PAD)
    word_w = [max(_width(w, WORD_SIZE), _width(p, TAG_SIZE)) + PAD for w, p in zip(sv.words, sv.upos)]
    slot_x, word_x = [], []
    x = float(LEFT)
    for i in range(n + 1):
        slot_x.append(x + slot_w[i] / 2)
        x += slot_w[i]
        if i < n:
            word_x.append(x + word_w[i] / 2)
            x += word_w[i]
    width = x + 16
    # -- vertical layout
    levels = _arc_levels(sv.heads)
    top = 14 + LEVEL_H * max(levels.values(), default=0)
    y_word = top + 22
    y_tag = y_word + 16
    colors: Dict[int, str] = {}
    spans = []
    if sv.punctemes is not None:
        _, _, _, first, last = tree_structure(sv.heads)
        for w, (l, r) in enumerate(sv.punctemes):
            if l or r:
                colors[w] = PALETTE[len(colors) % len(PALETTE)]
                spans.append((first[w], last[w] + 1, w))
    rows = _bracket_levels(spans)
    n_rows = max(rows.values(), default=-1) + 1
    y_br = y_tag + 24
    y_u = y_br + BRACKET_H * n_rows + 10
    band = max((len(lines) for lines in slot_lines), default=0)
    y_band = y_u + 8
    y_x = y_band + LINE_H * band + 24
    height = y_x + 16
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="pg-svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{_e(FONT)}" role="img" '
           f'aria-label="{_e("underlying punctuation of: " + sv.text)}">']
    # band names
    grey = "#777"
    out.append(_text(8, y_word, "words", LABEL_SIZE, "pg-band", grey, "start"))
    if n_rows:
        out.append(_text(8, y_br + 12, "ATTACH", LABEL_SIZE, "pg-band", grey, "start",
                         title="the punctemes each constituent sprouts at its edges"))
    out.append(_text(8, y_u, "underlying u", LABEL_SIZE, "pg-band", grey, "start"))
    if band:
        out.append(_text(8, y_band + LINE_H, "channel " + sv.direction.upper(), LABEL_SIZE, "pg-band", grey,
                         "start", title="the edits that turn u into x (the most probable edit path)"))
    out.append(_text(8, y_x, "surface x", LABEL_SIZE, "pg-band", grey, "start"))
    # slot guides
    for i, view in enumerate(sv.slots):
        if (view.underlying or view.surface) and not view.steps:
            out.append(f'<line class="pg-guide" x1="{slot_x[i]:.1f}" y1="{y_u + 5}" x2="{slot_x[i]:.1f}" '
                       f'y2="{y_x - 15}" stroke="#ddd" stroke-width="1"/>')
    # arcs
    for d, h in enumerate(sv.heads):
        if h < 0:  # under the word's tag, above the brackets
            out.append(_text(word_x[d], y_tag + 11, "root", LABEL_SIZE - 1, "pg-root", grey))
            continue
        x1 = word_x[h] + (5 if d > h else -5)
        x2 = word_x[d]
        y0 = y_word - 18
        yt = y0 - LEVEL_H * levels[d] + 8
        rad = min(8.0, abs(x2 - x1) / 2)
        sx = 1 if x2 > x1 else -1
        path = (f"M{x1:.1f},{y0:.1f} L{x1:.1f},{yt + rad:.1f} Q{x1:.1f},{yt:.1f} {x1 + sx * rad:.1f},{yt:.1f} "
                f"L{x2 - sx * rad:.1f},{yt:.1f} Q{x2:.1f},{yt:.1f} {x2:.1f},{yt + rad:.1f} L{x2:.1f},{y0 - 6:.1f}")
        tip = f"{sv.deprels[d]}: {sv.words[h]} \u2192 {sv.words[d]}"
        out.append(f'<g class="pg-arc" data-head="{h}" data-dep="{d}"><title>{_e(tip)}</title>'
                   f'<path d="{path}" fill="none" stroke="#444" stroke-width="1.4"/>'
                   f'<path d="M{x2 - 4:.1f},{y0 - 7:.1f} L{x2 + 4:.1f},{y0 - 7:.1f} L{x2:.1f},{y0:.1f} Z" '
                   f'fill="#444"/>'
                   + _text((x1 + x2) / 2, yt + 3.5, sv.deprels[d], LABEL_SIZE, "pg-rel", "#333",
                           extra=' stroke="#fff" stroke-width="3" paint-order="stroke"')
                   + "</g>")
    # words and tags
    for w in range(n):
        out.append(_text(word_x[w], y_word, sv.words[w], WORD_SIZE, "pg-word", "#111",
                         extra=' font-weight="bold"'))
        out.append(_text(word_x[w], y_tag, sv.upos[w], TAG_SIZE, "pg-tag", "#888"))
    # brackets: the punctemes each constituent sprouts
    for a, b, w in spans:
        l, r = sv.punctemes[w]
        color = colors[w]
        y = y_br + BRACKET_H * rows[w] + 8
        xa, xb = slot_x[a], slot_x[b]
        la = xa + (_width(_marks(l), MARK_SIZE) / 2 + 3 if l else 0)
        lb = xb - (_width(_marks(r), MARK_SIZE) / 2 + 3 if r else 0)
        tip = (f"{sv.deprels[w]} constituent headed by {sv.words[w]!r} (words {a + 1}-{b}) sprouts "
               f"left {_marks(l) or chr(0x3b5)}, right {_marks(r) or chr(0x3b5)}")
        parts = [f'<g class="pg-bracket" data-node="{w}"><title>{_e(tip)}</title>',
                 f'<path d="M{la:.1f},{y - 5:.1f} L{la:.1f},{y:.1f} L{lb:.1f},{y:.1f} L{lb:.1f},{y - 5:.1f}" '
                 f'fill="none" stroke="{color}" stroke-width="1.5"/>']
        if l:
            parts.append(_text(xa, y + 5, _marks(l), MARK_SIZE, "pg-left", color, extra=' font-weight="bold"'))
        if r:
            parts.append(_text(xb, y + 5, _marks(r), MARK_SIZE, "pg-right", color, extra=' font-weight="bold"'))
        if lb - la > _width(sv.deprels[w], LABEL_SIZE) + 6:
            parts.append(_text((la + lb) / 2, y - 3, sv.deprels[w], LABEL_SIZE - 1, "pg-brel", color))
        parts.append("</g>")
        out.append("".join(parts))
    # slots: underlying, channel, surface
    for i, view in enumerate(sv.slots):
        xs = slot_x[i]
        tip = _slot_title(view, sv)
        if view.underlying is None:
            out.append(_text(xs, y_u, "?", MARK_SIZE, "pg-underlying", "#b00", title=tip))
        elif view.underlying:
            out.append(_colored(xs, y_u, view.underlying, view.sources, colors, MARK_SIZE, "pg-underlying",
                                title=tip))
        y = y_band
        for (kind, text), step_k in zip(slot_lines[i], _line_steps(view)):
            y += LINE_H
            if kind == "rule":
                out.append(_text(xs, y, text, STEP_SIZE, "pg-rule", "#333",
                                 extra=' stroke="#fff" stroke-width="3" paint-order="stroke"', title=tip))
            elif kind == "name":
                out.append(_text(xs, y - 2, text, LABEL_SIZE, "pg-edit", "#a05a00",
                                 extra=' font-style="italic" stroke="#fff" stroke-width="3" paint-order="stroke"'))
            else:
                step = view.steps[step_k]
                out.append(_colored(xs, y, step.string, step.sources, colors, MARK_SIZE - 2, "pg-string"))
        if view.surface:
            out.append(_text(xs, y_x, _marks(view.surface), MARK_SIZE, "pg-surface", "#000",
                             extra=' font-weight="bold"', title=tip))
        elif view.underlying:  # '^' absorbed everything of slot 0
            out.append(_text(xs, y_x, "\u03b5", MARK_SIZE, "pg-empty", "#999", title=tip))
    out.append("</svg>")
    return "".join(out)


def _line_steps(view: SlotView) -> List[int]:
    """Per line of :func:`_slot_lines`, the index of the step it belongs to."""
    out = []
    for k in range(len(view.steps)):
        out += [k, k] + ([k] if k + 1 < len(view.steps) else [])
    return out


STYLE = """
.punctgen-render{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#222}
.punctgen-render .pg-sentence{margin:0 0 1.6em 0}
.punctgen-render figcaption{margin:0 0 .3em 0;font-size:14px}
.punctgen-render .pg-meta{color:#777;font-size:12px;margin-left:.8em}
.punctgen-render .pg-scroll{overflow-x:auto}
.punctgen-render .pg-legend{color:#555;font-size:13px;max-width:60em}
"""

LEGEND = ("Arcs: the dependency tree of the words, punctuation removed. Brackets (ATTACH): each constituent "
          "that sprouts punctuation, with its left and right puncteme at its edges. Underlying u: the marks "
          "the constituents put in each slot, coloured by constituent. Channel: the edits (the most probable "
          "edit path) that turn u into the surface x. Hover for probabilities.")


def _caption(sv: SentenceView) -> str:
    meta = [f"doc {sv.doc_index}, sentence {sv.sentence}", f"{sv.mode} mode",
            f"channel {sv.direction.upper()}" + ("" if sv.model else " (no model: uniform edits)")]
    if sv.punctemes is None and sv.mode == "analyze":
        meta.append("no underlying tree (p(x|T) = 0)")
    return (f'<figcaption><span class="pg-text">{_e(sv.text)}</span>'
            f'<span class="pg-meta">{_e("; ".join(meta))}</span></figcaption>')


class Rendering:
    """What :func:`render` returns: ``html`` (a fragment, or a whole page if made with
    ``page=True``), ``fragment`` and ``page`` (both forms), ``sentences`` (the
    :class:`SentenceView` drawn), ``save(path)`` and ``_repr_html_`` for Jupyter."""

    def __init__(self, sentences: List[SentenceView], title: str = "punctgen", is_page: bool = False,
                 legend: bool = True):
        self.sentences = sentences
        self.title = title
        self.is_page = is_page
        body = "".join(f'<figure class="pg-sentence" data-doc="{sv.doc_index}" data-sentence="{sv.sentence}">'
                       f'{_caption(sv)}<div class="pg-scroll">{render_sentence_svg(sv)}</div></figure>'
                       for sv in sentences)
        legend_html = f'<p class="pg-legend">{_e(LEGEND)}</p>' if legend else ""
        self.fragment = f'<div class="punctgen-render"><style>{STYLE}</style>{legend_html}{body}</div>'

    @property
    def page(self) -> str:
        return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f"<title>{_e(self.title)}</title>\n</head>\n<body>\n{self.fragment}\n</body>\n</html>\n")

    @property
    def html(self) -> str:
        return self.page if self.is_page else self.fragment

    def save(self, path: Union[str, Path]) -> Path:
        """Write the whole page (UTF-8) to ``path``; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.page, encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        return self.fragment

    def __str__(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<Rendering of {len(self.sentences)} sentence(s)>"


def render(docs, model=None, page: bool = False, title: Optional[str] = None, legend: bool = True) -> Rendering:
    """Draw Docs processed by a ``punctgen`` component (analysis or restoration).

    ``docs``: a Doc or an iterable of Docs.  ``model``: whose channel finds the edits (and, for
    restore-mode Docs, the underlying tree): a :class:`PunctModel`, a model directory, the
    ``punctgen`` component or a pipeline holding it; None (default): the model shipped for the
    Docs' language, if one ships; False: no model (uniform edits, R2L).  Pass the model that
    analysed the Docs so that the edits are its channel's.  ``page``: ``html`` is a whole page.
    """
    from spacy.tokens import Doc

    if isinstance(docs, Doc):
        docs = [docs]
    elif isinstance(docs, (str, bytes)) or not isinstance(docs, Iterable):
        raise ValueError(Errors.E072.format(what="docs", got=type(docs).__name__,
                                            expected="a spaCy Doc or an iterable of Docs"))
    docs = list(docs)
    for d in docs:
        if not isinstance(d, Doc):
            raise ValueError(Errors.E072.format(what="docs", got=type(d).__name__,
                                                expected="a spaCy Doc or an iterable of Docs"))
    pm = _resolve_model(model, docs[0].lang_ if docs else "en")
    views = [sv for k, d in enumerate(docs) for sv in sentence_views(d, pm, k)]
    return Rendering(views, title=title or "punctgen: underlying punctuation", is_page=page, legend=legend)


# ----------------------------------------------------------------------------------------
# the ``punctgen render`` command's work


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(Errors.E075.format(path=path, err=err)) from None


def render_source(source: str, *, model: Optional[str] = None, pipeline: Optional[str] = None,
                  mode: str = "analyze", limit: Optional[int] = None, lang: Optional[str] = None,
                  title: Optional[str] = None) -> Tuple[Rendering, dict]:
    """A page for ``source``: a CoNLL-U file (``.conllu``/``.conll``: its gold trees, punctuation
    included), a text file (one text per non-empty line) or a literal text (parsed by the spaCy
    ``pipeline``, which needs a UD parser).

    ``model``: a model directory for the ``punctgen`` component (None: the ``pipeline``'s own
    ``punctgen`` if it has one, else the model shipped for the language; a given ``model``
    replaces the pipeline's).  CoNLL-U trees go through the ``pipeline``'s ``punctgen`` only
    (its parser is not run), or through a blank ``lang`` pipeline's without one.
    ``mode``: ``analyze`` or ``restore``.  ``limit``: at most that many sentences (CoNLL-U) or
    texts.  Returns the rendering (a whole page) and a summary.
    """
    import spacy

    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.pipeline.doc_convert import doc_from_ud

    if mode not in MODES:
        raise ValueError(Errors.E076.format(name="mode", allowed=list(MODES), value=mode))
    if limit is not None and (isinstance(limit, bool) or int(limit) < 1):
        raise ValueError(Errors.E076.format(name="limit", allowed="integers >= 1", value=limit))
    path = Path(source)
    one_line = "\n" not in source and len(source) < 4096
    is_file = one_line and path.is_file()
    if not is_file and one_line and path.suffix.lower() in CONLLU_SUFFIXES + (".txt",):
        raise ValueError(Errors.E077.format(path=source))
    kind = ("conllu" if path.suffix.lower() in CONLLU_SUFFIXES else "text file") if is_file else "text"
    summary: dict = {"input": kind, "mode": mode}
    if kind == "conllu":
        uds = read_conllu(path)
        summary["sentences_in_input"] = len(uds)
        uds = uds[:limit] if limit else uds
        if pipeline is not None:
            nlp = _load_pipeline(pipeline, model, mode)
        else:
            nlp = spacy.blank(lang or "en")
            nlp.add_pipe("punctgen", config={"model": str(model) if model is not None else None, "mode": mode})
        component = nlp.get_pipe("punctgen")
        docs = [component(doc_from_ud(nlp.vocab, ud)) for ud in uds]
    else:
        texts = [line.strip() for line in _read_text(path).splitlines()] if is_file else [source.strip()]
        texts = [t for t in texts if t]
        summary["texts_in_input"] = len(texts)
        texts = texts[:limit] if limit else texts
        if pipeline is None:  # the shipped pipeline, as `restore` uses it
            from spacy_punctgen.api.load import load

            nlp = load(lang or "en", mode=mode, model=model)
            summary["pipeline"] = f"shipped ({lang or 'en'})"
        else:
            nlp = _load_pipeline(pipeline, model, mode)
        docs = list(nlp.pipe(texts))
    ren = render(docs, model=nlp.get_pipe("punctgen"), page=True,
                 title=title or f"punctgen: {path.name if is_file else 'text'}")
    summary["sentences"] = len(ren.sentences)
    summary["slots"] = sum(len(sv.slots) for sv in ren.sentences)
    summary["edits"] = sum(len(v.steps) for sv in ren.sentences for v in sv.slots)
    return ren, summary


def _load_pipeline(name: str, model: Optional[str], mode: str):
    """The spaCy pipeline ``name`` with a ``punctgen`` component running in ``mode`` (a given
    ``model`` replaces the pipeline's own ``punctgen``).  Whatever parses (a ``parser``, a
    spacy_udpipe tokenizer) is the pipeline's business: ``punctgen`` refuses a Doc without a
    UD parse (E001, E002)."""
    import spacy

    from spacy_punctgen.api.load import read_pipeline

    try:
        nlp = read_pipeline(name)  # a damaged file of a saved folder named (E022)
    except (OSError, ValueError) as err:
        raise ValueError(Errors.E079.format(name=name, err=err)) from None
    if "punctgen" in nlp.pipe_names and model is None:
        if nlp.get_pipe("punctgen").cfg["mode"] != mode:
            nlp = spacy.load(name, config={"components": {"punctgen": {"mode": mode}}})
        return nlp
    if "punctgen" in nlp.pipe_names:
        nlp.remove_pipe("punctgen")
    nlp.add_pipe("punctgen", config={"model": str(model) if model is not None else None, "mode": mode})
    return nlp
