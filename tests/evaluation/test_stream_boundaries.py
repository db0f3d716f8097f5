"""Sentence-boundary scores of evaluate-stream (spacy_punctgen/evaluation/stream.py) on hand-made
gold and predicted sequences, and in the command's results."""
import json
from pathlib import Path

import pytest

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.evaluation import stream as S

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def _sent(words, slots, sid="s"):
    n = len(words)
    return PunctSentence(words=words, upos=["X"] * n, xpos=["_"] * n, deprels=["dep"] * n, heads=[-1] * n,
                         slots=[tuple(s) for s in slots], sent_id=sid)


def test_gold_ends_of_conllu_streams_are_the_sentences_ends_not_their_marks():
    # the second sentence ends without a mark, the third has a "?" inside it
    a = _sent(["he", "left"], [[], [], ["."]])
    b = _sent(["see", "you"], [[], [], []])
    c = _sent(["why", "not", "ok"], [[], [], ["?"], ["!"]])
    (unit,) = S.sentence_streams([a, b, c], size=3)
    assert unit.ends == [1, 3, 6]
    assert S.gold_boundaries(unit) == [False, True, False, True, False, False, True]
    # the marks alone would miss "you" and take "not?" for an end
    assert S.mark_boundaries(unit.gold) == [False, True, False, False, False, True, True]


def test_gold_ends_of_ted_come_from_the_labels():
    unit = S.Stream(["so", "why", "now", "ok"], [",", "?", ".", ""])
    assert unit.ends is None
    assert S.gold_boundaries(unit) == [False, True, True, False]


@pytest.mark.parametrize("marks,end", [("", False), (",", False), (";", False), (":", False), ("-", False),
                                       (".", True), ("?", True), ("!", True), ("...", True), (".”", True),
                                       (", .", True), ("”", False)])
def test_sentence_final_marks(marks, end):
    assert S.mark_boundaries([marks]) == [end]


def test_start_boundaries_map_character_offsets_to_gaps():
    words = ["he", "left", "i", "came", "home"]
    # "he left i came home": word starts 0, 3, 8, 10, 15
    assert S.start_boundaries(words, [0, 8, 15]) == [False, True, False, True, False]
    # a start inside a word ("ca|me") and the stream's first word are no gap's
    assert S.start_boundaries(words, [0, 12]) == [False] * 5
    assert S.start_boundaries([], []) == []


def test_boundary_scores_by_hand_leave_out_each_units_last_gap():
    gold = [[False, True, False, True], [True, False, True]]
    pred = [[True, True, False, True], [True, True, False]]
    r = S.boundary_scores(gold, pred)
    # unit 1 (last gap out): gold {1}, pred {0, 1} -> tp 1, fp 1; unit 2: gold {0}, pred {0, 1} -> tp 1, fp 1
    assert r["counts"] == [[1, 1, 0], [1, 1, 0]]
    assert (r["tp"], r["fp"], r["fn"]) == (2, 2, 0)
    assert r["precision"] == pytest.approx(0.5) and r["recall"] == pytest.approx(1.0)
    assert r["f1"] == pytest.approx(2 / 3)
    assert r["n_positions"] == 5 and r["last_gap"] == "excluded"
    # no boundary predicted: zeros, not an error
    none = S.boundary_scores(gold, [[False] * 4, [False] * 3])
    assert (none["tp"], none["fn"], none["f1"]) == (0, 2, 0.0)
    with pytest.raises(ValueError, match="E767"):
        S.boundary_scores([[True, False]], [[True]])
    with pytest.raises(ValueError, match="E765"):
        S.boundary_scores([[True]], [])


def test_restored_boundaries_of_a_restorer():
    units = S.sentence_streams([_sent(["i", "came"], [[], [], ["."]]), _sent(["he", "left"], [[], [","], []])])
    restorer = S.TextRestorer(lambda text: text.replace("came", "came?").replace("he", "he.") + ".")
    predicted = [restorer(u.words) for u in units]
    r = S.boundary_scores([S.gold_boundaries(u) for u in units], [S.mark_boundaries(p) for p in predicted])
    # positions: came (gold end, "?"), he ("." where there is none), "i" (nothing); "left" is the last
    assert (r["tp"], r["fp"], r["fn"]) == (1, 1, 0)


def test_markdown_table_has_a_sentence_end_column_where_reports_have_one():
    units = S.sentence_streams([_sent(["a", "b"], [[], [","], ["."]])] * 4, size=2)
    gold = [S.gold_boundaries(u) for u in units]
    good = S.stream_report("good", units, [u.gold for u in units], "stream",
                           restored_boundaries=S.boundary_scores(gold, [S.mark_boundaries(u.gold) for u in units]))
    old = S.stream_report("crf_lexical", units, [S.trivial_gaps(len(u.words)) for u in units], "stream")
    table = S.markdown_table(S.compare_reports([good, old], key="mixed", n_permutations=100))
    head = table.splitlines()[0]
    assert "sentence ends P / R / F1" in head
    rows = {ln.split("|")[1].strip(): ln for ln in table.splitlines() if ln.startswith("| ")}
    assert rows["good"].rstrip().split("|")[-3].strip() == "100.0 / 100.0 / **100.0**"
    assert rows["crf_lexical"].rstrip().split("|")[-3].strip() == "–"
    assert "sentence ends" not in S.markdown_table(S.compare_reports([old], key="mixed", n_permutations=100))


def test_evaluate_stream_reports_boundaries_for_conllu(tmp_path):
    from spacy_punctgen.cli import main

    out = tmp_path / "trivial.json"
    assert main(["evaluate-stream", "trivial", str(SAMPLE / "en_sample-ud-test.conllu"), "--output", str(out)]) == 0
    r = json.loads(out.read_text())
    b = r["restored_boundaries"]
    # the trivial system's only period is each stream's last gap, which is not scored
    assert b["tp"] + b["fp"] == 0 and b["fn"] > 0 and len(b["counts"]) == r["n_units"]
    # every gold sentence end but each stream's last is a position to find
    n_sents = sum(1 for ln in (SAMPLE / "en_sample-ud-test.conllu").read_text(encoding="utf-8").splitlines()
                  if ln.startswith("# sent_id"))
    assert b["fn"] == n_sents - r["n_units"]
    assert "parser_boundaries" not in r


def test_evaluate_stream_reports_boundaries_for_ted(tmp_path):
    from spacy_punctgen.cli import main
    from spacy_punctgen.data.ted import read_ted, split_blocks

    words = ("so we went home then why not . " * 60).split()
    lines = []
    for w, nxt in zip(words, words[1:] + ["."]):
        if w == ".":
            continue
        label = {"not": "QUESTION", "home": "PERIOD", "then": "COMMA"}.get(w, "O")
        lines.append(f"{w}\t{label}")
    path = tmp_path / "t.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "trivial.json"
    assert main(["evaluate-stream", "trivial", str(path), "--unit-words", "20", "--output", str(out)]) == 0
    r = json.loads(out.read_text())
    _, (d0, d1) = split_blocks(read_ted(path), 0.8, str(path))
    marks = read_ted(path).marks[d0:d1]
    b = r["restored_boundaries"]
    # the dev block is one restored stream: one position fewer than its words, its ends all missed
    assert b["n_positions"] == d1 - d0 - 1 and len(b["counts"]) == 1
    assert b["fn"] == sum(m in (".", "?") for m in marks[:-1]) > 0 and b["tp"] + b["fp"] == 0


def test_shipped_records_the_parsers_boundaries_without_changing_the_restoration(tmp_path):
    """The probe's restoration is restore_text's, and evaluate-stream shipped scores both kinds
    of boundary."""
    import spacy_punctgen
    from spacy_punctgen.api.stream import restore_text
    from spacy_punctgen.cli import main
    from spacy_punctgen.cli.evaluate_stream import add_sentence_probe, restore_with_sentence_starts
    from spacy_punctgen.data.preprocess import preprocess_file

    units = S.sentence_streams(preprocess_file(SAMPLE / "en_sample-ud-test.conllu")[0], 10)[:2]
    nlp = spacy_punctgen.load("en", chunk_chars=200)  # small windows: several pieces per stream
    texts = [" ".join(u.words) for u in units] + ["  ", "he left\ni came home you know what i mean"]
    expected = [restore_text(nlp, t, chunk_chars=200) for t in texts]
    probe = add_sentence_probe(nlp)
    got = [restore_with_sentence_starts(nlp, probe, t, 200) for t in texts]
    assert [g[0] for g in got] == expected
    assert [restore_text(nlp, t, chunk_chars=200) for t in texts] == expected  # the probe changes nothing
    assert len(probe.windows) > 1  # several windows of the last stream
    for t, (_, starts) in zip(texts, got):
        assert starts == sorted(set(starts)) and all(s == 0 or t[s - 1].isspace() for s in starts)
    assert got[0][1][0] == 0 and len(got[0][1]) > 1
    out = tmp_path / "shipped.json"
    assert main(["evaluate-stream", "shipped", str(SAMPLE / "en_sample-ud-test.conllu"), "--limit", "2",
                 "--output", str(out)]) == 0
    r = json.loads(out.read_text())
    for key in ("restored_boundaries", "parser_boundaries"):
        b = r[key]
        assert len(b["counts"]) == 2 and b["tp"] + b["fn"] == sum(len(u.ends) - 1 for u in units)
