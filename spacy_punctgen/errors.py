"""Every user-facing error and warning message of the plugin, in one place (spaCy style).

Raise ``ValueError(Errors.E004.format(path=..., reason=...))``, warn with
``warnings.warn(Warnings.W001.format(...))``; every message starts with its code in brackets,
which equals its attribute name (``tests/test_errors.py`` checks that, and that no library
module raises an inline message instead).  Codes are grouped by the subpackage that raises
them, so a new message takes the next free code of its block:

* ``E001``-``E099``: the spaCy component (``pipeline/``), the parser helpers (``parsing/``) and
  the user-facing entry points (``api/``), as they were written before those moved out of it
  (E017-E019 ``punctgen correct FILE.conllu``; E020-E023 length limits, damaged pipeline files and
  non-finite settings; E030-E032 the truecaser's unseen words)
* ``E100``-``E199``: decoding (``decode/``) and the DP wrapper (``inference/``); E190-E191
  restoration conditioned on a text's own marks, E192-E194 class factors in the marginal kernel;
  E195-E198 paper 002's punctuation properties (``parsing/punct_properties.py``)
* ``E200``-``E499``: the model (``model/``, ``features/``) and whatever else its layers need
* ``E500``-``E539``: reading and converting treebanks (``data/``)
* ``E540``-``E559``: evaluation (``evaluation/``)
* ``E560``-``E569``: training (``training/``)
* ``E570``-``E599``: the restoration baselines (``baselines/``)
* ``E600``-``E609``: the benchmark (``bench/``)
* ``E610``-``E699``: the command line (``cli/``)
* ``E700``-``E749``: the workflow's helpers (``workflow/``)
* ``E750``-``E899``: written later, by subpackage: evaluation E760-E767, E772-E773, E790-E791,
  E831-E832, E860-E862, E869; data E768-E771, E820-E822; cli E774-E775, E788-E789,
  E793-E795, E833-E835, E884; api E776-E787, E870, E880-E883; decode E825-E830, E841-E842,
  E863-E868, E885-E886; model E836-E840; training E844-E845; parsing E887-E890
* ``E900``-``E919``: the companion comma systems (``baselines/trigram_hmm.py``, ``crf_syntax.py``;
  E909-E910 their significance tests)
* ``E920``-``E939``: the incremental parser-punctuators (CPP, UPP) and live mode (``incremental/``,
  ``inference/incremental.py``; E938-E939 live mode over a pipeline, ``api/window_live.py``)
* ``E940``-``E959``: file formats: insertions, subtitles, word timestamps (``formats/``)
* ``E960``-``E979``: decoders that were removed (``decode/``); E961-E969 an incremental model's soft
  evidence for restoration (``incremental/evidence.py``, ``decode/incremental_evidence.py``)
* ``E980``-``E982``: restoration that keeps the user's text, on the command line (``cli/``);
  ``E983``-``E989``: ``punctgen adapt`` (``workflow/adapt.py``)
* ``W001``-: warnings
"""


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
    E010 = ("[E010] no punctuation model ships for language {lang!r} (shipped: {shipped}); train one with "
            "`punctgen train`")
    E011 = ("[E011] the model shipped for language {lang!r} is incomplete: {path} lacks {missing} (broken "
            "installation?)")
    E012 = "[E012] punctgen computes its loss and gradient inside update()"
    E013 = ("[E013] Cannot load the 'punctgen' component from {path}: its model directory {model_dir} is "
            "missing (saved with exclude=['model'], or copied only in part?). Save the component with its "
            "model, or load it with exclude=['model'] to keep the model it was created with.")
    E014 = ("[E014] The 'punctgen' component has no model to save: it was given none (config={{'model': "
            "PATH}}), was not trained (nlp.initialize) and none ships for language {lang!r}. Train it first, "
            "or save only its settings with exclude=['model'].")
    E016 = ("[E016] The parse of the sentence at tokens {start}-{end} is not a tree: the heads of tokens "
            "{cycle} form a cycle, so no word reaches a root. Give each sentence heads that lead to a root "
            "(a token whose head is itself).")
    # correcting treebank sentences with their own trees (pipeline/correct.py)
    E017 = ("[E017] {where}: word {i} ({form!r}) has the relation {label!r}, which is not a Universal "
            "Dependencies relation; correcting a CoNLL-U file needs its UD trees")
    E018 = "[E018] {where}: the sentence cannot be made a spaCy Doc: {err}"
    # limits and damaged files (api/stream.py, api/load.py, pipeline/component.py)
    E020 = ("[E020] Text of length {length} exceeds nlp.max_length ({max_length}), the longest text nlp(text) and "
            "nlp.pipe take (as in spaCy, E088). This pipeline parses in windows of {chunk_chars} characters, so the "
            "parser's memory does not grow with the text, but the Doc does (a few hundred bytes a token): raise the "
            "limit (nlp.max_length = {length} or more), or punctuate the text with "
            "spacy_punctgen.restore_text(nlp, text), which takes text of any length in bounded memory.")
    E021 = ("[E021] Cannot load the 'punctgen' component from {path}: its settings file {file} is damaged "
            "({reason}). Save the pipeline again (nlp.to_disk) or copy that file again from the saved pipeline.")
    E022 = ("[E022] Cannot load the spaCy pipeline {path}: {file} is damaged ({reason}; truncated or "
            "overwritten?). Save the pipeline again (nlp.to_disk) or copy that file again from the saved pipeline.")
    E023 = ("[E023] The 'punctgen' setting {name} must be a finite number{allowed}, not {value!r}: spaCy cannot "
            "write nan or infinity into a pipeline's config.")
    # distributed restoration (api/distributed.py)
    E024 = ("[E024] {address} answers, but not as a Dask scheduler (it sent {got!r} first): is it the "
            "scheduler's port (8786 by default), not its dashboard or another service?")
    E025 = ("[E025] texts must be an iterable of str (one text each), not a single str, whose characters "
            "would be punctuated one by one: pass [text]")
    # the sentence-end expert (model/sentence_end.py)
    E026 = ("[E026] the sentence-end expert's {name} must be {allowed}, not {value!r}")
    E027 = ("[E027] cannot use the sentence-end expert: {problem}")
    E028 = ("[E028] the sentence-end expert needs at least one training sentence with words")
    E029 = ("[E029] no sentence-end expert ships for language {lang!r} in this installation: pass a folder "
            "(sentence_end=PATH) or leave it out (sentence_end=None)")
    # the truecaser's unseen words (truecasing/truecaser.py)
    E030 = ("[E030] the 'punctgen_truecase' setting unseen_standins must be a whole number, 0 or more (0: unseen "
            "words are predicted from their own string), not {value!r}")
    E031 = ("[E031] Cannot load the truecaser's training words {path}: {reason}. The file holds one lowercase "
            "word a line (UTF-8): write it again (ship_truecaser, workflow command ship-truecaser), or delete it "
            "to predict unseen words from their own string, as a truecaser saved without it does.")
    E032 = "[E032] a truecaser's training words must be non-empty strings without a line break, not {word!r}"
    E070 = ("[E070] render needs a Doc processed by a 'punctgen' component (doc._.underlying_punct and "
            "doc._.restored_punct are both None): run nlp with punctgen first, e.g. nlp.add_pipe('punctgen').")
    E071 = ("[E071] The punctgen annotations do not match the Doc: sentence {sentence} has {n} slots but {got} "
            "entries. Was the Doc re-parsed or re-segmented after punctgen ran?")
    E072 = "[E072] render: {what} must be {expected}, not {got}."
    E073 = "[E073] render: cannot read the punctgen model at {path}: {reason}"
    E074 = "[E074] render: the spaCy pipeline given as model has no 'punctgen' component (pipes: {pipes})."
    E075 = "[E075] {path}: not UTF-8 text ({err})"
    E076 = "[E076] render: {name} must be one of {allowed}, not {value!r}."
    E077 = ("[E077] No such input file: {path} (its name looks like a file's; to render a literal text, pass "
            "the text itself)")
    E079 = "[E079] Cannot load the spaCy pipeline {name!r}: {err}"
    E096 = "[E096] no sample transcript ships for language {lang!r} ({path} not found)"
    E097 = "[E097] k (trees per sentence from the parser's beam) must be an integer from 1 to 1024, not {k!r}"
    E098 = "[E098] the pipeline has no component named 'parser' (it has {pipes}): k-best trees need a spaCy parser"
    E099 = "[E099] trees of a sentence from the parser's beam: {problem}"

    # shipped pipelines and long input (spacy_punctgen/api/load.py, pipeline/stream.py)
    E050 = "[E050] spacy_punctgen.load: mode must be 'restore', 'analyze' or 'correct', not {mode!r}"
    E051 = ("[E051] no parser ships for language {lang!r} (shipped: {shipped}); pass parser=PATH (a spaCy "
            "pipeline with a UD parser) and model=PATH")
    E052 = ("[E052] the parser shipped for language {lang!r} is incomplete: {path} lacks {missing} (broken "
            "installation? reinstall spacy-punctgen)")
    E053 = ("[E053] {path} is not a spaCy pipeline with a dependency parser (pipes: {pipes}); "
            "spacy_punctgen.load needs one that predicts UD trees")
    E054 = ("[E054] single_sentence_words (the most words of an input parsed as one sentence) must be an "
            "integer >= 0 (0: never), not {value!r}")
    E056 = "[E056] chunk_chars must be an integer of at least 100, not {value!r}"
    E057 = "[E057] expected the text as a str, got {type}"
    E058 = ("[E058] restoring text needs a 'punctgen' component in mode 'restore' (pipes: {pipes}); use "
            "spacy_punctgen.load(lang) or nlp.add_pipe('punctgen', config={{'mode': 'restore'}})")

    # capitalisation (spacy_punctgen/truecasing/truecaser.py, load(truecase=...))
    E081 = "[E081] a word to case must be a non-empty str, not {word!r}"
    E082 = "[E082] a case class must be 'lower', 'Title', 'UPPER' or a non-empty mixed-case form, not {label!r}"
    E083 = "[E083] truecase_docs: {name} must be an integer of at least 1, not {value!r}"
    E084 = "[E084] the 'punctgen_truecase' setting cased_threshold must be a number from 0 to 1, not {value!r}"
    E085 = ("[E085] The '{name}' truecaser has no case classes: it was not trained. Train it (nlp.initialize "
            "with Examples whose reference tags are case classes, or spacy train configs/truecase.cfg) or use "
            "the shipped one: spacy_punctgen.load(lang, truecase=True).")
    E086 = ("[E086] the restored text does not match the Doc ({n} restored words, {got} in the text of "
            "insert_punctuation): was the Doc changed after the 'punctgen' component ran?")
    E087 = ("[E087] {path} is not a spaCy pipeline with a 'punctgen_truecase' component (pipes: {pipes}); "
            "train one with the workflow command train-truecaser")
    E088 = ("[E088] spacy_punctgen.load: truecase must be True, False or the path of a truecaser pipeline, "
            "not {value!r}")
    E089 = ("[E089] no truecaser ships for language {lang!r} (shipped: {shipped}); pass truecase=PATH (a "
            "pipeline from the workflow command train-truecaser)")
    E090 = ("[E090] the truecaser shipped for language {lang!r} is incomplete: {path} lacks {missing} (broken "
            "installation? reinstall spacy-punctgen)")

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
    # spacy_punctgen/inference/_dp (cython_ext/dp.pyx): the compiled core's own checks
    E150 = "[E150] grammar: pm_tail and pm_head must have one entry per puncteme"
    E151 = "[E151] phi must have shape ({S}, {S}, 4), got {shape}"
    E152 = "[E152] unknown semiring mode {mode!r}: use 'sum' or 'max'"
    E153 = "[E153] cand_p has {got} entries, the lattice has {K} candidates"
    E154 = "[E154] counts_out must be a C-contiguous float64 array of {size} entries"
    E155 = "[E155] uniforms must have one column per word ({n}), got {got}"
    E156 = "[E156] cand_l, cand_r and node must have one length"
    E157 = "[E157] candidate nodes must be non-decreasing and within the sentence"
    E158 = "[E158] candidate {k} has a puncteme id outside 0..{last}"
    E124 = "[E124] minimum-Bayes-risk choice needs at least one candidate and one support string"
    E125 = "[E125] {n_weights} weights for {n_support} support strings"
    E126 = ("[E126] n_samples must be an integer from 1 to {max} (decode.mbr.MAX_SAMPLES), not {n_samples!r}: "
            "time and memory grow with it (about 1 MB per 1,000 samples and word)")
    E127 = ("[E127] seed must be a non-negative integer (or None for fresh randomness), not {seed!r}")
    # the compiled slot-marginal decoder (decode/marginal.py, cython_ext/slot_mbr.pyx)
    E170 = "[E170] phi must have shape ({S}, {S}, 4) for the grammar's {S} symbols, got {shape}"
    E171 = "[E171] channel probabilities phi must be finite and non-negative"
    E172 = ("[E172] sentence #{k}, tree {j}: node {w} has pairs of shape {pairs} and probabilities of "
            "shape {probs}; expected (c, 2) and (c,)")
    E173 = ("[E173] sentence #{k}, tree {j}: node {w}'s pair probabilities must be finite and non-negative, "
            "and not all 0")
    E174 = "[E174] sentence #{k}, tree {j}: node {w} has a puncteme id outside 0..{last}"
    E175 = "[E175] sentence #{k}, tree {j}: {got} slots for {n} nodes (a tree of n nodes has n + 1 slots)"
    E176 = ("[E176] sentence #{k}, tree {j}: slot {i} reads {part!r}; a part is (node, side) with node "
            "in 0..{last} and side 0 (left) or 1 (right)")
    E177 = ("[E177] sentence #{k}: tree {j} has {n_j} nodes, tree 0 {n_0}: the trees of one sentence "
            "share its words")
    E178 = "[E178] sentence #{k}: no trees to decode from"
    E179 = "[E179] {name} must be {what}, not {value!r}"
    E180 = ("[E180] sentence #{k}, slot {i}: no surface string has a positive probability (a node half "
            "without a puncteme of positive probability)")
    E181 = ("[E181] sentence #{k}, slot {i}: a string of slot 0 does not start with '^': the channel "
            "moved or deleted '^' (a model whose channel may do that is broken)")
    E182 = "[E182] puncteme {i} {p} has symbol {s} outside 0..{last}"
    E183 = ("[E183] sentence #{k}, tree {j}: node {w}'s {side} half is read {count} times; slot_parts "
            "reads every node half exactly once")
    E184 = ("[E184] sentence #{k}, tree {j}: {pairs} pair arrays and {probs} probability arrays for "
            "{n} nodes (one each per node)")
    E189 = "[E189] slot_mbr: inconsistent input arrays: {what}"
    # restoration conditioned on the marks the text already has (decode/evidence.py, inference/dp.py)
    E190 = "[E190] the lattice's free-slot mask has {got} entries; the sentence has {n} slots"
    E191 = ("[E191] sentence {name}: its observed-slot mask has {got} entries, but the sentence has {n} slots "
            "(one per gap, both ends included)")
    # the product of experts in the marginal decoder (decode/marginal.py class_factors, decode/lexical.py)
    E192 = "[E192] class factors are given for {got} sentences, but {n} sentences are being decoded"
    E193 = ("[E193] sentence #{k}: class factors of shape {shape}; they must be ({slots}, {c}) (one row per slot, "
            "one column per class), finite and >= 0")
    E194 = "[E194] class factors need every symbol's rank and class (string_classes): {problem}"
    # paper 002's punctuation properties (parsing/punct_properties.py, the punct_features_parser companion)
    E195 = ("[E195] the punctuation-property corpus reader's mode must be one of {modes}, not {mode!r}")
    E196 = "[E196] the punctuation-property corpus reader cannot read {path} as CoNLL-U: {reason}"
    E197 = ("[E197] punctuation properties: {problem}")
    E198 = "[E198] no punctuation properties: {reason}"
    # the compiled ATTACH scoring of decoding and analysis (cython_ext/train.pyx attach_scores)
    E185 = "[E185] attach_scores: node {w} has no context units (every node has at least the relation bias)"

    # reading treebanks (spacy_punctgen/data/)
    E500 = "[E500] {folder}: several {split} files: {files}"
    E501 = "[E501] {path} is a folder: say which file with --split train|dev|test"
    E502 = "[E502] {path}: no *-ud-{split}.conllu in this folder"
    E503 = "[E503] No such CoNLL-U file or folder: {path}"
    E504 = "[E504] {path}:{lineno}: bad {column} column {value!r}: {err}"
    E505 = "[E505] {path}:{lineno}: expected 10 tab-separated columns, found {n}"
    E506 = "[E506] {path}:{lineno}: missing word ID"
    E507 = "[E507] {path}:{lineno}: word ID {id} out of sequence (expected {expected})"
    E508 = "[E508] {path}:{lineno}: HEAD {head!r} not in 0..{n}"
    E509 = "[E509] {path}:{lineno}: missing DEPREL"
    E510 = "[E510] {where}: multiword range {first}-{last} outside 1..{n}"
    E511 = "[E511] {path}:{lineno}: HEAD forms a cycle through word {node}"
    E512 = "[E512] No such CoNLL-U file: {path}"
    E513 = "[E513] {path}: not UTF-8 ({err})"
    E514 = "[E514] --fraction must be in (0, 1], got {fraction}"
    E515 = "[E515] --protocol must be one of {protocols}, got {protocol!r}"
    E516 = "[E516] --protocol {protocol} needs --split train|dev|test"
    E517 = "[E517] --cv-folds must be at least 3 (a test, a dev and a training block), got {folds}"
    E518 = "[E518] --cv-fold must be in 0..{last}, got {fold}"
    E519 = "[E519] {n} sentence(s) cannot make {folds} cross-validation blocks"
    E520 = "[E520] --heldout must be in (0, 1), got {heldout}"
    E521 = "[E521] no CoNLL-U file to convert"
    E522 = "[E522] with cross-validation, part must be one of {splits}, got {part!r}"
    E523 = "[E523] part must be 'rest' or 'heldout', got {part!r}"
    E524 = "[E524] {path}: {n} sentence(s), too few to hold out a dev part"
    E525 = "[E525] pairs_mode must be one of {modes}, not {pairs_mode!r}"
    E526 = "[E526] puncteme 0 must be the empty puncteme"
    E527 = "[E527] symbols must start with {bos!r}, {unk!r}"
    E528 = ("[E528] {path}: {n_parsed} parsed sentences for {n_gold} test sentences, and their sent_ids do "
            "not match: cannot align them")
    E529 = "[E529] {where}: no words ({reason})"
    E530 = ("[E530] {where}: words {words}... differ from the depunctuated test sentence {sent_id!r} "
            "{gold_words}...")
    E531 = "[E531] word {i} has invalid head {head} (n={n})"
    E532 = "[E532] heads do not form a forest: some words are on a cycle, unreachable from a root"
    E533 = ("[E533] the tree is not projective: the subtree of word {w} is discontinuous; projectivise it "
            "first")
    E534 = "[E534] the tree is not projective: root {r} does not start where the previous root ends"
    E535 = "[E535] stream documents need 1 <= min_sents <= max_sents, got {min_sents} and {max_sents}"
    E536 = "[E536] the lowercased share of stream documents must be in [0, 1], got {share}"
    E537 = "[E537] {path}: no sentence left to write as stream documents"
    E538 = "[E538] inventory field {field}: expected {expected}, found {value}"
    E539 = "[E539] inconsistent inventory: {field} holds {value}; {rule}"

    # evaluation (spacy_punctgen/evaluation/)
    E540 = "[E540] {n_pred} predicted sentences for {n_gold} gold sentences"
    E541 = "[E541] sentence {k}: {n_pred} predicted slots, gold has {n_gold}"
    E542 = "[E542] paired losses must be two equal-length vectors, not {shape_a} and {shape_b}"
    E543 = "[E543] prediction record without 'slots': {record!r}"
    E544 = "[E544] prediction file not found: {path}"
    E545 = "[E545] {path}:{lineno}: not JSON ({msg})"
    E546 = "[E546] {path}:{lineno}: expected an object with a 'slots' list"
    E547 = "[E547] --parsed pattern {pattern!r} matches no file"
    E548 = "[E548] --parsed {parsed!r} names no file"
    E549 = "[E549] No *.conllu files in directory: {path}"
    E550 = "[E550] No such file or directory: {path}"
    E551 = ("[E551] {path}: no sentence to {use}: {read} sentences read, of which {empty} have no words once "
            "punctuation is removed and {nonleaf} have punctuation that heads words (both kinds are left "
            "out); an empty or all-punctuation file has nothing to score")
    E552 = "[E552] no slots to score: the average edit distance over no sentences is undefined"
    E553 = "[E553] limit must be >= 0 (0 = every sentence), not {limit}"
    # what a model learned (spacy_punctgen/evaluation/learned.py, the `learned` command)
    E790 = ("[E790] the heat maps need matplotlib: install the 'plots' extra "
            "(pip install 'spacy-punctgen[plots]'), or pass --no-plots")
    E791 = "[E791] a model of mode {mode!r} has no learned channel to compare with Nunberg's rules; give a 'full' model"
    E793 = "[E793] {path} is not a model directory (no cfg.json): give a folder written by `train`"
    E794 = ("[E794] {path}: not a report of the `learned` command ({problem}); rerun `learned` for that "
            "treebank")
    E795 = ("[E795] no results/<treebank>/learned/learned.json under {path}: run the workflow `what-learned` "
            "for a treebank first")

    # training (spacy_punctgen/training/)
    E560 = "[E560] this optimizer keeps no averages (average=False)"
    E563 = ("[E563] no dev sentences: direction 'auto' chooses the channel direction by dev perplexity; "
            "give dev sentences or a fixed direction ('l2r' or 'r2l')")

    # restoration baselines (spacy_punctgen/baselines/)
    E570 = "[E570] unknown baseline {name!r}; choose from {systems}"
    E571 = "[E571] {name} is not probabilistic: it has no slot log-probabilities"
    E572 = "[E572] {name} has no choice of decoder"
    E573 = "[E573] unknown decoder {decoder!r}; choose from {decoders}"
    E574 = "[E574] no {what} sentences"
    E575 = "[E575] crf_lexical needs python-crfsuite: pip install 'spacy-punctgen[baselines]'"
    E576 = "[E576] {name}: unknown hyperparameters {unknown}"
    E577 = "[E577] {name}: not trained"
    E578 = "[E578] {name}: not trained, nothing to save"
    E579 = "[E579] missing file in a saved baseline: {path}"
    E580 = "[E580] not a slot label: {label!r}"
    E581 = "[E581] sentence {k}: expected a PunctSentence, got {type}"
    E582 = "[E582] sentence {k} ({sent_id}): {n_words} words need {n_slots} slots, found {found}"
    E583 = "[E583] no training slots to build a label vocabulary from"
    E584 = "[E584] the empty slot is always in the label vocabulary"
    E585 = "[E585] spacy_tagger: config not found: {config}"
    E586 = "[E586] trivial takes no hyperparameters, got {hyper}"
    E587 = "[E587] --tune expects key=v1,v2,..., got {item!r}"
    E588 = "[E588] --tune names {key!r} twice"
    E589 = "[E589] {keys} given both by --hyper and by --tune"
    E590 = "[E590] {path}: not a readable saved baseline file ({kind}: {err})"
    E591 = "[E591] {path}: field {field} must be {expected}, found {value}"
    E592 = "[E592] {path}: corrupted, truncated or mismatched {what} ({err})"
    E593 = "[E593] {path}: not a saved slot tagger pipeline: {problem}"
    E594 = ("[E594] {path}: unreadable tuning cache entry ({err}); delete {folder} to fit that grid point "
            "again")
    E595 = "[E595] {found} weight part(s), this system has {expected}"
    E596 = "[E596] the pickle names {module}.{name}: a weights file holds plain data only"

    # the benchmark (spacy_punctgen/bench/)
    E600 = "[E600] bench worker {func} failed (exit {returncode}):\n{stderr}"
    E601 = "[E601] {path}: no such UD folder"
    E602 = "[E602] {path}: no spaCy pipeline folder for --parser"
    E603 = "[E603] dp bench: no dev sentence is possible under the model"
    E604 = "[E604] unknown section {section!r} (choose from {sections})"
    E605 = ("[E605] no --data folder given and no {sample} in the working directory ({cwd}): pass "
            "--data UD_FOLDER, or run from the repository root")
    E606 = "[E606] {path}: no punctgen model folder for --model"
    E607 = "[E607] {path}: no such transcript file for --transcript (plain text, or word<TAB>label .tsv)"
    E608 = "[E608] {path}: the transcript holds no words"

    # the command line (spacy_punctgen/cli/)
    E610 = "[E610] --hyper expects key=value, got {item!r}"
    E611 = "[E611] --tune trains; it cannot be used with --load"
    E612 = "[E612] {path} holds a {held} system, not {system}"
    E613 = "[E613] --train is required unless --load is given"
    E614 = "[E614] --tune needs --dev: the grid is chosen on dev"
    E615 = "[E615] --protocol {protocol} needs a UD folder as input"
    E616 = "[E616] {path}: no *-ud-train/dev/test.conllu to pool for --protocol cv"
    E617 = ("[E617] {path}: sample folder not found (run the demo from the repository root, or pass --data "
            "FOLDER with *-ud-train/dev/test.conllu)")
    E618 = "[E618] No such input file: {path}"
    E619 = "[E619] {path}: not UTF-8 text ({err})"
    E620 = "[E620] cannot load the spaCy pipeline {name!r}: {err}"
    E621 = "[E621] the spaCy pipeline {name!r} has no dependency parser (pipes: {pipes})"
    E623 = "[E623] --keep-gold needs --parsed-train"
    E624 = "[E624] {path}: no usable training sentences"
    E625 = "[E625] {path}: {reason}"
    E626 = "[E626] {flag} {path}: is a directory; give the path of a file"
    E627 = "[E627] {flag} {path}: is a file; give the path of a directory (new or existing)"
    E628 = "[E628] expected an integer, got {value!r}"
    E629 = "[E629] expected a finite number, got {value!r}"
    E630 = "[E630] must be {bounds}, got {value}"
    E631 = ("[E631] {path}, line {line}: {n} characters in one line, more than the parser takes in one text "
            "({limit}, spaCy's nlp.max_length). Split the input into sentences or paragraphs, one per line "
            "(each line is parsed and restored on its own), or raise the limit with --max-length N; a "
            "single line of a million characters takes minutes and several GB of memory")
    # spacy_punctgen/cli/convert.py (--stream) and spacy_punctgen/cli/restore.py (the shipped pipeline)
    E632 = "[E632] {flags}: only with --stream (they shape the stream documents)"
    E633 = ("[E633] --stream writes depunctuated multi-sentence documents; it does not take {flags}")
    E634 = ("[E634] --max-length applies with --parser (each line is then parsed whole); without --parser "
            "the shipped pipeline reads lines of any length in windows")
    E635 = ("[E635] {flag} re-cases the output of the shipped pipeline; it does not apply with --parser (give "
            "--model alone to use the shipped parser with another punctuation model)")
    E636 = "[E636] {path}: no truecaser pipeline folder for --truecaser"
    # spacy_punctgen/cli/render.py
    E661 = ("[E661] render --output - writes the page to stdout, where --json writes its summary too: give "
            "--output a file path to use --json")
    E662 = "[E662] {input}: nothing to render (no sentence with a word)"

    # ------------------------------------------------------------------------------------
    # the model (spacy_punctgen/model/): construction, training input, the saved-model format
    # (model/serialize.py), feature templates, the channel; E222 for testing/numpy_attach.py
    E200 = "[E200] mode must be one of {modes}, not {mode!r}"
    E201 = "[E201] smooth_delta must be in [0, 1), not {smooth_delta}"
    E202 = "[E202] theta_dtype must be one of {dtypes}, not {theta_dtype!r}"
    E203 = "[E203] smoothed (evaluation) sentences cannot be used for training"
    E204 = "[E204] {where}: array {name!r} has the wrong shape or dtype for this model ({sizes})"
    E205 = "[E205] {where}: not a {format} configuration"
    E206 = "[E206] {where}: unsupported format version {version!r} (this code reads versions {readable})"
    E207 = "[E207] {where}: bad inventory ({err})"
    E208 = "[E208] {where}: missing or bad field ({err})"
    E209 = "[E209] {where}: {err}"
    E210 = "[E210] {where}: missing arrays {missing}"
    E211 = "[E211] {where}: bad n_features {n_features!r}"
    E212 = "[E212] {where}: unreadable or truncated parameter file ({kind}: {err})"
    E213 = "[E213] model bytes: unreadable ({kind}: {err})"
    E214 = "[E214] {path}: not a model directory"
    E215 = "[E215] {path}: missing model file"
    E216 = "[E216] {path}: unreadable or truncated JSON ({err})"
    E217 = "[E217] unknown feature template(s) {bad}; known: {known}"
    E218 = "[E218] pair properties must be a non-empty subset of {properties}"
    E219 = "[E219] the 'rel' template is required (it supports every pair of W_d)"
    E220 = "[E220] feature dictionary: ctx and prop must be 1-D arrays of one length"
    E221 = "[E221] feature dictionary must be sorted by (ctx, prop) without repeats"
    E222 = "[E222] every segment must be non-empty"
    E223 = "[E223] channel direction must be 'l2r' or 'r2l', not {direction!r}"
    E224 = "[E224] backoff_eps must be a number in [0, 1), not {backoff_eps!r}"
    E225 = "[E225] xi must be a finite number, not {xi!r}"
    E226 = "[E226] {where}: field {field!r} must be {expected}, found {value}"
    E227 = ("[E227] {where}: array {name!r} holds {n} non-finite value(s), the first at flat index {index} "
            "({value})")
    E228 = "[E228] {where}: array {name!r} is not a log-probability distribution: {problem}"

    # workflow/: the helpers of the spacy project workflow's scripts
    E700 = "[E700] the {what} must be a plain folder name, got {name!r}"
    E701 = "[E701] fold {fold} is not kept (no {path}, written by keep-fold)"
    E702 = "[E702] --k must be at least 2, not {k}"
    E703 = "[E703] {src}: {n} sentences cannot make {k} folds"
    E704 = "[E704] {path}: {got} sentences, but fold {j} of {src} holds {expected}"
    E705 = ("[E705] {path}: sentence {i} has words {parsed}..., but sentence {j} of {src} has "
            "{words}...")
    E706 = "[E706] {path}: not JSON ({msg})"
    E707 = "[E707] {path}: not a JSON object"
    E708 = "[E708] {path}: {got} predictions for {n} test sentences"
    E709 = "[E709] {path}: {n} sentences, but the kbest.json file has {m}"
    E710 = "[E710] {path}: sent_ids do not match {test}"
    E711 = "[E711] {path}: without sent_ids its {n} sentences must be {test}'s {m}"
    E712 = "[E712] {where}: sentence without words"
    E713 = "[E713] {where}: the parser returned {n} roots for one sentence"
    E714 = "[E714] {model}: the pipeline has no parser"

    # punctuation correction (data/damage.py, decode/correct.py, evaluation/correction.py,
    # pipeline/correct.py, cli/correct.py)
    E820 = "[E820] damage rate {name} must be a number in [0, 1], got {value!r}"
    E821 = "[E821] damage seed must be an integer >= 0, got {seed!r}"
    E822 = "[E822] sentence {k} ({sent_id}): {n_slots} slots for {n} words (a sentence has one slot more than words)"
    E825 = "[E825] noise rates must map each of {types} to a number in [0, 1], got {rates!r}"
    E826 = "[E826] noise {name} must be a number in [0, 1), got {value!r}"
    E827 = "[E827] not a noise model (an object with 'rates'): {data}"
    E828 = "[E828] {n_gold} gold sentences but {n_obs} observed ones"
    E829 = "[E829] observed sentence {k} ({sent_id}) does not have the words and slots of its gold sentence"
    E830 = "[E830] noise must be a SlotNoise, not {type}"
    E831 = "[E831] {n_pred} corrected sentences for {n_gold} gold sentences (or {n_obs} observed ones)"
    E832 = "[E832] sentence {k}: {n_pred} corrected slots, {n_gold} gold, {n_obs} observed"
    E833 = "[E833] noise file {path}: {err}"
    E834 = "[E834] {path}: the input has no sentence to correct"
    E835 = ("[E835] correcting text needs --parser, a spaCy pipeline with a UD parser of punctuated text "
            "(or give a CoNLL-U file, whose own trees are used)")
    E836 = "[E836] {n_e} erroneous underlying trees for {n} sentences"
    E837 = "[E837] sentence {k}: erroneous pairs of shape {shape}, expected ({n}, 2)"
    E838 = "[E838] correction model {name} must be {what}, got {value!r}"
    E839 = "[E839] correction model weights do not fit its features: {what}"
    E840 = "[E840] cannot load the correction model {path}: {err}"
    E841 = "[E841] correction method must be one of {methods}, got {method!r}"
    E842 = "[E842] the correction method 'paper' needs a correction model (CorrectionModel), got {type}"
    E844 = "[E844] no training node for the correction model (every sentence's underlying tree was impossible)"
    E845 = "[E845] correction training setting {name} must be {what}, got {value!r}"

    # stream and TED evaluation (spacy_punctgen/evaluation/stream.py, data/ted.py, cli/evaluate_stream.py)
    E760 = "[E760] a stream has {n_words} words but {n_gaps} gold gaps (one gap after each word)"
    E761 = "[E761] the unit or window size must be a positive number of words (windows: at least 4), not {size}"
    E762 = "[E762] no sentences to make streams of"
    E763 = ("[E763] the restored text cannot be aligned to its input words at character {at}: "
            "got {got!r}, expected {expected!r}")
    E764 = "[E764] unknown gap classes {kind!r} (known: {kinds})"
    E765 = "[E765] {n_pred} predicted units for {n_gold} gold units"
    E766 = "[E766] nothing to score: the units hold no words"
    E767 = "[E767] {n_pred} predicted gaps for a unit of {n_words} words (one gap after each word)"
    E768 = ("[E768] {path}:{line}: expected 'word<TAB>label' with label one of {labels}, got {text!r}")
    E769 = "[E769] {path}: no labelled words"
    E770 = "[E770] the training share must be between 0 and 1 (exclusive), not {share}"
    E771 = "[E771] {path}: {n} words cannot make a training and a dev block"
    E772 = "[E772] {path}: not a metrics file of evaluate-stream ({problem})"
    E773 = "[E773] {path}: needs one line {start!r} and, after it, one line {end!r}"
    E774 = "[E774] {path}: cannot be read ({err})"
    E775 = "[E775] crf_lexical on the streams of {path} needs --train (a CoNLL-U training file or UD folder)"
    # restoration and analysis over a Dask cluster (pipeline/distributed.py, restore --scheduler)
    E776 = ("[E776] restoring over a Dask cluster needs dask.distributed, which is not installed: install the "
            "'distributed' extra (pip install 'spacy-punctgen[distributed]', i.e. dask and distributed)")
    E777 = ("[E777] cannot connect to the Dask scheduler at {address} within {timeout} s ({err}); is a "
            "scheduler (`dask scheduler`) running there, and is its port reachable from this machine?")
    E778 = ("[E778] {address!r} is not a Dask scheduler address: give tcp://HOST:PORT (or HOST:PORT), or "
            "local:N to start N local worker processes (N >= 1)")
    E779 = "[E779] {what} must be an integer >= 1, not {value!r}"
    E780 = "[E780] give the number of partitions or the partition size, not both"
    E781 = ("[E781] a number of partitions needs the texts as a sequence (a list, whose length is known); "
            "for an iterator give partition_size instead")
    E782 = "[E782] distributed processing takes mode {modes}, not {mode!r}"
    E783 = "[E783] text {index} is a {type}, not a str"
    E784 = ("[E784] no Dask client: pass client= a distributed.Client or a scheduler address "
            "(tcp://HOST:PORT, or local:N), or create a Client first (it becomes the default)")
    E785 = "[E785] restore_files writes either to out_dir or through callback: give exactly one of them"
    E786 = "[E786] {path}: cannot read the input ({reason})"
    E787 = "[E787] {path}: {problem}"
    E788 = "[E788] {flag} needs --scheduler (it says how to split the input over the cluster's workers)"
    E789 = ("[E789] --scheduler runs the shipped pipeline (with --model / --truecase if given) on the workers; "
            "it does not take {flag}")
    # rephrasing (evaluation/ngram.py, decode/rephrase.py, scripts/rephrase_eval.py)
    E860 = "[E860] the trigram language model needs at least one training sentence"
    E861 = "[E861] the trigram language model is not trained: call fit() first"
    E862 = "[E862] no token to score: perplexity over no tokens is undefined"
    E863 = "[E863] the ordering model needs at least one training tree with a dependent"
    E864 = "[E864] order {order!r} is not a permutation of the sentence's {n} words"
    E865 = "[E865] {n_pairs} underlying pairs for a sentence of {n} words"
    E866 = "[E866] {n_forms} UD tokens do not match the sentence's {n} words and {n_punct} punctuation tokens"
    E867 = ("[E867] this ordering model reads {kind} trees (OrderModel.fit: SurfaceTree, Base/Half; "
            "OrderModel.fit_underlying: UnderlyingTree, Full), not a {got}")
    E868 = "[E868] min_count must be at least 1, not {min_count}"
    E869 = "[E869] the add-k smoothing constant must be a finite number above 0, not {k!r}"
    E870 = "[E870] unknown rephrasing setting {setting!r}: one of {settings}"
    E880 = "[E880] a stream needs one mark string per word: {n_words} words, {n_marks} mark strings"
    E881 = "[E881] word {index} of the stream is not a word ({word!r}): give a non-empty string per word"
    E882 = ("[E882] the marks after word {index} must be a string (marks separated by spaces, '' for none), "
            "not {mark!r}")
    E885 = "[E885] empty_weight must be a finite number above 0 (1: minimum expected edit distance), not {value!r}"
    E886 = ("[E886] empty_weight other than 1 needs the deterministic decoder ('marginal'), not "
            "{method!r}")
    E884 = ("[E884] crf_lexical on the whole of {path} (--whole-file) needs --train with the TED .tsv file it "
            "trains on")
    E883 = ("[E883] the parsed pieces of the stream do not cover its text at character {offset} (the parser's "
            "tokenizer changed the text?)")
    E887 = ("[E887] the sampling temperature of the parser's transition probabilities must be a finite number "
            "above 0 (1: the parser's own distribution), not {value!r}")
    E888 = "[E888] the seed of the parser's tree samples must be an integer from 0 to 2**63 - 1, not {value!r}"
    E889 = ("[E889] sampling trees from the parser did not finish within {limit} steps (a transition system "
            "that does not end?)")
    E890 = "[E890] trees of a sentence from one parser come from its 'beam' or from 'sample', not {search!r}"

    # E900-E919: the companion comma systems of papers 001 and 004 (baselines/trigram_hmm.py, crf_syntax.py)
    E900 = "[E900] unknown {name} variant {variant!r}; choose from {variants}"
    E901 = "[E901] a Kneser-Ney model of context length {order} was given a context of length {found}: {context!r}"
    E902 = "[E902] a Kneser-Ney model needs at least one training event"
    E903 = "[E903] {name}: not trained"
    E904 = "[E904] {path}: field {field} must be {expected}, found {value}"
    E905 = "[E905] unknown {name} feature group {group!r}; choose from {groups}"
    E906 = ("[E906] sentence {k} has {n_heads} heads and {n_deprels} relations for {n_words} words: "
            "{name} needs a dependency tree over the words")
    E907 = "[E907] {n_gold} gold and {n_pred} predicted sentences (or slots of sentence {k}) do not line up"
    E908 = "[E908] {name}: ec_min must be an integer of at least 1, not {value!r}"
    E909 = ("[E909] per-sentence comma counts must be two equally long lists of (tp, fp, fn) triples, not "
            "arrays of shapes {shape_a} and {shape_b}")
    E910 = ("[E910] the two systems' comma counts are not of the same test sentences: {n} sentences differ in "
            "their gold commas (tp + fn), the first sentence {k} ({gold_a} against {gold_b})")

    # file formats: insertions, SubRip/WebVTT subtitles, word timestamps (formats/)
    E940 = "[E940] insertion {index} must be a pair (character offset, inserted string), not {value!r}"
    E941 = ("[E941] insertions must be sorted by offset: insertion {index} at offset {offset} comes after one "
            "at offset {previous}")
    E942 = "[E942] insertion {index} at offset {offset} is outside the text (offsets 0 to {length})"
    E943 = ("[E943] insertion {index} at offset {offset} falls inside the token {token!r}: marks go only at the "
            "end of a token, before the whitespace that follows it (or at the start of a token, or the end)")
    E944 = ("[E944] the output does not hold insertion {index} ({expected!r}) at output offset {at} (found "
            "{got!r}): these insertions did not make this output")
    E945 = ("[E945] insertion {index} at offset {offset} has nowhere to go: there is no text to punctuate (no "
            "spoken cue line, or no word)")
    E946 = ("[E946] insertion {index} ({text!r}) holds a line break, which would change the lines of the "
            "subtitle cues")
    E947 = "[E947] subtitle format must be one of {formats}, not {fmt!r}"
    E948 = "[E948] line {line}: {text!r} holds '-->' but is not a cue timing ('START --> END [settings]')"
    E949 = "[E949] not a WebVTT file: its first line must start with 'WEBVTT', not {text!r}"
    E950 = "[E950] not a {fmt} file: {n} non-blank lines but no cue (an optional index line, then 'START --> END')"
    E951 = "[E951] the cased text must be the text with only case changes: at character {at}, {got!r} for {expected!r}"
    E952 = "[E952] the cased text has {got} characters, the text {expected}"
    E953 = "[E953] word timestamps: not JSON ({err})"
    E954 = ("[E954] word timestamps must be a JSON list of word objects or an object with a 'words' list, not "
            "{kind}")
    E955 = "[E955] word timestamps: word {index} must be an object with a string 'word', not {value!r}"
    E956 = "[E956] {got} cased words for {expected} words"
    E957 = "[E957] file format must be one of {formats}, not {fmt!r}"
    E958 = ("[E958] the restorer must return a list of (offset, string) insertions or a Restored, not "
            "{kind}")

    # ---- incremental (the CPP and UPP parser-punctuators, live mode): E920-E939 ----
    E920 = ("[E920] the gold tree of words {start}-{end} cannot be built by the transition system (the "
            "oracle's action {action!r} is illegal there): is it projective, one tree per full stop?")
    E921 = "[E921] unknown incremental model mode {mode!r}: 'upp' or 'cpp'"
    E922 = "[E922] the number of hash buckets must be a power of two of at least 2, not {n}"
    E923 = "[E923] {n_words} words but {n_tags} POS tags"
    E924 = "[E924] the beam size must be at least 1, not {beam}"
    E925 = "[E925] a document of {n} words needs 2n gold action codes, not {n_codes}"
    E926 = "[E926] a gold action sequence is illegal in the compiled transition system: {err}"
    E927 = "[E927] unknown mark label set {labels!r}: one of {known}"
    E928 = "[E928] {n_words} words but {n_marks} marks in an incremental training document"
    E929 = "[E929] no training documents for the incremental model"
    E930 = "[E930] {path} is not a saved incremental model ({problem})"
    E931 = "[E931] the live delay must be an integer of at least 0 words, not {delay!r}"
    E932 = "[E932] live input must be strings (words or text chunks), not {got!r}"
    E933 = ("[E933] forced marks: one per word of the {n} ({got} given), each -1 (free) or a class that is not "
            "a full stop")
    E934 = ("[E934] decoding a long stream by windows needs a window of at least 2 words and a margin of 0 "
            "to window - 1 words, not window {window!r}, margin {margin!r}")
    E935 = "[E935] attachment scores: the predicted and the gold heads must pair up one to one, but {problem}"
    E936 = ("[E936] tokens of a parse aligned to its words: {problem} (the tokens must come from a parse of "
            "the words joined by single spaces, with their offsets in that text and a head token each)")
    E937 = "[E937] {path} is not a file of incremental stream documents (line {line}: {problem})"
    E938 = ("[E938] live punctuation over a pipeline: {name} must be a whole number of words (step at least 1, "
            "context at least 0), not {value!r}")
    E939 = ("[E939] live punctuation needs an incremental model (UPP or CPP, IncrementalPunctuator.from_disk) or a "
            "restore pipeline (spacy_punctgen.load('en')), not {kind}")
    # ---- restoration keeps the user's text (restore CLI, formats wiring): E980-E982 ----
    E980 = ("[E980] --repunctuate deletes marks from the text, which a {fmt} file's cues or words cannot take; "
            "use it with plain text")
    E981 = "[E981] --format {fmt} needs the shipped pipeline (drop --parser) or plain text"
    E982 = ("[E982] the text holds a lone surrogate (U+{code:04X} at character {at}), which is not Unicode text: "
            "read the file as UTF-8, or decode it with errors='replace', before restoring it")
    # ---- punctgen adapt: a model adapted to the user's punctuated text (workflow/adapt.py): E983-E989 ----
    E983 = "[E983] adapt needs at least one file of punctuated text (or word<TAB>label lines), and none was given"
    E984 = "[E984] cannot read the adaptation text {path}: {reason}"
    E985 = ("[E985] {path} holds no words: it is empty or only punctuation (adapt needs punctuated text, or "
            "word<TAB>label lines)")
    E986 = ("[E986] the training text of {paths} has no punctuation at all, so there is nothing to learn: adapt "
            "needs text punctuated as restoration should punctuate (word, word. or word<TAB>COMMA lines)")
    E987 = ("[E987] the adapted model's output {path} {problem}: give a new or empty folder, one written by adapt, "
            "or --force (force=True) to write into it anyway")
    E988 = "[E988] adapt's settings are out of range: {problems}"
    E989 = ("[E989] share {share} of the {n} words of {path} leaves no sentence after it: nothing would be held "
            "out; use a smaller share, or 1 to train on the whole file")
    # ---- the lexical expert (model/lexical.py, decode/lexical.py): E990-E999 ----
    E990 = "[E990] the lexical expert's {what} must be a positive integer, not {value!r}"
    E991 = ("[E991] the lexical expert reads the words of a stream as a list of strings, not {kind}: "
            "pass text.split() or the Doc's word tokens")
    E992 = ("[E992] a training stream for the lexical expert has {n_words} words but {n_marks} marks: "
            "marks[i] is the mark after words[i], one per word (\"\" for none)")
    E993 = "[E993] the lexical expert has no training words: give it at least one stream with words"
    E994 = "[E994] the lexical expert's saved weights are unusable: {problem}"
    E995 = ("[E995] {where} is not a lexical expert this version reads (other classes or feature templates): "
            "train it again with this version (`punctgen adapt`)")
    E996 = "[E996] the lexical expert's weight must be a finite number >= 0 (0: not used), not {weight!r}"
    E997 = ("[E997] the lexical expert's probabilities for a sentence have {rows} rows of {cols} columns, "
            "but the sentence has {n} words and the expert {c} classes")
    E998 = "[E998] the lexical expert's evidence covers {got} sentences, but {n} sentences are being restored"
    E999 = ("[E999] no lexical expert ships for language {lang!r} in this installation (shipped: {shipped}; looked "
            "in {path}): train one with `punctgen adapt ... --base-model shipped`, or restore without lexical=True")
    # ---- the decoders split by role, public seams (decode/, model/, cython_ext/dp.pyx): E960-E979 ----
    E960 = ("[E960] restore_method 'exact' was removed: it was the NumPy twin of 'marginal', which makes the "
            "same choices (use 'marginal'; the NumPy reference is spacy_punctgen.testing.exact_mbr)")
    # ---- soft evidence of an incremental model for restoration (incremental/evidence.py, paper 003): E961-E969 ----
    E961 = ("[E961] the incremental model's analysis consumed {consumed} of the {n} words (a complete analysis "
            "consumes each word once): its mark evidence cannot be read off it")
    E962 = ("[E962] incremental mark evidence: {problem}")


class Warnings:
    W001 = ("[W001] The punctuation model shipped for language {lang!r} cannot be used: {err}. The 'punctgen' "
            "component goes on as if none shipped (E003 where it needs a model).")
    W002 = ("[W002] {share:.0%} of the {n} words restored so far are unknown to the punctuation model, which "
            "was trained on {lang!r} text: this text may be in another language, and it is being punctuated as "
            "{lang!r} all the same. For another language, parse with a UD parser of that language (e.g. "
            "spacy_udpipe: nlp = spacy_udpipe.load('fr'); nlp.add_pipe('punctgen', config={{'mode': 'restore', "
            "'model': <a punctgen model of that language, from `punctgen train`>}}), see docs/udpipe.md.")
