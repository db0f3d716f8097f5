"""k-best trees from one parser's beam (pipeline/kbest.py) and their CoNLL-U files
(scripts/parse_conllu.py --kbest), with the shipped English parser."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen.parsing.kbest import kbest_trees
from spacy_punctgen.api.load import shipped_parser_path

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["when i came home he left i was sad", "the cat sat on the mat", "yes",
         "we went to the shop and bought some bread because we were hungry"]


@pytest.fixture(scope="module")
def parser_nlp():
    return spacy.load(shipped_parser_path("en"))


def _docs(nlp):
    docs = []
    for text in TEXTS:
        doc = Doc(nlp.vocab, words=text.split())
        for i, tok in enumerate(doc):
            tok.is_sent_start = i == 0
        docs.append(doc)
    return docs


def _is_tree(heads):
    n = len(heads)
    if sum(h == i for i, h in enumerate(heads)) != 1:
        return False
    for i in range(n):  # every word reaches the root without a cycle
        seen, j = set(), i
        while heads[j] != j:
            if j in seen:
                return False
            seen.add(j)
            j = heads[j]
    return True


def test_one_best_is_the_greedy_parse(parser_nlp):
    greedy = list(parser_nlp.pipe(_docs(parser_nlp)))
    trees = kbest_trees(parser_nlp, _docs(parser_nlp), 1)
    assert [[(t.heads, t.deps, t.prob) for t in ts] for ts in trees] == \
        [[(tuple(t.head.i for t in d), tuple(t.dep_ for t in d), 1.0)] for d in greedy]


def test_k_best_are_distinct_single_rooted_trees_ranked_by_probability(parser_nlp):
    for k in (2, 4, 8):
        for doc, ts in zip(_docs(parser_nlp), kbest_trees(parser_nlp, _docs(parser_nlp), k)):
            assert 1 <= len(ts) <= k
            assert len({(t.heads, t.deps) for t in ts}) == len(ts)
            assert all(len(t.heads) == len(doc) and _is_tree(t.heads) for t in ts)
            assert [t.prob for t in ts] == sorted((t.prob for t in ts), reverse=True)
            assert 0 < sum(t.prob for t in ts) <= 1 + 1e-9
    long_sent = kbest_trees(parser_nlp, _docs(parser_nlp)[3:], 8)[0]
    assert len(long_sent) > 1  # a long sentence has more than one analysis in the beam
    assert parser_nlp.get_pipe("parser").cfg["beam_width"] == 1  # the setting is given back


@pytest.mark.parametrize("k", [0, -1, 2.0, True, 2000])
def test_bad_k_is_refused(parser_nlp, k):
    with pytest.raises(ValueError, match="E097"):
        kbest_trees(parser_nlp, _docs(parser_nlp), k)


def test_a_pipeline_without_parser_is_refused():
    with pytest.raises(ValueError, match="E098"):
        kbest_trees(spacy.blank("en"), [], 2)


def test_parse_conllu_kbest_writes_k_aligned_files(tmp_path):
    src = tmp_path / "in.conllu"
    lines = []
    for k, text in enumerate(TEXTS):
        words = text.split()
        lines += [f"# sent_id = s{k}", f"# text = {text}"]
        lines += [f"{i + 1}\t{w}\t_\tX\t_\t_\t{0 if i == 0 else 1}\t{'root' if i == 0 else 'dep'}\t_\t_"
                  for i, w in enumerate(words)] + [""]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "parse_conllu.py"), str(shipped_parser_path("en")),
                           str(src), str(tmp_path / "out.conllu"), "--kbest", "3"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    outs = [tmp_path / f"out.k{j}.conllu" for j in (1, 2, 3)]
    assert all(p.is_file() for p in outs)
    probs = json.loads((tmp_path / "out.kbest.json").read_text())
    assert len(probs) == len(TEXTS) and all(1 <= len(p) <= 3 for p in probs)
    for p in outs:
        text = p.read_text(encoding="utf-8")
        assert [ln.split(" = ")[1] for ln in text.splitlines() if ln.startswith("# sent_id")] == \
            [f"s{k}" for k in range(len(TEXTS))]
    # a sentence with a single tree repeats it in every file
    one = [k for k, p in enumerate(probs) if len(p) == 1]
    assert one and all(_block(outs[0], k) == _block(outs[2], k) for k in one)


def _block(path, k):
    return path.read_text(encoding="utf-8").strip().split("\n\n")[k]
