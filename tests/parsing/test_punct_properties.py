"""Paper 002's punctuation properties (spacy_punctgen/parsing/punct_properties.py): the
properties of hand-built sentences, the corpus reader's three modes, the embed layer, and a few
training steps of the study's config on the sample treebank."""
import importlib.util
from pathlib import Path

import numpy
import pytest

from spacy_punctgen.data.conllu import UDSentence
from spacy_punctgen.parsing.punct_properties import (
    EXTENSION, PROPERTY_EMBED_ARCHITECTURE, PROPERTY_READER, doc_properties, make_docs, punct_properties,
    read_examples, set_properties, slot_properties,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"


def _ud(rows):
    """A UDSentence from ``(form, upos, head, deprel[, space_after])`` rows (heads 1-based, 0 root)."""
    n = len(rows)
    return UDSentence(ids=list(range(1, n + 1)), forms=[r[0] for r in rows], upos=[r[1] for r in rows],
                      xpos=["_"] * n, heads=[r[2] for r in rows], deprels=[r[3] for r in rows],
                      space_after=[r[4] if len(r) > 4 else True for r in rows])


def test_paper_figure_1_quotes_and_the_dropped_comma():
    # The conference was entitled “ Economic Mechanisms for Environmental Protection , ” .
    ud = _ud([("The", "DET", 2, "det"), ("conference", "NOUN", 4, "nsubj:pass"), ("was", "AUX", 4, "aux:pass"),
              ("entitled", "VERB", 0, "root"), ("\u201c", "PUNCT", 7, "punct"), ("Economic", "ADJ", 7, "amod"),
              ("Mechanisms", "NOUN", 4, "xcomp"), ("for", "ADP", 10, "case"), ("Environmental", "ADJ", 10, "amod"),
              ("Protection", "NOUN", 7, "nmod"), (",", "PUNCT", 7, "punct"), ("\u201d", "PUNCT", 7, "punct"),
              (".", "PUNCT", 4, "punct")])
    words, heads, deprels, props = punct_properties(ud)
    assert words == ["The", "conference", "was", "entitled", "Economic", "Mechanisms", "for", "Environmental",
                     "Protection"]
    # the arcs over the words: Mechanisms (index 5) still hangs from entitled (3)
    assert heads == [1, 3, 3, -1, 5, 3, 8, 8, 5]
    assert deprels[3] == "root" and deprels[5] == "xcomp"
    # the opening quote goes right (to Economic), the closing one left (to Protection); the comma
    # and the full stop share the closing quote's run of marks, so they are dropped
    assert props == ["", "", "", "", "B\u201c", "", "", "", "E\u201d"]


def test_paper_3_2_two_opening_marks_give_two_flags_and_abbreviation_dot():
    # ( “ Congress 's Environmental Buccaneers , ” Sept. 18 ) .
    ud = _ud([("(", "PUNCT", 6, "punct"), ("\u201c", "PUNCT", 6, "punct"), ("Congress", "PROPN", 6, "nmod:poss"),
              ("'s", "PART", 3, "case"), ("Environmental", "ADJ", 6, "amod"), ("Buccaneers", "PROPN", 0, "root"),
              (",", "PUNCT", 6, "punct"), ("\u201d", "PUNCT", 6, "punct"), ("Sept.", "PROPN", 6, "nmod:tmod"),
              ("18", "NUM", 9, "nummod"), (")", "PUNCT", 6, "punct"), (".", "PUNCT", 6, "punct")])
    words, heads, _deprels, props = punct_properties(ud)
    assert words == ["Congress", "'s", "Environmental", "Buccaneers", "Sept", "18"]
    assert heads == [3, 0, 3, -1, 3, 4]
    assert props == ["B(|B\u201c", "", "", "E\u201d", "A.", "E)"]


def test_straight_quotes_are_directed_by_the_depunctuation_first():
    # He said "no" . (spacing: the first quote is close up to "no" on its right, the second on its left)
    ud = _ud([("He", "PRON", 2, "nsubj"), ("said", "VERB", 0, "root"), ('"', "PUNCT", 4, "punct", False),
              ("no", "INTJ", 2, "ccomp", False), ('"', "PUNCT", 4, "punct", False), (".", "PUNCT", 2, "punct")])
    assert punct_properties(ud)[3] == ["", "", "B\u201c|E\u201d"]


@pytest.mark.parametrize("slots, expected", [
    # a mark before the first word that is not opening goes to the first word, as does any
    # non-paired one; an opening mark after the last word goes to the last word
    ([["..."], [","], ["."]], ["O,|O...", "O."]),
    ([[")"], [], ["("]], ["E)", "B("]),
    # a comma beside a bracket is dropped; one that is alone is kept, on its left word
    ([[], [",", "("], [")"], [","], []], ["", "B(|E)", "O,", ""]),
    # the same mark twice is one flag; several non-paired marks are kept when no paired one is there
    ([["(", "("], ["!", "?"], []], ["B(|O!|O?", ""]),
    ([[], []], [""]),
])
def test_slot_properties_rules(slots, expected):
    assert slot_properties(slots) == expected


def test_a_sentence_that_depunctuation_omits_is_refused():
    # the comma heads a word: depunctuation omits the sentence ("nonleaf"), so there are no properties
    ud = _ud([("a", "X", 0, "root"), (",", "PUNCT", 1, "punct"), ("b", "X", 2, "dep")])
    with pytest.raises(ValueError, match=r"\[E198\].*nonleaf"):
        punct_properties(ud)
    with pytest.raises(ValueError, match=r"\[E198\]"):
        slot_properties([[","]])


CONLLU = """# sent_id = s1
# text = Hi (there), Bob.
1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_
2\t(\t(\tPUNCT\t-LRB-\t_\t3\tpunct\t_\tSpaceAfter=No
3\tthere\tthere\tADV\tRB\t_\t1\tadvmod\t_\tSpaceAfter=No
4\t)\t)\tPUNCT\t-RRB-\t_\t3\tpunct\t_\tSpaceAfter=No
5\t,\t,\tPUNCT\t,\t_\t1\tpunct\t_\t_
6\tBob\tBob\tPROPN\tNNP\t_\t1\tvocative\t_\tSpaceAfter=No
7\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_

# sent_id = s2
# text = a , b
1\ta\ta\tX\tX\t_\t0\troot\t_\t_
2\t,\t,\tPUNCT\t,\t_\t1\tpunct\t_\t_
3\tb\tb\tX\tX\t_\t2\tdep\t_\t_

# sent_id = s3
# text = Go home!
1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
2\thome\thome\tADV\tRB\t_\t1\tadvmod\t_\tSpaceAfter=No
3\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_

"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny-ud-train.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    return path


def test_reader_modes_keep_the_same_sentences_and_gold(tiny):
    import spacy
    from spacy import registry

    nlp = spacy.blank("en")
    got = {}
    for mode in ("punct", "depunct", "properties"):
        reader = registry.readers.get(PROPERTY_READER)(path=tiny, mode=mode)
        got[mode] = list(reader(nlp))
    # s2 is omitted in every mode (its comma heads a word)
    assert [len(v) for v in got.values()] == [2, 2, 2]
    punct, depunct, props = got["punct"][0], got["depunct"][0], got["properties"][0]
    assert [t.text for t in punct.predicted] == ["Hi", "(", "there", ")", ",", "Bob", "."]
    assert [t.head.i for t in punct.reference] == [0, 2, 0, 2, 0, 0, 0]
    assert [t.text for t in depunct.predicted] == ["Hi", "there", "Bob"]
    assert [t.head.i for t in depunct.reference] == [0, 0, 0]
    assert [t.dep_ for t in depunct.reference] == ["root", "advmod", "vocative"]
    assert [t.pos_ for t in depunct.reference] == ["INTJ", "ADV", "PROPN"]
    assert not depunct.predicted.has_annotation("DEP")
    assert [t._.get(EXTENSION) for t in depunct.predicted] == [None, None, None]
    assert [t.text for t in props.predicted] == ["Hi", "there", "Bob"]
    # the comma beside the closing bracket is dropped; the full stop goes to Bob
    assert doc_properties(props.predicted) == ["", "B(|E)", "O."]
    assert doc_properties(got["properties"][1].predicted) == ["", "O!"]
    assert read_examples(tiny, "properties")[1][6] == ["", "O!"]


def test_reader_errors(tiny, tmp_path):
    with pytest.raises(ValueError, match=r"\[E195\]"):
        read_examples(tiny, "words")
    bad = tmp_path / "bad.conllu"
    bad.write_text("hello world\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[E196\].*columns"):
        read_examples(bad, "punct")
    with pytest.raises(ValueError, match=r"\[E196\].*no such file"):
        read_examples(tmp_path / "missing.conllu", "punct")
    empty = tmp_path / "empty.conllu"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[E196\].*no sentence"):
        read_examples(empty, "punct")


def _embed(width=16):
    from spacy import registry

    return registry.architectures.get(PROPERTY_EMBED_ARCHITECTURE)(
        width=width, attrs=["NORM", "SHAPE"], rows=[200, 50], include_static_vectors=False, property_rows=100)


def test_embed_shapes_and_the_property_changes_the_vector():
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.blank("en")
    a = Doc(nlp.vocab, words=["Hi", "there", "Bob"])
    b = Doc(nlp.vocab, words=["Hi", "there", "Bob"])
    set_properties(a, ["", "B(|E)", "O."])
    set_properties(b, ["", "O,", "O."])
    model = _embed()
    model.initialize(X=[a, b])
    out = model.predict([a, b, Doc(nlp.vocab, words=[])])
    assert [o.shape for o in out] == [(3, 16), (3, 16), (0, 16)]
    # same words: the token whose property differs gets another vector, the others the same
    assert not numpy.allclose(out[0][1], out[1][1])
    assert numpy.allclose(out[0][0], out[1][0]) and numpy.allclose(out[0][2], out[1][2])


def test_embed_refuses_a_doc_without_properties():
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["a", "b"])
    model = _embed()
    with pytest.raises(ValueError, match=r"\[E197\]"):
        model.initialize(X=[doc])
    with pytest.raises(ValueError, match=r"\[E197\]"):
        set_properties(doc, ["", "", ""])


def _script():
    path = ROOT / "experiments" / "companions" / "scripts" / "punct_features_parser.py"
    spec = importlib.util.spec_from_file_location("punct_features_parser_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_punct_parser_word_arcs_reattach_to_the_nearest_word():
    script = _script()
    # Hi ( there ) , Bob .   with a predicted tree where "there" hangs from "(" and "(" from "Bob"
    item = (["Hi", "(", "there", ")", ",", "Bob", "."], [True] * 7, [0, 2, 0, 2, 0, 0, 0],
            ["root", "punct", "advmod", "punct", "punct", "vocative", "punct"],
            ["INTJ", "PUNCT", "ADV", "PUNCT", "PUNCT", "PROPN", "PUNCT"], ["_"] * 7, None)
    heads, deps = script.word_arcs_from_punct(item, [0, 5, 1, 2, 0, 0, 6], ["ROOT", "punct", "advmod", "punct",
                                                                          "punct", "vocative", "ROOT"])
    assert heads == [-1, 2, 0] and deps == ["root", "advmod", "vocative"]
    # gold heads map exactly onto the depunctuated gold tree
    assert script.word_arcs_from_punct(item, item[2], item[3])[0] == [-1, 0, 0]


@pytest.mark.parametrize("system", [pytest.param("punct", marks=pytest.mark.slow),
                                    pytest.param("depunct", marks=pytest.mark.slow), "properties"])
def test_study_config_trains_a_few_steps_on_the_sample(system, tmp_path):
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train

    script = _script()
    cfg = script._config(system, SAMPLE / "en_sample-ud-train.conllu", SAMPLE / "en_sample-ud-dev.conllu",
                         "en", 0, 4, 4)
    cfg["corpora"]["train"]["limit"] = 40
    cfg["corpora"]["dev"]["limit"] = 10
    nlp = init_nlp(cfg, use_gpu=-1)
    nlp, _ = train(nlp, tmp_path, use_gpu=-1, stdout=open("/dev/null", "w"), stderr=open("/dev/null", "w"))
    embed = nlp.get_pipe("tok2vec").model.get_ref("embed")
    assert (embed.name == "punct_property_embed") == (system == "properties")
    counts, trees = script.score(system, nlp, script._gold(SAMPLE / "en_sample-ud-test.conllu"))
    assert len(counts) == len(trees) > 0
    assert all(0 <= u <= n and 0 <= las <= u for n, u, las in counts)
    assert all(len(h) == c[0] for (h, _d), c in zip(trees, counts))


def test_paired_randomisation_test():
    script = _script()
    a = [(10, 5, 4)] * 30
    diff, p = script.approximate_randomisation(a, a, 1, 200, 0)
    assert diff == 0 and p == 1.0
    b = [(10, 9, 8)] * 30
    diff, p = script.approximate_randomisation(a, b, 1, 200, 0)
    assert diff == pytest.approx(0.4) and p < 0.01
