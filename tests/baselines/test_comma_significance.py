"""The companions' paired comma test: per-sentence counts that add up to :func:`comma_scores`, the
randomisation p-values of P, R, F1 and SER against an exact enumeration of every swap, the refusal
of counts of different test sentences, and the study scripts that write and read the counts."""
import importlib.util
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.baselines.trigram_hmm import comma_scores, comma_significance, sentence_comma_counts

STUDY = Path(__file__).resolve().parents[2] / "experiments" / "companions" / "scripts"
C = (",",)


def study_script(name: str):
    spec = importlib.util.spec_from_file_location(f"_companions_{name}", STUDY / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sentence_counts_are_hand_counted_and_add_up_to_comma_scores():
    gold = [[(), C, (), C, (".",)], [(), (), ("?",)], [(), C, C, ()]]
    pred = [[(), C, C, (), (".",)], [(), C, ()], [(), (",", ","), C, ()]]
    counts = sentence_comma_counts(gold, pred)
    # sentence 0: slot 1 right, slot 2 extra, slot 3 missed; 1: one extra; 2: both right (a doubled
    # comma is one comma, as comma_scores counts it)
    assert counts == [(1, 1, 1), (0, 1, 0), (2, 0, 0)]
    scores = comma_scores(gold, pred)
    assert tuple(np.sum(counts, axis=0)) == (scores["tp"], scores["fp"], scores["fn"])


def exact_p(a, b, statistic):
    """Two-sided p over all 2^n swaps of the sentences' pairs (the observed one included)."""
    a, b = np.asarray(a), np.asarray(b)
    observed = abs(statistic(a.sum(0)) - statistic(b.sum(0)))
    hits = 0
    for swap in itertools.product([0, 1], repeat=len(a)):
        s = np.asarray(swap)[:, None]
        x, y = np.where(s, b, a).sum(0), np.where(s, a, b).sum(0)
        hits += abs(statistic(x) - statistic(y)) >= observed - 1e-12
    return hits / 2 ** len(a)


def ratio(num, den):
    return num / den if den else 0.0


STATISTICS = {
    "p_precision": lambda c: ratio(c[0], c[0] + c[1]),
    "p_recall": lambda c: ratio(c[0], c[0] + c[2]),
    "p_f1": lambda c: ratio(2 * c[0], 2 * c[0] + c[1] + c[2]),
    "p_ser": lambda c: ratio(c[1] + c[2], c[0] + c[2]),
}


def test_p_values_match_the_exact_randomisation_of_each_score():
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 4, size=10)
    tp_a, tp_b = rng.integers(0, gold + 1), rng.integers(0, gold + 1)
    a = np.stack([tp_a, rng.integers(0, 3, size=10), gold - tp_a], axis=1)
    b = np.stack([tp_b, rng.integers(0, 3, size=10), gold - tp_b], axis=1)
    got = comma_significance(a, b, n_permutations=40000, seed=1)
    for key, statistic in STATISTICS.items():
        assert got[key] == pytest.approx(exact_p(a, b, statistic), abs=0.01), key
    assert got["n_sentences"] == 10 and got["n_permutations"] == 40000


def test_one_system_against_itself_and_against_a_clearly_better_one():
    a = np.array([[2, 0, 0]] * 60)
    same = comma_significance(a, a, n_permutations=200)
    assert all(same[k] == 1.0 for k in STATISTICS)
    worse = np.array([[0, 2, 2]] * 60)
    far = comma_significance(a, worse, n_permutations=2000)
    assert all(far[k] <= 1 / 2001 + 1e-12 for k in STATISTICS)


def test_counts_of_other_sentences_are_refused():
    with pytest.raises(ValueError, match=r"\[E910\].*sentence 1 \(2 against 1\)"):
        comma_significance([[1, 0, 0], [1, 0, 1]], [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match=r"\[E909\]"):
        comma_significance([[1, 0, 0]], [[1, 0, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match=r"\[E909\]"):
        comma_significance([[1, 0]], [[1, 0]])


def record(system, variant, trees, counts, f1):
    c = np.sum(counts, axis=0)
    return {"system": system, "variant": variant, "trees": trees, "precision": ratio(c[0], c[0] + c[1]),
            "recall": ratio(c[0], c[0] + c[2]), "f1": f1, "ser": ratio(c[1] + c[2], c[0] + c[2]),
            "sentence_counts": [list(x) for x in counts]}


def test_the_study_tests_punctgen_against_the_best_other_row_and_says_what_it_cannot():
    sig = study_script("companions_significance")
    good, bad = [[2, 0, 0]] * 30, [[0, 1, 2]] * 30
    recs = [record("trigram_hmm", "lm", "gold", bad, 0.1), record("crf_syntax", "all", "gold", bad, 0.4),
            record("punctgen", "workflow", "gold", good, 0.9), record("crf_syntax", "all", "parsed", bad, 0.3)]
    del recs[1]["sentence_counts"]  # the best gold row was written before counts were recorded
    out = sig.significance(recs, n_permutations=500)
    assert out["tests"] == []
    assert [(u["trees"], u["against"]) for u in out["untested"]] == [("gold", "crf_syntax_all"),
                                                                     ("parsed", "crf_syntax_all")]
    assert "crf_syntax_all" in out["untested"][0]["reason"] and "no punctgen" in out["untested"][1]["reason"]
    recs[1]["sentence_counts"] = [list(x) for x in bad]
    test, = sig.significance(recs, n_permutations=500)["tests"]
    assert (test["system"], test["against"], test["f1"], test["f1_against"]) == ("punctgen_workflow",
                                                                                 "crf_syntax_all", 0.9, 0.4)
    assert test["p_f1"] == pytest.approx(1 / 501)


def test_the_metrics_file_keeps_the_counts_on_one_line(tmp_path):
    run = study_script("companions_run")
    path = tmp_path / "r.json"
    rec = {"system": "trigram_hmm", "f1": 0.5, "sentence_counts": [[1, 0, 2], [0, 0, 0]]}
    run.write_record(path, rec)
    assert json.loads(path.read_text(encoding="utf8")) == rec
    assert ' "sentence_counts": [[1,0,2],[0,0,0]]' in path.read_text(encoding="utf8").splitlines()


def test_parsed_trees_are_projectivised_as_the_core_workflow_does():
    from spacy_punctgen.data.preprocess import PunctSentence, preprocess_sentence
    from spacy_punctgen.data.conllu import UDSentence

    run = study_script("companions_run")
    # word 2 is the root with dependents 0 and 3, and 3 heads 1: the arc 3 -> 1 passes over
    # word 2, outside 3's subtree; it is lifted to 1's grandparent, 2
    assert run.projective([2, 3, -1, 2]) == [2, 2, -1, 2]
    assert run.projective([-1, 0, 1]) == [-1, 0, 1]
    # the same lifts as the core workflow's preprocessing of a parse
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 9))
        order = rng.permutation(n)
        heads = [-1] * n
        for k in range(1, n):
            heads[order[k]] = int(order[rng.integers(0, k)])
        ud = UDSentence(ids=list(range(1, n + 1)), forms=[f"w{i}" for i in range(n)], upos=["X"] * n,
                        xpos=["_"] * n, heads=[h + 1 for h in heads], deprels=["dep"] * n, space_after=[True] * n)
        core, _ = preprocess_sentence(ud, split_abbreviations=False)
        assert isinstance(core, PunctSentence) and run.projective(heads) == list(core.heads), heads


def test_the_punctgen_row_restores_as_the_core_workflows_evaluate_restore(tmp_path):
    """companions_run.py punctgen: the same slot strings as `evaluate-restore` (the core's record)."""
    from spacy_punctgen.data.conllu import find_split
    from spacy_punctgen.evaluation.restoration import evaluate_restore
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.shipped import default_model_path

    sample = STUDY.parents[2] / "assets" / "sample"
    model = str(default_model_path("en"))
    core = evaluate_restore(PunctModel.from_disk(model), find_split(sample, "test"), method="slot",
                            n_samples=200, seed=0)
    (tmp_path / "core.json").write_text(json.dumps(core), encoding="utf8")
    run = study_script("companions_run")
    assert run.main(["punctgen", "en_sample", str(sample), "--model", model, "--model-name", "m",
                     "--hyper", "n_samples=200", "--reference", str(tmp_path / "core.json"),
                     "--metrics", str(tmp_path / "metrics"), "--training", str(tmp_path / "training")]) == 0
    rec = json.loads((tmp_path / "metrics" / "en_sample" / "companions" / "punctgen_m.json").read_text(encoding="utf8"))
    assert rec["reference_counts_equal"] and rec["n_sentences"] == core["n_sentences"]
    assert tuple(np.sum(rec["sentence_counts"], axis=0)) == (rec["tp"], rec["fp"], rec["fn"])
    assert rec["hyper"] == {"method": "slot", "n_samples": 200, "seed": 0}
    assert run.main(["punctgen", "en_sample", str(sample), "--protocol", "cv", "--model", model]) == 1
