"""The DP's top-down pass on deep trees (issue 38, item 1).  It recursed once per tree level on
the C stack: analysis of a 16,000-word right-branching chain died with signal 11, and in a
thread with a 512 KB stack a 1,500-word chain was enough.  The pass now keeps its own stack
(cython_ext/dp.pyx, ``_descend``): a 3,000-word chain is analysed (sum-product with counts and
the complex step, Viterbi, posterior samples, the model's analysis) and restored in a thread of
512 KB with exactly the main thread's results.  Each run is a subprocess, so that a crash is a
failed test, not a dead test session (spacy_punctgen/testing/deep_chain.py)."""
import json
import subprocess
import sys

import pytest

from spacy_punctgen.testing.env import package_env


def _run(n: int, stack_kb: int, restore_n: int, tmp_path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen.testing.deep_chain", str(n), str(stack_kb),
                           str(restore_n)], capture_output=True, text=True, cwd=tmp_path, env=package_env())
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])  # -11: the C stack overflowed
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _check(got: dict) -> None:
    assert got["thread"] == got["main"]
    analysed, logp, _, exact = got["main"]["analysis"]
    assert analysed and logp > -float("inf") and exact > -float("inf")  # p(x|T) > 0: the top-down pass ran


def test_a_3000_word_chain_in_a_512_kb_thread(tmp_path):
    _check(_run(3000, 512, 1000, tmp_path))


@pytest.mark.slow
def test_a_16000_word_chain(tmp_path):
    """Before: signal 11 on the main thread."""
    _check(_run(16000, 512, 3000, tmp_path))


def test_the_thread_helper_restores_the_stack_size():
    import threading

    from spacy_punctgen.testing.deep_chain import in_thread

    before = threading.stack_size()
    assert in_thread(lambda: 42, 512) == 42
    assert threading.stack_size() == before
