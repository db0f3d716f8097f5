"""Shared by the rephrasing tests: the sample treebank with the shipped model's analyses, and
the projectivity check."""
from collections import Counter
from pathlib import Path

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import detect_quote_xpos, preprocess_sentence
from spacy_punctgen.data.trees import tree_structure
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path

SAMPLE = str(Path(__file__).resolve().parents[2] / "assets" / "sample" / "en_sample-ud-train.conllu")


def is_projective(heads):
    """Every subtree is a contiguous span of exactly its own size."""
    _, _, _, first, last = tree_structure(heads)
    size = Counter()
    for w in range(len(heads)):
        a = w
        while a >= 0:
            size[a] += 1
            a = heads[a]
    return all(last[w] - first[w] + 1 == size[w] for w in range(len(heads)))


def sample_items():
    """The shipped model and the sample's (UD sentence, preprocessed sentence) pairs."""
    uds = read_conllu(SAMPLE)
    qx = detect_quote_xpos(SAMPLE, uds)
    items = [(u, s) for u, (s, _) in ((u, preprocess_sentence(u, qx)) for u in uds) if s is not None]
    return PunctModel.from_disk(default_model_path()), items
