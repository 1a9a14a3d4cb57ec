"""The batch thread pool behind ``executor="pool"``."""

from __future__ import annotations

import threading

import pytest

from tempsched_lab.core.executors import BatchThreadPool


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


def test_a_burst_of_short_runs_stays_on_one_thread_but_blocking_runs_spill_over():
    pool = BatchThreadPool(max_workers=4, spill=0.001)
    done = threading.Event()
    count = []
    pool.submit_batch(count.append, [(i,) for i in range(2000)])
    pool.submit(lambda: done.set())
    assert done.wait(10)
    assert len(count) == 2000
    short_threads = pool.threads  # usually 1: the queue kept draining
    release = threading.Event()
    started = threading.Semaphore(0)

    def block(_):
        started.release()
        release.wait(5)

    pool.submit_batch(block, [(i,) for i in range(4)])
    for _ in range(4):  # all four start although one thread was awake: the pool spilled over
        assert started.acquire(timeout=5)
    assert pool.threads == 4 >= short_threads
    release.set()
    pool.shutdown(wait=True, timeout=5)


@pytest.mark.parametrize("bad", [0, -1.0, True, "x"])
def test_spill_is_checked(bad):
    with pytest.raises(ValueError, match="spill"):
        BatchThreadPool(spill=bad)
