"""Fixtures shared by several test folders."""
import random
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample"


def train_tiny_parser(out: Path, n_sentences: int, passes: int) -> Path:
    """A tiny spaCy parser of depunctuated text: ``passes`` shuffled passes (batches of 8) over
    the sample's first ``n_sentences`` depunctuated training trees. Its trees are poor, which is
    what tests of restoration's plumbing and of bad input want."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_punctgen.data.preprocess import preprocess_file

    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    nlp = spacy.blank("en")
    nlp.add_pipe("parser")
    examples = []
    for s in train[:n_sentences]:
        heads = [h if h >= 0 else i for i, h in enumerate(s.heads)]
        deps = ["ROOT" if h < 0 else d for h, d in zip(s.heads, s.deprels)]
        ref = Doc(nlp.vocab, words=s.words, heads=heads, deps=deps, pos=s.upos)
        examples.append(Example(nlp.make_doc(" ".join(s.words)), ref))
    optimizer = nlp.initialize(lambda: examples)
    rng = random.Random(0)
    for _ in range(passes):
        rng.shuffle(examples)
        for k in range(0, len(examples), 8):
            nlp.update(examples[k:k + 8], sgd=optimizer)
    nlp.to_disk(out)
    return out


@pytest.fixture(scope="session")
def tiny_parser(tmp_path_factory):
    """``tiny_parser(n_sentences, passes)`` -> the folder of that tiny parser, trained once per
    session for each setting."""
    made = {}

    def get(n_sentences: int = 40, passes: int = 1) -> Path:
        key = (n_sentences, passes)
        if key not in made:
            made[key] = train_tiny_parser(tmp_path_factory.mktemp("parser"), n_sentences, passes)
        return made[key]

    return get


@pytest.fixture(scope="session")
def shipped_parser():
    """The shipped English parser's folder; the test is skipped, with the reason, in a source tree
    that lacks its files."""
    pytest.importorskip("spacy_punctgen.api.load")
    from spacy_punctgen.api.load import shipped_parser_path

    try:
        return shipped_parser_path("en")
    except ValueError as err:
        pytest.skip(str(err))


@pytest.fixture(autouse=True)
def _every_restoration_keeps_the_text(monkeypatch):
    """Every Doc any test restores keeps the rule: the input with marks inserted between its
    whitespace-separated tokens, nothing else (spacy_punctgen.testing.insertion_rule)."""
    try:
        from spacy_punctgen.pipeline.component import PunctGen
        from spacy_punctgen.testing.insertion_rule import doc_violations
    except ImportError:  # the package is not importable here: nothing restores either
        yield
        return
    original = PunctGen.set_annotations

    def checked(self, docs, results):
        docs = list(docs)
        original(self, docs, results)
        for doc in docs:
            bad = doc_violations(doc)
            assert not bad, bad

    monkeypatch.setattr(PunctGen, "set_annotations", checked)
    yield
