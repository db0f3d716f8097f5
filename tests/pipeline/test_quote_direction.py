"""Straight quotes get their direction from where they stand (analysis, the picture) and corrected
text keeps the user's quote style (issue 38)."""
import pytest

import spacy_punctgen
from spacy_punctgen.api.picture import sentence_views
from spacy_punctgen.data.conllu import UDSentence
from spacy_punctgen.data.preprocess import (is_punct, preprocess_sentence, quote_directions, quote_style,
                                             straight_quotes)
from spacy_punctgen.pipeline.correct import correct_docs

LQ, RQ, LS, RS = "\u201c", "\u201d", "\u2018", "\u2019"
SAID = '"I don\'t know," she said, "but it\'s late."'


def _ud(tokens, heads, tags=None):
    """A UDSentence of ``(form, upos, space_after)`` triples (``tags``: XPOS, else ``_``)."""
    n = len(tokens)
    return UDSentence(ids=list(range(1, n + 1)), forms=[t[0] for t in tokens], upos=[t[1] for t in tokens],
                      xpos=list(tags) if tags else ["_"] * n, heads=list(heads),
                      deprels=["punct" if t[1] == "PUNCT" else ("root" if h == 0 else "dep")
                               for t, h in zip(tokens, heads)],
                      space_after=[t[2] for t in tokens])


def _directions(ud, use_xpos=False):
    punct = [is_punct(u, d) for u, d in zip(ud.upos, ud.deprels)]
    found = quote_directions(ud, punct, use_xpos)
    return [found[i] for i in sorted(found)]


# '"I do n't know , " she said , " but it 's late . "' as the shipped parser reads it: the tagger
# tags the quote after ``know,`` ``\`\``` (opening) and the one after ``said,`` ``''`` (closing)
SAID_TOKENS = [('"', "PUNCT", False), ("I", "PRON", True), ("do", "AUX", False), ("n't", "PART", True),
               ("know", "VERB", False), (",", "PUNCT", False), ('"', "PUNCT", True), ("she", "PRON", True),
               ("said", "VERB", False), (",", "PUNCT", True), ('"', "PUNCT", False), ("but", "CCONJ", True),
               ("it", "PRON", False), ("'s", "AUX", True), ("late", "ADJ", False), (".", "PUNCT", False),
               ('"', "PUNCT", False)]
SAID_HEADS = [5, 5, 5, 5, 9, 9, 9, 9, 0, 15, 15, 15, 15, 15, 9, 15, 15]
SAID_TAGS = ["``", "PRP", "VBP", "RB", "VB", ",", "``", "PRP", "VBD", ",", "''", "CC", "PRP", "VBZ", "JJ",
             ".", "''"]


@pytest.mark.parametrize("use_xpos", [False, True])
def test_spacing_directs_the_quotes_of_a_split_quotation(use_xpos):
    ud = _ud(SAID_TOKENS, SAID_HEADS, SAID_TAGS)
    assert _directions(ud, use_xpos) == [True, False, True, False]
    s, _ = preprocess_sentence(ud, quote_xpos=use_xpos)
    assert s.slots == [(LQ,), (), (), (), (",", RQ), (), (",", LQ), (), (), (), (".", RQ)]


def test_spacing_beats_a_wrong_tag_and_an_even_head_group():
    # 'He said: "Go," then left.' with both quotes hung from "said" and tagged the wrong way round
    ud = _ud([("He", "PRON", True), ("said", "VERB", False), (":", "PUNCT", True), ('"', "PUNCT", False),
              ("Go", "VERB", False), (",", "PUNCT", False), ('"', "PUNCT", True), ("then", "ADV", True),
              ("left", "VERB", False), (".", "PUNCT", False)],
             [2, 0, 2, 2, 2, 5, 2, 9, 2, 2], ["PRP", "VBD", ":", "''", "VB", ",", "``", "RB", "VBD", "."])
    assert _directions(ud, use_xpos=True) == [True, False]


@pytest.mark.parametrize("tokens, heads, expected", [
    # '("I': written close up to an opening bracket, the quote still opens
    ([("(", "PUNCT", False), ('"', "PUNCT", False), ("I", "PRON", True), ("go", "VERB", False),
      (".", "PUNCT", False)], [4, 4, 4, 0, 4], [True]),
    # 'no".': close up to the word before, the mark after it is no word: it closes
    ([("say", "VERB", True), ('"', "PUNCT", False), ("no", "INTJ", False), ('"', "PUNCT", False),
      (".", "PUNCT", False)], [0, 3, 1, 1, 1], [True, False]),
    # 'qu\'ils le fassent . "': spaced on both sides, no word after it: it closes
    ([("fassent", "VERB", True), (".", "PUNCT", True), ('"', "PUNCT", False)], [0, 1, 1], [False]),
    # '" J\'ai senti': spaced on both sides, no word before it: it opens
    ([('"', "PUNCT", True), ("J'ai", "VERB", True), ("senti", "VERB", False)], [2, 0, 2], [True]),
    # 'dit " oui " et " non "': spaced everywhere, hung from different heads: alternation pairs them
    ([("dit", "VERB", True), ('"', "PUNCT", True), ("oui", "INTJ", True), ('"', "PUNCT", True),
      ("et", "CCONJ", True), ('"', "PUNCT", True), ("non", "INTJ", True), ('"', "PUNCT", True),
      ("fin", "NOUN", False)], [0, 1, 1, 3, 7, 7, 1, 9, 1], [True, False, True, False]),
])
def test_quote_direction_by_position(tokens, heads, expected):
    assert _directions(_ud(tokens, heads)) == expected


def test_quote_style_follows_the_text():
    assert straight_quotes('He said, "no".') == {'"'}
    assert straight_quotes("He said, \u201cno\u201d.") == frozenset()
    # the sentence has no quote: the document decides; an apostrophe counts as the writer's style
    assert straight_quotes("No quotes here.", 'Then "this" and that\'s it.') == {'"', "'"}
    assert straight_quotes("No quotes here.", "") == frozenset()  # nothing to go by: directed
    assert quote_style((".", RQ, RS), frozenset({'"'})) == (".", '"', RS)
    assert quote_style((LS, ","), frozenset({"'"})) == ("'", ",")


@pytest.fixture(scope="module")
def analyze_nlp():
    return spacy_punctgen.load("en", mode="analyze")


def test_analysis_directs_the_split_quotation(analyze_nlp):
    doc = analyze_nlp(SAID)
    by_text = {t.text: (t._.punct_left, t._.punct_right) for t in doc if t._.punct_left is not None}
    assert by_text["she"][0] == ()  # no quote opens before "she"
    assert RQ in by_text["know"][1] and LQ not in by_text["know"][1]
    surfaces = [e["surface"] for e in doc._.underlying_punct]
    assert surfaces == [(LQ,), (), (), (), (",", RQ), (), (",", LQ), (), (), (), (".", RQ)]
    # the picture reads the same slots
    pm = analyze_nlp.get_pipe("punctgen").punct_model
    (view,) = sentence_views(doc, pm)
    assert [s.surface for s in view.slots] == surfaces


@pytest.mark.parametrize("text, expected", [
    ('He said, "no".', 'He said, "no."'),
    ("He said, \u201cno\u201d.", "He said, \u201cno.\u201d"),
])
def test_correction_keeps_the_quote_style(analyze_nlp, text, expected):
    pm = analyze_nlp.get_pipe("punctgen").punct_model
    doc = analyze_nlp(text)
    (res,) = correct_docs(pm, [doc])
    assert res["corrected_text"] == expected == doc._.corrected_text
