"""The k-best trees of one parser in the shipped restoration pipeline: ``load(kbest=K)`` (the
``punctgen_kbest`` component), restoration from the mixture of the trees of each sentence
(``punctgen``'s ``kbest_weights``), the weighted mixture decoder, and the long-text path."""
import re

import pytest
import spacy
from spacy.tokens import Doc

import spacy_punctgen
from spacy_punctgen.decode.mbr import restore_mixtures, restore_sentences
from spacy_punctgen.pipeline.doc_convert import punct_sentences
from spacy_punctgen.decode.mixture import restore_weighted_mixtures
from spacy_punctgen.parsing.kbest import KBEST_COMPONENT, KBEST_KEY, alternative_trees
from spacy_punctgen.api.load import shipped_parser_path
from spacy_punctgen.parsing.words import WORDS_COMPONENT, keep_words_whole
from spacy_punctgen.pipeline.shipped import restore_model_path
from spacy_punctgen.api.stream import iter_pieces, restore_text

TEXTS = ["when i came home he left i was sad", "the cat sat on the mat", "yes",
         "we went to the shop and bought some bread because we were hungry and then we went home",
         "the man who i met yesterday said that he would come but he did not"]


@pytest.fixture(scope="module")
def nlp2():
    return spacy_punctgen.load("en", kbest=2)


@pytest.fixture(scope="module")
def nlp1():
    return spacy_punctgen.load("en", kbest=1)


def _restored(nlp, texts):
    return [(d._.restored_text, [(e["sentence"], e["slot"], e["surface"]) for e in d._.restored_punct])
            for d in nlp.pipe(texts)]


def test_kbest_pipeline_restores_text_from_one_beam_parse(nlp2):
    assert nlp2.pipe_names[-3:] == [KBEST_COMPONENT, WORDS_COMPONENT, "punctgen"]
    assert "parser" in nlp2.disabled  # the beam parse replaces the greedy one: parsed once
    assert nlp2.get_pipe("parser").cfg["beam_width"] == 1  # the parser's settings are untouched
    docs = list(nlp2.pipe(TEXTS))
    for text, doc in zip(TEXTS, docs):
        assert re.findall(r"[a-z']+", doc._.restored_text) == text.split()
        assert any(e["surface"] for e in doc._.restored_punct)
    own, others = alternative_trees(docs[3])
    assert own is not None and len(others) == 1 and 0 < own < 1
    assert len(others[0].heads) == len(docs[3])
    assert (others[0].heads, others[0].deps) != ([t.head.i for t in docs[3]], [t.dep_ for t in docs[3]])


def test_kbest_1_is_the_pipeline_without_beam(nlp1):
    """``kbest=1``: exactly the pipeline of greedy parser + words + punctgen, same output."""
    assert KBEST_COMPONENT not in nlp1.component_names and "parser" in nlp1.pipe_names
    plain = spacy.load(shipped_parser_path("en"))
    keep_words_whole(plain)
    plain.add_pipe(WORDS_COMPONENT)
    plain.add_pipe("punctgen", config={"mode": "restore", "model": str(restore_model_path("en"))})
    assert _restored(nlp1, TEXTS) == _restored(plain, TEXTS)


def _two_sentence_doc(nlp):
    words = "when i came home he left i was sad".split()
    # sentence A: when i came home (root came); sentence B: he left i was sad (root left)
    heads = [2, 2, 2, 2, 5, 5, 8, 8, 5]
    deps = ["mark", "nsubj", "ROOT", "advmod", "nsubj", "ROOT", "nsubj", "cop", "parataxis"]
    pos = ["SCONJ", "PRON", "VERB", "ADV", "PRON", "VERB", "PRON", "AUX", "ADJ"]
    doc = Doc(nlp.vocab, words=words, heads=heads, deps=deps, pos=pos)
    assert [(s.start, s.end) for s in doc.sents] == [(0, 4), (4, 9)]
    # one analysis that fits A (another tree of it) but crosses into B (``he`` hangs from ``home``);
    # one that hangs A's root from B's: it is no tree of A, but B's part is a tree of B
    fits_a = [1, 2, 2, 2, 3, 5, 8, 8, 5]
    fits_b = [2, 2, 5, 2, 5, 5, 8, 8, 5]
    doc.user_data[KBEST_KEY] = {"orth": [t.orth for t in doc], "probs": [0.5, 0.3, 0.2],
                                "heads": [fits_a, fits_b],
                                "deps": [["nsubj", "nsubj", "ROOT", "advmod", "nsubj", "ROOT", "nsubj", "cop",
                                          "parataxis"],
                                         ["mark", "nsubj", "advcl", "advmod", "nsubj", "ROOT", "nsubj", "cop",
                                          "parataxis"]]}
    return doc


def test_an_analysis_crossing_a_sentence_boundary_is_left_out_of_that_sentence(nlp2):
    pg = nlp2.get_pipe("punctgen")
    doc = _two_sentence_doc(nlp2)
    own = [ps for _, ps, _ in punct_sentences(doc)]
    _, (alt_a, alt_b) = alternative_trees(doc)
    from_a = [ps for _, ps, _ in punct_sentences(doc, heads=alt_a.heads, deps=alt_a.deps)]
    from_b = [ps for _, ps, _ in punct_sentences(doc, heads=alt_b.heads, deps=alt_b.deps)]
    assert from_a[0] is not None and from_a[1] is None  # a head of B outside B
    assert from_b[0] is None and from_b[1] is not None  # A's root hangs from B: no tree of A
    assert list(from_a[0].heads) != list(own[0].heads)
    for ps in own + [from_a[0], from_b[1]]:
        ps.slots = [()] * len(ps.slots)
    expected = restore_mixtures(pg.punct_model, [[own[0], from_a[0]], [own[1], from_b[1]]])
    got = pg(doc)._.restored_punct
    assert [e["surface"] for e in got] == [c.surface for sent in expected for c in sent]
    # the Doc's words are kept; another Doc (other words) ignores the analyses
    other = Doc(nlp2.vocab, words="when i came home he left i was glad".split())
    other.user_data[KBEST_KEY] = doc.user_data[KBEST_KEY]
    assert alternative_trees(other) == (None, [])


def test_saved_kbest_pipeline_loads_back_with_the_same_output(nlp2, tmp_path):
    nlp2.to_disk(tmp_path / "p")
    back = spacy.load(tmp_path / "p")
    assert back.pipe_names == nlp2.pipe_names and back.disabled == ["parser"]
    assert back.get_pipe(KBEST_COMPONENT).k == 2
    assert _restored(back, TEXTS) == _restored(nlp2, TEXTS)


def test_weighted_mixture_with_all_weight_on_one_tree_is_that_tree(nlp2):
    pm = nlp2.get_pipe("punctgen").punct_model
    doc = _two_sentence_doc(nlp2)
    _, (alt_a, _) = alternative_trees(doc)
    own = next(ps for _, ps, _ in punct_sentences(doc))
    other = next(ps for _, ps, _ in punct_sentences(doc, heads=alt_a.heads, deps=alt_a.deps))
    for w, tree in (([1.0, 0.0], own), ([0.0, 2.0], other)):
        got = restore_weighted_mixtures(pm, [[own, other]], [w])[0]
        alone = restore_sentences(pm, [tree])[0]
        assert [c.surface for c in got] == [c.surface for c in alone]
        assert [c.prob for c in got] == pytest.approx([c.prob for c in alone], abs=1e-9)
    uniform = restore_weighted_mixtures(pm, [[own, other]], [[0.5, 0.5]])[0]
    mixed = restore_mixtures(pm, [[own, other]])[0]
    assert [c.surface for c in uniform] == [c.surface for c in mixed]
    assert [c.prob for c in uniform] == pytest.approx([c.prob for c in mixed], abs=1e-9)
    for bad in ([[1.0]], [[0.0, 0.0]], [[1.0, -1.0]], [[1.0, float("nan")]]):
        with pytest.raises(ValueError, match="E099"):
            restore_weighted_mixtures(pm, [[own, other]], bad)


def test_beam_weighting_in_the_pipeline(nlp2):
    pg = nlp2.get_pipe("punctgen")
    doc = _two_sentence_doc(nlp2)
    own = [ps for _, ps, _ in punct_sentences(doc)]
    _, (alt_a, alt_b) = alternative_trees(doc)
    from_a = next(ps for _, ps, _ in punct_sentences(doc, heads=alt_a.heads, deps=alt_a.deps))
    from_b = [ps for _, ps, _ in punct_sentences(doc, heads=alt_b.heads, deps=alt_b.deps)][1]
    for ps in own + [from_a, from_b]:
        ps.slots = [()] * len(ps.slots)
    expected = restore_weighted_mixtures(pg.punct_model, [[own[0], from_a], [own[1], from_b]],
                                         [[0.5, 0.3], [0.5, 0.2]])
    kb = nlp2.get_pipe(KBEST_COMPONENT)
    doc.user_data[KBEST_KEY]["weights"] = "beam"  # as a punctgen_kbest component with weights = "beam" writes
    kb.weights = "beam"
    try:
        got = pg(doc)._.restored_punct
        assert all(d._.restored_text for d in nlp2.pipe(TEXTS[3:]))
    finally:
        kb.weights = "uniform"
    assert [(e["surface"], e["prob"]) for e in got] == [(c.surface, c.prob) for sent in expected for c in sent]


@pytest.mark.parametrize("k", [0, -1, 2.0, True, 2000, "2"])
def test_bad_k_is_refused(k):
    with pytest.raises(ValueError, match="E097"):
        spacy_punctgen.load("en", kbest=k)


def test_kbest_component_needs_a_parser():
    nlp = spacy.blank("en")
    nlp.add_pipe(KBEST_COMPONENT)
    with pytest.raises(ValueError, match="E098"):
        nlp("two words")
    with pytest.raises(ValueError, match="E097"):
        spacy.blank("en").add_pipe(KBEST_COMPONENT, config={"k": 0})


def test_bad_weighting_is_refused(nlp2):
    with pytest.raises(ValueError, match="E099"):
        spacy.blank("en").add_pipe(KBEST_COMPONENT, config={"weights": "equal"})
    # the beam's weights need a deterministic decoder
    doc = _two_sentence_doc(nlp2)
    doc.user_data[KBEST_KEY]["weights"] = "beam"
    slot = spacy.blank("en").add_pipe("punctgen", config={"mode": "restore", "restore_method": "slot"})
    with pytest.raises(ValueError, match="E099"):
        slot(doc)


def test_other_analysis_of_wrong_length_is_refused(nlp2):
    doc = _two_sentence_doc(nlp2)
    with pytest.raises(ValueError, match="E099"):
        list(punct_sentences(doc, heads=[0, 0], deps=["ROOT", "dep"]))


def test_long_texts_go_through_the_windows(nlp2):
    text = " ".join(TEXTS * 4)
    pieces = list(iter_pieces(nlp2, text, chunk_chars=120))
    assert len(pieces) > 2
    assert any(alternative_trees(p)[1] for p in pieces)  # each window's pieces keep their analyses
    out = restore_text(nlp2, text, chunk_chars=120)
    assert out and out.count(".") >= 3
    nlp2.punctgen_chunk_chars = 120
    try:
        doc = nlp2(text)  # process_long: the pieces joined, then punctgen
    finally:
        nlp2.punctgen_chunk_chars = 3000
    assert doc._.restored_text


# ------------------------------------------------------------ trees drawn from the parser
@pytest.fixture(scope="module")
def nlp_sample():
    return spacy_punctgen.load("en", kbest=6, kbest_search="sample", kbest_temperature=1.5)


def test_sampled_trees_keep_the_greedy_parse_and_store_shares(nlp_sample, nlp1):
    assert nlp_sample.pipe_names[-3:] == [KBEST_COMPONENT, WORDS_COMPONENT, "punctgen"]
    greedy = list(nlp1.pipe(TEXTS))
    docs = list(nlp_sample.pipe(TEXTS))
    assert any(alternative_trees(d)[1] for d in docs)
    for g, d in zip(greedy, docs):  # the Doc's own analysis is the greedy parse
        assert [(t.head.i, t.dep_, t.is_sent_start) for t in d] == [(t.head.i, t.dep_, t.is_sent_start) for t in g]
        own, others = alternative_trees(d)
        if own is None:
            continue
        shares = [own] + [a.prob for a in others]
        assert all(abs(p * 6 - round(p * 6)) < 1e-9 and p > 0 for p in shares) and sum(shares) <= 1 + 1e-9
        if not others:  # every draw was the greedy tree: restored as without the component
            assert d._.restored_punct == g._.restored_punct
    again = [d._.restored_punct for d in nlp_sample.pipe(TEXTS[::-1])][::-1]
    assert again == [d._.restored_punct for d in docs]  # draws do not depend on the batch


def test_sample_weighting_is_the_mixture_of_the_draws(nlp_sample):
    pg = nlp_sample.get_pipe("punctgen")
    doc = next(d for d in nlp_sample.pipe(TEXTS) if alternative_trees(d)[1])
    own_prob, others = alternative_trees(doc)
    sents = [(si, ps) for si, ps, _ in punct_sentences(doc) if ps is not None]
    sets, weights = [], []
    for si, ps in sents:
        trees, w = [ps], [own_prob]
        for alt in others:
            theirs = {i: p for i, p, _ in punct_sentences(doc, heads=alt.heads, deps=alt.deps)}
            if theirs.get(si) is not None and list(theirs[si].words) == list(ps.words):
                trees.append(theirs[si])
                w.append(alt.prob)
        for t in trees:
            t.slots = [()] * len(t.slots)
        sets.append(trees)
        weights.append(w)
    expected = restore_weighted_mixtures(pg.punct_model, sets, weights)
    doc.user_data[KBEST_KEY]["weights"] = "beam"
    # the mixture alone: a one-sentence input also reads the sentence-end expert
    # (tests/pipeline/test_sentence_end_component.py)
    doc._.one_sentence_input = False
    got = pg(doc)._.restored_punct
    assert [(e["surface"], e["prob"]) for e in got] == [(c.surface, c.prob) for s in expected for c in s]


def test_saved_sampling_pipeline_loads_back_with_the_same_output(nlp_sample, tmp_path):
    nlp_sample.to_disk(tmp_path / "s")
    back = spacy.load(tmp_path / "s")
    comp = back.get_pipe(KBEST_COMPONENT)
    assert (comp.k, comp.search, comp.temperature, comp.seed) == (6, "sample", 1.5, 0)
    assert _restored(back, TEXTS) == _restored(nlp_sample, TEXTS)


@pytest.mark.parametrize("kwargs,code", [({"kbest_search": "gibbs"}, "E890"), ({"kbest_temperature": 0.0}, "E887"),
                                         ({"kbest_temperature": float("nan")}, "E887")])
def test_bad_search_settings_are_refused(kwargs, code):
    with pytest.raises(ValueError, match=code):
        spacy_punctgen.load("en", kbest=2, **kwargs)
    with pytest.raises(ValueError, match=code):
        spacy.blank("en").add_pipe(KBEST_COMPONENT, config={
            "search": kwargs.get("kbest_search", "sample"),
            "temperature": -1.0 if code == "E887" else 1.0})  # spaCy's config refuses NaN itself (E961)
