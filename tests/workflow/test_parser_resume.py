"""configs/parser_stream_resume.cfg starts training from a saved pipeline's weights."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_PARSER = ROOT / "spacy_punctgen" / "shipped" / "en_ewt_parser"


def test_resume_config_sources_every_component_with_its_weights():
    import spacy
    from spacy.util import load_config, load_model_from_config

    if not (SHIPPED_PARSER / "meta.json").is_file():
        pytest.skip("the shipped parser is not in this checkout")
    cfg = load_config(ROOT / "configs" / "parser_stream_resume.cfg",
                      overrides={"paths.resume": str(SHIPPED_PARSER)}, interpolate=False)
    nlp = load_model_from_config(cfg, auto_fill=True)
    shipped = spacy.load(SHIPPED_PARSER)
    assert nlp.pipe_names == shipped.pipe_names == ["tok2vec", "tagger", "morphologizer", "parser"]
    for name in nlp.pipe_names:
        assert nlp.get_pipe(name).to_bytes(exclude=["vocab"]) == shipped.get_pipe(name).to_bytes(exclude=["vocab"]), name
    # the parser's labels came with it: no re-initialisation from the corpus is needed
    assert set(nlp.get_pipe("parser").labels) == set(shipped.get_pipe("parser").labels)
