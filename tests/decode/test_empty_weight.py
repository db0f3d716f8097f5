"""The empty string's weight in restoration's risk (``empty_weight``; decode/mbr.py ``risk_weights``,
cython_ext/slot_mbr.pyx): the compiled decoder equals the NumPy reference (testing/exact_mbr.py) and a direct
computation over the exact slot marginals; 1 is plain MBR; lower weights insert more marks;
bad values are refused; the component, ``punctgen restore`` and ``evaluate-stream`` pass it on."""
import json
import math
from pathlib import Path

import pytest

import spacy_punctgen.decode.mbr as mbr
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.marginal import marginal_choices, marginal_distributions
from spacy_punctgen.evaluation.metrics import edit_distance
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.testing.exact_mbr import restore_exact
from spacy_punctgen.pipeline.shipped import default_model_path, restore_model_path

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
SETTINGS = dict(prune=mbr.RESTORE_PRUNE, beam=mbr.EXACT_BEAM, expand=mbr.EXACT_EXPAND, wide=mbr.EXACT_WIDE,
                rescale=mbr.EXACT_RESCALE)


@pytest.fixture(scope="module", params=["en_ewt", "en_ewt_stream"])
def model(request):
    path = default_model_path("en") if request.param == "en_ewt" else restore_model_path("en")
    return PunctModel.from_disk(path)


@pytest.fixture(scope="module")
def sents():
    return [s for split in ("dev", "test") for s in preprocess_file(SAMPLE / f"en_sample-ud-{split}.conllu")[0]]


def _marks(choices):
    return sum(len(c.surface) for sent in choices for c in sent)


@pytest.mark.parametrize("weight", [0.25, 0.5, 2.0])
def test_compiled_equals_exact_and_a_direct_computation(model, sents, weight):
    got = mbr.restore_sentences(model, sents, method="marginal", empty_weight=weight)
    want = restore_exact(model, [[s] for s in sents], empty_weight=weight)
    assert [[c.surface for c in s] for s in got] == [[c.surface for c in s] for s in want]
    # directly: per slot, the candidate of least Σ_s w(s) p(s) d(c, s) over the exact marginal
    prior_sets, channel = mbr.mixture_priors(model, [[s] for s in sents])
    margs = marginal_distributions(prior_sets, model.grammar, channel.phi, channel.r2l,
                                   symbols=model.inventory.symbols, **SETTINGS)
    for k, sent_margs in enumerate(margs):
        for i, marg in enumerate(sent_margs):
            ranked = list(marg)  # most probable first, ties by string
            support = [x for x in ranked[:mbr.EXACT_BEAM] if marg[x] >= mbr.EXACT_SUPPORT_MIN] or ranked[:1]
            cands = ranked[:mbr.EXACT_CANDIDATES]
            risks = [sum(p * (weight if not x else 1.0) * edit_distance(c, x)
                         for x, p in zip(support, (marg[x] for x in support))) for c in cands]
            best = min(range(len(cands)), key=lambda j: (risks[j], j))
            close = [j for j in range(len(cands)) if math.isclose(risks[j], risks[best], rel_tol=1e-12)]
            assert got[k][i].surface in [cands[j] for j in close], (k, i)


def test_weight_one_is_plain_mbr_and_lower_weights_insert_more(model, sents):
    plain = mbr.restore_sentences(model, sents)
    assert mbr.restore_sentences(model, sents, empty_weight=1.0) == plain
    prior_sets, channel = mbr.mixture_priors(model, [[s] for s in sents])
    direct = marginal_choices(prior_sets, model.grammar, channel.phi, channel.r2l,
                              candidates=mbr.EXACT_CANDIDATES, support_min=mbr.EXACT_SUPPORT_MIN,
                              symbols=model.inventory.symbols, empty_weight=1.0, **SETTINGS)
    assert [[x for x, _ in s] for s in direct] == [[c.surface for c in s] for s in plain]
    counts = [_marks(mbr.restore_sentences(model, sents, empty_weight=w)) for w in (4.0, 1.0, 0.5, 0.2)]
    assert counts == sorted(counts) and counts[-1] > counts[1] > counts[0]


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), "0.5", True, None])
def test_bad_weights_are_refused(model, sents, value):
    with pytest.raises(ValueError, match="E885"):
        mbr.restore_sentences(model, sents[:1], empty_weight=value)


def test_the_sampling_decoders_refuse_a_weight_other_than_one(model, sents):
    with pytest.raises(ValueError, match="E886"):
        mbr.restore_sentences(model, sents[:1], method="slot", n_samples=10, empty_weight=0.5)
    assert mbr.restore_sentences(model, sents[:1], method="slot", n_samples=10, empty_weight=1.0)


def test_component_and_commands_pass_it_on(tmp_path):
    import spacy_punctgen
    from spacy_punctgen.cli import main

    text = "when i came home he left i was sad and then we talked about it for hours"
    plain = spacy_punctgen.load("en")(text)._.restored_punct
    more = spacy_punctgen.load("en", config={"restore_empty_weight": 0.3})(text)._.restored_punct
    assert sum(len(e["surface"]) for e in more) > sum(len(e["surface"]) for e in plain)
    with pytest.raises(ValueError, match="E885"):
        spacy_punctgen.load("en", config={"restore_empty_weight": 0.0})
    with pytest.raises(ValueError, match="E886"):
        spacy_punctgen.load("en", config={"restore_empty_weight": 0.5, "restore_method": "sample"})
    out = tmp_path / "s.json"
    assert main(["evaluate-stream", "shipped", str(SAMPLE / "en_sample-ud-test.conllu"), "--limit", "2",
                 "--empty-weight", "0.5", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["empty_weight"] == 0.5
    src = tmp_path / "in.txt"
    src.write_text(text + "\n", encoding="utf-8")
    assert main(["restore", str(src), "--empty-weight", "0.3", "--output", str(tmp_path / "o.txt")]) == 0
    assert (tmp_path / "o.txt").read_text(encoding="utf-8").count(",") > \
        spacy_punctgen.load("en")(text)._.restored_text.count(",")
    assert main(["restore", str(src), "--empty-weight", "0"]) == 2  # argparse's refusal
