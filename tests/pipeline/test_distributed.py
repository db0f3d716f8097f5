"""Restoration and analysis over a Dask cluster (``spacy_punctgen.api.distributed``),
against a ``LocalCluster`` of two worker processes (one thread each): the same output as one
process, in input order whatever the partitions, the pipeline loaded once per worker, and the
refusals (E776-E787)."""
import socket
import sys
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.api import distributed as dist
from spacy_punctgen.api.load import load
from spacy_punctgen.api.stream import iter_restored, restore_text

pytest.importorskip("distributed")

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


def _transcripts():
    """The sample's test and dev sentences as transcripts (letters and digits only, lowercased),
    a few blank lines and one text of two lines among them."""
    sents = [s for name in ("test", "dev") for s in read_conllu(SAMPLE / f"en_sample-ud-{name}.conllu")]
    texts = [" ".join(f.lower() for f in s.forms if f.isalnum()) for s in sents]
    texts = [t for t in texts if t and len(t.split()) <= 20][:22]
    texts[5:5] = [""]
    texts[12:12] = ["   "]
    texts.append(texts[0] + "\n" + texts[1])
    return texts


TEXTS = _transcripts()
PUNCTUATED = ["When I came home, he left.", "She said that she would come tomorrow, but she did not.",
              "Yes, sir.", "", "I saw Dr. Smith (the dentist) on Monday; he was fine."]


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as c:
        yield c


@pytest.fixture(scope="module")
def nlp():
    return load("en")


@pytest.fixture(scope="module")
def expected(nlp):
    """What one process gives: ``restore_text``, which for a line is the no-scheduler
    ``punctgen restore`` line (the restored pieces joined by spaces)."""
    out = [restore_text(nlp, t) for t in TEXTS]
    for text, got in zip(TEXTS, out):
        if "\n" not in text:
            assert got == " ".join(iter_restored(nlp, text))
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------ on the cluster
def test_same_output_as_one_process(client, expected):
    info = {}
    assert dist.restore_texts(TEXTS, client, info=info) == expected
    assert info["workers"] == 2 and info["threads"] == 2 and info["partitions"] > 2
    assert expected[5] == "" and expected[-1].count("\n") == 1


@pytest.mark.parametrize("options", [{"partitions": 7}, {"partition_size": 1, "window": 3},
                                     pytest.param({"partitions": 1}, marks=pytest.mark.slow),
                                     pytest.param({"partitions": 200}, marks=pytest.mark.slow),
                                     pytest.param({"partition_size": 4, "window": 2}, marks=pytest.mark.slow)])
def test_input_order_whatever_the_partitions(client, expected, options):
    # 25 texts: 7 partitions of 4 and 3 texts, one text per task with three in flight, one
    # partition of all, one per text (200 > 25), 4 each with a last one of 1
    assert len(TEXTS) == 25
    assert dist.restore_texts(TEXTS, client, **options) == expected


def test_order_when_a_later_partition_finishes_first(client, expected):
    """The first partition holds a long text, so later ones finish before it."""
    long_text = " ".join(t for t in TEXTS[:10] if t.strip())
    texts = [long_text] + TEXTS
    got = dist.restore_texts(texts, client, partition_size=1, window=8)
    assert got[1:] == expected
    assert len(got) == len(texts) and got[0].count(" ") >= long_text.count(" ")


def test_an_iterator_is_read_as_it_goes(client, expected):
    taken = []

    def texts():
        for t in TEXTS:
            taken.append(t)
            yield t

    results = dist.iter_texts(texts(), client, partition_size=4, window=2)
    first = next(results)
    assert first == expected[0]
    assert len(taken) <= 3 * 4  # two partitions in flight and the next being cut, not all 25
    assert [first] + list(results) == expected


def test_pipeline_loaded_once_per_worker(client):
    spec = dist.pipeline_spec("en")
    loads = dist.preload(client, spec)
    assert sorted(loads) == sorted(client.nthreads()) and set(loads.values()) == {1}
    dist.restore_texts(TEXTS[:12], client, partition_size=2)  # 6 tasks over 2 workers
    counts = dist.pipeline_loads(client)
    assert {addr: c[spec] for addr, c in counts.items()} == {addr: 1 for addr in client.nthreads()}


@pytest.mark.slow  # loads the analysis pipeline here and on both workers
def test_analysis_same_as_one_process(client):
    local = load("en", mode="analyze")
    want = [dist.analysis_record(local(t)) for t in PUNCTUATED]
    got = dist.analyze_texts(PUNCTUATED, client, partition_size=2)
    assert got == want
    assert got[0]["words"][:3] == ["When", "I", "came"]
    assert any(e["underlying"] == [","] for e in got[0]["underlying_punct"])
    assert got[3] == {"words": [], "underlying_punct": [], "punct_logprob": 0.0}


def test_restore_files(client, expected, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    a, empty, b = src / "a.txt", src / "empty.txt", src / "b.txt"
    a.write_text("\n".join(TEXTS[:7]) + "\n", encoding="utf-8")
    empty.write_text("", encoding="utf-8")
    b.write_text("\ufeff" + "\n".join(TEXTS[7:14]), encoding="utf-8")  # a BOM, no final newline
    out = tmp_path / "out"
    paths = dist.restore_files([a, empty, b], out, client=client, partition_size=3)
    assert paths == [out / "a.txt", out / "empty.txt", out / "b.txt"]
    assert (out / "a.txt").read_text(encoding="utf-8") == "".join(t + "\n" for t in expected[:7])
    assert (out / "empty.txt").read_text(encoding="utf-8") == ""
    assert (out / "b.txt").read_text(encoding="utf-8") == "".join(t + "\n" for t in expected[7:14])

    seen = []
    assert dist.restore_files([empty, a, b], callback=lambda p, r: seen.append((p.name, r)), client=client) is None
    assert seen == [("empty.txt", []), ("a.txt", expected[:7]), ("b.txt", expected[7:14])]


def test_restore_files_refusals_on_the_cluster(client, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"\[E786\].*latin1.txt.*not UTF-8"):
        dist.restore_files([bad], tmp_path / "out", client=client)


# ------------------------------------------------------------------ partitions (no cluster)
def test_split_partitions():
    texts = [str(i) for i in range(10)]
    assert [len(p) for p in dist.split_partitions(texts, partitions=4)] == [3, 3, 2, 2]
    assert [len(p) for p in dist.split_partitions(texts, partitions=20)] == [1] * 10
    assert [len(p) for p in dist.split_partitions(iter(texts), partition_size=4)] == [4, 4, 2]
    assert [len(p) for p in dist.split_partitions(texts, threads=2)] == [2] * 5  # ceil(10 / 8)
    assert [len(p) for p in dist.split_partitions([str(i) for i in range(1000)], threads=2)] == [32] * 31 + [8]
    for kw in ({"partitions": 3}, {"partition_size": 3}, {}):
        assert [t for p in dist.split_partitions(texts, **kw) for t in p] == texts
    assert list(dist.split_partitions([], partitions=3)) == []


@pytest.mark.parametrize("kw, code", [({"partitions": 0}, "E779"), ({"partitions": "3"}, "E779"),
                                      ({"partitions": True}, "E779"), ({"partition_size": 0}, "E779"),
                                      ({"partitions": 2, "partition_size": 2}, "E780")])
def test_bad_partitions(kw, code):
    with pytest.raises(ValueError, match=rf"\[{code}\]"):
        list(dist.split_partitions(["a", "b"], **kw))
    with pytest.raises(ValueError, match=rf"\[{code}\]"):  # refused before connecting
        dist.restore_texts(["a"], "tcp://127.0.0.1:1", **kw)


def test_partitions_need_a_sequence():
    with pytest.raises(ValueError, match=r"\[E781\]"):
        list(dist.split_partitions(iter(["a", "b"]), partitions=2))


def test_a_text_must_be_a_str():
    with pytest.raises(TypeError, match=r"\[E783\] text 2 is a int"):
        list(dist.split_partitions(["a", "b", 3], partition_size=1))


def test_bad_window_and_mode():
    with pytest.raises(ValueError, match=r"\[E779\] the window"):
        dist.restore_texts(["a"], "tcp://127.0.0.1:1", window=0)
    with pytest.raises(ValueError, match=r"\[E782\].*'correct'"):
        dist.restore_texts(["a"], "tcp://127.0.0.1:1", mode="correct")
    with pytest.raises(ValueError, match=r"\[E051\]"):  # no parser ships for this language
        dist.restore_texts(["a"], "tcp://127.0.0.1:1", lang="xx")


# ------------------------------------------------------------------ connecting (no cluster)
def test_unreachable_scheduler_names_the_address():
    address = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(TimeoutError, match=rf"\[E777\].*{address}.*within 1.0 s"):
        dist.restore_texts(["a"], address, timeout=1.0)


@pytest.mark.parametrize("address", ["nonsense://host:1", "no port here", "local:0", "local:two", "", 42])
def test_bad_address(address):
    with pytest.raises(ValueError, match=r"\[E778\]"):
        dist.restore_texts(["a"], address)


def test_no_client():
    import distributed

    with pytest.raises(ValueError):
        distributed.default_client()  # the cluster fixture's client is not the default
    with pytest.raises(ValueError, match=r"\[E784\]"):
        dist.restore_texts(["a"])


def test_dask_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    with pytest.raises(ImportError, match=r"\[E776\].*'distributed' extra"):
        dist.restore_texts(["a"], "tcp://127.0.0.1:1")


def test_restore_files_refusals(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("hello\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    b = tmp_path / "sub" / "a.txt"
    b.write_text("hello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[E785\]"):
        dist.restore_files([a])
    with pytest.raises(ValueError, match=r"\[E785\]"):
        dist.restore_files([a], tmp_path / "out", callback=print)
    with pytest.raises(FileNotFoundError, match=r"\[E786\].*missing.txt: cannot read the input \(no such file"):
        dist.restore_files([tmp_path / "missing.txt"], tmp_path / "out")
    with pytest.raises(IsADirectoryError, match=r"\[E786\]"):
        dist.restore_files([tmp_path / "sub"], tmp_path / "out")
    with pytest.raises(ValueError, match=r"\[E787\].*inputs of the same name"):
        dist.restore_files([a, b], tmp_path / "out")
    with pytest.raises(ValueError, match=r"\[E787\].*overwrite an input"):
        dist.restore_files([a], tmp_path)
    with pytest.raises(ValueError, match=r"\[E781\]"):
        dist.restore_files([a], tmp_path / "out", partitions=2)
    with pytest.raises(ValueError, match=r"\[E782\]"):
        dist.restore_files([a], tmp_path / "out", mode="correct")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ servers that are not Dask's
def _serve(greeting):
    """A TCP server on a free local port that accepts one connection and writes ``greeting``
    (None: nothing, ever); its address."""
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def run():
        conn, _ = server.accept()
        if greeting is not None:
            conn.sendall(greeting)
        threading.Event().wait(5)
        conn.close()
        server.close()

    threading.Thread(target=run, daemon=True).start()
    return f"tcp://127.0.0.1:{server.getsockname()[1]}"


def test_a_port_that_accepts_and_stays_silent_times_out():
    import time

    address = _serve(None)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match=r"\[E777\]"):
        dist.restore_texts(["a"], address, timeout=1.0)
    assert time.monotonic() - t0 < 4


def test_a_port_that_answers_http_is_not_a_scheduler():
    """distributed's Client read "HTTP/1.1" as a frame length and tried to allocate 3 EiB."""
    address = _serve(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    with pytest.raises(ValueError, match=r"\[E024\].*HTTP/1.1"):
        dist.restore_texts(["a"], address, timeout=2.0)


def test_dask_handshake_bytes():
    assert dist.is_dask_handshake((58).to_bytes(8, "little") + (1).to_bytes(8, "little"))
    assert not dist.is_dask_handshake(b"HTTP/1.1 200 OK\r\n")
    assert not dist.is_dask_handshake(b"SSH-2.0-OpenSSH_9.6")
    assert not dist.is_dask_handshake(b"\x01")


def test_a_single_string_is_refused_not_split_into_characters():
    with pytest.raises(TypeError, match=r"\[E025\]"):
        dist.restore_texts("hi there", "tcp://127.0.0.1:1")


def test_chunk_chars_is_checked_before_connecting():
    with pytest.raises(ValueError, match=r"\[E056\]"):
        dist.restore_texts(["a"], "tcp://127.0.0.1:1", chunk_chars=5)
