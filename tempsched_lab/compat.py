"""The reference API, ``TemporalScheduler``, over :class:`~tempsched_lab.Scheduler`.

A program written for the ``temporal-scheduler`` package runs after changing
only its import line::

    # from temporal_scheduler import TemporalScheduler
    from tempsched_lab.compat import TemporalScheduler

The constructor and the methods take the same arguments and return the same
types (task IDs 0, 1, 2, ...; ``True``/``False`` from ``cancel_task``; a dict
from ``status``), and raise the same errors. Underneath is our
:class:`~tempsched_lab.Scheduler` (:attr:`TemporalScheduler.scheduler`): every
decision is recorded in its event log with origin ``"compat"``, tasks never run
early, periodic tasks keep a fixed rate, and the worker is a daemon thread.
``docs/compat.md`` lists every deliberate difference and why.

>>> from tempsched_lab import VirtualClock
>>> clock = VirtualClock(start=100.0)
>>> ts = TemporalScheduler(clock=clock)
>>> ts.schedule_task(print, absolute_time=105.0, task_args=("hello",))
0
>>> ts.status(0)["scheduled_execution"]
105.0
>>> clock.run_until(110.0)
hello
110.0
>>> ts.shutdown()
"""

from __future__ import annotations

import math
import numbers
import operator
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from datetime import datetime
from typing import Any

from .clock import Clock, RealClock
from .executors import LauncherFactory
from .log import EventLog
from .queues import TimerQueue
from .scheduler import Scheduler
from .task import CancelResult, Origin, TaskState, short_repr

__all__ = ["TemporalScheduler"]


class TemporalScheduler:
    """Run callables (or set ``threading.Event`` s) at chosen times: the reference API.

    Args:
        time_epsilon: accepted for compatibility: ``None`` or a non-negative
            finite number of seconds. The reference fires up to this much
            *early*; we never fire before the due time, so the value only
            documents intent and is kept as :attr:`time_epsilon`.
        clock: a :class:`~tempsched_lab.RealClock` (default; times are epoch
            seconds, as from ``time.time()``) or a
            :class:`~tempsched_lab.VirtualClock` (times are its own values; no
            worker thread, runs happen when the clock is stepped).
        queue: the queue design: ``"sorteddict"`` (default, the reference's
            design), ``"heap"``, ``"wheel"`` or a
            :class:`~tempsched_lab.queues.TimerQueue`.
        executor: where runs happen: ``"thread"`` (a new thread per run, as the
            reference), ``"pool"`` (a bounded thread pool of ``max_workers``),
            ``"inline"`` or any ``concurrent.futures.Executor``. ``None``
            (default) means ``"thread"`` under a real clock and ``"inline"``
            (deterministic) under a virtual clock.
        log: record every step in :attr:`log` (``False`` records nothing).
        max_log_rows: keep only the newest rows (a ring buffer), for programs
            that run for days; ``None`` keeps every row.
        max_workers: size of the ``"pool"`` executor.
        misfire: what a periodic task does with runs it missed (``"skip"``,
            ``"run_once"``, ``"catch_up"``).
        name: a name for the scheduler; creating another live one with the same
            name shuts the old one down (re-run notebook cells).
        keep_alive: also start a non-daemon thread that lives until
            :meth:`shutdown`, so that, as with the reference, the process does
            not exit while the scheduler is running (real clock only).

    Unlike the reference, the worker is a daemon thread: a program that never
    calls :meth:`shutdown` can still exit (pass ``keep_alive=True`` for the
    reference's behaviour).

    >>> from tempsched_lab import VirtualClock
    >>> clock = VirtualClock()
    >>> with TemporalScheduler(clock=clock) as ts:
    ...     ts.schedule_task(print, delta_t=2, task_args=("once",))
    ...     ts.schedule_task(print, period=1.5, task_args=("tick",))
    ...     clock.run_until(3.0)
    0
    1
    tick
    once
    tick
    3.0
    """

    def __init__(
        self,
        time_epsilon: float | None = None,
        *,
        clock: Clock | None = None,
        queue: str | TimerQueue = "sorteddict",
        executor: str | Executor | LauncherFactory | None = None,
        log: bool = True,
        max_log_rows: int | None = None,
        max_workers: int | None = None,
        misfire: str = "skip",
        name: str | None = None,
        keep_alive: bool = False,
    ) -> None:
        self.time_epsilon: float | None = _check_epsilon(time_epsilon)
        clock = RealClock() if clock is None else clock
        virtual = bool(getattr(clock, "virtual", False))
        if executor is None:
            executor = "inline" if virtual else "thread"
        #: The scheduler doing the work (all of its API is available).
        self.scheduler = Scheduler(
            clock,
            executor=executor,
            queue=queue,
            log=log,
            max_log_rows=max_log_rows,
            max_workers=max_workers,
            misfire=misfire,
            name=name,
        )
        self._done = threading.Event()
        self._keeper: threading.Thread | None = None
        if keep_alive and not virtual:
            self._keeper = threading.Thread(
                target=self._keep_alive, name="tempsched-compat-keep-alive", daemon=False
            )
            self._keeper.start()

    # -- the reference API ------------------------------------------------------------
    def schedule_task(
        self,
        callback: Callable[..., Any] | threading.Event,
        absolute_time: float | datetime | None = None,
        delta_t: float | None = None,
        period: float | None = None,
        comment: Any = None,
        task_args: tuple[Any, ...] | list[Any] | None = None,
        task_kwargs: Mapping[str, Any] | None = None,
    ) -> int:
        """Schedule ``callback`` (or set an Event) at ``absolute_time`` or after ``delta_t``.

        With ``period``, the task runs every ``period`` seconds, keeping its ID:
        first at ``absolute_time`` (or after ``delta_t``), else one period from
        now. Returns the task ID; an identical pending request (same time,
        callback, arguments and period) returns the existing ID. ``comment``
        becomes the task's label in the log.

        Raises ``ValueError`` when no time is given, when both ``absolute_time``
        and ``delta_t`` are given, and when the time is in the past (case 1,
        a :class:`~tempsched_lab.PastTimeError`); ``RuntimeError``
        (:class:`~tempsched_lab.SchedulerClosedError`) after :meth:`shutdown`.

        >>> from tempsched_lab import VirtualClock
        >>> ts = TemporalScheduler(clock=VirtualClock(start=10.0))
        >>> ts.schedule_task(print, absolute_time=12.0)
        0
        >>> ts.schedule_task(print, absolute_time=12.0)  # a duplicate: the same ID
        0
        >>> ts.schedule_task(print, absolute_time=5.0)
        Traceback (most recent call last):
        ...
        tempsched_lab.scheduler.PastTimeError: at/delay: the requested time (t = -5.000 s) is \
5.000 s in the past (now: t = 0.000 s); case 1: nothing was scheduled
        >>> ts.shutdown()
        """
        if absolute_time is None and delta_t is None and period is None:
            raise ValueError("schedule_task: no time given; pass absolute_time, delta_t or period")
        if absolute_time is not None and delta_t is not None:
            raise ValueError(
                f"schedule_task: absolute_time={absolute_time!r} and delta_t={delta_t!r}: "
                "pass one of them, not both"
            )
        decision = self.scheduler.schedule_decision(
            callback,
            at=absolute_time,
            delay=delta_t,
            period=period,
            args=() if task_args is None else task_args,
            kwargs=task_kwargs,
            label=_label(comment),
            origin=Origin.COMPAT,
        )
        assert decision.task_id is not None  # a rejection raised above
        return decision.task_id

    def cancel_task(self, timer_id: Any) -> bool:
        """Cancel a task; ``True`` if that stopped something, else ``False``. Never raises.

        Something is stopped when the task was pending, or when it is a periodic
        task whose run is in flight: that run finishes, no other follows (so a
        periodic task can cancel itself). An ID that is unknown, already done,
        already cancelled or not an integer gives ``False``.

        >>> from tempsched_lab import VirtualClock
        >>> ts = TemporalScheduler(clock=VirtualClock())
        >>> tid = ts.schedule_task(print, delta_t=1)
        >>> ts.cancel_task(tid), ts.cancel_task(tid), ts.cancel_task("nope")
        (True, False, False)
        >>> ts.shutdown()
        """
        task_id = _as_id(timer_id)
        if task_id is None:
            return False
        try:
            periodic = self.scheduler.status(task_id).period is not None
        except KeyError:
            return False
        result = self.scheduler.cancel(task_id)
        # a one-shot run in flight cannot be stopped; a periodic one stops (once)
        return result is CancelResult.CANCELLED or (result is CancelResult.RUNNING and periodic)

    def status(self, timer_id: Any) -> dict[str, Any]:
        """The task as a dict: ``id``, ``periodic``, ``period`` and its due times.

        ``scheduled_execution`` is the next due time and ``previous_execution``
        the due time of the last run (``None`` for one-shot tasks and before a
        periodic task's first run). While a periodic task's run is in flight,
        ``scheduled_execution`` is its next slot on the fixed-rate grid.
        Raises ``KeyError`` for an unknown ID, and once a one-shot task fired
        or a task was cancelled or dropped by :meth:`shutdown`.

        >>> from tempsched_lab import VirtualClock
        >>> clock = VirtualClock()
        >>> ts = TemporalScheduler(clock=clock)
        >>> tid = ts.schedule_task(print, absolute_time=2.0, period=0.5, task_args=("run",))
        >>> clock.run_until(2.5)
        run
        run
        2.5
        >>> ts.status(tid)
        {'id': 0, 'periodic': True, 'period': 0.5, 'scheduled_execution': 3.0, \
'previous_execution': 2.5}
        >>> ts.shutdown()
        """
        task_id = _as_id(timer_id)
        if task_id is None:
            raise KeyError(f"timer_id={timer_id!r}: no such task (task IDs are integers)")
        st = self.scheduler.status(task_id)  # KeyError for an ID never issued
        periodic = st.period is not None
        previous = st.last_due if periodic else None
        if st.state == TaskState.PENDING or (
            st.state == TaskState.RUNNING and periodic and st.next_due is not None
        ):
            scheduled = st.next_due
        else:
            state = TaskState(st.state).name.lower()
            raise KeyError(f"timer_id={task_id!r}: no pending task (it is {state})")
        return {
            "id": task_id,
            "periodic": st.period is not None,
            "period": st.period,
            "scheduled_execution": scheduled,
            "previous_execution": previous,
        }

    def shutdown(self, wait_until_done: bool = True) -> None:
        """Drop every pending task and stop; with ``wait_until_done``, wait for runs in flight.

        Idempotent. Called from inside one of this scheduler's tasks it does not
        wait (waiting there would wait for the calling task itself): it stops
        the scheduler and returns. After it, :meth:`schedule_task` raises.

        >>> from tempsched_lab import VirtualClock
        >>> ts = TemporalScheduler(clock=VirtualClock())
        >>> _ = ts.schedule_task(print, delta_t=1)
        >>> ts.shutdown()
        >>> ts.scheduler.closed
        True
        """
        scheduler = self.scheduler
        try:
            if not wait_until_done:
                scheduler.shutdown(wait=False)
                return
            try:
                scheduler.shutdown(wait=True)
            except RuntimeError:
                # raised before doing anything when called from inside one of our
                # tasks (it would wait for itself): stop without waiting instead
                if scheduler.closed:
                    raise
                scheduler.shutdown(wait=False)
                return
            if not scheduler.clock.virtual:
                # an earlier shutdown without waiting (say, from inside a task) makes
                # the core return at once: still wait for the runs in flight
                scheduler.wait_idle()
        finally:
            self._done.set()

    # -- extras ------------------------------------------------------------------------
    @property
    def log(self) -> EventLog:
        """The scheduler's :class:`~tempsched_lab.EventLog` (``log.to_frame()`` for a DataFrame)."""
        return self.scheduler.log

    @property
    def clock(self) -> Clock:
        """The scheduler's clock."""
        return self.scheduler.clock

    def _keep_alive(self) -> None:
        while not self._done.wait(0.5):
            if self.scheduler.closed:  # shut down directly through .scheduler
                return

    def __enter__(self) -> TemporalScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return f"<TemporalScheduler (compat) over {self.scheduler!r}>"


def _check_epsilon(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"time_epsilon={value!r}: expected None or a number of seconds, "
            f"got {type(value).__name__}"
        )
    result = float(value)
    if not math.isfinite(result) or result < 0:
        raise ValueError(f"time_epsilon={value!r}: expected a non-negative finite number")
    return result


def _as_id(value: Any) -> int | None:
    """An integer task ID (``int``, numpy integers...), or ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _label(comment: Any) -> str | None:
    """The reference accepts any comment; ours is a label string (empty means none)."""
    if comment is None:
        return None
    if isinstance(comment, str):
        return comment or None
    return short_repr(comment)
