"""Restoration and analysis of many texts over a Dask cluster (``dask.distributed``).

Why: :func:`spacy_punctgen.load` pipelines run on one core; a corpus of transcripts is
embarrassingly parallel (each text is restored on its own), so its texts can be spread over
the cores of several machines. The texts are cut into *partitions* (contiguous runs of
texts, in input order); each partition is one Dask task, which runs on a worker with the
pipeline that worker loaded the first time it needed it (a cache in the worker process,
keyed by :class:`PipelineSpec`): the pipeline is loaded once per worker process, never
shipped with a task. The results come back in input order, whichever worker finished first.

::

    from spacy_punctgen.api.distributed import restore_texts, analyze_texts, restore_files

    out = restore_texts(texts, "tcp://scheduler:8786")      # a list, in the order of texts
    out = restore_texts(texts, "local:2")                   # two local worker processes
    records = analyze_texts(texts, client)                  # a distributed.Client of yours
    restore_files(["a.txt", "b.txt"], "restored/", client=client)

What a text gives: in ``mode="restore"`` the punctuated text, exactly
:func:`~spacy_punctgen.api.stream.restore_text` ``(nlp, text)`` in one process (each
line of a text is one stream of any length; ``punctgen restore`` gives the same line for a
line); in ``mode="analyze"`` the record of :func:`analysis_record` (plain lists, dicts,
strings and numbers: JSON as it is).

Memory: at most ``window`` partitions are in flight (submitted and not yet handed back), so
an iterator of texts is read as the results are consumed (:func:`iter_texts`), and the
client holds at most ``window`` partitions of texts and results at a time. A worker holds
its pipeline(s) and the partition it runs. Ordering: partition ``k + 1`` is handed back only
after partition ``k``, and a partition's results are in its texts' order.

The pipeline layer imports nothing of the command line; ``punctgen restore --scheduler``
(``spacy_punctgen/cli/restore.py``) calls :func:`iter_texts`. See docs/distributed.md.
"""
from __future__ import annotations

import json
import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from spacy_punctgen.errors import Errors
from spacy_punctgen.api.stream import DEFAULT_CHUNK_CHARS, restore_text

PathLike = Union[str, Path]  # noqa: UP007  (evaluated at run time: Python 3.9)

#: what a distributed run can do with a text
DISTRIBUTED_MODES = ("restore", "analyze")
#: texts per partition, at most, when neither ``partitions`` nor ``partition_size`` is given
DEFAULT_MAX_PARTITION_SIZE = 32
#: partitions per worker thread that the default partition size aims at (for load balance)
PARTITIONS_PER_THREAD = 4
#: seconds to wait for the scheduler when connecting to an address
DEFAULT_TIMEOUT = 10.0
#: the scheme of an address that starts local worker processes instead (``local:N``)
LOCAL_SCHEME = "local:"


@dataclass(frozen=True)
class PipelineSpec:
    """What a worker loads (the arguments of :func:`spacy_punctgen.load`); the key of the
    worker-side cache, so it is small, hashable and sent with every task instead of the
    pipeline itself."""

    lang: str = "en"
    mode: str = "restore"
    model: str | None = None
    config: tuple[tuple[str, Any], ...] = ()
    truecase: bool | str = False
    chunk_chars: int = DEFAULT_CHUNK_CHARS

    def load(self):
        from spacy_punctgen.api.load import load

        return load(self.lang, self.mode, model=self.model, chunk_chars=self.chunk_chars,
                    config=dict(self.config), truecase=self.truecase)


def pipeline_spec(lang: str = "en", mode: str = "restore", *, model: PathLike | None = None,
                  config: dict[str, Any] | None = None, truecase: bool | PathLike = False,
                  chunk_chars: int = DEFAULT_CHUNK_CHARS) -> PipelineSpec:
    """A :class:`PipelineSpec` from :func:`spacy_punctgen.load`'s arguments, checked here
    before anything is sent: ``mode`` (E782) and a parser shipped for ``lang`` (E051). Paths
    (``model``, a truecaser) are read by the workers: on a cluster they must exist there."""
    from spacy_punctgen.api.load import shipped_parser_path
    from spacy_punctgen.api.stream import check_chunk_chars

    if mode not in DISTRIBUTED_MODES:
        raise ValueError(Errors.E782.format(modes=" or ".join(repr(m) for m in DISTRIBUTED_MODES), mode=mode))
    check_chunk_chars(chunk_chars)  # here, not first on the workers
    shipped_parser_path(lang)
    items = tuple(sorted((str(k), v) for k, v in (config or {}).items()))
    return PipelineSpec(lang=str(lang), mode=mode, model=None if model is None else str(model), config=items,
                        truecase=truecase if isinstance(truecase, bool) else str(truecase),
                        chunk_chars=chunk_chars)


# ------------------------------------------------------------------ the worker side
_PIPELINES: dict[PipelineSpec, Any] = {}
_LOADS: dict[PipelineSpec, int] = {}
_LOCK = threading.Lock()


def worker_pipeline(spec: PipelineSpec):
    """The pipeline of ``spec`` in this process: loaded on first use, then kept (a worker with
    several threads loads it once; its ``punctgen`` component serialises model calls itself)."""
    with _LOCK:
        nlp = _PIPELINES.get(spec)
        if nlp is None:
            nlp = spec.load()
            _PIPELINES[spec] = nlp
            _LOADS[spec] = _LOADS.get(spec, 0) + 1
        return nlp


def worker_loads() -> dict[PipelineSpec, int]:
    """How many times this process has loaded each pipeline (1 each, unless a cache was
    cleared): :func:`pipeline_loads` asks every worker."""
    with _LOCK:
        return dict(_LOADS)


def analysis_record(doc) -> dict:
    """What ``mode="analyze"`` gives for a text: ``words`` (the Doc's tokens),
    ``underlying_punct`` (``doc._.underlying_punct``: per slot ``sentence``, ``slot``,
    ``after`` (the index in ``words`` of the word before it, None at a sentence's start),
    ``underlying`` and ``surface`` as lists of marks) and ``punct_logprob`` (the log
    probability of the text's punctuation given its trees)."""
    entries = []
    for e in doc._.underlying_punct or ():
        entries.append({k: list(v) if isinstance(v, tuple) else v for k, v in e.items()})
    return {"words": [t.text for t in doc], "underlying_punct": entries,
            "punct_logprob": float(doc._.punct_logprob) if doc._.underlying_punct is not None else None}


def process_text(nlp, mode: str, text: str):
    """One text in one process: what a distributed run gives for it (restore: the punctuated
    text; analyze: :func:`analysis_record`)."""
    if mode == "restore":
        return restore_text(nlp, text)
    return analysis_record(nlp(text))


def process_partition(spec: PipelineSpec, texts: Sequence[str]) -> list:
    """The task a worker runs: ``spec``'s pipeline (cached) over one partition, in order."""
    nlp = worker_pipeline(spec)
    return [process_text(nlp, spec.mode, t) for t in texts]


def _preload(spec: PipelineSpec) -> int:
    worker_pipeline(spec)
    return worker_loads().get(spec, 0)


# ------------------------------------------------------------------ the client side
def require_distributed():
    """The ``distributed`` module, or ImportError E776 (the ``distributed`` extra)."""
    try:
        import distributed
    except ImportError:
        raise ImportError(Errors.E776) from None
    return distributed


def _positive(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(Errors.E779.format(what=what, value=value))
    return value


def _local_workers(address: str) -> int:
    n = address[len(LOCAL_SCHEME):]
    if not n.isdigit() or int(n) < 1:
        raise ValueError(Errors.E778.format(address=address))
    return int(n)


def _probe(address: str, timeout: float) -> None:
    """Refuse a malformed address (E778) and, for TCP, a scheduler that does not answer
    within ``timeout`` (E777), before a Client is made (a Client that cannot connect leaves
    noise on stderr when it is collected)."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import backends

    try:
        scheme, loc = parse_address(address)
        host, port = parse_host_port(loc) if scheme == "tcp" else (None, None)
    except (ValueError, TypeError):
        raise ValueError(Errors.E778.format(address=address)) from None
    if scheme not in backends:
        raise ValueError(Errors.E778.format(address=address))
    if scheme != "tcp":
        return
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            opening = _first_bytes(sock, HANDSHAKE_BYTES)
    except OSError as err:  # (socket.timeout too: a port that accepts and stays silent)
        raise TimeoutError(Errors.E777.format(address=address, timeout=timeout, err=err)) from None
    if not is_dask_handshake(opening):
        raise ValueError(Errors.E024.format(address=address, got=opening[:16]))


#: a Dask scheduler speaks first: its handshake's frame header (two little-endian uint64s)
HANDSHAKE_BYTES = 16


def _first_bytes(sock, n: int) -> bytes:
    """The first ``n`` bytes the peer sends (fewer if it closes first); socket.timeout if none come."""
    data = b""
    while len(data) < n:
        got = sock.recv(n - len(data))
        if not got:
            break
        data += got
    return data


def is_dask_handshake(opening: bytes) -> bool:
    """Whether the first bytes a server sent can open Dask's wire protocol: a length below 4 GB
    and a small frame count. Why: distributed's Client reads the first 8 bytes as a length, so
    a server that answers with ``HTTP/1.1 …`` made it allocate 3 EiB (MemoryError)."""
    if len(opening) < HANDSHAKE_BYTES:
        return False
    length, frames = int.from_bytes(opening[:8], "little"), int.from_bytes(opening[8:16], "little")
    return 0 < length < 2 ** 32 and 0 < frames < 2 ** 16


@contextmanager
def connect(client=None, timeout: float = DEFAULT_TIMEOUT):
    """A ``distributed.Client`` for ``client``: a Client (used as it is), a scheduler address
    (``tcp://HOST:PORT`` or ``HOST:PORT``: connected here, within ``timeout`` seconds, E777
    otherwise, and closed on exit), ``local:N`` (a ``LocalCluster`` of N worker processes with
    one thread each, closed on exit), or None (the default Client of this process, E784 if
    there is none)."""
    distributed = require_distributed()
    if isinstance(client, distributed.Client):
        yield client
        return
    if client is None:
        try:
            current = distributed.default_client()
        except ValueError:
            raise ValueError(Errors.E784) from None
        yield current
        return
    if not isinstance(client, str) or not client.strip():
        raise ValueError(Errors.E778.format(address=client))
    address = client.strip()
    if address.startswith(LOCAL_SCHEME):
        n = _local_workers(address)
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                                      silence_logs=logging.ERROR) as cluster, \
                distributed.Client(cluster, set_as_default=False) as local:
            yield local
        return
    _probe(address, timeout)
    try:
        remote = distributed.Client(address, timeout=timeout, set_as_default=False)
    except OSError as err:
        raise TimeoutError(Errors.E777.format(address=address, timeout=timeout, err=err)) from None
    except (ValueError, TypeError):
        raise ValueError(Errors.E778.format(address=address)) from None
    try:
        yield remote
    finally:
        remote.close()


def _threads(client) -> int:
    return max(1, sum(client.nthreads().values()))


def _checked(texts: Iterable[str], start: int = 0) -> Iterator[str]:
    for i, text in enumerate(texts, start):
        if not isinstance(text, str):
            raise TypeError(Errors.E783.format(index=i, type=type(text).__name__))
        yield text


def split_partitions(texts: Iterable[str], partitions: int | None = None,
                     partition_size: int | None = None, threads: int = 1) -> Iterator[list[str]]:
    """Contiguous partitions of ``texts``, in order (empty ones left out): ``partitions`` of
    near-equal sizes (a sequence only, E781), or ``partition_size`` texts each (any iterable,
    read as the partitions are taken); by default ``ceil(n / (4 * threads))`` texts, at most
    :data:`DEFAULT_MAX_PARTITION_SIZE`, for a sequence of ``n`` texts (and that many for an
    iterator)."""
    if partitions is not None and partition_size is not None:
        raise ValueError(Errors.E780)
    if partitions is not None:
        _positive(partitions, "the number of partitions")
        if not isinstance(texts, Sequence) or isinstance(texts, str):
            raise ValueError(Errors.E781)
        base, extra = divmod(len(texts), partitions)
        start = 0
        for k in range(partitions):
            end = start + base + (1 if k < extra else 0)
            if end > start:
                yield list(_checked(texts[start:end], start))
            start = end
        return
    if partition_size is None:
        size = DEFAULT_MAX_PARTITION_SIZE
        if isinstance(texts, Sequence) and not isinstance(texts, str):
            size = min(size, max(1, math.ceil(len(texts) / (PARTITIONS_PER_THREAD * max(1, threads)))))
    else:
        size = _positive(partition_size, "the partition size")
    chunk: list[str] = []
    for text in _checked(texts):
        chunk.append(text)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def preload(client, spec: PipelineSpec) -> dict[str, int]:
    """Load ``spec``'s pipeline on every worker of ``client`` now (one task pinned to each),
    so that timings and the first partitions do not include loading; returns each worker's
    load count. Workers that join later load it with their first partition."""
    workers = list(client.nthreads())
    futures = [client.submit(_preload, spec, workers=[w], allow_other_workers=False, pure=False)
               for w in workers]
    return dict(zip(workers, client.gather(futures)))


def pipeline_loads(client) -> dict[str, dict[PipelineSpec, int]]:
    """Per worker address, how many times it loaded each pipeline (:func:`worker_loads`)."""
    return client.run(worker_loads)


def iter_texts(texts: Iterable[str], client=None, *, lang: str = "en", mode: str = "restore",
               model: PathLike | None = None, config: dict[str, Any] | None = None,
               truecase: bool | PathLike = False, chunk_chars: int = DEFAULT_CHUNK_CHARS,
               partitions: int | None = None, partition_size: int | None = None,
               window: int | None = None, timeout: float = DEFAULT_TIMEOUT,
               info: dict | None = None) -> Iterator:
    """Each text's result (restore: the punctuated text; analyze: :func:`analysis_record`),
    in the order of ``texts``, computed on the workers of ``client`` (see :func:`connect`).

    ``lang``, ``mode``, ``model``, ``config``, ``truecase``, ``chunk_chars``: the pipeline
    (:func:`spacy_punctgen.load`), loaded once per worker process. ``partitions`` /
    ``partition_size``: how the texts are cut into tasks (:func:`split_partitions`).
    ``window``: partitions in flight at most (default: twice the cluster's worker threads, at
    least 2); texts are read and results handed back as they go. ``info``: a dict to fill in
    with ``workers``, ``threads`` and ``partitions`` (known once the iteration ends). Being a
    generator, it checks its arguments and connects when the first result is asked for."""
    if isinstance(texts, str):
        raise TypeError(Errors.E025)
    spec = pipeline_spec(lang, mode, model=model, config=config, truecase=truecase, chunk_chars=chunk_chars)
    if partitions is not None and partition_size is not None:
        raise ValueError(Errors.E780)
    if partitions is not None:
        _positive(partitions, "the number of partitions")
    if partition_size is not None:
        _positive(partition_size, "the partition size")
    if window is not None:
        _positive(window, "the window (partitions in flight)")
    with connect(client, timeout) as c:
        threads = _threads(c)
        window = window or max(2, 2 * threads)
        if info is not None:
            info.update(workers=len(c.nthreads()), threads=threads, partitions=0)
        pending: deque = deque()
        n_parts = 0
        try:
            for part in split_partitions(texts, partitions, partition_size, threads):
                pending.append(c.submit(process_partition, spec, part, pure=False))
                n_parts += 1
                if len(pending) >= window:
                    yield from pending.popleft().result()
            while pending:
                yield from pending.popleft().result()
        finally:
            if pending:  # stopped early or failed: what is still queued is not wanted
                c.cancel(list(pending))
            if info is not None:
                info["partitions"] = n_parts


def restore_texts(texts: Iterable[str], client=None, **options) -> list:
    """:func:`iter_texts` as a list (restore mode unless ``mode="analyze"`` is given):
    ``restore_texts(texts, "tcp://host:8786")[i]`` is the punctuated ``texts[i]``."""
    return list(iter_texts(texts, client, **options))


def analyze_texts(texts: Iterable[str], client=None, **options) -> list[dict]:
    """The :func:`analysis_record` of each text, in order (``mode="analyze"``)."""
    return list(iter_texts(texts, client, mode="analyze", **options))


# ------------------------------------------------------------------ files
def _check_inputs(paths: Sequence[PathLike]) -> list[Path]:
    out = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            raise IsADirectoryError(Errors.E786.format(path=path, reason="a directory, not a text file"))
        if not path.is_file():
            raise FileNotFoundError(Errors.E786.format(path=path, reason="no such file"))
        out.append(path)
    return out


def output_path(path: PathLike, out_dir: PathLike, mode: str = "restore") -> Path:
    """Where :func:`restore_files` writes the results for input ``path``: ``out_dir`` / its
    name (restore), or its name + ``.jsonl`` (analyze: one JSON record per line)."""
    name = Path(path).name
    return Path(out_dir) / (name + ".jsonl" if mode == "analyze" else name)


def _file_lines(paths: Sequence[Path], owners: deque[int]) -> Iterator[str]:
    """Every line of every file, in order, read as the partitions are taken; each line's file
    index goes to ``owners``."""
    for i, path in enumerate(paths):
        try:
            with open(path, encoding="utf-8-sig") as f:
                for line in f:
                    owners.append(i)
                    yield line.rstrip("\n")
        except UnicodeDecodeError as err:
            raise ValueError(Errors.E786.format(path=path, reason=f"not UTF-8: {err}")) from None


def restore_files(paths: Sequence[PathLike], out_dir: PathLike | None = None, *,
                  callback: Callable[[Path, list], None] | None = None, client=None,
                  **options) -> list[Path] | None:
    """Each line of each file (UTF-8, lines as Python reads a text file) is one text for
    :func:`iter_texts`; the lines of all files are partitioned together, so a corpus of many
    small files and one of a few large ones spread alike.

    ``out_dir``: for each input, a file of the same name there (analyze: name + ``.jsonl``,
    one JSON record per line), one output line per input line, written as the results come
    (memory: the window of partitions); the output paths are returned. ``callback(path,
    results)``: called once per input file, in input order, with that file's results (a
    list: one file's results in memory at a time). Give one of the two (E785). ``options``:
    those of :func:`iter_texts` (``mode``, ``lang``, ``partition_size``...; a number of
    ``partitions`` needs the lines' count, so it is not taken here: use ``partition_size``)."""
    if (out_dir is None) == (callback is None):
        raise ValueError(Errors.E785)
    if options.get("partitions") is not None:
        raise ValueError(Errors.E781)
    mode = options.get("mode", "restore")
    if mode not in DISTRIBUTED_MODES:
        raise ValueError(Errors.E782.format(modes=" or ".join(repr(m) for m in DISTRIBUTED_MODES), mode=mode))
    inputs = _check_inputs(paths)
    outputs: list[Path] = []
    if out_dir is not None:
        seen: dict[Path, Path] = {}
        sources = {p.resolve() for p in inputs}
        for path in inputs:
            dest = output_path(path, out_dir, mode)
            key = dest.resolve()
            if key in seen:
                raise ValueError(Errors.E787.format(path=dest, problem=f"both {seen[key]} and {path} would be "
                                                                       "written here (inputs of the same name)"))
            if key in sources:
                raise ValueError(Errors.E787.format(path=dest, problem="the output would overwrite an input"))
            seen[key] = path
            outputs.append(dest)
        Path(out_dir).mkdir(parents=True, exist_ok=True)

    owners: deque[int] = deque()
    results = iter_texts(_file_lines(inputs, owners), client, **options)
    state = {"current": -1, "sink": None, "buffer": []}

    def close_current() -> None:
        if state["current"] < 0:
            return
        if state["sink"] is not None:
            state["sink"].close()
            state["sink"] = None
        else:
            callback(inputs[state["current"]], state["buffer"])
            state["buffer"] = []

    def advance(to: int) -> None:
        """Close the file being written and open the next ones up to file ``to`` (files in
        between have no lines: their outputs are empty)."""
        while state["current"] < to:
            close_current()
            state["current"] += 1
            if out_dir is not None:
                state["sink"] = open(outputs[state["current"]], "w", encoding="utf-8")  # noqa: SIM115  (closed below)

    try:
        for result in results:
            owner = owners.popleft()
            if owner != state["current"]:
                advance(owner)
            if state["sink"] is not None:
                state["sink"].write((json.dumps(result, ensure_ascii=False) if mode == "analyze" else result) + "\n")
            else:
                state["buffer"].append(result)
        advance(len(inputs) - 1)
        close_current()
    finally:
        if state["sink"] is not None:
            state["sink"].close()
    return outputs if out_dir is not None else None
