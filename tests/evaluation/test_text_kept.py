from spacy_punctgen.evaluation.text_kept import altered_words


def test_marks_at_edges_are_not_alterations():
    got = altered_words("when i came home he left", "When i came home, “he left.”")
    assert got["altered"] == 1 and got["examples"] == ["when"]  # case is a change


def test_inserted_dash_tokens_are_allowed_and_lost_characters_counted():
    assert altered_words("a b c", "a — b, c.")["altered"] == 0
    got = altered_words("of '67 by 2013-2014", "of 67 by 2013-,2014.")
    assert got["altered"] == 2 and got["examples"] == ["'67", "2013-2014"]


def test_a_dropped_word_is_counted():
    assert altered_words("one two three", "one, three.")["altered"] == 1


def test_tokens_of_marks_in_the_input_are_words_too():
    assert altered_words("a & b ... c", "a & b..., ... c.")["altered"] == 0
    assert altered_words("a & b", "a b")["altered"] == 1
