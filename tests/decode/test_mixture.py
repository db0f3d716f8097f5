"""Restoration from several trees of one sentence (paper footnote 20): the uniform mixture
``(1/K) Σ_k p(x | T_k)``.  Exact mixture marginals against brute-force enumeration of each tree;
pooled samples against them; one tree is the single-tree decoder; clear errors; the CLI."""
import dataclasses
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.cli import main
from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.decode.mbr import (METHODS, mixture_slot_marginals, restore_mixtures, restore_sentences,
                                   slot_marginals)
from spacy_punctgen.evaluation.restoration import parsed_paths
from spacy_punctgen.evaluation.metrics import edit_distance
from spacy_punctgen.testing.exact_mbr import restore_exact
from spacy_punctgen.testing.reference import brute_joint, joint_marginals
from spacy_punctgen.testing.toy import toy_model, toy_sentences

N_BIG = 20000


@pytest.fixture(scope="module", params=["l2r", "r2l"])
def model(request):
    return toy_model(request.param)


def _other_tree(sent, heads, deprels=None):
    """The same words under another (projective) tree, as a second parser might give it."""
    return dataclasses.replace(sent, heads=list(heads), deprels=list(deprels or sent.deprels))


def _trees():
    """Toy sentence 1 ("apples pears and plums") under its gold tree and two others."""
    s = toy_sentences()[1]
    return [s, _other_tree(s, [-1, 0, 1, 0]), _other_tree(s, [1, -1, 3, 1], ["nsubj", "root", "cc", "obj"])]


def _average(dicts):
    out = Counter()
    for d in dicts:
        for x, p in d.items():
            out[x] += p / len(dicts)
    return out


@pytest.mark.parametrize("which", ["compiled", "reference"])
@pytest.mark.parametrize("k", [2, 3])
def test_mixture_marginals_are_the_average_of_brute_force_marginals(model, k, which, monkeypatch):
    """The library's (compiled) mixture marginals and the NumPy reference's, unpruned."""
    import spacy_punctgen.decode.marginal as marginal
    import spacy_punctgen.testing.exact_mbr as reference

    monkeypatch.setattr(marginal, "EXACT_PRUNE", 0.0)
    monkeypatch.setattr(reference, "EXACT_PRUNE", 0.0)
    trees = _trees()[:k]
    brute = [joint_marginals(brute_joint(model, t), len(t.slots)) for t in trees]
    mix = (mixture_slot_marginals if which == "compiled" else reference.mixture_slot_marginals)(model, trees)
    assert len(mix) == len(trees[0].words) + 1
    for i, m in enumerate(mix):
        want = _average([b[i] for b in brute])
        assert sum(m.values()) == pytest.approx(1.0, abs=1e-12)
        assert set(m) == {x for x, p in want.items() if p > 0}, i
        for x, p in want.items():
            assert m.get(x, 0.0) == pytest.approx(p, abs=1e-12), (i, x)
    # the trees really differ, so the mixture is not any single tree's marginal
    assert any(abs(brute[0][i][x] - brute[1][i][x]) > 1e-3 for i in range(len(mix)) for x in brute[0][i])


def test_marginal_mixture_choice_is_the_brute_force_mixture_mbr(model):
    trees = _trees()
    brute = [joint_marginals(brute_joint(model, t), len(t.slots)) for t in trees]
    (choice,) = restore_mixtures(model, [trees], method="marginal")
    for i, c in enumerate(choice):
        mix = _average([b[i] for b in brute])
        risk = {x: sum(p * edit_distance(x, y) for y, p in mix.items()) for x in mix}
        assert risk[c.surface] == pytest.approx(min(risk.values()), abs=1e-12), i
        assert c.prob == pytest.approx(mix[c.surface], abs=1e-5)


def test_pooled_sample_frequencies_match_the_mixture(model):
    trees = _trees()
    mix = mixture_slot_marginals(model, trees)
    (choice,) = restore_mixtures(model, [trees], method="slot", n_samples=N_BIG, seed=3)
    for i, c in enumerate(choice):  # the chosen string's pooled frequency estimates its mixture marginal
        p = mix[i][c.surface]
        assert abs(c.prob - p) <= 5 * np.sqrt(p * (1 - p) / N_BIG) + 1e-3, (i, c.prob, p)


@pytest.mark.parametrize("method", METHODS)
def test_one_tree_per_sentence_is_the_single_tree_decoder(model, method):
    sents = toy_sentences()
    single = restore_sentences(model, sents, method=method, n_samples=300, seed=4)
    mixed = restore_mixtures(model, [[s] for s in sents], method=method, n_samples=300, seed=4)
    assert mixed == single
    assert mixture_slot_marginals(model, [sents[2]]) == slot_marginals(model, sents[2])


def test_identical_trees_give_the_single_tree_exact_result(model):
    sents = toy_sentences()
    single = restore_exact(model, [[s] for s in sents])
    assert restore_exact(model, [[s, s, s, s] for s in sents]) == single
    single = restore_sentences(model, sents, method="marginal")
    mixed = restore_mixtures(model, [[s, s, s, s] for s in sents], method="marginal")
    assert [[c.surface for c in r] for r in mixed] == [[c.surface for c in r] for r in single]
    for r, q in zip(mixed, single):
        assert [c.prob for c in r] == pytest.approx([c.prob for c in q], rel=1e-12)


def test_mixture_is_deterministic_and_allows_fewer_samples_than_trees(model):
    trees = _trees()
    a = restore_mixtures(model, [trees, trees[:1]], method="sample", n_samples=2, seed=9)
    assert a == restore_mixtures(model, [trees, trees[:1]], method="sample", n_samples=2, seed=9)
    assert all(c.prob in (0.5, 1.0) for c in a[0])


def test_bad_mixtures_are_clear_errors(model):
    s = toy_sentences()[1]
    with pytest.raises(ValueError, match="no trees"):
        restore_mixtures(model, [[]])
    with pytest.raises(ValueError, match="same words"):
        restore_mixtures(model, [[s, toy_sentences()[0]]])


def test_parsed_paths():
    assert parsed_paths(None) == [] and parsed_paths("a.conllu") == ["a.conllu"]
    assert parsed_paths(["a.conllu,b.conllu", "c.conllu"]) == ["a.conllu", "b.conllu", "c.conllu"]
    with pytest.raises(ValueError, match="names no file"):
        parsed_paths([","])


def test_parsed_paths_glob(tmp_path):
    for name in ("test.parsed-seed2.conllu", "test.parsed-seed1.conllu", "other.conllu"):
        (tmp_path / name).write_text("")
    first = str(tmp_path / "test.parsed.conllu")
    got = parsed_paths(f"{first},{tmp_path}/test.parsed-seed*.conllu")
    assert got == [first, str(tmp_path / "test.parsed-seed1.conllu"), str(tmp_path / "test.parsed-seed2.conllu")]
    with pytest.raises(ValueError, match="matches no file"):
        parsed_paths(f"{tmp_path}/none-*.conllu")


SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
TEST = SAMPLE / "en_sample-ud-test.conllu"


def test_evaluate_restore_with_several_parsed_files(tmp_path, capsys):
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.training.train import TrainConfig, train_model

    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    model, _ = train_model(train[:80], train[80:100], TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0,
                                                                  progress=False, jobs=1))
    model_dir = tmp_path / "model"
    model.to_disk(model_dir)
    parsed = tmp_path / "parsed.conllu"
    convert_file(TEST, parsed, depunct=True)
    args = ["evaluate-restore", str(model_dir), str(TEST), "--method", "marginal", "--limit", "12", "--json"]
    assert main(args + ["--parsed", str(parsed)]) == 0
    one = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # the same trees twice, once as a repeated option, once as a comma list: the exact mixture
    # of identical trees is the single tree's distribution
    for extra in (["--parsed", str(parsed), "--parsed", str(parsed)], ["--parsed", f"{parsed},{parsed}"]):
        assert main(args + extra) == 0
        two = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert two["aed"] == one["aed"] and two["edits"] == one["edits"]
        assert two["n_trees"] == 2 and [p["las"] for p in two["parsers"]] == [1.0, 1.0]
        assert two["trees"] == [str(parsed)] * 2 and "parser" not in two
    assert one["parser"]["las"] == 1.0 and one["trees"] == str(parsed)
