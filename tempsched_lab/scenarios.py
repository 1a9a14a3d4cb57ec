"""The demo scenario, written once: the command line's demo and the plots' examples and gallery.

:func:`schedule_demo` makes the requests that walk every decision case (1-8)
plus a periodic task, an ``Event``, a failing task and a cancel, at times
relative to a start ``t0``; the demo (:func:`tempsched_lab.demo.run_demo`) runs
it on a real or a virtual clock, the plots' examples
(:func:`tempsched_lab.plots.example_frame`) on a virtual clock with a
:class:`SimulatedWorker`, whose runs take *virtual* time.

A :class:`SimulatedWorker` is one worker thread, simulated: the scheduler hands
runs to it like to a thread pool, and :func:`run_simulation` runs them one at a
time between the clock's steps. Tasks that fall due while another one runs wait
for it, so a log shows real queueing delay and run durations, yet every number
is the same on every machine.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> clock = VirtualClock()
>>> worker = SimulatedWorker()
>>> s = Scheduler(clock, executor=worker)
>>> _ = s.schedule(takes(clock, 0.5), at=1.0, args=("first",))
>>> _ = s.schedule(takes(clock, 0.5), at=1.0, args=("second",))  # waits for the first
>>> run_simulation(clock, worker, until=3.0)
>>> frame = s.log.to_frame()
>>> frame.loc[frame["kind"] == "start", "queue_delay"].round(3).tolist()
[0.0, 0.5]
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .core.executors import Launcher
from .core.scheduler import PastTimeError, Scheduler
from .time.clock import VirtualClock

if TYPE_CHECKING:
    from .core.runs import Run, Runner

__all__ = ["SimulatedWorker", "run_simulation", "schedule_demo", "takes"]


class _SimulatedLauncher(Launcher):
    """Holds runs handed over until :meth:`SimulatedWorker.run_next` runs them."""

    kind = "simulated"

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.waiting: collections.deque[Run] = collections.deque()

    def launch(self, runs: Sequence[Run]) -> None:
        self.waiting.extend(runs)

    def pending_since(self) -> float | None:
        return None  # run_simulation drives the worker, not the clock's steps

    def busy(self) -> bool:
        return False

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None


class SimulatedWorker:
    """``executor=SimulatedWorker()``: one simulated worker thread for a virtual clock.

    Runs handed over wait until :meth:`run_next` (or :func:`run_simulation`)
    runs the oldest in the calling thread: its start row is written then, so
    the wait shows as queueing delay.
    """

    def __init__(self) -> None:
        self._launchers: list[_SimulatedLauncher] = []

    def make_launcher(self, runner: Runner, on_idle: Callable[[], None]) -> _SimulatedLauncher:
        """The launcher of one scheduler (a worker can serve several)."""
        launcher = _SimulatedLauncher(runner)
        self._launchers.append(launcher)
        return launcher

    @property
    def waiting(self) -> int:
        """Runs handed over and not started yet."""
        return sum(len(launcher.waiting) for launcher in self._launchers)

    def run_next(self) -> bool:
        """Run the oldest waiting run (by dispatch time); False if none was waiting."""
        queued = [launcher for launcher in self._launchers if launcher.waiting]
        if not queued:
            return False
        launcher = min(queued, key=lambda lr: lr.waiting[0][2])
        task, due, dispatched = launcher.waiting.popleft()
        launcher.runner.run(task, due, dispatched)
        return True

    def __repr__(self) -> str:
        return f"<SimulatedWorker {self.waiting} waiting>"


def run_simulation(clock: VirtualClock, worker: SimulatedWorker, until: float) -> None:
    """Advance ``clock`` to ``until``, letting ``worker`` run each waiting task in order."""
    while True:
        if worker.run_next():
            continue
        nxt = clock.next_time()
        if nxt is None or nxt > until:
            break
        clock.step()
    if clock.now() < until:
        clock.run_until(until)


def takes(clock: VirtualClock, seconds: float) -> Callable[..., str]:
    """A task that takes ``seconds`` of virtual time to run (``clock.elapse``).

    >>> takes(VirtualClock(), 0.25).__qualname__
    'work_0.25s'
    """

    def work(*args: Any) -> str:
        clock.elapse(seconds)
        return "done"

    work.__qualname__ = f"work_{seconds:g}s"
    return work


def _fail_after(clock: VirtualClock | None, seconds: float) -> Callable[[], None]:
    def fail() -> None:
        if clock is not None:
            clock.elapse(seconds)
        raise RuntimeError("this task fails on purpose: the log keeps its traceback")

    fail.__qualname__ = "fail"
    return fail


def schedule_demo(
    s: Scheduler,
    *,
    t0: float,
    scale: float = 1.0,
    work: Callable[..., Any] | None = None,
    slow: Callable[..., Any] | None = None,
    fail: Callable[[], Any] | None = None,
    beat: Callable[..., Any] | None = None,
) -> dict[str, int]:
    """Make the demo's requests on ``s``: every case 1-8, a periodic task, an Event, an error.

    Times are ``t0 + x * scale``. ``work``/``slow``/``fail``/``beat`` (the
    heartbeat) are the actions (defaults: instant ones). Returns the IDs of the
    tasks a caller may want to cancel or watch (``"cancelled"``,
    ``"heartbeat"``); the first is not cancelled here (the caller decides when).

    >>> from tempsched_lab import Scheduler, VirtualClock, case_counts
    >>> s = Scheduler(VirtualClock())
    >>> ids = schedule_demo(s, t0=0.0)
    >>> sorted(case_counts(s.log.to_frame()).query("count > 0")["case"])
    [1, 2, 3, 4, 5, 6, 7, 8]
    """
    work = work if work is not None else _instant
    slow = slow if slow is not None else work
    fail = fail if fail is not None else _fail_after(None, 0.0)

    def at(x: float) -> float:
        return t0 + x * scale

    s.schedule(work, at=at(1.0), args=("a",), label="report")  # case 2: nothing scheduled
    s.schedule(work, at=at(0.55), args=("b",), label="email")  # case 3: earlier than head
    s.schedule(work, at=at(2.0), args=("c",), label="backup")  # case 4: new time point
    s.schedule(work, at=at(0.55), args=("b",), label="email")  # case 5: duplicate of head
    s.schedule(work, at=at(0.55), args=("d",), label="sms")  # case 6: joins head
    s.schedule(work, at=at(2.0), args=("c",), label="backup")  # case 7: duplicate in queue
    s.schedule(work, at=at(2.0), args=("e",), label="cleanup")  # case 8: joins time point
    with contextlib.suppress(PastTimeError):  # case 1: in the past, rejected
        s.schedule(work, at=t0 - 1.0 * scale, args=("late",), label="too late")
    heartbeat = s.schedule(
        beat if beat is not None else work, at=at(0.25), period=0.5 * scale, label="heartbeat"
    )
    s.schedule(slow, at=at(1.33), args=("import",), label="slow import")
    s.schedule(threading.Event(), at=at(1.5), label="ready flag")
    s.schedule(fail, at=at(2.62), label="failing task")
    doomed = s.schedule(work, at=at(3.0), args=("never",), label="cancelled job")
    return {"cancelled": doomed, "heartbeat": heartbeat}


def _instant(*args: Any) -> str:
    return "done"


def quiet_failures() -> contextlib.AbstractContextManager[None]:
    """Silence the ``tempsched_lab`` logger while a scenario fails a task on purpose."""
    import logging

    @contextlib.contextmanager
    def quiet() -> Any:
        logger = logging.getLogger("tempsched_lab")
        before = logger.disabled
        logger.disabled = True
        try:
            yield
        finally:
            logger.disabled = before

    return quiet()  # type: ignore[no-any-return, unused-ignore]
