"""model/features.py: the templates are a registry of one small function each.

The stored digests were computed with the if-chain that the registry replaced (commit
c56fad4) and equal the registry's output: every context string, in the same order, for the
sample's train and dev sentences.  A deliberate change of a template changes them; recompute
with ``_digest`` and say why in the commit.
"""
import hashlib
import json
from pathlib import Path

import pytest

from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.data.preprocess import load_split
from spacy_punctgen.features import templates as F

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
STORED = {
    "train/rel": "6effc61a26bd901c74af15d13566238b76c755a8233a36186f9a45390188596c",
    "train/default": "91afcf0ba85020b49ac427a5c450d053588c451fc3aef615ac2086d24824ed82",
    "train/all": "0bbf79eedb27786efa17b8d7e778ee424d4d3008801ffdba91c9987d0801c4a7",  # + clause_*
    "dev/rel": "5ec05caf0952fc54acede34e2b8cb878e40aec1aed0bf1e1da9a9922732ad37a",
    "dev/default": "c6709d404232a3e50c53ba8a8e1c20ee686d319b3a1f66388fc21d85381ce0b6",
    "dev/all": "920e8aa14bf082e2973a9abaaa792d83feb1a4c4a805372718a664292b051e29",  # + clause_*
}
SETS = {"rel": ("rel",), "default": F.DEFAULT_TEMPLATES, "all": F.ALL_TEMPLATES}


@pytest.fixture(scope="module")
def sample():
    train, _, _ = load_split(SAMPLE / "en_sample-ud-train.conllu")
    dev, _, _ = load_split(SAMPLE / "en_sample-ud-dev.conllu")
    return {"train": train, "dev": dev}, PunctInventory.from_sentences(train, min_count=2)


def _digest(sentences, inventory, templates):
    h = hashlib.sha256()
    for s in sentences:
        h.update(json.dumps(F.node_contexts(s, inventory, templates)).encode())
    return h.hexdigest()


@pytest.mark.parametrize("key", sorted(STORED))
def test_contexts_equal_the_stored_if_chain_output(sample, key):
    splits, inventory = sample
    split, name = key.split("/")
    assert _digest(splits[split], inventory, SETS[name]) == STORED[key]


def test_every_listed_template_is_registered_once():
    assert sorted(F.TEMPLATES) == sorted(F.ALL_TEMPLATES)
    assert F.TEMPLATES and next(iter(F.TEMPLATES)) == "rel"  # rel's contexts come first
    assert set(F.TEMPLATE_NEEDS) == set(F.TEMPLATES)
    assert F.SURFACE_TEMPLATES <= set(F.TEMPLATES)


def test_registering_a_name_twice_fails():
    with pytest.raises(AssertionError, match="registered twice"):
        F.template("rel")(lambda x: ())


def test_contexts_follow_registry_order_whatever_the_listed_order(sample):
    splits, inventory = sample
    s = splits["dev"][0]
    names = [t for t in F.DEFAULT_TEMPLATES if t != "rel"]
    assert F.node_contexts(s, inventory, names[::-1]) == F.node_contexts(s, inventory, names)


def test_each_template_adds_only_its_own_contexts(sample):
    """Enabling one template more adds that template's strings and leaves the rest in place."""
    splits, inventory = sample
    s = splits["train"][3]
    base = F.node_contexts(s, inventory, ("rel",))
    for name in F.ALL_TEMPLATES:
        with_one = F.node_contexts(s, inventory, ("rel", name))
        for b, w in zip(base, with_one):
            assert w[:len(b)] == b


def test_unknown_template_is_refused_by_name(sample):
    splits, inventory = sample
    with pytest.raises(ValueError, match="no_such_template"):
        F.node_contexts(splits["dev"][0], inventory, ("rel", "no_such_template"))


def _registry_and_fused(sentences, inventory, monkeypatch):
    fused = [F.node_contexts(s, inventory, F.DEFAULT_TEMPLATES) for s in sentences]
    with monkeypatch.context() as m:
        m.setattr(F, "_DEFAULT_FNS", ())  # no fused path: one call per registered template
        registry = [F.node_contexts(s, inventory, F.DEFAULT_TEMPLATES) for s in sentences]
    return fused, registry


def test_fused_default_contexts_equal_the_registry(sample, monkeypatch):
    """The default templates' one-loop path (``_default_contexts``, what analysis runs) gives
    the registry's strings in the registry's order, on every sentence of the sample."""
    splits, inventory = sample
    sents = splits["train"] + splits["dev"]
    fused, registry = _registry_and_fused(sents, inventory, monkeypatch)
    assert fused == registry
    assert sum(len(c) for cs in fused for c in cs) > 1000


EWT = Path(__file__).resolve().parents[3] / "shared" / "ud" / "en_ewt"


@pytest.mark.slow
@pytest.mark.skipif(not EWT.is_dir(), reason="needs ../shared/ud/en_ewt")
def test_fused_default_contexts_equal_the_registry_on_ewt(sample, monkeypatch):
    from spacy_punctgen.data.conllu import resolve_split
    from spacy_punctgen.data.preprocess import preprocess_file

    _, inventory = sample
    sents = [s for split in ("train", "dev") for s in preprocess_file(resolve_split(str(EWT), split))[0]]
    fused, registry = _registry_and_fused(sents, inventory, monkeypatch)
    assert fused == registry
