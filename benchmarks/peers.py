"""Small adapters putting each scheduler under test behind the same few operations.

Every adapter uses only its scheduler's public API. Times are always given on
the adapter's own clock (:attr:`Peer.clock`): the clock the scheduler itself
compares due times with, so that "early" and "late" are measured on the same
scale the scheduler uses.

=====================  ==============================  ==========================
peer                   clock                           notes
=====================  ==============================  ==========================
baseline Event.wait    ``time.monotonic``              a bare thread, no scheduler
ours (tempsched_lab)   ``Scheduler.clock.now``         one adapter per variant
ours schedule_many     (nothing fires)                 the bulk API, one call per batch
temporal-scheduler     ``time.time``                   non-daemon thread: shut down
sched                  ``time.monotonic``              run thread started after
threading.Timer        ``time.monotonic``              one OS thread per task
asyncio call_at        ``loop.time`` (monotonic)       scheduled inside the loop
APScheduler 3          ``time.time`` (``datetime``)    date / interval triggers
=====================  ==============================  ==========================

Virtual-time simulations (:class:`SimPeer`: schedule everything, then run to the
end) have their own small adapters: ours on a ``VirtualClock`` (one by one or with
``schedule_many``) and SimPy.

Throughput workloads call :meth:`Peer.schedule_batch` and :meth:`Peer.cancel_batch`,
each a tight loop over the scheduler's own call, so the adapter adds one Python
call per *batch*, not per task.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import math
import sched
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "APSchedulerPeer",
    "AsyncioPeer",
    "BaselinePeer",
    "OursBulkPeer",
    "OursPeer",
    "OursSimPeer",
    "Peer",
    "ReferencePeer",
    "SchedPeer",
    "SimPeer",
    "SimPyPeer",
    "TimerPeer",
    "all_peers",
    "bulk_peers",
    "ours_variants",
    "sim_peers",
]

Task = Callable[..., Any]
ArgsList = Sequence[tuple[Any, ...]] | None


class Unsupported(Exception):
    """The peer cannot do this workload (no periodic API, no cancel...)."""


class Peer:
    """One scheduler under test.

    Subclasses implement :meth:`open`, :meth:`close`, :meth:`schedule_batch`
    and, where the scheduler can, :meth:`cancel_batch` and the periodic pair.
    A capability the scheduler lacks is a non-``None`` reason string in
    :attr:`no_periodic` / :attr:`no_cancel`; the workloads report it as "n/a".
    """

    #: Short unique key used in tables and JSON.
    key: str = "peer"
    #: "ours", "peer" or "baseline".
    kind: str = "peer"
    #: Why the scheduler cannot run periodic tasks (``None``: it can).
    no_periodic: str | None = None
    #: Why the scheduler cannot cancel (``None``: it can).
    no_cancel: str | None = None
    #: Why the scheduler is not part of throughput workloads (``None``: it is).
    no_throughput: str | None = None
    #: Largest number of pending tasks it is asked to hold (``None``: no cap).
    max_pending: int | None = None
    #: Largest number of pending tasks for the cancel workload (scanning cancels).
    max_cancel_pending: int | None = None
    #: Cancel scans every pending task: run it under a time budget.
    cancel_scans: bool = False
    #: Rough set-up cost per task (s), to place a burst far enough ahead.
    setup_cost: float = 2e-5

    def clock(self) -> float:
        """Now, on the clock the scheduler compares due times with."""
        raise NotImplementedError

    def available(self) -> str | None:
        """``None`` when the peer can be created, else why not."""
        try:
            self.open()
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        self.close()
        return None

    def open(self) -> None:
        """Create (and start) a fresh scheduler."""

    def start(self) -> None:
        """Begin firing after the initial tasks were scheduled (only ``sched`` needs it)."""

    def close(self) -> None:
        """Shut the scheduler down and wait for its threads."""

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        """Schedule ``fn(*args[i])`` at ``times[i]`` for every ``i``; returns the handles."""
        raise NotImplementedError

    def cancel_batch(self, handles: Sequence[Any]) -> None:
        """Cancel every task in ``handles``, in that order."""
        raise Unsupported(self.no_cancel or "no cancel")

    def start_periodic(self, fn: Task, first: float, period: float) -> Any:
        """Run ``fn()`` at ``first`` and then every ``period`` seconds; returns a handle."""
        raise Unsupported(self.no_periodic or "no periodic support")

    def stop_periodic(self, handle: Any) -> None:
        """Stop a periodic task started by :meth:`start_periodic`."""
        raise Unsupported(self.no_periodic or "no periodic support")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key}>"


# -- the physical limit ----------------------------------------------------------------------------


class BaselinePeer(Peer):
    """A bare thread that waits with ``threading.Event.wait(timeout)`` for each target in order.

    Not a scheduler: it knows every target before it starts (sorted), cannot
    cancel and pays no bookkeeping. It shows what this machine can do at best.
    Each target is waited for until ``time.monotonic()`` reaches it, so it is
    never early.
    """

    key = "baseline Event.wait"
    kind = "baseline"
    no_cancel = "not a scheduler"
    no_throughput = "not a scheduler: nothing to measure"

    def __init__(self) -> None:
        self._jobs: list[tuple[float, Task, tuple[Any, ...]]] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._periodic: tuple[Task, float, float] | None = None

    def clock(self) -> float:
        return time.monotonic()

    def open(self) -> None:
        self._jobs = []
        self._stop = threading.Event()
        self._thread = None
        self._periodic = None

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        jobs = self._jobs
        for i, t in enumerate(times):
            jobs.append((t, fn, () if args is None else args[i]))
        return list(range(len(times)))

    def _wait_until(self, target: float) -> bool:
        """Wait until ``target``; False when asked to stop first."""
        stop, now = self._stop, time.monotonic
        while True:
            remaining = target - now()
            if remaining <= 0:
                return True
            if stop.wait(remaining):
                return False

    def _run_once(self) -> None:
        for t, fn, a in sorted(self._jobs, key=lambda job: job[0]):
            if not self._wait_until(t):
                return
            fn(*a)

    def _run_periodic(self) -> None:
        assert self._periodic is not None
        fn, first, period = self._periodic
        k = 0
        while self._wait_until(first + k * period):
            fn()
            k += 1

    def start(self) -> None:
        if self._thread is None and self._jobs:
            self._thread = threading.Thread(target=self._run_once, daemon=True)
            self._thread.start()

    def start_periodic(self, fn: Task, first: float, period: float) -> Any:
        self._periodic = (fn, first, period)
        self._thread = threading.Thread(target=self._run_periodic, daemon=True)
        self._thread.start()
        return 0

    def stop_periodic(self, handle: Any) -> None:
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)


# -- ours ------------------------------------------------------------------------------------------


class OursPeer(Peer):
    """``tempsched_lab.Scheduler`` with one queue design, executor and log setting.

    Due times are absolute (``at=``) on ``scheduler.clock.now()``'s scale.
    """

    kind = "ours"

    def __init__(self, queue: str = "sorteddict", executor: str = "pool", log: bool = True) -> None:
        self.queue = queue
        self.executor = executor
        self.log = log
        self.key = f"ours {queue}/{executor}/{'log' if log else 'nolog'}"
        self.scheduler: Any = None
        self._clock: Callable[[], float] = time.monotonic

    def clock(self) -> float:
        return self._clock()

    def open(self) -> None:
        from tempsched_lab import Scheduler

        self.scheduler = Scheduler(executor=self.executor, queue=self.queue, log=self.log)
        self._clock = self.scheduler.clock.now

    def close(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=True, timeout=10)

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        schedule = self.scheduler.schedule
        if args is None:
            return [schedule(fn, at=t) for t in times]
        return [schedule(fn, at=t, args=a) for t, a in zip(times, args, strict=True)]

    def cancel_batch(self, handles: Sequence[Any]) -> None:
        cancel = self.scheduler.cancel
        for task_id in handles:
            cancel(task_id)

    def start_periodic(self, fn: Task, first: float, period: float) -> Any:
        try:
            return self.scheduler.schedule(fn, at=first, period=period)
        except ValueError as exc:  # e.g. a period shorter than the wheel's tick: refused
            raise Unsupported(f"refused: {exc}") from exc

    def stop_periodic(self, handle: Any) -> None:
        self.scheduler.cancel(handle)


class OursBulkPeer(OursPeer):
    """Ours scheduling a whole batch with one ``Scheduler.schedule_many`` call.

    The request list (``[(fn, t), ...]``) is built inside the timed call: it is
    part of what a caller pays. Nothing fires (the throughput workloads).
    """

    def __init__(self, queue: str = "sorteddict", log: bool = True) -> None:
        super().__init__(queue, "pool", log)
        self.key = f"ours {queue}/schedule_many/{'log' if log else 'nolog'}"

    def available(self) -> str | None:
        from tempsched_lab import Scheduler

        if not hasattr(Scheduler, "schedule_many"):
            return "this version of tempsched_lab has no Scheduler.schedule_many"
        return super().available()

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        if args is None:
            return self.scheduler.schedule_many([(fn, t) for t in times])  # type: ignore[no-any-return]
        return self.scheduler.schedule_many(  # type: ignore[no-any-return]
            [(fn, t, a) for t, a in zip(times, args, strict=True)]
        )


# -- virtual-time simulation -----------------------------------------------------------------------


class SimPeer(Peer):
    """A discrete-event simulation: schedule one-shot callbacks at virtual times, run to the end.

    :meth:`simulate` returns the wall time of the two phases; ``cb`` is called
    once per time (ours: ``cb()``, SimPy: ``cb(event)``).
    """

    def simulate(self, times: Sequence[float], cb: Task) -> tuple[float, float]:
        """``(schedule_s, run_s)``: seconds to schedule every callback, then to run them all."""
        raise NotImplementedError


class OursSimPeer(SimPeer):
    """Ours on a ``VirtualClock`` with the inline executor: ``schedule`` (or
    ``schedule_many``) every callback, then ``clock.run_until_idle()``."""

    kind = "ours"

    def __init__(self, bulk: bool = False, log: bool = True, queue: str = "sorteddict") -> None:
        self.bulk, self.log, self.queue = bulk, log, queue
        how = "schedule_many" if bulk else "schedule"
        self.key = f"ours {queue}/{how}/{'log' if log else 'nolog'}"

    def available(self) -> str | None:
        from tempsched_lab import Scheduler

        if self.bulk and not hasattr(Scheduler, "schedule_many"):
            return "this version of tempsched_lab has no Scheduler.schedule_many"
        return None

    def simulate(self, times: Sequence[float], cb: Task) -> tuple[float, float]:
        from tempsched_lab import Scheduler, VirtualClock

        clock = VirtualClock()
        sched = Scheduler(clock, executor="inline", queue=self.queue, log=self.log)
        try:
            t0 = time.perf_counter()
            if self.bulk:
                sched.schedule_many([(cb, t) for t in times])
            else:
                schedule = sched.schedule
                for t in times:
                    schedule(cb, at=t)
            t1 = time.perf_counter()
            clock.run_until_idle(max_steps=len(times) + 1)
            t2 = time.perf_counter()
        finally:
            sched.shutdown(wait=False)
        return t1 - t0, t2 - t1


class SimPyPeer(SimPeer):
    """SimPy: ``env.timeout(t).callbacks.append(cb)`` for every time, then ``env.run()``."""

    key = "SimPy"

    def available(self) -> str | None:
        try:
            import simpy  # noqa: F401
        except ImportError as exc:
            return f"{exc} (pip install -e '.[bench]')"
        return None

    def simulate(self, times: Sequence[float], cb: Task) -> tuple[float, float]:
        import simpy

        env = simpy.Environment()
        t0 = time.perf_counter()
        timeout = env.timeout
        for t in times:
            timeout(t).callbacks.append(cb)
        t1 = time.perf_counter()
        env.run()
        return t1 - t0, time.perf_counter() - t1


# -- the reference ---------------------------------------------------------------------------------


class ReferencePeer(Peer):
    """``temporal_scheduler.TemporalScheduler`` (PyPI ``temporal-scheduler``), default settings.

    Its ``time_epsilon`` (default 0.01 s) makes it fire a task at once when the
    task is due within 10 ms, so it can run early; periodic tasks are re-armed
    at ``time.time() + period`` when they fire (fixed delay). Cancel scans every
    pending task, and every run starts a new thread.
    """

    key = "temporal-scheduler"
    max_cancel_pending = 10_000
    cancel_scans = True
    setup_cost = 1e-5

    def __init__(self) -> None:
        self._sched: Any = None

    def clock(self) -> float:
        return time.time()

    def open(self) -> None:
        from temporal_scheduler import TemporalScheduler

        self._sched = TemporalScheduler()

    def close(self) -> None:
        if self._sched is not None:
            self._sched.shutdown(wait_until_done=True)
            self._sched = None

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        schedule = self._sched.schedule_task
        if args is None:
            return [schedule(fn, absolute_time=t) for t in times]
        return [
            schedule(fn, absolute_time=t, task_args=a) for t, a in zip(times, args, strict=True)
        ]

    def cancel_batch(self, handles: Sequence[Any]) -> None:
        cancel = self._sched.cancel_task
        for task_id in handles:
            cancel(task_id)

    def start_periodic(self, fn: Task, first: float, period: float) -> Any:
        return self._sched.schedule_task(fn, absolute_time=first, period=period)

    def stop_periodic(self, handle: Any) -> None:
        self._sched.cancel_task(handle)


# -- the standard library --------------------------------------------------------------------------


class SchedPeer(Peer):
    """Stdlib ``sched.scheduler(time.monotonic, time.sleep)``, run in a thread.

    A sleeping ``run()`` cannot be woken by a new, earlier event, so the run
    thread is started (:meth:`start`) only after the initial tasks are entered;
    the throughput workloads never start it (it could only sleep). ``cancel``
    is ``list.remove`` plus ``heapify``: O(n) per cancel. No periodic API.
    """

    key = "sched"
    no_periodic = "no periodic API"
    cancel_scans = True
    setup_cost = 5e-6

    def __init__(self) -> None:
        self._sched = sched.scheduler(time.monotonic, time.sleep)
        self._thread: threading.Thread | None = None

    def clock(self) -> float:
        return time.monotonic()

    def open(self) -> None:
        self._sched = sched.scheduler(time.monotonic, time.sleep)
        self._thread = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._sched.run, daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._thread is None:  # never ran: nothing to stop, drop the queue
            self._sched = sched.scheduler(time.monotonic, time.sleep)
            return
        for event in self._sched.queue:  # few are left when the thread ran
            with contextlib.suppress(ValueError):  # it ran meanwhile
                self._sched.cancel(event)
        self._thread.join(10)

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        enterabs = self._sched.enterabs
        if args is None:
            return [enterabs(t, 0, fn) for t in times]
        return [enterabs(t, 0, fn, a) for t, a in zip(times, args, strict=True)]

    def cancel_batch(self, handles: Sequence[Any]) -> None:
        cancel = self._sched.cancel
        for event in handles:
            cancel(event)


class TimerPeer(Peer):
    """One daemon ``threading.Timer`` per task; cancel is ``timer.cancel()``.

    A Timer takes a relative interval: it is computed from ``time.monotonic()``
    just before the Timer starts, and the Timer's own wait starts later, so it
    cannot fire early. Every pending task holds an OS thread, which caps it.
    """

    key = "threading.Timer"
    no_periodic = "no periodic API"
    max_pending = 10_000
    setup_cost = 1.2e-3

    def __init__(self) -> None:
        self._timers: list[threading.Timer] = []

    def clock(self) -> float:
        return time.monotonic()

    def open(self) -> None:
        self._timers = []

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()
        for timer in self._timers:
            timer.join(10)
        self._timers = []

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        now, timers = time.monotonic, self._timers
        out: list[threading.Timer] = []
        for i, t in enumerate(times):
            timer = threading.Timer(t - now(), fn, None if args is None else args[i])
            timer.daemon = True
            timer.start()
            out.append(timer)
        timers.extend(out)
        return out

    def cancel_batch(self, handles: Sequence[Any]) -> None:
        for timer in handles:
            timer.cancel()


class AsyncioPeer(Peer):
    """``loop.call_at`` on an asyncio event loop running in a daemon thread.

    Scheduling and cancelling run *inside* the loop: each batch is handed over
    once with ``call_soon_threadsafe`` and the loop runs the whole batch of
    ``call_at`` / ``TimerHandle.cancel`` calls (the hand-over is included in the
    time). No periodic API (a callback could re-arm itself, but that is user code).
    """

    key = "asyncio call_at"
    no_periodic = "no periodic API"
    setup_cost = 5e-6

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def clock(self) -> float:
        return time.monotonic()  # what the default loop's time() returns

    def open(self) -> None:
        loop = asyncio.new_event_loop()
        if abs(loop.time() - time.monotonic()) > 0.01:  # pragma: no cover - other loops
            raise RuntimeError("this event loop's clock is not time.monotonic()")
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, daemon=True)
        self._thread.start()

    def _in_loop(self, fn: Callable[[], Any]) -> Any:
        assert self._loop is not None
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def call() -> None:
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)

        self._loop.call_soon_threadsafe(call)
        return done.result(60)

    def close(self) -> None:
        if self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop.close()
        self._loop = None

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        assert self._loop is not None
        call_at = self._loop.call_at

        def batch() -> list[Any]:
            if args is None:
                return [call_at(t, fn) for t in times]
            return [call_at(t, fn, *a) for t, a in zip(times, args, strict=True)]

        return self._in_loop(batch)  # type: ignore[no-any-return]

    def cancel_batch(self, handles: Sequence[Any]) -> None:
        def batch() -> None:
            for handle in handles:
                handle.cancel()

        self._in_loop(batch)


# -- APScheduler -----------------------------------------------------------------------------------


def _utc(t: float) -> datetime:
    """``t`` (``time.time()`` scale) as an aware datetime, rounded *up* to its microsecond grid.

    ``datetime`` keeps microseconds; rounding up keeps a due time from moving
    earlier, so a run can never look early by a rounding step.
    """
    return datetime.fromtimestamp(math.ceil(t * 1e6) / 1e6, timezone.utc)


class APSchedulerPeer(Peer):
    """APScheduler 3 ``BackgroundScheduler`` (UTC), date and interval triggers, default job options.

    Defaults: a 10-thread pool executor, ``coalesce=True``, ``max_instances=1``,
    ``misfire_grace_time=1`` s. Its own log messages are raised to ERROR level
    (they would otherwise print a warning per missed run). Wall-clock time;
    due times are rounded up to the microsecond its ``datetime`` triggers keep.
    """

    key = "APScheduler 3"
    setup_cost = 1e-4

    def __init__(self) -> None:
        self._sched: Any = None

    def clock(self) -> float:
        return time.time()

    def open(self) -> None:
        from apscheduler.schedulers.background import BackgroundScheduler

        logging.getLogger("apscheduler").setLevel(logging.ERROR)
        self._sched = BackgroundScheduler(timezone=timezone.utc)
        self._sched.start()

    def close(self) -> None:
        if self._sched is not None:
            self._sched.shutdown(wait=True)
            self._sched = None

    def schedule_batch(self, fn: Task, times: Sequence[float], args: ArgsList = None) -> list[Any]:
        add = self._sched.add_job
        out = []
        for i, t in enumerate(times):
            job = add(fn, "date", run_date=_utc(t), args=None if args is None else args[i])
            out.append(job.id)
        return out

    def cancel_batch(self, handles: Sequence[Any]) -> None:
        remove = self._sched.remove_job
        for job_id in handles:
            remove(job_id)

    def start_periodic(self, fn: Task, first: float, period: float) -> Any:
        return self._sched.add_job(fn, "interval", seconds=period, start_date=_utc(first)).id

    def stop_periodic(self, handle: Any) -> None:
        self._sched.remove_job(handle)


# -- the line-up ---------------------------------------------------------------------------------


def ours_variants(workload_kind: str, quick: bool = False) -> list[OursPeer]:
    """Our scheduler's variants for a workload kind.

    ``"throughput"`` (schedule, cancel, memory): every queue design, log on and
    off (nothing fires, so the executor does not matter; the default pool is used).
    ``"timing"`` (lateness, burst, periodic): the default design with each
    executor, the log turned off once (not in quick mode), and the other two
    designs with the pool.
    """
    if workload_kind == "throughput":
        return [
            OursPeer(q, "pool", log)
            for q in ("sorteddict", "heap", "wheel")
            for log in (True, False)
        ]
    variants = [
        OursPeer("sorteddict", "pool", True),
        OursPeer("sorteddict", "inline", True),
        OursPeer("sorteddict", "thread", True),
        OursPeer("sorteddict", "pool", False),
        OursPeer("heap", "pool", True),
        OursPeer("wheel", "pool", True),
    ]
    return [v for v in variants if v.log] if quick else variants


def bulk_peers() -> list[Peer]:
    """Bulk scheduling: stdlib ``sched.enterabs`` in a loop against ``schedule_many``."""
    return [
        SchedPeer(),
        *(OursBulkPeer(q, log) for q in ("sorteddict", "heap", "wheel") for log in (True, False)),
    ]


def sim_peers() -> list[Peer]:
    """Virtual-time simulation: SimPy against ours (one by one, bulk; log on and off)."""
    return [
        SimPyPeer(),
        OursSimPeer(bulk=False, log=True),
        OursSimPeer(bulk=True, log=True),
        OursSimPeer(bulk=False, log=False),
        OursSimPeer(bulk=True, log=False),
    ]


def all_peers() -> list[Peer]:
    """The non-ours peers, baseline first."""
    return [
        BaselinePeer(),
        ReferencePeer(),
        SchedPeer(),
        TimerPeer(),
        AsyncioPeer(),
        APSchedulerPeer(),
    ]
