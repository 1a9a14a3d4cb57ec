"""A child process made by ``os.fork()`` never gets silent IDs nor deadlocks (issue 24, R15).

``fork`` is the default start method of ``multiprocessing`` on Linux up to Python
3.13. The child inherits a copy of every scheduler, but not its worker thread, and
every lock exactly as it was: one held by a busy thread of the parent stays held for
good. Each test forks for real, with parent threads busy on the scheduler, and waits
for each child with a timeout, so a deadlock fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import traceback
import warnings

import pytest

from tempsched_lab import Scheduler, SchedulerClosedError, VirtualClock
from tempsched_lab.log.compactor import wait_compacted

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()")

FORKS = 40
CHILD_TIMEOUT = 30.0


def noop(*args):
    return None


def fork_and_wait(child_body) -> dict:
    """Run ``child_body()`` in a forked child; return what it reported (or fail on a hang)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads
        pid = os.fork()
    if pid == 0:  # the child: report, then leave without running any of pytest's code
        os.close(read_end)
        try:
            report = child_body()
        except BaseException:
            report = {"error": traceback.format_exc()}
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + CHILD_TIMEOUT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
            pytest.fail(f"the forked child hung for {CHILD_TIMEOUT:.0f} s (a deadlock)")
        time.sleep(0.005)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    report = json.loads(data or b"{}")
    assert "error" not in report, report["error"]
    return report


def in_the_child(s: Scheduler, virtual: Scheduler) -> dict:
    report: dict = {}
    for name, target in (("real", s), ("virtual", virtual)):
        try:
            tid = target.schedule(noop, delay=0.01)
        except SchedulerClosedError as exc:
            report[name] = str(exc)
        else:
            report[name] = f"an ID that never runs: {tid}"
    report["rows"] = len(s.log.to_frame())  # reading the copy never deadlocks
    report["status"] = s.status(0).state.name
    report["dropped"] = len(s.shutdown(wait=True, timeout=5))
    virtual.clock.step()  # its lock is fresh; its (dead) scheduler fires nothing
    with Scheduler() as fresh:  # a scheduler made in the child works as usual
        ran = threading.Event()
        fresh.schedule(ran, delay=0.01)
        report["fresh ran"] = ran.wait(10)
    report["compactor"] = wait_compacted(10)
    return report


def test_r15_forty_forks_beside_busy_threads_never_give_silent_ids_nor_deadlock(tmp_path):
    pytest.importorskip("pyarrow")
    spill = tmp_path / "spill"
    s = Scheduler(max_log_rows=20_000, log_spill=spill)
    s.schedule(noop, period=0.001, label="1 kHz")  # task 0: the worker keeps firing
    clock = VirtualClock()
    virtual = Scheduler(clock)
    virtual.schedule(noop, period=0.01)
    clock.play(1_000.0)  # the player thread holds the virtual clock's lock most of the time
    # CPython cannot make a fork safe while another thread is importing a module (that
    # module's import lock stays held in the child): the lazy imports happen here first.
    s.log.to_frame()
    assert s.log.flush()
    stop = threading.Event()

    def churn() -> None:  # the scheduler's lock taken and released all the time
        while not stop.is_set():
            ids = [s.schedule(noop, delay=60 + 0.001 * i) for i in range(50)]
            for tid in ids:
                s.cancel(tid)

    busy = [threading.Thread(target=churn) for _ in range(2)]
    for thread in busy:
        thread.start()
    try:
        for _ in range(FORKS):
            report = fork_and_wait(lambda: in_the_child(s, virtual))
            for name in ("real", "virtual"):
                assert "os.fork() copied it into process" in report[name], report[name]
            assert report["rows"] > 0 and report["status"] in ("PENDING", "RUNNING")
            assert report["dropped"] == 0  # the copy is dead: shutdown touches nothing
            assert report["fresh ran"] and report["compactor"]
    finally:
        stop.set()
        for thread in busy:
            thread.join()
        clock.pause()
    assert not s.closed and s.worker_error is None  # the parent never noticed
    manifest = json.loads((spill / "log.json").read_text())
    assert not manifest["closed"]  # no child closed (or wrote) the parent's directory
    s.shutdown()
    virtual.shutdown()
    from tempsched_lab import read_log

    assert len(read_log(spill)) == s.log.next_seq


def test_r15_multiprocessing_with_fork_gets_a_clear_error_for_an_inherited_scheduler():
    import multiprocessing

    _INHERITED[:] = [Scheduler()]  # a module global: the pool's workers inherit it by fork
    try:
        context = multiprocessing.get_context("fork")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with context.Pool(1) as pool:
                answer = pool.apply_async(_schedule_in_a_worker).get(CHILD_TIMEOUT)
    finally:
        _INHERITED.pop().shutdown()
    assert answer.startswith("SchedulerClosedError") and "os.fork()" in answer, answer


_INHERITED: list[Scheduler] = []


def _schedule_in_a_worker() -> str:
    try:
        _INHERITED[0].schedule(noop, delay=0.01)
    except SchedulerClosedError as exc:
        return f"SchedulerClosedError: {exc}"
    return "an ID that never runs"
