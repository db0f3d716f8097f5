"""Issue 38's truecaser faults (spacy_punctgen/truecasing/truecaser.py): hesitations written
as acronyms (``um`` -> ``UM``) and e-mail addresses, URLs and file paths re-cased
(``John.smith@example.com``).

The rules are checked on a truecaser whose every prediction is forced (``set_annotations``
with chosen classes at p = 1), so they hold whatever a model predicts; the shipped truecaser
is checked on the sentences the faults were seen in (skipped where it is absent)."""
import numpy
import pytest
import spacy

from spacy_punctgen.api.load import load, shipped_parser_path, shipped_truecaser_path
from spacy_punctgen.truecasing.truecaser import (FACTORY, HESITATIONS, LOWER, TITLE, UPPER, is_verbatim,
                                              verbatim_tokens)


def _missing(fn):
    try:
        fn("en")
    except ValueError as err:
        return str(err)
    return ""


WHY = _missing(shipped_parser_path) or _missing(shipped_truecaser_path)
needs_shipped = pytest.mark.skipif(bool(WHY), reason=f"no shipped parser or truecaser: {WHY}")


@pytest.fixture(scope="module")
def forced():
    """``forced(text, label)``: the Doc of ``text`` annotated as if the model predicted
    ``label`` for every word with probability 1."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(FACTORY)
    for label in (LOWER, TITLE, UPPER):
        pipe.add_label(label)

    def run(text: str, label: str):
        doc = nlp.make_doc(text)
        ix = [t.i for t in doc if not (t.is_punct or t.is_space)]
        ids = numpy.full(len(ix), pipe.labels.index(label), dtype="i")
        pipe.set_annotations([doc], [(ix, ids, numpy.ones(len(ix), dtype="f"))])
        assert doc._.truecased_text.lower() == text.lower() and len(doc._.truecased_text) == len(text)
        return doc._.truecased_text

    return run


# ----------------------------------------------------------------- hesitations
@pytest.mark.parametrize("label", [UPPER, TITLE])
def test_a_hesitation_stays_lowercase_inside_a_sentence(forced, label):
    out = forced("well um we should uh look at it er hmm mm", label)
    words = out.split()
    assert [w for w in words if w.lower() in HESITATIONS] == ["um", "uh", "er", "hmm", "mm"]
    assert words[0] == ("WELL" if label == UPPER else "Well")  # the other words take the class
    assert words[3] == ("SHOULD" if label == UPPER else "Should")


def test_a_hesitation_starting_a_sentence_is_capitalised(forced):
    assert forced("um. uh i see", UPPER) == "Um. Uh I SEE"


def test_a_written_hesitation_keeps_its_case_in_cased_input(forced):
    # cased input (a capital somewhere): a confident UPPER would have made "um" "UM"
    assert forced("So I said um no", UPPER) == "So I SAID um NO"
    assert forced("So I said UM no", LOWER) == "So I said UM no"  # the writer's capitals stay


# ----------------------------------------------------------------- addresses, URLs, paths
@pytest.mark.parametrize("chunk", [
    "john.smith@example.com", "john.smith@example.com.", "forster@enron", "@jsmith", "www.example.com",
    "https://github.com/foo/bar", "example.org", "report.doc", "/usr/local/bin", "~/notes",
    "./run.sh", "c:\\users\\john\\report.doc", "c:/users/john", "src/main/java",
])
def test_an_address_url_or_path_keeps_its_case(forced, chunk):
    for label in (UPPER, TITLE):
        assert forced(f"write to {chunk} today", label).split()[2] == chunk
        # a sentence's first word too: the capital would be inside the address
        assert forced(f"{chunk} is it", label).split()[0] == chunk


def test_a_written_address_keeps_its_capitals(forced):
    assert forced("Write to John.Smith@Example.COM now", LOWER) == "Write to John.Smith@Example.COM now"


@pytest.mark.parametrize("chunk", ["and/or", "hello", "u.s.", "e.g.", "3.5", "mid-july", ":)"])
def test_ordinary_words_are_not_verbatim(forced, chunk):
    assert not is_verbatim(chunk, spacy.blank("en").make_doc(chunk))
    assert forced(f"and {chunk} so", UPPER).split()[1] == chunk.upper()


def test_verbatim_tokens_judges_the_whitespace_separated_chunk():
    doc = spacy.blank("en").make_doc("mail (john.smith@example.com) or see /usr/local/bin")
    verbatim = {doc[i].text for i in verbatim_tokens(doc)}
    assert {"john.smith@example.com", "(", ")"} <= verbatim and "mail" not in verbatim and "see" not in verbatim
    assert "".join(doc[i].text_with_ws for i in verbatim_tokens(doc)
                   if doc[i].idx >= doc.text.index("/usr")) == "/usr/local/bin"


# ----------------------------------------------------------------- the shipped truecaser
@pytest.fixture(scope="module")
def shipped():
    return load("en", truecase=True)


@needs_shipped
def test_shipped_truecaser_leaves_hesitations_lowercase(shipped):
    text = "okay so um welcome back everyone today we will talk about the plan and uh the budget"
    out = shipped(text)._.restored_text
    assert out.lower().replace(",", "").replace(".", "") == text
    assert " um " in out.replace(",", "") and " uh " in out.replace(",", "")  # were "UM", "UH"
    alone = spacy.load(shipped_truecaser_path("en"))
    assert alone("um i think we should uh look at it")._.truecased_text == "Um I think we should uh look at it"


@needs_shipped
def test_shipped_truecaser_keeps_addresses_as_written(shipped):
    out = shipped("please write to john.smith@example.com or visit www.example.com today")._.restored_text
    assert "john.smith@example.com" in out and "www.example.com" in out  # was "John.smith@example.com"
    alone = spacy.load(shipped_truecaser_path("en"))
    assert alone("john.smith@example.com is my address")._.truecased_text == "john.smith@example.com is my address"
    assert alone("you can email mary at mary.jones@enron.com")._.truecased_text.endswith(" mary.jones@enron.com")
