"""How far Nunberg's English rules reach on a treebank (coverage, rule by rule, the language
note) and the cross-treebank summary of ``learned`` reports (spacy_punctgen/evaluation/learned.py)."""
import json

import pytest

from spacy_punctgen.cli import to_json
from spacy_punctgen.evaluation.learned import (
    BOS, PAPER_EN, PAPER_EN_SYMMETRIC, RULES, BigramRow, learned_report, learned_summary, markdown_tables,
    nunberg_coverage, rule_agreement, summary_markdown, summary_row)
from spacy_punctgen.testing.toy import RQ, toy_model, toy_sentences


def row(a, b, count, best, best_p, rule=None, rule_edit=None):
    dist = {best: best_p}
    return BigramRow(a, b, count, {}, dist, best, best_p, rule, rule_edit)


def test_coverage_counts_occurrences_of_his_types_and_names_the_other_marks():
    rows = [row(",", ",", 10, "a", 0.9, "point absorption", "a"),
            row("\u060c", ".", 30, "ab", 0.9),  # Arabic comma: not his type
            row("\u00bf", "\u060c", 5, "ab", 0.9),
            row(BOS, "\u00bf", 100, "ab", 0.9)]  # ^ bigrams are left out
    cov = nunberg_coverage(rows)
    assert (cov["n_occurrences"], cov["n_in_types"]) == (45, 10)
    assert cov["share_in_types"] == pytest.approx(10 / 45)
    assert cov["outside_symbols"] == [{"symbol": "\u060c", "count": 35}, {"symbol": "\u00bf", "count": 5}]
    assert nunberg_coverage([row(BOS, ",", 3, "ab", 1.0)])["n_occurrences"] == 0


def test_rule_agreement_counts_each_rule_on_the_frequent_bigrams():
    rows = [row(",", ",", 40, "a", 0.95, "point absorption", "a"),  # follows, confidently
            row(",", ".", 30, "b", 0.6, "point absorption", "b"),  # follows, not confidently
            row(".", ",", 26, "ab", 0.9, "point absorption", "a"),  # confidently otherwise
            row(";", ",", 3, "a", 0.99, "point absorption", "a"),  # too rare
            row(RQ, ".", 50, "ab", 0.8, "quote transposition", "ba")]  # confidently otherwise
    got = {r["rule"]: r for r in rule_agreement(rows, threshold=0.75, min_count=25)}
    assert list(got) == [name for name, _ in RULES]
    pa = got["point absorption"]
    assert (pa["n_bigrams"], pa["n_follows"], pa["n_follows_confident"], pa["n_contradicts_confident"]) == (3, 2, 1, 1)
    assert pa["bigrams"] == [", ,", ", .", ". ,"]
    qt = got["quote transposition"]
    assert (qt["n_bigrams"], qt["n_follows"], qt["n_contradicts_confident"]) == (1, 0, 1)
    assert got["abbreviation absorption"]["n_bigrams"] == 0


@pytest.fixture(scope="module")
def toy_reports():
    """Two reports as the command writes them (strict JSON read back): French with a ξ > 0
    model, English without."""
    xi = toy_model("r2l", seed=4)
    xi.xi = 1.0
    fr = learned_report(toy_model("r2l"), toy_sentences(), xi, min_count=1, min_nodes=1, lang="fr")
    en = learned_report(toy_model("l2r"), toy_sentences(), min_count=1, min_nodes=1, lang="en")
    return {name: json.loads(to_json(rep)) for name, rep in (("fr_toy", fr), ("en_toy", en))}


def test_report_records_the_language_and_the_tables_say_whose_rules_they_are(toy_reports):
    fr, en = toy_reports["fr_toy"], toy_reports["en_toy"]
    assert (fr["lang"], fr["nunberg_language"], en["lang"], en["nunberg_language"]) == ("fr", False, "en", True)
    assert [r["rule"] for r in fr["channel"]["rules"]] == [name for name, _ in RULES]
    fr_md, en_md = markdown_tables(fr, "fr_toy"), markdown_tables(en, "en_toy")
    assert "Nunberg's rules describe English ('fr' here)" in fr_md
    assert "describe English" not in en_md and "are made of his types" in en_md
    assert "| point absorption |" in fr_md
    unknown = dict(en, lang=None)
    assert "describe English" not in markdown_tables(unknown)


def test_summary_rows_come_from_the_reports(toy_reports):
    summary = learned_summary(toy_reports, top=2)
    rows = {r["treebank"]: r for r in summary["treebanks"]}
    assert list(rows) == ["fr_toy", "en_toy"]  # the given order
    fr, rep = rows["fr_toy"], toy_reports["fr_toy"]
    conf, mrr = rep["channel"]["confident"], rep["channel"]["mrr"]
    assert (fr["n_confident"], fr["n_nunberg"], fr["n_changes"]) == (conf["n_confident"], conf["n_nunberg"],
                                                                     conf["n_changes"])
    assert fr["mrr"] == pytest.approx(mrr["mrr"]) and fr["n_rules"] == mrr["n_rules"]
    assert fr["xi0"]["xi"] == 0.0 and fr["xi_pos"]["xi"] == 1.0
    assert [t["relation"] for t in fr["xi0"]["top"]] == [r["relation"] for r in rep["symmetric"][0]["relations"][:2]]
    assert [t["relation"] for t in fr["xi_pos"]["top"]] == [r["relation"] for r in rep["symmetric"][1]["relations"][:2]]
    assert fr["xi_pos"]["unmatched"] == pytest.approx(rep["symmetric"][1]["overall"]["unmatched"])
    assert rows["en_toy"]["xi_pos"] is None
    assert fr["share_in_types"] == pytest.approx(rep["channel"]["coverage"]["share_in_types"])
    assert summary["paper_en"]["symmetric"] == list(PAPER_EN_SYMMETRIC)


def test_summary_markdown_has_a_line_per_treebank_and_the_papers(toy_reports):
    text = summary_markdown(learned_summary(toy_reports))
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert lines[0].startswith("| treebank |")
    assert [line.split(" | ")[0] for line in lines[1:]] == ["| fr_toy", "| en_toy", "| paper (English, UD 1.4)"]
    paper = lines[-1]
    assert f"{PAPER_EN['mrr']} ({PAPER_EN['n_rules']})" in paper and f"| {PAPER_EN['n_nunberg']} |" in paper
    en = lines[2]
    assert en.endswith("→ – |")  # no ξ > 0 model
    assert "(ξ = 1)" in lines[1]


def test_summary_reads_nan_written_as_null_and_old_reports(toy_reports):
    rep = json.loads(json.dumps(toy_reports["en_toy"]))
    rep["channel"]["mrr"]["mrr_confident"] = None  # NaN in strict JSON
    del rep["channel"]["coverage"], rep["channel"]["rules"], rep["lang"]  # a report from before them
    r = summary_row("old", rep)
    assert r["mrr_confident"] is None and r["share_in_types"] is None and r["rules_followed"] is None
    text = summary_markdown(learned_summary({"old": rep}))
    assert "| old | – |" in text and "the rule-by-rule table" in text


@pytest.mark.parametrize("path", [("channel",), ("channel", "mrr"), ("symmetric",), ("model",)])
def test_a_report_without_a_needed_part_is_refused_by_name(toy_reports, path):
    rep = json.loads(json.dumps(toy_reports["fr_toy"]))
    parent = rep
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    with pytest.raises(ValueError, match=r"E794.*results/x/learned/learned\.json.*" + r"\.".join(path)):
        summary_row("x", rep, "results/x/learned/learned.json")


def test_a_report_with_no_model_is_refused(toy_reports):
    rep = dict(toy_reports["fr_toy"], symmetric=[])
    with pytest.raises(ValueError, match="E794.*no model"):
        summary_row("x", rep)
