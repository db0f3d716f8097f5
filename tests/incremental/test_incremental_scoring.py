"""Attachment scores of streams: a parse's tokens aligned to the stream's words (a split word takes
the head of its root token), and UAS counted as evaluate.py counts CPP's and UPP's."""
import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_punctgen.incremental.scoring import align_tokens, attachment_scores


def test_one_token_a_word_is_the_tokens_own_tree():
    words = ["when", "i", "came", "he", "left"]
    starts = [0, 5, 7, 12, 15]
    heads, head_tokens = align_tokens(words, starts, [2, 2, 4, 4, 4])
    assert heads == [2, 2, 4, 4, -1] and head_tokens == [0, 1, 2, 3, 4]


def test_a_split_word_takes_its_root_tokens_head():
    # "e-mail me now" tokenised e / - / mail / me / now; "me" the root
    words = ["e-mail", "me", "now"]
    heads, head_tokens = align_tokens(words, [0, 1, 2, 7, 10], [2, 2, 3, 3, 3])
    assert heads == [1, -1, 1] and head_tokens == [2, 3, 4]
    # the split word holds the root (its head token points to itself)
    heads, head_tokens = align_tokens(words, [0, 1, 2, 7, 10], [2, 2, 2, 2, 3])
    assert heads == [-1, 0, 1] and head_tokens == [2, 3, 4]


def test_a_spacy_parse_through_offsets_and_head_indices():
    """As cascade_uas.py reads a parse: token.idx (plus the piece's offset) and token.head.i."""
    words = ["e-mail", "me", "now", "thanks"]
    doc = Doc(Vocab(), words=["e", "-", "mail", "me", "now", "thanks"], spaces=[False, False, True, True, True, False],
              heads=[2, 2, 3, 3, 3, 5], deps=["dep"] * 6, sent_starts=[True, False, False, False, False, True])
    assert doc.text == " ".join(words)
    heads, _ = align_tokens(words, [t.idx for t in doc], [t.head.i for t in doc])
    assert heads == [1, -1, 1, -1]
    # a second piece of the same text: offsets and indices shifted by the first piece's
    second = Doc(Vocab(), words=["thanks"], heads=[0], deps=["ROOT"])
    first = doc[:5].as_doc()
    starts = [t.idx for t in first] + [len(first.text) + 1 + t.idx for t in second]
    token_heads = [t.head.i for t in first] + [len(first) + t.head.i for t in second]
    assert align_tokens(words, starts, token_heads)[0] == heads


@pytest.mark.parametrize("starts, token_heads, problem", [
    ([0, 7], [0, 0], "word 2"),              # "now" has no token
    ([0, 7, 10], [0, 0], "token offsets"),     # lengths differ
    ([0, 7, 7], [0, 0, 0], "token 2"),         # not after the token before it
    ([0, 7, 14], [0, 0, 0], "token 2"),        # past the end of the text
    ([0, 7, 10], [0, 3, 0], "head token 3"),
])
def test_tokens_that_do_not_cover_the_words_are_errors(starts, token_heads, problem):
    with pytest.raises(ValueError, match="E936") as err:
        align_tokens(["e-mail", "me", "now"], starts, token_heads)
    assert problem in str(err.value)


def test_attachment_scores_count_roots_as_evaluate_did():
    predicted = [[-1, 0, 0], [1, -1]]
    gold = [[-1, 0, 1], [1, -1]]
    got = attachment_scores(predicted, gold)
    # evaluate.py's own formulas before they moved here
    pairs = [(a, b) for p, g in zip(predicted, gold) for a, b in zip(p, g)]
    nonroot = [(a, b) for a, b in pairs if b >= 0]
    assert got["uas"] == sum(a == b for a, b in pairs) / len(pairs) == 4 / 5
    assert got["uas_nonroot"] == sum(a == b for a, b in nonroot) / len(nonroot) == 2 / 3
    assert (got["n_words"], got["n_nonroot"], got["right"], got["right_nonroot"]) == (5, 3, 4, 2)
    assert attachment_scores([], [])["uas"] == 0.0


def test_unpaired_heads_are_errors():
    with pytest.raises(ValueError, match="E935"):
        attachment_scores([[0]], [[0], [1]])
    with pytest.raises(ValueError, match="E935"):
        attachment_scores([[0, -1]], [[-1]])
