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

    # decoding (spacy_punctgen/decode/) and the DP wrapper (spacy_punctgen/inference/dp.py)
    E100 = "[E100] {n_slots} slots for {n_words} words: a sentence of n words has n + 1 slots"
    E101 = "[E101] {name}: has no words; there is no tree to punctuate"
    E102 = "[E102] {name}: {count} {field} for {n} words"
    E103 = "[E103] {name}: bad heads {heads}: {err}"
    E104 = ("[E104] restoration needs a prior p(T'|T) that factorises over nodes, but this model uses the "
            "surface template(s) {templates}, which condition a node's punctuation on the surface "
            "punctuation inside it; train without them")
    E105 = "[E105] the channel moved or deleted '^' (a model whose channel may do that is broken)"
    E106 = "[E106] n_samples must be at least 1, not {n_samples}"
    E107 = "[E107] sentence #{k}: no trees to restore from"
    E108 = ("[E108] sentence #{k} ({sent_id!r}): tree {j} has the words {words_j}..., tree 0 {words_0}...: "
            "a mixture needs trees of the same words")
    E109 = "[E109] method must be one of {methods}, not {method!r}"
    E110 = "[E110] puncteme 0 must be the empty puncteme ()"
    E111 = "[E111] puncteme {i} {p} has symbol {s} outside 0..{last}"
    E112 = "[E112] cannot build a lattice for a sentence with no words"
    E113 = "[E113] expected {n_slots} slots for {n} words, got {got}"
    E114 = "[E114] slot 0 must start with the '^' symbol (id 0)"
    E115 = "[E115] expected candidate pairs for {n} nodes, got {got}"
    E116 = "[E116] slot {i} has symbol id {s} outside 0..{last}"
    E117 = "[E117] node {node} has a candidate puncteme id outside 0..{last}"
    E118 = "[E118] {name} must have shape ({n},), got {shape}"
    E119 = "[E119] candidate probabilities must be finite and non-negative"
    E120 = ("[E120] the lattice uses symbol id {sym} and puncteme id {pm}, outside this grammar ({n_sym} "
            "symbols, {n_pm} punctemes): build the lattice with the grammar you run the DP with")
    E121 = "[E121] phi must have shape ({S}, {S}, 4), got {shape}"
    E122 = "[E122] channel probabilities phi must be finite and non-negative"
    E123 = "[E123] the surface punctuation is impossible under the model: nothing to sample"
