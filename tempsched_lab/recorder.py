"""The recorder: the scheduler's steps, in its own words, as event log rows.

One method per row kind of :mod:`tempsched_lab.schema`; each builds its row
as the schema lays it out (``(kind code, t, wall, thread, *LAYOUTS[kind])``; a
test checks every method field by field against the schema) and stores it through
the log's :class:`~tempsched_lab.log.LogWriter`, the log's way in for its writer.
The scheduler calls these while holding its lock; each reads the queue context
(head time, head size, queue size) itself, so a row always says what
the queue looked like right after its step. None of them raises for any task,
argument or exception a user can supply.
"""

from __future__ import annotations

import math
import os
import threading
import time
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .queues.base import TimerQueue
from .schema import KIND_CODE
from .task import Task, describe_exception, short_repr

if TYPE_CHECKING:
    from .log import EventLog
    from .queues.base import DueGroup

__all__ = ["CASE_INT", "Recorder", "traceback_text"]

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


class Recorder:
    """Writes one scheduler's event log: one method per kind of step."""

    __slots__ = ("_fire", "_index", "_local", "_queue", "_stopped", "_wall", "_writer", "log")

    def __init__(self, log: EventLog, queue: TimerQueue) -> None:
        self.log = log
        self._queue = queue
        self._writer = log.writer
        self._local = threading.local()  # the name of each thread that records, read once
        self._index = queue.index  # len() of it is the queue size, without a method call
        self._wall = time.time
        overridden = type(queue).fire_time is not TimerQueue.fire_time
        self._fire = queue.fire_time if overridden else None  # (a wheel rounds times up)
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

    def _write(self, row: tuple[Any, ...]) -> None:
        """Store ``row`` through the log's writer (the rarer rows; the hot ones do this in
        place, which spares a call per row: see :class:`~tempsched_lab.log.LogWriter`)."""
        writer = self._writer
        writer.append(row)
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
        writer.append(
            (
                _SCHEDULE,
                now,
                self._wall(),
                thread,
                task.id if dup is None else dup.id,  # task_id
                CASE_INT[case],  # case
                -1 if dup is None else dup.id,  # dup_of
                due,  # due
                due if self._fire is None else self._fire(due),  # fire_at
                task.label if dup is None else task.name,  # label
                "()" if args == () else short_repr(args),  # args
                task.period,  # period
                origin,  # origin
                head_before,  # head_before
                head_after,  # head_after
                self._queue.head_size(),  # ready_size
                len(self._index),  # queue_size
                woke,  # woke
                task.trigger_text,  # trigger
            )
        )
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
            (
                _REJECT,
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
            )
        )

    # -- the driver -------------------------------------------------------------------
    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        """The worker's wait ended: notified (the head moved earlier) or timed out."""
        queue = self._queue
        self._write(
            (
                _WAKE,
                now,
                self._wall(),
                self._thread(),
                "notified" if notified else "timeout",  # result
                wait,  # wait
                queue.head_time(),  # head_before
                queue.head_size(),  # ready_size
                len(self._index),  # queue_size
            )
        )

    # -- runs -------------------------------------------------------------------------
    def dispatched(self, now: float, groups: Sequence[DueGroup]) -> None:
        """The due ``groups`` just taken left the queue for their executors: one row per
        task, in order, each with the queue as it is after the whole batch left (so a
        replay removes the whole batch at its first row)."""
        queue = self._queue
        head, ready, size = queue.head_time(), queue.head_size(), len(self._index)
        thread, wall, fire, writer = self._thread(), self._wall(), self._fire, self._writer
        for group in groups:
            for task in group.tasks:
                due = task.due
                writer.append(
                    (
                        _DISPATCH,
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
                )
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
        writer.append((_START, now, self._wall(), thread, task.id, due, task.label, dispatched))
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
        writer.append(
            (
                _FINISH,
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
        )
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
            (
                _ERROR,
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
            )
        )
        return text

    def event_set(self, now: float, task: Task, due: float) -> None:
        """A ``threading.Event`` action was set."""
        self._write((_EVENT_SET, now, self._wall(), self._thread(), task.id, due, task.label))

    def missed(self, now: float, task: Task, due: float, missed: int, policy: str) -> None:
        """A recurring task's re-arm skipped ``missed`` runs (the first due at ``due``)."""
        self._write(
            (
                _MISSED,
                now,
                self._wall(),
                self._thread(),
                task.id,  # task_id
                due,  # due
                task.label,  # label
                task.period,  # period
                missed,  # missed
                policy,  # result
            )
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
            (
                _CANCEL,
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
            )
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
            (
                _SHUTDOWN,
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
            )
        )


def traceback_text(exc: BaseException) -> str:
    """The formatted traceback of ``exc`` from the task's own code on; never raises.

    The runner's frame (``tempsched_lab/runs.py``, which called the task) is left
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
