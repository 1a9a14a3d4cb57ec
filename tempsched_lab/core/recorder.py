"""The recorder: the scheduler's steps, in its own words, as event log rows (or as totals).

:class:`StepRecorder` declares what the scheduler calls, one method per step;
two implementations follow it. :class:`Recorder` (the default) writes the event
log: one method per row kind of :mod:`tempsched_lab.log.schema`; each builds its row
as the schema lays it out (``(kind code, t, wall, thread, *LAYOUTS[kind])``; a
test checks every method field by field against the schema) and stores it through
the log's :class:`~tempsched_lab.log.eventlog.LogWriter`, the log's way in for its writer.
The scheduler calls these while holding its lock; each reads the queue context
(head time, head size, queue size) itself, so a row always says what
the queue looked like right after its step. None of them raises for any task,
argument or exception a user can supply.

:class:`MetricsRecorder` builds no row: it keeps the lab's measures
(:data:`tempsched_lab.lab.metrics.METRICS`) as running totals, plus the start
lateness and queue delay values in compact ``array('d')`` buffers, so the same
quantiles as the log's come out exactly; the scheduler's log then stays empty.
"""

from __future__ import annotations

import math
import os
import threading
import time
import traceback
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..log.schema import KIND_CODE
from .queues.base import TimerQueue
from .queues.sorteddict import SortedDictQueue
from .task import Task, describe_exception, short_repr

if TYPE_CHECKING:
    from ..log.eventlog import EventLog
    from .queues.base import DueGroup

__all__ = [
    "CASE_INT",
    "MetricsRecorder",
    "Recorder",
    "RecorderFactory",
    "StepRecorder",
    "traceback_text",
]

_SCHEDULE, _REJECT, _WAKE, _DISPATCH = (KIND_CODE[k] for k in ("schedule", "reject", "wake",
                                                               "dispatch"))  # fmt: skip
_START, _FINISH, _ERROR, _EVENT_SET = (KIND_CODE[k] for k in ("start", "finish", "error",
                                                              "event_set"))  # fmt: skip
_MISSED, _CANCEL, _SHUTDOWN = (KIND_CODE[k] for k in ("missed", "cancel", "shutdown"))

#: A decision's case as a plain int (``CASE_INT[case]``). A row holding only atoms (numbers,
#: strings, ``None``) is untracked by the garbage collector after its first collection; one
#: holding a ``Case`` member stays tracked, and every later full collection walks every such
#: row: storing the int saves ~1,800 instructions per ``schedule`` with the log on (6 %;
#: callgrind, 5,000 calls: 29,712 -> 27,931).
CASE_INT: tuple[int, ...] = tuple(range(9))

#: The empty tuple, CPython's one instance of it: a request's ``args`` is always an exact
#: tuple (``check_args`` makes one of a list or a subclass), so ``args is _NO_ARGS`` says
#: "no arguments" in one pointer comparison, where ``args == ()`` called the tuples' rich
#: comparison (any other empty tuple would take ``short_repr``, which also gives ``"()"``).
_NO_ARGS: tuple[()] = ()


class StepRecorder(Protocol):
    """What the scheduler calls to record its steps (while holding its lock): one method per step.

    :class:`Recorder` writes each step as an event log row; :class:`MetricsRecorder` keeps
    running totals. A recorder of your own follows this Protocol and is given to
    ``Scheduler(recorder=...)`` as a factory ``(log, queue) -> recorder``. No method may
    raise for any task, argument or exception a user can supply.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock(), recorder=MetricsRecorder)
    >>> isinstance(s.schedule(print, at=1.0), int), len(s.log)
    (True, 0)
    """

    def scheduled(
        self,
        now: float,
        task: Task,
        case: int,
        origin: int,
        head_before: float | None,
        head_after: float | None,
        woke: bool,
        dup: Task | None = None,
    ) -> None:
        """A request stored as ``task``, a periodic re-arm, or (``dup``) a duplicate."""

    def rejected(
        self,
        now: float,
        case: int,
        due: float,
        label: str,
        args: str,
        period: float | None,
        origin: int,
        reason: str,
    ) -> None:
        """A request rejected: case 1 (in the past), or invalid input (``case`` 0)."""

    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        """The worker's wait ended."""

    def dispatched(
        self, now: float, groups: Sequence[DueGroup], started: Task | None = None
    ) -> None:
        """The due ``groups`` left the queue (one step per task); ``started``: their one
        task, which starts at once, in the same step (a run in the caller's thread on a
        virtual clock): the same as ``started(now, task, task.due, now)`` after this."""

    def started(self, now: float, task: Task, due: float, dispatched: float) -> None:
        """A run started (``dispatched``: when it left the queue)."""

    def finished(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        result: Any,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        """A run returned ``result``."""

    def failed(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        exc: BaseException,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> str | None:
        """A run raised ``exc``; returns the traceback text it recorded (``None``: none)."""

    def event_set(self, now: float, task: Task, due: float) -> None:
        """A ``threading.Event`` action was set."""

    def missed(self, now: float, task: Task, due: float, missed: int, policy: str) -> None:
        """A recurring task's re-arm skipped ``missed`` runs."""

    def cancelled(
        self,
        now: float,
        task_id: int,
        result: str,
        where: str | None,
        task: Task | None,
        head_before: float | None,
    ) -> None:
        """A cancel request and what it did (``result``)."""

    def dropped(self, now: float, task: Task, detail: str | None) -> None:
        """``task`` was dropped by shutdown."""

    def stopped(self, now: float, detail: str) -> None:
        """The scheduler stopped."""


#: What ``Scheduler(recorder=...)`` takes: builds the recorder from the log and the queue.
RecorderFactory = Callable[["EventLog", TimerQueue], StepRecorder]


class Recorder:
    """Writes one scheduler's event log: one method per kind of step."""

    __slots__ = (
        "_fire",
        "_heads",
        "_index",
        "_local",
        "_queue",
        "_stopped",
        "_wall",
        "_writer",
        "log",
    )

    def __init__(self, log: EventLog, queue: TimerQueue) -> None:
        self.log = log
        self._queue = queue
        self._writer = log.writer
        self._local = threading.local()  # the name of each thread that records, read once
        self._index = queue.index  # len() of it is the queue size, without a method call
        self._wall = time.time
        overridden = type(queue).fire_time is not TimerQueue.fire_time
        self._fire = queue.fire_time if overridden else None  # (a wheel rounds times up)
        #: the default design, whose head list the hot rows read in place: ``len(q.head_tasks)``
        #: for ``q.head_size()`` spares a Python call per row (``schedule()`` log on 29,361
        #: -> 29,169 instructions a call; callgrind, n = 5,000); ``None`` for the other
        #: designs (and a subclass that counts its head otherwise)
        plain = type(queue).head_size is SortedDictQueue.head_size
        self._heads = queue if isinstance(queue, SortedDictQueue) and plain else None
        #: the ``stopped`` row was written: requests (cancel, reject) write no row after it
        self._stopped = False

    def _thread(self) -> str:
        """The name of the calling thread, read once per thread. The hottest rows (schedule,
        start, finish) read ``self._local.name`` in place instead of calling this: the
        simulation with the log on 81,013 -> ~79,970 instructions per task (-1.3 %),
        ``schedule`` 28,760 -> ~28,410 (-1.2 %; callgrind, 5,000), kept because the simulation
        would otherwise cost more than 5 % more than before the single way in (issue 26)."""
        try:
            return self._local.name  # type: ignore[no-any-return]
        except AttributeError:
            name = self._local.name = threading.current_thread().name
            return name

    def _write(self, code: int, fields: tuple[Any, ...]) -> None:
        """Store a row of kind ``code`` through the log's writer (the rarer rows; the hot
        ones do this in place, which spares a call per row: see
        :class:`~tempsched_lab.log.eventlog.LogWriter`)."""
        writer = self._writer
        writer.fields[code] += fields
        writer.kinds.append(code)
        writer.room -= 1
        if writer.room <= 0:
            self.log.settle()

    # -- decisions ------------------------------------------------------------------
    def scheduled(
        self,
        now: float,
        task: Task,
        case: int,
        origin: int,
        head_before: float | None,
        head_after: float | None,
        woke: bool,
        dup: Task | None = None,
    ) -> None:
        """A request stored as ``task`` (cases 2, 3, 4, 6, 8), or a periodic re-arm; with
        ``dup``, a request that matched that pending task (cases 5 and 7): nothing stored."""
        due = task.due
        args = task.args
        try:  # the name of this thread, read in place on the hottest rows (see _thread)
            thread = self._local.name
        except AttributeError:
            thread = self._thread()
        writer = self._writer  # written in place on the hottest rows (see _write)
        heads = self._heads
        writer.fields[_SCHEDULE] += (
            now,
            self._wall(),
            thread,
            task.id if dup is None else dup.id,  # task_id
            CASE_INT[case],  # case
            -1 if dup is None else dup.id,  # dup_of
            due,  # due
            due if self._fire is None else self._fire(due),  # fire_at
            task.label if dup is None else task.name,  # label
            "()" if args is _NO_ARGS else short_repr(args),  # args
            task.period,  # period
            origin,  # origin
            head_before,  # head_before
            head_after,  # head_after
            self._queue.head_size() if heads is None else len(heads.head_tasks),  # ready_size
            len(self._index),  # queue_size
            woke,  # woke
            task.trigger_text,  # trigger
        )
        writer.kinds.append(_SCHEDULE)
        writer.room -= 1
        if writer.room <= 0:
            self.log.settle()

    def rejected(
        self,
        now: float,
        case: int,
        due: float,
        label: str,
        args: str,
        period: float | None,
        origin: int,
        reason: str,
    ) -> None:
        """A request rejected: case 1 (in the past), or invalid input (``case`` 0); no row
        once the scheduler stopped (see :meth:`stopped`)."""
        if self._stopped:
            return
        queue = self._queue
        self._write(
            _REJECT,
            (
                now,
                self._wall(),
                self._thread(),
                case,  # case
                due,  # due
                label,  # label
                args,  # args
                period,  # period
                origin,  # origin
                queue.head_time(),  # head_before
                queue.head_size(),  # ready_size
                len(self._index),  # queue_size
                reason,  # error
            ),
        )

    # -- the driver -------------------------------------------------------------------
    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        """The worker's wait ended: notified (the head moved earlier) or timed out."""
        queue = self._queue
        self._write(
            _WAKE,
            (
                now,
                self._wall(),
                self._thread(),
                "notified" if notified else "timeout",  # result
                wait,  # wait
                queue.head_time(),  # head_before
                queue.head_size(),  # ready_size
                len(self._index),  # queue_size
            ),
        )

    # -- runs -------------------------------------------------------------------------
    def dispatched(
        self, now: float, groups: Sequence[DueGroup], started: Task | None = None
    ) -> None:
        """The due ``groups`` just taken left the queue for their executors: one row per
        task, in order, each with the queue as it is after the whole batch left (so a
        replay removes the whole batch at its first row). ``started``: the batch's one task
        starts now, in the same step: its ``start`` row follows, with the same wall clock
        and thread readings (one call, one reading of each less per such run: see
        :meth:`Scheduler._fire_next`)."""
        queue, heads = self._queue, self._heads
        ready = queue.head_size() if heads is None else len(heads.head_tasks)
        head, size = queue.head_time(), len(self._index)
        thread, wall, fire, writer = self._thread(), self._wall(), self._fire, self._writer
        for group in groups:
            for task in group.tasks:
                due = task.due
                writer.fields[_DISPATCH] += (
                    now,
                    wall,
                    thread,
                    task.id,  # task_id
                    due,  # due
                    due if fire is None else fire(due),  # fire_at
                    task.label,  # label
                    head,  # head_after
                    ready,  # ready_size
                    size,  # queue_size
                )
                writer.kinds.append(_DISPATCH)
                writer.room -= 1
                if writer.room <= 0:
                    self.log.settle()
        if started is not None:
            due = started.due
            writer.fields[_START] += (now, wall, thread, started.id, due, started.label, now)
            writer.kinds.append(_START)
            writer.room -= 1
            if writer.room <= 0:
                self.log.settle()

    def started(self, now: float, task: Task, due: float, dispatched: float) -> None:
        """A run started (``dispatched``: when it left the queue)."""
        try:
            thread = self._local.name
        except AttributeError:
            thread = self._thread()
        writer = self._writer
        writer.fields[_START] += (now, self._wall(), thread, task.id, due, task.label, dispatched)
        writer.kinds.append(_START)
        writer.room -= 1
        if writer.room <= 0:
            self.log.settle()

    def finished(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        result: Any,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        """A run returned (``result``: its return value, only its type name is kept).

        ``worker``/``worker_start``: where and when a run handed to a cluster started.
        """
        try:
            thread = self._local.name
        except AttributeError:
            thread = self._thread()
        writer = self._writer
        writer.fields[_FINISH] += (
            now,
            self._wall(),
            thread,
            task.id,  # task_id
            due,  # due
            task.label,  # label
            duration,  # duration
            type(result).__name__,  # result
            worker,  # worker
            worker_start,  # worker_start
        )
        writer.kinds.append(_FINISH)
        writer.room -= 1
        if writer.room <= 0:
            self.log.settle()

    def failed(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        exc: BaseException,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> str:
        """A run raised ``exc``; returns the traceback text it recorded."""
        text = traceback_text(exc)
        self._write(
            _ERROR,
            (
                now,
                self._wall(),
                self._thread(),
                task.id,  # task_id
                due,  # due
                task.label,  # label
                duration,  # duration
                describe_exception(exc),  # error
                text,  # detail
                worker,  # worker
                worker_start,  # worker_start
            ),
        )
        return text

    def event_set(self, now: float, task: Task, due: float) -> None:
        """A ``threading.Event`` action was set."""
        self._write(_EVENT_SET, (now, self._wall(), self._thread(), task.id, due, task.label))

    def missed(self, now: float, task: Task, due: float, missed: int, policy: str) -> None:
        """A recurring task's re-arm skipped ``missed`` runs (the first due at ``due``)."""
        self._write(
            _MISSED,
            (
                now,
                self._wall(),
                self._thread(),
                task.id,  # task_id
                due,  # due
                task.label,  # label
                task.period,  # period
                missed,  # missed
                policy,  # result
            ),
        )

    # -- cancel and shutdown ----------------------------------------------------------
    def cancelled(
        self,
        now: float,
        task_id: int,
        result: str,
        where: str | None,
        task: Task | None,
        head_before: float | None,
    ) -> None:
        """A cancel request and what it did; no row once the scheduler stopped (see
        :meth:`stopped`)."""
        if self._stopped:
            return
        queue = self._queue
        self._write(
            _CANCEL,
            (
                now,
                self._wall(),
                self._thread(),
                task_id,  # task_id
                result,  # result
                where,  # where
                math.nan if task is None else task.due,  # due
                None if task is None else task.label,  # label
                head_before,  # head_before
                queue.head_time(),  # head_after
                queue.head_size(),  # ready_size
                len(self._index),  # queue_size
            ),
        )

    def dropped(self, now: float, task: Task, detail: str | None) -> None:
        """``task`` was dropped by shutdown (pending, or a periodic task not re-armed)."""
        self._shutdown_row(now, task.id, "dropped", task.due, task.label, detail)

    def stopped(self, now: float, detail: str) -> None:
        """The scheduler stopped: the last row of a request. After it the log gets only the
        ends of runs that were in flight (``finish``, ``error``, a periodic task's
        ``dropped``), which a ``shutdown(wait=True)`` writes to a spill directory before
        closing it; a ``cancel()`` or a refused request after it writes nothing, so that
        a closed spill directory holds every row (issue 32, finding 10)."""
        self._shutdown_row(now, -1, "stopped", math.nan, None, detail)
        self._stopped = True

    def _shutdown_row(
        self, now: float, task_id: int, result: str, due: float, label: str | None, detail: Any
    ) -> None:
        queue = self._queue
        self._write(
            _SHUTDOWN,
            (
                now,
                self._wall(),
                self._thread(),
                task_id,  # task_id
                result,  # result
                due,  # due
                label,  # label
                queue.head_size(),  # ready_size
                len(self._index),  # queue_size
                detail,  # detail
            ),
        )


class MetricsRecorder:
    """Keeps a run's measures as running totals instead of rows (see the module's docstring).

    Each method stands for the rows :class:`Recorder` would have written (a dispatch of
    n tasks: n rows) and updates what the measures need: rows and the last row's time,
    the queue size after each step (largest, and its time integral as exact products
    summed with ``math.fsum`` at the end), decisions per case, runs, failures, missed
    runs, cancels, and each run's lateness (``t - due``) and queue delay
    (``t - dispatched``) in ``array('d')`` buffers (8 bytes a run), so quantiles are
    those of the full log, bit for bit (``tests/test_metrics_recorder.py``).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> made = []
    >>> def keep(log, queue):
    ...     made.append(MetricsRecorder(log, queue))
    ...     return made[-1]
    >>> c = VirtualClock()
    >>> s = Scheduler(c, recorder=keep)
    >>> _ = [s.schedule(print, at=2.0, args=(i,)) for i in range(3)]
    >>> c.run_until_idle()
    0
    1
    2
    2.0
    >>> rec = made[0]
    >>> rec.events, len(rec.lateness), rec.cases[2], rec.cases[6], rec.depth()
    (12, 3, 1, 2, (3, 3.0))
    """

    __slots__ = (
        "_area",
        "_depth_q",
        "_depth_t",
        "_index",
        "cancelled_ids",
        "cases",
        "events",
        "failures",
        "last_t",
        "lateness",
        "max_depth",
        "misfires",
        "queue_delay",
        "recurring",
        "time_origin",
    )

    def __init__(self, log: EventLog, queue: TimerQueue) -> None:
        #: the clock value the log calls 0 (the frame's ``attrs["time_origin"]``)
        self.time_origin: float = log.time_origin
        self._index = queue.index  # len() of it is the queue size, as the Recorder reads it
        #: rows the full log would hold, and the time of its last one (NaN: none yet)
        self.events = 0
        self.last_t = math.nan
        #: decisions per case (index 0: invalid input, not a case)
        self.cases: list[int] = [0] * 9
        self.failures = 0
        self.misfires = 0
        #: task IDs of the cancels whose result was ``"cancelled"``, and of recurring tasks
        self.cancelled_ids: list[int] = []
        self.recurring: set[int] = set()
        #: every run's ``t - due`` and ``t - dispatched``, in start order
        self.lateness = array("d")
        self.queue_delay = array("d")
        #: the largest queue size after a step (-1: no step read it yet)
        self.max_depth = -1
        self._depth_q = 0  # the queue size after the last step that read it...
        self._depth_t = math.nan  # ...and the time it has held since
        self._area = array("d")  # queue size x time it held, one product per change of time

    def _step(self, now: float) -> None:
        """A row that does not read the queue."""
        self.events += 1
        self.last_t = now

    def _depth(self, now: float) -> None:
        """A row that says the queue size (after the step): the depth integral moves on."""
        q = len(self._index)
        if now != self._depth_t:
            if self._depth_q:
                self._area.append(self._depth_q * (now - self._depth_t))
            self._depth_t = now
        self._depth_q = q
        if q > self.max_depth:
            self.max_depth = q
        self.events += 1
        self.last_t = now

    def depth(self) -> tuple[int, float]:
        """(largest, time-weighted mean) queue size from the clock's origin to the last row,
        as ``lab.metrics`` computes them from a log (``(0, 0.0)`` when no row said it)."""
        if self.max_depth < 0:
            return 0, 0.0
        end = self.last_t
        areas = self._area.tolist()
        if end != self._depth_t and self._depth_q:
            areas.append(self._depth_q * (end - self._depth_t))
        span = end - self.time_origin
        return self.max_depth, math.fsum(areas) / span if span > 0 else float(self._depth_q)

    def cancelled_count(self) -> int:
        """Cancelled one-shot tasks: cancels of tasks never scheduled as recurring."""
        recurring = self.recurring
        return sum(1 for i in self.cancelled_ids if i not in recurring)

    # -- the steps (see Recorder for what each is) -------------------------------------
    def scheduled(
        self,
        now: float,
        task: Task,
        case: int,
        origin: int,
        head_before: float | None,
        head_after: float | None,
        woke: bool,
        dup: Task | None = None,
    ) -> None:
        self.cases[case] += 1
        period = task.period
        if (period is not None and period == period) or task.trigger_text is not None:
            self.recurring.add(task.id if dup is None else dup.id)
        # _depth in place: the hottest step, one call fewer per request (the simulation with
        # this recorder 62,218 -> 61,777 instructions per task, -0.7 %; callgrind, 5,000)
        q = len(self._index)
        if now != self._depth_t:
            if self._depth_q:
                self._area.append(self._depth_q * (now - self._depth_t))
            self._depth_t = now
        self._depth_q = q
        if q > self.max_depth:
            self.max_depth = q
        self.events += 1
        self.last_t = now

    def rejected(
        self,
        now: float,
        case: int,
        due: float,
        label: str,
        args: str,
        period: float | None,
        origin: int,
        reason: str,
    ) -> None:
        self.cases[case] += 1
        self._depth(now)

    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        self._depth(now)

    def dispatched(
        self, now: float, groups: Sequence[DueGroup], started: Task | None = None
    ) -> None:
        if started is not None:
            self.lateness.append(now - started.due)
            self.queue_delay.append(0.0)  # (now - now: dispatched and started at once)
            self.events += 1
        n = 0
        for group in groups:
            n += len(group.tasks)
        if not n:
            return
        # n rows, all at ``now`` with the queue as the batch left it: _depth once, in place
        # (the simulation with this recorder 62,558 -> 61,777 instructions per task, -1.2 %;
        # callgrind, 5,000)
        q = len(self._index)
        if now != self._depth_t:
            if self._depth_q:
                self._area.append(self._depth_q * (now - self._depth_t))
            self._depth_t = now
        self._depth_q = q
        if q > self.max_depth:
            self.max_depth = q
        self.events += n
        self.last_t = now

    def started(self, now: float, task: Task, due: float, dispatched: float) -> None:
        self.lateness.append(now - due)
        self.queue_delay.append(now - dispatched)
        self.events += 1
        self.last_t = now

    def finished(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        result: Any,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        self.events += 1
        self.last_t = now

    def failed(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        exc: BaseException,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        self.failures += 1
        self._step(now)

    def event_set(self, now: float, task: Task, due: float) -> None:
        self._step(now)

    def missed(self, now: float, task: Task, due: float, missed: int, policy: str) -> None:
        self.misfires += missed
        self._step(now)

    def cancelled(
        self,
        now: float,
        task_id: int,
        result: str,
        where: str | None,
        task: Task | None,
        head_before: float | None,
    ) -> None:
        if result == "cancelled":
            self.cancelled_ids.append(task_id)
        self._depth(now)

    def dropped(self, now: float, task: Task, detail: str | None) -> None:
        self._depth(now)

    def stopped(self, now: float, detail: str) -> None:
        self._depth(now)


def traceback_text(exc: BaseException) -> str:
    """The formatted traceback of ``exc`` from the task's own code on; never raises.

    The runner's frame (``tempsched_lab/core/runs.py``, which called the task) is left
    out; a broken ``__str__`` is named instead of raising.
    """
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename == _RUNS:
        tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(exc), exc, tb))
    except Exception:
        frames = traceback.format_tb(tb) if tb is not None else []
        return "".join(frames) + describe_exception(exc) + "\n"


_RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs.py")
