"""The ``punctgen_truecase`` component: case for lowercased (or caseless) restored text.

Why: speech recognisers and captions give lowercase words; restoration puts the punctuation
back, but ``i came home. he left.`` still lacks its capitals. The case of a word is a tagging
problem: each word gets one *case class* (:func:`case_class`): ``lower``, ``Title``,
``UPPER``, or, for a mixed-case word seen at least ``min_mixed`` times in training, its
exact form (``iPhone``, ``McDonald``), which is the class's own dictionary entry; a rarer
mixed-case word falls back to ``Title`` or ``lower`` by its first letter. The component *is*
spaCy's :class:`~spacy.pipeline.Tagger` (its model, training, labels and serialisation),
over its own small tok2vec, with two differences: the model always sees the words
lowercased, as in training, and the prediction is written to extensions, never to
``token.tag`` (the parser pipeline's tags stay).

Labels teach each word's *own* case: a sentence-initial word written ``Title`` is labelled
with the case its lowercase form has most often inside sentences in the training data
(``lower`` when never seen there), so ``The`` teaches ``lower`` and ``I`` / ``London`` teach
``Title``. Sentence starts are capitalised separately, from the sentences the restoration
found: a new sentence begins at the first word and after a restored ``.``, ``?``, ``!``
(or ``…``); without restoration, after such a mark in the input.

Rule for input that already has case. A Doc none of whose words has a capital letter is
treated as caseless: every word takes the predicted class. A Doc with a capital anywhere is
cased, and the writer's case stands: a word written with a capital keeps its form (the model,
which reads lowercase words, confidently lowercases unseen names such as ``Wycombe``), and a
word written in lowercase changes only where the model's probability for its predicted class
is at least ``cased_threshold`` (0.9). Sentence starts found by the restoration are
capitalised in both (a word already capitalised stays).

Two kinds of word keep their written case whatever the model predicts. A *hesitation* written
in lowercase (:data:`HESITATIONS`: ``um``, ``uh``, ``er``, ``hmm``, ...) stays lowercase
except at a sentence start: these filled pauses are among the commonest words of the speech
transcripts a truecaser is for, yet EWT's web text has almost none (``um`` never occurs in
train; ``uh`` three times, twice as an emphatic ``UH UH``), so the model reads them as short
acronyms (``um`` -> ``UM`` at p = 0.99). A *verbatim* chunk (:func:`verbatim_tokens`: an
e-mail address, URL or file path, by spaCy's ``like_email`` / ``like_url`` or an ``@``,
``://``, ``www.``, ``\\`` or a path's slashes) keeps every character as written, sentence
start included: its case is part of what it names.

A word the training text never had (``roadmap`` is not in EWT train) has no embedding of its
own: the hashed NORM rows of its string are shared with training words (some of them names), so
the model's guess from them is noise, often confident (``Roadmap`` at p = 0.97). Where the
truecaser knows its training words (:attr:`TrueCaser.train_words`, the word list shipped beside
the model, :data:`TRAIN_WORDS_FILE`), the class probabilities of an unseen word, and of every
word whose prediction reads it, are averaged over ``unseen_standins`` (8) readings in which its
NORM is a stand-in string's (:func:`standin_key`) while its PREFIX, SUFFIX, SHAPE and context
stay: the noise of its own string is averaged out. The readings hold only the words around
unseen words that those predictions read (:func:`context_reach`, :func:`unseen_spans`), so they
give exactly what readings of the whole Doc would. A truecaser saved without the list (older
ones) predicts every word from its own string, as before.

Writes ``token._.truecase`` (the cased form, sentence start included), ``token._.case_label``
(the class the model predicted; the form follows it except as above) and
``doc._.truecased_text`` (the Doc's text with those forms); after a ``punctgen`` component in
restore mode it also re-cases ``doc._.restored_text``.

The training data (:func:`truecase_docs`) are UD sentences as the restoration pipeline sees
them: punctuation dropped (``is_punct``), the abbreviation dot split off, words lowercased;
configs/truecase.cfg trains the component with ``spacy train`` (workflow ``truecase``) and
:func:`evaluate_truecase` measures case accuracy on a test treebank.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from spacy.attrs import NORM
from spacy.language import Language
from spacy.pipeline import Tagger
from spacy.scorer import Scorer
from spacy.strings import get_string_id
from spacy.tokens import Doc, DocBin, Token
from spacy.util import registry
from thinc.api import Config, Model

from spacy_punctgen.data.conllu import read_conllu, resolve_split
from spacy_punctgen.data.preprocess import is_abbreviation, is_punct
from spacy_punctgen.errors import Errors
from spacy_punctgen.pipeline.shipped import write_shipped

PathLike = Union[str, Path]

FACTORY = "punctgen_truecase"
LOWER, TITLE, UPPER = "lower", "Title", "UPPER"
#: a restored (or written) mark that ends a sentence: the next word starts one
SENTENCE_FINAL = frozenset({".", "?", "!", "…", "...", "?!", "!?"})
#: marks that may stand between a sentence-final mark and the next sentence's first word
_CLOSING = frozenset({'"', "'", "”", "’", ")", "]", "}", "»", "“", "‘", "(", "[", "{", "«"})
DEFAULT_THRESHOLD = 0.9
#: readings an unseen word's class probabilities are averaged over (see the module docstring)
DEFAULT_STANDINS = 8
#: the truecaser's training words, one lowercase word a line, sorted (UTF-8), in its component folder
TRAIN_WORDS_FILE = "train_words.txt"
SCORER = "spacy_punctgen.truecase_scorer.v1"
#: filled pauses (hesitations) and the backchannels spelled like them: the closed class of
#: transcription conventions (LDC's filled pauses ah, eh, er, hm, mm, uh, um, with the spellings
#: erm, hmm, mhm, mmm, uhm and the backchannels uh-huh, uh-uh, mm-hmm). Written in lowercase,
#: they stay so except at a sentence start; the training text has too few to teach it.
HESITATIONS = frozenset({"ah", "eh", "er", "erm", "hm", "hmm", "mhm", "mm", "mm-hmm", "mmm", "uh", "uh-huh",
                         "uh-uh", "uhm", "um"})
#: characters that only an address, URL or file path holds inside one whitespace-separated chunk
_VERBATIM_MARKS = ("@", "://", "www.", "\\", ":/")
#: how a file path starts (``/usr/bin``, ``~/notes``, ``./run.sh``, ``../data``)
_PATH_STARTS = ("/", "~/", "./", "../")

DEFAULT_MODEL = """
[model]
@architectures = "spacy.Tagger.v2"
nO = null
normalize = true

[model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[model.tok2vec.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 64
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [8000, 1000, 2500, 2500]
include_static_vectors = false

[model.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 64
depth = 2
window_size = 1
maxout_pieces = 3
"""


# ----------------------------------------------------------------- case classes
def _check_word(word) -> str:
    if not isinstance(word, str) or not word:
        raise ValueError(Errors.E081.format(word=word))
    return word


def case_class(form: str) -> str:
    """The case pattern of a written word: ``lower`` (no capital; also words without letters),
    ``Title`` (its first cased letter is the only capital: ``I``, ``London``), ``UPPER`` (every
    cased letter a capital, at least two), else the form itself (mixed: ``iPhone``)."""
    form = _check_word(form)
    cased = [c for c in form if c.isupper() or c.islower()]
    if not any(c.isupper() for c in cased):
        return LOWER
    if cased[0].isupper() and not any(c.isupper() for c in cased[1:]):
        return TITLE
    if not any(c.islower() for c in cased):
        return UPPER
    return form


def _title(word: str) -> str:
    low = word.lower()
    for i, c in enumerate(low):
        if c.isupper() or c.islower():
            return low[:i] + c.upper() + low[i + 1:]
    return low


def fallback_class(label: str) -> str:
    """The plain class that stands in for a mixed-case form: ``Title`` if it starts with a
    capital, else ``lower``."""
    return TITLE if case_class(label) != LOWER and next(c for c in label if c.isupper() or c.islower()).isupper() \
        else LOWER


def apply_case(word: str, label: str) -> str:
    """``word`` written in case class ``label``. A mixed-case class is its own form, used when
    it is the same word; on another word it falls back to :func:`fallback_class`."""
    word = _check_word(word)
    if label == LOWER:
        return word.lower()
    if label == TITLE:
        return _title(word)
    if label == UPPER:
        return word.upper()
    if not isinstance(label, str) or not label:
        raise ValueError(Errors.E082.format(label=label))
    if label.lower() == word.lower():
        return label
    return apply_case(word, fallback_class(label))


def is_verbatim(chunk: str, tokens: Sequence[Token] = ()) -> bool:
    """Whether a whitespace-separated chunk of the input is an e-mail address, URL or file
    path, whose case is part of what it names: one of its ``tokens`` is ``like_email`` or
    ``like_url`` (spaCy's lexical attributes: ``john.smith@example.com``, ``www.x.org``,
    ``report.doc``), or the chunk holds an ``@``, ``://``, ``www.``, a backslash or ``:/``, or
    it is a path (starts with ``/``, ``~/``, ``./``, ``../`` or has two slashes or more; one
    slash, as in ``and/or``, is not enough)."""
    if any(t.like_email or t.like_url for t in tokens):
        return True
    if any(mark in chunk for mark in _VERBATIM_MARKS):
        return True
    return (chunk.startswith(_PATH_STARTS) and len(chunk) > 1) or chunk.count("/") >= 2


def verbatim_tokens(doc: Doc) -> List[int]:
    """The indices of the tokens of ``doc`` inside a verbatim chunk (:func:`is_verbatim`): the
    chunk is the whitespace-separated piece of text, so an address the tokenizer split (or one
    with a written full stop after it) is judged whole."""
    out: List[int] = []
    chunk: List[Token] = []
    for tok in doc:
        if not tok.is_space:
            chunk.append(tok)
        if chunk and (tok.is_space or tok.whitespace_ or tok.i == len(doc) - 1):
            if is_verbatim("".join(t.text for t in chunk), chunk):
                out.extend(t.i for t in chunk)
            chunk = []
    return out


def capitalize_start(form: str) -> str:
    """A sentence's first word: a lowercase form gets its first letter capitalised; a form
    with a capital already (``iPhone``, ``NASA``) is kept."""
    return _title(form) if form == form.lower() else form


def case_labels(sentences: Sequence[Sequence[str]], min_mixed: int = 2,
                train: Optional[Sequence[Sequence[str]]] = None) -> List[List[str]]:
    """The training class of every word of ``sentences`` (cased, depunctuated words): its
    :func:`case_class`, except that a mixed-case form seen fewer than ``min_mixed`` times in
    ``train`` (default: ``sentences`` themselves) falls back (:func:`fallback_class`) and a
    sentence-initial ``Title`` word takes the class its lowercase form has most often inside
    ``train``'s sentences (``lower`` if never seen there). See the module docstring."""
    ref = sentences if train is None else train
    inside = inside_counts(ref)
    mixed = Counter(f for sent in ref for f in sent if case_class(f) not in (LOWER, TITLE, UPPER))
    out = []
    for sent in sentences:
        labels = []
        for i, form in enumerate(sent):
            label = case_class(form)
            if i == 0 and label == TITLE:
                seen = inside.get(form.lower())
                label = seen.most_common(1)[0][0] if seen else LOWER
            if label not in (LOWER, TITLE, UPPER) and mixed[label] < min_mixed:
                label = fallback_class(label)
            labels.append(label)
        out.append(labels)
    return out


def inside_counts(sentences: Iterable[Sequence[str]]) -> Dict[str, Counter]:
    """lowercase form -> Counter of its case classes at non-initial positions."""
    counts: Dict[str, Counter] = defaultdict(Counter)
    for sent in sentences:
        for form in sent[1:]:
            counts[form.lower()][case_class(form)] += 1
    return dict(counts)


def depunct_words(path: PathLike, split: Optional[str] = None) -> List[List[str]]:
    """The words of each sentence of a treebank as the restoration pipeline sees them (cased):
    punctuation dropped (``is_punct``), an abbreviation's final dot split off."""
    out = []
    for ud in read_conllu(resolve_split(path, split)):
        words = [f[:-1] if is_abbreviation(f) else f
                 for f, u, d in zip(ud.forms, ud.upos, ud.deprels) if not is_punct(u, d)]
        words = [w for w in words if w.strip()]
        if words:
            out.append(words)
    return out


def training_words(sentences: Iterable[Sequence[str]]) -> List[str]:
    """The words a truecaser trained on ``sentences`` (:func:`depunct_words` of its training
    treebank) has read, as it reads them: lowercased, sorted, each once."""
    return sorted({w.lower() for sent in sentences for w in sent})


def truecase_docs(path: PathLike, split: Optional[str], out: PathLike, *, train: Optional[PathLike] = None,
                  n_sents: int = 10, min_mixed: int = 2) -> Dict[str, int]:
    """Write the training/evaluation Docs of the truecaser (a ``.spacy`` file): ``n_sents``
    consecutive sentences per Doc (so context crosses sentence boundaries, as in a stream),
    words lowercased, ``token.tag`` the class of :func:`case_labels` with the inside-sentence
    counts (and mixed forms) of ``train`` (a treebank file or folder, its train split; default
    ``path`` itself)."""
    import spacy

    if isinstance(n_sents, bool) or not isinstance(n_sents, int) or n_sents < 1:
        raise ValueError(Errors.E083.format(name="n_sents", value=n_sents))
    sents = depunct_words(path, split)
    ref = None if train is None else depunct_words(train, "train" if Path(train).is_dir() else None)
    labels = case_labels(sents, min_mixed=min_mixed, train=ref)
    vocab = spacy.blank("xx").vocab
    db = DocBin(attrs=["ORTH", "TAG"])
    n_words = 0
    for start in range(0, len(sents), n_sents):
        words = [w.lower() for s in sents[start:start + n_sents] for w in s]
        tags = [t for lab in labels[start:start + n_sents] for t in lab]
        db.add(Doc(vocab, words=words, tags=tags))
        n_words += len(words)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(out)
    return {"docs": len(db), "sentences": len(sents), "words": n_words}


# ----------------------------------------------------------------- the component
def _register_extensions() -> None:
    for name in ("truecase", "case_label"):
        if not Token.has_extension(name):
            Token.set_extension(name, default=None)
    if not Doc.has_extension("truecased_text"):
        Doc.set_extension("truecased_text", default=None)
    if not Doc.has_extension("restored_text"):  # the punctgen component sets it too
        Doc.set_extension("restored_text", default=None)


_register_extensions()


def _case_getter(token: Token, attr: str) -> str:
    """The class a token has: the predicted one where the truecaser wrote it, else its tag
    (the reference Docs of training carry the gold class as ``token.tag``)."""
    label = token._.case_label
    return token.tag_ if label is None else label


def truecase_score(examples, **kwargs) -> Dict[str, float]:
    """``case_acc``: share of tokens whose predicted class is the reference's."""
    return Scorer.score_token_attr(examples, "case", getter=_case_getter, **kwargs)


@registry.scorers(SCORER)
def make_truecase_scorer() -> Callable:
    return truecase_score


def _check_threshold(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(Errors.E084.format(value=value))
    return float(value)


def _check_standins(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(Errors.E030.format(value=value))
    return value


# ----------------------------------------------------------------- unseen words
def standin_key(word: str, k: int) -> int:
    """The NORM key of the ``k``-th stand-in for ``word``: the hash of a string no text holds
    (the word, a NUL, ``k``), which the model's hash embedding maps to rows of its own, as it
    would any unseen string's. Derived from the word, so each unseen word gets its own draws
    and the same word the same ones."""
    return get_string_id(f"{word}\x00{k}")


def context_reach(model: Model) -> Optional[int]:
    """How many words either side of a word the model reads to predict it: the sum of its window
    layers' sizes (thinc's ``expand_window``: 2 for the default MaxoutWindowEncoder, depth 2 x
    window 1), or None (the whole Doc) for an encoder without them (an LSTM)."""
    windows = [node.attrs["window_size"] for node in model.walk() if node.name == "expand_window"]
    return sum(windows) if windows else None


def unseen_spans(positions: Sequence[int], n: int, reach: Optional[int]) -> List[Tuple[int, int, List[int], List[int]]]:
    """The spans of a sequence of ``n`` words to read again for the increasing ``positions`` of its
    unseen words: ``(start, end, unseen positions inside, affected positions)``, the affected ones
    being the words within ``reach`` of an unseen word (their prediction reads it), the span those
    with ``reach`` words more either side (all that their prediction reads), clipped to the
    sequence, overlapping spans merged; ``reach`` None: one span, the whole sequence, all affected."""
    if not positions:
        return []
    if reach is None:
        return [(0, n, list(positions), list(range(n)))]
    spans: List[Tuple[int, int, List[int], List[int]]] = []
    for i in positions:
        start, end = max(0, i - 2 * reach), min(n, i + 2 * reach + 1)
        affected = range(max(0, i - reach), min(n, i + reach + 1))
        if spans and start < spans[-1][1]:
            s0, _, unseen, seen_affected = spans[-1]
            spans[-1] = (s0, end, unseen + [i], seen_affected + [j for j in affected if j > seen_affected[-1]])
        else:
            spans.append((start, end, [i], list(affected)))
    return spans


def _check_words(words: Iterable[str]) -> frozenset:
    out = frozenset(words)
    for word in out:
        if not isinstance(word, str) or not word or "\n" in word:
            raise ValueError(Errors.E032.format(word=word))
    return out


def _words_text(words: frozenset) -> str:
    return "".join(w + "\n" for w in sorted(words))


def _parse_words(text: str, where: PathLike) -> frozenset:
    lines = text.split("\n")
    if lines[-1] != "" or any(not w for w in lines[:-1]):
        raise ValueError(Errors.E031.format(path=where, reason="an empty line, or no line break after the last word"))
    return frozenset(lines[:-1])


def read_train_words(path: PathLike) -> frozenset:
    """The word list of :data:`TRAIN_WORDS_FILE` at ``path`` (E031 naming the file if damaged)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(Errors.E031.format(path=path, reason=f"not UTF-8: {err}")) from err
    return _parse_words(text, path)


@Language.factory(
    FACTORY,
    default_config={"model": Config().from_str(DEFAULT_MODEL)["model"], "cased_threshold": DEFAULT_THRESHOLD,
                     "unseen_standins": DEFAULT_STANDINS, "scorer": {"@scorers": SCORER}},
    assigns=["token._.truecase", "token._.case_label", "doc._.truecased_text", "doc._.restored_text"],
    default_score_weights={"case_acc": 1.0},
)
def make_truecaser(nlp: Language, name: str, model: Model, cased_threshold: float, unseen_standins: int,
                   scorer: Optional[Callable]) -> "TrueCaser":
    """``model``: a spaCy tagger model over its own tok2vec (default: a small CPU one);
    ``cased_threshold``, ``unseen_standins`` (0: none): see the module docstring."""
    return TrueCaser(nlp.vocab, model, name, cased_threshold=cased_threshold, unseen_standins=unseen_standins,
                     scorer=scorer)


class TrueCaser(Tagger):
    """spaCy's Tagger whose labels are case classes; see the module docstring."""

    def __init__(self, vocab, model: Model, name: str = FACTORY, *, cased_threshold: float = DEFAULT_THRESHOLD,
                 unseen_standins: int = DEFAULT_STANDINS, scorer: Optional[Callable] = truecase_score):
        super().__init__(vocab, model, name, overwrite=False, scorer=scorer)
        # runtime settings: kept out of cfg, so they come from the config, not the saved files
        self.cased_threshold = _check_threshold(cased_threshold)
        self.unseen_standins = _check_standins(unseen_standins)
        self._train_words: Optional[frozenset] = None

    @property
    def train_words(self) -> Optional[frozenset]:
        """The lowercase words of the training text (saved as :data:`TRAIN_WORDS_FILE`); a word
        outside them is predicted over stand-ins. None (a truecaser saved without them): every
        word is predicted from its own string, as before."""
        return self._train_words

    @train_words.setter
    def train_words(self, words: Optional[Iterable[str]]) -> None:
        self._train_words = None if words is None else _check_words(words)

    # ------------------------------------------------------------- serialisation
    def to_disk(self, path, *, exclude=tuple()):
        super().to_disk(path, exclude=exclude)
        if "train_words" in exclude:
            return
        file = Path(path) / TRAIN_WORDS_FILE
        if self.train_words is not None:
            file.write_text(_words_text(self.train_words), encoding="utf-8")
        elif file.exists():  # a list left from what was saved there before is not this truecaser's
            file.unlink()

    def from_disk(self, path, *, exclude=tuple()):
        super().from_disk(path, exclude=exclude)
        if "train_words" not in exclude:
            file = Path(path) / TRAIN_WORDS_FILE
            self.train_words = read_train_words(file) if file.is_file() else None
        return self

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        data = super().to_bytes(exclude=exclude)
        if self.train_words is None or "train_words" in exclude:
            return data
        msg = srsly.msgpack_loads(data)
        msg["train_words"] = _words_text(self.train_words)
        return srsly.msgpack_dumps(msg)

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()):
        super().from_bytes(bytes_data, exclude=exclude)
        if "train_words" not in exclude:
            text = srsly.msgpack_loads(bytes_data).get("train_words")
            self.train_words = None if text is None else _parse_words(text, "train_words (bytes)")
        return self

    # ------------------------------------------------------------- prediction
    @staticmethod
    def _words(doc: Doc) -> List[int]:
        """The tokens the model reads (what restoration sees as words)."""
        return [t.i for t in doc if not (t.is_punct or t.is_space)]

    def predict(self, docs: Iterable[Doc]) -> List[Tuple[List[int], numpy.ndarray, numpy.ndarray]]:
        """Per Doc: the indices of its words, their predicted label ids and probabilities
        (the model reads the words lowercased, one space apart, as in training)."""
        docs = list(docs)
        if not self.labels:
            raise ValueError(Errors.E085.format(name=self.name))
        idx = [self._words(doc) for doc in docs]
        lowered = [Doc(self.vocab, words=[doc[i].text.lower() for i in ix]) for doc, ix in zip(docs, idx)]
        empty = numpy.zeros((0,), dtype="i")
        if not any(len(d) for d in lowered):
            return [(ix, empty, numpy.zeros((0,), dtype="f")) for ix in idx]
        probs = [self.model.ops.to_numpy(p) for p in self.model.predict(lowered)]
        if self.train_words is not None and self.unseen_standins:
            self._average_unseen(lowered, probs)
        out = []
        for ix, scores in zip(idx, probs):
            if len(ix):
                ids = scores.argmax(axis=1)
                out.append((ix, ids, scores[numpy.arange(len(ix)), ids]))
            else:
                out.append((ix, empty, numpy.zeros((0,), dtype="f")))
        return out

    def _average_unseen(self, docs: Sequence[Doc], probs: List[numpy.ndarray]) -> None:
        """Replace (in place) the rows of ``probs`` (per Doc of lowercased words) of every word
        whose prediction reads an unseen word by their mean over ``unseen_standins`` readings, the
        ``k``-th with every unseen word's NORM its stand-in ``k`` (:func:`standin_key`). A reading
        holds the words of an :func:`unseen_spans` span only: the model sees no further
        (:func:`context_reach`)."""
        reach = context_reach(self.model)
        n_standins = self.unseen_standins
        readings: List[Doc] = []
        targets: List[Tuple[int, int, List[int]]] = []  # (Doc, span start, affected positions)
        for d, doc in enumerate(docs):
            unseen = [t.i for t in doc if t.text not in self.train_words]
            if not unseen:
                continue
            norms = doc.to_array(NORM)
            for start, end, positions, affected in unseen_spans(unseen, len(doc), reach):
                words = [t.text for t in doc[start:end]]
                for k in range(n_standins):
                    span_norms = norms[start:end].copy()
                    span_norms[[i - start for i in positions]] = [standin_key(doc[i].text, k) for i in positions]
                    reading = Doc(self.vocab, words=words)
                    reading.from_array(NORM, span_norms)
                    readings.append(reading)
                targets.append((d, start, affected))
        if not readings:
            return
        read = [self.model.ops.to_numpy(p) for p in self.model.predict(readings)]
        for t, (d, start, affected) in enumerate(targets):
            rows = [i - start for i in affected]
            probs[d][affected] = numpy.mean([p[rows] for p in read[t * n_standins:(t + 1) * n_standins]], axis=0)

    def set_annotations(self, docs: Iterable[Doc], preds) -> None:
        labels = self.labels
        for doc, (ix, ids, probs) in zip(docs, preds):
            words = [doc[i] for i in ix]
            cased_input = any(c.isupper() for t in words for c in t.text)
            verbatim = set(verbatim_tokens(doc))
            forms = {}
            for tok, k, p in zip(words, ids.tolist(), probs.tolist()):
                label = labels[k]
                tok._.case_label = label
                form = apply_case(tok.text, label)
                if cased_input and (p < self.cased_threshold or tok.text != tok.text.lower()):
                    form = tok.text  # cased input: only confident capitals are added
                if tok.i in verbatim or tok.text in HESITATIONS:
                    form = tok.text  # see the module docstring
                forms[tok.i] = form
            restored = doc._.restored_punct if Doc.has_extension("restored_punct") else None
            if restored is not None:
                starts, _ = _restored_starts(doc, restored)
            else:
                starts = _written_starts(doc, ix)
            for i in starts:  # (a restored word the model did not read, e.g. "&", keeps its text)
                if i not in verbatim:  # an address starting a sentence stays as written
                    forms[i] = capitalize_start(forms.get(i, doc[i].text))
            for tok in doc:
                form = forms.get(tok.i, tok.text)
                # case changes only: a form that is not the token's text in another case is not taken
                tok._.truecase = form if len(form) == len(tok.text) and form.lower() == tok.text.lower() else tok.text
            doc._.truecased_text = "".join(t._.truecase + t.whitespace_ for t in doc)
            if restored is not None:
                doc._.restored_text = _recase_restored(doc)


def _written_starts(doc: Doc, words: List[int]) -> List[int]:
    """Sentence starts without restoration: the first word, and every word after a written
    sentence-final mark (closing quotes/brackets in between allowed)."""
    starts, after_final, first = [], False, True
    word_set = set(words)
    for tok in doc:
        if tok.i in word_set:
            if first or after_final:
                starts.append(tok.i)
            first = after_final = False
        elif tok.text in SENTENCE_FINAL:
            after_final = True
        elif not (tok.is_space or tok.text in _CLOSING):
            after_final = False
    return starts


def _restored_starts(doc: Doc, entries: List[dict]) -> Tuple[List[int], List[int]]:
    """Sentence starts from the restoration (``doc._.restored_punct``): the first word, and
    every word after a slot whose restored marks include a sentence-final one (a sentence's
    first word also after the previous sentence's last slot). Also returns the restored
    words in order (the word tokens of ``insert_punctuation``'s output)."""
    by_sent: Dict[int, List[dict]] = defaultdict(list)
    for e in entries:
        by_sent[e["sentence"]].append(e)
    words: List[int] = []
    starts: List[int] = []
    pending = True  # the next word starts a sentence
    for si in sorted(by_sent):
        slots = sorted(by_sent[si], key=lambda e: e["slot"])
        for k, e in enumerate(slots):
            if any(m in SENTENCE_FINAL for m in e["surface"]):
                pending = True
            if k + 1 < len(slots):  # slot k precedes word k, written in slot k + 1's "after"
                w = slots[k + 1]["after"]
                words.append(w)
                if pending:
                    starts.append(w)
                pending = False
    return starts, words


def _recase_restored(doc: Doc) -> str:
    """``doc._.restored_text`` re-cased: the re-cased input (``doc._.truecased_text``, the same
    characters up to case) with the restoration's insertions (``doc._.restored_edits``)."""
    from spacy_punctgen.pipeline.restore import apply_edits

    edits = doc._.restored_edits
    if edits is None:
        raise ValueError(Errors.E086.format(n=len(doc), got=0))
    return apply_edits(doc._.truecased_text, edits["insertions"], edits["deletions"])


# ----------------------------------------------------------------- shipping and evaluation
def ship_truecaser(src: PathLike, dest: PathLike, train: Optional[PathLike] = None, *,
                   license_name: str = "CC BY-SA 4.0", source: str = "UD English EWT") -> Path:
    """Write the trained truecaser pipeline ``src`` (``spacy train``'s ``model-best``) to
    ``dest`` (the package's ``shipped/<treebank>_truecase/``), replacing what was there, with the
    words of ``train`` (the treebank it was trained on, a CoNLL-U file or a UD folder's train
    split: :func:`training_words`) as its :attr:`TrueCaser.train_words` (without ``train``: the
    words ``src`` has, if any), and its meta naming its data and the licence its weights and word
    list inherit (workflow ``ship-truecaser``)."""
    import spacy

    nlp = spacy.load(src)
    pipes = [nlp.get_pipe(n) for n in nlp.pipe_names if nlp.get_pipe_meta(n).factory == FACTORY]
    if not pipes:
        raise ValueError(Errors.E087.format(path=src, pipes=", ".join(nlp.pipe_names)))
    if train is not None:
        words = training_words(depunct_words(train, "train" if Path(train).is_dir() else None))
        for pipe in pipes:
            pipe.train_words = words
    description = ("Case classes (lower, Title, UPPER, mixed forms) of lowercased, depunctuated words "
                   "(spacy-punctgen's shipped truecaser)")
    if all(pipe.train_words is not None for pipe in pipes):
        description += (f"; {FACTORY}/{TRAIN_WORDS_FILE}: the lowercase words of its training text, {source} "
                        f"train ({license_name})")
    return write_shipped(nlp, dest, name="ewt_truecase" if source == "UD English EWT" else Path(dest).name,
                         license_name=license_name, source=source, description=description)


def case_accuracy(pairs: Iterable[Tuple[str, str, bool]]) -> Dict[str, float]:
    """Case accuracy over ``(gold form, predicted form, sentence start)`` triples: all tokens,
    tokens whose gold is not lowercase, gold sentence-initial tokens (exact form equality)."""
    n = ok = n_cased = ok_cased = n_start = ok_start = 0
    for gold, pred, start in pairs:
        hit = gold == pred
        n += 1
        ok += hit
        if gold != gold.lower():
            n_cased += 1
            ok_cased += hit
        if start:
            n_start += 1
            ok_start += hit
    return {"case_acc": ok / n if n else 0.0, "case_acc_not_lower": ok_cased / n_cased if n_cased else 0.0,
            "sent_start_acc": ok_start / n_start if n_start else 0.0,
            "n_tokens": n, "n_not_lower": n_cased, "n_sent_starts": n_start}


def evaluate_gold_sentences(nlp: Language, sentences: Sequence[Sequence[str]]) -> Dict[str, float]:
    """The truecaser alone on each gold sentence (lowercased words, one Doc each): its first
    word is the sentence start."""
    docs = nlp.pipe(Doc(nlp.vocab, words=[w.lower() for w in s]) for s in sentences)
    pairs = ((g, t._.truecase, k == 0) for s, doc in zip(sentences, docs) for k, (g, t) in enumerate(zip(s, doc)))
    return case_accuracy(pairs)


def evaluate_streams(nlp: Language, sentences: Sequence[Sequence[str]], n_sents: int = 10,
                     lower: bool = True) -> Dict[str, float]:
    """A whole pipeline (parser, ``punctgen`` restore, truecaser) on streams of ``n_sents``
    gold sentences joined with spaces (lowercased when ``lower``): each gold word is compared
    with the cased form of the token that spans exactly its characters (words the tokenizer
    splits or joins are counted in ``n_unaligned`` and left out)."""
    pairs, unaligned = [], 0
    for start in range(0, len(sentences), n_sents):
        block = sentences[start:start + n_sents]
        gold = [w for s in block for w in s]
        first = set(numpy.cumsum([0] + [len(s) for s in block[:-1]]).tolist())
        text = " ".join(w.lower() if lower else w for w in gold)
        doc = nlp(text)
        by_start = {t.idx: t for t in doc}
        offset = 0
        for g, word in enumerate(gold):
            tok = by_start.get(offset)
            if tok is None or len(tok.text) != len(word):
                unaligned += 1
            else:
                pairs.append((word, tok._.truecase, g in first))
            offset += len(word) + 1
    res = case_accuracy(pairs)
    res["n_unaligned"] = unaligned
    return res


def baseline_most_frequent(train: Sequence[Sequence[str]], sentences: Sequence[Sequence[str]]) -> Dict[str, float]:
    """Reference figure: each word in its most frequent form inside training sentences
    (lowercase if unseen), the first word of each gold sentence capitalised."""
    best = {w: c.most_common(1)[0][0] for w, c in inside_counts(train).items()}
    pairs = []
    for s in sentences:
        for k, g in enumerate(s):
            form = apply_case(g, best.get(g.lower(), LOWER))
            pairs.append((g, capitalize_start(form) if k == 0 else form, k == 0))
    return case_accuracy(pairs)
