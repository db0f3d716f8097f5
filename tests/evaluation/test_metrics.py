"""Restoration metrics: edit distance, AED, comma P/R/F1, permutation test, prediction files."""
import itertools

import numpy as np
import pytest

from spacy_punctgen.evaluation.metrics import aed, edit_distance, mark_prf, paired_permutation_test, sentence_losses
from spacy_punctgen.evaluation.predictions import read_predictions, record, slots_of, write_predictions


def _brute_edit(a, b):
    # every alignment, enumerated recursively without memoisation: an independent check
    if not a or not b:
        return len(a) + len(b)
    return min(_brute_edit(a[1:], b[1:]) + (a[0] != b[0]),
               _brute_edit(a[1:], b) + 1, _brute_edit(a, b[1:]) + 1)


def test_edit_distance_matches_brute_force():
    toks = [",", ".", "“"]
    seqs = [s for n in range(4) for s in itertools.product(toks, repeat=n)]
    for a in seqs[::3]:
        for b in seqs[::2]:
            assert edit_distance(a, b) == _brute_edit(a, b), (a, b)


def test_aed_and_comma_prf():
    gold = [[(), (",",), (".",)], [(), ("“",), (",", "”")]]
    pred = [[(), (), (".",)], [(), ("“",), (",", ",")]]
    r = aed(gold, pred)
    assert r["edits"] == 2 and r["n_slots"] == 6 and r["aed"] == pytest.approx(2 / 6)
    c = mark_prf(gold, pred)
    assert (c["tp"], c["fp"], c["fn"]) == (1, 1, 1)
    assert c["f1"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="sentence 1"):
        aed(gold, [pred[0], pred[1][:2]])


def test_permutation_test():
    rng = np.random.default_rng(1)
    a = rng.poisson(1.0, 300).astype(float)
    assert paired_permutation_test(a, a + rng.integers(0, 2, 300), 2000) < 0.01
    assert paired_permutation_test(a, a) == 1.0
    # exchangeable noise: no significant difference
    # differences of ±1 that nearly cancel (sum 2 over 298 sentences): far from significant
    d = np.array([1.0] * 150 + [-1.0] * 148 + [0.0, 0.0])
    assert paired_permutation_test(a + d, a, 2000) > 0.5


def test_prediction_files_round_trip(tmp_path):
    recs = [record([(), (",",)], "s1", [0.9, 0.5], -1.5), record([("“",), ("”", ".")], None)]
    p = write_predictions(tmp_path / "p.jsonl", recs)
    back = read_predictions(p)
    assert slots_of(back) == [[(), (",",)], [("“",), ("”", ".")]]
    assert back[0]["slot_probs"] == [0.9, 0.5] and back[0]["logprob"] == -1.5
    (tmp_path / "bad.jsonl").write_text('{"slots": []}\nnot json\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        read_predictions(tmp_path / "bad.jsonl")
    assert sentence_losses([[(",",)]], [[()]]).tolist() == [1.0]
