"""Bad and unusual input at the model/DP level: a clear error or a correct degraded result,
never a crash, a hang, a NaN or a silently wrong number (component-level cases: test_component)."""
import copy
import json
import math
import pickle
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.bench.suite import chain_sentences
from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.inference.dp import (Grammar, build_lattice, inside_outside, log_prob, sample_posterior,
                               tree_structure, viterbi)
from spacy_punctgen.model.punct_model import CFG_FILE, INVENTORY_FILE, PARAMS_FILE, PunctModel
from spacy_punctgen.model.serialize import model_params
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_file, preprocess_sentences
from spacy_punctgen.training.train import TrainConfig, train_model

from spacy_punctgen.testing.problems import PUNCTEMES, feasible_problem, random_phi

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample"
UNSEEN = ["\u203d", "\U0001F600", "\uff0c"]  # ‽, 😀, fullwidth ，  (none is in the English sample)


@pytest.fixture(scope="module")
def model():
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    dev, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    cfg = TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0, direction="l2r", progress=False)
    m, _ = train_model(train, dev, cfg)
    assert m.smooth_delta > 0
    return m


@pytest.fixture(scope="module")
def test_sents():
    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-test.conllu")
    return sents


def write(tmp_path, text, name="x-ud-test.conllu"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def row(i, form, upos, head, deprel, misc="_"):
    return f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{deprel}\t_\t{misc}"


# ---------------------------------------------------------------- non-projective trees
def test_dp_refuses_non_projective_tree_naming_the_word():
    g = Grammar(4, PUNCTEMES)
    heads = [2, -1, 1, 0]  # arc 3->0 crosses 1->2
    with pytest.raises(ValueError, match="not projective.*word"):
        tree_structure(heads)
    slots = [[0]] + [[] for _ in heads]
    with pytest.raises(ValueError, match="not projective"):
        build_lattice(g, heads, slots, [np.array([(0, 0)])] * 4)


@pytest.mark.parametrize("heads, what", [([1, 0], "cycle"), ([0], "cycle"), ([5, -1], "head")])
def test_dp_refuses_cycles_and_bad_heads(heads, what):
    with pytest.raises(ValueError):
        tree_structure(heads)


def test_non_projective_conllu_is_projectivised_and_scored(model, tmp_path):
    # "A hearing is scheduled on the issue today ." : nmod 'issue' -> 'hearing' crosses 'scheduled'
    rows = [row(1, "A", "DET", 2, "det"), row(2, "hearing", "NOUN", 4, "nsubj"),
            row(3, "is", "AUX", 4, "aux"), row(4, "scheduled", "VERB", 0, "root"),
            row(5, "on", "ADP", 7, "case"), row(6, "the", "DET", 7, "det"),
            row(7, "issue", "NOUN", 2, "nmod"), row(8, "today", "NOUN", 4, "obl"),
            row(9, ",", "PUNCT", 4, "punct"), row(10, "yes", "INTJ", 4, "discourse"),
            row(11, ".", "PUNCT", 4, "punct")]
    path = write(tmp_path, "\n".join(rows) + "\n\n")
    sents, stats = preprocess_file(path)
    assert stats.nonprojective == 1 and sents[0].nonprojective
    tree_structure(sents[0].heads)  # projective now
    prep = model.prepare_eval(sents)
    lp = model.log_probs(prep)[0]
    assert math.isfinite(lp) and lp < 0
    assert model.best_underlying(prep[0]) is not None


# ---------------------------------------------------------------- a 1,000-word sentence
def test_thousand_word_sentence_in_the_model(model, test_sents):
    parts, n = [], 0
    pool = [s for s in test_sents if not s.slots[0]]
    while n < 1000:
        s = pool[len(parts) % len(pool)]
        parts.append(s)
        n += len(s)
    long = chain_sentences(parts)
    assert len(long) >= 1000
    prep = model.prepare(long, smoothed=True)
    lp = model.log_probs([prep])[0]
    assert math.isfinite(lp) and lp < -50
    best = model.best_underlying(prep)
    assert best is not None and len(best) == len(long)
    # unsmoothed, the long sentence may be impossible: the back-off keeps it finite
    for backoff_lp in (model.log_prob(long, backoff=True), model.log_probs([prep], backoff=True)[0]):
        assert math.isfinite(backoff_lp) and backoff_lp < 0


# ---------------------------------------------------------------- unseen punctuation
@pytest.mark.parametrize("tok", UNSEEN)
def test_unseen_punctuation_gets_finite_probability_through_smoothing(model, test_sents, tok):
    assert model.inventory.symbol_id(tok) == 1  # the <unk> symbol class
    s = copy.deepcopy(test_sents[0])
    s.slots[1] = (tok,)
    # plain log_prob() compiles the sentence without the smoothing pairs: p = 0 (documented
    # degraded behaviour); smoothing is applied by prepare_eval / log_probs / perplexity
    assert model.log_prob(s) == -math.inf
    prep = model.prepare_eval([s])
    lp = model.log_probs(prep)[0]
    assert math.isfinite(lp) and lp < 0
    best = model.best_underlying(prep[0])
    assert best is not None
    assert ("<unk>",) in [half for pair in best for half in pair]
    assert math.isfinite(model.log_prob(s, backoff=True))
    res = model.perplexity(prep)
    assert res["n_impossible"] == 0 and math.isfinite(res["perplexity_per_slot"])


def test_unseen_token_inside_a_longer_slot_and_all_at_once(model, test_sents):
    s = copy.deepcopy(test_sents[1])
    s.slots[1] = (",",) + tuple(UNSEEN) + ("\u203d",)
    s.slots[-1] = ("\uff0c", ".", "\U0001F600")
    for prep in (model.prepare_eval([s]), [model.prepare(s)]):
        lp = model.log_probs(prep, backoff=True)[0]
        assert math.isfinite(lp) and lp < 0
        res = model.perplexity(prep)
        assert math.isfinite(res["perplexity_per_slot"]) and res["perplexity_per_slot"] >= 1.0


# ---------------------------------------------------------------- multiword tokens
MWT = "\n".join([
    "# sent_id = mwt-1",
    "# text = I don't know, do you?",
    row(1, "I", "PRON", 3, "nsubj"),
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    row(2, "do", "AUX", 4, "aux"),
    row(3, "n't", "PART", 4, "advmod"),
    row(4, "know", "VERB", 0, "root", "SpaceAfter=No"),
    "4.1\tknows\t_\tVERB\t_\t_\t_\t_\t4:conj\t_",
    row(5, ",", "PUNCT", 7, "punct"),
    row(6, "do", "AUX", 7, "aux"),
    row(7, "you", "PRON", 4, "parataxis", "SpaceAfter=No"),
    row(8, "?", "PUNCT", 4, "punct"),
])


def test_multiword_tokens_and_empty_nodes(model, tmp_path):
    # the MWT line fixes the surface spacing; the words are the syntactic ones
    path = write(tmp_path, MWT + "\n\n")
    (ud,) = read_conllu(path)
    assert ud.forms == ["I", "do", "n't", "know", ",", "do", "you", "?"]
    assert ud.space_after[:4] == [True, False, True, False]
    sents, _ = preprocess_sentences([ud])
    assert sents[0].words == ["I", "do", "n't", "know", "do", "you"]
    assert sents[0].slots == [(), (), (), (), (",",), (), ("?",)]
    lp = model.log_probs(model.prepare_eval(sents))[0]
    assert math.isfinite(lp) and lp < 0


def test_multiword_range_outside_the_sentence_is_named(tmp_path):
    bad = MWT.replace("2-3\tdon't", "7-9\tdon't")
    path = write(tmp_path, bad + "\n\n")
    with pytest.raises(ValueError, match=r"x-ud-test\.conllu:1: multiword range 7-9"):
        read_conllu(path)


# ---------------------------------------------------------------- DP arguments
def test_dp_refuses_nan_or_negative_inputs():
    g, heads, slots, cands, probs, phi, lat, cand_p = feasible_problem(7)
    for bad_p in (np.where(np.arange(len(cand_p)) == 0, np.nan, cand_p), -cand_p, cand_p[:-1]):
        for fn in (log_prob, viterbi, inside_outside):
            with pytest.raises(ValueError, match="cand_p|candidate probabilities"):
                fn(lat, g, bad_p, phi, False)
    for bad_phi in (np.where(np.isfinite(phi) & (phi > 0.3), np.nan, phi), -phi, phi[:, :, :3],
                    np.full_like(phi, np.inf)):
        for fn in (log_prob, viterbi, inside_outside):
            with pytest.raises(ValueError, match="phi"):
                fn(lat, g, cand_p, bad_phi, False)
        with pytest.raises(ValueError, match="phi"):
            sample_posterior(lat, g, cand_p, bad_phi, False, 3)


def test_dp_refuses_a_grammar_the_lattice_was_not_built_with():
    big = Grammar(8, PUNCTEMES + [(7,), (7, 7)])
    heads = [-1, 0]
    lat = build_lattice(big, heads, [[0, 7], [7], []], [np.array([(0, 0), (8, 0)]), np.array([(0, 0)])])
    small = Grammar(4, PUNCTEMES)
    phi = random_phi(np.random.default_rng(0), 4)
    with pytest.raises(ValueError, match="grammar"):
        log_prob(lat, small, np.full(lat.n_candidates, 0.5), phi, False)
    with pytest.raises(ValueError, match="grammar"):
        viterbi(lat, Grammar(8, PUNCTEMES), np.full(lat.n_candidates, 0.5), random_phi(np.random.default_rng(0), 8),
                False)


@pytest.mark.parametrize("slots, cands, match", [
    ([[1], []], [np.array([(0, 0)])], "slot 0 must start"),
    ([[0, 9], []], [np.array([(0, 0)])], "slot 0 has symbol id 9"),
    ([[0], [-1]], [np.array([(0, 0)])], "slot 1 has symbol id -1"),
    ([[0], []], [np.array([(0, 99)])], "node 0 has a candidate puncteme id"),
    ([[0], [], []], [np.array([(0, 0)])], "expected 2 slots"),
    ([[0], []], [], "expected candidate pairs for 1 nodes"),
])
def test_build_lattice_names_what_is_wrong(slots, cands, match):
    with pytest.raises(ValueError, match=match):
        build_lattice(Grammar(4, PUNCTEMES), [-1], slots, cands)


def test_empty_sentence_is_refused(model):
    s = PunctSentence(words=[], upos=[], xpos=[], deprels=[], heads=[], slots=[()])
    with pytest.raises(ValueError):
        model.prepare(s)


def test_impossible_sampling_is_a_clear_error():
    g = Grammar(4, PUNCTEMES)
    lat = build_lattice(g, [-1], [[0], [3]], [np.array([(0, 0), (0, 1)])])  # '3' never produced
    phi = random_phi(np.random.default_rng(1), 4)
    assert log_prob(lat, g, np.array([0.5, 0.5][: lat.n_candidates]), phi, False) == -math.inf
    with pytest.raises(ValueError, match="impossible"):
        sample_posterior(lat, g, np.full(lat.n_candidates, 0.5), phi, False, 4)


# ---------------------------------------------------------------- model files
@pytest.fixture()
def saved(model, tmp_path):
    return model.to_disk(tmp_path / "m")


@pytest.mark.parametrize("name", [CFG_FILE, INVENTORY_FILE, PARAMS_FILE])
def test_empty_model_file_is_named(saved, name):
    (saved / name).write_bytes(b"")
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        PunctModel.from_disk(saved)


@pytest.mark.parametrize("name", [CFG_FILE, INVENTORY_FILE, PARAMS_FILE])
def test_model_file_that_is_a_folder_is_named(saved, name):
    (saved / name).unlink()
    (saved / name).mkdir()
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        PunctModel.from_disk(saved)


@pytest.mark.parametrize("edit", [
    lambda c: [c],  # valid JSON, wrong type
    lambda c: {k: v for k, v in c.items() if k != "mode"},
    lambda c: {**c, "format": "something-else"},
    lambda c: {**c, "version": "1"},
    lambda c: {**c, "mode": "nonsense"},
    lambda c: {**c, "direction": "up"},
    lambda c: {**c, "n_features": -3},
])
def test_bad_cfg_is_named(saved, edit):
    cfg = json.loads((saved / CFG_FILE).read_text(encoding="utf-8"))
    (saved / CFG_FILE).write_text(json.dumps(edit(cfg)), encoding="utf-8")
    with pytest.raises(ValueError, match=r"cfg\.json"):
        PunctModel.from_disk(saved)


@pytest.mark.parametrize("edit", [
    lambda d: {k: v for k, v in d.items() if k != "punctemes"},
    lambda d: {**d, "symbols": ["x", "y"]},
    lambda d: {**d, "punctemes": [[","]] + d["punctemes"]},
    lambda d: [d],
])
def test_bad_inventory_is_named(saved, edit):
    inv = json.loads((saved / INVENTORY_FILE).read_text(encoding="utf-8"))
    (saved / INVENTORY_FILE).write_text(json.dumps(edit(inv)), encoding="utf-8")
    with pytest.raises(ValueError, match=r"inventory\.json"):
        PunctModel.from_disk(saved)


@pytest.mark.parametrize("drop", ["theta", "psi", "backoff_tok_logp"])
def test_params_missing_an_array_is_named(model, saved, drop):
    params = {k: v for k, v in model_params(model).items() if k != drop}
    np.savez(saved / PARAMS_FILE, **params)  # the name ends in .npz: kept as is
    with pytest.raises(ValueError, match=rf"params\.npz.*{drop}"):
        PunctModel.from_disk(saved)


def test_params_with_nan_are_refused_on_load(model, saved):
    """A parameter file holding NaN is refused when it is read, naming the file and the array."""
    params = model_params(model)
    params["theta"] = params["theta"].copy()
    params["theta"][:] = np.nan
    np.savez(saved / PARAMS_FILE, **params)
    with pytest.raises(ValueError, match=r"params\.npz.*theta.*non-finite"):
        PunctModel.from_disk(saved)


# ---------------------------------------------------------------- no data lost
def test_round_trips_reproduce_predictions_on_the_test_split(model, saved, test_sents):
    preps = model.prepare_eval(test_sents)
    want_lp = model.log_probs(preps, backoff=True)
    want_best = [model.best_underlying(p) for p in preps]
    want_raw = [model.best_underlying(s) for s in test_sents]
    copies = {
        "disk": PunctModel.from_disk(saved),
        "bytes": PunctModel.from_bytes(model.to_bytes()),
        "pickle": pickle.loads(pickle.dumps(model)),
        "pickle-of-loaded": pickle.loads(pickle.dumps(PunctModel.from_disk(saved))),
    }
    for how, m in copies.items():
        p2 = m.prepare_eval(test_sents)
        got = m.log_probs(p2, backoff=True)
        assert got.tobytes() == want_lp.tobytes(), how
        assert [m.best_underlying(p) for p in p2] == want_best, how
        assert [m.best_underlying(s) for s in test_sents] == want_raw, how
        assert m.perplexity(p2) == model.perplexity(preps), how
