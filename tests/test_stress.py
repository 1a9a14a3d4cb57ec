"""Thread stress: many threads scheduling and cancelling at once on a real clock."""

from __future__ import annotations

import collections
import random
import threading

import pytest

from tempsched_lab import CancelResult, Scheduler, TaskState, audit


@pytest.mark.parametrize(("executor", "log"), [("pool", True), ("inline", False)])
def test_eight_threads_2000_tasks_each_every_task_ends_exactly_once(executor, log):
    runs: collections.Counter[int] = collections.Counter()
    runs_lock = threading.Lock()
    errors: list[BaseException] = []

    def work(tag):
        with runs_lock:
            runs[tag] += 1

    s = Scheduler(executor=executor, log=log)
    ids_by_thread: dict[int, list[tuple[int, tuple]]] = {}
    cancelled: dict[int, CancelResult] = {}
    cancel_lock = threading.Lock()

    def hammer(seed):
        rng = random.Random(seed)
        mine = []
        try:
            for n in range(2000):
                tag = seed * 10_000 + n
                tid = s.schedule(work, delay=rng.uniform(0, 0.2), args=(tag,))
                mine.append((tid, tag))
                if rng.random() < 0.3:
                    victim, _ = mine[rng.randrange(len(mine))]
                    result = s.cancel(victim)
                    with cancel_lock:
                        if result is CancelResult.CANCELLED:
                            cancelled[victim] = result
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        ids_by_thread[seed] = mine

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert s.wait_idle(timeout=60)
    assert s.worker_error is None and s.worker_thread.is_alive()
    s.shutdown()

    all_ids = [tid for mine in ids_by_thread.values() for tid, _ in mine]
    assert len(all_ids) == len(set(all_ids)) == 16_000  # distinct args: no duplicates
    assert sorted(all_ids) == list(range(16_000))  # no burned or repeated IDs
    for mine in ids_by_thread.values():
        for tid, tag in mine:
            ran = runs[tag]
            was_cancelled = tid in cancelled
            assert ran + was_cancelled == 1, (tid, ran, was_cancelled)
            expected = TaskState.CANCELLED if was_cancelled else TaskState.DONE
            assert s.status(tid).state is expected
    if log:
        report = audit(s.log.to_frame())
        assert report.ok, str(report)
        assert report.ended == 16_000
