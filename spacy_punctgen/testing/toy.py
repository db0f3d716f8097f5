"""Toy data for the model tests: five short depunctuated sentences, their punctuation
inventory, and a small randomly initialized :class:`~spacy_punctgen.model.punct_model.PunctModel`."""
from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.model.punct_model import PunctModel

LQ, RQ = "\u201c", "\u201d"


def punct_sentence(words, upos, heads, deprels, slots):
    """A :class:`PunctSentence` with no XPOS (``_``); ``slots`` holds ``len(words) + 1`` tuples."""
    return PunctSentence(words=list(words), upos=list(upos), xpos=["_"] * len(words),
                         deprels=list(deprels), heads=list(heads), slots=[tuple(s) for s in slots])


def toy_sentences():
    """Five short depunctuated sentences with commas, periods, quotes, parentheses, a colon."""
    _S = punct_sentence
    return [
        # He said “ hi ” .
        _S(["He", "said", "hi"], ["PRON", "VERB", "INTJ"], [1, -1, 1], ["nsubj", "root", "ccomp"],
           [(), (), (LQ,), (RQ, ".")]),
        # apples , pears and plums .
        _S(["apples", "pears", "and", "plums"], ["NOUN", "NOUN", "CCONJ", "NOUN"], [-1, 0, 3, 0],
           ["root", "conj", "cc", "conj"], [(), (",",), (), (), (".",)]),
        # Bob ( my friend ) left .
        _S(["Bob", "my", "friend", "left"], ["PROPN", "PRON", "NOUN", "VERB"], [3, 2, 0, -1],
           ["nsubj", "nmod:poss", "appos", "root"], [(), ("(",), (), (")",), (".",)]),
        # Note : it rains , “ really ” .
        _S(["Note", "it", "rains", "really"], ["NOUN", "PRON", "VERB", "ADV"], [-1, 2, 0, 2],
           ["root", "nsubj", "parataxis", "advmod"], [(), (":",), (), (",", LQ), (RQ, ".")]),
        # Yes , he left .
        _S(["Yes", "he", "left"], ["INTJ", "PRON", "VERB"], [2, 2, -1], ["discourse", "nsubj", "root"],
           [(), (",",), (), (".",)]),
    ]


def toy_inventory(sents=None, pairs_mode="halves"):
    return PunctInventory.from_sentences(sents or toy_sentences(), min_count=1, pairs_mode=pairs_mode)


def toy_model(direction, seed=3):
    """A randomly initialized model of the toy sentences: ``direction`` is ``l2r``, ``r2l``
    (mode ``full``) or ``attach`` (mode ``attach``, left to right)."""
    sents = toy_sentences()
    mode = "attach" if direction == "attach" else "full"
    m = PunctModel(toy_inventory(sents), mode=mode, direction="l2r" if mode == "attach" else direction)
    m.initialize(m.prepare_all(sents), seed=seed, theta_scale=1.0, psi_scale=1.5)
    return m


def three_word_tree():
    """A 3-word tree without punctuation whose root has an interior slot (W_d small enough to
    enumerate every surface, :func:`spacy_punctgen.testing.reference.reachable_surfaces`)."""
    return punct_sentence(["He", "said", "hi"], ["PRON", "VERB", "INTJ"], [1, -1, 1], ["nsubj", "root", "ccomp"],
                          [(), (), (), ()])
