"""Every user-facing error and warning message of the plugin, in one place (spaCy style).

Raise ``ValueError(Errors.E004.format(path=..., reason=...))``, warn with
``warnings.warn(Warnings.W001.format(...))``; every message starts with its code in brackets,
which equals its attribute name (``tests/test_errors.py`` checks that, and that no library
module raises an inline message instead).  Codes are grouped by the subpackage that raises
them, so a new message takes the next free code of its block:

* ``E001``-``E099``: the spaCy component (``pipeline/``)
* ``E100``-``E199``: decoding (``decode/``) and the DP wrapper (``inference/``)
* ``E200``-``E499``: the model (``model/``) and whatever else its layers need
* ``E500``-``E539``: reading and converting treebanks (``data/``)
* ``E540``-``E559``: evaluation (``evaluation/``)
* ``E560``-``E569``: training (``training/``)
* ``E570``-``E599``: the restoration baselines (``baselines/``)
* ``E600``-``E609``: the benchmark (``bench/``)
* ``E610``-``E699``: the command line (``cli/``)
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

    # training (spacy_punctgen/training/)
    E560 = "[E560] this optimizer keeps no averages (average=False)"
    E561 = "[E561] optimizer must be one of {optimizers}, not {optimizer!r}"
    E562 = "[E562] --grad-clip needs --optimizer dense (the lazy optimizer never sees the whole gradient)"

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

    # the benchmark (spacy_punctgen/bench/)
    E600 = "[E600] bench worker {func} failed (exit {returncode}):\n{stderr}"
    E601 = "[E601] {path}: no such UD folder"
    E602 = "[E602] {path}: no spaCy pipeline folder for --parser"
    E603 = "[E603] dp bench: no dev sentence is possible under the model"
    E604 = "[E604] unknown section {section!r} (choose from {sections})"
    E605 = ("[E605] no --data folder given and no {sample} in the working directory ({cwd}): pass "
            "--data UD_FOLDER, or run from the repository root")

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
    E622 = "[E622] --epochs must be >= 0 and --batch-size >= 1"
    E623 = "[E623] --keep-gold needs --parsed-train"
    E624 = "[E624] {path}: no usable training sentences"

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


class Warnings:
    W001 = ("[W001] The punctuation model shipped for language {lang!r} cannot be used: {err}. The 'punctgen' "
            "component goes on as if none shipped (E003 where it needs a model).")
