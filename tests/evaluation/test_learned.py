"""What a model learned (spacy_punctgen/evaluation/learned.py, the ``learned`` command) on the
toy model, whose channel is set by hand so that every probability is known."""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen import cli
from spacy_punctgen.evaluation.learned import (
    BigramRow, TreebankPass, bigram_rows, confident_edits, feature_weight, is_symmetric, learned_report,
    markdown_tables, nunberg_mrr, nunberg_rule, output_distribution, reciprocal_rank, relation_pairs, surface_edit_probs)
from spacy_punctgen.inference.dp import ABSORB_LEFT, ABSORB_RIGHT, KEEP, TRANSPOSE
from spacy_punctgen.model.analysis import analyze
from spacy_punctgen.model.channel import channel_distribution
from spacy_punctgen.features.templates import is_unmatched
from spacy_punctgen.testing.toy import LQ, RQ, toy_model, toy_sentences

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "en_fixture-ud-train.conllu"
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


def hand_channel(model, edits):
    """Set ψ so that the channel applies ``edits[(a, b)] = (edit, p)`` in *reading* order with
    probability ``p`` (the other three edits share ``1 - p``); every other bigram keeps with
    probability 0.9 or so.  Returns the model."""
    sid = model.inventory.symbol_id
    psi = np.zeros_like(model.psi)
    psi[:, :, KEEP] = np.log(27.0)  # keep 0.9, the others 1/30 each
    for (a, b), (edit, p) in edits.items():
        row = np.full(4, np.log((1 - p) / 3))
        row[edit] = np.log(p)
        psi[sid(a), sid(b)] = row
    model.psi = psi.astype(np.float32)
    return model


def rows_by_bigram(rows):
    return {(r.a, r.b): r for r in rows}


# ---------------------------------------------------------------------------- Nunberg's rules

@pytest.mark.parametrize("a,b,want", [
    (RQ, ",", ("quote transposition", "ba")),
    (RQ, ".", ("quote transposition", "ba")),
    (",", ")", ("bracket absorption", "b")),
    ("(", ",", ("bracket absorption", "a")),
    (",", RQ, ("bracket absorption", "b")),
    (")", ",", None),  # a bracket never absorbs what is outside it
    (",", "(", None),
    (",", LQ, None),
    (",", ",", ("point absorption", "a")),
    (".", ",", ("point absorption", "a")),
    (",", ".", ("point absorption", "b")),
    (";", ".", ("point absorption", "b")),
    (".", "?", ("period absorption", "b")),
    ("!", ".", ("period absorption", "a")),
    ("ABBR.", ".", ("abbreviation absorption", "a")),
    ("ABBR.", "?", None),
    ("?", RQ, None),  # equally strong: both stay
    (LQ, RQ, None),
    ("*", ",", None),  # not one of his types
])
def test_nunberg_classification_of_hand_made_edits(a, b, want):
    assert nunberg_rule(a, b) == want


# ------------------------------------------------------------------- the channel in surface order

@pytest.mark.parametrize("direction", ["l2r", "r2l"])
def test_surface_edits_agree_with_running_the_channel(direction):
    m = toy_model(direction)
    table = surface_edit_probs(m.phi(), m.r2l)
    sym = m.inventory.symbols
    for a in range(2, len(sym)):
        for b in range(2, len(sym)):
            if a == b:
                continue
            got = channel_distribution((a, b), m.phi(), m.r2l)
            want = dict(zip([(a, b), (a,), (b,), (b, a)], table[a, b]))
            assert set(got) == set(want)
            for x, p in got.items():
                assert p == pytest.approx(want[x], abs=1e-12), (sym[a], sym[b], x)


@pytest.mark.parametrize("direction", ["l2r", "r2l"])
def test_known_channel_gives_known_rows(direction):
    # R2L reads the bigram "” ." as (., ”): absorb-right then deletes ”, transpose writes ”
    # first; in surface order both directions must say "” . -> . ”" with p = 0.8
    m = toy_model(direction)
    reading = (".", RQ) if direction == "r2l" else (RQ, ".")
    hand_channel(m, {reading: (TRANSPOSE, 0.8), (",", ","): (ABSORB_LEFT, 0.6)})
    rows = rows_by_bigram(bigram_rows(m, {(RQ, "."): 40, (",", ","): 30, (".", LQ): 3}))
    r = rows[(RQ, ".")]
    assert r.best == "ba" and r.best_p == pytest.approx(0.8)
    assert r.probs["a"] == pytest.approx(0.2 / 3) and r.verdict == "nunberg"
    # a = b: both absorptions write ",": 0.6 + 0.4 / 3
    c = rows[(",", ",")]
    assert c.dist == pytest.approx({"ab": 0.4 / 3 + 0.4 / 3, "a": 0.6 + 0.4 / 3})
    assert c.best == "a" and c.verdict == "nunberg"
    assert rows[(".", LQ)].best == "ab" and rows[(".", LQ)].best_p == pytest.approx(0.9)


def test_confident_edit_table():
    m = toy_model("r2l")
    hand_channel(m, {(".", RQ): (TRANSPOSE, 0.8),  # ” . -> . ”: confident, Nunberg's
                     (",", ","): (ABSORB_LEFT, 0.5),  # , , -> , with 0.5 + 1/6: not above 0.75
                     (",", "("): (ABSORB_LEFT, 0.9),  # ( , -> (: confident but seen too rarely
                     (":", ","): (ABSORB_RIGHT, 0.95)})  # , : -> , (deletes the colon): not his
    counts = {(RQ, "."): 40, (",", ","): 30, ("(", ","): 5, (",", ":"): 26, (",", LQ): 100}
    conf = confident_edits(bigram_rows(m, counts), threshold=0.75, min_count=25)
    got = {(e["a"], e["b"]): (e["best"], e["verdict"]) for e in conf["edits"]}
    assert got == {(RQ, "."): ("ba", "nunberg"), (",", ":"): ("a", "not nunberg"),
                   (",", LQ): ("ab", "keep, no rule")}
    assert (conf["n_bigrams"], conf["n_confident"], conf["n_nunberg"]) == (4, 3, 1)
    assert (conf["n_keep_no_rule"], conf["n_not_nunberg"], conf["n_outside"]) == (1, 1, 0)
    assert (conf["n_changes"], conf["n_changes_nunberg"]) == (2, 1)
    assert [(e["a"], e["b"]) for e in conf["unconfident"]] == [(",", ",")]
    # the most frequent first
    assert [(e["a"], e["b"]) for e in conf["edits"]][0] == (",", LQ)


def test_bigrams_outside_nunbergs_types_get_no_verdict_of_his():
    m = toy_model("r2l")
    hand_channel(m, {(",", "^"): (ABSORB_RIGHT, 0.9)})  # R2L: ^ absorbs the initial comma
    (row,) = bigram_rows(m, {("^", ","): 30})
    # the mask around ^ forbids two of the four edits: 0.9 / (0.9 + 0.1 / 3)
    assert row.best == "a" and row.best_p == pytest.approx(0.9 / (0.9 + 0.1 / 3))
    assert row.rule is None and row.verdict == "outside his types"
    conf = confident_edits([row], min_count=25)
    assert (conf["n_confident"], conf["n_outside"], conf["n_changes_outside"]) == (1, 1, 1)


def test_reciprocal_rank_and_mrr_on_a_hand_made_example():
    def row(a, b, dist, rule_edit):
        best = max(dist, key=dist.get)
        return BigramRow(a, b, 1, dist, dist, best, dist[best], "r" if rule_edit else None, rule_edit)

    rows = [
        row(RQ, ",", {"ab": 0.1, "a": 0.05, "b": 0.05, "ba": 0.8}, "ba"),  # rank 1, confident
        row(",", ")", {"ab": 0.6, "a": 0.1, "b": 0.2, "ba": 0.1}, "b"),  # rank 2, confident
        row("(", ",", {"ab": 0.3, "a": 0.1, "b": 0.35, "ba": 0.25}, "a"),  # rank 4, not confident
        row(",", "(", {"ab": 0.9, "a": 0.0, "b": 0.1, "ba": 0.0}, None),  # no rule: not counted
    ]
    got = nunberg_mrr(rows, confident=0.5)
    assert got["n_rules"] == 3
    assert got["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4) / 3)
    assert got["n_rules_confident"] == 2 and got["mrr_confident"] == pytest.approx((1 + 1 / 2) / 2)
    assert got["rank_counts"] == {"1": 1, "2": 1, "4": 1}
    # ties rank optimistically; for a = b the absorptions are one output
    assert reciprocal_rank({"ab": 0.4, "a": 0.4, "b": 0.1, "ba": 0.1}, "a") == 1.0
    assert reciprocal_rank(output_distribution([0.2, 0.3, 0.3, 0.2], True), "b") == 1.0  # , , -> , 0.6
    assert reciprocal_rank(output_distribution([0.3, 0.2, 0.2, 0.3], True), "b") == 0.5


# ----------------------------------------------------------------------- symmetric punctemes

def test_symmetric_pairs():
    assert is_symmetric((",",), (",",)) and is_symmetric(("(",), (")",)) and is_symmetric((LQ,), (RQ,))
    assert is_symmetric((",", LQ), (RQ, ","))
    assert not is_symmetric((LQ,), (LQ,)) and not is_symmetric((":", LQ), (RQ,))
    assert not is_symmetric((")",), ("(",)) and not is_symmetric((RQ,), (LQ,))  # bracket nothing
    assert not is_symmetric((), ()) and not is_symmetric((",",), ())


def test_symmetric_share_of_a_relation():
    m = toy_model("r2l")
    ex = m.extractor
    table = ex.rel_tables[ex.relation_id("appos")]
    pm = m.inventory.punctemes
    pairs = [(pm[int(l)], pm[int(r)]) for l, r in table.pairs]
    k_sym = pairs.index((("(",), (")",)))
    k_half = pairs.index(((), (")",)))
    tb = TreebankPass()
    prior = np.zeros(table.size)
    prior[k_sym], prior[k_half] = 1.5, 0.5  # two nodes: 3/4 of their mass on "( )"
    tb.prior["appos"], tb.nodes["appos"] = prior, 2
    tb.best_pairs["appos"] = {(("(",), (")",)): 1, ((), (")",)): 1}
    (row,) = relation_pairs(m, tb, top=2, min_nodes=1)
    assert row["relation"] == "appos" and row["n_nodes"] == 2
    assert row["symmetric"] == pytest.approx(0.75) and row["bracket_mirror"] == pytest.approx(0.75)
    assert row["best_symmetric"] == pytest.approx(0.5)
    assert row["entropy"] == pytest.approx(-(0.75 * np.log(0.75) + 0.25 * np.log(0.25)))
    assert [(t["l"], t["r"], t["symmetric"]) for t in row["top"]] == [("(", ")", True), ("", ")", False)]


def test_report_on_the_toy_model():
    m = toy_model("r2l")
    rep = learned_report(m, toy_sentences(), min_count=1, min_nodes=1)
    # "He said “ hi ” ." and "Note : it rains , “ really ” .": the 1-best trees' bigrams
    seen = {(b["a"], b["b"]): b["count"] for b in rep["channel"]["bigrams"]}
    assert seen and all(c > 0 for c in seen.values())
    assert rep["n_sentences"] == 5
    assert sum(r["n_nodes"] for r in rep["symmetric"][0]["relations"]) == sum(len(s.words) for s in toy_sentences())
    for r in rep["symmetric"][0]["relations"]:
        assert sum(t["p"] for t in r["top"]) <= 1 + 1e-9
    overall = rep["symmetric"][0]["overall"]
    assert overall["n_nodes"] == sum(len(s.words) for s in toy_sentences())
    assert 0.0 <= overall["symmetric"] <= 1.0 and 0.0 <= overall["unmatched"] <= 1.0
    best = [pair for pairs, _ in analyze(m, toy_sentences(), logprob=False) for pair in pairs]
    assert overall["best_unmatched"] == pytest.approx(sum(is_unmatched(l, r) for l, r in best) / len(best))
    assert overall["best_symmetric"] == pytest.approx(sum(is_symmetric(l, r) for l, r in best) / len(best))
    text = markdown_tables(rep, "toy")
    assert "## The channel against Nunberg's rules" in text and "| appos |" in text


def test_heaviest_weights_are_the_relations_own_and_their_real_weights():
    m = toy_model("r2l")
    rep = learned_report(m, toy_sentences(), min_count=1, min_nodes=1, top_weights=50)
    assert rep["weights"]
    for rel, rows in rep["weights"].items():
        assert [r["impact"] for r in rows] == sorted((r["impact"] for r in rows), reverse=True)
        for r in rows:
            assert r["context"].split("|")[0] == rel  # never a shared "*" context
            assert feature_weight(m, r["context"], r["property"]) == pytest.approx(r["weight"])
            assert r["impact"] == pytest.approx(abs(r["weight"]) * r["n_nodes"])


def test_attach_model_is_refused():
    with pytest.raises(ValueError, match="E791"):
        learned_report(toy_model("attach"), toy_sentences())


# ------------------------------------------------------------------------------- the command

def _run(capsys, *args):
    code = cli.main(["learned", *map(str, args), "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out.strip().splitlines()[-1]), out.err


def test_command_writes_the_files(tmp_path, capsys):
    model = toy_model("r2l").to_disk(tmp_path / "model")
    xi = toy_model("r2l", seed=4)
    xi.xi = 1.0
    xi.to_disk(tmp_path / "model_xi")
    out = tmp_path / "results" / "toy" / "learned"
    flags = [] if HAS_MPL else ["--no-plots"]
    code, res, err = _run(capsys, model, "--train", FIXTURE, "-o", out, "--xi-model", tmp_path / "model_xi",
                          "--min-count", "1", *flags)
    assert code == 0, err
    data = json.loads((out / "learned.json").read_text(encoding="utf8"))
    assert [s["model"]["xi"] for s in data["symmetric"]] == [0.0, 1.0]
    assert data["n_sentences"] == res["n_sentences"] > 0
    assert "# What the model learned: toy" in (out / "learned.md").read_text(encoding="utf8")
    if not HAS_MPL:
        pytest.skip("matplotlib is not installed (the 'plots' extra): the PNGs were not drawn")
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert {"channel_keep.png", "channel_to_a.png", "channel_to_b.png", "channel_transpose.png"} <= set(pngs)
    for p in out.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_names_the_extra_when_matplotlib_is_missing(tmp_path, capsys, monkeypatch):
    model = toy_model("r2l").to_disk(tmp_path / "model")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    code, res, err = _run(capsys, model, "--train", FIXTURE, "-o", tmp_path / "out")
    assert code == 1 and "E790" in err and "spacy-punctgen[plots]" in err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_command_refuses_a_folder_that_is_not_a_model(tmp_path, capsys):
    code, res, err = _run(capsys, tmp_path, "--train", FIXTURE, "-o", tmp_path / "out", "--no-plots")
    assert code == 1 and "E793" in err
