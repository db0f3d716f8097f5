"""Throughput of restoration on a Dask ``LocalCluster`` of 1 worker process against 2, in one
run on the same input (``spacy_punctgen.api.distributed``, docs/distributed.md).

Both clusters are started first, with the shipped pipeline loaded on every worker
(``preload``), so the timings are of restoration, not loading; then their runs alternate, and
each figure is the best of ``--repeats`` runs (with the workers' CPU seconds in that run: on a
busy machine, CPU seconds close to each other with a wall ratio near 1 mean the second worker
found no free core). The
outputs of both clusters must be identical (and, with ``--check``, equal to one process
restoring the same texts). The input: the lines of ``--input``, or by default the sentences
of ``assets/sample`` as transcripts (lowercased words, no punctuation), repeated up to
``--texts`` texts.

    python scripts/bench_distributed.py --texts 160 --repeats 3 --check --output metrics/distributed/bench.json

The ratio (2-worker texts/s over 1-worker texts/s) says what a second worker process gives
on this machine; on a machine whose cores are busy with other work it is below what an idle
one gives, so the load average is reported with it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.api import distributed as dist

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "assets" / "sample"


def sample_texts(n: int) -> list:
    sents = [s for name in ("train", "dev", "test") for s in read_conllu(SAMPLE / f"en_sample-ud-{name}.conllu")]
    texts = [" ".join(f.lower() for f in s.forms if f.isalnum()) for s in sents]
    texts = [t for t in texts if t]
    return [texts[i % len(texts)] for i in range(n)]


def _cpu_seconds() -> float:
    return time.process_time()


def time_clusters(sizes, texts: list, repeats: int, partition_size) -> dict:
    """Both clusters are started (and their pipelines loaded) first; then their runs alternate
    (1, 2, 1, 2, ...), so that a change in the machine's load between runs does not favour one.
    Per size: the best wall time, the workers' CPU seconds in that run, the outputs, the loads."""
    from contextlib import ExitStack

    from distributed import Client, LocalCluster

    spec = dist.pipeline_spec("en")
    with ExitStack() as stack:
        clients = {}
        for n in sizes:
            cluster = stack.enter_context(LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                       dashboard_address=":0"))
            clients[n] = stack.enter_context(Client(cluster, set_as_default=False))
            dist.preload(clients[n], spec)
            dist.restore_texts(texts[:2 * n], clients[n], partition_size=1)  # warm-up
        out = {n: {"seconds": float("inf")} for n in sizes}
        for _ in range(repeats):
            for n in sizes:
                client = clients[n]
                cpu0 = client.run(_cpu_seconds)
                t0 = time.perf_counter()
                results = dist.restore_texts(texts, client, partition_size=partition_size)
                wall = time.perf_counter() - t0
                cpu1 = client.run(_cpu_seconds)
                if wall < out[n]["seconds"]:
                    out[n] = {"seconds": wall, "worker_cpu_seconds": sum(cpu1[w] - cpu0[w] for w in cpu1),
                              "results": results}
        for n in sizes:
            loads = dist.pipeline_loads(clients[n])
            out[n]["loads"] = sorted(c.get(spec, 0) for c in loads.values())
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--input", default=None, help="a text file, one text per line (default: the sample's sentences)")
    p.add_argument("--texts", type=int, default=240, help="texts to restore (the sample's sentences, repeated)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--partition-size", type=int, default=None,
                   help="texts per partition (default: the library's, a few partitions per worker)")
    p.add_argument("--check", action="store_true", help="also restore the texts in this process and compare")
    p.add_argument("--output", default=None, help="write the figures here as JSON")
    args = p.parse_args(argv)

    texts = (Path(args.input).read_text(encoding="utf-8").splitlines() if args.input else sample_texts(args.texts))
    words = sum(len(t.split()) for t in texts)
    load_before = os.getloadavg()
    runs = time_clusters((1, 2), texts, args.repeats, args.partition_size)
    load_after = os.getloadavg()
    t1, out1, loads1 = runs[1]["seconds"], runs[1]["results"], runs[1]["loads"]
    t2, out2, loads2 = runs[2]["seconds"], runs[2]["results"], runs[2]["loads"]
    result = {
        "texts": len(texts), "words": words, "repeats": args.repeats, "partition_size": args.partition_size,
        "one_worker_seconds": round(t1, 3), "two_workers_seconds": round(t2, 3),
        "one_worker_texts_per_s": round(len(texts) / t1, 2), "two_workers_texts_per_s": round(len(texts) / t2, 2),
        "one_worker_words_per_s": round(words / t1), "two_workers_words_per_s": round(words / t2),
        "ratio_two_over_one": round(t1 / t2, 3), "identical_outputs": out1 == out2,
        "one_worker_cpu_seconds": round(runs[1]["worker_cpu_seconds"], 3),
        "two_workers_cpu_seconds": round(runs[2]["worker_cpu_seconds"], 3),
        "pipeline_loads": {"one_worker": loads1, "two_workers": loads2},
        "cpu_count": os.cpu_count(), "load_average_1min_before": round(load_before[0], 2),
        "load_average_1min_after": round(load_after[0], 2),
        "command": "python scripts/bench_distributed.py " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    if args.check:
        from spacy_punctgen.api.load import load
        from spacy_punctgen.api.stream import restore_text

        nlp = load("en")
        result["identical_to_one_process"] = [restore_text(nlp, t) for t in texts] == out1
    text = json.dumps(result, indent=2)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0 if result["identical_outputs"] and result.get("identical_to_one_process", True) else 1


if __name__ == "__main__":
    sys.exit(main())
