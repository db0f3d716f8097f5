"""``python -m spacy_punctgen bench``: speed and memory figures, each next to a reference
measured in the same run.

Why ratios: absolute timings depend on the machine and on what else runs on it; a
ratio against something timed in the same process on the same data (the spaCy
parser that produced the trees, the plain NumPy inside pass, the 1-process pipe)
says what the code itself costs.  Sections (``--sections``):

``training``  one full-pass epoch over the train split (``train.train_one``), in a
              fresh single-threaded subprocess that also reports its peak RSS;
              the model it trains is the one the other sections use (or ``--model``)
``dp``        the Cython inside pass against :func:`reference.numpy_inside` on the
              same dev sentences (and their agreement)
``analysis``  words/s of the ``punctgen`` component against the spaCy
              tagger+parser pipeline that produced the trees (``--parser``)
``restore``   sentences/s of the default (``marginal``), per-slot and 1,000-sample decoders
              (:mod:`spacy_punctgen.decode.mbr`) against the parser's sentences/s; with a
              model that carries a lexical expert, also its decoder
              (:func:`~spacy_punctgen.decode.lexical.restore_with_lexical`)
``memory``    RSS of a subprocess analysing 10,000 Docs: after a warm-up pass vs at the end
``scaling``   time per word of the model's analysis work by sentence length, up to
              1,000 words (long sentences are real dev sentences chained at their roots)
``pipe``      ``nlp.pipe(n_process=2)`` against ``n_process=1``; outputs must be identical
``transcript`` one long lowercased unpunctuated line (``--transcript FILE``, else the dev
              split's words; cycled or cut to 100,000 words) through
              :func:`~spacy_punctgen.api.stream.restore_text` of ``spacy_punctgen.load``, as a
              user restores a transcript, in a fresh single-threaded subprocess per pipeline:
              the shipped one, and with ``--model`` that model (and, if it carries a lexical
              expert, that model with the expert off). Figures: CPU seconds (loading included)
              and peak RSS against the issue's budgets, and punctgen's share of the time
              against the pipeline's parser over the same windows, timed in the same process
``trees``     several trees per sentence from ONE parser (the greedy parse and k - 1 drawn from its
              transition probabilities, k = 4 and 8; the beam's 2 best) against its greedy parse
              of the same texts (:mod:`spacy_punctgen.parsing.kbest`)

Timings are the best of ``--repeats`` runs.  ``--quick`` uses ``assets/sample`` and
small counts (seconds, for the test suite); figures from it are not meaningful.
"""
from __future__ import annotations

import gc
import json
import math
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.errors import Errors


#: The folder that holds the imported spacy_punctgen (the workers import the same one).
PACKAGE_PARENT = Path(__file__).resolve().parents[2]
#: The repository's shipped sample, relative to the working directory (the repository root,
#: where the workflow runs); any other data is named with ``--data``.
SAMPLE = Path("assets") / "sample"
SECTIONS = ("training", "dp", "analysis", "restore", "memory", "scaling", "pipe", "trees", "transcript")
BUCKETS = ((1, 10), (11, 30), (31, 100), (101, 300), (301, 1000))
TARGETS = {
    "analysis_speedup_vs_parser": 3.0,  # punctgen words/s ≥ 3 × parser words/s
    "train_epoch_seconds": 60.0,  # < 60 s per full EWT epoch on one core
    "train_peak_rss_mb": 2048.0,  # < 2 GB
    "analysis_rss_growth": 1.02,  # RSS at the end ≤ 1.02 × RSS after the warm-up pass
    "scaling_spread": 1.5,  # max / min time per word over the buckets
    "trees_cost_vs_greedy": 1.5,  # several trees from one parser: <= 1.5 x its greedy parse
    "restore_vs_parser": 1.0,  # restoration (the default decoder) at least as fast as the parser
    "transcript_seconds": 60.0,  # a 100,000-word transcript: < 60 s on one core (loading included)
    "transcript_peak_rss_mb": 500.0,  # ... and < 500 MB peak RSS
}
#: the transcript the targets speak of, in words
TRANSCRIPT_WORDS = 100_000
#: (search, k) of the ``trees`` section
TREE_SETTINGS = (("sample", 4), ("sample", 6), ("sample", 8), ("beam", 2))
_ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}


# ----------------------------------------------------------------------- helpers
def rss_mb() -> float:
    """Current resident set size (MB): psutil if installed, else /proc/self/status."""
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        pass
    current = _proc_status_mb("VmRSS")
    return peak_rss_mb() if current is None else current  # no current figure: the peak is the best we have


def _proc_status_mb(key: str) -> Optional[float]:
    """The field ``key`` (kB) of /proc/self/status in MB; None where there is no such file or field."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def peak_rss_mb() -> float:
    """This process's peak RSS. On Linux from ``VmHWM`` (the high-water mark of this program's
    own memory): ``ru_maxrss`` survives ``execve``, so a worker started by a large bench process
    would report the bench's size (the transcript workers read 627 MB after the restore section,
    289 MB when run alone)."""
    peak = _proc_status_mb("VmHWM")
    if peak is not None:
        return peak
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / (2**20 if sys.platform == "darwin" else 1024.0)  # bytes on macOS, KiB on Linux


def _log(msg: str) -> None:
    """Progress on spaCy's logger (``spacy.punctgen``, see training.train; ``punctgen bench``
    shows it), and, through run_bench's ``partial``, the figures so far."""
    from spacy.util import logger  # here: the workers must not pay for importing spaCy

    logger.getChild("punctgen").info("[bench] %s", msg)


def best_time(fn: Callable[[], object], repeats: int) -> float:
    return best_times(fn, repeats)[0]


def best_times(fn: Callable[[], object], repeats: int) -> Tuple[float, float]:
    """The best wall time and the best CPU time of this process (all its threads) over
    ``repeats`` runs: on a loaded machine the CPU time says more about the code."""
    best, best_cpu = math.inf, math.inf
    for _ in range(max(1, repeats)):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu


def _figure(value, unit: str, reference=None, ref_unit: str = "", ratio=None, meaning: str = "",
            target=None, met=None, **extra) -> dict:
    out = {"value": value, "unit": unit, "reference": reference, "reference_unit": ref_unit,
           "ratio": ratio, "ratio_meaning": meaning, "target": target, "met": met}
    out.update(extra)
    return out


def _subprocess(func: str, payload: dict, timeout: float = 3600) -> dict:
    """Run ``spacy_punctgen.bench.suite.<func>(payload)`` in a fresh single-threaded interpreter;
    its last stdout line is the JSON result."""
    env = dict(os.environ, **_ONE_THREAD)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_PARENT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    code = f"import json,sys; from spacy_punctgen.bench.suite import {func} as f; print(json.dumps(f(json.loads(sys.argv[1]))))"
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(payload)], env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(Errors.E600.format(func=func, returncode=proc.returncode, stderr=proc.stderr[-3000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _resolve_data(data: Optional[str], quick: bool) -> Path:
    if data:
        p = Path(data)
        if not p.is_dir():
            raise FileNotFoundError(Errors.E601.format(path=p))
        return p
    if SAMPLE.is_dir():
        return SAMPLE
    raise FileNotFoundError(Errors.E605.format(sample=SAMPLE, cwd=Path.cwd()))


def _treebank_name(folder: Path) -> str:
    from spacy_punctgen.data.conllu import find_split

    hit = find_split(folder, "train")
    return hit.name.split("-ud-")[0] if hit else folder.name


# ---------------------------------------------------------------- sub-process work
def _train_worker(job: dict) -> dict:
    """One epoch (or more) of ``train_one`` on the train split, then save the model."""
    from spacy_punctgen.data.inventory import PunctInventory
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.training.train import TrainConfig, train_one
    from spacy_punctgen.data.preprocess import load_split

    rss0 = rss_mb()
    sents, _, quote_xpos = load_split(job["train"])
    cfg = TrainConfig(epochs=job["epochs"], sentences_per_epoch=0, direction="l2r", seed=job["seed"],
                      progress=False)
    t0 = time.perf_counter()
    inv = PunctInventory.from_sentences(sents, min_count=cfg.min_count, pairs_mode=cfg.pairs_mode)
    model = PunctModel(inv, cfg.feature_config(), mode=cfg.channel, direction="l2r", xi=cfg.xi,
                       smooth_delta=cfg.smooth_delta)
    train = model.prepare_all(sents)
    model.initialize(train, seed=cfg.seed, theta_scale=cfg.theta_init, psi_scale=cfg.psi_init,
                     psi_keep_bias=cfg.psi_keep_bias)
    t_prep = time.perf_counter() - t0
    model, hist = train_one(model, train, [], cfg, tag="bench")
    model.meta.update({"quote_xpos": quote_xpos, "train_file": str(job["train"]),
                       "note": f"bench: {job['epochs']} epoch(s), paper defaults, l2r"})
    model.to_disk(job["out"])
    secs = [e["seconds"] for e in hist["epochs"]]
    cpu = [e.get("cpu_seconds") for e in hist["epochs"]]
    return {"epoch_cpu_seconds": cpu if all(c is not None for c in cpu) else None,"n_sentences": len(sents), "n_words": sum(len(s) for s in sents), "n_features": model.n_features,
            "prepare_seconds": t_prep, "epoch_seconds": secs, "rss_before_mb": rss0,
            "peak_rss_mb": peak_rss_mb()}


def _memory_worker(job: dict) -> dict:
    """Analyse ``n_docs`` gold Docs (dev sentences, cycled) with the component; RSS after
    a warm-up pass over the distinct sentences and at the end."""
    import spacy

    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.pipeline.doc_convert import doc_from_ud

    nlp = spacy.blank(job["lang"])
    nlp.add_pipe("punctgen", config={"model": job["model"]})
    uds = read_conllu(job["dev"])
    n = int(job["n_docs"])
    warm = min(len(uds), n // 2)
    rss_start = rss_mb()
    rss_warm = None
    t0 = time.perf_counter()
    for i in range(n):
        if i == warm:
            gc.collect()
            rss_warm = rss_mb()
        doc = nlp(doc_from_ud(nlp.vocab, uds[i % len(uds)]))
        assert doc._.underlying_punct is not None
        del doc
    gc.collect()
    return {"n_docs": n, "warmup_docs": warm, "rss_start_mb": rss_start, "rss_warm_mb": rss_warm,
            "rss_end_mb": rss_mb(), "peak_rss_mb": peak_rss_mb(), "seconds": time.perf_counter() - t0}


def _transcript_worker(job: dict) -> dict:
    """Restore the text of the file ``job["text"]`` with :func:`restore_text` through
    ``spacy_punctgen.load(lang, model=..., config=...)`` as a user would; then parse the same
    windows without ``punctgen`` (:func:`iter_pieces_at`, what ``restore_text`` parses): the
    reference. The peak RSS is read before that second pass."""
    import spacy_punctgen
    from spacy_punctgen.api.stream import PUNCTGEN_FACTORY, iter_pieces_at, restore_text

    text = Path(job["text"]).read_text(encoding="utf-8")
    rss_start = rss_mb()
    nlp = spacy_punctgen.load(job["lang"], model=job["model"], config=job["config"] or None)
    restore_text(nlp, "so i came home and he left")  # the model is read at its first use
    # loading as a user meets it: from the interpreter's start (its imports included)
    t1, c1 = time.perf_counter(), time.process_time()
    load_seconds = time.time() - job["started"]
    rss_loaded = rss_mb()
    out = restore_text(nlp, text)
    t2, c2 = time.perf_counter(), time.process_time()
    peak = peak_rss_mb()
    pieces = sum(1 for _ in iter_pieces_at(nlp, text))
    t3, c3 = time.perf_counter(), time.process_time()
    pipe = next(nlp.get_pipe(n) for n in nlp.pipe_names if nlp.get_pipe_meta(n).factory == PUNCTGEN_FACTORY)
    lexical = getattr(pipe.require_model(), "lexical", None)
    weight = pipe.cfg.get("lexical_weight")
    return {"n_words": len(text.split()), "n_chars": len(text), "added_chars": len(out) - len(text),
            "n_pieces": pieces, "load_seconds": load_seconds, "load_cpu_seconds": c1,
            "restore_seconds": t2 - t1, "restore_cpu_seconds": c2 - c1,
            "parse_seconds": t3 - t2, "parse_cpu_seconds": c3 - c2,
            "rss_start_mb": rss_start, "rss_loaded_mb": rss_loaded, "peak_rss_mb": peak,
            "expert": lexical is not None,
            "expert_weight": None if lexical is None else (lexical.weight if weight is None else weight)}


# ------------------------------------------------------------------------ parser
def _texts(uds) -> List[str]:
    out = []
    for ud in uds:
        if ud.text:
            out.append(ud.text)
        else:
            out.append("".join(f + (" " if sp else "") for f, sp in zip(ud.forms, ud.space_after)).strip())
    return out


def train_tiny_parser(train_path: Path, lang: str, epochs: int, seed: int = 0):
    """A tagger/morphologizer/parser from ``configs/parser.cfg`` (spaCy's defaults when that
    file is not around), trained for a few epochs on the gold trees of ``train_path``.
    Good enough as a speed reference: a parser's cost does not depend on its weights."""
    import spacy
    from spacy.training import Example
    from spacy.util import fix_random_seed, load_config, load_model_from_config, minibatch

    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.pipeline.doc_convert import doc_from_ud

    fix_random_seed(seed)
    cfg_path = Path("configs") / "parser.cfg"  # the workflow's, when run from the repository root
    if cfg_path.is_file():
        cfg = load_config(cfg_path, overrides={"nlp.lang": lang})
        nlp = load_model_from_config(cfg, auto_fill=True, validate=True)
    else:
        nlp = spacy.blank(lang)
        for name in ("tagger", "morphologizer", "parser"):
            nlp.add_pipe(name)
    from spacy.tokens import Doc

    examples = []
    for ud in read_conllu(train_path):
        gold = doc_from_ud(nlp.vocab, ud)  # no FEATS: the morphologizer learns UPOS (POS=... labels)
        examples.append(Example(Doc(nlp.vocab, words=list(ud.forms), spaces=list(ud.space_after)), gold))
    optimizer = nlp.initialize(lambda: examples)
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(examples)
        for batch in minibatch(examples, 32):
            nlp.update(batch, sgd=optimizer, drop=0.1)
    return nlp


def _load_parser(arg: Optional[str], data: Path, treebank: str, lang: str, epochs: int):
    """``--parser PATH``, else H5's workflow output for this treebank, else a tiny one."""
    import spacy

    from spacy_punctgen.data.conllu import resolve_split

    if arg:
        path = Path(arg)
        if not path.is_dir():
            raise FileNotFoundError(Errors.E602.format(path=path))
        source = "--parser"
    else:
        path = Path("training") / treebank / "parser-punct" / "model-best"
        source = "workflow output (spacy project run train-parser-punct)"
    if path.is_dir():
        nlp = spacy.load(path)
        meta = nlp.meta
        return nlp, {"source": source, "path": str(path), "pipe_names": nlp.pipe_names,
                     "name": f"{meta.get('lang')}_{meta.get('name')}",
                     "description": meta.get("description", "")}
    # the shipped sample keeps this quick; a parser's speed does not depend on its training data
    train = resolve_split(str(SAMPLE if SAMPLE.is_dir() else data), "train")
    nlp = train_tiny_parser(train, lang, epochs)
    return nlp, {"source": f"trained in this run: configs/parser.cfg, {epochs} epochs on {train.name}",
                 "path": None, "pipe_names": nlp.pipe_names}


# ---------------------------------------------------------------------- sections
def _cand_probs(model, prep) -> np.ndarray:
    """The lattice candidates' probabilities under ``model`` (as its log_probs computes them)."""
    fwd, pos, _ = model.forward([prep])
    return model.candidate_probs(fwd, prep, pos[0])


def _dp_worker(job: dict) -> dict:
    """Cython vs dense-NumPy inside pass on the same dev sentences, in one thread: NumPy's
    BLAS would otherwise use every core (and on a busy machine, crawl).  NumPy gets a time
    budget; the Cython core then runs on exactly the sentences NumPy finished."""
    from spacy_punctgen.inference.dp import log_prob
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.testing.reference import numpy_inside

    model = PunctModel.from_disk(job["model"])
    dev_sents, _ = preprocess_file(job["dev"])
    phi, g, r2l = model.phi(), model.grammar, model.r2l
    items, ref, t_np = [], [], 0.0
    for s in dev_sents:
        if len(s) > job["max_words"]:
            continue
        prep = model.prepare(s)
        if prep.lattice.n_candidates == 0:
            continue
        cp = _cand_probs(model, prep)
        if not math.isfinite(log_prob(prep.lattice, g, cp, phi, r2l)):
            continue
        t0 = time.perf_counter()
        ref.append(numpy_inside(prep.lattice, g, cp, phi, r2l))
        t_np += time.perf_counter() - t0
        items.append((prep.lattice, cp))
        if len(items) >= job["n_sents"] or t_np >= job["budget_s"]:
            break
    if not items:
        raise ValueError(Errors.E603)
    for lat, cp in items[:5]:  # warm-up
        log_prob(lat, g, cp, phi, r2l)
    t_cy = best_time(lambda: [log_prob(lat, g, cp, phi, r2l) for lat, cp in items], job["repeats"])
    cy = [log_prob(lat, g, cp, phi, r2l) for lat, cp in items]
    diff = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(cy, ref))
    return {"t_np": t_np, "t_cy": t_cy, "n": len(items), "words": sum(lat.n for lat, _ in items),
            "n_symbols": model.n_symbols, "diff": diff}


def section_dp(model_dir: str, dev_path: Path, n_sents: int, budget_s: float, repeats: int) -> dict:
    r = _subprocess("_dp_worker", {"model": model_dir, "dev": str(dev_path), "n_sents": n_sents,
                                   "budget_s": budget_s, "max_words": 40, "repeats": repeats})
    t_np, t_cy, k = r["t_np"], r["t_cy"], r["n"]
    return {"cython_vs_numpy_inside": _figure(
        round(t_np / t_cy, 2), "x", reference=round(t_np / k * 1e3, 3), ref_unit="ms/sentence (NumPy)",
        ratio=t_np / t_cy, meaning="NumPy seconds / Cython seconds, same sentences, one thread",
        cython_ms_per_sentence=t_cy / k * 1e3, n_sentences=k, n_words=r["words"],
        n_symbols=r["n_symbols"], max_relative_difference=r["diff"])}


def _parse(parser, texts: Sequence[str], repeats: int):
    list(parser.pipe(texts[:16]))  # warm-up
    docs: list = []

    def run():
        docs[:] = list(parser.pipe(texts, batch_size=256))

    return (docs, *best_times(run, repeats))


def section_analysis(parser, pipe, texts: Sequence[str], repeats: int) -> Tuple[dict, list, float]:
    """``punctgen`` over the parsed Docs with ``pipe`` in batches of 256, like the parser (the
    component analyses a batch's sentences together); one Doc at a time as an extra figure."""
    docs, t_parse, c_parse = _parse(parser, texts, repeats)
    words = sum(len(d) for d in docs)
    for d in docs[:16]:  # warm-up (caches)
        pipe(d)
    t_pg, c_pg = best_times(lambda: list(pipe.pipe(docs, batch_size=256)), repeats)
    t_one, c_one = best_times(lambda: [pipe(d) for d in docs], repeats)
    wps_pg, wps_parser = words / t_pg, words / t_parse
    fig = _figure(round(wps_pg), "words/s", reference=round(wps_parser), ref_unit="words/s (spaCy parser pipeline)",
                  ratio=wps_pg / wps_parser, meaning="punctgen words/s / parser words/s (wall; pipe, batches of 256)",
                  target=f">= {TARGETS['analysis_speedup_vs_parser']}",
                  met=wps_pg / wps_parser >= TARGETS["analysis_speedup_vs_parser"],
                  cpu_words_per_second=round(words / c_pg), parser_cpu_words_per_second=round(words / c_parse),
                  cpu_ratio=(words / c_pg) / (words / c_parse),
                  one_doc_at_a_time_words_per_second=round(words / t_one),
                  one_doc_at_a_time_cpu_words_per_second=round(words / c_one),
                  n_texts=len(texts), n_docs=len(docs), n_words=words)
    return {"analysis_throughput": fig}, docs, len(texts) / t_parse


def section_restore(model, dev_sents, n_sents: int, n_samples: int, parser_sps: float,
                    n_marginal: Optional[int] = None) -> dict:
    """Decoder sentences per second against the parser's, each decoder over the whole batch (as
    the component calls it): ``marginal`` (the default), ``slot`` and ``sample``.  ``marginal``
    runs on ``n_marginal`` sentences (default ``n_sents``) and also reports CPU figures: end to
    end, and split into ATTACH's priors (``mixture_priors``) and the decoding."""
    from spacy_punctgen.decode.marginal import marginal_slot_choices
    from spacy_punctgen.decode.mbr import restore_sentences
    from spacy_punctgen.decode.priors import mixture_priors

    short = [s for s in dev_sents if len(s) <= 60]
    out = {}
    for method, kw in (("marginal", {}), ("slot", {}), ("sample", {"n_samples": n_samples})):
        sents = short[:n_marginal or n_sents] if method == "marginal" else short[:n_sents]
        restore_sentences(model, sents[:2], method=method, seed=0, **kw)  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        restore_sentences(model, sents, method=method, seed=0, **kw)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        sps = len(sents) / wall
        extra = {"cpu_sentences_per_second": round(len(sents) / cpu, 2)}
        if method == "marginal":  # the same sentences again, in two steps (units already seen)
            c0 = time.process_time()
            prior_sets, channel = mixture_priors(model, [[s] for s in sents])
            c1 = time.process_time()
            marginal_slot_choices(model, prior_sets, channel)
            c2 = time.process_time()
            extra.update(priors_cpu_sentences_per_second=round(len(sents) / (c1 - c0), 2),
                         decode_cpu_sentences_per_second=round(len(sents) / (c2 - c1), 2))
        target = {"target": f">= {TARGETS['restore_vs_parser']}",
                  "met": sps / parser_sps >= TARGETS["restore_vs_parser"]} if method == "marginal" else {}
        out[f"restore_{method}"] = _figure(
            round(sps, 2), "sentences/s", reference=round(parser_sps, 2),
            ref_unit="sentences/s (spaCy parser pipeline)", ratio=sps / parser_sps,
            meaning="decoder sentences/s / parser sentences/s", n_sentences=len(sents), **target, **extra,
            **({"n_samples": n_samples} if method == "sample" else {}))
    if getattr(model, "lexical", None) is not None:
        out["restore_lexical"] = section_restore_lexical(model, short[:n_marginal or n_sents], parser_sps)
    return out


def section_restore_lexical(model, sents, parser_sps: float) -> dict:
    """The decoder of a model with a lexical expert (what the component runs then): the expert's
    evidence over the sentences' words in order, punctgen's slot distributions, and the MBR of
    their product in Python (:mod:`spacy_punctgen.decode.lexical`), end to end, then in CPU
    seconds per step (the same sentences again)."""
    from spacy_punctgen.decode.lexical import lexical_choices, restore_with_lexical
    from spacy_punctgen.decode.marginal import RESTORE_PRUNE, marginal_slot_distributions
    from spacy_punctgen.decode.priors import mixture_priors

    from dataclasses import replace

    sents = [replace(s, slots=[()] * len(s.slots)) for s in sents]  # as the component decodes them
    lexical, weight = model.lexical, model.lexical.weight

    def run():
        return restore_with_lexical(model, [[s] for s in sents], lexical.sentence_evidence(sents), weight)

    restore_with_lexical(model, [[s] for s in sents[:2]], lexical.sentence_evidence(sents[:2]), weight)  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    c0 = time.process_time()
    evidence = lexical.sentence_evidence(sents)
    c1 = time.process_time()
    prior_sets, channel = mixture_priors(model, [[s] for s in sents])
    c2 = time.process_time()
    dists = marginal_slot_distributions(model, prior_sets, channel, prune=RESTORE_PRUNE)
    c3 = time.process_time()
    for d, q in zip(dists, evidence):
        lexical_choices(d, q, weight)
    c4 = time.process_time()
    n = len(sents)
    sps = n / wall
    return _figure(
        round(sps, 2), "sentences/s", reference=round(parser_sps, 2), ref_unit="sentences/s (spaCy parser pipeline)",
        ratio=sps / parser_sps, meaning="decoder sentences/s / parser sentences/s (lexical expert on)",
        target=f">= {TARGETS['restore_vs_parser']}", met=sps / parser_sps >= TARGETS["restore_vs_parser"],
        n_sentences=n, expert_weight=weight, cpu_sentences_per_second=round(n / cpu, 2),
        evidence_cpu_sentences_per_second=round(n / max(c1 - c0, 1e-9), 2),
        priors_cpu_sentences_per_second=round(n / max(c2 - c1, 1e-9), 2),
        marginals_cpu_sentences_per_second=round(n / max(c3 - c2, 1e-9), 2),
        mbr_cpu_sentences_per_second=round(n / max(c4 - c3, 1e-9), 2))


def section_trees(parser, texts: Sequence[str], repeats: int) -> dict:
    """CPU seconds of :func:`~spacy_punctgen.parsing.kbest.kbest_trees` (every pipe up to the
    parser, then the trees) against the pipeline's greedy parse of the same texts, batches of 256.
    ``run_bench`` passes the dev sentences' words without their punctuation: the trees serve
    restoration, which parses unpunctuated text (punctuated text has more tokens to parse)."""
    from spacy_punctgen.parsing.kbest import kbest_trees

    def docs():
        return [parser.make_doc(t) for t in texts]

    list(parser.pipe(docs()[:16]))  # warm-up
    c_greedy = best_times(lambda: list(parser.pipe(docs(), batch_size=256)), repeats)[1]
    out = {}
    for search, k in TREE_SETTINGS:
        kbest_trees(parser, docs()[:16], k, search=search)  # warm-up
        trees: list = []

        def run():
            trees[:] = kbest_trees(parser, docs(), k, batch_size=256, search=search)

        c = best_times(run, repeats)[1]
        ratio = c / c_greedy
        out[f"trees_{search}_{k}"] = _figure(
            round(c, 3), "CPU s", reference=round(c_greedy, 3), ref_unit="CPU s (greedy parse of the same texts)",
            ratio=ratio, meaning=f"{k} trees per sentence ({search}) / greedy parse",
            target=f"<= {TARGETS['trees_cost_vs_greedy']}", met=ratio <= TARGETS["trees_cost_vs_greedy"],
            mean_distinct_trees=round(sum(map(len, trees)) / max(1, len(trees)), 3), n_texts=len(texts))
    return out


def transcript_words(source: Optional[str], dev_path: Path, n_words: int) -> List[str]:
    """``n_words`` lowercased words of a transcript, the source cycled or cut: ``source`` a
    ``word<TAB>label`` file (``.tsv``, :func:`~spacy_punctgen.data.ted.read_ted`) or plain text
    (its whitespace-separated words), else the UD file ``dev_path`` without its punctuation
    (:func:`~spacy_punctgen.data.transcript.transcript_text`)."""
    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.data.ted import read_ted
    from spacy_punctgen.data.transcript import transcript_text

    if source is None:
        words, where = transcript_text(read_conllu(dev_path)).split(), dev_path
    else:
        where = Path(source)
        if not where.is_file():
            raise FileNotFoundError(Errors.E607.format(path=where))
        words = read_ted(where).words if where.suffix == ".tsv" else where.read_text(encoding="utf-8").split()
    if not words:
        raise ValueError(Errors.E608.format(path=where))
    words = [w.lower() for w in words]
    return [words[i % len(words)] for i in range(n_words)]


def transcript_runs(model_path: Optional[str]) -> List[Tuple[str, Optional[str], dict]]:
    """The pipelines the ``transcript`` section restores with: ``(label, model, config)``: the
    shipped one, and ``model_path`` (with its lexical expert, if it has one, and without)."""
    from spacy_punctgen.model.serialize import LEXICAL_CFG_FILE

    runs: List[Tuple[str, Optional[str], dict]] = [("shipped", None, {})]
    if model_path:
        runs.append(("model", model_path, {}))
        if (Path(model_path) / LEXICAL_CFG_FILE).is_file():
            runs.append(("model_expert_off", model_path, {"lexical_weight": 0.0}))
    return runs


def section_transcript(words: Sequence[str], model_path: Optional[str], lang: str, source: str) -> dict:
    """Per pipeline of :func:`transcript_runs`, in a fresh single-threaded subprocess: CPU seconds
    of loading it and restoring ``words`` as one line against the 60 s budget, its peak RSS
    against the 500 MB budget, and punctgen's words/s (restoring minus parsing) against the
    parser's over the same windows. The budgets are judged at :data:`TRANSCRIPT_WORDS` words
    only (``met`` None otherwise)."""
    out: Dict[str, dict] = {}
    judged = len(words) >= TRANSCRIPT_WORDS
    with tempfile.TemporaryDirectory(prefix="punctgen-transcript-") as tmp:
        path = Path(tmp) / "transcript.txt"
        path.write_text(" ".join(words), encoding="utf-8")
        for label, model, config in transcript_runs(model_path):
            _log(f"transcript: {len(words):,} words, {label} pipeline (subprocess)")
            r = _subprocess("_transcript_worker", {"text": str(path), "model": model, "config": config,
                                                   "lang": lang, "started": time.time()})
            name = f"transcript_{label}"
            common = {"n_words": r["n_words"], "source": source, "model": model or "shipped",
                      "expert": r["expert"], "expert_weight": r["expert_weight"]}
            total = r["load_cpu_seconds"] + r["restore_cpu_seconds"]
            budget = TARGETS["transcript_seconds"]
            out[name] = _figure(
                round(total, 2), "CPU s", reference=budget, ref_unit="s (target)", ratio=budget / total,
                meaning="target / measured (> 1: within target)",
                target=f"< {budget:.0f} s for {TRANSCRIPT_WORDS:,} words (one core, loading included)",
                met=(total < budget) if judged else None, wall_seconds=round(r["load_seconds"] + r["restore_seconds"], 2),
                load_cpu_seconds=round(r["load_cpu_seconds"], 2), restore_cpu_seconds=round(r["restore_cpu_seconds"], 2),
                words_per_second=round(r["n_words"] / r["restore_cpu_seconds"]), n_pieces=r["n_pieces"],
                added_chars=r["added_chars"], **common)
            pg = r["restore_cpu_seconds"] - r["parse_cpu_seconds"]
            pg_wps, parse_wps = r["n_words"] / max(pg, 1e-9), r["n_words"] / r["parse_cpu_seconds"]
            out[f"{name}_vs_parser"] = _figure(
                round(pg_wps), "words/s", reference=round(parse_wps), ref_unit="words/s (its parser, the same windows)",
                ratio=pg_wps / parse_wps, meaning="punctgen words/s (restore_text minus the parse) / parser words/s, CPU",
                target=f">= {TARGETS['restore_vs_parser']}", met=pg_wps / parse_wps >= TARGETS["restore_vs_parser"],
                punctgen_cpu_seconds=round(pg, 2), parse_cpu_seconds=round(r["parse_cpu_seconds"], 2), **common)
            rss_budget = TARGETS["transcript_peak_rss_mb"]
            out[f"{name}_peak_rss"] = _figure(
                round(r["peak_rss_mb"], 1), "MB", reference=round(r["rss_loaded_mb"], 1),
                ref_unit="MB (after loading the pipeline)", ratio=r["peak_rss_mb"] / r["rss_loaded_mb"],
                meaning="peak RSS / RSS after loading", target=f"< {rss_budget:.0f} MB for {TRANSCRIPT_WORDS:,} words",
                met=(r["peak_rss_mb"] < rss_budget) if judged else None,
                rss_start_mb=round(r["rss_start_mb"], 1), **common)
    return out


def chain_sentences(parts) -> "PunctSentence":
    """Real sentences glued into one projective tree: each part's roots hang from the
    previous part's (first) root as ``parataxis``; the junction slots are concatenated."""
    from spacy_punctgen.data.preprocess import PunctSentence

    words, upos, xpos, deprels, heads = [], [], [], [], []
    slots: List[Tuple[str, ...]] = []
    prev_root = None
    for s in parts:
        off = len(words)
        roots = [i for i, h in enumerate(s.heads) if h < 0]
        words += s.words
        upos += s.upos
        xpos += s.xpos
        deprels += list(s.deprels)
        heads += [h + off if h >= 0 else -1 for h in s.heads]
        if prev_root is not None:
            for r in roots:
                heads[off + r] = prev_root
                deprels[off + r] = "parataxis"
            slots[-1] = tuple(slots[-1]) + tuple(s.slots[0])
            slots += list(s.slots[1:])
        else:
            slots = list(s.slots)
        prev_root = off + roots[0]
    return PunctSentence(words=words, upos=upos, xpos=xpos, deprels=deprels, heads=heads, slots=slots,
                         sent_id="chained")


def bucket_sentences(dev_sents, lo: int, hi: int, words: int, seed: int) -> list:
    """About ``words`` words of sentences with lo ≤ length ≤ hi: real dev sentences where
    there are enough, else chains of dev sentences of lengths drawn uniformly in [lo, hi]."""
    real = [s for s in dev_sents if lo <= len(s) <= hi]
    if sum(len(s) for s in real) >= words:
        out, tot = [], 0
        for s in real:
            out.append(s)
            tot += len(s)
            if tot >= words:
                break
        return out
    rng = random.Random(seed)
    pool = [s for s in dev_sents if len(s) >= 3 and not s.slots[0]] or list(dev_sents)
    out, tot = [], 0
    while tot < words:
        target = rng.randint(lo, hi)
        parts, n = [], 0
        while n < target:
            s = rng.choice(pool)
            if n + len(s) > hi:
                fits = [p for p in pool if n + len(p) <= hi]
                if not fits or n >= lo:
                    break
                s = rng.choice(fits)
            parts.append(s)
            n += len(s)
        sent = chain_sentences(parts)
        out.append(sent)
        tot += len(sent)
    return out


def section_scaling(model, dev_sents, words_per_bucket: int, repeats: int, seed: int) -> dict:
    from spacy_punctgen.inference.dp import log_prob

    phi = model.phi()
    # with evaluation-time smoothing every sentence is possible, so the DP does its full work
    # (an impossible sentence can stop early, and long chained sentences usually are impossible)
    smooth = model.smooth_delta > 0

    rows = []
    for lo, hi in BUCKETS:
        sents = bucket_sentences(dev_sents, lo, hi, words_per_bucket, seed)
        n_words = sum(len(s) for s in sents)
        # the model work of the component: compile, Viterbi, log p'(x|T), a batch at a time
        t = best_time(lambda: model.analyze(sents), repeats)
        preps = [model.prepare(s, smoothed=smooth) for s in sents]
        cps = [_cand_probs(model, p) for p in preps]
        t_dp = best_time(lambda: [log_prob(p.lattice, model.grammar, c, phi, model.r2l)
                                  for p, c in zip(preps, cps)], repeats)
        finite = sum(math.isfinite(log_prob(p.lattice, model.grammar, c, phi, model.r2l))
                     for p, c in zip(preps, cps))
        rows.append({"bucket": f"{lo}-{hi}", "n_sentences": len(sents), "n_words": n_words,
                     "max_length": max(len(s) for s in sents),
                     "synthetic": any(s.sent_id == "chained" for s in sents),
                     "us_per_word": t / n_words * 1e6, "dp_us_per_word": t_dp / n_words * 1e6,
                     "n_possible": int(finite)})
    per_word = [r["us_per_word"] for r in rows]
    dp_per_word = [r["dp_us_per_word"] for r in rows]
    spread = max(per_word) / min(per_word)
    return {"scaling": _figure(
        round(spread, 3), "x", reference=round(min(per_word), 3), ref_unit="us/word (fastest bucket)",
        ratio=spread, meaning="slowest / fastest bucket time per word (analysis: prepare+Viterbi+inside)",
        smoothed=smooth,
        target=f"<= {TARGETS['scaling_spread']}", met=spread <= TARGETS["scaling_spread"],
        dp_spread=max(dp_per_word) / min(dp_per_word), buckets=rows,
        spread_from_11_words=max(per_word[1:]) / min(per_word[1:]))}


def _doc_outputs(doc) -> str:
    """The component's outputs of one Doc as canonical JSON (tuples and lists alike)."""
    return json.dumps({"u": doc._.underlying_punct, "lp": doc._.punct_logprob,
                       "t": [(t._.punct_left, t._.punct_right) for t in doc]}, sort_keys=True)


def section_pipe(model_dir: str, lang: str, dev_path: Path, n_docs: int, repeats: int) -> dict:
    import spacy

    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.pipeline.doc_convert import doc_from_ud

    nlp = spacy.blank(lang)
    nlp.add_pipe("punctgen", config={"model": model_dir})
    uds = read_conllu(dev_path)
    uds = [uds[i % len(uds)] for i in range(n_docs)]
    words = sum(len(u.forms) for u in uds)
    results = {}
    for n_proc in (1, 2):
        outs: list = []

        def run():
            docs = [doc_from_ud(nlp.vocab, u) for u in uds]
            outs[:] = [_doc_outputs(d) for d in nlp.pipe(docs, n_process=n_proc, batch_size=64)]

        results[n_proc] = (best_time(run, repeats), list(outs))
    (t1, o1), (t2, o2) = results[1], results[2]
    same = o1 == o2
    first_diff = None if same else next((i for i, (a, b) in enumerate(zip(o1, o2)) if a != b), len(o1))
    return {"pipe_n_process_2": _figure(
        round(words / t2), "words/s", reference=round(words / t1), ref_unit="words/s (n_process=1)",
        ratio=t1 / t2, meaning="n_process=2 words/s / n_process=1 words/s", target="identical outputs",
        met=same, identical_outputs=same, first_differing_doc=first_diff,
        n_docs=n_docs, n_words=words, cpu_count=os.cpu_count())}


# -------------------------------------------------------------------------- main
def run_bench(data: Optional[str] = None, parser_path: Optional[str] = None, model_path: Optional[str] = None,
              quick: bool = False, sections: Sequence[str] = SECTIONS, repeats: Optional[int] = None,
              seed: int = 0, lang: str = "en", partial: Optional[Callable[[dict], None]] = None,
              transcript: Optional[str] = None, transcript_words_n: Optional[int] = None) -> dict:
    """All figures; ``partial(result_so_far)`` is called after each section (long runs).
    ``transcript``/``transcript_words_n``: the ``transcript`` section's text and length
    (default: the dev split's words, :data:`TRANSCRIPT_WORDS`; quick 1,000)."""
    from spacy_punctgen.data.conllu import resolve_split

    folder = _resolve_data(data, quick)
    # the given paths are checked before any section runs (a long run must not fail at its end)
    if parser_path and not Path(parser_path).is_dir():
        raise FileNotFoundError(Errors.E602.format(path=parser_path))
    if model_path and not Path(model_path).is_dir():
        raise FileNotFoundError(Errors.E606.format(path=model_path))
    if transcript and not Path(transcript).is_file():
        raise FileNotFoundError(Errors.E607.format(path=transcript))
    treebank = _treebank_name(folder)
    repeats = repeats or (1 if quick else 3)
    n = {"dp": 15 if quick else 200, "dp_budget": 5.0 if quick else 60.0, "texts": 60 if quick else 10**9, "restore": 5 if quick else 100,
         "restore_marginal": 5 if quick else 1000,
         "samples": 1000, "memory": 400 if quick else 10_000, "scale_words": 300 if quick else 3000,
         "pipe": 60 if quick else 2000, "parser_epochs": 2 if quick else 5,
         "transcript": transcript_words_n or (1000 if quick else TRANSCRIPT_WORDS)}
    for s in sections:
        if s not in SECTIONS:
            raise ValueError(Errors.E604.format(section=s, sections=", ".join(SECTIONS)))
    dev_path = resolve_split(str(folder), "dev")
    out: Dict[str, object] = {"data": str(folder), "treebank": treebank, "quick": quick,
                              "repeats": repeats, "python": platform.python_version(),
                              "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                              "load_average": [round(x, 2) for x in os.getloadavg()]}
    figures: Dict[str, dict] = {}

    def step(msg: str) -> None:
        if partial is not None and figures:
            partial({**out, "figures": dict(figures), "partial": True})
        _log(msg)
    tmp = tempfile.TemporaryDirectory(prefix="punctgen-bench-")
    try:
        model_dir = model_path
        need_model = set(sections) - {"training", "transcript"}
        if "training" in sections or (need_model and not model_dir):
            step(f"training: 1 epoch on {treebank} train (subprocess)")
            mdir = str(Path(tmp.name) / "model")
            res = _subprocess("_train_worker", {"train": str(resolve_split(str(folder), "train")),
                                                "out": mdir, "epochs": 1, "seed": seed})
            # CPU seconds where the trainer reports them: wall time on a busy machine overstates the cost
            epoch = min(res["epoch_cpu_seconds"] or res["epoch_seconds"])
            figures["train_epoch"] = _figure(
                round(epoch, 2), "s/epoch", reference=TARGETS["train_epoch_seconds"], ref_unit="s (target)",
                ratio=TARGETS["train_epoch_seconds"] / epoch, meaning="target / measured (> 1: within target)",
                target=f"< {TARGETS['train_epoch_seconds']} s (full EWT train, one core)",
                met=epoch < TARGETS["train_epoch_seconds"], n_sentences=res["n_sentences"],
                n_words=res["n_words"], words_per_second=res["n_words"] / epoch,
                measured="cpu seconds" if res["epoch_cpu_seconds"] else "wall seconds",
                wall_seconds=min(res["epoch_seconds"]),
                prepare_seconds=round(res["prepare_seconds"], 2), n_features=res["n_features"])
            figures["train_peak_rss"] = _figure(
                round(res["peak_rss_mb"], 1), "MB", reference=round(res["rss_before_mb"], 1),
                ref_unit="MB (the worker at start: Python + NumPy)", ratio=res["peak_rss_mb"] / res["rss_before_mb"],
                meaning="peak RSS / RSS at start", target=f"< {TARGETS['train_peak_rss_mb']:.0f} MB",
                met=res["peak_rss_mb"] < TARGETS["train_peak_rss_mb"])
            model_dir = model_dir or mdir
        out["model"] = {"path": model_path, "source": "--model"} if model_path else \
            {"source": "trained in this run: 1 full-pass epoch of train_one, paper defaults, l2r"}
        if need_model:
            _model_sections(figures, step, sections, n, model_dir, dev_path, folder, treebank, parser_path,
                            out, repeats, seed, lang)
        if "transcript" in sections:  # the shipped pipeline (and --model): no model of this run
            step(f"transcript: {n['transcript']:,} words through restore_text (subprocesses)")
            words = transcript_words(transcript, dev_path, n["transcript"])
            figures.update(section_transcript(words, model_path, lang, transcript or str(dev_path)))
    finally:
        tmp.cleanup()
    return {**out, "figures": figures}


def _model_sections(figures: dict, step: Callable[[str], None], sections: Sequence[str], n: dict, model_dir,
                    dev_path: Path, folder: Path, treebank: str, parser_path: Optional[str], out: dict,
                    repeats: int, seed: int, lang: str) -> None:
    """The sections that time the punctuation model of this run (or ``--model``) itself."""
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.model.punct_model import PunctModel

    model = PunctModel.from_disk(model_dir)
    dev_sents, _ = preprocess_file(dev_path)
    if "dp" in sections:
        step("dp: Cython vs NumPy inside pass")
        figures.update(section_dp(str(model_dir), dev_path, n["dp"], n["dp_budget"], repeats))
    parser_sps = None
    if {"analysis", "restore", "trees"} & set(sections):
        import spacy

        from spacy_punctgen.data.conllu import read_conllu

        step("analysis: loading or training the reference parser")
        parser, info = _load_parser(parser_path, folder, treebank, lang, n["parser_epochs"])
        out["parser"] = info
        if "analysis" in sections or "restore" in sections:  # (trees needs no punctgen pipe)
            pipe = spacy.blank(lang).add_pipe("punctgen", config={"model": str(model_dir)})
            texts = _texts(read_conllu(dev_path))[: n["texts"]]
            step(f"analysis: parser {info['source']} vs punctgen")
            fig, _, parser_sps = section_analysis(parser, pipe, texts, repeats)
            if "analysis" in sections:
                figures.update(fig)
        if "trees" in sections:  # on what restoration parses: the words without their marks
            step("trees: several trees from one parser vs its greedy parse")
            words = [" ".join(s.words) for s in dev_sents if s.words][: n["texts"]]
            figures.update(section_trees(parser, words, repeats))
    if "restore" in sections:
        step("restore: slot and sample decoders")
        figures.update(section_restore(model, dev_sents, n["restore"], n["samples"], parser_sps,
                                       n["restore_marginal"]))
    if "memory" in sections:
        step(f"memory: analysing {n['memory']} Docs (subprocess)")
        m = _subprocess("_memory_worker", {"model": str(model_dir), "dev": str(dev_path),
                                           "n_docs": n["memory"], "lang": lang})
        growth = m["rss_end_mb"] / m["rss_warm_mb"]
        figures["analysis_rss_growth"] = _figure(
            round(m["rss_end_mb"] - m["rss_warm_mb"], 2), "MB", reference=round(m["rss_warm_mb"], 1),
            ref_unit="MB (RSS after one warm-up pass over the distinct sentences)", ratio=growth,
            meaning=f"RSS after {m['n_docs']} Docs / RSS after {m['warmup_docs']}",
            target=f"<= {TARGETS['analysis_rss_growth']}", met=growth <= TARGETS["analysis_rss_growth"],
            rss_end_mb=m["rss_end_mb"], peak_rss_mb=m["peak_rss_mb"], n_docs=m["n_docs"],
            docs_per_second=m["n_docs"] / m["seconds"])
    if "scaling" in sections:
        step("scaling: time per word by sentence length")
        figures.update(section_scaling(model, dev_sents, n["scale_words"], repeats, seed))
    if "pipe" in sections:
        step("pipe: n_process=1 vs 2")
        figures.update(section_pipe(str(model_dir), lang, dev_path, n["pipe"], repeats))


def markdown_table(result: dict) -> str:
    """The figures as a Markdown table, with the command and the set-up above it."""
    lines = [f"Produced by `{result.get('command', 'python -m spacy_punctgen bench')}` "
             f"on {result.get('machine')} (load average {result.get('load_average')}), "
             f"data `{result.get('data')}`.", ""]
    if "parser" in result:
        p = result["parser"]
        lines.append(f"Parser (reference): {p['source']}" + (f", `{p['path']}`" if p.get("path") else "")
                     + f"; components {', '.join(p['pipe_names'])}.")
    if "model" in result:
        lines.append(f"Punctuation model: {result['model'].get('path') or result['model']['source']}.")
    if result.get("partial"):
        lines.append("**Partial results: the run had not finished.**")
    lines += ["", "| figure | value | reference (same run) | ratio | meaning of the ratio | target | met |",
              "|---|---|---|---|---|---|---|"]

    def fmt(v):
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    for name, f in result["figures"].items():
        met = "" if f["met"] is None else ("yes" if f["met"] else "**no**")
        lines.append(f"| {name} | {fmt(f['value'])} {f['unit']} | {fmt(f['reference'])} {f['reference_unit']} | "
                     f"{f['ratio']:.3g} | {f['ratio_meaning']} | {f['target'] or ''} | {met} |")
    an = result["figures"].get("analysis_throughput")
    if an and "cpu_words_per_second" in an:
        lines += ["", f"Analysis in CPU seconds of the bench process (all threads): punctgen "
                      f"{an['cpu_words_per_second']:,} words/s, parser {an['parser_cpu_words_per_second']:,} "
                      f"words/s (ratio {an['cpu_ratio']:.3g}). punctgen one Doc at a time (`pipe(doc)`): "
                      f"{an['one_doc_at_a_time_words_per_second']:,} words/s wall, "
                      f"{an['one_doc_at_a_time_cpu_words_per_second']:,} CPU."]
    rm = result["figures"].get("restore_marginal")
    if rm and "priors_cpu_sentences_per_second" in rm:
        lines += ["", f"Restoration (`marginal`, {rm['n_sentences']:,} sentences) in CPU seconds: "
                      f"{rm['cpu_sentences_per_second']:,} sentences/s end to end; ATTACH priors "
                      f"{rm['priors_cpu_sentences_per_second']:,}, decoding {rm['decode_cpu_sentences_per_second']:,} "
                      f"sentences/s."]
    scal = result["figures"].get("scaling")
    if scal:
        lines += ["", "Time per word by sentence length (analysis = compile + Viterbi + inside; dp = inside only):",
                  "", "| words | sentences | words total | longest | synthetic | analysis µs/word | dp µs/word |",
                  "|---|---|---|---|---|---|---|"]
        for r in scal["buckets"]:
            lines.append(f"| {r['bucket']} | {r['n_sentences']} | {r['n_words']} | {r['max_length']} | "
                         f"{'yes' if r['synthetic'] else 'no'} | {r['us_per_word']:.1f} | {r['dp_us_per_word']:.2f} |")
    return "\n".join(lines) + "\n"


def command_line(args) -> str:
    parts = ["python -m spacy_punctgen bench"]
    for flag, val in (("--data", args.data), ("--parser", args.parser), ("--model", args.model),
                      ("--sections", args.sections), ("--repeats", args.repeats),
                      ("--transcript", getattr(args, "transcript", None)),
                      ("--transcript-words", getattr(args, "transcript_words", None))):
        if val:
            parts.append(f"{flag} {val}")
    if args.quick:
        parts.append("--quick")
    if args.markdown:
        parts.append(f"--markdown {args.markdown}")
    if getattr(args, "json", False):
        parts.append("--json")
    return " ".join(parts)


