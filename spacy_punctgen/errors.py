"""Every user-facing error message of the plugin, in one place (spaCy style)."""


class Errors:
    E001 = ("[E001] The 'punctgen' component needs a dependency parse, but the Doc has none. "
            "Add a UD-trained parser before it, e.g. nlp.add_pipe('parser', source=...) or a "
            "spacy_udpipe pipeline, or set token.head/token.dep_ yourself.")
    E002 = ("[E002] The 'punctgen' component needs Universal Dependencies relation labels, but the "
            "parse uses {labels} (e.g. on token {token!r} at index {i}). spaCy's stock English "
            "pipelines use ClearNLP labels; use a UD-trained parser (see the README).")
    E003 = ("[E003] The 'punctgen' component has no trained model. Pass "
            "config={'model': PATH} to nlp.add_pipe, or load a pipeline saved with one.")
    E004 = "[E004] Cannot read the punctgen model at {path}: {reason}"
