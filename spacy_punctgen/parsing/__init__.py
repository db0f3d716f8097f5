"""Layer 4.5, parsing: helpers around spaCy's parser that restoration needs.

Several trees per sentence from one parser: the beam's k best and trees drawn from the
parser's transition probabilities (:mod:`.kbest`, the ``punctgen_kbest`` component;
:mod:`.parser_samples`), and the restore tokenizer with the ``punctgen_words`` component that
keep the user's words whole (:mod:`.words`); paper 002's punctuation as properties of the
neighbouring words, with the embed layer and corpus reader of its parser (:mod:`.punct_properties`).
"""
