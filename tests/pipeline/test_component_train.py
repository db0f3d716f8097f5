"""Training the punctgen component the spaCy way: initialize, update, score, round-trips."""
import math
import pickle
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Adam

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.pipeline.doc_convert import doc_from_ud, gold_sentences

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def examples(nlp, split="train", n=None, per_doc=1):
    """Examples whose references carry the gold trees and punctuation (as `spacy convert` gives);
    ``per_doc`` sentences per Doc."""
    refs = [doc_from_ud(nlp.vocab, ud) for ud in read_conllu(SAMPLE / f"en_sample-ud-{split}.conllu")[:n]]
    if per_doc > 1:
        refs = [Doc.from_docs(refs[i:i + per_doc]) for i in range(0, len(refs), per_doc)]
    return [Example(Doc(nlp.vocab, words=[t.text for t in r], spaces=[bool(t.whitespace_) for t in r]), r)
            for r in refs]


def analyse(nlp, egs):
    return [(d._.underlying_punct, d._.punct_logprob) for d in (nlp(eg.reference.copy()) for eg in egs)]


def test_initialize_builds_the_model_from_reference_trees():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen")
    train = examples(nlp, per_doc=5)
    nlp.initialize(lambda: train)
    pm = pipe.punct_model
    assert pm is not None and pm.n_features > 0
    assert pipe.model.get_param("theta").dtype == np.float32
    assert pipe.model.get_param("theta").shape == (pm.n_features,)
    assert pipe.model.get_param("psi").shape == (pm.n_symbols, pm.n_symbols, 4)
    # the inventory holds every punctuation sequence of the gold slots
    seen = {tuple(s) for ps in gold_sentences([eg.reference for eg in train]) for s in ps.slots} - {()}
    assert seen <= set(pm.inventory.punctemes)
    assert pm.meta["quote_xpos"] is True  # English with PTB quote tags, like EWT


def test_initialize_without_trees_is_a_clear_error(monkeypatch):
    from spacy_punctgen.pipeline import component

    monkeypatch.setattr(component, "shipped_model_path", lambda lang: None)  # else it is kept
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen")
    with pytest.raises(ValueError, match="E005"):
        nlp.initialize()  # spaCy's dummy example has no parse


def test_update_before_initialize_is_a_clear_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen")
    with pytest.raises(ValueError, match="E009"):
        nlp.get_pipe("punctgen").update(examples(nlp, n=2))


def test_update_puts_the_exact_gradient_into_the_thinc_model():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("punctgen")
    train = examples(nlp, n=20)
    nlp.initialize(lambda: train)
    batch = train[:4]
    losses = pipe.update(batch, losses={})
    pm = pipe.punct_model
    res = pm.objective_and_gradient(pm.prepare_all(gold_sentences([eg.reference for eg in batch],
                                                                  quote_xpos=True)))
    assert losses["punctgen"] == pytest.approx(-res.objective)
    assert np.allclose(pipe.model.get_grad("theta"), -res.grad_theta, atol=1e-5)
    assert np.allclose(pipe.model.get_grad("psi"), -res.grad_psi, atol=1e-5)
    # and finish_update consumes it: the params move, the gradient is cleared
    theta = pipe.model.get_param("theta").copy()
    pipe.finish_update(Adam(0.01))
    assert not np.array_equal(theta, pipe.model.get_param("theta"))
    assert not pipe.model.get_grad("theta").any()


@pytest.fixture(scope="module")
def overfit(tmp_path_factory):
    """A component overfit on a few multi-sentence Docs with spaCy's update loop."""
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen")
    train = examples(nlp, n=12, per_doc=3)
    opt = nlp.initialize(lambda: train)
    opt.learn_rate = 0.05
    history = []
    for _ in range(25):
        losses = {}
        nlp.update(train, sgd=opt, losses=losses)
        history.append(losses["punctgen"])
    return nlp, train, history


def test_overfitting_lowers_the_loss_and_the_perplexity(overfit):
    nlp, train, history = overfit
    assert history[-1] < 0.5 * history[0]
    scores = nlp.get_pipe("punctgen").score(train)
    assert scores["punct_ppl"] < 1.2
    assert scores["punct_lp"] == pytest.approx(-math.log(scores["punct_ppl"]))
    assert 0.0 <= scores["punct_aed"] < 0.2


def test_overfit_model_round_trips_disk_bytes_and_pickle(overfit, tmp_path):
    nlp, train, _ = overfit
    ref = analyse(nlp, train)
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert analyse(loaded, train) == ref
    other = spacy.blank("en")
    other.add_pipe("punctgen").from_bytes(nlp.get_pipe("punctgen").to_bytes())
    assert analyse(other, train) == ref
    assert analyse(pickle.loads(pickle.dumps(nlp)), train) == ref
    assert loaded.get_pipe("punctgen").to_bytes() == nlp.get_pipe("punctgen").to_bytes()


def test_use_params_swaps_in_the_averages(overfit):
    nlp, train, _ = overfit
    pipe = nlp.get_pipe("punctgen")
    key = (pipe.model.id, "theta")
    zeros = {key: np.zeros_like(pipe.model.get_param("theta"))}
    before = analyse(nlp, train[:1])
    with nlp.use_params(zeros):
        during = analyse(nlp, train[:1])
    assert during != before
    assert analyse(nlp, train[:1]) == before
