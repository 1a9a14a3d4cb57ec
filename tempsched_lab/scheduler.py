"""The scheduler: one lock, the decision tree, runs, periodic re-arms, cancel, shutdown.

Every decision is taken, and every log row numbered, under one lock. The
scheduler's state is declared in :meth:`Scheduler.__init__`; three collaborators
receive what they need explicitly:

* the clock's **driver** (:mod:`tempsched_lab.clock`) decides *when* to fire: a
  worker thread for a real clock, the stepping caller for a virtual one; it
  calls :meth:`Scheduler.fire_due` and is woken by :meth:`Driver.wake
  <tempsched_lab.clock.Driver.wake>` when the head moves earlier;
* the **launcher** (:mod:`tempsched_lab.executors`) decides *where* runs happen;
* the **runner** (:mod:`tempsched_lab.runs`) runs one task and reports back
  through :meth:`Scheduler.run_started` / :meth:`Scheduler.run_ended`;
* the **recorder** (:class:`tempsched_lab.log.Recorder`) writes one row per step.

Tasks never run before their due time, a raising task (or ``Event``) never
stops the others, and a driver that dies makes ``schedule`` raise instead of
returning IDs that never run.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> clock = VirtualClock()
>>> s = Scheduler(clock)
>>> a = s.schedule(print, at=2.0, args=("second",))
>>> s.schedule_decision(print, at=1.0, args=("first",)).case.short
'earlier than head'
>>> _ = clock.run_until_idle()
first
second
"""

from __future__ import annotations

import collections
import logging
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import validation as check
from .clock import Clock, Driver, RealClock
from .decision import Case, Decision, classify
from .executors import Launcher, LauncherFactory, make_launcher
from .log import CASE_INT, EventLog, Recorder, traceback_text
from .moment import Moment
from .queues import TimerQueue, make_queue
from .registry import live_schedulers, register
from .requests import RequestBuilder, due_of, request_field, round_up, task_id_of
from .runs import Run, Runner, in_task
from .task import (
    CancelResult,
    Origin,
    PeriodicTask,
    Task,
    TaskState,
    TaskStatus,
    TriggeredTask,
    describe_exception,
    label_of,
    short_repr,
)
from .timescale import TimeScale, fmt_duration

if TYPE_CHECKING:
    import asyncio

# Bound once: a global name is one lookup; math.isfinite is two (measured 14 ns vs 33 ns
# for the `x - x == 0.0` trick it replaces, which bought nothing).
_isfinite = math.isfinite

__all__ = ["PastTimeError", "Scheduler", "SchedulerClosedError", "live_schedulers", "logger"]

#: Failing tasks are reported here (ERROR, with the traceback), as APScheduler and
#: ``concurrent.futures`` users expect; configure it like any ``logging`` logger.
logger = logging.getLogger("tempsched_lab")

# Task states as plain ints: storing an IntEnum member into the state bytearray costs ~90 ns,
# a bound int ~20 ns (timeit); every task's state is written two to four times.
_PENDING, _RUNNING = TaskState.PENDING.value, TaskState.RUNNING.value
_DONE, _FAILED, _DROPPED = TaskState.DONE.value, TaskState.FAILED.value, TaskState.DROPPED.value
# Enum members and module attributes bound once: ``Case.PAST`` costs ~70 ns per access (an
# enum class attribute), and the decision reads three of them per call (measured, timeit).
_PAST, _EMPTY, _EARLIER = Case.PAST, Case.EMPTY, Case.EARLIER_THAN_HEAD
_HORIZON = check.MAX_HORIZON
_USER, _PERIODIC = Origin.USER.code, Origin.PERIODIC.code
_ORIGIN_NAMES = tuple(o.value for o in Origin)
# cancel() reads these as module globals: a member of an Enum class and its ``.value``
# (a property) cost ~500 instructions per cancel together (benchmarks/instructions.py)
_CANCELLED = TaskState.CANCELLED
_R_CANCELLED, _R_RUNNING = CancelResult.CANCELLED, CancelResult.RUNNING
_R_ALREADY_DONE, _R_NOT_FOUND = CancelResult.ALREADY_DONE, CancelResult.NOT_FOUND
_RESULT_TEXT = {result: result.value for result in CancelResult}
_ORIGIN_CODES: dict[str, int] = {o: o.code for o in Origin}
#: how many failed runs' exceptions :meth:`Scheduler.exception` keeps (beyond live tasks')
KEEP_EXCEPTIONS = 100


class PastTimeError(ValueError):
    """A request for a time in the past (case 1). ``decision`` holds the rejection."""

    def __init__(self, message: str, decision: Decision) -> None:
        super().__init__(message)
        self.decision = decision


class SchedulerClosedError(RuntimeError):
    """The scheduler was shut down, or its worker died (``__cause__`` says why)."""


class Scheduler:
    """Run callables (or set ``threading.Event`` s) at chosen times, and record every step.

    Args:
        clock: a :class:`~tempsched_lab.RealClock` (default; a daemon worker
            thread waits for due times) or a :class:`~tempsched_lab.VirtualClock`
            (no worker: the clock fires due groups when stepped), or any clock
            following :class:`~tempsched_lab.clock.Clock`.
        executor: where runs happen: ``"pool"`` (a bounded thread pool, the
            default under a real clock), ``"thread"`` (a new thread per run, as
            the reference), ``"inline"`` (in the worker or the stepping thread;
            the default under a virtual clock), or any
            ``concurrent.futures.Executor`` (process pools included).
        queue: the queue design, ``"sorteddict"`` (default), ``"heap"``,
            ``"wheel"``, or a :class:`~tempsched_lab.queues.TimerQueue`.
        log: record every step in :attr:`log` (``False`` records nothing).
        max_log_rows: keep only the newest rows; ``None`` keeps all.
        resolution: round due times up to a grid of this many seconds (at
            least 1 µs), so that relative requests can meet at one time point
            (never early).
        misfire: default misfire policy of periodic tasks (``"skip"``,
            ``"run_once"``, ``"catch_up"``).
        max_workers: size of the ``"pool"`` executor.
        name: a name for the scheduler; creating another live scheduler with the
            same name shuts the old one down with a warning (re-run notebook cells).
        queue_options: keyword arguments for the queue design (``slots``, ``tick``...).
        log_spill: a directory where the log writes its rows as Parquet segments
            as they fill (needs ``pyarrow``), so that ``max_log_rows`` bounds the
            memory without losing history: ``log.history()`` or
            ``read_log(directory)`` reads every row back (see :class:`EventLog`).
        loop: the asyncio event loop that awaits coroutine actions (``async def``);
            by default the loop running where the scheduler is created (a Jupyter
            kernel's), else each coroutine runs to its end with ``asyncio.run`` in
            the executor's thread.

    Daemon threads: the worker and the pool's threads are daemon threads, so a
    program that never calls :meth:`shutdown` can exit; runs still in flight at
    interpreter exit are then cut short. Call ``shutdown()`` (or use ``with``)
    to let them finish.

    >>> with Scheduler() as s:
    ...     tid = s.schedule(print, delay=0.01, args=("hello",))
    ...     s.wait_idle(timeout=5)
    hello
    True
    """

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        executor: str | Executor | LauncherFactory | None = None,
        queue: str | TimerQueue = "sorteddict",
        log: bool = True,
        max_log_rows: int | None = None,
        resolution: float | None = None,
        misfire: str = "skip",
        max_workers: int | None = None,
        name: str | None = None,
        queue_options: Mapping[str, Any] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        log_spill: str | os.PathLike[str] | None = None,
    ) -> None:
        clock = RealClock() if clock is None else clock
        if not all(hasattr(clock, attr) for attr in ("now", "virtual", "attach")):
            raise TypeError(f"clock={clock!r}: expected a RealClock, a VirtualClock or a Clock")
        self.clock: Clock = clock
        origin = getattr(clock, "origin", 0.0)
        #: The clock value users see as ``0.000 s``: the clock's origin (see :attr:`time_scale`).
        self.time_origin: float = float(origin) if isinstance(origin, (int, float)) else 0.0
        self.queue: TimerQueue = make_queue(queue, **dict(queue_options or {}))
        self.resolution: float | None = check.check_resolution(resolution)
        self.misfire: str = check.check_misfire(misfire)
        self.name = name
        #: identifies this scheduler's runs (``in_task.token``) even in other processes
        self.token: int = id(self)
        #: the event loop that awaits coroutine actions (``None``: ``asyncio.run`` per run)
        self.loop: asyncio.AbstractEventLoop | None = loop if loop is not None else _running_loop()
        # -- state guarded by _lock ---------------------------------------------------
        self._lock = threading.Lock()
        #: notified when runs settle (nothing running, queue emptied, closed)
        self._settled = threading.Condition(self._lock)
        self.log = EventLog(
            max_log_rows,
            enabled=bool(log),
            lock=self._lock,
            time_origin=self.time_origin,
            spill=log_spill if log else None,
        )
        self._rec: Recorder | None = Recorder(self.log, self.queue) if log else None
        self._states = bytearray()  # one TaskState byte per issued task ID
        self._running: dict[int, Task] = {}
        self._exceptions: collections.OrderedDict[int, BaseException] = collections.OrderedDict()
        self._closed = False
        self._draining = False
        self._worker_error: BaseException | None = None
        #: set in a child process of ``os.fork()``: this object is a dead copy there
        self._forked: BaseException | None = None
        self._moments = 0
        # -- collaborators -----------------------------------------------------------
        self._requests = RequestBuilder(
            self.misfire, self.queue.min_period, self.queue.design, clock.from_datetime
        )
        self._runner = Runner(self)
        self._launcher: Launcher = make_launcher(
            executor,
            virtual=bool(clock.virtual),
            runner=self._runner,
            max_workers=max_workers,
            on_idle=self._notify_settled,
        )
        self._site: tuple[str, int] | None = register(self, name)
        self._driver: Driver = clock.attach(self, f"tempsched-worker-{name or hex(id(self))}")

    # -- scheduling -----------------------------------------------------------------
    def schedule(
        self,
        action: Callable[..., Any] | threading.Event,
        *,
        at: float | datetime | None = None,
        delay: float | None = None,
        period: float | None = None,
        args: tuple[Any, ...] | list[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        label: str | None = None,
        fixed_delay: bool = False,
        misfire: str | None = None,
        cron: str | None = None,
        tz: Any = None,
        trigger: Any = None,
    ) -> int:
        """Schedule ``action`` at ``at`` or after ``delay``, once or every ``period``.

        Returns the task's ID.

        A duplicate of a pending request (same time, action, arguments and
        period) returns the existing ID (cases 5 and 7). A time in the past
        raises :class:`PastTimeError` (case 1). With only ``period``, the first
        run is one period from now. Periodic tasks are fixed-rate (next = previous
        due + period) unless ``fixed_delay`` (next = end of run + period); runs
        missed by an overrun follow ``misfire``.

        Calendar tasks: ``cron="0 9 * * mon-fri"`` with ``tz="Europe/Paris"`` (needs
        ``pip install 'tempsched-lab[cron]'``), or ``trigger=`` any object with
        ``next_after(t)`` and ``describe()`` (see :mod:`tempsched_lab.triggers`). The
        first run is at the trigger's next fire time unless ``at``/``delay`` say
        otherwise; each run re-arms at the trigger's next time after it, correct
        across DST.

        A coroutine function (``async def``) is awaited on the scheduler's event
        loop (see ``loop=``); its run ends when the coroutine does.

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> s.schedule(print, delay=5, args=("later",))
        0
        """
        if (
            type(at) is float
            and _isfinite(at)
            and delay is None
            and period is None
            and type(args) is tuple
            and kwargs is None
            and (label is None or type(label) is str)
            and fixed_delay is False
            and misfire is None
            and cron is None
            and tz is None
            and trigger is None
            and callable(action)
        ):
            # The common call (a callable at a float time): the same checks, with no call to
            # the general path's helpers (saves ~9,000 of ~36,000 instructions per call,
            # counted with benchmarks/instructions.py).
            task = Task(at, action, args, None, label)
            with self._lock:
                if self._closed or self._draining or self._worker_error is not None:
                    self._check_open()
                tid: int = self._decide(task, at, self.clock.now(), _USER, at, False)
                return tid
        tid = self._submit(
            action,
            at,
            delay,
            period,
            args,
            kwargs,
            label,
            fixed_delay,
            misfire,
            _USER,
            cron,
            tz,
            trigger,
            False,
        )
        return tid

    def schedule_decision(
        self,
        action: Callable[..., Any] | threading.Event,
        *,
        at: float | datetime | None = None,
        delay: float | None = None,
        period: float | None = None,
        args: tuple[Any, ...] | list[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        label: str | None = None,
        fixed_delay: bool = False,
        misfire: str | None = None,
        origin: Origin | str = Origin.USER,
        cron: str | None = None,
        tz: Any = None,
        trigger: Any = None,
    ) -> Decision:
        """Like :meth:`schedule`, but returns the whole :class:`~tempsched_lab.Decision`.

        ``origin`` tags the decision in the log (the compat facade passes ``"compat"``).

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> d = s.schedule_decision(print, at=3)
        >>> d.case, d.task_id, d.head_after
        (<Case.EMPTY: 2>, 0, 3.0)
        """
        try:
            code = Origin(origin).code
        except ValueError:
            raise ValueError(
                f"origin={origin!r}: expected one of {[o.value for o in Origin]}"
            ) from None
        decision: Decision = self._submit(
            action,
            at,
            delay,
            period,
            args,
            kwargs,
            label,
            fixed_delay,
            misfire,
            code,
            cron,
            tz,
            trigger,
        )
        return decision

    def schedule_many(
        self, requests: Iterable[Any], *, origin: Origin | str = Origin.USER
    ) -> list[int]:
        """Schedule many requests at once: one lock, one decision pass, rows appended together.

        Each request is ``(action, at)``, ``(action, at, args)``, or a mapping of
        :meth:`schedule` keyword arguments plus ``"action"`` (``{"action": f,
        "delay": 2.0, "period": 1.0}``). Returns the task IDs in request order
        (the existing ID for a duplicate). Decisions and log rows are exactly
        those of the same requests made one by one with :meth:`schedule` (all at
        the same clock reading); only the lock is taken once, and the work shared
        by the requests (the clock, the wall time and thread of the rows) is done once.

        A request that is invalid or in the past raises, as :meth:`schedule`
        would at that point: the requests before it stay scheduled
        (``error.scheduled_ids``), ``error.index`` says which one failed.

        Cost: about 72 % of the instructions of ``schedule()`` per request
        (``benchmarks/instructions.py``: 20,035 against 27,902 with the log on).

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> s.schedule_many([(print, 2.0, ("b",)), (print, 1.0, ("a",)), (print, 2.0, ("b",))])
        [0, 1, 0]
        """
        code = Origin(origin).code
        # A plain task at a float time goes in as the Task itself (its due set); anything
        # else as (task, at, delay). The plain shape is checked inline: a call per request
        # costs about as much as the rest of its validation.
        items: list[Any] = []
        failure: BaseException | None = None
        for request in requests:
            if type(request) is tuple and len(request) == 2:
                action, at = request
                if type(at) is float and _isfinite(at) and callable(action):
                    items.append(Task(at, action, (), None, None))
                    continue
            try:
                items.append(self._requests.from_bulk(request))
            except (TypeError, ValueError) as exc:
                failure = exc
                break
        ids: list[int] = []
        if items:
            with self._lock:
                if self._closed or self._draining or self._worker_error is not None:
                    self._check_open()
                try:
                    self._decide_many(items, self.clock.now(), code, ids)
                except Exception as exc:
                    exc.index = len(ids)  # type: ignore[attr-defined]
                    exc.scheduled_ids = ids  # type: ignore[attr-defined]
                    raise
        if failure is not None:
            bad = list(requests)[len(ids)] if isinstance(requests, (list, tuple)) else None
            self._record_invalid(
                request_field(bad, 0), request_field(bad, 2), None, None, code, failure
            )
            failure.index = len(ids)  # type: ignore[attr-defined]
            failure.scheduled_ids = ids  # type: ignore[attr-defined]
            raise failure
        return ids

    def submit_request(
        self,
        task: Task,
        *,
        at: Any = None,
        delay: Any = None,
        origin: Origin | str = Origin.USER,
        full: bool = True,
    ) -> Any:
        """Decide on a request record built by the caller (for facades such as ``compat``).

        ``task`` carries the action and its arguments *as given* (no conversion:
        the caller chose them; e.g. the reference API passes any iterable of
        arguments, and keyword arguments that only fail when the task runs).
        ``at``/``delay`` are checked like :meth:`schedule`'s. Returns the
        :class:`Decision`, or only the task ID with ``full=False``.
        """
        code = _ORIGIN_CODES.get(origin)  # Origin is a str enum: "compat" finds it too
        if code is None:
            code = Origin(origin).code  # raises ValueError for an unknown origin
        if delay is None and type(at) is float and _isfinite(at):
            # The facades' common call (a finite float time): what follows without the general
            # path's helpers (saves ~4,900 of ~36,400 instructions per compat schedule_task,
            # counted with benchmarks/bench_compat.py --instructions).
            with self._lock:
                if self._closed or self._draining or self._worker_error is not None:
                    self._check_open()
                return self._decide(task, at, self.clock.now(), code, at, full)
        try:
            if at is not None and delay is not None:
                raise ValueError(
                    f"at={short_repr(at)} and delay={short_repr(delay)}: give one of them, not both"
                )
            if at is not None:
                at = self._requests.absolute(at)
            elif delay is not None:
                delay = check.check_delay(delay)
            elif task.period is None and task.trigger is None:
                raise ValueError("at=None, delay=None, period=None: give a time (at or delay)")
        except (TypeError, ValueError) as exc:
            self._record_invalid(task.action, task.args, task.period, task.label, code, exc)
            raise
        with self._lock:
            if self._closed or self._draining or self._worker_error is not None:
                self._check_open()
            now = self.clock.now()
            return self._decide(task, due_of(task, at, delay, now), now, code, at, full)

    def _decide_many(self, items: list[Any], now: float, origin: int, ids: list[int]) -> None:
        """The decision pass of :meth:`schedule_many`; the lock is held.

        The same tree (:func:`~tempsched_lab.decision.classify`) and the same effects
        as :meth:`_decide`, request after request, with the per-call work done once:
        the clock read, the wall time and thread name of the rows, the queue's
        sizes kept in locals (the sorted dict sorts its new time points lazily, in one pass).
        Requests other than a plain task at a time go through :meth:`_decide`.
        """
        queue, states, rec = self.queue, self._states, self._rec
        resolution = self.resolution
        fire = None if not queue.rounds_times else queue.fire_time
        thread = threading.current_thread().name
        wall = time.time()
        rows: list[tuple[Any, ...]] = []
        woke_once = False
        try:
            head, ready, size = queue.head_time(), queue.head_size(), len(queue.index)
            for item in items:
                if type(item) is Task:
                    task, at, delay = item, item.due, None
                else:
                    task, at, delay = item
                if type(task) is not Task or at is None or resolution is not None:
                    if rows:  # rows so far first, so the log keeps request order
                        self.log._extend(rows)
                        rows = []
                    ids.append(
                        self._decide(task, due_of(task, at, delay, now), now, origin, at, False)
                    )
                    head, ready, size = queue.head_time(), queue.head_size(), len(queue.index)
                    continue
                due = at
                if not -_HORIZON <= due - now <= _HORIZON:
                    self.log._extend(rows)
                    rows = []
                    self._decide(task, due, now, origin, at, False)  # records, raises
                task.due = due
                case, dup = classify(due, now, head, queue.point_at(due), task)
                if case is _PAST or dup is not None:
                    self.log._extend(rows)
                    rows = []
                    ids.append(self._decide(task, due, now, origin, at, False))
                    continue
                if rec is not None:
                    qualname = getattr(task.action, "__qualname__", None)
                    task.label = qualname if type(qualname) is str else label_of(task.action)
                task_id = task.id = len(states)
                queue.insert(task)
                states.append(_PENDING)
                head_before = head
                size += 1
                if case is _EMPTY or case is _EARLIER:
                    head, ready = due, 1
                    woke = False
                    if not woke_once:
                        woke = woke_once = self._driver.wake()
                else:
                    woke = False
                    if due == head:
                        ready += 1
                ids.append(task_id)
                if rec is not None:
                    args = task.args
                    rows.append(
                        (
                            0,
                            now,
                            wall,
                            thread,
                            task_id,
                            CASE_INT[case],
                            -1,
                            due,
                            due if fire is None else fire(due),
                            task.label,
                            "()" if args == () else short_repr(args),
                            None,
                            origin,
                            head_before,
                            head,
                            ready,
                            size,
                            woke,
                            None,
                        )
                    )
        finally:
            if rows:
                self.log._extend(rows)

    def _submit(
        self,
        action: Any,
        at: Any,
        delay: Any,
        period: Any,
        args: Any,
        kwargs: Any,
        label: Any,
        fixed_delay: Any,
        misfire: Any,
        origin: int,
        cron: Any = None,
        tz: Any = None,
        trigger: Any = None,
        full: bool = True,
    ) -> Any:
        """Validate (building the request), then decide and apply under the lock."""
        try:
            if cron is not None or tz is not None or trigger is not None:
                task = self._requests.calendar(
                    action,
                    at,
                    delay,
                    period,
                    args,
                    kwargs,
                    label,
                    fixed_delay,
                    misfire,
                    cron,
                    tz,
                    trigger,
                )
            else:
                task = self._requests.plain(
                    action, at, delay, period, args, kwargs, label, fixed_delay, misfire
                )
            if at is not None:
                at = self._requests.absolute(at)
            elif delay is not None:
                delay = check.check_delay(delay)
        except (TypeError, ValueError) as exc:
            self._record_invalid(action, args, period, label, origin, exc)
            raise
        with self._lock:
            if self._closed or self._draining or self._worker_error is not None:
                self._check_open()
            now = self.clock.now()
            return self._decide(task, due_of(task, at, delay, now), now, origin, at, full)

    def _decide(
        self, task: Task, due: float, now: float, origin: int, at: float | None, full: bool = True
    ) -> Any:
        """The decision tree and its effects; the lock is held.

        Returns the :class:`Decision`, or (``full=False``, for :meth:`schedule`) only
        the task ID, which saves building the record nobody reads.
        """
        queue = self.queue
        rec = self._rec
        if self.resolution is not None:
            due = round_up(due, self.resolution)
        if not -_HORIZON <= due - now <= _HORIZON:
            name, value = ("at", at) if at is not None else ("delay", due - now)
            exc = ValueError(
                f"{name}={short_repr(value)}: more than {check.MAX_HORIZON:g} s (~31 years) "
                "away from now"
            )
            self._record_invalid_locked(
                now, task.action, task.args, task.period, task.label, origin, exc
            )
            raise exc
        task.due = due
        if task.periodic and isinstance(task, PeriodicTask):
            task.base = due
        head_before = queue.head_time()
        case, dup = classify(due, now, head_before, queue.point_at(due), task)
        if case is _PAST:
            name = _ORIGIN_NAMES[origin]
            has_worker = self._driver.blocking
            scale = TimeScale(self.time_origin)
            if rec is not None:
                rec.rejected(
                    now,
                    1,
                    due,
                    task.name,
                    short_repr(task.args),
                    task.period,
                    origin,
                    f"due ({scale.at(due)}) is {fmt_duration(now - due)} before now "
                    f"({scale.at(now)})",
                )
            raise PastTimeError(
                f"at/delay: the requested time ({scale.at(due)}) is {fmt_duration(now - due)} "
                f"in the past (now: {scale.at(now)}); case 1: nothing was scheduled",
                Decision(case, None, due, head_before, head_before, None, False, name, has_worker),
            )
        if dup is not None:
            if rec is not None:
                rec.duplicate(now, task, dup, case, origin, head_before)
            if not full:
                return dup.id
            return Decision(
                case,
                dup.id,
                due,
                head_before,
                head_before,
                dup.id,
                False,
                _ORIGIN_NAMES[origin],
                self._driver.blocking,
            )
        if rec is not None and task.label is None:  # computed once, lazily when not logged
            qualname = getattr(task.action, "__qualname__", None)  # label_of's fast path, inlined
            task.label = qualname if type(qualname) is str else label_of(task.action)
        if queue.checks_times:  # (a wheel cannot place every float): before anything changes
            queue.check_time(due)
        states = self._states
        task_id = task.id = len(states)
        queue.insert(task)
        states.append(_PENDING)
        if case is _EMPTY or case is _EARLIER:
            woke = self._driver.wake()
            head_after: float | None = due
        else:
            woke = False
            head_after = head_before
        if rec is not None:
            rec.scheduled(now, task, case, origin, head_before, head_after, woke)
        if not full:
            return task_id
        return Decision(
            case,
            task_id,
            due,
            head_before,
            head_after,
            None,
            woke,
            _ORIGIN_NAMES[origin],
            self._driver.blocking,
        )

    def _record_invalid(
        self, action: Any, args: Any, period: Any, label: Any, origin: int, exc: BaseException
    ) -> None:
        if self._rec is None:
            return
        with self._lock:
            self._record_invalid_locked(self.clock.now(), action, args, period, label, origin, exc)

    def _record_invalid_locked(
        self,
        now: float,
        action: Any,
        args: Any,
        period: Any,
        label: Any,
        origin: int,
        exc: BaseException,
    ) -> None:
        if self._rec is None:
            return
        text_label = label if isinstance(label, str) else short_repr(action)
        p = period if type(period) is float else math.nan
        self._rec.rejected(
            now, 0, math.nan, text_label, short_repr(args), p, origin, describe_exception(exc)
        )

    def _check_open(self) -> None:
        if self._worker_error is not None:
            raise SchedulerClosedError(
                f"the scheduler's worker died ({self._worker_error!r}); nothing new can run"
            ) from self._worker_error
        if self._closed or self._draining:
            raise SchedulerClosedError("the scheduler is shut down; create a new one")

    # -- cancel and status ------------------------------------------------------------
    def cancel(self, task_id: int) -> CancelResult:
        """Cancel a task by ID in O(log n); returns what happened.

        ``RUNNING``: a run is in flight and cannot be stopped, but a periodic
        task will not run again (a task may cancel itself from inside its run).

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> tid = s.schedule(print, delay=1)
        >>> s.cancel(tid), s.cancel(tid), s.cancel(99)
        (<CancelResult.CANCELLED: 'cancelled'>, <CancelResult.ALREADY_DONE: 'already_done'>, \
<CancelResult.NOT_FOUND: 'not_found'>)
        """
        if type(task_id) is not int:  # the check inline for a plain int saves a call
            task_id = task_id_of(task_id)
        with self._lock:
            queue = self.queue
            rec = self._rec
            head_before = queue.head_time() if rec is not None else None
            task = queue.remove(task_id)  # O(1) look-up by ID, O(log n) removal
            where = None
            if task is not None:
                self._states[task_id] = _CANCELLED
                result = _R_CANCELLED
                where = "head" if task.due == head_before else "queue"
                if not queue.index and not self._running:
                    self._settle_if_idle()
            else:
                task = self._running.get(task_id)
                if task is not None and not task.stop_requested:
                    task.stop_requested = True
                    result, where = _R_RUNNING, "running"
                elif 0 <= task_id < len(self._states):
                    task, result = None, _R_ALREADY_DONE
                else:
                    task, result = None, _R_NOT_FOUND
            if rec is not None:
                rec.cancelled(
                    self.clock.now(), task_id, _RESULT_TEXT[result], where, task, head_before
                )
            return result

    def status(self, task_id: int) -> TaskStatus:
        """The state of a task (pending, running, done, failed, cancelled) and its next due time.

        Raises ``KeyError`` for an ID this scheduler never issued.
        """
        task_id = task_id_of(task_id)
        scale = TimeScale(self.time_origin)
        with self._lock:
            task = self.queue.get(task_id)
            if task is not None:
                return TaskStatus(
                    task_id,
                    TaskState.PENDING,
                    task.due,
                    task.name,
                    task.period,
                    task.runs,
                    task.last_due,
                    scale,
                    _describe(task),
                    task.upcoming(3),
                )
            task = self._running.get(task_id)
            if task is not None:
                nxt = task.next_due()
                later = task.upcoming(4)[1:] if nxt is not None else ()
                return TaskStatus(
                    task_id,
                    TaskState.RUNNING,
                    nxt,
                    task.name,
                    task.period,
                    task.runs,
                    task.last_due,
                    scale,
                    _describe(task),
                    later,
                )
            if 0 <= task_id < len(self._states):
                return TaskStatus(task_id, TaskState(self._states[task_id]), time_scale=scale)
            raise KeyError(
                f"task_id={task_id!r}: no such task (issued: 0..{len(self._states) - 1})"
            )

    def exception(self, task_id: int) -> BaseException | None:
        """The exception the task's last failed run raised, or ``None``.

        Kept for the last failure of every live task and the
        :data:`KEEP_EXCEPTIONS` most recent others; the locals of their
        traceback frames are released (the log's ``detail`` keeps the text).
        """
        with self._lock:
            return self._exceptions.get(task_id_of(task_id))

    @property
    def pending(self) -> int:
        """Tasks waiting in the queue."""
        return len(self.queue)

    @property
    def running(self) -> int:
        """Runs dispatched and not finished yet."""
        return len(self._running)

    @property
    def closed(self) -> bool:
        """True after :meth:`shutdown` (or once the worker died)."""
        return self._closed or self._worker_error is not None

    @property
    def worker_error(self) -> BaseException | None:
        """Why the worker died, if it did (it should not: please report it)."""
        return self._worker_error

    @property
    def executor_kind(self) -> str:
        """Where runs happen: ``"inline"``, ``"thread"``, ``"pool"`` or ``"executor"``."""
        return self._launcher.kind

    @property
    def has_worker(self) -> bool:
        """True when a worker thread waits for due times (a real clock)."""
        return self._driver.blocking

    @property
    def worker_thread(self) -> threading.Thread | None:
        """The worker thread of a real clock (``None`` for a virtual clock)."""
        return getattr(self._driver, "thread", None)

    def read_records(
        self, fn: Callable[[Iterable[tuple[float, Iterable[Task]]], Iterable[Task]], Any]
    ) -> Any:
        """Call ``fn(points, running)`` under the lock and return what it returns (facades).

        ``points`` are the pending time points, earliest first, as ``(due, tasks)``;
        ``running`` the tasks whose run is in flight. These are the scheduler's own
        records, for facades that show the queue in their own shape (the compat facade's
        ``ts.timer``): ``fn`` reads them, copies what it keeps, changes nothing, and returns
        quickly (it holds the scheduler's lock).
        """
        with self._lock:
            return fn(self.queue.points(), tuple(self._running.values()))

    def record_rejection(
        self, action: Any, args: Any, period: Any, label: Any, origin: Origin | str,
        exc: BaseException,
    ) -> None:  # fmt: skip
        """Write the ``reject`` row of a request a facade refused before submitting it
        (its own argument checks), as :meth:`schedule` does for its own."""
        self._record_invalid(action, args, period, label, Origin(origin).code, exc)

    def snapshot(self) -> Any:
        """A consistent :class:`~tempsched_lab.queues.QueueSnapshot` of the queue."""
        with self._lock:
            return self.queue.snapshot(self.time_origin)

    @property
    def time_scale(self) -> TimeScale:
        """How this scheduler's times are shown to users (seconds since the clock's origin).

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock(start=10.0))
        >>> s.time_scale.text(12.5)
        '2.500 s'
        """
        return TimeScale(self.time_origin)

    def moment(self) -> Moment:
        """One consistent picture (log position, queue, runs in flight, clock) taken under the lock.

        Every panel of a dashboard frame draws the same moment, so a screen never
        mixes two instants: rows with ``seq < moment.seq`` are the ones it shows.

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> _ = s.schedule(print, at=1.0)
        >>> m = s.moment()
        >>> m.seq, m.now, m.queue.head_time, m.pending
        (1, 0.0, 1.0, 1)
        """
        with self._lock:
            self._moments += 1
            return Moment(
                serial=self._moments,
                seq=self.log.next_seq,
                now=self.clock.now(),
                queue=self.queue.snapshot(self.time_origin),
                running=tuple(task.view() for task in self._running.values()),
                closed=self.closed,
                time_scale=TimeScale(self.time_origin),
            )

    # -- the clock protocol (called by the clock's driver) ----------------------------
    def next_fire_time(self) -> float | None:
        """When the earliest pending group fires (or a dispatched run waits to start)."""
        with self._lock:
            nxt = self.queue.next_time()
        waiting = self._launcher.pending_since()
        if waiting is not None and (nxt is None or waiting < nxt):
            return waiting
        return nxt

    def fire_due(self, now: float) -> None:
        """Dispatch every group due by now: Events are set here, runs go to the launcher.

        ``now`` is the driver's reading; the clock is read again under the lock so
        that rows stay in time order (``now`` only ever gets later).
        """
        with self._lock:
            if self._closed:
                return
            runs, events = self._take_due(max(now, self.clock.now()))
        for task, due, dispatched in events:
            self._set_event(task, due, dispatched)
        if runs or self._launcher.pending_since() is not None:
            self._launcher.launch(runs)

    def fire_until(self, until: float, move: Callable[[float], None], max_steps: int) -> int | None:
        """The virtual-clock fast path: fire every group due up to ``until``, in this thread.

        Called by a :class:`~tempsched_lab.VirtualClock` that drives only this
        scheduler. With the inline executor (and no run left waiting from an
        interrupted batch) the groups are fired here one after the other: the
        same rows and the same order as stepping the clock, without a step, a
        launcher hand-off or a driver query per group. ``move(t)`` sets the
        clock to each group's time. Returns the groups fired, or ``None`` when
        another executor must run them (the clock then steps as usual).
        """
        launcher = self._launcher
        if launcher.kind != "inline" or launcher.pending_since() is not None:
            return None
        queue, lock, runner, clock = self.queue, self._lock, self._runner, self.clock
        fired = 0
        while fired < max_steps:
            with lock:
                if self._closed:
                    return fired
                t = queue.next_time()
                if t is None or t > until:
                    return fired
                move(t)
                now = clock.now()
                runs, events = self._take_due(now)
                if len(runs) == 1 and not events:
                    # The common group, one run: its start is recorded in this lock hold (the
                    # clock cannot move in between), which saves a lock round trip, a clock
                    # reading and two calls: ~5,800 instructions per run (the one-shot
                    # simulation of benchmarks/instructions.py, log off: 59,542 -> 53,756).
                    task, due, dispatched = runs[0]
                    task.runs += 1
                    if self._rec is not None:
                        self._rec.started(now, task, due, dispatched)
                    started: float | None = now
                else:
                    started = None
            fired += 1
            if started is not None:
                runner.run(task, due, dispatched, started)
                continue
            for task, due, dispatched in events:
                self._set_event(task, due, dispatched)
            if len(runs) == 1:
                runner.run(*runs[0])
            elif runs:
                launcher.launch(runs)  # keeps the rest of a batch if a run is interrupted
        return fired

    def periodic_runs_until(self, t: float) -> int:
        """At least how many runs the pending periodic tasks have due up to ``t``.

        A virtual clock asks before it takes on a long window (``advance(1e9)`` with a
        1 s periodic task), to refuse it at once rather than after hours. O(pending).
        """
        with self._lock:
            tasks = list(self.queue.index.values())
        runs = 0
        for task in tasks:
            period = task.period
            if period and task.due <= t:
                runs += int((t - task.due) // period) + 1
        return runs

    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        """Record that the worker's wait ended."""
        with self._lock:
            if self._rec is not None and not self._closed:
                self._rec.woke(max(now, self.clock.now()), notified, wait)

    def driver_died(self, error: BaseException) -> None:
        """The worker failed (a bug): refuse new work from now on, and wake every waiter."""
        with self._lock:
            self._worker_error = error
            self._settled.notify_all()

    def _take_due(self, now: float) -> tuple[list[Run], list[Run]]:
        """Pop every due group and record the dispatches; the lock is held."""
        groups = self.queue.pop_due(now)
        if not groups:
            return [], []
        running, states = self._running, self._states
        runs: list[Run] = []
        events: list[Run] = []
        for group in groups:
            for task in group.tasks:
                due = task.due
                task.last_due = due
                running[task.id] = task
                states[task.id] = _RUNNING
                if isinstance(task.action, threading.Event):
                    events.append((task, due, now))
                else:
                    runs.append((task, due, now))
        if self._rec is not None:
            self._rec.dispatched(now, groups)
        return runs, events

    def _set_event(self, task: Task, due: float, dispatched: float) -> None:
        """Set an Event action (outside the lock: a subclass's ``set`` may do anything)."""
        try:
            task.action.set()  # type: ignore[union-attr]
        except BaseException as exc:  # recorded as a failed run; the batch goes on
            self.run_ended(task, due, None, None, exc)
            return
        with self._lock:
            now = self.clock.now()
            task.runs += 1
            if self._rec is not None:
                self._rec.event_set(now, task, due)
            self._finished(task, now, None)

    # -- runs (called by the runner, outside the lock) ----------------------------------
    def run_started(self, task: Task, due: float, dispatched: float) -> float:
        """Record a run's start; returns the start time."""
        with self._lock:
            started = self.clock.now()
            task.runs += 1
            if self._rec is not None:
                self._rec.started(started, task, due, dispatched)
            return started

    def run_ended(
        self,
        task: Task,
        due: float,
        started: float | None,
        result: Any,
        exc: BaseException | None,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        """Record how a run ended, then re-arm a periodic task or settle its final state.

        ``worker``/``worker_start``: where and when a run handed to a cluster started.
        """
        text = None
        with self._lock:
            now = self.clock.now()
            duration = math.nan if started is None else now - started
            rec = self._rec
            if exc is None:
                if rec is not None:
                    rec.finished(now, task, due, duration, result, worker, worker_start)
            else:
                if rec is not None:
                    text = rec.failed(now, task, due, duration, exc, worker, worker_start)
                self._keep_exception(task.id, exc)
            self._finished(task, now, exc)
        if exc is not None:
            self._report_failure(task, due, exc, text)

    def _keep_exception(self, task_id: int, exc: BaseException) -> None:
        """Keep ``exc`` for :meth:`exception`, bounded; the lock is held."""
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)  # release the frames' locals
        kept = self._exceptions
        kept[task_id] = exc
        kept.move_to_end(task_id)
        while len(kept) > KEEP_EXCEPTIONS:
            oldest = next(iter(kept))
            if oldest in self.queue or oldest in self._running:
                kept.move_to_end(oldest)  # a live task's last failure is kept
                if next(iter(kept)) == task_id:
                    break
                continue
            del kept[oldest]

    def _report_failure(self, task: Task, due: float, exc: BaseException, text: str | None) -> None:
        """Tell the ``tempsched_lab`` logger (outside the lock; handlers may be slow)."""
        if not logger.isEnabledFor(logging.ERROR):
            return
        if text is None:
            text = traceback_text(exc)
        logger.error(
            "task %d (%s) due %s failed: %s\n%s",
            task.id,
            task.name,
            TimeScale(self.time_origin).text(due),
            describe_exception(exc),
            text.rstrip(),
        )

    def _finished(self, task: Task, now: float, exc: BaseException | None) -> None:
        """A run ended: re-arm a periodic task or settle its final state; the lock is held."""
        self._running.pop(task.id, None)
        if task.periodic and not task.stop_requested:
            if not (self._closed or self._draining):
                if isinstance(task, TriggeredTask):
                    self._rearm_triggered(task, now)
                else:
                    self._rearm(task, now)  # type: ignore[arg-type]
                return
            if self._rec is not None:  # the end of a periodic task, said in the log
                self._rec.dropped(now, task, "periodic task not re-armed: shutting down")
            self._states[task.id] = TaskState.DROPPED
        elif task.periodic:
            self._states[task.id] = TaskState.CANCELLED
        elif self._states[task.id] != _DROPPED:
            self._states[task.id] = _DONE if exc is None else _FAILED
        if not self._running and not self.queue.index:  # (inlined: once per run)
            self._settle_if_idle()

    def _rearm(self, task: PeriodicTask, now: float) -> None:
        """Schedule a periodic task's next run (same ID), as a decision of origin ``periodic``."""
        period = task.period
        assert period is not None
        if task.fixed_delay:
            task.base, task.grid_index = now + period, 0
            due = task.base
        else:
            # Slot k is due at base + k * period, computed by one multiplication: adding the
            # period run after run would accumulate rounding (on an epoch-sized clock each
            # 1 ms step rounds by up to 0.1 us: a 1 kHz grid ran 72 ppm fast that way).
            base, k = task.base, task.grid_index + 1
            due = base + k * period
            if due < now:
                first_future = max(k + 1, math.ceil((now - base) / period))
                while base + first_future * period < now:  # float safety
                    first_future += 1
                late = first_future - k  # slots k .. first_future - 1 are already past
                missed = 0
                if task.misfire == "skip":
                    missed, k = late, first_future
                elif task.misfire == "run_once":
                    missed, k = late - 1, first_future - 1
                if missed and self._rec is not None:
                    self._rec.missed(now, task, due, missed, task.misfire)
                due = base + k * period
            task.grid_index = k
        self._arm_again(task, due, now)

    def _arm_again(self, task: Task, due: float, now: float) -> None:
        """Store a recurring task again at ``due``, as a decision of origin ``periodic``."""
        if self.resolution is not None:
            due = round_up(due, self.resolution)
        queue = self.queue
        try:
            queue.check_time(due)
        except ValueError as exc:  # cannot be stored: the task ends, said in the log
            self._end_unarmed(task, now, f"periodic task could not be re-armed: {exc}")
            return
        head_before = queue.head_time()
        # a re-arm is never rejected (catch-up runs may be due in the past) nor merged
        case, _ = classify(due, now, head_before, queue.point_at(due), None, reject_past=False)
        task.due = due
        queue.insert(task)
        self._states[task.id] = _PENDING
        moves = case is _EMPTY or case is _EARLIER
        woke = self._driver.wake() if moves else False
        if self._rec is not None:
            self._rec.scheduled(
                now, task, case, _PERIODIC, head_before, due if moves else head_before, woke
            )

    def _rearm_triggered(self, task: TriggeredTask, now: float) -> None:
        """Re-arm a calendar task at its trigger's next time (misfire policy applied)."""
        from .triggers import plan_rearm

        try:
            plan = plan_rearm(task.trigger, task.due, now, task.misfire)
        except Exception as exc:  # a user trigger that raises ends its task, said in the log
            self._end_unarmed(task, now, f"trigger failed: {describe_exception(exc)}")
            return
        if plan.missed and plan.first_late is not None and self._rec is not None:
            self._rec.missed(now, task, plan.first_late, plan.missed, task.misfire)
        if plan.due is None:
            self._states[task.id] = TaskState.DONE  # the trigger has no fire time left
            self._settle_if_idle()
            return
        self._arm_again(task, plan.due, now)

    def _end_unarmed(self, task: Task, now: float, detail: str) -> None:
        if self._rec is not None:
            self._rec.dropped(now, task, detail)
        self._states[task.id] = TaskState.DROPPED
        self._settle_if_idle()

    def _settle_if_idle(self) -> None:
        """Wake idle waiters when nothing is left; finish a drain; the lock is held."""
        if self._running or self.queue.index:
            return
        self._settled.notify_all()
        if self._draining and not self._closed:
            self._close_locked()

    def _notify_settled(self) -> None:
        with self._lock:
            self._settled.notify_all()

    # -- waiting and shutting down --------------------------------------------------------
    def _idle(self) -> bool:
        return not len(self.queue) and not self._running and not self._launcher.busy()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or running (real clock); False on timeout.

        Periodic tasks never leave the scheduler idle: cancel them first.
        """
        if not self._driver.blocking:
            raise RuntimeError("wait_idle() needs a real clock; use clock.run_until_idle()")
        if self._driver.owns_current_thread():
            raise RuntimeError(
                "wait_idle() called on the thread that fires this scheduler's tasks would wait "
                "for itself; from a task or an event loop callback, do not wait (or await "
                "tempsched_lab.aio.wait_idle_async(scheduler))"
            )
        deadline = None if timeout is None else time.monotonic() + timeout
        self._wait_until(lambda: self._idle() or self._worker_error is not None, deadline)
        with self._lock:
            return self._idle()

    def _wait_until(self, ready: Callable[[], bool], deadline: float | None) -> bool:
        """Wait until ``ready()`` (read under the lock) or ``deadline``; the lock is not held.

        In slices of :data:`_PROBE_S`: between two, what a closed event loop holds is
        ended (:meth:`_end_closed_loops`), so a loop closed under a coroutine run never
        leaves a waiter hanging.
        """
        while True:
            left = _remaining(deadline)
            with self._lock:
                if self._settled.wait_for(ready, _PROBE_S if left is None else min(left, _PROBE_S)):
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                with self._lock:
                    return ready()
            self._end_closed_loops()

    def _end_closed_loops(self) -> None:
        """Runs awaiting on an event loop that was closed can never end; a driver on one never
        fires again. Record such runs as failed (``CancelledError``) and such a driver as
        dead, so that ``schedule()`` raises and nobody waits for them forever."""
        self._runner.abandon_closed_loops()
        abandon = getattr(self._launcher, "abandon_if_closed", None)
        if abandon is not None:
            abandon()
        lost = getattr(self._driver, "lost", None)
        error = lost() if lost is not None else None
        if error is not None and self._worker_error is None:
            self.driver_died(error)

    def shutdown(
        self, wait: bool = True, timeout: float | None = None, cancel_pending: bool = True
    ) -> list[TaskStatus]:
        """Stop the scheduler; returns the tasks it dropped. Idempotent.

        Args:
            wait: wait for the worker and for runs in flight to finish.
            timeout: the longest to wait, in seconds (``None``: no limit).
            cancel_pending: drop pending tasks now (default); ``False`` lets
                pending one-shot tasks run at their times first (periodic tasks
                are not re-armed), then stops.

        Raises ``RuntimeError`` when called with ``wait=True`` from inside one of
        this scheduler's tasks, which would wait for itself (whatever the executor).
        In a child process of ``os.fork()`` a scheduler inherited from the parent is a
        dead copy: this returns ``[]`` and touches nothing the parent owns.
        """
        if self._forked is not None:
            return []
        if wait and (
            getattr(in_task, "token", None) == self.token or self._driver.owns_current_thread()
        ):
            raise RuntimeError(
                "shutdown(wait=True) called from inside one of this scheduler's tasks (or on the "
                "thread that fires them, such as its event loop) would wait for itself (a "
                "deadlock); use shutdown(wait=False) there, or await "
                "tempsched_lab.aio.shutdown_async(scheduler) on an event loop"
            )
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            drain = (
                not self._closed
                and not cancel_pending
                and self._driver.blocking
                and not self._idle()
            )
            if drain:
                self._draining = True  # the last run to end closes the scheduler
                if not wait:
                    return []
        if drain:  # (a driver that died, a closed loop, cannot drain: what is left is dropped)
            self._wait_until(lambda: self._closed or self._worker_error is not None, deadline)
        with self._lock:
            dropped = self._close_locked()
        self._driver.stop()
        if wait:
            self._join(deadline)
        else:
            self._launcher.shutdown(wait=False, timeout=None)
        # after the runs in flight: subscribers also receive their finish rows
        self.log.close_subscriptions(timeout=_remaining(deadline) if wait else 0.0)
        if wait:
            # every row on disk and the totals recorded; or, rows that could not be
            # written named in the directory as missing, with a warning
            self.log.close_spill(timeout=_remaining(deadline))
        return dropped

    def _inherited_by_fork(self, parent: int, child: int) -> None:
        """This is a copy in a child process of ``os.fork()``: make it dead, never a trap.

        Called in the child before anything else runs there (one thread: no lock is
        taken). Fresh locks, since a thread of the parent may have held one at the fork;
        ``schedule()`` raises naming the fork (the worker thread and the runs stayed in
        the parent); the log never writes the parent's spill directory.
        """
        error = RuntimeError(
            f"this scheduler belongs to process {parent}: os.fork() copied it into process "
            f"{child}, where its worker thread and runs do not exist; create a new "
            "Scheduler in this process (or start processes with the 'spawn' or "
            "'forkserver' method)"
        )
        lock = threading.Lock()
        self._lock = lock
        self._settled = threading.Condition(lock)
        self.log._inherited_by_fork(lock, str(error))
        after_fork = getattr(self.clock, "_inherited_by_fork", None)
        if after_fork is not None:
            after_fork()
        self._forked = error
        self._worker_error = error
        self._closed = True

    def _close_locked(self) -> list[TaskStatus]:
        """Drop what is pending, mark closed and log it (once); the lock is held."""
        if self._closed:
            return []
        dropped = self._drop_all()
        self._closed = True
        self._draining = False
        if self._rec is not None:
            self._rec.stopped(self.clock.now(), f"dropped {len(dropped)} task(s)")
        self._settled.notify_all()
        self._driver.stop()
        return dropped

    def _drop_all(self) -> list[TaskStatus]:
        """Drop every pending task and stop periodic tasks in flight; the lock is held."""
        dropped: list[TaskStatus] = []
        rec = self._rec
        now = self.clock.now()
        scale = TimeScale(self.time_origin)
        pending = [task for _, point in self.queue.points() for task in point]
        for task in pending:
            self.queue.remove(task.id)
            self._states[task.id] = TaskState.DROPPED
            dropped.append(
                TaskStatus(
                    task.id,
                    TaskState.DROPPED,
                    task.due,
                    task.name,
                    task.period,
                    task.runs,
                    task.last_due,
                    scale,
                )
            )
            if rec is not None:
                rec.dropped(now, task, None)
        for task in list(self._running.values()):
            if task.periodic and not task.stop_requested:
                task.stop_requested = True
                self._states[task.id] = TaskState.DROPPED
                dropped.append(
                    TaskStatus(
                        task.id,
                        TaskState.DROPPED,
                        None,
                        task.name,
                        task.period,
                        task.runs,
                        task.last_due,
                        scale,
                    )
                )
                if rec is not None:
                    rec.dropped(
                        now, task, "periodic task in flight: its run finishes, none follows"
                    )
        return dropped

    def _join(self, deadline: float | None) -> None:
        """Wait for the worker, the launcher and every run in flight (up to ``deadline``).

        Called on the scheduler's own event loop, it cannot wait for runs in flight:
        a coroutine run needs the very loop this call blocks (``await
        tempsched_lab.aio.shutdown_async(scheduler)`` waits for everything there).
        """
        self._driver.join(_remaining(deadline))
        self._launcher.shutdown(wait=deadline is None, timeout=_remaining(deadline))
        if self.loop is not None and _running_loop() is self.loop:
            return
        self._wait_until(lambda: not self._running and not self._launcher.busy(), deadline)

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=True)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return (
            f"<Scheduler {self.name or hex(id(self))} {state}: {len(self.queue)} pending, "
            f"{len(self._running)} running, queue={self.queue.design}, "
            f"executor={self._launcher.kind}, clock={type(self.clock).__name__}>"
        )


def _describe(task: Task) -> str | None:
    trigger = getattr(task, "trigger", None)
    if trigger is None:
        return None
    try:
        return str(trigger.describe())
    except Exception:
        return short_repr(trigger)


#: The longest a blocking wait sleeps before it looks for runs a closed event loop stranded.
_PROBE_S = 0.25


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any (without importing asyncio for nothing)."""
    module = sys.modules.get("asyncio")  # no asyncio imported: no loop can be running
    if module is None:
        return None
    try:
        loop: asyncio.AbstractEventLoop = module.get_running_loop()
    except RuntimeError:
        return None
    return loop
