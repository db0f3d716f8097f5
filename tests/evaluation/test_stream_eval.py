"""The stream scorer (spacy_punctgen/evaluation/stream.py) on hand-made streams with known scores."""
import json
from pathlib import Path

import numpy as np
import pytest

from spacy_punctgen.data.preprocess import ABBR, PunctSentence
from spacy_punctgen.evaluation import stream as S


def _sent(words, slots, sid="s"):
    n = len(words)
    return PunctSentence(words=words, upos=["X"] * n, xpos=["_"] * n, deprels=["dep"] * n, heads=[-1] * n,
                         slots=[tuple(s) for s in slots], sent_id=sid)


@pytest.mark.parametrize("marks,stream,ted", [
    ("", None, None), (",", "M", "COMMA"), (";", "M", "PERIOD"), (":", "M", "COMMA"), (".", "F", "PERIOD"),
    ("?", "F", "QUESTION"), ("!", "F", "PERIOD"), ("?!", "F", "QUESTION"), (", .", "F", "PERIOD"),
    ("...", "F", "PERIOD"), ("”", None, None), ("( “", None, None), ("-", None, "COMMA"), ("., ?", "F", "QUESTION"),
])
def test_gap_classes(marks, stream, ted):
    assert S.stream_class(marks) == stream
    assert S.ted_class(marks) == ted


def test_scores_by_hand():
    # gold:  M  .  F  .  M  F          pred: M  M  .  .  F  F
    gold = [["M", None, "F", None, "M", "F"]]
    pred = [["M", "M", None, None, "F", "F"]]
    s = S.score_labels(gold, pred, S.STREAM_CLASSES)
    assert (s["M"]["tp"], s["M"]["fp"], s["M"]["fn"]) == (1, 1, 1)
    assert s["M"]["f1"] == pytest.approx(0.5)
    assert (s["F"]["tp"], s["F"]["fp"], s["F"]["fn"]) == (1, 1, 1)
    # overall = micro over M and F: tp 2, fp 2, fn 2
    assert s["overall"]["precision"] == pytest.approx(0.5) and s["overall"]["recall"] == pytest.approx(0.5)
    # mixed: a gap is right when both hold some class: gold {0,2,4,5}, pred {0,1,4,5}
    assert (s["mixed"]["tp"], s["mixed"]["fp"], s["mixed"]["fn"]) == (3, 1, 1)
    assert s["mixed"]["f1"] == pytest.approx(0.75)


def test_empty_predictions_score_zero_not_error():
    s = S.score_labels([["M", "F"]], [[None, None]], S.STREAM_CLASSES)
    assert s["F"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "tp": 0, "fp": 0, "fn": 1}
    assert s["mixed"]["recall"] == 0.0


def test_nothing_to_score_is_an_error():
    with pytest.raises(ValueError, match="E766"):
        S.score_labels([[]], [[]], S.STREAM_CLASSES)
    with pytest.raises(ValueError, match="E765"):
        S.score_labels([["M"]], [], S.STREAM_CLASSES)


def test_sentence_streams_join_boundaries_and_lowercase():
    a = _sent(["He", "left"], [["“"], [], ["."]], "a")
    b = _sent(["Mr", "Smith", "came", "etc"], [["“"], [ABBR], [","], [], [ABBR, "”"]], "b")
    c = _sent(["Yes"], [[], ["!"]], "c")
    streams = S.sentence_streams([a, b, c], size=2)
    assert [len(s.words) for s in streams] == [6, 1]
    s0 = streams[0]
    assert s0.words == ["he", "left", "mr", "smith", "came", "etc"]
    # the end of sentence a holds its "." and b's opening quote; a mid-sentence ABBR. is nothing,
    # a sentence-final one is the full stop
    assert s0.gold == ["", ". “", "", ",", "", ". ”"]
    assert [S.stream_class(m) for m in s0.gold] == [None, "F", None, "M", None, "F"]
    assert streams[1].gold == ["!"]
    with pytest.raises(ValueError, match="E761"):
        S.sentence_streams([a], size=0)


def test_trivial_marks_only_the_stream_end():
    units = S.sentence_streams([_sent(["a", "b"], [[], [","], ["."]]), _sent(["c"], [[], [";"]])], size=2)
    r = S.evaluate_predictions(units, [S.trivial_gaps(3)], "stream")
    s = r["scores"]
    # gold: a, b. c;  -> M, F, M ; trivial puts F at the end, where the gold is M
    assert s["F"]["tp"] == 0 and s["F"]["fp"] == 1 and s["F"]["fn"] == 1
    assert s["mixed"]["tp"] == 1 and s["mixed"]["fn"] == 2
    assert S.trivial_gaps(0) == []


def test_align_gaps_marks_at_end_and_spacing():
    words = ["what", "if", "google", "left"]
    # a character that differs from the input ("W") is resynchronised past and counted as missing
    gaps, missing = S.align_gaps(words, "What if, google ... left?!")
    assert gaps == ["", ",", "...", "?!"] and missing == 1
    # an opening mark before the first word is not scored; the marks at the stream's end are
    gaps, missing = S.align_gaps(words, "“what if, google... left?” ")
    assert gaps == ["", ",", "...", "?”"] and missing == 0


def test_align_gaps_dropped_apostrophe_and_word():
    gaps, missing = S.align_gaps(["we", "'ve", "seen", "it"], "we ve seen, it.")
    assert gaps == ["", "", ",", "."] and missing == 1
    # a word dropped from the output, with a mark after the next one
    words = ["the", "cat", "sat", "on", "the", "mat", "today"]
    gaps, missing = S.align_gaps(words, "the cat on the mat, today.")
    assert missing == 3
    assert gaps[5] == "," and gaps[6] == "."


def test_align_gaps_no_output():
    gaps, missing = S.align_gaps(["a", "b"], "")
    assert gaps == ["", ""] and missing == 2


def test_text_restorer_end_to_end():
    units = S.sentence_streams([_sent(["I", "came"], [[], [], ["."]]), _sent(["he", "left"], [[], [","], ["."]])])
    restorer = S.TextRestorer(lambda text: text.replace("came", "came.").replace("he", "he,") + ".")
    r = S.evaluate_predictions(units, [restorer(u.words) for u in units], "stream")
    assert r["scores"]["F"]["f1"] == pytest.approx(1.0) and r["scores"]["M"]["f1"] == pytest.approx(1.0)


def test_windows_cover_every_word_once():
    for n in (5, 10, 11, 57, 400, 401):
        kept = []
        for s, e, ks, ke in S.windows(n, 10):
            assert s <= ks <= ke <= e <= n
            kept.extend(range(ks, ke))
        assert kept == list(range(n))


def test_tagger_gaps_uses_windows():
    calls = []

    def predict(sents):
        calls.append([len(s.words) for s in sents])
        return [[()] + [(".",)] * len(s.words) for s in sents]

    assert S.tagger_gaps(predict, ["w"] * 25, window=10) == ["."] * 25
    assert max(calls[0]) == 10
    assert S.tagger_gaps(predict, ["w"] * 3) == ["."] * 3


def test_class_sentences_hold_class_marks():
    units = [S.Stream(["a", "b", "c"], [";", "", "?!"])]
    sents = S.class_sentences(units, "stream")
    assert sents[0].slots == [(), (",",), (), (".",)]
    ted = S.class_sentences(units, "ted")
    assert ted[0].slots == [(), (".",), (), ("?",)]


def test_randomization_test_detects_a_real_difference():
    rng = np.random.default_rng(1)
    n = 60
    good = np.stack([rng.integers(8, 10, n), rng.integers(0, 2, n), rng.integers(0, 2, n)], axis=1)
    bad = np.stack([rng.integers(2, 4, n), rng.integers(5, 7, n), rng.integers(5, 7, n)], axis=1)
    assert S.paired_randomization_test(good, bad, 2000) < 0.01
    assert S.paired_randomization_test(good, good, 2000) == 1.0
    # a small difference on few units is not significant
    assert S.paired_randomization_test(good[:3], good[[1, 0, 2]], 2000) > 0.05
    with pytest.raises(ValueError, match="E542"):
        S.paired_randomization_test(good, bad[:5])


def test_compare_reports_and_table(tmp_path):
    units = S.sentence_streams([_sent(["a", "b"], [[], [","], ["."]])] * 6, size=1)
    good = S.stream_report("good", units, [u.gold for u in units], "stream")
    ref = S.stream_report("crf_lexical", units, [S.trivial_gaps(len(u.words)) for u in units], "stream")
    cmp = S.compare_reports([good, ref], key="mixed", n_permutations=500)
    assert cmp["best"] == "good"
    assert cmp["systems"]["good"]["scores"]["mixed"]["f1"] == pytest.approx(1.0)
    assert 0 < cmp["tests"]["good"]["p_mixed_f1"] <= 0.05
    assert "crf_lexical" not in cmp["tests"]
    table = S.markdown_table(cmp, "t")
    assert "| good |" in table and "**100.0**" in table
    json.dumps(cmp)
    with pytest.raises(ValueError, match="E772"):
        S.compare_reports([{"system": "x"}])


def test_evaluate_predictions_checks_lengths():
    units = [S.Stream(["a", "b"], ["", "."])]
    with pytest.raises(ValueError, match="E767"):
        S.evaluate_predictions(units, [["."]], "stream")
    with pytest.raises(ValueError, match="E764"):
        S.evaluate_predictions(units, [["", "."]], "nope")
    with pytest.raises(ValueError, match="E760"):
        S.Stream(["a"], [])


SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def test_commands_on_the_sample(tmp_path):
    """evaluate-stream (trivial, crf_lexical) on the sample's streams, then stream-table into a doc."""
    from spacy_punctgen.cli import main

    out = {}
    for system in ("trivial", "crf_lexical"):
        out[system] = tmp_path / f"{system}.json"
        assert main(["evaluate-stream", system, str(SAMPLE / "en_sample-ud-test.conllu"), "--train",
                     str(SAMPLE / "en_sample-ud-train.conllu"), "--max-iterations", "20",
                     "--output", str(out[system])]) == 0
    trivial = json.loads(out["trivial"].read_text())
    assert trivial["n_units"] == len(trivial["counts"]) == len(trivial["errors"])
    # the trivial system's only marks are its streams' last gaps
    assert trivial["scores"]["F"]["tp"] + trivial["scores"]["F"]["fp"] == trivial["n_units"]
    doc = tmp_path / "doc.md"
    doc.write_text("# x\n<!-- stream-table:t start -->\nold\n<!-- stream-table:t end -->\ntail\n")
    assert main(["stream-table", str(out["trivial"]), str(out["crf_lexical"]), "--output",
                 str(tmp_path / "cmp.json"), "--table", str(tmp_path / "t.md"), "--doc", str(doc),
                 "--permutations", "200"]) == 0
    text = doc.read_text()
    assert "old" not in text and "| trivial |" in text and text.endswith("tail\n")
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert set(cmp["tests"]) == {"trivial"} and cmp["key"] == "mixed"
    # a doc without the markers is refused
    doc.write_text("nothing\n")
    assert main(["stream-table", str(out["trivial"]), "--output", str(tmp_path / "c2.json"),
                 "--table", str(tmp_path / "t.md"), "--doc", str(doc)]) == 1


def test_shipped_system_with_another_parser_folder(tmp_path):
    """evaluate-stream shipped --parser DIR loads that parser (a candidate before it ships)
    and records it; the same folder as the shipped one gives the shipped figures."""
    from spacy_punctgen.cli import main
    from spacy_punctgen.api.load import shipped_parser_path

    test = str(SAMPLE / "en_sample-ud-test.conllu")
    out = {}
    for name, extra in (("default", []), ("given", ["--parser", str(shipped_parser_path("en"))])):
        out[name] = tmp_path / f"{name}.json"
        assert main(["evaluate-stream", "shipped", test, "--limit", "2", "--output", str(out[name])] + extra) == 0
    default, given = (json.loads(out[n].read_text()) for n in ("default", "given"))
    assert default["parser"] == "shipped" and given["parser"] == str(shipped_parser_path("en"))
    assert default["kbest"] == given["kbest"] == 1  # load()'s default unless --kbest says otherwise
    assert given["scores"] == default["scores"]
    assert main(["evaluate-stream", "shipped", test, "--limit", "1", "--output", str(tmp_path / "x.json"),
                 "--parser", str(tmp_path / "no-such-parser")]) == 1


def test_shipped_system_with_trees_drawn_from_the_parser(tmp_path):
    """evaluate-stream shipped --kbest K --kbest-search sample records how the trees were made
    and restores the same text; the draws are seeded, so a second run gives the same scores."""
    from spacy_punctgen.cli import main

    test = str(SAMPLE / "en_sample-ud-test.conllu")
    runs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.json"
        assert main(["evaluate-stream", "shipped", test, "--limit", "2", "--kbest", "4", "--kbest-search", "sample",
                     "--kbest-temperature", "1.5", "--kbest-weights", "beam", "--output", str(out)]) == 0
        runs.append(json.loads(out.read_text()))
    assert runs[0]["kbest"] == 4 and runs[0]["kbest_search"] == "sample" and runs[0]["kbest_temperature"] == 1.5
    assert runs[0]["kbest_weights"] == "beam" and runs[0]["scores"] == runs[1]["scores"]
    assert main(["evaluate-stream", "shipped", test, "--limit", "1", "--kbest", "2", "--kbest-search", "gibbs",
                 "--output", str(tmp_path / "x.json")]) != 0


def _ted_file(path, n_sentences, seed):
    import random as _random

    rng = _random.Random(seed)
    vocab = ["we", "went", "home", "and", "then", "she", "said", "it", "was", "fine", "why", "not"]
    lines = []
    for _ in range(n_sentences):
        words = [rng.choice(vocab) for _ in range(rng.randint(3, 9))]
        for i, w in enumerate(words):
            label = ("QUESTION" if w == "why" else "PERIOD") if i == len(words) - 1 else \
                ("COMMA" if w == "then" else "O")
            lines.append(f"{w}\t{label}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ted_whole_file_scores_every_word_and_trains_the_crf_on_train(tmp_path):
    """--whole-file: an independent TED test file is scored whole; crf_lexical trains on the first
    --train-share of the --train file (E884 without one)."""
    from spacy_punctgen.cli import main
    from spacy_punctgen.data.ted import read_ted, split_blocks

    test = _ted_file(tmp_path / "test.tsv", 40, 1)
    train = _ted_file(tmp_path / "train.tsv", 200, 2)
    n = len(read_ted(test))
    out = tmp_path / "trivial.json"
    assert main(["evaluate-stream", "trivial", str(test), "--whole-file", "--unit-words", "50",
                 "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["dev_block"] == [0, n] and report["n_words"] == n and report["whole_file"] is True
    assert main(["evaluate-stream", "crf_lexical", str(test), "--whole-file", "--output",
                 str(tmp_path / "x.json")]) == 1
    out = tmp_path / "crf.json"
    assert main(["evaluate-stream", "crf_lexical", str(test), "--whole-file", "--train", str(train),
                 "--max-iterations", "20", "--window", "50", "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    (t0, t1), _ = split_blocks(read_ted(train), 0.8, str(train))
    assert report["train_block"] == [t0, t1] and report["train_file"] == str(train)
    assert report["n_words"] == n and report["train_words"] == t1 - t0
    # without --whole-file the same test file is cut as before: its last 20 % scored
    out = tmp_path / "cut.json"
    assert main(["evaluate-stream", "trivial", str(test), "--output", str(out)]) == 0
    assert json.loads(out.read_text())["dev_block"] == list(split_blocks(read_ted(test), 0.8, str(test))[1])
