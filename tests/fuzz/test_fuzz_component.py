"""Fuzzing the ``punctgen`` component (shipped en_ewt model, blank English pipeline) with random
Docs in both modes: random forests and arbitrary heads (cycles, ROOT in odd places, heads outside
the sentence), random UD and unknown labels, whitespace tokens, empty Docs, seen and unseen words
and marks.

Properties: no exception but the documented one (E001 / E002 / E016, exactly when the Doc calls
for it); every input word kept, in order (the slots of ``underlying_punct`` / ``restored_punct``
follow exactly the Doc's words; ``restored_text`` holds every word whole, in order, an
abbreviation's dot not doubled); finite probabilities (``punct_logprob`` finite and <= 0,
restoration probabilities in [0, 1]); identical results across ``nlp.pipe`` batch sizes, across
4 threads sharing one pipeline on Docs it has not seen, and with ``n_process=2`` (types
included).  The last tests check that each property does fail on a deliberately broken
component.  Settings: tests/fuzz/fuzz_strategies.py.
"""
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz_strategies import (COUNTS, RUNS, assert_documented, check_analyzed, check_restored, doc_specs, expected_error,
                             guarded, run_property,
                             run_settings, snapshot, tried)
from spacy_punctgen.pipeline.component import PunctGen

MODES = ["analyze", "restore"]
_unique = itertools.count()


def check_one(nlp, spec, mode):
    """Run the component on the Doc of ``spec``: the documented error, or checked annotations."""
    doc = spec.make(nlp.vocab)
    expected = expected_error(doc)
    COUNTS[f"  outcome {expected or 'annotated'}"] += 1
    try:
        doc = nlp(doc)
    except Exception as err:  # noqa: BLE001 - the property is about which exceptions
        if expected is None:
            raise AssertionError(f"{type(err).__name__} on a Doc that must work: {err}") from err
        assert_documented(err, {expected})
        return
    assert expected is None, f"no error, but the Doc calls for {expected}"
    (check_restored if mode == "restore" else check_analyzed)(doc)


def run_all(nlp, specs, mode, **pipe_kwargs):
    docs = list(nlp.pipe([s.make(nlp.vocab) for s in specs], **pipe_kwargs))
    for doc in docs:
        (check_restored if mode == "restore" else check_analyzed)(doc)
    return [snapshot(doc, mode) for doc in docs]


def unseen(specs):
    """The specs with one word per Doc made new (never seen by any pipeline of the session)."""
    for spec in specs:
        k = next(_unique)
        for i, kind in enumerate(spec.kinds):
            if kind == "word":
                spec.words[i] = f"{spec.words[i]}zq{k}"
                break
    return specs


def check_threads(nlp_threads, nlp_ref, specs, mode):
    """4 threads share ``nlp_threads`` (each Doc read at once in its thread); the results equal
    ``nlp_ref``'s sequential ones."""
    def work(spec):
        doc = nlp_threads(spec.make(nlp_threads.vocab))
        (check_restored if mode == "restore" else check_analyzed)(doc)
        return snapshot(doc, mode)

    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(work, specs))
    assert threaded == run_all(nlp_ref, specs, mode, batch_size=1)


def check_batch_sizes(nlp, specs, mode):
    results = {bs: run_all(nlp, specs, mode, batch_size=bs) for bs in (1, 3, 100)}
    assert results[1] == results[3] == results[100]


def check_n_process(nlp, specs, mode):
    assert run_all(nlp, specs, mode, n_process=2, batch_size=2) == run_all(nlp, specs, mode, batch_size=1)


# ------------------------------------------------------------------ the properties
@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("mode", MODES)
def test_random_docs(request, pipelines, mode, run):
    nlp = pipelines(mode, run=run)

    @run_settings(run, 30)
    @given(spec=doc_specs(mode=mode, max_tokens=12 if run == "default" else 30))
    @guarded
    def prop(spec):
        if tried(f"component.random_docs[{mode}]"):
            check_one(nlp, spec, mode)

    run_property(request.node.name, prop)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("mode", MODES)
def test_batch_sizes_agree(request, pipelines, mode, run):
    nlp = pipelines(mode, run=run)

    @run_settings(run, 8, 1500)
    @given(specs=st.lists(doc_specs(mode=mode, valid=True, max_tokens=10), min_size=1, max_size=7))
    @guarded
    def prop(specs):
        if tried(f"component.batch_sizes[{mode}]"):
            check_batch_sizes(nlp, specs, mode)

    run_property(request.node.name, prop)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("mode", MODES)
def test_threads_agree_on_unseen_docs(request, pipelines, mode, run):
    nlp_threads, nlp_ref = pipelines(mode, "threads", run), pipelines(mode, run=run)

    @run_settings(run, 5, 1500)
    @given(specs=st.lists(doc_specs(mode=mode, valid=True, max_tokens=10), min_size=4, max_size=12))
    @guarded
    def prop(specs):
        if tried(f"component.threads[{mode}]"):
            check_threads(nlp_threads, nlp_ref, unseen(specs), mode)

    run_property(request.node.name, prop)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("mode", MODES)
def test_n_process_agrees(request, pipelines, mode, run):
    nlp = pipelines(mode, run=run)

    @run_settings(run, 1, 60)
    @given(specs=st.lists(doc_specs(mode=mode, valid=True, max_tokens=10), min_size=4, max_size=8))
    @guarded
    def prop(specs):
        if tried(f"component.n_process[{mode}]"):
            check_n_process(nlp, specs, mode)

    run_property(request.node.name, prop)


# ------------------------------------------------------------------ the properties can fail
def _fixed_specs(mode):
    from fuzz_strategies import DocSpec

    words = ["when", "I", "came", "he", "left"]
    spec = DocSpec(words, [True] * 5, ["SCONJ", "PRON", "VERB", "PRON", "VERB"], [2, 2, 4, 4, 4],
                   ["mark", "nsubj", "advcl", "nsubj", "ROOT"], ["word"] * 5)
    punct = DocSpec(words[:3] + [","] + words[3:] + ["."], [True] * 7,
                    ["SCONJ", "PRON", "VERB", "PUNCT", "PRON", "VERB", "PUNCT"], [2, 2, 5, 2, 5, 5, 5],
                    ["mark", "nsubj", "advcl", "punct", "nsubj", "ROOT", "punct"],
                    ["word"] * 3 + ["punct"] + ["word"] * 2 + ["punct"])
    return [spec, punct] if mode == "analyze" else [spec, spec]


@pytest.mark.parametrize("mode", MODES)
def test_the_checks_pass_on_the_real_component(pipelines, mode):
    specs = _fixed_specs(mode)
    for spec in specs:
        check_one(pipelines(mode), spec, mode)
    check_batch_sizes(pipelines(mode), specs, mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_dropped_word_is_caught(pipelines, monkeypatch, mode):
    original = PunctGen.set_annotations

    def drop_word(self, docs, results):
        docs = list(docs)
        original(self, docs, results)
        for doc in docs:
            if mode == "restore":
                doc._.restored_text = doc._.restored_text.replace("came", "", 1)
            else:
                doc._.underlying_punct = [e for e in doc._.underlying_punct if e["after"] != 2]

    monkeypatch.setattr(PunctGen, "set_annotations", drop_word)
    with pytest.raises(AssertionError, match="missing|follow|slots"):
        check_one(pipelines(mode), _fixed_specs(mode)[0], mode)


def test_a_doubled_dot_and_a_bad_probability_are_caught(pipelines, monkeypatch):
    original = PunctGen.set_annotations

    def double(self, docs, results):
        docs = list(docs)
        original(self, docs, results)
        for doc in docs:
            doc._.restored_text = doc._.restored_text.replace("came.", "came..", 1)

    from fuzz_strategies import DocSpec

    spec = _fixed_specs("restore")[0]
    spec = DocSpec(spec.words[:2] + ["came."] + spec.words[3:], spec.spaces, spec.pos, spec.heads, spec.deps,
                   spec.kinds)
    monkeypatch.setattr(PunctGen, "set_annotations", double)
    with pytest.raises(AssertionError, match="doubled"):
        check_one(pipelines("restore"), spec, "restore")

    def nan_prob(self, docs, results):
        original(self, docs, [{**r, "restored_punct": [{**e, "prob": float("nan")} for e in r["restored_punct"]]}
                              for r in results])

    monkeypatch.setattr(PunctGen, "set_annotations", nan_prob)
    with pytest.raises(AssertionError, match="prob"):
        check_one(pipelines("restore"), _fixed_specs("restore")[0], "restore")


def test_an_undocumented_or_unexpected_exception_is_caught(pipelines, monkeypatch):
    spec = _fixed_specs("analyze")[0]

    def boom(self, docs):
        raise TypeError("'NoneType' object is not subscriptable")

    monkeypatch.setattr(PunctGen, "predict", boom)
    with pytest.raises(AssertionError, match="TypeError"):
        check_one(pipelines("analyze"), spec, "analyze")

    def documented(self, docs):
        from spacy_punctgen.errors import Errors

        raise ValueError(Errors.E001)

    monkeypatch.setattr(PunctGen, "predict", documented)
    with pytest.raises(AssertionError, match="must work"):  # E001 on a parsed Doc is wrong too
        check_one(pipelines("analyze"), spec, "analyze")


@pytest.mark.parametrize("mode", MODES)
def test_batch_threads_and_processes_differences_are_caught(pipelines, monkeypatch, mode):
    original = PunctGen.set_annotations
    main_pid = os.getpid()

    def skew(self, docs, results):
        docs = list(docs)
        original(self, docs, results)
        odd = len(docs) > 1 or threading.current_thread() is not threading.main_thread() \
            or os.getpid() != main_pid
        for doc in docs:
            if odd and mode == "restore":
                doc._.restored_text += "!"
            elif odd:
                doc._.underlying_punct = [{**e, "underlying": None} for e in doc._.underlying_punct]

    monkeypatch.setattr(PunctGen, "set_annotations", skew)
    specs = _fixed_specs(mode)
    with pytest.raises(AssertionError):
        check_batch_sizes(pipelines(mode), specs, mode)
    with pytest.raises(AssertionError):
        check_threads(pipelines(mode), pipelines(mode), unseen(specs), mode)
    with pytest.raises(AssertionError):
        check_n_process(pipelines(mode), specs, mode)


def test_list_typed_pairs_are_caught(pipelines, monkeypatch):
    """Issue 23 item 17's symptom (tuples back as lists) fails the comparison of snapshots."""
    from fuzz_strategies import snapshot as snap

    nlp = pipelines("analyze")
    doc = nlp(_fixed_specs("analyze")[0].make(nlp.vocab))
    before = snap(doc, "analyze")
    tok = doc[1]
    doc.user_data[("._.", "punct_left", tok.idx, None)] = list(tok._.punct_left or ())
    monkeypatch.setattr("spacy_punctgen.pipeline.extensions._as_tuple", lambda v: v)
    assert snap(doc, "analyze") != before
