"""The batch thread pool behind ``executor="pool"``."""

from __future__ import annotations

import threading

import pytest

from tempsched_lab.executors import BatchThreadPool


def test_fifo_with_one_worker_and_a_raising_call_does_not_kill_it():
    pool = BatchThreadPool(max_workers=1)
    seen = []
    done = threading.Event()

    def boom(_):
        raise RuntimeError("ignored by the pool")

    pool.submit_batch(seen.append, [(i,) for i in range(5)])
    pool.submit(boom, 0)
    pool.submit_batch(lambda: done.set(), [()])
    assert done.wait(5)
    assert seen == [0, 1, 2, 3, 4]
    assert pool.threads == 1
    pool.shutdown()
    pool.shutdown()  # idempotent
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(print)


def test_threads_start_lazily_up_to_the_bound():
    pool = BatchThreadPool(max_workers=3)
    assert pool.threads == 0
    release = threading.Event()
    started = threading.Semaphore(0)

    def block(_):
        started.release()
        release.wait(5)

    pool.submit_batch(block, [(i,) for i in range(10)])
    for _ in range(3):
        assert started.acquire(timeout=5)
    assert pool.threads == 3
    release.set()
    pool.shutdown(wait=True, timeout=5)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_max_workers_is_checked(bad):
    with pytest.raises(ValueError, match="max_workers"):
        BatchThreadPool(max_workers=bad)
