"""Punctuation as properties of the neighbouring words (Ma, Zhang & Zhu 2014; paper 002).

The companion system ``punct_features_parser`` parses the *depunctuated* words (the project's
depunctuation, :func:`spacy_punctgen.data.preprocess.preprocess_sentence`: punctuation tokens
removed, abbreviation dots split off as ``ABBR.``, the tree kept over the words and made
projective) while each word carries the punctuation next to it as a property string, read by
the parser's embedding layer.

**The property of a word** (:func:`slot_properties`, paper §3.1-3.3). The marks between two
words (one slot of the depunctuated sentence) are handed out so:

* opening paired marks (BPUNC: opening brackets and opening quotes, :data:`BPUNC`; straight
  quotes are directed first by the project's depunctuation) go to the word on their *right*;
* closing paired marks (EPUNC, :data:`EPUNC`) and every other (non-paired) mark go to the word
  on their *left*;
* a non-paired mark in a slot that also holds a paired mark is dropped (the paper removes a
  non-paired mark adjacent to a paired one, "the existence of paired punctuations already
  indicates that there should be a boundary"; a slot's marks form one run between two words, so
  every non-paired mark of such a run is dropped, which is what makes the paper's guarantee hold:
  the left neighbour of a kept non-paired mark has no paired flag from that slot);
* at the sentence's edges a mark with no neighbour on its side goes to the only neighbour it
  has (an opening mark after the last word to the last word; a closing or other mark before the
  first word to the first word);
* the abbreviation dot ``ABBR.`` (a word's own dot, not a punctuation token) is the flag ``A.``
  of its word and takes no part in the adjacency rule.

Each mark becomes a flag: ``B`` + mark (opening), ``E`` + mark (closing), ``O`` + mark (other;
the paper treats non-paired marks alike but keeps which mark it was, e.g. a comma property), ``A.``;
a word's property is the sorted set of its flags joined by ``|``, ``""`` for none. Examples (the
paper's): in ``entitled “ Economic Mechanisms for Environmental Protection , ” .`` the word
*Economic* gets ``"B“"`` and *Protection* ``"E”"`` (the comma and the full stop share the closing
quote's run and are dropped); in ``( “ Congress 's Environmental Buccaneers , ” Sept. 18 ) .``
*Congress* gets ``"B(|B“"``, *Buccaneers* ``"E”"``, *Sept* ``"A."`` and *18* ``"E)"``; in
``Yes , he did .`` *Yes* gets ``"O,"`` and *did* ``"O."``. Repeated marks give one flag (the paper's
flags).

**What cannot be reproduced.** The paper updates the properties during parsing (§3.1, §3.3): when
an arc is built, the head takes its leftmost (rightmost) child's BPUNC (EPUNC, non-paired) flags,
and a head where all BPUNC and EPUNC flags meet gets a PAIRED property. spaCy's parser cannot do
that: its state features are fixed tok2vec vectors computed once per token before parsing, with no
hook to change a token's features as arcs are made. What stands in for it: the tok2vec's
convolutional encoder mixes each word's vector with those of its neighbours (``window_size`` each
side, ``depth`` layers), so a word's vector sees the properties around it, and the parser's state
features (stack, buffer and their children) see the vectors of the tokens a subtree spans at its
edges.

**In spaCy.** The property is ``token._.punct_property`` (:func:`register_extension`). The layer
``spacy_punctgen.PunctPropertyEmbed.v1`` (:func:`build_punct_property_embed`) is spaCy's
``MultiHashEmbed`` plus a hash embedding of each token's property string, concatenated and mixed
by a maxout layer back to ``width``; it is a ``[components.tok2vec.model.embed]``. The reader
``spacy_punctgen.PunctPropertyCorpus.v1`` (:func:`create_punct_property_reader`) gives the three
parsers of the study the same data path from a CoNLL-U file: ``mode="punct"`` (the sentences with
their punctuation tokens), ``"depunct"`` (the depunctuated words and trees), ``"properties"`` (the
same words with their properties set on the *predicted* Doc, which is what the layer reads); every
mode keeps exactly the sentences depunctuation keeps.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from spacy_punctgen.data.conllu import UDSentence, read_conllu
from spacy_punctgen.data.preprocess import ABBR, PunctSentence, detect_quote_xpos, preprocess_sentence
from spacy_punctgen.errors import Errors

EXTENSION = "punct_property"
PROPERTY_EMBED_ARCHITECTURE = "spacy_punctgen.PunctPropertyEmbed.v1"
PROPERTY_READER = "spacy_punctgen.PunctPropertyCorpus.v1"
MODES = ("punct", "depunct", "properties")

#: Opening paired marks (the paper's BPUNC: PTB ``-LRB-`` and ````` ``, i.e. brackets and opening
#: quotes), after the depunctuation's quote directions.
BPUNC = frozenset("([{\u201c\u2018\u00ab\u2039\u300c\u300e\u300a\u3008\u3010\u3014\u3016\uff08\uff3b\uff5b\u201e"
                  ) | {"-LRB-", "-LSB-", "-LCB-"}
#: Closing paired marks (EPUNC).
EPUNC = frozenset(")]}\u201d\u2019\u00bb\u203a\u300d\u300f\u300b\u3009\u3011\u3015\u3017\uff09\uff3d\uff5d"
                  ) | {"-RRB-", "-RSB-", "-RCB-"}


def slot_properties(slots: Sequence[Sequence[str]]) -> List[str]:
    """The property string of each word from a depunctuated sentence's ``n + 1`` slots
    (``slots[k]``: the marks before word ``k``; ``slots[n]``: after the last word); see the
    module docstring for the rules and the encoding."""
    n = len(slots) - 1
    if n < 1:
        raise ValueError(Errors.E198.format(reason=f"{len(slots)} slots, so no word to carry a property"))
    flags: List[set] = [set() for _ in range(n)]
    for k, slot in enumerate(slots):
        left, right = (k - 1 if k > 0 else None), (k if k < n else None)
        paired = any(m in BPUNC or m in EPUNC for m in slot)
        for mark in slot:
            if mark == ABBR:
                flags[k - 1].add("A.")  # always right after its word
            elif mark in BPUNC:
                flags[right if right is not None else left].add("B" + mark)
            elif mark in EPUNC:
                flags[left if left is not None else right].add("E" + mark)
            elif not paired:
                flags[left if left is not None else right].add("O" + mark)
    return ["|".join(sorted(f)) for f in flags]


def depunctuate(ud: UDSentence, quote_xpos: bool = False) -> PunctSentence:
    """The project's depunctuated sentence (gold tags trusted for quote directions, as the
    corpus conversion does); E198 where depunctuation omits the sentence."""
    sent, reason = preprocess_sentence(ud, quote_xpos, gold_tags=True)
    if sent is None:
        raise ValueError(Errors.E198.format(reason=f"depunctuation omits sentence {ud.sent_id!r} ({reason})"))
    return sent


def punct_properties(ud_sentence: UDSentence, quote_xpos: bool = False
                     ) -> Tuple[List[str], List[int], List[str], List[str]]:
    """``(words, heads, deprels, properties)`` of one UD sentence: the depunctuated words, their
    0-based heads (-1: root) and relations (the project's depunctuation, projective), and each
    word's property string (module docstring). ``quote_xpos``: trust PTB quote tags for straight
    quotes' directions (English EWT; :func:`~spacy_punctgen.data.preprocess.detect_quote_xpos`)."""
    sent = depunctuate(ud_sentence, quote_xpos)
    return list(sent.words), list(sent.heads), list(sent.deprels), slot_properties(sent.slots)


# --------------------------------------------------------------------------------------------
# spaCy: the extension, the layer, the reader


def register_extension() -> None:
    """``Token._.punct_property`` (default None: not set); registering again is harmless."""
    from spacy.tokens import Token

    if not Token.has_extension(EXTENSION):
        Token.set_extension(EXTENSION, default=None)


def set_properties(doc, properties: Sequence[str]) -> None:
    """Write one property string per token onto ``doc``."""
    register_extension()
    if len(properties) != len(doc):
        raise ValueError(Errors.E197.format(problem=f"{len(properties)} properties for a Doc of {len(doc)} tokens"))
    for token, prop in zip(doc, properties):
        token._.set(EXTENSION, prop)


def doc_properties(doc) -> List[str]:
    """The property strings of ``doc``'s tokens; E197 where one is not set."""
    register_extension()
    out = []
    for token in doc:
        prop = token._.get(EXTENSION)
        if prop is None:
            raise ValueError(Errors.E197.format(
                problem=f"token {token.i} ({token.text!r}) has no token._.{EXTENSION}; read the data with "
                        f"{PROPERTY_READER} mode='properties' or set it with set_properties"))
        out.append(prop)
    return out


def _property_keys(model, docs, is_train):
    ops = model.ops
    keys = []
    for doc in docs:
        strings = doc.vocab.strings
        keys.append(ops.asarray2i([[strings[p]] for p in doc_properties(doc)], dtype="uint64")
                    if len(doc) else ops.alloc2i(0, 1, dtype="uint64"))
    return keys, lambda d_keys: []


def build_punct_property_embed(width: int, attrs: List[str], rows: List[int], include_static_vectors: bool,
                               property_rows: int = 1000):
    """spaCy's ``MultiHashEmbed.v2`` (``width``, ``attrs``, ``rows``, ``include_static_vectors``)
    beside a ``HashEmbed`` (``width``, ``property_rows`` rows) of each token's
    ``token._.punct_property``, concatenated per token and mixed by a Maxout layer to ``width``
    (as MultiHashEmbed mixes its own features): ``Model[List[Doc], List[Floats2d]]``."""
    from spacy.ml.models.tok2vec import MultiHashEmbed
    from thinc.api import HashEmbed, Maxout, Model, chain, concatenate, with_array

    register_extension()
    words = MultiHashEmbed(width=width, attrs=attrs, rows=rows, include_static_vectors=include_static_vectors)
    props = chain(Model("punct_property_keys", _property_keys),
                  with_array(HashEmbed(nO=width, nV=property_rows, column=0, seed=len(attrs) + 97)))
    mix = with_array(Maxout(width, 2 * width, nP=3, dropout=0.0, normalize=True))
    model = chain(concatenate(words, props), mix)
    model.set_dim("nO", width)
    model.name = "punct_property_embed"
    return model


def read_examples(path: Union[str, Path], mode: str) -> List[tuple]:
    """The sentences of a CoNLL-U file as the reader gives them, before they become Docs:
    ``(words, spaces, heads, deprels, upos, xpos, properties)`` per sentence that
    depunctuation keeps (heads absolute, a root its own head; properties None except in
    ``"properties"`` mode)."""
    if mode not in MODES:
        raise ValueError(Errors.E195.format(mode=mode, modes=", ".join(MODES)))
    path = Path(path)
    if not path.is_file():
        raise ValueError(Errors.E196.format(path=path, reason="no such file"))
    try:
        sentences = read_conllu(path)
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(Errors.E196.format(path=path, reason=err)) from err
    if not sentences:
        raise ValueError(Errors.E196.format(path=path, reason="it holds no sentence"))
    quote_xpos = detect_quote_xpos(path, sentences)
    out = []
    for ud in sentences:
        sent, reason = preprocess_sentence(ud, quote_xpos, gold_tags=True)
        if sent is None:  # what depunctuation omits, every mode omits
            continue
        if mode == "punct":
            n = len(ud.forms)
            heads = [i if h == 0 else h - 1 for i, h in enumerate(ud.heads)]
            deprels = ["root" if h == 0 else d.lower() for h, d in zip(ud.heads, ud.deprels)]
            out.append((list(ud.forms), [bool(s) for s in ud.space_after][:n], heads, deprels,
                        list(ud.upos), list(ud.xpos), None))
        else:
            heads = [i if h < 0 else h for i, h in enumerate(sent.heads)]
            props = slot_properties(sent.slots) if mode == "properties" else None
            out.append((list(sent.words), [True] * len(sent.words), heads, list(sent.deprels),
                        list(sent.upos), list(sent.xpos), props))
    return out


def make_docs(vocab, item: tuple):
    """``(predicted, reference)`` Docs of one :func:`read_examples` item: the reference holds the
    gold tree and tags, the predicted Doc the words (and the properties, if any)."""
    from spacy.tokens import Doc

    words, spaces, heads, deprels, upos, xpos, props = item
    reference = Doc(vocab, words=words, spaces=spaces, heads=heads, deps=deprels, pos=upos,
                    tags=[t if t != "_" else u for t, u in zip(xpos, upos)])
    predicted = Doc(vocab, words=words, spaces=spaces)
    if props is not None:
        set_properties(predicted, props)
    return predicted, reference


def create_punct_property_reader(path: Union[str, Path], mode: str = "properties", limit: int = 0
                                 ) -> Callable[..., Iterator]:
    """A corpus reader: ``reader(nlp)`` yields one ``Example`` per sentence of the CoNLL-U file
    ``path`` that depunctuation keeps, in ``mode`` (module docstring); ``limit``: the first
    ``limit`` sentences only (0: all). The file is read once; each call builds fresh Docs."""
    from spacy.training import Example

    items = read_examples(path, mode)
    if limit:
        items = items[:limit]

    def reader(nlp) -> Iterator:
        for item in items:
            predicted, reference = make_docs(nlp.vocab, item)
            yield Example(predicted, reference)

    return reader


def _register() -> None:
    from spacy import registry

    registry.architectures.register(PROPERTY_EMBED_ARCHITECTURE, func=build_punct_property_embed)
    registry.readers.register(PROPERTY_READER, func=create_punct_property_reader)


_register()
