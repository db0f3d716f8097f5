"""Write ``tests/fixtures/dp_golden.npz``: the outputs of the compiled DP on a fixed corpus,
which ``tests/inference/test_dp_golden.py`` holds every later version of the DP to.

Run from the repository root (``python tests/make_dp_golden.py``) only when the DP's outputs
are *meant* to change; the file records what the DP computed when it was written.

The fixture stores the DP's *inputs* as well as its outputs: the grammar, ``φ``, the tree,
the surface slots and the candidates with their probabilities and tilts.  The test therefore
needs neither the treebanks nor a model, and a change to features, preprocessing or training
(which changes the candidates' probabilities) does not move the DP's golden values.

The corpus (``--help`` for the options):

* ``sample``: the first 20 dev sentences of ``assets/sample`` under the shipped English
  model, and the smoothed lattices (evaluation-time smoothing pairs) of 3 short ones;
* ``en``: the first 40 sentences of ``../shared/ud/en_ewt`` dev under the shipped model
  (2 of them smoothed too);
* ``zh``: the first 40 sentences of ``../shared/ud/zh_gsd_ud14`` dev under a model whose
  inventory comes from the first 1,500 training sentences and whose θ and ψ are random
  (the DP does not care whether a model is good; random weights spread the mass), 3 of
  them smoothed too;
* ``synthetic``: 40 seeded random problems (:mod:`spacy_punctgen.testing.problems`), 7
  of them forests with several roots and 3 impossible in both directions, and one 300-word
  tree.

The candidates' weights and ``φ`` are rounded to float32 before the DP runs, so that the
fixture stores them exactly in 4 bytes.  Every case runs in both reading directions: the
sum-product pass with its outside pass (``log p``, marginals, expected edit counts) and
the complex step on the case's tilt, the inside pass alone, the max-product pass (best
log-probability, max-marginals, Viterbi tree) and 6 seeded posterior samples.  Scalars,
Viterbi trees and samples are stored for every case; float vectors as two checksums each,
and in full (the per-edit ones: their largest entries) for the first 5 sentences of
``sample`` and ``zh`` and the synthetic problems, which keeps the file under 1 MB.  ``en``
and ``zh`` are skipped, with a note, when ``../shared/ud`` is absent.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Sequence, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "dp_golden.npz"
N_SAMPLES = 6
DIRECTIONS = (False, True)  # r2l


# ------------------------------------------------------------------ one case, both directions
def dp_outputs(grammar, lat, cand_p: np.ndarray, phi: np.ndarray, tilt: np.ndarray, r2l: bool,
               seed: int) -> Dict[str, np.ndarray]:
    """Everything the fixture records about one case in one direction."""
    from spacy_punctgen.inference import _dp
    from spacy_punctgen.inference.dp import inside_outside, log_prob, sample_posterior, viterbi

    K, S = lat.n_candidates, grammar.n_symbols
    res = inside_outside(lat, grammar, cand_p, phi, r2l, tilt=tilt)
    lp = log_prob(lat, grammar, cand_p, phi, r2l)
    logmax, best = viterbi(lat, grammar, cand_p, phi, r2l)
    maxmu = np.full(K, np.nan)
    if K and np.isfinite(logmax):
        maxmu = _dp.run_dp(lat, grammar, np.ascontiguousarray(cand_p, dtype=np.float64),
                           np.ascontiguousarray(phi, dtype=np.float64), r2l, "max", True, False)[1]
    finite = bool(np.isfinite(res.logZ))
    samples = (sample_posterior(lat, grammar, cand_p, phi, r2l, N_SAMPLES, seed=seed) if finite
               else np.full((N_SAMPLES, lat.n), -1, dtype=np.int64))
    dmu = res.dmu if res.dmu is not None else np.full(K, np.nan)
    dcounts = res.dcounts if res.dcounts is not None else np.zeros((S, S, 4))
    return {
        "logZ": np.float64(res.logZ), "log_prob": np.float64(lp), "logmax": np.float64(logmax),
        "mu": np.asarray(res.mu, dtype=np.float64) if finite else np.full(K, np.nan),
        "dmu": np.asarray(dmu, dtype=np.float64),
        "maxmu": np.asarray(maxmu, dtype=np.float64),
        "counts": np.asarray(res.counts, dtype=np.float64).reshape(-1),
        "dcounts": np.asarray(dcounts, dtype=np.float64).reshape(-1),
        "best": np.asarray(best, dtype=np.int64),
        "samples": np.asarray(samples, dtype=np.int64).reshape(-1),
    }


SCALARS = ("logZ", "log_prob", "logmax")
VECTORS = ("mu", "dmu", "maxmu", "counts", "dcounts")  # float outputs, per candidate or per edit
PER_EDIT = ("counts", "dcounts")  # S·S·4 entries: a full case keeps only the largest TOP_EDITS
TOP_EDITS = 128
INTS = ("best", "samples")
N_WEIGHTS = 2


def checksums(x: np.ndarray) -> np.ndarray:
    """``[Σ w_j·x, Σ w_j·|x|]`` for two fixed positive weight vectors ``w_j`` (entries in
    ``[0.5, 1.5]``, no random generator involved): what the fixture keeps of a float vector
    whose entries it does not store.  NaN entries (an output that does not exist) give NaN."""
    i = np.arange(len(x), dtype=np.float64)
    out = np.empty((N_WEIGHTS, 2))
    for j in range(N_WEIGHTS):
        w = 1.0 + 0.5 * np.cos(i * (j + 1) * 0.6180339887498949 + j)
        out[j] = (w @ x, w @ np.abs(x))
    return out


def _pack(parts: Sequence[np.ndarray], dtype) -> Tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([np.size(p) for p in parts], out=ptr[1:])
    flat = (np.concatenate([np.asarray(p).reshape(-1) for p in parts]) if parts else np.zeros(0))
    return flat.astype(dtype), ptr


def _unpack(flat: np.ndarray, ptr: np.ndarray, i: int) -> np.ndarray:
    return flat[ptr[i]:ptr[i + 1]]


def _f32_exact(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to float32 and back: a DP input the fixture can store in 4 bytes exactly."""
    return np.asarray(x, dtype=np.float32).astype(np.float64)


class Case:
    """One DP input: a tree, its surface slots, its candidates with their weights and tilts.
    ``full``: the fixture keeps every entry of the case's float outputs, not only checksums."""

    def __init__(self, group: str, grammar_id: int, heads, slot_syms, cand_l, cand_r, cand_node,
                 cand_p, tilt, full: bool = False):
        self.group = group
        self.grammar_id = int(grammar_id)
        self.heads = np.asarray(heads, dtype=np.int64)
        self.slot_syms = [np.asarray(s, dtype=np.int64) for s in slot_syms]
        self.cand_l = np.asarray(cand_l, dtype=np.int64)
        self.cand_r = np.asarray(cand_r, dtype=np.int64)
        self.cand_node = np.asarray(cand_node, dtype=np.int64)
        self.cand_p = _f32_exact(cand_p)
        self.tilt = _f32_exact(tilt)
        self.full = bool(full)

    @classmethod
    def from_lattice(cls, group, grammar_id, heads, slot_syms, lat, cand_p, tilt, full=False):
        return cls(group, grammar_id, heads, slot_syms, lat.cand_l, lat.cand_r, lat.cand_node, cand_p, tilt, full)

    def lattice(self, grammar):
        """The lattice of the case (its candidates are those the original lattice kept, so
        ``build_lattice`` keeps them all and in the same order)."""
        from spacy_punctgen.inference.dp import build_lattice

        node_cands = [np.stack([self.cand_l[self.cand_node == w], self.cand_r[self.cand_node == w]], axis=1)
                      for w in range(len(self.heads))]
        lat = build_lattice(grammar, self.heads.tolist(), [s.tolist() for s in self.slot_syms], node_cands)
        assert np.array_equal(lat.cand_l, self.cand_l) and np.array_equal(lat.cand_node, self.cand_node)
        return lat


def save(path: Path, grammars: List[Tuple[object, np.ndarray]], cases: List[Case],
         outputs: List[Dict[bool, Dict[str, np.ndarray]]]) -> None:
    a: Dict[str, np.ndarray] = {"n_grammars": np.int64(len(grammars))}
    for j, (g, phi) in enumerate(grammars):
        a[f"g{j}_n_symbols"] = np.int64(g.n_symbols)
        a[f"g{j}_pm_sym"], a[f"g{j}_pm_ptr"] = _pack([np.array(p, dtype=np.int64) for p in g.punctemes], np.int32)
        a[f"g{j}_phi"] = np.asarray(phi, dtype=np.float32)  # the DP ran on this value (see build_corpus)
    a["group"] = np.array([c.group for c in cases])
    a["grammar_id"] = np.array([c.grammar_id for c in cases], dtype=np.int32)
    a["full"] = np.array([c.full for c in cases])
    a["heads"], a["heads_ptr"] = _pack([c.heads for c in cases], np.int32)
    a["slot_len"], a["slot_len_ptr"] = _pack([[len(s) for s in c.slot_syms] for c in cases], np.int32)
    a["slot_sym"], a["slot_sym_ptr"] = _pack([np.concatenate(c.slot_syms) for c in cases], np.int32)
    a["cand_l"], a["cand_ptr"] = _pack([c.cand_l for c in cases], np.int32)
    a["cand_r"], _ = _pack([c.cand_r for c in cases], np.int32)
    a["cand_node"], _ = _pack([c.cand_node for c in cases], np.int32)
    a["cand_p"], _ = _pack([c.cand_p for c in cases], np.float32)
    a["tilt"], _ = _pack([c.tilt for c in cases], np.float32)
    full = [k for k, c in enumerate(cases) if c.full]
    for d in DIRECTIONS:
        tag = "r2l" if d else "l2r"
        for name in SCALARS:
            a[f"{tag}_{name}"] = np.array([o[d][name] for o in outputs], dtype=np.float64)
        for name in INTS:
            a[f"{tag}_{name}"], a[f"{tag}_{name}_ptr"] = _pack([o[d][name] for o in outputs], np.int32)
        for name in VECTORS:
            a[f"{tag}_{name}_sums"] = np.array([checksums(o[d][name]) for o in outputs])
            vecs = [outputs[k][d][name] for k in full]
            if name in PER_EDIT:
                top = [np.sort(np.argsort(-np.abs(v), kind="stable")[:TOP_EDITS]) for v in vecs]
                a[f"{tag}_{name}_idx"], _ = _pack(top, np.int32)
                vecs = [v[i] for v, i in zip(vecs, top)]
            a[f"{tag}_{name}"], a[f"{tag}_{name}_ptr"] = _pack(vecs, np.float64)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **a)


def load(path: Path = FIXTURE):
    """``(grammars, cases, golden)`` as :func:`save` wrote them: ``grammars`` a list of
    ``(Grammar, φ)``, ``golden[c][r2l]`` a dict with the scalars and ints of case ``c``, the
    checksums of its float vectors (``NAME_sums``) and, for a ``full`` case, the vectors (of
    the per-edit ones, the ``TOP_EDITS`` largest entries, at the indices ``NAME_idx``)."""
    from spacy_punctgen.inference.dp import Grammar

    z = np.load(path)
    grammars = []
    for j in range(int(z["n_grammars"])):
        ptr, sym = z[f"g{j}_pm_ptr"], z[f"g{j}_pm_sym"]
        pms = [sym[ptr[i]:ptr[i + 1]].tolist() for i in range(len(ptr) - 1)]
        grammars.append((Grammar(int(z[f"g{j}_n_symbols"]), pms), z[f"g{j}_phi"].astype(np.float64)))
    cases, golden = [], []
    n_full = 0
    for c in range(len(z["group"])):
        lens = _unpack(z["slot_len"], z["slot_len_ptr"], c)
        syms = _unpack(z["slot_sym"], z["slot_sym_ptr"], c)
        cut = np.concatenate([[0], np.cumsum(lens)])
        cand = {name: _unpack(z[name], z["cand_ptr"], c) for name in ("cand_l", "cand_r", "cand_node", "cand_p", "tilt")}
        case = Case(str(z["group"][c]), int(z["grammar_id"][c]), _unpack(z["heads"], z["heads_ptr"], c),
                    [syms[cut[i]:cut[i + 1]] for i in range(len(lens))], full=bool(z["full"][c]), **cand)
        cases.append(case)
        out = {}
        for d in DIRECTIONS:
            tag = "r2l" if d else "l2r"
            o = {name: float(z[f"{tag}_{name}"][c]) for name in SCALARS}
            for name in INTS:
                o[name] = _unpack(z[f"{tag}_{name}"], z[f"{tag}_{name}_ptr"], c).astype(np.int64)
            for name in VECTORS:
                o[f"{name}_sums"] = z[f"{tag}_{name}_sums"][c]
                if case.full:
                    o[name] = _unpack(z[f"{tag}_{name}"], z[f"{tag}_{name}_ptr"], n_full)
                    if name in PER_EDIT:  # only these entries of the vector
                        o[f"{name}_idx"] = _unpack(z[f"{tag}_{name}_idx"], z[f"{tag}_{name}_ptr"], n_full)
            out[d] = o
        n_full += case.full
        golden.append(out)
    return grammars, cases, golden


# ------------------------------------------------------------------ the corpus
def _model_cases(group: str, grammar_id: int, model, sentences, n_full: int = 0,
                 n_smoothed: int = 0, smoothed_max_words: int = 12) -> Iterator[Case]:
    """The sentences' unsmoothed lattices (the first ``n_full`` kept in full), then the
    smoothed lattices of the first ``n_smoothed`` sentences of at most ``smoothed_max_words``."""
    from spacy_punctgen.bench.suite import _cand_probs

    made = 0
    for s in sentences:
        prep = model.prepare(s)
        if prep.lattice.n_candidates:
            yield Case.from_lattice(group, grammar_id, s.heads, prep.slot_syms, prep.lattice,
                                    _cand_probs(model, prep), prep.tilt, full=made < n_full)
            made += 1
    short = [s for s in sentences if len(s) <= smoothed_max_words][:n_smoothed]
    for s in short if model.smooth_delta > 0 else ():
        prep = model.prepare(s, smoothed=True)
        yield Case.from_lattice(group + "+smoothed", grammar_id, s.heads, prep.slot_syms, prep.lattice,
                                _cand_probs(model, prep), prep.tilt)


def _first(path: Path, k: int):
    from spacy_punctgen.data.preprocess import preprocess_file

    return preprocess_file(path)[0][:k]


def _zh_model(ud: Path):
    from spacy_punctgen.data.inventory import PunctInventory
    from spacy_punctgen.model.punct_model import PunctModel

    train = _first(ud / "zh_gsd_ud14" / "zh_gsd-ud-train.conllu", 1500)
    model = PunctModel(PunctInventory.from_sentences(train, min_count=1), direction="l2r", smooth_delta=1e-3)
    model.initialize(model.prepare_all(train), seed=11, theta_scale=0.7, psi_scale=1.0, psi_keep_bias=1.0)
    return model


def _synthetic_cases(grammar_id: int, phi: np.ndarray, n_cases: int, n_impossible: int = 3) -> Iterator[Case]:
    """``n_cases`` random problems of 1 to 12 words over ``PUNCTEMES`` (forests among them),
    possible in both directions under ``phi`` except the first ``n_impossible``, then a
    300-word tree."""
    from spacy_punctgen.inference.dp import Grammar, build_lattice, log_prob
    from spacy_punctgen.testing.problems import PUNCTEMES, random_problem

    rng = np.random.default_rng(2024)
    made = impossible = 0
    while made < n_cases:
        g, heads, slots, cands, probs, _, lat, cand_p = random_problem(
            rng, n=int(rng.integers(1, 13)), S=4, max_cands=6, p_empty=0.4)
        if lat.n_candidates == 0:
            continue
        cand_p = _f32_exact(cand_p)
        if not all(np.isfinite(log_prob(lat, g, cand_p, phi, d)) for d in DIRECTIONS):
            if impossible >= n_impossible:
                continue
            impossible += 1
        tilt = (rng.random(lat.n_candidates) < 0.3).astype(np.float64)
        yield Case.from_lattice("synthetic", grammar_id, heads, slots, lat, cand_p, tilt, full=True)
        made += 1
    # a right-branching chain with a left dependent every 7 words (as in test_dp_long)
    n = 300
    heads = [-1] + [i - 1 for i in range(1, n)]
    for i in range(2, n, 7):
        heads[i - 1] = i
        heads[i] = i - 2
    slots = [[0]] + [[int(s) for s in rng.integers(1, 3, size=int(rng.random() < 0.2))] for _ in range(n)]
    pairs = np.array([(0, 0), (1, 0), (0, 1), (1, 1), (2, 2), (2, 0), (0, 2), (6, 0)])
    lat = build_lattice(Grammar(4, PUNCTEMES), heads, slots, [pairs] * n)
    tilt = (np.arange(lat.n_candidates) % 5 == 0).astype(np.float64)
    yield Case.from_lattice("synthetic-long", grammar_id, heads, slots, lat, np.full(lat.n_candidates, 0.15),
                            tilt, full=True)


def build_corpus(ud: Path, n_ud: int, n_sample: int, n_synthetic: int):
    from spacy_punctgen.inference.dp import Grammar
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.shipped import default_model_path
    from spacy_punctgen.testing.problems import PUNCTEMES, random_phi

    # φ rounded to float32, like the candidates' weights: the fixture stores both in 4 bytes
    grammars, cases = [], []
    en = PunctModel.from_disk(default_model_path())
    grammars.append((en.grammar, _f32_exact(en.phi())))
    sample = _first(ROOT / "assets" / "sample" / "en_sample-ud-dev.conllu", n_sample)
    cases += _model_cases("sample", 0, en, sample, n_full=5, n_smoothed=3)
    if (ud / "en_ewt").is_dir() and (ud / "zh_gsd_ud14").is_dir():
        cases += _model_cases("en", 0, en, _first(ud / "en_ewt" / "en_ewt-ud-dev.conllu", n_ud), n_smoothed=2)
        zh = _zh_model(ud)
        grammars.append((zh.grammar, _f32_exact(zh.phi())))
        cases += _model_cases("zh", 1, zh, _first(ud / "zh_gsd_ud14" / "zh_gsd-ud-dev.conllu", n_ud),
                              n_full=5, n_smoothed=3)
    else:
        print(f"note: {ud} lacks en_ewt or zh_gsd_ud14; the fixture holds the sample and synthetic cases only",
              file=sys.stderr)
    # synthetic problems share one grammar and one channel
    phi = _f32_exact(random_phi(np.random.default_rng(7), 4))
    grammars.append((Grammar(4, PUNCTEMES), phi))
    cases += list(_synthetic_cases(len(grammars) - 1, phi, n_synthetic))
    return grammars, cases


def compute(grammars, cases) -> List[Dict[bool, Dict[str, np.ndarray]]]:
    outputs = []
    for k, c in enumerate(cases):
        g, phi = grammars[c.grammar_id]
        lat = c.lattice(g)
        outputs.append({d: dp_outputs(g, lat, c.cand_p, phi, c.tilt, d, seed=k) for d in DIRECTIONS})
    return outputs


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ud", type=Path, default=ROOT.parent / "shared" / "ud", help="UD folder (default ../shared/ud)")
    ap.add_argument("--n-ud", type=int, default=40, help="sentences of each UD dev file")
    ap.add_argument("--n-sample", type=int, default=20, help="sentences of assets/sample dev")
    ap.add_argument("--n-synthetic", type=int, default=40)
    ap.add_argument("--out", type=Path, default=FIXTURE)
    args = ap.parse_args(argv)
    grammars, cases = build_corpus(args.ud, args.n_ud, args.n_sample, args.n_synthetic)
    outputs = compute(grammars, cases)
    save(args.out, grammars, cases, outputs)
    groups = {}
    for c in cases:
        groups[c.group] = groups.get(c.group, 0) + 1
    n_inf = sum(1 for o in outputs for d in DIRECTIONS if not np.isfinite(o[d]["logZ"]))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB): {len(cases)} cases {groups}, "
          f"{n_inf} (case, direction) impossible")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's package, not another installed one
    main()
