"""The optional templates ``phead``, ``word_dir``, ``kid_words``, ``edge_upos`` and
``inner_rel`` (added for zh): the contexts they produce on a hand-built tree, that the
defaults do not use them, and that the surface-conditioned ``inner_rel`` keeps
``p(x|T)`` a proper distribution."""
import numpy as np
import pytest

from spacy_punctgen.features.templates import (DEFAULT_TEMPLATES, SURFACE_TEMPLATES, FeatureConfig,
                                     node_contexts)
from spacy_punctgen.testing.toy import LQ, RQ, punct_sentence as _S, toy_inventory, toy_sentences

NEW = ("phead", "word_dir", "kid_words", "edge_upos", "inner_rel", "inner_upos", "inner_side", "inner_count")


def note_sentence():
    """Note : it rains , “ really ” .   (Note <-root- ; rains -parataxis-> Note;
    it -nsubj-> rains; really -advmod-> rains)"""
    return _S(["Note", "it", "rains", "really"], ["NOUN", "PRON", "VERB", "ADV"], [-1, 2, 0, 2],
              ["root", "nsubj", "parataxis", "advmod"], [(), (":",), (), (",", LQ), (RQ, ".")])


def _ctx(template):
    return node_contexts(note_sentence(), toy_inventory(), ["rel", template])


def test_defaults_are_unchanged():
    assert DEFAULT_TEMPLATES == (
        "rel", "full", "upos", "dir", "dir_upos", "parent", "grandparent", "depth", "child",
        "child_side", "nkids", "sib", "flank", "flank_out", "edge", "len", "word", "span_words",
        "out_words", "global")
    assert not set(NEW) & set(DEFAULT_TEMPLATES)
    assert set(NEW[4:]) <= SURFACE_TEMPLATES  # restoration refuses them, as inner


def test_phead():
    c = _ctx("phead")
    assert c[0] == ["root", "root|phword=ROOT", "root|prel=ROOT|upos=NOUN"]
    assert c[2] == ["parataxis", "parataxis|phword=Note", "parataxis|prel=root|upos=VERB"]
    assert c[3] == ["advmod", "advmod|phword=rains", "advmod|prel=parataxis|upos=ADV"]


def test_word_dir():
    c = _ctx("word_dir")
    assert c[0] == ["root", "root|word=Note|dir=root"]
    assert c[1] == ["nsubj", "nsubj|word=it|dir=L"]
    assert c[3] == ["advmod", "advmod|word=really|dir=R"]


def test_kid_words_names_function_children_only():
    c = _ctx("kid_words")
    # rains has an nsubj child (not a function relation) and an advmod child
    assert c[2] == ["parataxis", "parataxis|kw=advmod=really|side=R"]
    assert c[0] == ["root"] and c[1] == ["nsubj"]  # parataxis child / no children


def test_global_words_are_shared_across_relations():
    c = _ctx("global_words")
    # "rains" (parataxis) spans "it rains really": words 1..3
    assert c[2] == ["parataxis", "*|word=rains", "*|fword=it", "*|lword=really", "*|pword=Note", "*|nword=EOS"]
    assert c[0] == ["root", "*|word=Note", "*|fword=Note", "*|lword=really", "*|pword=BOS", "*|nword=EOS"]
    # the same word heading a constituent of another relation gets the same contexts
    other = _S(["Note", "it", "rains", "really"], ["NOUN", "PRON", "VERB", "ADV"], [-1, 2, 0, 2],
               ["root", "nsubj", "ccomp", "advmod"], [(), (), (), (), ()])
    assert node_contexts(other, toy_inventory(), ["rel", "global_words"])[2][1:] == c[2][1:]
    assert "global_words" not in SURFACE_TEMPLATES  # trees and words only: restoration may use it


def test_edge_bigrams_pair_the_words_across_each_boundary():
    c = _ctx("edge_bigrams")
    # "rains" spans "it rains really" (words 1..3): Note|it before it, really|EOS after it
    assert c[2] == ["parataxis", "*|lbi=Note+it", "*|rbi=really+EOS"]
    assert c[1] == ["nsubj", "*|lbi=Note+it", "*|rbi=it+rains"]
    assert c[0] == ["root", "*|lbi=BOS+Note", "*|rbi=really+EOS"]
    from spacy_punctgen.data.inventory import PunctInventory
    inv = PunctInventory.from_sentences(toy_sentences(), min_count=2)  # rare words are UNK
    assert node_contexts(note_sentence(), inv, ["rel", "edge_bigrams"])[3] == ["advmod", "*|lbi=UNK+UNK", "*|rbi=UNK+EOS"]
    assert "edge_bigrams" not in SURFACE_TEMPLATES


def test_global_shapes_keep_the_shape_of_rare_words():
    from spacy_punctgen.data.inventory import PunctInventory
    inv = PunctInventory.from_sentences(toy_sentences(), min_count=2)  # rare words are UNK
    initials = _S(["R", "K", "Narayan", "wrote", "1999"], ["PROPN", "PROPN", "PROPN", "VERB", "NUM"],
                  [2, 2, 3, -1, 3], ["flat", "flat", "nsubj", "root", "obj"],
                  [(), ("ABBR.",), ("ABBR.",), (), (), (".",)])
    c = node_contexts(initials, inv, ["rel", "global_words", "global_shapes"])
    # the words are UNK to global_words, their shapes are not
    assert c[0] == ["flat", "*|word=UNK", "*|fword=UNK", "*|lword=UNK", "*|pword=BOS", "*|nword=UNK",
                    "*|wshape=X", "*|fshape=X", "*|lshape=X", "*|pshape=BOS", "*|nshape=X"]
    # Narayan spans "R K Narayan" (words 0..2); spaCy's shape truncates runs after 4
    assert c[2][6:] == ["*|wshape=Xxxxx", "*|fshape=X", "*|lshape=Xxxxx", "*|pshape=BOS", "*|nshape=xxxx"]
    assert c[4][6:] == ["*|wshape=dddd", "*|fshape=dddd", "*|lshape=dddd", "*|pshape=xxxx", "*|nshape=EOS"]
    assert "global_shapes" not in SURFACE_TEMPLATES and "global_shapes" not in DEFAULT_TEMPLATES


def test_templates_option_expands_default():
    from spacy_punctgen.training.train import parse_templates
    assert parse_templates(None) is None and parse_templates("") is None
    assert parse_templates("default") == list(DEFAULT_TEMPLATES)
    assert parse_templates("default,global_words,word") == list(DEFAULT_TEMPLATES) + ["global_words"]
    assert parse_templates("rel, upos") == ["rel", "upos"]


def test_kid_words_rare_words_are_unk():
    from spacy_punctgen.data.inventory import PunctInventory
    inv = PunctInventory.from_sentences(toy_sentences(), min_count=2)
    c = node_contexts(note_sentence(), inv, ["rel", "kid_words"])
    assert c[2] == ["parataxis", "parataxis|kw=advmod=UNK|side=R"]


def test_edge_upos():
    c = _ctx("edge_upos")
    assert c[1] == ["nsubj", "nsubj|lout=NOUN|lin=PRON", "nsubj|rin=PRON|rout=VERB"]
    assert c[2] == ["parataxis", "parataxis|lout=NOUN|lin=PRON", "parataxis|rin=ADV|rout=EOS"]
    assert c[0] == ["root", "root|lout=BOS|lin=NOUN", "root|rin=ADV|rout=EOS"]


def test_inner_rel_reads_interior_slots_only():
    c = _ctx("inner_rel")
    # root spans slots 0..4; its child rains starts at interior slot 1 (":")
    assert c[0] == ["root", "root|inrel=parataxis|L=:"]
    # rains spans words 1..3 (slots 1..4): really's left slot 3 is interior, slot 4 is not;
    # it's right slot 2 is interior but empty, its left slot 1 is rains's own boundary
    assert c[2] == ["parataxis", "parataxis|inrel=advmod|L=, \u201c"]
    assert c[1] == ["nsubj"] and c[3] == ["advmod"]
    # the boundary slots of a span never matter
    s = note_sentence()
    s.slots[4] = ("!",)
    s.slots[1] = ("(",)
    c2 = node_contexts(s, toy_inventory(), ["rel", "inner_rel"])
    assert c2[2] == c[2]
    assert c2[0] == ["root", "root|inrel=parataxis|L=("]


def test_inner_upos():
    c = _ctx("inner_upos")
    # root spans slots 0..4: interior slots 1 (":") and 3 (", “") are punctuated
    assert c[0] == ["root", "root|inpos=NOUN|:|PRON", "root|inpos=VERB|, \u201c|ADV"]
    assert c[2] == ["parataxis", "parataxis|inpos=VERB|, \u201c|ADV"]
    assert c[1] == ["nsubj"]  # one word: no interior slot


def test_inner_side():
    c = _ctx("inner_side")
    # root Note (word 0): both interior punctuated slots lie right of it
    assert c[0] == ["root", "root|hside=R|in=, \u201c", "root|hside=R|in=, \u201c|upos=NOUN",
                    "root|hside=R|in=:", "root|hside=R|in=:|upos=NOUN"]
    # rains (word 2) spans slots 1..4: slot 3 (before 'really') is right of it
    assert c[2] == ["parataxis", "parataxis|hside=R|in=, \u201c", "parataxis|hside=R|in=, \u201c|upos=VERB"]
    s = note_sentence()
    s.slots[2] = (",",)  # between 'it' and 'rains': left of rains
    assert "parataxis|hside=L|in=," in node_contexts(s, toy_inventory(), ["rel", "inner_side"])[2]


def test_inner_count():
    c = _ctx("inner_count")
    assert c[0] == ["root", "root|ninL=0|ninR=2", "root|ninL=0|ninR=2|upos=NOUN"]
    assert c[2] == ["parataxis", "parataxis|ninL=0|ninR=1", "parataxis|ninL=0|ninR=1|upos=VERB"]
    assert c[1] == ["nsubj", "nsubj|ninL=0|ninR=0", "nsubj|ninL=0|ninR=0|upos=PRON"]
    s = note_sentence()
    s.slots[2] = (",",)  # between 'it' and 'rains': left of rains
    assert node_contexts(s, toy_inventory(), ["rel", "inner_count"])[2][1] == "parataxis|ninL=1|ninR=1"


def test_new_templates_off_leave_contexts_unchanged():
    inv = toy_inventory()
    for s in toy_sentences():
        base = node_contexts(s, inv, DEFAULT_TEMPLATES)
        more = node_contexts(s, inv, list(DEFAULT_TEMPLATES) + list(NEW))
        for b, m in zip(base, more):
            assert set(b) <= set(m)


def test_unknown_template_still_rejected():
    with pytest.raises(ValueError, match="unknown feature template"):
        FeatureConfig(templates=["rel", "kid_word"])


def test_inner_rel_keeps_p_x_given_T_normalised():
    """Σ_x p(x|T) = 1 over every reachable x with ``inner`` and the new templates on (brute
    force, the enumeration of test_objective_gradients)."""
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.testing.reference import reachable_surfaces, total_probability
    from spacy_punctgen.testing.toy import three_word_tree

    sents = toy_sentences()
    inv = toy_inventory(sents)
    model = PunctModel(inv, FeatureConfig(templates=list(DEFAULT_TEMPLATES) + list(NEW) + ["inner"]),
                       mode="full", direction="r2l")
    model.initialize(model.prepare_all(sents), seed=7, theta_scale=1.0, psi_scale=1.0)
    base = three_word_tree()
    surfaces = reachable_surfaces(model, base)
    fired = any("|inrel=" in c
                for xs in surfaces
                for c in node_contexts(_S(base.words, base.upos, base.heads, base.deprels, xs), inv,
                                       ["rel", "inner_rel"])[1])
    assert fired
    total = total_probability(model, base, surfaces)
    assert abs(total - 1.0) < 1e-9, total
