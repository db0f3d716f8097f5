"""`spacy_punctgen.render` and `punctgen render`: the HTML/SVG picture of the underlying tree.

Structural checks on the HTML text: every slot's underlying and surface strings are drawn,
one arc per non-root word, the SVG is well-formed XML, text is escaped, ``page=True`` is a
whole document; the channel's edit paths against the channel's own enumeration.
"""
import itertools
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc

import spacy_punctgen
from spacy_punctgen.cli import main
from spacy_punctgen.model.channel import (KEEP, apply_edit, bos_edit_mask, channel_distribution,
                                          channel_probs)
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.doc_convert import punct_sentences
from spacy_punctgen.api.picture import Rendering, edit_path, render, render_source
from spacy_punctgen.pipeline.shipped import default_model_path

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
TEST = SAMPLE / "en_sample-ud-test.conllu"
SVG_NS = "{http://www.w3.org/2000/svg}"
#: Words and marks that would be markup if they were not escaped.
HOSTILE_WORD = "<script>window.__pwned=1</script>"
HOSTILE_OBJ = '<img src=x onerror="window.__pwned=2">'
HOSTILE_MARK = "</svg>"


class _Figures(HTMLParser):
    """Per ``figure.pg-sentence``: all its text, and the text of each element by class."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.figures = []
        self._stack = []  # (tag, classes) of the open elements inside a figure

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = tuple((attrs.get("class") or "").split())
        if tag == "figure" and "pg-sentence" in classes:
            self.figures.append({"text": [], "by_class": {}, "arcs": [], "attrs": attrs})
            self._stack = []
        if not self.figures:
            return
        fig = self.figures[-1]
        if tag == "g" and "pg-arc" in classes:
            fig["arcs"].append((int(attrs["data-head"]), int(attrs["data-dep"])))
        if tag not in ("meta", "line", "path", "br"):
            self._stack.append((tag, classes))
            for c in classes:
                fig["by_class"].setdefault(c, []).append([])

    def handle_endtag(self, tag):
        if self.figures and self._stack:
            while self._stack:
                open_tag, _ = self._stack.pop()
                if open_tag == tag:
                    break

    def handle_data(self, data):
        if not self.figures:
            return
        fig = self.figures[-1]
        fig["text"].append(data)
        in_title = any(t == "title" for t, _ in self._stack)
        if in_title:
            return
        for _, classes in self._stack:
            for c in classes:
                fig["by_class"][c][-1].append(data)


def figures(html):
    parser = _Figures()
    parser.feed(html)
    for fig in parser.figures:
        fig["text"] = "".join(fig["text"])
        fig["by_class"] = {c: ["".join(parts) for parts in items] for c, items in fig["by_class"].items()}
    return parser.figures


def _marks(seq):
    return " ".join(seq)


@pytest.fixture(scope="module")
def shipped_nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen")  # the shipped English model
    return nlp


@pytest.fixture(scope="module")
def analysed(shipped_nlp, gold_docs):
    return [shipped_nlp(doc) for doc in gold_docs(shipped_nlp, n=None)]


@pytest.fixture(scope="module")
def rendering(analysed, shipped_nlp):
    return render(analysed, model=shipped_nlp.get_pipe("punctgen"))


def hostile_doc(vocab):
    words = [HOSTILE_WORD, "said", HOSTILE_OBJ, HOSTILE_MARK, "loudly", "."]
    return Doc(vocab, words=words, spaces=[True] * 5 + [False],
               pos=["PROPN", "VERB", "NOUN", "PUNCT", "ADV", "PUNCT"],
               heads=[1, 1, 1, 1, 1, 1], deps=["nsubj", "ROOT", "obj", "punct", "advmod", "punct"])


# ------------------------------------------------------------------ every slot is drawn
def test_every_slot_underlying_and_surface_are_drawn(analysed, rendering):
    figs = figures(rendering.html)
    entries = [e for doc in analysed for e in doc._.underlying_punct]
    assert len(figs) == len(rendering.sentences) == len({(id(d), e["sentence"]) for d in analysed
                                                          for e in d._.underlying_punct})
    assert sum(len(sv.slots) for sv in rendering.sentences) == len(entries)
    n_marked = 0
    for fig, sv in zip(figs, rendering.sentences):
        surfaces = [_marks(v.surface) for v in sv.slots if v.surface]
        underlying = ["?" if v.underlying is None else _marks(v.underlying) for v in sv.slots
                      if v.underlying is None or v.underlying]
        # drawn in slot order, one element per non-empty slot, and nowhere dropped
        assert fig["by_class"].get("pg-surface", []) == surfaces
        assert fig["by_class"].get("pg-underlying", []) == underlying
        for s in surfaces + underlying:
            assert s in fig["text"]
        n_marked += len(surfaces)
    assert n_marked > 30  # the sample's test sentences have punctuation to draw
    # the drawn strings are the component's: doc._.underlying_punct, slot by slot
    views = [v for sv in rendering.sentences for v in sv.slots]
    assert [(tuple(e["underlying"]) if e["underlying"] is not None else None, tuple(e["surface"]))
            for e in entries] == [(v.underlying, v.surface) for v in views]


def test_one_arc_per_non_root_word(analysed, rendering):
    figs = iter(figures(rendering.html))
    for doc in analysed:
        for _, ps, _ in punct_sentences(doc):
            if ps is None:
                continue
            fig = next(figs)
            expected = sorted((h, d) for d, h in enumerate(ps.heads) if h >= 0)
            assert sorted(fig["arcs"]) == expected
            assert len(fig["arcs"]) == sum(1 for h in ps.heads if h >= 0) == len(ps.words) - ps.heads.count(-1)
            assert fig["by_class"]["pg-word"] == list(ps.words)
            assert fig["by_class"]["pg-rel"] == [ps.deprels[d] for d, h in enumerate(ps.heads) if h >= 0]


def test_brackets_show_each_constituents_punctemes(analysed, rendering):
    figs = figures(rendering.html)
    tokens = {}
    for doc in analysed:
        for _, ps, words in punct_sentences(doc):
            if ps is not None:
                tokens[len(tokens)] = [(doc[t]._.punct_left, doc[t]._.punct_right) for t in words]
    for k, (fig, sv) in enumerate(zip(figs, rendering.sentences)):
        pairs = tokens[k]
        sprouting = [(l, r) for l, r in pairs if l or r]
        assert len(fig["by_class"].get("pg-bracket", [])) == len(sprouting)
        assert fig["by_class"].get("pg-left", []) == [_marks(l) for l, r in sprouting if l]
        assert fig["by_class"].get("pg-right", []) == [_marks(r) for l, r in sprouting if r]
        # every underlying mark is coloured by the constituent that sprouted it
        for v in sv.slots:
            if v.underlying:
                assert len(v.sources) == len(v.underlying)
                for w, mark in zip(v.sources, v.underlying):
                    assert mark in pairs[w][0] + pairs[w][1]


def test_edits_turn_underlying_into_surface(rendering):
    seen = set()
    for sv in rendering.sentences:
        for v in sv.slots:
            if v.underlying is None:
                continue
            assert v.explained
            if not v.steps:
                assert v.underlying == v.surface
                continue
            last = v.steps[-1].string
            assert (last[1:] if v.slot == 0 and last[:1] == ("^",) else last) == v.surface
            assert 0 < v.path_prob <= v.channel_prob <= 1 + 1e-9
            for step in v.steps:
                seen.add((step.edit, step.before, step.after))
                assert step.edit in ("absorb_left", "absorb_right", "transpose")
                assert 0 < step.prob <= 1
    # the sample shows the two absorptions of docs/model.md: `, ,` -> `,` and `? .` -> `?`
    assert any(before == (",", ",") and after == (",",) for _, before, after in seen)
    assert any(before == ("?", ".") and after == ("?",) for _, before, after in seen)


def test_a_slot_with_two_commas_shows_the_absorption(rendering):
    figs = figures(rendering.html)
    k, v = next((k, v) for k, sv in enumerate(rendering.sentences) for v in sv.slots
                if v.underlying == (",", ",") and v.surface == (",",))
    assert [s.edit for s in v.steps] in (["absorb_left"], ["absorb_right"])
    assert ", , \u2192 ," in figs[k]["by_class"]["pg-rule"]
    assert v.steps[0].edit in figs[k]["by_class"]["pg-edit"]


# ------------------------------------------------------------------ the channel's edit paths
@pytest.mark.parametrize("r2l", [False, True])
def test_edit_path_is_the_best_path_of_the_channel(r2l):
    """Against the channel's own enumeration (max-product over edit paths) for every surface
    every short underlying string can give, with a random channel."""
    rng = np.random.default_rng(3)
    n_sym = 4
    phi = channel_probs(rng.normal(0, 1.5, (n_sym, n_sym, 4)), bos_edit_mask(n_sym, r2l))
    checked = 0
    for length in range(1, 5):
        for u in itertools.product(range(1, n_sym), repeat=length):
            best = channel_distribution(u, phi, r2l, use_max=True)
            marks = [str(s) for s in u]
            for x in set(best) | {tuple(reversed(u)), (u[0],) * (length + 1)}:
                found = edit_path(marks, [str(s) for s in x], list(u), phi, r2l)
                if x not in best:
                    assert found is None
                    continue
                path, logp = found
                assert np.isclose(np.exp(logp), best[x], rtol=1e-9)
                # replaying the path with the channel's own rules writes x
                order = list(range(length))[::-1] if r2l else list(range(length))
                written, pending = [], order[0]
                for (edit, a, b), nxt in zip(path, order[1:]):
                    assert a == pending and b == nxt
                    w, pending = apply_edit(edit, a, b)
                    if w is not None:
                        written.append(w)
                out = [u[p] for p in written + [pending]]
                assert tuple(out[::-1] if r2l else out) == x
                checked += 1
    assert checked > 100


def test_edit_path_at_slot_zero_keeps_the_start_symbol():
    """Slot 0 is read with '^' in front: the edits that would delete or move it are masked."""
    for r2l in (False, True):
        phi = channel_probs(np.zeros((3, 3, 4)), bos_edit_mask(3, r2l))
        assert edit_path(["^", ","], [","], [0, 1], phi, r2l) is None  # '^' cannot be deleted
        assert edit_path(["^", ","], [",", "^"], [0, 1], phi, r2l) is None  # nor moved
        path, _ = edit_path(["^", ","], ["^"], [0, 1], phi, r2l)  # but it absorbs
        assert [e for e, _, _ in path] != [KEEP]


def test_ties_go_to_the_fewest_edits():
    phi = channel_probs(np.zeros((3, 3, 4)))  # uniform: every path equally likely
    path, _ = edit_path([",", "."], [",", "."], [1, 2], phi, False)
    assert [e for e, _, _ in path] == [KEEP]


# ------------------------------------------------------------------ escaping, the page, Jupyter
def test_text_is_escaped(shipped_nlp):
    doc = shipped_nlp(hostile_doc(shipped_nlp.vocab))
    ren = render(doc, model=shipped_nlp.get_pipe("punctgen"), page=True, title="<title>x</title>")
    page = ren.html
    for raw in (HOSTILE_WORD, HOSTILE_OBJ, "<title>x</title>", "<img", "<script"):
        assert raw not in page
    assert page.count("<svg") == page.count("</svg>") == 1  # the mark "</svg>" closes nothing
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    (fig,) = figures(page)
    assert HOSTILE_WORD in fig["by_class"]["pg-word"] and HOSTILE_OBJ in fig["by_class"]["pg-word"]
    assert HOSTILE_MARK in fig["by_class"]["pg-surface"]
    assert HOSTILE_WORD in fig["by_class"]["pg-text"][0]  # the caption
    # the mark the model never saw has no underlying string: drawn as '?', not guessed
    (sv,) = ren.sentences
    unseen = next(v for v in sv.slots if HOSTILE_MARK in v.surface)
    assert unseen.underlying is None and unseen.steps == []
    assert "?" in fig["by_class"]["pg-underlying"]
    _well_formed_svgs(page)


def _well_formed_svgs(page):
    """Every SVG is well-formed XML (an unescaped '<' or '&' would not parse)."""
    start = 0
    n = 0
    while True:
        a = page.find("<svg", start)
        if a < 0:
            break
        b = page.index("</svg>", a) + len("</svg>")
        root = ET.fromstring(page[a:b])
        assert root.tag == SVG_NS + "svg"
        assert float(root.get("width")) > 0 and float(root.get("height")) > 0
        start = b
        n += 1
    return n


def test_page_is_a_whole_document_and_the_fragment_is_not(rendering, analysed, tmp_path):
    page = render(analysed[:3], page=True, model=False)
    html = page.html
    assert html.startswith("<!DOCTYPE html>\n<html")
    assert html.rstrip().endswith("</html>")
    for tag in ('<meta charset="utf-8">', "<head>", "</head>", "<body>", "</body>"):
        assert html.count(tag) == 1, tag
    head = html[html.index("<head>"):html.index("</head>")]
    assert head.count("<title>") == 1 and '<meta charset="utf-8">' in head
    assert html.index("</head>") < html.index("<body>") < html.index("<svg")
    assert "<script" not in html  # the picture needs no script
    assert _well_formed_svgs(html) == len(page.sentences) == 3
    # the fragment, for Jupyter and for embedding
    frag = rendering.html
    assert rendering._repr_html_() == frag == rendering.fragment == str(rendering)
    assert frag.startswith('<div class="punctgen-render">') and frag.endswith("</div>")
    assert "<html" not in frag and "<!DOCTYPE" not in frag and "<body" not in frag
    assert page._repr_html_() == page.fragment and page.fragment in page.html
    # save() always writes the whole page
    out = rendering.save(tmp_path / "sub" / "page.html")
    text = out.read_text(encoding="utf-8")
    assert text == rendering.page and text.startswith("<!DOCTYPE html>")


def test_exported_from_the_package(analysed):
    ren = spacy_punctgen.render(analysed[0], model=False)
    assert isinstance(ren, Rendering) and len(ren.sentences) == 1
    assert "render" in spacy_punctgen.__all__


# ------------------------------------------------------------------ models and modes
def test_the_model_can_be_given_in_every_form(analysed, shipped_nlp, rendering):
    path = default_model_path("en")
    expected = [[(s.edit, s.before, s.after) for v in sv.slots for s in v.steps] for sv in rendering.sentences]
    for model in (path, str(path), PunctModel.from_disk(path), shipped_nlp, None):
        got = render(analysed, model=model)
        assert [[(s.edit, s.before, s.after) for v in sv.slots for s in v.steps] for sv in got.sentences] == expected
        assert all(sv.model and sv.direction == "r2l" for sv in got.sentences)


def test_without_a_model_the_edits_are_still_found(analysed):
    ren = render(analysed, model=False)
    n = 0
    for sv in ren.sentences:
        assert not sv.model
        for v in sv.slots:
            if v.underlying is not None and v.underlying != v.surface:
                assert v.steps and v.path_prob is None and all(s.prob is None for s in v.steps)
                last = v.steps[-1].string
                assert (last[1:] if v.slot == 0 else last) == v.surface
                n += 1
    assert n >= 3
    assert "no model: uniform edits" in ren.html


def test_restore_mode_docs(gold_docs):
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen", config={"mode": "restore", "restore_method": "marginal"})
    docs = [nlp(doc) for doc in gold_docs(nlp, n=6)]
    ren = render(docs, model=nlp.get_pipe("punctgen"))
    entries = [e for doc in docs for e in doc._.restored_punct]
    views = [v for sv in ren.sentences for v in sv.slots]
    assert [tuple(e["surface"]) for e in entries] == [v.surface for v in views]
    assert sum(1 for v in views if v.surface) >= 6
    for fig, sv in zip(figures(ren.html), ren.sentences):
        assert sv.mode == "restore" and sv.punctemes is not None  # explained by the best underlying tree
        assert fig["by_class"].get("pg-surface", []) == [_marks(v.surface) for v in sv.slots if v.surface]
        for v in sv.slots:
            assert v.restored_prob is not None and v.underlying is not None
            final = v.steps[-1].string if v.steps else v.underlying
            assert tuple(m for m in final if m != "^") == v.surface
    # without a model the surface is all there is
    plain = render(docs, model=False)
    assert all(v.underlying == v.surface and not v.steps for sv in plain.sentences for v in sv.slots)
    assert all(sv.punctemes is None for sv in plain.sentences)


# ------------------------------------------------------------------ errors
def test_errors(analysed, shipped_nlp, tmp_path):
    with pytest.raises(ValueError, match=r"\[E070\]"):
        render(shipped_nlp.make_doc("no punctgen here"))
    with pytest.raises(ValueError, match=r"\[E072\]"):
        render("a string")
    with pytest.raises(ValueError, match=r"\[E072\]"):
        render([analysed[0], "a string"])
    with pytest.raises(ValueError, match=r"\[E072\]"):
        render(analysed[0], model=3)
    with pytest.raises(ValueError, match=r"\[E073\]"):
        render(analysed[0], model=tmp_path / "no_model")
    with pytest.raises(ValueError, match=r"\[E074\]"):
        render(analysed[0], model=spacy.blank("en"))
    doc = analysed[0].copy()
    doc._.underlying_punct = doc._.underlying_punct[:-1]
    with pytest.raises(ValueError, match=r"\[E071\]"):
        render(doc)
    with pytest.raises(ValueError, match=r"\[E076\]"):
        render_source(str(TEST), mode="correct")
    with pytest.raises(ValueError, match=r"\[E076\]"):
        render_source(str(TEST), limit=0)
    with pytest.raises(ValueError, match=r"\[E077\]"):
        render_source(str(tmp_path / "missing.conllu"))
    # a text without --pipeline: the shipped pipeline parses it, as restore does
    ren, summary = render_source("When I came, he left.")
    assert summary["pipeline"] == "shipped (en)" and summary["sentences"] >= 1
    with pytest.raises(ValueError, match=r"\[E079\]"):
        render_source("When I came, he left.", pipeline=str(tmp_path / "no_pipeline"))
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 au lait".encode("latin-1"))
    with pytest.raises(ValueError, match=r"\[E075\]"):
        render_source(str(bad), pipeline="unused")


# ------------------------------------------------------------------ the command
def test_command_writes_a_page(tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["render", str(TEST), "-o", str(out), "--limit", "4", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["input"] == "conllu" and summary["sentences"] == 4 and summary["sentences_in_input"] == 35
    assert summary["output"] == str(out)
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and len(figures(page)) == 4
    assert summary["slots"] == sum(len(f["by_class"].get("pg-word", [])) + 1 for f in figures(page))
    # restore mode, to stdout
    assert main(["render", str(TEST), "-o", "-", "--limit", "2", "--mode", "restore"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("<!DOCTYPE html>") and "restore mode" in printed and len(figures(printed)) == 2


def test_command_errors(tmp_path, capsys):
    out = str(tmp_path / "page.html")
    assert main(["render", str(TEST), "-o", "-", "--json"]) == 1
    assert "[E661]" in capsys.readouterr().err
    empty = tmp_path / "empty.conllu"
    empty.write_text("", encoding="utf-8")
    assert main(["render", str(empty), "-o", out]) == 1
    assert "[E662]" in capsys.readouterr().err
    assert main(["render", str(tmp_path / "typo.conllu"), "-o", out]) == 1
    assert "[E077]" in capsys.readouterr().err
    assert main(["render", "some words", "-o", str(tmp_path / "words.html")]) == 0  # the shipped pipeline parses it
    capsys.readouterr()
    assert main(["render", str(tmp_path), "-o", out]) == 1
    assert "[E626]" in capsys.readouterr().err
    assert main(["render", str(TEST), "-o", str(tmp_path)]) == 1
    assert "[E626]" in capsys.readouterr().err
    assert main(["render", str(TEST), "-o", out, "--limit", "0"]) == 2  # a usage error
    assert not Path(out).exists()


@Language.component("punctgen_render_test_flat_parser")
def flat_parser(doc):
    """A parser of the test's own: every token hangs from the last word, punctuation as ``punct``
    (one projective UD tree per text, with no training)."""
    root = [t for t in doc if not t.is_punct][-1]
    for t in doc:
        t.pos_ = "PUNCT" if t.is_punct else "X"
        t.head = t if t.i == root.i else root
        t.dep_ = "ROOT" if t.i == root.i else ("punct" if t.is_punct else "dep")
    return doc


@pytest.fixture(scope="module")
def parser_dir(tmp_path_factory):
    """A saved pipeline that parses with :func:`flat_parser`."""
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen_render_test_flat_parser")
    out = tmp_path_factory.mktemp("parser")
    nlp.to_disk(out)
    return out


def test_command_on_text_with_a_pipeline(parser_dir, tmp_path, capsys, analysed):
    text = tmp_path / "texts.txt"
    text.write_text("When I came, he left.\n\nThe question is, what did he know?\n", encoding="utf-8")
    out = tmp_path / "page.html"
    assert main(["render", str(text), "--pipeline", str(parser_dir), "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["input"] == "text file" and summary["texts_in_input"] == 2
    figs = figures(out.read_text(encoding="utf-8"))
    assert len(figs) == summary["sentences"] >= 2
    drawn = " ".join(s for f in figs for s in f["by_class"].get("pg-surface", []))
    assert drawn.split() == [",", ".", ",", "?"]
    # CoNLL-U with a pipeline: its punctgen runs on the gold trees, its parser does not
    ren, summary = render_source(str(TEST), pipeline=str(parser_dir), limit=2)
    assert summary["input"] == "conllu" and summary["sentences"] == 2
    gold = [ps for doc in analysed[:2] for _, ps, _ in punct_sentences(doc)]
    assert [sv.heads for sv in ren.sentences] == [ps.heads for ps in gold]
    # a literal text, and a pipeline that lacks a parser
    ren, summary = render_source("Hello, world.", pipeline=str(parser_dir))
    assert summary["input"] == "text" and ren.is_page
    no_parser = tmp_path / "blank"
    spacy.blank("en").to_disk(no_parser)
    with pytest.raises(ValueError, match=r"\[E001\]"):  # the component's: the Doc has no parse
        render_source("Hello, world.", pipeline=str(no_parser))
