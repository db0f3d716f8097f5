"""Training: Adam on the regularised objective, dev-based model selection (docs/model.md §4).

Why these choices: the paper trains with Adam (lr 0.07, batches of 5, 400
sentences per "epoch", 30 epochs, L2), tuned per language on dev; we expose all
of them, plus full-pass epochs.  Parameters stay float32, every DP quantity is
float64.  The optimizer is :class:`.lazy_adam.LazyAdam`: θ has millions of weights and a
5-sentence batch uses a few percent of them, so thinc's dense ``Adam`` spent most of an epoch
updating weights whose data gradient was zero; the lazy one applies those steps in closed form
when a weight is next used (see its module; ``tests/training/test_lazy_adam.py`` checks it
against thinc's).  After each epoch the dev per-slot perplexity is
computed and the best parameters so far are kept.  The channel direction is a
hyperparameter: ``--direction auto`` trains an L2R and an R2L model and keeps
the one with the better dev perplexity (in parallel processes with ``--jobs 2``).
The ATTACH ablation (``--mode attach``) is the same code with the identity
channel, for which the direction is irrelevant.

``ς`` (``--l2``) is the coefficient of ``‖(θ, ψ)‖²`` in the objective summed over the
whole training set; a batch of ``b`` sentences out of ``N`` carries ``ς·b/N`` of it.

The defaults are the paper's recipe.  On zh_gsd_ud14 / en_ewt dev, with our
(larger) feature set, this recipe overfits and oscillates (zh ATTACH dev
perplexity 1.38); what worked better, tuned on dev::

    --sentences-per-epoch 0 --epochs 5 --lr 0.001 --average
    --psi-keep-bias 3 --psi-lr-scale 10 [--templates <defaults>,inner]
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, replace
from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.util import logger as spacy_logger

from spacy_punctgen.data.conllu import resolve_split  # noqa: F401  (also imported from here by demo, bench, evaluate_restore)
from spacy_punctgen.features.templates import DEFAULT_TEMPLATES, FeatureConfig, PAIR_PROPERTIES
from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.training.lazy_adam import LazyAdam
from spacy_punctgen.model.punct_model import PunctModel, Prepared
from spacy_punctgen.model.settings import ModelSettings
from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors

#: Progress goes to spaCy's logger (``spacy.punctgen``, a child of ``spacy.util.logger``, so
#: spaCy's handler writes it to stderr); ``punctgen train`` sets its level to INFO.
logger = spacy_logger.getChild("punctgen")



@dataclass
class TrainConfig(ModelSettings):
    """How to train; the model's own settings (channel, direction, ψ's start, smoothing, ...)
    and their defaults are :class:`~spacy_punctgen.model.settings.ModelSettings`'s. ``direction``
    may also be ``auto``: train both and keep the better on dev."""
    epochs: int = 30
    lr: float = 0.07
    batch_size: int = 5
    sentences_per_epoch: int = 400  # 0 = a full pass over the training data per epoch
    l2: float = 1.0
    seed: int = 0
    theta_init: float = 0.0  # std of θ's initial N(0, ·) (paper: 1)
    average: bool = False  # evaluate / keep thinc's moving averages of the parameters
    patience: int = 0  # stop after this many epochs without a better dev perplexity; 0 = never
    max_seconds: float = 0.0  # stop before an epoch that would end past this training time; 0 = never
    properties: Optional[List[str]] = None
    jobs: int = 1
    progress: bool = True

    def feature_config(self) -> FeatureConfig:
        return FeatureConfig(templates=list(self.templates or DEFAULT_TEMPLATES),
                             properties=list(self.properties or PAIR_PROPERTIES))


class _Progress:
    """tqdm if installed, else a minimal counter on the logger."""

    def __init__(self, total: int, desc: str, enabled: bool):
        self.bar = None
        self.enabled = enabled
        self.total, self.n, self.desc = total, 0, desc
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=desc, leave=False, file=sys.stderr, dynamic_ncols=True)
            except ImportError:  # pragma: no cover - tqdm ships with spaCy's deps
                self.bar = None

    def update(self, k: int = 1, **postfix) -> None:
        self.n += k
        if self.bar is not None:
            self.bar.update(k)
            if postfix:
                self.bar.set_postfix(postfix, refresh=False)
        elif self.enabled and (self.n == self.total or self.n % max(1, self.total // 10) == 0):
            logger.info("%s: %d/%d", self.desc, self.n, self.total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _log(msg: str, enabled: bool = True) -> None:
    if enabled:
        logger.info(msg)


def _sum_sq(x: np.ndarray, chunk: int = 1 << 20) -> float:
    """Σ x² in float64, ``chunk`` entries at a time (no full-size float64 copy, no BLAS)."""
    return float(sum(np.square(x[a:a + chunk], dtype=np.float64).sum() for a in range(0, x.size, chunk)))


def train_one(model: PunctModel, train: Sequence[Prepared], dev: Sequence[Prepared], cfg: TrainConfig,
              tag: str = "") -> Tuple[PunctModel, dict]:
    """Train ``model`` (already initialised) in place; restore the best-dev parameters.

    Returns the model and a history dict.
    """
    rng = np.random.default_rng(cfg.seed + 1)
    # one implementation for θ (sparse steps) and ψ (every entry, every step)
    lazy = LazyAdam(model.n_features, cfg.lr, average=cfg.average)
    lazy_psi = LazyAdam(model.psi.size, cfg.lr * cfg.psi_lr_scale, average=cfg.average)
    model.psi = np.ascontiguousarray(model.psi)  # stepped in place through a flat view
    psi_all = np.arange(model.psi.size, dtype=np.int64)
    N = len(train)
    per_epoch = N if cfg.sentences_per_epoch <= 0 else min(cfg.sentences_per_epoch, N)
    order = rng.permutation(N)
    cursor = 0
    full = model.mode == "full"
    history: List[dict] = []
    best = {"perplexity": math.inf, "epoch": 0, "theta": model.theta.copy(), "psi": model.psi.copy()}
    dev_res = model.perplexity(dev) if dev else None
    if dev_res is not None:
        best["perplexity"] = dev_res["perplexity_per_slot"]
        _log(f"[{tag}] epoch 0: dev perplexity/slot {best['perplexity']:.4f}", cfg.progress)
    t_train = 0.0
    t_start = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        t0 = time.perf_counter()
        c0 = time.process_time()
        idx = []
        while len(idx) < per_epoch:
            take = min(per_epoch - len(idx), N - cursor)
            idx.extend(order[cursor:cursor + take].tolist())
            cursor += take
            if cursor >= N:
                order = rng.permutation(N)
                cursor = 0
        bar = _Progress(per_epoch, f"[{tag}] epoch {epoch}", cfg.progress)
        tot_obj = tot_ll = tot_unm = 0.0
        tot_slots = n_imp = 0
        # ‖θ‖² for the reported objective, kept up to date over each step's features (a
        # pass over θ per batch cost as much as the rest of the step)
        # (NumPy reductions, not BLAS: a threaded BLAS call leaves its threads spinning on the
        # other cores, which cost more CPU than the whole step)
        theta_sq = _sum_sq(model.theta)
        for a in range(0, per_epoch, cfg.batch_size):
            batch = [train[i] for i in idx[a:a + cfg.batch_size]]
            l2 = cfg.l2 * len(batch) / N
            res = model.objective_and_gradient(batch, l2=l2, xi=cfg.xi, sparse=True, theta_sq=theta_sq)
            # minimise −objective: gradient 2ς'θ − Σ data part
            theta_sq += lazy.step(model.theta, res.theta_idx, -res.theta_val, l2=l2, unique=True)
            if full:  # L2 already inside grad_psi
                lazy_psi.step(model.psi.reshape(-1), psi_all, -res.grad_psi.ravel(), unique=True)
            tot_obj += res.objective
            tot_ll += res.loglik
            tot_unm += res.expected_unmatched
            tot_slots += res.n_slots
            n_imp += res.n_impossible
            bar.update(len(batch), ppl=f"{math.exp(-tot_ll / max(tot_slots, 1)):.4f}")
        bar.close()
        t_epoch = time.perf_counter() - t0
        c_epoch = time.process_time() - c0
        t_train += t_epoch
        rec = {
            "epoch": epoch,
            "objective": tot_obj,
            "train_perplexity_per_slot": math.exp(-tot_ll / max(tot_slots, 1)),
            "train_expected_unmatched": tot_unm,
            "train_impossible": n_imp,
            "seconds": round(t_epoch, 3),  # wall clock of the training pass (no dev evaluation)
            "cpu_seconds": round(c_epoch, 3),  # CPU time of this process in that pass
        }
        lazy.sync(model.theta)
        lazy_psi.sync(model.psi.reshape(-1))
        if dev:
            live = (model.theta, model.psi)
            if cfg.average:  # score (and keep) the moving averages
                model.theta = lazy.averages(model.theta)
                if full:
                    model.psi = lazy_psi.averages(model.psi.reshape(-1)).reshape(model.psi.shape)
            dres = model.perplexity(dev)
            rec["dev_perplexity_per_slot"] = dres["perplexity_per_slot"]
            rec["dev_impossible"] = dres["n_impossible"]
            if dres["perplexity_per_slot"] < best["perplexity"]:
                best.update(perplexity=dres["perplexity_per_slot"], epoch=epoch,
                            theta=model.theta.copy(), psi=model.psi.copy())
            model.theta, model.psi = live
        history.append(rec)
        _log(f"[{tag}] epoch {epoch}: train ppl {rec['train_perplexity_per_slot']:.4f}"
             + (f", dev ppl {rec['dev_perplexity_per_slot']:.4f}" if dev else "")
             + f", E[unmatched] {tot_unm:.2f}, {t_epoch:.1f}s ({c_epoch:.1f}s CPU)", cfg.progress)
        if dev and cfg.patience > 0 and epoch - best["epoch"] >= cfg.patience:
            _log(f"[{tag}] no dev improvement for {cfg.patience} epoch(s): stopping", cfg.progress)
            break
        spent = time.perf_counter() - t_start
        if cfg.max_seconds > 0 and epoch < cfg.epochs and spent + spent / epoch > cfg.max_seconds:
            _log(f"[{tag}] another epoch would pass --max-seconds {cfg.max_seconds:g}: stopping", cfg.progress)
            break
    if dev:
        model.theta, model.psi = best["theta"], best["psi"]
    return model, {
        "direction": model.direction,
        "best_epoch": best["epoch"],
        "best_dev_perplexity_per_slot": best["perplexity"] if dev else None,
        "train_seconds": round(t_train, 3),
        "epochs": history,
    }


def _new_model(inventory: PunctInventory, cfg: TrainConfig, direction: str) -> PunctModel:
    return PunctModel(inventory, cfg.feature_config(), mode=cfg.channel, direction=direction, xi=cfg.xi,
                      smooth_delta=cfg.smooth_delta)


_FORK_JOBS: list = []  # set before forking; workers read their job from here (no pickling)


def _child(i: int):  # pragma: no cover - runs in a forked worker
    model, train, dev, cfg, tag = _FORK_JOBS[i]
    model, hist = train_one(model, train, dev, cfg, tag)
    return model.to_bytes(), hist


def train_model(train_sents: Sequence[PunctSentence], dev_sents: Sequence[PunctSentence],
                cfg: TrainConfig, inventory: Optional[PunctInventory] = None) -> Tuple[PunctModel, dict]:
    """Build the inventory (from training data), train, select the direction on dev.

    Without dev sentences the epochs are not selected (the last one is kept), and
    ``direction="auto"`` in full mode is refused (E563): there is nothing to choose it on."""
    t0 = time.perf_counter()
    if inventory is None:
        inventory = PunctInventory.from_sentences(train_sents, min_count=cfg.min_count, pairs_mode=cfg.pairs_mode)
    if cfg.channel == "attach":
        directions = ["l2r"]  # identity channel: the direction changes nothing
    elif cfg.direction == "auto":
        directions = ["l2r", "r2l"]
    else:
        from spacy_punctgen.model.channel import parse_direction

        directions = [parse_direction(cfg.direction)]
    if len(directions) > 1 and not dev_sents:  # the choice would be arbitrary
        raise ValueError(Errors.E563)
    base = _new_model(inventory, cfg, directions[0])
    train = base.prepare_all(train_sents)
    dev = base.prepare_eval(dev_sents)
    base.initialize(train, seed=cfg.seed, theta_scale=cfg.theta_init, psi_scale=cfg.psi_init,
                    psi_keep_bias=cfg.psi_keep_bias)
    t_prep = time.perf_counter() - t0
    _log(f"prepared {len(train)} train / {len(dev)} dev sentences, {base.n_features} features, "
         f"{len(inventory.punctemes)} punctemes, {len(inventory.symbols)} symbols in {t_prep:.1f}s", cfg.progress)
    models: List[Tuple[PunctModel, dict]] = []
    jobs = []
    for d in directions:
        m = base if d == directions[0] else _clone_with_direction(base, d)
        jobs.append((m, train, dev, cfg, d))
    if cfg.jobs > 1 and len(jobs) > 1:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        _FORK_JOBS[:] = [(m, tr, dv, _quiet(c), d) for m, tr, dv, c, d in jobs]
        try:
            with ctx.Pool(min(cfg.jobs, len(jobs))) as pool:
                outs = pool.map(_child, range(len(jobs)))
        finally:
            _FORK_JOBS.clear()
        for (m, *_), (blob, hist) in zip(jobs, outs):
            trained = PunctModel.from_bytes(blob)
            models.append((trained, hist))
    else:
        for job in jobs:
            models.append(train_one(*job))
    key = (lambda mh: mh[1]["best_dev_perplexity_per_slot"]) if dev else (lambda mh: 0.0)
    best_model, best_hist = min(models, key=key)
    summary = {
        "mode": cfg.channel,
        "direction": best_model.direction,
        "directions_tried": {mh[0].direction: mh[1]["best_dev_perplexity_per_slot"] for mh in models},
        "dev_perplexity_per_slot": best_hist["best_dev_perplexity_per_slot"],
        "best_epoch": best_hist["best_epoch"],
        "n_features": best_model.n_features,
        "n_train": len(train),
        "n_dev": len(dev),
        "prepare_seconds": round(t_prep, 3),
        "train_seconds": {mh[0].direction: mh[1]["train_seconds"] for mh in models},
        "config": {k: v for k, v in asdict(cfg).items() if k != "progress"},
        "history": {mh[0].direction: mh[1]["epochs"] for mh in models},
    }
    best_model.meta = {k: v for k, v in summary.items() if k != "history"}
    return best_model, summary


def _quiet(cfg: TrainConfig) -> TrainConfig:
    from dataclasses import replace

    return replace(cfg, progress=False)


def _clone_with_direction(model: PunctModel, direction: str) -> PunctModel:
    """Same inventory, features and initial parameters, other channel direction.

    Shares the extractor and scorer (their caches are direction-independent) so
    prepared sentences stay valid.
    """
    clone = PunctModel.__new__(PunctModel)
    clone.__dict__.update(model.__dict__)
    clone.direction = direction
    clone.theta = model.theta.copy()
    clone.psi = model.psi.copy()
    clone.meta = dict(model.meta)
    return clone


# ----------------------------------------------------------------------- CLI


def parse_templates(text: Optional[str]) -> Optional[List[str]]:
    """``--templates``: comma-separated names, ``default`` standing for the default set
    (so a workflow variable can add templates to it); None or empty: the default set."""
    if not text:
        return None
    out: List[str] = []
    for t in (t.strip() for t in text.split(",")):
        for name in (DEFAULT_TEMPLATES if t == "default" else [t] if t else []):
            if name not in out:
                out.append(name)
    return out or None


def with_parsed_trees(gold: Sequence[PunctSentence], parsed_path) -> List[PunctSentence]:
    """The gold sentences (words and punctuation) with the trees, UPOS and XPOS of
    ``parsed_path`` (a depunctuated parse of the same sentences, aligned as
    ``evaluate-restore --parsed`` aligns them): training data that looks like restoration's
    input, so the model learns how far to trust a parser."""
    from spacy_punctgen.data.parsed import parsed_sentences

    out = []
    for g, p in zip(gold, parsed_sentences(parsed_path, gold)):
        out.append(replace(g, upos=list(p.upos), xpos=list(p.xpos), deprels=list(p.deprels),
                           heads=list(p.heads), nonprojective=p.nonprojective))
    return out


