"""The scheduler: one lock, one worker, the decision tree, executors, periodic runs.

Every decision is taken, and every log row numbered, under one lock (a
``threading.Condition``). A worker thread (real clock) or the virtual clock
(:class:`~tempsched_lab.clock.VirtualClock`) pops what is due and hands each task
to its executor. Tasks never run before their due time, a raising task never
stops the others, and a worker that dies makes ``schedule`` raise instead of
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

import math
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from . import validation as check
from .clock import Clock, RealClock
from .decision import Case, Decision
from .executors import BatchThreadPool
from .lifecycle import LifecycleMixin
from .log import EventLog
from .moment import Moment
from .queues import TimerQueue, make_queue
from .runs import RunsMixin, round_up
from .schema import ORIGIN_CODE, ORIGINS
from .task import CancelResult, Origin, Task, TaskState, TaskStatus, label_of, short_repr
from .timescale import TimeScale

__all__ = ["PastTimeError", "Scheduler", "SchedulerClosedError", "live_schedulers"]

_PAST = Case.PAST
_WAKES = frozenset(c for c in Case if c.wakes_worker)
_PENDING = int(TaskState.PENDING)
_CANCELLED = int(TaskState.CANCELLED)
_R_CANCELLED, _R_RUNNING = CancelResult.CANCELLED, CancelResult.RUNNING
_R_ALREADY_DONE, _R_NOT_FOUND = CancelResult.ALREADY_DONE, CancelResult.NOT_FOUND
_RESULT_TEXT = {r: r.value for r in CancelResult}
_USER = ORIGIN_CODE["user"]
_LIVE: weakref.WeakValueDictionary[Any, Scheduler] = weakref.WeakValueDictionary()


class PastTimeError(ValueError):
    """A request for a time in the past (case 1). ``decision`` holds the rejection."""

    def __init__(self, message: str, decision: Decision) -> None:
        super().__init__(message)
        self.decision = decision


class SchedulerClosedError(RuntimeError):
    """The scheduler was shut down, or its worker died (``__cause__`` says why)."""


def live_schedulers() -> list[Scheduler]:
    """Schedulers created in this process that are not shut down yet."""
    return [s for s in list(_LIVE.values()) if not s.closed]


class Scheduler(RunsMixin, LifecycleMixin):
    """Run callables (or set ``threading.Event`` s) at chosen times, and record every step.

    Args:
        clock: a :class:`~tempsched_lab.RealClock` (default; a daemon worker
            thread waits for due times) or a :class:`~tempsched_lab.VirtualClock`
            (no worker: the clock fires due groups when stepped).
        executor: where runs happen: ``"pool"`` (a bounded thread pool, the
            default under a real clock), ``"thread"`` (a new thread per run, as
            the reference), ``"inline"`` (in the worker or the stepping thread;
            the default under a virtual clock), or any
            ``concurrent.futures.Executor`` (process pools included).
        queue: the queue design, ``"sorteddict"`` (default), ``"heap"``,
            ``"wheel"``, or a :class:`~tempsched_lab.queues.TimerQueue`.
        log: record every step in :attr:`log` (``False`` records nothing).
        max_log_rows: keep only the newest rows (a ring buffer); ``None`` keeps all.
        resolution: round due times up to a grid of this many seconds, so that
            relative requests can meet at one time point (never early).
        misfire: default misfire policy of periodic tasks (``"skip"``,
            ``"run_once"``, ``"catch_up"``).
        max_workers: size of the ``"pool"`` executor.
        name: a name for the scheduler; creating another live scheduler with the
            same name shuts the old one down with a warning (re-run notebook cells).
        queue_options: keyword arguments for the queue design (``slots``, ``tick``...).

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
        executor: str | Executor | None = None,
        queue: str | TimerQueue = "sorteddict",
        log: bool = True,
        max_log_rows: int | None = None,
        resolution: float | None = None,
        misfire: str = "skip",
        max_workers: int | None = None,
        name: str | None = None,
        queue_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.clock: Clock = RealClock() if clock is None else clock
        if not hasattr(self.clock, "now") or not hasattr(self.clock, "virtual"):
            raise TypeError(f"clock={clock!r}: expected a RealClock or a VirtualClock")
        origin = getattr(self.clock, "origin", 0.0)
        #: The clock value users see as ``0.000 s``: the clock's origin (see :attr:`time_scale`).
        self.time_origin: float = float(origin) if isinstance(origin, (int, float)) else 0.0
        self.queue: TimerQueue = make_queue(queue, **dict(queue_options or {}))
        # the wheel rounds due times up to its tick; the other designs fire at the due time
        self._fire: Callable[[float], float] | None = getattr(self.queue, "fire_time", None)
        self._lock = threading.Lock()
        # The worker waits on _cond (woken when the head moves earlier); threads waiting for
        # runs to settle (wait_idle, shutdown) wait on _settled. Two conditions on one lock:
        # a notify meant for the worker can never be swallowed by another waiter.
        self._cond = threading.Condition(self._lock)
        self._settled = threading.Condition(self._lock)
        self.log = EventLog(
            max_log_rows, enabled=bool(log), lock=self._lock, time_origin=self.time_origin
        )
        self._log: EventLog | None = self.log if log else None
        self.resolution = None if resolution is None else check.check_period(resolution)
        if resolution is not None and self.resolution is None:  # pragma: no cover
            raise ValueError(f"resolution={resolution!r}")
        self.misfire = check.check_misfire(misfire)
        self.name = name
        self._states = bytearray()
        self._running: dict[int, Task] = {}
        self._options: dict[int, tuple[bool, str]] = {}  # periodic: (fixed_delay, misfire)
        self._exceptions: dict[int, BaseException] = {}
        self._closed = False
        self._moments = 0
        self._draining = False
        self._waiting = False
        self._worker_error: BaseException | None = None
        self._executor_kind, self._executor, self._owns_executor = self._make_executor(
            executor, max_workers
        )
        self._threads: set[threading.Thread] = set()
        self._site: tuple[str, int] | None = None
        self._register(name)
        self._worker: threading.Thread | None = None
        if self.clock.virtual:
            self.clock._attach(self)  # type: ignore[attr-defined]
        else:
            self._worker = threading.Thread(
                target=self._work, name=f"tempsched-worker-{name or id(self):}", daemon=True
            )
            self._worker.start()

    # -- set-up ---------------------------------------------------------------------
    def _make_executor(
        self, executor: str | Executor | None, max_workers: int | None
    ) -> tuple[str, Executor | BatchThreadPool | None, bool]:
        if executor is None:
            executor = "inline" if self.clock.virtual else "pool"
        if isinstance(executor, Executor):
            kind = "threads" if isinstance(executor, ThreadPoolExecutor) else "remote"
            return kind, executor, False
        if executor == "pool":
            if max_workers is not None and (
                isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
            ):
                raise ValueError(f"max_workers={max_workers!r}: expected a positive integer")
            return "batch", BatchThreadPool(max_workers), True
        if executor in ("thread", "inline"):
            return executor, None, False
        raise ValueError(
            f"executor={executor!r}: expected 'pool', 'thread', 'inline' or a "
            "concurrent.futures.Executor"
        )

    def _register(self, name: str | None) -> None:
        key: Any = name
        if key is not None:
            old = _LIVE.get(key)
            if old is not None and not old.closed:
                warnings.warn(
                    f"a live scheduler named {name!r} exists ({old!r}); shutting it down so "
                    "that a re-run cell does not leave two behind",
                    stacklevel=3,
                )
                old.shutdown(wait=False)
            _LIVE[key] = self
            return
        _LIVE[id(self)] = self
        if not self.clock.virtual and _in_ipython():
            site = _creation_site()
            twins = [s for s in live_schedulers() if s is not self and s._site == site]
            if twins:
                warnings.warn(
                    f"{len(twins)} live scheduler(s) created by this same line are still "
                    "running (a re-run cell?). Call .shutdown() on the old one, or pass "
                    "name=... so that re-creating it replaces it.",
                    stacklevel=3,
                )
            self._site = site

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
    ) -> int:
        """Schedule ``action`` at ``at`` or after ``delay``, once or every ``period``.

        Returns the task's ID.

        A duplicate of a pending request (same time, action, arguments and
        period) returns the existing ID (cases 5 and 7). A time in the past
        raises :class:`PastTimeError` (case 1). With only ``period``, the first
        run is one period from now. Periodic tasks are fixed-rate (next = previous
        due + period) unless ``fixed_delay`` (next = end of run + period); runs
        missed by an overrun follow ``misfire``.

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> s.schedule(print, delay=5, args=("later",))
        0
        """
        return self._submit(
            action, at, delay, period, args, kwargs, label, fixed_delay, misfire, _USER
        )[1]

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
    ) -> Decision:
        """Like :meth:`schedule`, but returns the whole :class:`~tempsched_lab.Decision`.

        ``origin`` tags the decision in the log (the compat facade passes ``"compat"``).

        >>> from tempsched_lab import VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> d = s.schedule_decision(print, at=3)
        >>> d.case, d.task_id, d.head_after
        (<Case.EMPTY: 2>, 0, 3.0)
        """
        code = ORIGIN_CODE[Origin(origin).value]
        case, task_id, dup_id, due, head_before, head_after, woke = self._submit(
            action, at, delay, period, args, kwargs, label, fixed_delay, misfire, code
        )
        return Decision(case, task_id, due, head_before, head_after, dup_id, woke, ORIGINS[code])

    def _submit(
        self,
        action: Any,
        at: Any,
        delay: Any,
        period: Any,
        args: Any,
        kwargs: Any,
        label: Any,
        fixed_delay: bool,
        misfire: Any,
        origin: int,
    ) -> tuple[Case, int, int | None, float, float | None, float | None, bool]:
        """Validate, take the decision under the lock, apply it; returns its parts.

        The common shapes (a plain callable, a float time, a tuple of args) are
        checked inline; everything else goes through :mod:`.validation`.
        """
        try:
            if not callable(action):
                action = check.check_action(action)
            if period is not None:
                period = check.check_period(period)
            if type(args) is not tuple:
                args = check.check_args(args)
            if kwargs is not None:
                kwargs = check.check_kwargs(kwargs)
            if label is not None and type(label) is not str:
                check.check_label(label)
            if misfire is not None:
                misfire = check.check_misfire(misfire)
            if at is not None:
                if delay is not None:
                    raise ValueError(f"at={at!r} and delay={delay!r}: give one of them, not both")
                if type(at) is not float or at - at != 0.0:
                    at = (
                        self.clock.from_datetime(at)
                        if isinstance(at, datetime)
                        else check.check_number("at", at)
                    )
            elif delay is not None:
                if type(delay) is not float or delay - delay != 0.0 or delay > check.MAX_HORIZON:
                    delay = check.check_delay(delay)
            elif period is None:
                raise ValueError("at=None, delay=None, period=None: give a time (at or delay)")
        except (TypeError, ValueError, OverflowError, OSError) as exc:
            self._record_invalid(action, args, period, label, origin, exc)
            if isinstance(exc, (OverflowError, OSError)):
                raise ValueError(f"at={at!r}: cannot convert to a time: {exc}") from None
            raise
        with self._lock:
            if self._closed or self._draining or self._worker_error is not None:
                self._check_open()
            now = self.clock.now()
            if at is not None:
                due = at
                if not -check.MAX_HORIZON <= due - now <= check.MAX_HORIZON:
                    exc = ValueError(
                        f"at={at!r}: more than {check.MAX_HORIZON:g} s (~31 years) away "
                        f"from now={now!r}"
                    )
                    self._record_invalid_locked(now, action, args, period, label, origin, exc)
                    raise exc
            elif delay is not None:
                due = now + delay
            else:
                due = now + period
            if self.resolution is not None:
                due = round_up(due, self.resolution)
            return self._decide(
                now, due, action, args, kwargs, period, label, origin, fixed_delay, misfire
            )

    def _decide(
        self,
        now: float,
        due: float,
        action: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any] | None,
        period: float | None,
        label: str | None,
        origin: int,
        fixed_delay: bool,
        misfire: str | None,
    ) -> tuple[Case, int, int | None, float, float | None, float | None, bool]:
        """The decision tree and its effects; the lock is held."""
        queue = self.queue
        head_before = queue.head_time()
        case, dup = queue.classify(due, now, action, args, kwargs, period)
        log = self._log
        if case is _PAST:
            if log is not None:
                log.reject(now, 1, due, label or label_of(action), short_repr(args), period,
                           origin, head_before, queue.head_size(), len(queue),
                           f"due={due!r} is before now={now!r}")  # fmt: skip
            raise PastTimeError(
                f"at/delay: the requested time {due!r} is in the past (now={now!r}); "
                "case 1: nothing was scheduled",
                Decision(case, None, due, head_before, head_before, origin=ORIGINS[origin]),
            )
        if dup is not None:
            if log is not None:
                log.schedule(now, dup.id, case, dup.id, due, self._fire_at(due),
                             label or label_of(action), short_repr(args), period, origin,
                             head_before, head_before, queue.head_size(), len(queue),
                             False)  # fmt: skip
            return case, dup.id, dup.id, due, head_before, head_before, False
        task_id = len(self._states)
        if label is None and log is not None:  # computed lazily (Task.name) when not logged
            label = label_of(action)
        task = Task(task_id, due, action, args, kwargs, period, label)
        self._states.append(_PENDING)
        if period is not None and (fixed_delay or (misfire and misfire != self.misfire)):
            self._options[task_id] = (fixed_delay, misfire or self.misfire)
        woke = self._store(task, case, now, head_before, origin)
        # the tree says where the head is now: only cases 2 and 3 move it (to this task)
        return case, task_id, None, due, head_before, due if case in _WAKES else head_before, woke

    def _store(
        self, task: Task, case: Case, now: float, head_before: float | None, origin: int
    ) -> bool:
        """Insert a decided task, wake the worker if the head moved earlier, log it.

        The lock is held. Returns whether the worker was woken.
        """
        queue = self.queue
        queue.insert(task)
        self._states[task.id] = _PENDING
        woke = False
        if case in _WAKES and self._waiting:
            self._cond.notify()
            woke = True
        log = self._log
        if log is not None:
            due = task.due
            args = task.args
            fire_at = due if self._fire is None else self._fire(due)
            log.schedule(now, task.id, case, -1, due, fire_at, task.label,
                         "()" if args == () else short_repr(args), task.period, origin,
                         head_before, due if case in _WAKES else head_before,
                         queue.head_size(), len(queue), woke)  # fmt: skip
        return woke

    def _fire_at(self, due: float) -> float:
        return due if self._fire is None else self._fire(due)

    def _record_invalid(self, action: Any, args: Any, period: Any, label: Any, origin: int,
                        exc: BaseException) -> None:  # fmt: skip
        if self._log is None:
            return
        with self._lock:
            self._record_invalid_locked(self.clock.now(), action, args, period, label, origin, exc)

    def _record_invalid_locked(self, now: float, action: Any, args: Any, period: Any, label: Any,
                               origin: int, exc: BaseException) -> None:  # fmt: skip
        if self._log is None:
            return
        text_label = label if isinstance(label, str) else short_repr(action)
        p = period if isinstance(period, float) else math.nan
        self._log.reject(now, 0, math.nan, text_label, short_repr(args), p, origin,
                         self.queue.head_time(), self.queue.head_size(), len(self.queue),
                         f"{type(exc).__name__}: {exc}")  # fmt: skip

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
        if type(task_id) is not int and (isinstance(task_id, bool) or not isinstance(task_id, int)):
            raise TypeError(f"task_id={task_id!r}: expected an int task ID")
        with self._lock:
            queue = self.queue
            log = self._log
            head_before = queue.head_time() if log is not None else None
            task = queue.remove(task_id)  # O(1) look-up by ID, O(log n) removal
            where = None
            if task is not None:
                self._states[task_id] = _CANCELLED
                result = _R_CANCELLED
                if not len(queue) and not self._running:
                    self._settled.notify_all()  # a wait_idle() in another thread may return
                if log is not None:
                    where = "head" if task.due == head_before else "queue"
            else:
                task = self._running.get(task_id)
                if task is not None and not task.stop_requested:
                    task.stop_requested = True
                    result, where = _R_RUNNING, "running"
                elif 0 <= task_id < len(self._states):
                    task = None
                    result = _R_ALREADY_DONE
                else:
                    task = None
                    result = _R_NOT_FOUND
            if log is not None:
                log.cancel(self.clock.now(), task_id, _RESULT_TEXT[result], where,
                           math.nan if task is None else task.due,
                           None if task is None else task.label, head_before, queue.head_time(),
                           queue.head_size(), len(queue))  # fmt: skip
            return result

    def status(self, task_id: int) -> TaskStatus:
        """The state of a task (pending, running, done, failed, cancelled) and its next due time.

        Raises ``KeyError`` for an ID this scheduler never issued.
        """
        if isinstance(task_id, bool) or not isinstance(task_id, int):
            raise TypeError(f"task_id={task_id!r}: expected an int task ID")
        with self._lock:
            task = self.queue.get(task_id)
            if task is not None:
                return TaskStatus(task_id, TaskState.PENDING, task.due, task.name, task.period,
                                  task.runs, task.last_due)  # fmt: skip
            task = self._running.get(task_id)
            if task is not None:
                nxt = None
                if task.period is not None and not task.stop_requested:
                    fixed_delay = self._options.get(task_id, (False, ""))[0]
                    nxt = None if fixed_delay else task.slot_due(task.slot_index + 1)
                return TaskStatus(task_id, TaskState.RUNNING, nxt, task.name, task.period,
                                  task.runs, task.last_due)  # fmt: skip
            if 0 <= task_id < len(self._states):
                return TaskStatus(task_id, TaskState(self._states[task_id]))
            raise KeyError(
                f"task_id={task_id!r}: no such task (issued: 0..{len(self._states) - 1})"
            )

    def exception(self, task_id: int) -> BaseException | None:
        """The exception the task's last failed run raised, or ``None``."""
        return self._exceptions.get(task_id)

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

    def snapshot(self) -> Any:
        """A consistent :class:`~tempsched_lab.queues.QueueSnapshot` of the queue."""
        with self._lock:
            return self.queue.snapshot()

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
                queue=self.queue.snapshot(),
                running=tuple(task.view() for task in self._running.values()),
                closed=self.closed,
                time_scale=TimeScale(self.time_origin),
            )

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=True)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return (
            f"<Scheduler {self.name or hex(id(self))} {state}: {len(self.queue)} pending, "
            f"{len(self._running)} running, queue={self.queue.design}, "
            f"executor={self._executor_kind}, clock={type(self.clock).__name__}>"
        )


def _creation_site() -> tuple[str, int]:
    """File and line of the first caller outside this package."""
    import os

    here = os.path.dirname(__file__)
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(here):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:  # pragma: no cover
        return ("?", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


def _in_ipython() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        return ipython.get_ipython() is not None  # type: ignore[attr-defined]
    except Exception:
        return False
