"""A fixed, deterministic scenario for the plots' examples, tests and gallery.

:func:`example_frame` runs a small program on a :class:`~tempsched_lab.VirtualClock`
with a :class:`VirtualWorker`: one simulated worker thread whose tasks take
*virtual* time. Because it runs one task at a time, tasks that fall due while
another is running wait for it, so the log shows real queueing delay
(dispatch -> start) and run durations, yet every number is the same on every
machine. The scenario exercises all eight decision cases, a periodic task, an
Event, an error, a cancel and the shutdown of pending work.

>>> frame = example_frame()
>>> sorted(set(frame["case"].dropna().astype(int)))
[1, 2, 3, 4, 5, 6, 7, 8]
>>> bool((frame.loc[frame["kind"] == "start", "queue_delay"] > 0).any())
True
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pandas as pd

from ..clock import VirtualClock
from ..scheduler import PastTimeError, Scheduler

__all__ = ["VirtualWorker", "example_frame", "example_scheduler", "run_virtual"]


_Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], "Future[Any]"]


class VirtualWorker(ThreadPoolExecutor):
    """A single simulated worker for a :class:`VirtualClock`: no thread, runs on demand.

    The scheduler hands runs to it like to a thread pool (the run's ``start``
    row is written when the worker picks it up); :meth:`run_next` runs the
    oldest waiting one in the calling thread. Drive it with :func:`run_virtual`.
    """

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self._waiting: deque[_Call] = deque()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Queue ``fn(*args, **kwargs)``; it runs at a later :meth:`run_next`."""
        future: Future[Any] = Future()
        self._waiting.append((fn, args, kwargs, future))
        return future

    @property
    def waiting(self) -> int:
        """Runs handed over and not started yet."""
        return len(self._waiting)

    def run_next(self) -> bool:
        """Run the oldest waiting run; False if none was waiting."""
        if not self._waiting:
            return False
        fn, args, kwargs, future = self._waiting.popleft()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # the scheduler's _run records task errors itself
            future.set_exception(exc)
        return True


def run_virtual(clock: VirtualClock, worker: VirtualWorker, until: float) -> None:
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


def _work_for(clock: VirtualClock, seconds: float) -> Callable[..., str]:
    def work(*args: Any) -> str:
        clock.advance(seconds)  # the run takes `seconds` of virtual time
        return "done"

    work.__qualname__ = f"work_{seconds:g}s"
    return work


def _fail(clock: VirtualClock) -> Callable[[], None]:
    def fail() -> None:
        clock.advance(0.05)
        raise RuntimeError("this task fails on purpose")

    return fail


def example_scheduler(*, queue: str = "wheel", until: float = 4.0) -> Scheduler:
    """Run the example scenario and return its (shut down) scheduler.

    ``queue="wheel"`` (the default) uses a small wheel (16 slots of 0.1 s) so
    that due times off the tick grid are dispatched a little late, giving the
    lateness plot something to show besides queueing.
    """
    clock = VirtualClock()
    worker = VirtualWorker()
    options = {"slots": 16, "tick": 0.1} if queue == "wheel" else {}
    s = Scheduler(clock, executor=worker, queue=queue, queue_options=options)
    job = _work_for(clock, 0.15)
    slow = _work_for(clock, 0.6)
    s.schedule(job, at=1.0, args=("a",), label="report")  # case 2: nothing scheduled
    s.schedule(job, at=0.55, args=("b",), label="email")  # case 3: earlier than head
    s.schedule(job, at=2.0, args=("c",), label="backup")  # case 4: new time point
    s.schedule(job, at=0.55, args=("b",), label="email")  # case 5: duplicate of head
    s.schedule(job, at=0.55, args=("d",), label="sms")  # case 6: joins head
    s.schedule(job, at=2.0, args=("c",), label="backup")  # case 7: duplicate in queue
    s.schedule(job, at=2.0, args=("e",), label="cleanup")  # case 8: joins time point
    with contextlib.suppress(PastTimeError):  # case 1: in the past, rejected
        s.schedule(job, at=-1.0, args=("late",), label="too late")
    s.schedule(_work_for(clock, 0.05), at=0.25, period=0.5, label="heartbeat")
    s.schedule(slow, at=1.33, label="slow import")
    s.schedule(threading.Event(), at=1.5, label="ready flag")
    s.schedule(_fail(clock), at=2.62, label="failing task")
    doomed = s.schedule(job, at=3.0, label="cancelled job")
    s.schedule(job, at=6.0, label="never reached")  # dropped at shutdown
    run_virtual(clock, worker, 0.4)
    s.cancel(doomed)
    s.schedule(job, at=3.2, label="late request")  # a decision taken while time runs
    run_virtual(clock, worker, until)
    s.shutdown()
    return s


def example_frame(*, queue: str = "wheel", until: float = 4.0) -> pd.DataFrame:
    """The example scenario's event log as a frame (77 rows, 12 tasks).

    >>> len(example_frame())
    77
    """
    return example_scheduler(queue=queue, until=until).log.to_frame()
