"""The faster analysis (lattices compiled in one pass, the default feature templates in one
loop, Viterbi's pruning compiled, annotations written at once) gives exactly what the code
before it gave.

The stored digests were made with the code before a change from the same inputs: the shipped
``en`` model analysing Docs that hold the files' gold trees (the sample's sentences, some with
runs of whitespace, which spaCy makes SPACE tokens), in batches and one Doc at a time; every
``doc._.underlying_punct``, every token's ``punct_left``/``punct_right`` and ``doc._.punct_logprob``.
The slow test does the same on all 2,001 en_ewt dev texts.
"""
import hashlib
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.data.trees import forest, tree_structure
from spacy_punctgen.inference import _dp
from spacy_punctgen.inference.dp import _build_lattice_checked, build_lattice_tables
from spacy_punctgen.pipeline.shipped import default_model_path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
EWT = ROOT.parent / "shared" / "ud" / "en_ewt"

# made with the code of 0074295 (the last commit before the lexical expert) from the gold trees of
# the files, so that they hold on any machine (the parser's trees did not: its floating point
# varies with the machine)
SAMPLE_DIGEST = "4e3d2ba801ee0855ae7747da4ec39f7543f49a067a03ba6f7e5e52bd44d23d8c"
EWT_DEV_DIGEST = "893e98957d7b6d9a27c05dbd616e5b1d7769f6925841d8a73e5a0a1410d85b86"


def gold_docs(path, vocab, spaced=True):
    """The sentences of a treebank file as parsed Docs with their gold trees (so that the digests
    do not depend on the parser, whose trees vary with the machine's floating point); with
    ``spaced``, every third one with a double space after its first word and every fifth ending
    in a newline (SPACE tokens, attached to the word before them, as spaCy's parser does)."""
    docs = []
    for k, ud in enumerate(read_conllu(path)):
        n = len(ud.forms)
        words, spaces = list(ud.forms), [bool(s) for s in ud.space_after]
        heads = [h - 1 if h else i for i, h in enumerate(ud.heads)]
        deps = ["ROOT" if h == 0 else d for h, d in zip(ud.heads, ud.deprels)]
        pos, tags = list(ud.upos), list(ud.xpos)
        extra = []  # (position, text, space after)
        if spaced and k % 3 == 0 and n > 1 and spaces[0]:
            extra.append((1, " ", False))
        if spaced and k % 5 == 0:
            spaces[-1] = False
            extra.append((n, "\n", False))
        for at, text, sp in sorted(extra, reverse=True):
            words.insert(at, text)
            spaces.insert(at, sp)
            heads = [h + (h >= at) for h in heads]
            heads.insert(at, at - 1)
            deps.insert(at, "dep")
            pos.insert(at, "SPACE")
            tags.insert(at, "_SP")
        docs.append(Doc(vocab, words=words, spaces=spaces, heads=heads, deps=deps, pos=pos, tags=tags))
    return docs


def outputs(docs):
    """What the component left in the Docs, as one string per Doc."""
    return [repr((d._.underlying_punct, [(t._.punct_left, t._.punct_right) for t in d], d._.punct_logprob))
            for d in docs]


def digest(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(r.encode())
    return h.hexdigest()


def analysed(docs):
    """Per Doc, the component's outputs: batches of 8 (``pipe``) and one Doc at a time."""
    nlp = spacy.blank("en")
    pg = nlp.add_pipe("punctgen", config={"model": str(default_model_path("en"))})
    batched = outputs(list(pg.pipe([d.copy() for d in docs], batch_size=8)))
    single = outputs([pg(d.copy()) for d in docs])
    return batched, single, docs


@pytest.fixture(scope="module")
def sample_run():
    vocab = spacy.blank("en").vocab
    return analysed([d for split in ("train", "dev", "test")
                     for d in gold_docs(SAMPLE / f"en_sample-ud-{split}.conllu", vocab)])


def test_sample_outputs_equal_the_previous_code(sample_run):
    batched, single, docs = sample_run
    assert any(t.is_space for d in docs for t in d)  # the SPACE tokens are exercised
    assert batched == single
    assert digest(batched) == SAMPLE_DIGEST


@pytest.mark.slow
@pytest.mark.skipif(not EWT.is_dir(), reason="needs ../shared/ud/en_ewt")
def test_ewt_dev_outputs_equal_the_previous_code():
    batched, single, _ = analysed(gold_docs(EWT / "en_ewt-ud-dev.conllu", spacy.blank("en").vocab, spaced=False))
    assert len(batched) == 2001
    assert batched == single
    assert digest(batched) == EWT_DEV_DIGEST


def test_compiled_lattices_equal_the_checked_python_ones():
    """``build_lattice_tables`` (compiled) and the checked Python path give the same arrays."""
    from spacy_punctgen.model.punct_model import PunctModel

    model = PunctModel.from_disk(default_model_path("en"))
    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    n = 0
    for smoothed in (False, True):
        for s in sents:
            prep = model.prepare(s, smoothed)
            rt = model._rel_arrays(smoothed)
            heads = list(s.heads)
            cands = [rt.tab_pairs[rt.tab_ptr[r]:rt.tab_ptr[r + 1]] for r in prep.rel_ids.tolist()]
            want = _build_lattice_checked(model.grammar, heads, prep.slot_syms, cands)
            for got in (prep.lattice,
                        build_lattice_tables(model.grammar, heads, prep.slot_syms, prep.rel_ids, rt.tab_ptr,
                                             rt.tab_pairs, tree_structure(heads, forest(heads)))):
                for field in want.__dataclass_fields__:
                    a, b = getattr(want, field), getattr(got, field)
                    if isinstance(a, np.ndarray):
                        assert a.dtype == b.dtype and np.array_equal(a, b), field
                    else:
                        assert a == b, field
                n += 1
    assert n == 4 * len(sents)


@pytest.mark.parametrize("seed", range(20))
def test_node_argmax_is_numpys_argmax_per_node(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 6, size=int(rng.integers(1, 12)))
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    mu = rng.integers(0, 4, size=int(ptr[-1])).astype(np.float64)  # many ties
    if seed % 3 == 0 and mu.size:
        mu[rng.integers(0, mu.size, 2)] = np.nan
    if seed % 4 == 0:
        mu[:] = -np.inf
    got = _dp.node_argmax(mu, ptr)
    want = [a + int(np.argmax(mu[a:b])) if b > a else -1 for a, b in zip(ptr[:-1], ptr[1:])]
    assert got.dtype == np.int64 and got.tolist() == want
