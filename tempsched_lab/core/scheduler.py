"""The scheduler: one lock, the decision tree, runs, periodic re-arms, cancel, shutdown.

Every decision is taken, and every log row numbered, under one lock. The
scheduler's state is declared in :meth:`Scheduler.__init__`. Its public names
are what users call; its five collaborators receive what they need explicitly,
and those that call back talk to small port objects (:mod:`tempsched_lab.core.ports`)
whose members are the scheduler's private methods:

* the clock's **driver** (:mod:`tempsched_lab.time.clock`) decides *when* to fire: a
  worker thread for a real clock, the stepping caller for a virtual one; it
  calls the scheduler's :class:`~tempsched_lab.core.ports.ClockPort` (``fire_due``,
  ``next_fire_time``...) and is woken by :meth:`Driver.wake
  <tempsched_lab.time.clock.Driver.wake>` when the head moves earlier;
* the **launcher** (:mod:`tempsched_lab.core.executors`) decides *where* runs happen;
  it talks only to the runner;
* the **runner** (:mod:`tempsched_lab.core.runs`) runs one task and reports back
  to the scheduler's :class:`~tempsched_lab.core.ports.RunPort` (``run_started`` /
  ``run_ended``);
* the **recorder** (:class:`tempsched_lab.core.recorder.Recorder`) writes one row per step;
* the compat **facade** (:class:`tempsched_lab.compat.TemporalScheduler`) submits its
  own request records through a :class:`~tempsched_lab.core.ports.FacadePort`.

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
import inspect
import logging
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any

from ..log.eventlog import CLOSE_GRACE_S, EventLog
from ..log.schema import ORIGINS
from ..time.clock import Clock, Driver, RealClock
from ..time.scale import TimeScale, fmt_duration
from . import validation as check
from .decision import Case, Decision, classify
from .executors import Launcher, LauncherFactory, make_launcher
from .moment import Moment
from .ports import ClockPort, RunPort
from .queues import TimerQueue, make_queue
from .recorder import Recorder, RecorderFactory, StepRecorder, traceback_text
from .registry import live_schedulers, register
from .requests import (
    OPTION_NAMES,
    OtherOptions,
    Request,
    RequestBuilder,
    bulk_fields,
    due_of,
    options_signature,
    round_up,
    task_id_of,
)
from .runs import Run, Runner, in_task
from .task import (
    CancelResult,
    Origin,
    PeriodicTask,
    Task,
    TaskState,
    TaskStatus,
    describe_exception,
    label_of,
    short_repr,
)
from .triggers.misfire import check_misfire

if TYPE_CHECKING:
    import asyncio
    from datetime import datetime

    from typing_extensions import Unpack

__all__ = ["PastTimeError", "Scheduler", "SchedulerClosedError", "live_schedulers", "logger"]

#: Failing tasks are reported here (ERROR, with the traceback), as APScheduler and
#: ``concurrent.futures`` users expect; configure it like any ``logging`` logger.
logger = logging.getLogger("tempsched_lab")

# The bytes the state array holds for each task ID.
_PENDING, _RUNNING, _DONE = int(TaskState.PENDING), int(TaskState.RUNNING), int(TaskState.DONE)
_FAILED, _CANCELLED = int(TaskState.FAILED), int(TaskState.CANCELLED)
_DROPPED = int(TaskState.DROPPED)
_HORIZON = check.MAX_HORIZON
_USER, _PERIODIC = Origin.USER.code, Origin.PERIODIC.code
# Enum members bound once: Python 3.11 reads ``Case.PAST`` through EnumType's __getattr__
# hook (a method wrapper made per read, ~900 instructions); a global read is one. Measured
# on schedule(), log off: 25,788 -> 23,089 instructions (-10 %), and cancel() likewise.
_PAST, _EMPTY, _EARLIER = Case.PAST, Case.EMPTY, Case.EARLIER_THAN_HEAD
_R_CANCELLED, _R_RUNNING = CancelResult.CANCELLED, CancelResult.RUNNING
_R_ALREADY_DONE, _R_NOT_FOUND = CancelResult.ALREADY_DONE, CancelResult.NOT_FOUND
_RESULT_TEXT = {result: result.value for result in CancelResult}  # (.value is a property)
#: how many failed runs' exceptions :meth:`Scheduler.exception` keeps (beyond live tasks')
KEEP_EXCEPTIONS = 100


def _origin_code(origin: Origin | str) -> int:
    """The log's code of ``origin`` (an :class:`Origin` or its name); errors name the value."""
    code = ORIGIN_CODE.get(origin)
    if code is None:
        raise ValueError(f"origin={origin!r}: expected one of {list(ORIGINS)}")
    return code


ORIGIN_CODE: dict[Origin | str, int] = {o: o.code for o in Origin}  # Origin is a str enum


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
            following :class:`~tempsched_lab.time.clock.Clock`.
        executor: where runs happen: ``"pool"`` (a bounded thread pool, the
            default under a real clock), ``"thread"`` (a new thread per run, as
            the reference), ``"inline"`` (in the worker or the stepping thread;
            the default under a virtual clock), or any
            ``concurrent.futures.Executor`` (process pools included).
        queue: the queue design, ``"sorteddict"`` (default), ``"heap"``,
            ``"wheel"``, or a :class:`~tempsched_lab.core.queues.TimerQueue`.
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
        log_spill_interval: with ``log_spill``, the longest (in seconds of real time)
            a row waits in memory before it is written: a quiet scheduler's rows reach
            the disk within about this time instead of after 16,384 rows (see
            ``EventLog(spill_interval=...)``). ``None``: only full chunks.
        log_first_seq: the ``seq`` of the log's first row (``EventLog(first_seq=...)``): a
            log that continues another, such as a service's after a restart
            (:class:`~tempsched_lab.log.files.Lineage` gives it).
        loop: the asyncio event loop that awaits coroutine actions (``async def``);
            by default the loop running where the scheduler is created (a Jupyter
            kernel's), else each coroutine runs to its end with ``asyncio.run`` in
            the executor's thread.
        recorder: record the steps some other way: a factory ``(log, queue) ->``
            :class:`~tempsched_lab.core.recorder.StepRecorder`, e.g.
            :class:`~tempsched_lab.core.recorder.MetricsRecorder` (running totals, no
            rows); :attr:`log` then stays empty.

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
        log_spill_interval: float | None = None,
        recorder: RecorderFactory | None = None,
        log_first_seq: int = 0,
    ) -> None:
        clock = RealClock() if clock is None else clock
        if not isinstance(clock, Clock):  # the declared protocol (see docs/extending.md)
            raise TypeError(f"clock={clock!r}: expected a RealClock, a VirtualClock or a Clock")
        #: The clock: where *now* comes from (``s.clock.now()``; a virtual clock is stepped here).
        self.clock: Clock = clock
        origin = clock.origin
        #: The clock value users see as ``0.000 s``: the clock's origin (see :attr:`time_scale`).
        self.time_origin: float = float(origin) if isinstance(origin, (int, float)) else 0.0
        #: The queue design holding the pending tasks (read it; change it through the doors).
        self.queue: TimerQueue = make_queue(queue, **dict(queue_options or {}))
        #: The grid due times are rounded up to, in seconds (``None``: no grid).
        self.resolution: float | None = check.check_resolution(resolution)
        #: The misfire policy of periodic tasks that name none.
        self.misfire: str = check_misfire(misfire)
        #: The name given (see ``name=``), or ``None``.
        self.name = name
        #: Identifies this scheduler's runs, even in other processes: inside one of its
        #: runs, ``tempsched_lab.core.runs.in_task.token == s.token``.
        self.token: int = id(self)
        #: the event loop that awaits coroutine actions (``None``: ``asyncio.run`` per run)
        self.loop: asyncio.AbstractEventLoop | None = loop if loop is not None else _running_loop()
        # -- state guarded by _lock ---------------------------------------------------
        self._lock = threading.Lock()
        #: notified when runs settle (nothing running, queue emptied, closed)
        self._settled = threading.Condition(self._lock)
        if recorder is not None and not callable(recorder):
            raise TypeError(f"recorder={recorder!r}: expected a factory (log, queue) -> recorder")
        log = bool(log) and recorder is None  # another recorder: the log stays empty
        #: The event log: one row per step (``s.log.to_frame()``).
        self.log = EventLog(
            max_log_rows,
            enabled=log,
            lock=self._lock,
            time_origin=self.time_origin,
            spill=log_spill if log else None,
            spill_interval=log_spill_interval if log else None,
            first_seq=log_first_seq,
        )
        self._rec: StepRecorder | None = (
            recorder(self.log, self.queue)
            if recorder is not None
            else Recorder(self.log, self.queue)
            if log
            else None
        )
        self._states = bytearray()  # one TaskState byte per issued task ID
        self._running: dict[int, Task] = {}
        self._exceptions: collections.OrderedDict[int, BaseException] = collections.OrderedDict()
        self._closed = False
        #: the clock reading at shutdown: a closed scheduler's moments are frozen there
        self._closed_at: float | None = None
        self._draining = False
        self._worker_error: BaseException | None = None
        #: set in a child process of ``os.fork()``: this object is a dead copy there
        self._forked: BaseException | None = None
        self._moments = 0
        # -- collaborators -----------------------------------------------------------
        self._requests = RequestBuilder(
            self.misfire,
            self.queue.min_period,
            self.queue.design,
            clock.from_datetime,
            self.resolution,
        )
        self._runner = Runner(RunPort(self))
        self._launcher: Launcher = make_launcher(
            executor,
            virtual=bool(clock.virtual),
            runner=self._runner,
            max_workers=max_workers,
            on_idle=self._notify_settled,
        )
        #: the start of a lone run is recorded with its dispatch (see :meth:`_fire_next`)
        self._starts_inline = bool(clock.virtual) and bool(self._launcher.runs_in_caller)
        self._site: tuple[str, int] | None = register(self, name)
        self._driver: Driver = clock.attach(
            ClockPort(self), f"tempsched-worker-{name or hex(id(self))}"
        )
        #: the driver's ``lost()``, if it can die without telling (an event loop closed)
        driver = self._driver
        self._lost: Callable[[], BaseException | None] | None = (
            driver.lost if driver.can_be_lost else None
        )

    # -- the way in: thin doors onto one path ---------------------------------------------
    def schedule(
        self,
        action: Callable[..., Any] | threading.Event,
        *,
        at: float | datetime | None = None,
        args: tuple[Any, ...] | list[Any] = (),
        **options: Unpack[OtherOptions],
    ) -> int:
        """Schedule ``action`` at ``at`` or after ``delay``, once or every ``period``.

        Returns the task's ID. The options (``at``, ``delay``, ``period``, ``args``,
        ``kwargs``, ``label``, ``fixed_delay``, ``misfire``, ``cron``, ``tz``,
        ``trigger``) are declared once, in :class:`~tempsched_lab.core.requests.RequestOptions`.

        A duplicate of a pending request (same time, action, arguments and
        period) returns the existing ID (cases 5 and 7). A time in the past
        raises :class:`PastTimeError` (case 1). With only ``period``, the first
        run is one period from now. Periodic tasks are fixed-rate (next = previous
        due + period) unless ``fixed_delay`` (next = end of run + period); runs
        missed by an overrun follow ``misfire``.

        Calendar tasks: ``cron="0 9 * * mon-fri"`` with ``tz="Europe/Paris"`` (needs
        ``pip install 'tempsched-lab[cron]'``), or ``trigger=`` any object with
        ``next_after(t)`` and ``describe()`` (see :mod:`tempsched_lab.core.triggers`). The
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
        try:
            request = self._requests.build(action, at, args, options)
        except (TypeError, ValueError) as exc:
            self._record_bad_options(action, args, options, _USER, exc)
            raise
        task_id: int = self._submit((request,), _USER, False)
        return task_id

    def schedule_decision(
        self,
        action: Callable[..., Any] | threading.Event,
        *,
        at: float | datetime | None = None,
        args: tuple[Any, ...] | list[Any] = (),
        origin: Origin | str = Origin.USER,
        **options: Unpack[OtherOptions],
    ) -> Decision:
        """Like :meth:`schedule`, but returns the whole :class:`~tempsched_lab.Decision`.

        ``origin`` tags the decision in the log (the compat facade passes ``"compat"``).

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> d = s.schedule_decision(print, at=3)
        >>> d.case, d.task_id, d.head_after
        (<Case.EMPTY: 2>, 0, 3.0)
        """
        code = _origin_code(origin)
        try:
            request = self._requests.build(action, at, args, options, "schedule_decision")
        except (TypeError, ValueError) as exc:
            self._record_bad_options(action, args, options, code, exc)
            raise
        decision: Decision = self._submit((request,), code, True)
        return decision

    def schedule_many(
        self, requests: Iterable[Any], *, origin: Origin | str = Origin.USER
    ) -> list[int]:
        """Schedule many requests at once: one lock hold, then one decision per request.

        Each request is ``(action, at)``, ``(action, at, args)``, or a mapping of
        :meth:`schedule` keyword arguments plus ``"action"`` (``{"action": f,
        "delay": 2.0, "period": 1.0}``). Returns the task IDs in request order
        (the existing ID for a duplicate). Decisions and log rows are exactly
        those of the same requests made one by one with :meth:`schedule` (all at
        the same clock reading), each row written when its request is applied:
        a log tap sees the queue as it is right after that row. Only the lock is
        taken once, and the clock read once.

        A request that is invalid or in the past raises, as :meth:`schedule`
        would at that point: the requests before it stay scheduled
        (``error.scheduled_ids``), ``error.index`` says which one failed.

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> s.schedule_many([(print, 2.0, ("b",)), (print, 1.0, ("a",)), (print, 2.0, ("b",))])
        [0, 1, 0]
        """
        code = _origin_code(origin)
        built, failure = self._requests.many(requests)
        ids: list[int] = []
        try:
            if built:
                self._submit(built, code, False, ids)
        except Exception as exc:
            exc.index, exc.scheduled_ids = len(ids), ids  # type: ignore[attr-defined]
            raise
        if failure is not None:
            bad, error = failure
            action, args = bulk_fields(bad)
            self._record_invalid(action, args, None, None, code, error)
            error.index, error.scheduled_ids = len(ids), ids  # type: ignore[attr-defined]
            raise error
        return ids

    # -- for facades (tempsched_lab.core.ports.FacadePort) --------------------------------------
    def _submit_request(
        self,
        task: Task,
        *,
        at: Any = None,
        delay: Any = None,
        origin: Origin | str = Origin.USER,
        full: bool = True,
    ) -> Any:
        """:meth:`FacadePort.submit_request <tempsched_lab.core.ports.FacadeHost.submit_request>`:
        a request record built by a facade, its arguments kept as given (the fourth door)."""
        code = _origin_code(origin)
        try:
            request = self._requests.timed(task, at, delay)
        except (TypeError, ValueError) as exc:
            self._record_invalid(task.action, task.args, task.period, task.label, code, exc)
            raise
        return self._submit((request,), code, full)

    def _read_records(
        self, fn: Callable[[Iterable[tuple[float, Iterable[Task]]], Iterable[Task]], Any]
    ) -> Any:
        """:meth:`FacadePort.read_records <tempsched_lab.core.ports.FacadeHost.read_records>`:
        ``fn(points, running)`` under the lock (the compat facade's ``ts.timer``)."""
        with self._lock:
            return fn(self.queue.points(), tuple(self._running.values()))

    def _record_rejection(
        self, action: Any, args: Any, period: Any, label: Any, origin: Origin | str,
        exc: BaseException,
    ) -> None:  # fmt: skip
        """:meth:`FacadePort.record_rejection
        <tempsched_lab.core.ports.FacadeHost.record_rejection>`: a facade's own ``reject`` row."""
        self._record_invalid(action, args, period, label, Origin(origin).code, exc)

    def _record_bad_options(
        self, action: Any, args: Any, options: Mapping[str, Any], origin: int, exc: BaseException
    ) -> None:
        """The ``reject`` row (case 0) of a request whose options were invalid (a misspelt
        keyword raises ``TypeError`` like any Python call, unrecorded)."""
        if options.keys() <= OPTION_NAMES:
            get = options.get
            self._record_invalid(action, args, get("period"), get("label"), origin, exc)

    def _submit(
        self, requests: Sequence[Request], origin: int, full: bool, out: list[Any] | None = None
    ) -> Any:
        """The one path every door leads to: decide each request with the tree and apply the
        decision, in order, under one lock hold. The one function that changes the queue for
        a request: its row is written as soon as it is applied, so the log (and a tap) sees
        the state after each.

        Appends to ``out`` the task ID of each (or its :class:`Decision` with ``full``);
        on an error, ``out`` holds those applied before it. Without ``out`` (one request),
        returns the result of the last.
        """
        if self._lost is not None:  # a driver that can die under us (a closed event loop)
            self._check_driver()
        with self._lock:
            if self._closed or self._draining or self._worker_error is not None:
                self._check_open()
            queue, states, rec, resolution = self.queue, self._states, self._rec, self.resolution
            now = self.clock.now()
            # The head is read once, then kept here (only this loop changes the queue).
            head = queue.head_time()
            for request in requests:
                task, due, _ = request
                if due is None:
                    try:
                        due = due_of(request, now)
                    except (TypeError, ValueError) as exc:  # a trigger with no valid first time
                        self._record_invalid_locked(now, task.action, task.args, task.period,
                                                    task.label, origin, exc)  # fmt: skip
                        raise
                if resolution is not None:
                    due = round_up(due, resolution)
                if not -_HORIZON <= due - now <= _HORIZON:
                    raise self._beyond_horizon(request, due, now, origin)
                task.due = due
                if task.periodic and isinstance(task, PeriodicTask):
                    task.base = due
                case, dup = classify(due, now, head, queue.point_at(due), task)
                if case is _PAST:
                    raise self._in_the_past(task, due, now, head, origin)
                if dup is not None:
                    if rec is not None:
                        rec.scheduled(now, task, case, origin, head, head, False, dup)
                    result = (
                        self._decision(case, dup.id, due, head, head, dup.id, False, origin)
                        if full
                        else dup.id
                    )
                    if out is not None:
                        out.append(result)
                    continue
                if rec is not None and task.label is None:  # computed once, when logged
                    try:  # label_of's common case, read in place (no getattr call)
                        name = task.action.__qualname__  # type: ignore[union-attr]
                    except AttributeError:
                        name = None
                    task.label = name if type(name) is str else label_of(task.action)
                if queue.checks_times:  # (a wheel cannot place every float): before any change
                    queue.check_time(due)
                # What _store does, in place: a call fewer per request (its frame, its
                # arguments, its tuple back): schedule() -1,450 instructions (see _store).
                task_id = task.id = len(states)
                queue.insert(task)
                states.append(_PENDING)
                head_after, woke = head, False
                if case is _EMPTY or case is _EARLIER:
                    woke, head_after = self._driver.wake(), due
                if rec is not None:
                    rec.scheduled(now, task, case, origin, head, head_after, woke)
                result = (
                    self._decision(case, task_id, due, head, head_after, None, woke, origin)
                    if full
                    else task_id
                )
                if out is not None:
                    out.append(result)
                head = head_after
        return out if out is not None else result

    def _decision(
        self,
        case: Case,
        task_id: int | None,
        due: float,
        head_before: float | None,
        head_after: float | None,
        duplicate_of: int | None,
        woke: bool,
        origin: int,
    ) -> Decision:
        return Decision(case, task_id, due, head_before, head_after, duplicate_of, woke,
                        ORIGINS[origin], self._driver.blocking)  # fmt: skip

    def _in_the_past(
        self, task: Task, due: float, now: float, head: float | None, origin: int
    ) -> PastTimeError:
        """Case 1: the ``reject`` row, and the error to raise; the lock is held."""
        scale = TimeScale(self.time_origin)
        late = fmt_duration(now - due)
        if self._rec is not None:
            why = f"due ({scale.at(due)}) is {late} before now ({scale.at(now)})"
            self._rec.rejected(now, 1, due, task.name, short_repr(task.args), task.period,
                               origin, why)  # fmt: skip
        return PastTimeError(
            f"at/delay: the requested time ({scale.at(due)}) is {late} in the past (now: "
            f"{scale.at(now)}); case 1: nothing was scheduled",
            self._decision(Case.PAST, None, due, head, head, None, False, origin),
        )

    def _beyond_horizon(self, request: Request, due: float, now: float, origin: int) -> ValueError:
        """A due time more than ~31 years away: the ``reject`` row, and the error to raise."""
        task, at, delay = request
        if at is None and delay is None:  # the recurrence gave the time: name what the user gave
            name, value = (
                ("trigger", task.trigger) if task.trigger is not None else ("period", task.period)
            )
            what = "its first fire time is "
        else:
            name, value = ("at", at) if at is not None else ("delay", delay)
            what = ""
        exc = ValueError(
            f"{name}={short_repr(value)}: {what}more than {check.MAX_HORIZON:g} s (~31 years) "
            "away from now"
        )
        self._record_invalid_locked(now, task.action, task.args, task.period, task.label,
                                    origin, exc)  # fmt: skip
        return exc

    def _record_invalid(
        self, action: Any, args: Any, period: Any, label: Any, origin: int, exc: BaseException
    ) -> None:
        """The ``reject`` row of an invalid request; once shut down, the shutdown's error
        instead, as for a valid request (no row after ``stopped``: issue 32, finding 10)."""
        if self._closed or self._draining or self._worker_error is not None:
            self._check_open()
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

    def _check_driver(self) -> None:
        """A driver that can no longer fire (its event loop was closed) is a dead one: what
        is stranded on the loop is ended, and ``schedule`` raises instead of returning IDs
        that never run."""
        if self._worker_error is None and self._lost is not None and self._lost() is not None:
            self._end_closed_loops()

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

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> st = s.status(s.schedule(print, at=2.5, period=1.0))
        >>> st.state.name, st.next_due, st.period
        ('PENDING', 2.5, 1.0)
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

        >>> from tempsched_lab import VirtualClock
        >>> clock = VirtualClock()
        >>> s = Scheduler(clock)
        >>> tid = s.schedule(int, at=1.0, args=("not a number",))
        >>> _ = clock.run_until_idle()
        >>> s.status(tid).state.name, type(s.exception(tid)).__name__
        ('FAILED', 'ValueError')
        """
        with self._lock:
            return self._exceptions.get(task_id_of(task_id))

    @property
    def pending(self) -> int:
        """Tasks waiting in the queue.

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> _ = s.schedule(print, at=1.0)
        >>> s.pending, s.running
        (1, 0)
        """
        return len(self.queue)

    @property
    def running(self) -> int:
        """Runs dispatched and not finished yet (see :attr:`pending` for an example)."""
        return len(self._running)

    @property
    def closed(self) -> bool:
        """True after :meth:`shutdown` (or once the worker died: see :attr:`worker_error`).

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> s.closed, s.shutdown(), s.closed
        (False, [], True)
        """
        return self._closed or self._worker_error is not None

    @property
    def worker_error(self) -> BaseException | None:
        """Why the worker died, if it did (it should not: please report it); ``None`` else.

        Once it is set, :attr:`closed` is true and :meth:`schedule` raises
        :class:`SchedulerClosedError` with this error as its cause; read it here
        without provoking one (an :class:`~tempsched_lab.AsyncScheduler` whose
        event loop was closed reports the closed loop here).

        >>> from tempsched_lab import VirtualClock
        >>> Scheduler(VirtualClock()).worker_error is None
        True
        """
        return self._worker_error

    @property
    def executor_kind(self) -> str:
        """Where runs happen: ``"inline"``, ``"thread"``, ``"pool"``, ``"executor"``, or the
        ``kind`` of a launcher of your own (``executor=``).

        >>> from tempsched_lab import VirtualClock
        >>> Scheduler(VirtualClock()).executor_kind  # the default on a virtual clock
        'inline'
        >>> with Scheduler(executor="thread") as s:
        ...     s.executor_kind
        'thread'
        """
        return self._launcher.kind

    @property
    def has_worker(self) -> bool:
        """True when something fires due tasks without being asked (a real clock's worker
        thread, an :class:`~tempsched_lab.AsyncioClock`'s event loop): :meth:`wait_idle`
        can then wait for them. False on a virtual clock, which fires only when stepped.

        >>> from tempsched_lab import VirtualClock
        >>> Scheduler(VirtualClock()).has_worker
        False
        >>> with Scheduler() as s:
        ...     s.has_worker
        True
        """
        return self._driver.blocking

    @property
    def worker_thread(self) -> threading.Thread | None:
        """The thread that fires due tasks (a real clock's worker, named
        ``tempsched-worker-<name>`` in thread dumps); ``None`` when there is none (a
        virtual clock, an event loop). Inline runs happen on it.

        >>> with Scheduler(name="demo") as s:
        ...     s.worker_thread.name, s.worker_thread.daemon
        ('tempsched-worker-demo', True)
        """
        return self._driver.thread

    def snapshot(self) -> Any:
        """A consistent :class:`~tempsched_lab.core.queues.QueueSnapshot` of the queue alone (the
        plots of a queue design draw one); :meth:`moment` adds the log position, the runs
        in flight and the clock.

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> _ = s.schedule(print, at=1.0); _ = s.schedule(print, at=1.0, args=(2,))
        >>> snap = s.snapshot()
        >>> snap.design, snap.head_time, sorted(snap.tasks)
        ('sorteddict', 1.0, [0, 1])
        """
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
                # a shut-down scheduler's last moment is its shutdown, whatever the clock
                # says since: every panel of a snapshot then shows that one instant
                now=self.clock.now() if self._closed_at is None else self._closed_at,
                queue=self.queue.snapshot(self.time_origin),
                running=tuple(task.view() for task in self._running.values()),
                closed=self.closed,
                time_scale=TimeScale(self.time_origin),
            )

    # -- firing (tempsched_lab.core.ports.ClockPort): drivers decide when, one dispatch path runs --
    def _next_fire_time(self) -> float | None:
        """When the earliest pending group fires (or a dispatched run waits to start)."""
        with self._lock:
            nxt = self.queue.next_time()
        waiting = self._launcher.pending_since()
        if waiting is not None and (nxt is None or waiting < nxt):
            return waiting
        return nxt

    def _fire_due(self, now: float) -> None:
        """Dispatch every group due by ``now`` (a driver's call; see :meth:`fire_next`)."""
        self._fire_next(now, None)

    def _fire_next(
        self, until: float, move: Callable[[float], float | None] | None, limit: int = 1
    ) -> int:
        """The one dispatch path: take what is due, set Events, hand runs to the launcher.

        A driver that read its clock at ``until`` calls :meth:`fire_due`: every group due by
        then is taken (the clock is read again under the lock, so that rows stay in time
        order). A virtual clock driving this scheduler alone calls ``fire_next(until, move,
        limit)``: group after group, at most ``limit``, the earliest is taken if it is due by
        ``until``, after ``move(t)`` set the clock to its time ``t`` and returned the clock's
        time (``None``: the clock must look across schedulers again, nothing is taken). No
        step and no query across schedulers per group. Returns how many groups were taken.

        The clock asks for its whole window in one call: a call, a turn of the clock's loop
        and a clock reading less per group (benchmarks/instructions.py: the one-shot
        simulation 57,522 -> 56,383 instructions per task with the log off, -2.0 %, 83,531 ->
        82,315 with it on, -1.5 %; the periodic run 75,486 -> 74,363, -1.5 %).

        A single run that the launcher runs in this thread on a virtual clock has its start
        recorded in the same lock hold as its dispatch: time cannot move in between (a lock
        hold, a clock reading and two calls less per run: the one-shot simulation of
        benchmarks/instructions.py with the log off, 59,542 -> 53,756 instructions, -10 %),
        and by the same recorder call, which reads the wall clock and the thread once for
        both rows (the simulation with the log on, 80,750 -> 79,087 instructions a task, -2.1 %).
        """
        launcher, lock, queue, runner = self._launcher, self._lock, self.queue, self._runner
        starts_inline = self._starts_inline
        fired = 0
        while fired < limit:
            with lock:
                if self._closed:
                    return fired
                waiting = launcher.pending_since()  # runs of an interrupted batch go first
                if move is None:
                    now = max(until, self.clock.now())
                else:
                    t = queue.next_time()
                    if waiting is not None and (t is None or waiting < t):
                        t = waiting
                    if t is None or t > until:
                        return fired
                    moved = move(t)
                    if moved is None:
                        return fired
                    now = moved
                runs, events, start_here = self._take_due(now, starts_inline and waiting is None)
                if start_here:
                    task, due, dispatched = runs[0]
                    task.runs += 1  # (its start row was written with its dispatch)
            fired += 1
            if start_here:
                runner.run(task, due, dispatched, now)
                continue
            for task, due, dispatched in events:
                self._set_event(task, due, dispatched)
            if runs or launcher.pending_since() is not None:
                launcher.launch(runs)
        return fired

    def _periodic_runs_until(self, t: float) -> int:
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

    def _woke(self, now: float, notified: bool, wait: float | None) -> None:
        """Record that the worker's wait ended."""
        with self._lock:
            if self._rec is not None and not self._closed:
                self._rec.woke(max(now, self.clock.now()), notified, wait)

    def _driver_died(self, error: BaseException) -> None:
        """The worker failed (a bug): refuse new work from now on, and wake every waiter."""
        with self._lock:
            self._worker_error = error
            self._settled.notify_all()

    def _take_due(self, now: float, may_start: bool) -> tuple[list[Run], list[Run], bool]:
        """Pop every due group and record the dispatches; the lock is held. ``may_start``:
        a batch of one run starts here and now (the caller runs it in this thread on a
        virtual clock), and its start is recorded with the dispatch; the third value
        says it does."""
        groups = self.queue.pop_due(now)
        if not groups:
            return [], [], False
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
        starts = may_start and len(runs) == 1 and not events
        if self._rec is not None:
            self._rec.dispatched(now, groups, runs[0][0] if starts else None)
        return runs, events, starts

    def _set_event(self, task: Task, due: float, dispatched: float) -> None:
        """Set an Event action (outside the lock: a subclass's ``set`` may do anything)."""
        try:
            task.action.set()  # type: ignore[union-attr]
        except BaseException as exc:  # recorded as a failed run; the batch goes on
            self._run_ended(task, due, None, None, exc)
            return
        with self._lock:
            now = self.clock.now()
            task.runs += 1
            if self._rec is not None:
                self._rec.event_set(now, task, due)
            self._finished(task, now, None)

    # -- runs (tempsched_lab.core.ports.RunPort: the runner's calls, outside the lock) ---------
    def _run_started(self, task: Task, due: float, dispatched: float) -> float:
        """Record a run's start; returns the start time."""
        with self._lock:
            started = self.clock.now()
            task.runs += 1
            if self._rec is not None:
                self._rec.started(started, task, due, dispatched)
            return started

    def _run_ended(
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
        """A run ended: re-arm a recurring task or settle its final state; the lock is held."""
        self._running.pop(task.id, None)
        if task.periodic and not task.stop_requested:
            if not (self._closed or self._draining):
                self._rearm(task, now)
                return
            if self._rec is not None:  # the end of a periodic task, said in the log
                self._rec.dropped(now, task, "periodic task not re-armed: shutting down")
            self._states[task.id] = _DROPPED
        elif task.periodic:
            self._states[task.id] = _CANCELLED
        elif self._states[task.id] != _DROPPED:
            self._states[task.id] = _DONE if exc is None else _FAILED
        if not self._running and not self.queue.index:
            self._settle_if_idle()

    def _rearm(self, task: Task, now: float) -> None:
        """Re-arm a recurring task (periodic or calendar) at its next slot, keeping its ID.

        The task says which slot (:meth:`PeriodicTask.next_slot
        <tempsched_lab.core.task.PeriodicTask.next_slot>`, its misfire policy applied); the
        re-arm is a decision of origin ``periodic``, never rejected (catch-up runs may
        be due in the past) nor merged as a duplicate.
        """
        try:
            due, missed, first_late = task.next_slot(now)
        except Exception as exc:  # a user trigger that raises ends its task, said in the log
            self._end_unarmed(task, now, f"trigger failed: {describe_exception(exc)}")
            return
        rec = self._rec
        if missed and rec is not None:
            rec.missed(now, task, first_late, missed, task.misfire)  # type: ignore[attr-defined]
        if due is None:  # the trigger has no fire time left
            self._states[task.id] = _DONE
            self._settle_if_idle()
            return
        if self.resolution is not None:
            due = round_up(due, self.resolution)
        if not due - now <= _HORIZON:  # NaN, inf or ~31 years away: no design may store it
            given = "" if task.trigger is None else f" (trigger={short_repr(task.trigger)})"
            self._end_unarmed(
                task, now, f"periodic task could not be re-armed: its next time{given} is "
                f"{short_repr(due - now)} s from now, beyond {check.MAX_HORIZON:g} s (~31 years)"
            )  # fmt: skip
            return
        queue = self.queue
        try:
            queue.check_time(due)
        except ValueError as exc:  # cannot be stored: the task ends, said in the log
            self._end_unarmed(task, now, f"periodic task could not be re-armed: {exc}")
            return
        head = queue.head_time()
        case, _ = classify(due, now, head, queue.point_at(due), None, reject_past=False)
        task.due = due
        self._store(task, case, now, head, _PERIODIC)

    def _store(
        self, task: Task, case: Case, now: float, head: float | None, origin: int
    ) -> tuple[float | None, bool]:
        """Apply a decision that stores ``task`` at ``task.due``, the one place that does:
        the queue, the state byte (a new ID's, ``task.id == len(states)``, or a re-armed
        task's), the driver woken when the head moves earlier, the ``schedule`` row.
        Returns ``(head after, woke)``; the lock is held. Used by :meth:`_rearm` for a
        periodic task's next run; :meth:`_submit` does the same in place for a request (a
        call fewer on the hot path: ``schedule()`` 30,886 -> 29,436 instructions with the log
        on, 22,495 -> 21,073 with it off; callgrind, 5,000 calls; issue 40). Each has checked
        first that the queue can place the time (``queue.check_time``).
        """
        states, due = self._states, task.due
        self.queue.insert(task)
        if task.id == len(states):
            states.append(_PENDING)
        else:
            states[task.id] = _PENDING
        head_after, woke = head, False
        if case is _EMPTY or case is _EARLIER:
            woke, head_after = self._driver.wake(), due
        if self._rec is not None:
            self._rec.scheduled(now, task, case, origin, head, head_after, woke)
        return head_after, woke

    def _end_unarmed(self, task: Task, now: float, detail: str) -> None:
        if self._rec is not None:
            self._rec.dropped(now, task, detail)
        self._states[task.id] = _DROPPED
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

        >>> with Scheduler() as s:
        ...     _ = s.schedule(print, delay=0.01, args=("done",))
        ...     s.wait_idle(timeout=5)
        done
        True
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
        self._launcher.abandon_if_closed()
        error = self._driver.lost()
        if error is not None and self._worker_error is None:
            self._driver_died(error)

    def shutdown(
        self, wait: bool = True, timeout: float | None = None, cancel_pending: bool = True
    ) -> list[TaskStatus]:
        """Stop the scheduler; returns the tasks it dropped. Idempotent.

        Args:
            wait: wait for the worker and for runs in flight to finish.
            timeout: the longest to wait for the runs, in seconds (``None``: no
                limit). The rows recorded by then are still written to a spill
                directory, which may take up to ``CLOSE_GRACE_S`` (5 s) more; runs that
                outlive it are named in its manifest (``outliving_runs``).
            cancel_pending: drop pending tasks now (default); ``False`` lets
                pending one-shot tasks run at their times first (periodic tasks
                are not re-armed), then stops.

        Raises ``RuntimeError`` when called with ``wait=True`` from inside one of
        this scheduler's tasks, which would wait for itself (whatever the executor).
        In a child process of ``os.fork()`` a scheduler inherited from the parent is a
        dead copy: this returns ``[]`` and touches nothing the parent owns.

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> _ = s.schedule(print, at=5.0)
        >>> [st.state.name for st in s.shutdown()], s.shutdown()
        (['DROPPED'], [])
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
            # every row recorded so far on disk and the totals recorded, within a grace
            # for the writer beyond a timeout the runs used up; rows that could not be
            # written named in the directory as missing, and runs still going (their later
            # rows cannot be in it) named as outliving, each with a warning
            with self._lock:
                outliving = [{"task_id": t.id, "name": t.name} for t in self._running.values()]
            left = _remaining(deadline)
            grace = None if left is None else max(left, CLOSE_GRACE_S)
            self.log.close_spill(timeout=grace, outliving=outliving)
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
        self.clock.inherited_by_fork()
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
        self._closed_at = now = self.clock.now()
        if self._rec is not None:
            self._rec.stopped(now, f"dropped {len(dropped)} task(s)")
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


_ACTION = [
    inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("action", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                      annotation="Callable[..., Any] | threading.Event"),
]  # fmt: skip
# What help(), Jupyter and the API docs show: every option, from its one declaration.
Scheduler.schedule.__signature__ = options_signature(_ACTION, "int")  # type: ignore[attr-defined]
Scheduler.schedule_decision.__signature__ = options_signature(  # type: ignore[attr-defined]
    [*_ACTION, inspect.Parameter("origin", inspect.Parameter.KEYWORD_ONLY, default=Origin.USER,
                                 annotation="Origin | str")],
    "Decision",
)  # fmt: skip


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
