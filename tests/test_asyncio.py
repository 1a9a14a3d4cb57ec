"""The scheduler on an asyncio event loop: AsyncioClock, LoopExecutor, AsyncScheduler.

Every test here runs with RuntimeWarnings as errors, so a coroutine that is
created and never awaited (a warning raised when it is collected) fails the
test that left it behind.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempsched_lab import (
    CancelResult,
    RealClock,
    Scheduler,
    SchedulerClosedError,
    TaskState,
    VirtualClock,
    audit,
)
from tempsched_lab.aio import AsyncScheduler, LoopExecutor, shutdown_async, wait_idle_async
from tempsched_lab.core.ports import FacadePort
from tempsched_lab.core.runs import run_token
from tempsched_lab.core.task import Task
from tempsched_lab.time.loop import AsyncioClock

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def run(coro_fn, *args):
    """``asyncio.run`` with a fresh loop per test."""
    return asyncio.run(coro_fn(*args))


def starts(frame):
    return frame[frame["kind"] == "start"]


# -- the clock -----------------------------------------------------------------------------


def test_the_clock_needs_a_loop_and_says_so():
    with pytest.raises(RuntimeError, match="needs an event loop"):
        AsyncioClock()
    with pytest.raises(TypeError, match="loop=42"):
        AsyncioClock(loop=42)
    closed = asyncio.new_event_loop()
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        AsyncioClock(loop=closed)
    with pytest.raises(RuntimeError, match="AsyncScheduler"):
        AsyncScheduler()


def test_the_clock_reads_the_loop_on_an_epoch_like_scale():
    async def main():
        clock = AsyncioClock()
        loop = asyncio.get_running_loop()
        # Each reading is bracketed by the readings it is compared with, so a thread switch
        # between two of them (a loaded machine) cannot fail the test; the slack is float
        # rounding (1 us) and the drift of the wall clock against the monotonic one (1 ms).
        la0, a, la1 = loop.time(), clock.now(), loop.time()
        await asyncio.sleep(0.02)
        lb0, b, lb1 = loop.time(), clock.now(), loop.time()
        assert lb0 - la1 - 1e-6 <= b - a <= lb1 - la0 + 1e-6  # moves with loop.time()
        assert abs(clock.origin - time.time()) < 5 and clock.origin <= a
        before = clock.now()
        later = clock.from_wall(time.time() + 10)
        after = clock.now()
        assert before + 10 - 1e-3 <= later <= after + 10 + 1e-3
        assert not clock.virtual and clock.loop is loop
        assert "AsyncioClock(origin=" in repr(clock)

    run(main)


@given(st.floats(min_value=-1e5, max_value=1e7, allow_nan=False))
def test_loop_time_maps_a_due_time_onto_the_loop_never_early(offset):
    loop = asyncio.new_event_loop()
    try:
        clock = AsyncioClock(loop)
        t = clock.origin + offset
        when = clock.loop_time(t)
        reads = clock._epoch + (when - clock._loop0)
        assert reads >= t  # never early
        assert reads - t <= 4 * math.ulp(t)  # and late by float rounding at most
    finally:
        loop.close()


# -- runs on the loop ----------------------------------------------------------------------


def test_runs_happen_on_the_loop_never_early_and_without_a_worker_thread():
    seen_threads: set[str] = set()

    async def tick(i):
        seen_threads.add(threading.current_thread().name)
        await asyncio.sleep(0)
        return i

    def plain(i):
        seen_threads.add(threading.current_thread().name)

    async def main():
        threads_before = threading.active_count()
        async with AsyncScheduler(name="on-the-loop") as s:
            assert s.worker_thread is None and s.has_worker and s.executor_kind == "loop"
            for i in range(40):
                s.schedule(tick if i % 2 else plain, delay=0.002 * i, args=(i,))
            assert await s.idle(timeout=10)
            assert threading.active_count() == threads_before  # no thread was started
            return s

    s = run(main)
    assert seen_threads == {threading.current_thread().name}
    frame = s.log.to_frame()
    runs = starts(frame)
    assert len(runs) == 40
    assert (runs["lateness"] >= 0).all() and (
        frame.loc[frame.kind == "dispatch", "lateness"] >= 0
    ).all()
    assert (frame["kind"] == "finish").sum() == 40
    assert audit(frame).ok, audit(frame)


def _requests(s, base, out):
    """The same requests for any scheduler: one-shots, a same-time group, a duplicate, periodic."""

    def note(name):
        out.append(name)

    def periodic(name):
        out.append(name)
        if out.count(name) == 3:
            s.cancel(tid)  # from inside its third run: RUNNING, no fourth

    cases = []
    for name, off in [("c", 0.06), ("a", 0.02), ("b", 0.04), ("b2", 0.04), ("a2", 0.02)]:
        cases.append(s.schedule_decision(note, at=base + off, args=(name,)).case)
    cases.append(s.schedule_decision(note, at=base + 0.06, args=("c",)).case)  # duplicate
    # catch_up: a run late by more than a period (a loaded machine) still runs every slot
    # of the grid, in due order.
    tid = s.schedule(periodic, at=base + 0.01, period=0.02, args=("p",), misfire="catch_up")
    cases.append(s.schedule_decision(note, at=base + 0.03, args=("d",)).case)
    return cases


def test_the_order_of_runs_is_the_thread_clocks_for_the_same_requests():
    thread_out: list[str] = []
    with Scheduler(RealClock(), executor="inline") as s:
        thread_cases = _requests(s, s.clock.now() + 0.5, thread_out)  # (room to schedule)
        assert s.wait_idle(10)
    thread_starts = starts(s.log.to_frame())
    thread_dues = (thread_starts["due"] - thread_starts["due"].min()).round(6).tolist()

    loop_out: list[str] = []

    async def main():
        async with AsyncScheduler() as s:
            cases = _requests(s, s.clock.now() + 0.5, loop_out)
            assert await s.idle(10)
            return s, cases

    s, loop_cases = run(main)
    loop_starts = starts(s.log.to_frame())
    loop_dues = (loop_starts["due"] - loop_starts["due"].min()).round(6).tolist()
    # On time, both run p a a2 d p b b2 p c. The periodic task is re-armed only after its run,
    # so a run late by more than a period (a loaded CI) lets one-shots due meanwhile go first:
    # its place among them may differ, never the one-shots' order nor what ran when due.
    for out in (thread_out, loop_out):
        assert [name for name in out if name != "p"] == ["a", "a2", "d", "b", "b2", "c"], out
        assert out.count("p") == 3, out
    assert loop_cases == thread_cases
    assert sorted(zip(loop_starts["task_id"], loop_dues, strict=True)) == sorted(
        zip(thread_starts["task_id"], thread_dues, strict=True)
    )
    for runs in (thread_starts, loop_starts):  # the one-shots started in due order
        one_shots = runs[runs["task_id"] != runs["task_id"].iloc[0]]
        assert one_shots["due"].is_monotonic_increasing
    assert (loop_starts["lateness"] >= 0).all()


def test_a_periodic_coroutine_keeps_its_grid_on_the_loop():
    async def beat():
        await asyncio.sleep(0.001)

    async def main():
        async with AsyncScheduler() as s:
            tid = s.schedule(beat, period=0.01)
            while s.status(tid).runs < 8:
                await asyncio.sleep(0.005)
            assert s.cancel(tid) in (CancelResult.CANCELLED, CancelResult.RUNNING)
            assert await s.idle(5)
            return s, tid

    s, _ = run(main)
    runs = starts(s.log.to_frame())
    dues = runs["due"].to_numpy()
    assert len(dues) >= 8
    k = np.round((dues - dues[0]) / 0.01)  # slots skipped on a busy machine are allowed
    assert (np.diff(k) >= 1).all()
    assert (dues == dues[0] + k * 0.01).all()  # fixed rate: base + k * period, no drift
    assert (runs["lateness"] >= 0).all()


def test_a_failing_coroutine_is_recorded_like_a_failing_run(caplog):
    async def boom():
        await asyncio.sleep(0)
        raise ValueError("the coroutine failed")

    async def main():
        async with AsyncScheduler() as s:
            tid = s.schedule(boom, delay=0.005)
            ok = s.schedule(print, delay=0.01, args=("still runs",))
            assert await s.idle(5)
            return s, tid, ok

    with caplog.at_level(logging.ERROR, logger="tempsched_lab"):
        s, tid, ok = run(main)
    assert s.status(tid).state is TaskState.FAILED
    assert s.status(ok).state is TaskState.DONE
    assert isinstance(s.exception(tid), ValueError)
    frame = s.log.to_frame()
    error = frame[frame["kind"] == "error"].iloc[0]
    assert error["task_id"] == tid and "ValueError: the coroutine failed" in error["error"]
    assert "raise ValueError" in error["detail"]  # the coroutine's own traceback
    assert "the coroutine failed" in caplog.text


def test_cancel_of_a_running_periodic_coroutine_is_running_and_stops_the_rearm():
    async def main():
        release = asyncio.Event()
        started = asyncio.Event()

        async def slow():
            started.set()
            await release.wait()

        async with AsyncScheduler() as s:
            tid = s.schedule(slow, delay=0.005, period=0.01)
            await asyncio.wait_for(started.wait(), 5)
            assert s.status(tid).state is TaskState.RUNNING
            assert s.cancel(tid) is CancelResult.RUNNING
            release.set()
            assert await s.idle(5)
            return s, tid

    s, tid = run(main)
    assert s.status(tid).state is TaskState.CANCELLED
    frame = s.log.to_frame()
    assert (frame["kind"] == "start").sum() == 1
    rearms = frame[(frame["kind"] == "schedule") & (frame["origin"] == "periodic")]
    assert rearms.empty


def test_a_head_scheduled_from_another_thread_reschedules_the_loop_handle():
    async def main():
        async with AsyncScheduler() as s:
            late = s.schedule(print, delay=3600)
            await asyncio.sleep(0.01)  # the loop armed its handle: it waits an hour
            ran = threading.Event()
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            other = threading.Thread(target=lambda: s.schedule(ran.set, delay=0.01))
            other.start()
            other.join()
            while not ran.is_set() and loop.time() - t0 < 5:
                await asyncio.sleep(0.005)
            assert ran.is_set()
            s.cancel(late)
            return s

    s = run(main)
    frame = s.log.to_frame()
    assert starts(frame)["lateness"].iloc[0] >= 0
    woke = frame[frame["kind"] == "wake"]
    assert "notified" in set(woke["result"])  # the waiting handle was told, not timed out
    assert frame.loc[frame["kind"] == "schedule", "thread"].iloc[-1] != "MainThread"


def test_blocking_calls_on_the_loop_thread_fail_clearly():
    async def main():
        release = asyncio.Event()

        async def busy():
            await release.wait()

        s = AsyncScheduler()
        s.schedule(busy, delay=0.001)
        await asyncio.sleep(0.02)
        assert s.running == 1
        with pytest.raises(RuntimeError, match=r"await s\.aclose\(\)"):
            s.shutdown()
        with pytest.raises(RuntimeError, match=r"await s\.idle\(\)"):
            s.wait_idle(1)
        assert not s.closed  # the refused call changed nothing

        plain = Scheduler(AsyncioClock(), executor=LoopExecutor())
        with pytest.raises(RuntimeError, match="deadlock"):
            plain.shutdown(wait=True)
        plain.shutdown(wait=False)
        assert plain.closed

        dropped = s.shutdown(wait=False)  # closes now; the run in flight ends on the loop
        assert s.closed and dropped == [] and s.running == 1
        release.set()
        assert await wait_idle_async(s, 5)
        return s

    s = run(main)
    frame = s.log.to_frame()
    assert (frame["kind"] == "finish").sum() == 1


def test_aclose_waits_for_coroutines_in_flight_and_drops_pending():
    async def main():
        async def slow():
            await asyncio.sleep(0.05)
            return "done"

        s = AsyncScheduler()
        s.schedule(slow, delay=0.001)
        later = s.schedule(print, delay=60)
        await asyncio.sleep(0.01)
        assert s.running == 1
        dropped = await s.aclose(timeout=5)
        assert s.closed and s.running == 0
        assert [d.id for d in dropped] == [later]
        assert await s.aclose() == []  # idempotent
        with pytest.raises(SchedulerClosedError):
            s.schedule(print, delay=1)
        return s

    s = run(main)
    frame = s.log.to_frame()
    assert frame.loc[frame["kind"] == "finish", "result"].tolist() == ["str"]
    stopped = frame[(frame["kind"] == "shutdown") & (frame["result"] == "stopped")]
    assert frame["kind"].iloc[-1] == "finish" and len(stopped) == 1  # closed, then it ended


def test_aclose_without_cancel_lets_pending_runs_happen_first():
    async def main():
        out = []
        s = AsyncScheduler()
        s.schedule(out.append, delay=0.02, args=("pending ran",))
        assert await s.aclose(timeout=5, cancel_pending=False) == []
        return out, s

    out, s = run(main)
    assert out == ["pending ran"] and s.closed


def test_aclose_from_inside_a_run_refuses_instead_of_waiting_for_itself():
    async def main():
        s = AsyncScheduler()

        async def closes_itself():
            assert run_token.get() == s.token
            await s.aclose()

        tid = s.schedule(closes_itself, delay=0.001)
        assert await s.idle(5)
        await s.aclose()
        return s, tid

    s, tid = run(main)
    assert s.status(tid).state is TaskState.FAILED
    assert "would wait for that run itself" in str(s.exception(tid))


def test_a_coroutine_cut_short_by_the_end_of_the_loop_is_recorded_not_lost():
    holder = {}

    async def main():
        async def forever():
            await asyncio.sleep(3600)

        s = AsyncScheduler()
        holder["s"] = s
        holder["tid"] = s.schedule(forever, delay=0.001)
        await asyncio.sleep(0.02)
        assert s.running == 1
        # leaving without aclose(): asyncio.run cancels the task on its way out

    run(main)
    s, tid = holder["s"], holder["tid"]
    assert s.status(tid).state is TaskState.FAILED
    assert isinstance(s.exception(tid), asyncio.CancelledError)
    s.shutdown(wait=False)  # the loop is closed: closing still works


def test_a_loop_in_another_thread_serves_blocking_callers():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="the-loop", daemon=True)
    thread.start()
    try:

        async def make():
            return AsyncScheduler(name="cross-thread")

        s = asyncio.run_coroutine_threadsafe(make(), loop).result(5)
        where = []

        async def co():
            await asyncio.sleep(0.01)
            where.append(threading.current_thread().name)

        s.schedule(co, delay=0.01)
        s.schedule(lambda: where.append(threading.current_thread().name), delay=0.02)
        assert s.wait_idle(5)  # a blocking wait from another thread is fine
        s.schedule(co, delay=0.001)
        time.sleep(0.005)
        s.shutdown(wait=True, timeout=5)  # waits for the coroutine in flight on the loop
        assert where == ["the-loop"] * 3
        assert s.running == 0
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_async_helpers_work_for_a_thread_driven_scheduler_too():
    async def main():
        s = Scheduler(RealClock())
        out = []
        s.schedule(out.append, delay=0.01, args=(1,))
        assert await wait_idle_async(s, timeout=5)
        s.schedule(out.append, delay=60, args=(2,))
        assert not await wait_idle_async(s, timeout=0.05)
        dropped = await shutdown_async(s, timeout=5)
        return out, dropped, s

    out, dropped, s = run(main)
    assert out == [1] and len(dropped) == 1 and s.closed


def test_a_long_wait_without_news_times_out_and_leaves_no_waiters_behind():
    from tempsched_lab.aio import RECHECK_S
    from tempsched_lab.time.loop import changes_of

    async def main():
        async with AsyncScheduler() as s:
            s.schedule(print, delay=60)
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            assert not await s.idle(timeout=10 * RECHECK_S)  # ten re-checks, nothing happened
            assert loop.time() - t0 >= 10 * RECHECK_S
            assert len(changes_of(loop)) == 0

    run(main)


@pytest.mark.parametrize("bad", [-1, "5", True, float("nan")])
def test_timeouts_are_checked(bad):
    async def main():
        async with AsyncScheduler() as s:
            with pytest.raises(ValueError, match="timeout="):
                await s.idle(bad)
            with pytest.raises(ValueError, match="timeout="):
                await s.aclose(bad)

    run(main)


def test_wrong_clock_for_the_async_scheduler_is_named():
    async def main():
        with pytest.raises(TypeError, match="clock=VirtualClock"):
            AsyncScheduler(VirtualClock())
        other = asyncio.new_event_loop()
        try:
            with pytest.raises(ValueError, match="another loop"):
                AsyncScheduler(AsyncioClock(), loop=other)
        finally:
            other.close()

    run(main)


# -- inside a real kernel ------------------------------------------------------------------

# -- a closed loop (issue 24, R9 and R10) ---------------------------------------------------


class LoopThread:
    """An event loop running forever in a thread of its own, to be stopped and closed."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, fn, *args):
        async def on_loop():
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(on_loop(), self.loop).result(10)


def _closing_quietly(loop) -> None:
    """Close ``loop``; the tasks it drops are reported by asyncio's logger (not a failure)."""
    logging.getLogger("asyncio").disabled = True
    try:
        loop.close()
    finally:
        logging.getLogger("asyncio").disabled = False


def test_r9_a_closed_loop_is_a_dead_driver_schedule_raises_naming_it():
    loop = asyncio.new_event_loop()
    s = loop.run_until_complete(_make_async_scheduler())
    s.schedule(print, delay=60, args=("never",))  # pending when the loop closes
    loop.close()
    for call in (
        lambda: s.schedule(print, delay=0.01),
        lambda: s.schedule_decision(print, delay=0.01),
        lambda: s.schedule_many([(print, s.clock.now() + 1.0)]),
    ):
        with pytest.raises(SchedulerClosedError, match=r"event loop .* was closed"):
            call()
    assert isinstance(s.worker_error, RuntimeError)
    assert s.shutdown(wait=True, timeout=5)[0].label == "print"  # dropped, not hanging
    assert audit(s.log.to_frame()).ok


def test_r9_a_plain_scheduler_on_a_closed_loops_clock_raises_on_schedule_too():
    """#24 leftover: the check lives on the one way in, not in AsyncScheduler's doors."""
    loop = asyncio.new_event_loop()
    s = Scheduler(AsyncioClock(loop), loop=loop)
    s.schedule(print, delay=60, args=("never",))
    loop.close()
    for call in (
        lambda: s.schedule(print, delay=0.01),
        lambda: s.schedule_decision(print, delay=0.01),
        lambda: s.schedule_many([(print, s.clock.now() + 1.0)]),
        lambda: FacadePort(s).submit_request(Task(0.0, print, (), None, None), delay=0.01),
    ):
        with pytest.raises(SchedulerClosedError, match=r"event loop .* was closed"):
            call()
    assert s.shutdown(wait=True, timeout=5)[0].label == "print"  # dropped, not hanging


async def _make_async_scheduler(**options):
    return AsyncScheduler(**options)


def test_r10_a_loop_closed_under_a_running_coroutine_fails_the_run_and_shutdown_returns():
    started = threading.Event()
    looper = LoopThread()

    async def long_run():
        started.set()
        await asyncio.sleep(3600)

    s = looper.call(AsyncScheduler)
    tid = s.schedule(long_run, delay=0.01)
    other = s.schedule(print, delay=3600)
    assert started.wait(10)
    assert s.status(tid).state is TaskState.RUNNING
    looper.loop.call_soon_threadsafe(looper.loop.stop)
    looper.thread.join(10)
    _closing_quietly(looper.loop)
    done = threading.Event()
    result: list = []

    def close():
        result.append(s.shutdown(wait=True))  # no timeout: it must return on its own
        done.set()

    closer = threading.Thread(target=close, daemon=True)
    closer.start()
    assert done.wait(30), "shutdown(wait=True) hung on a closed loop"
    assert [st.id for st in result[0]] == [other]
    assert s.status(tid).state is TaskState.FAILED
    assert isinstance(s.exception(tid), asyncio.CancelledError)
    assert "was closed while this run was awaiting" in str(s.exception(tid))
    frame = s.log.to_frame()
    errors = frame[frame["kind"] == "error"]
    assert errors["error"].str.startswith("CancelledError").tolist() == [True]
    assert audit(frame).ok


def test_r10_a_plain_scheduler_awaiting_on_a_closed_loop_does_not_hang_wait_idle():
    looper = LoopThread()
    started = threading.Event()

    async def long_run():
        started.set()
        await asyncio.sleep(3600)

    with Scheduler(loop=looper.loop) as s:  # a real clock; coroutines awaited on the loop
        tid = s.schedule(long_run, delay=0.01)
        assert started.wait(10)
        looper.loop.call_soon_threadsafe(looper.loop.stop)
        looper.thread.join(10)
        _closing_quietly(looper.loop)
        assert s.wait_idle(timeout=30)  # ended as failed, not RUNNING forever
        assert s.status(tid).state is TaskState.FAILED
        s.schedule(print, delay=0.01, args=("a plain scheduler goes on",))


KERNEL_CELLS = [
    "import asyncio, warnings\n"
    "warnings.simplefilter('error', RuntimeWarning)\n"
    "from tempsched_lab.aio import AsyncScheduler\n"
    "s = AsyncScheduler(name='kernel')\n"
    "order = []\n"
    "async def co(name):\n"
    "    await asyncio.sleep(0.001)\n"
    "    order.append(name)\n"
    "base = s.clock.now() + 0.05\n"
    "for name, off in [('c', 0.03), ('a', 0.01), ('b', 0.02), ('a2', 0.01)]:\n"
    "    s.schedule(co, at=base + off, args=(name,))\n"
    "s.schedule(order.append, at=base, args=('first',))",
    "print('idle:', await s.idle(timeout=10))\nprint('order:', order)",
    "f = s.log.to_frame()\n"
    "late = f.loc[f.kind.isin(['dispatch', 'start']), 'lateness']\n"
    "print('never early:', bool((late >= 0).all()))\n"
    "print('threads:', sorted(set(f['thread'])))",
    "import gc\nprint('dropped:', await s.aclose())\ngc.collect()",
]


@pytest.mark.slow
def test_inside_a_jupyter_kernel_the_loop_is_the_kernels():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in KERNEL_CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    outputs = [out for cell in nb.cells for out in cell.outputs]
    text = "".join(out.get("text", "") for out in outputs)
    assert "idle: True" in text
    assert "order: ['first', 'a', 'a2', 'b', 'c']" in text
    assert "never early: True" in text
    assert "threads: ['MainThread']" in text  # the kernel's own thread: no worker
    assert "dropped: []" in text
    errors = [out for out in outputs if out.output_type == "error" or out.get("name") == "stderr"]
    assert not errors, errors  # no "coroutine was never awaited", no traceback


def test_a_loop_closed_before_it_started_a_coroutine_run_leaves_nothing_never_awaited():
    """The scheduler's loop closed after the run was handed to it, before the loop ran it: the
    run ends failed (CancelledError, named), its coroutine is closed (no "never awaited"
    warning at collection), and shutdown does not wait for it."""
    import asyncio
    import gc
    import warnings

    loop = asyncio.new_event_loop()  # open, not running: the hand-over only queues the run
    started: list[str] = []

    async def action():
        started.append("ran")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clock = VirtualClock()
        s = Scheduler(clock, loop=loop, executor="inline")
        s.schedule(action, at=1.0)
        clock.advance(1.0)
        for _ in range(500):  # the run handed to the loop (its start row), at most 5 s
            if (s.log.to_frame()["kind"] == "start").any():
                break
            time.sleep(0.01)
        loop.close()  # the queued start never runs
        s.shutdown(wait=True, timeout=10)
        frame = s.log.to_frame()
        del action
        gc.collect()
    ended = frame[frame["kind"] == "error"]
    assert started == [] and len(ended) == 1
    assert "closed while this run was awaiting" in str(ended["error"].iloc[0])
    never = [w for w in caught if "never awaited" in str(w.message)]
    assert never == [], [str(w.message) for w in never]


def test_a_loop_closed_between_the_check_and_the_hand_over_runs_the_coroutine_here(monkeypatch):
    """The loop closes just as the run is handed over (run_coroutine_threadsafe raises): the
    coroutine runs in this thread with asyncio.run, as for a scheduler without a loop."""
    import asyncio

    loop = asyncio.new_event_loop()
    real = asyncio.run_coroutine_threadsafe

    def closing_first(coro, target):
        target.close()
        return real(coro, target)

    monkeypatch.setattr(asyncio, "run_coroutine_threadsafe", closing_first)
    ran: list[int] = []

    async def action():
        ran.append(1)
        return "done"

    clock = VirtualClock()
    s = Scheduler(clock, loop=loop, executor="inline")
    s.schedule(action, at=1.0)
    clock.run_until_idle()
    s.shutdown(wait=True, timeout=10)
    frame = s.log.to_frame()
    assert ran == [1]
    assert frame["kind"].isin(["finish", "error"]).sum() == 1
    assert (frame["kind"] == "finish").sum() == 1  # ended well, with its result
    assert frame.loc[frame["kind"] == "finish", "result"].tolist() == ["str"]  # its type
