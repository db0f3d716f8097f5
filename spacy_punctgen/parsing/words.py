"""The restore tokenizer and the ``punctgen_words`` component: the words of a user's text stay words.

Why: restoration inserts marks between the user's words, so the tokenizer must not split a word
at an inner hyphen or slash, and a word the parser labels ``punct`` must not be taken for
punctuation. Both are set up by :func:`spacy_punctgen.api.load.restore_parser`.
"""
from __future__ import annotations

import re

#: the restore pipeline's component between parser and punctgen (:func:`words_stay_words`)
WORDS_COMPONENT = "punctgen_words"


def words_stay_words(doc):
    """Restore mode: a token that is not punctuation by its characters (``token.is_punct``) is
    a word, whatever the tagger and parser say. The ``punctgen`` component treats UPOS ``PUNCT``
    or relation ``punct`` as punctuation and restoration replaces punctuation, so a word the
    parser (which also learnt punctuated text) labels ``punct`` would vanish from the output;
    such a word gets UPOS ``X`` / relation ``dep`` instead (its head is kept)."""
    for token in doc:
        if token.is_punct or token.is_space:
            continue
        if token.pos_ == "PUNCT":
            token.pos_ = "X"
        if token.dep_.split(":")[0].lower() == "punct":
            token.dep_ = "dep"
    return doc


def make_words_component(nlp, name: str):
    """The ``punctgen_words`` factory (registered when this module is imported, and by the
    ``spacy_factories`` entry point, so a saved restore pipeline loads with ``spacy.load``)."""
    return words_stay_words


def register_words_component() -> None:
    from spacy.language import Language

    if not Language.has_factory(WORDS_COMPONENT):
        Language.factory(WORDS_COMPONENT, func=make_words_component,
                         assigns=["token.pos", "token.dep"], requires=["token.pos", "token.dep"])


register_words_component()


#: a tokenizer exception that is an abbreviation: letters and inner dots, ending in a dot
ABBREVIATION = re.compile(r"[A-Za-z][A-Za-z.]*\.")
#: initialisms: letters each followed by a dot (``u.s.``, ``e.g.``)
INITIALISM = re.compile(r"(?:[A-Za-z]\.){2,}")
#: lower-case abbreviations that spaCy's English exceptions lack
LOWER_ABBREVIATIONS = ("etc.", "vs.", "approx.", "dept.")
#: words the restore tokenizer must not split (UD English writes each as one word)
WHOLE_WORDS = ("e-mail", "twenty-one", "well-known", "and/or")


def keep_words_whole(nlp) -> None:
    """Restore mode: drop the tokenizer's infix rules that split a word at an inner hyphen or
    slash (``e-mail``, ``and/or``). Restoration replaces every punctuation token of its input, so
    a split ``e - mail`` would come back as ``email``: the words must stay whole, as UD English
    writes them."""
    from spacy.tokenizer import Tokenizer
    from spacy.util import compile_infix_regex

    if not isinstance(nlp.tokenizer, Tokenizer):  # e.g. a Chinese word segmenter: no rules to adjust
        return

    infixes = [p for p in nlp.Defaults.infixes if not any(re.search(p, w) for w in WHOLE_WORDS)]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    # lowercased (ASR) text writes abbreviations in lower case: ``mr.``, ``u.s.``, ``inc.`` stay
    # one word like the tokenizer's cased exceptions ``Mr.``, ``U.S.``, ``Inc.``, so their dot is
    # not taken for punctuation and dropped
    from spacy.symbols import ORTH

    rules = nlp.tokenizer.rules or {}
    for key, pieces in nlp.Defaults.tokenizer_exceptions.items():
        low = key.lower()
        if low != key and low not in rules and ABBREVIATION.fullmatch(key) and len(pieces) == 1:
            nlp.tokenizer.add_special_case(low, [{ORTH: low}])
    for word in LOWER_ABBREVIATIONS:
        nlp.tokenizer.add_special_case(word, [{ORTH: word}])
    # initialisms of any letters: ``u.s.``, ``e.g.``, ``p.o.``
    # (a compiled pattern's ``match``, so that the tokenizer saves it with the pipeline)
    earlier = getattr(nlp.tokenizer.token_match, "__self__", None)
    pattern = f"(?:{INITIALISM.pattern})$" + (f"|{scoped_pattern(earlier)}" if earlier is not None else "")
    nlp.tokenizer.token_match = re.compile(pattern).match


#: global inline flags at the start of a pattern, e.g. French's token_match ``(?iu)...``
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


def scoped_pattern(compiled: "re.Pattern") -> str:
    """``compiled`` as a group that can be joined to other alternatives: its global flags (inline
    at its start, e.g. French's ``(?iu)``, or given to ``re.compile``) become the group's own
    (``(?i:...)``); ``u`` is the default of str patterns anyway."""
    found = _GLOBAL_FLAGS.match(compiled.pattern)
    body = compiled.pattern[found.end():] if found else compiled.pattern
    letters = set(found.group(1)) if found else set()
    letters |= {c for c, flag in (("i", re.I), ("m", re.M), ("s", re.S), ("x", re.X)) if compiled.flags & flag}
    letters &= set("imsx")
    return f"(?{''.join(sorted(letters))}:{body})" if letters else f"(?:{body})"
