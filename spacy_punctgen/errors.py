"""Every user-facing error message of the plugin, in one place (spaCy style)."""


class Errors:
    E001 = ("[E001] The 'punctgen' component needs a dependency parse, but the Doc has none. "
            "Add a UD-trained parser before it, e.g. nlp.add_pipe('parser', source=...) or a "
            "spacy_udpipe pipeline, or set token.head/token.dep_ yourself.")
    E002 = ("[E002] The 'punctgen' component needs Universal Dependencies relation labels, but the "
            "parse uses {labels} (e.g. on token {token!r} at index {i}). spaCy's stock English "
            "pipelines use ClearNLP labels; use a UD-trained parser (see the README).")
    E003 = ("[E003] The 'punctgen' component has no trained model and none ships for language "
            "{lang!r}. Pass config={{'model': PATH}} to nlp.add_pipe, load a pipeline saved with "
            "one, or train one (nlp.initialize with gold-parsed Examples, or spacy train).")
    E004 = "[E004] Cannot read the punctgen model at {path}: {reason}"
    E005 = ("[E005] The 'punctgen' component cannot initialize: none of the {n} Examples' reference "
            "Docs has a UD dependency parse with at least one word, so there is nothing to build the "
            "punctuation inventory from. Give nlp.initialize gold-parsed Examples (e.g. a corpus "
            "from `spacy convert` of a UD treebank).")
    E006 = ("[E006] insert_punctuation needs a Doc processed by a 'punctgen' component with "
            "mode='restore' (doc._.restored_punct is None).")
    E007 = ("[E007] doc._.restored_punct does not match the Doc: sentence {sentence} has {n} slots "
            "but {got} restored entries. Was the Doc re-parsed after restoration?")
    E008 = "[E008] The 'punctgen' setting {name} must be one of {allowed}, not {value!r}."
    E009 = ("[E009] The 'punctgen' component must be initialized before it is trained: call "
            "nlp.initialize(get_examples) with gold-parsed Examples (spacy train does).")
