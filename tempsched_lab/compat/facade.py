"""``TemporalScheduler``: the reference's API over :class:`~tempsched_lab.Scheduler`."""

from __future__ import annotations

import contextlib
import math
import numbers
import operator
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.executors import ThreadPerRun
from ..core.ports import FacadePort
from ..core.scheduler import PastTimeError, Scheduler
from ..core.task import CancelResult, Origin, PeriodicTask, Task, TaskState, short_repr
from ..core.validation import MAX_HORIZON, check_number
from ..time.clock import RealClock
from ..time.wall import WallScale
from .timer import TimerView

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from ..core.executors import LauncherFactory
    from ..core.queues import TimerQueue
    from ..log.eventlog import EventLog
    from ..time.clock import Clock

__all__ = ["TemporalScheduler"]


# -- request records that remember what the caller gave ------------------------------------
class _Request(Task):
    """A one-shot request from the facade: the core record plus the reference's ``comment``
    (as given) and ``wall``, the ``absolute_time`` on the ``time.time()`` scale (or ``None``)."""

    __slots__ = ("comment", "wall")
    comment: Any
    wall: Any


class _PeriodicRequest(PeriodicTask):
    """A periodic request from the facade (see :class:`_Request`)."""

    __slots__ = ("comment", "wall")
    comment: Any
    wall: Any


# -- the facade ----------------------------------------------------------------------------
class TemporalScheduler:
    """Run callables (or set ``threading.Event`` s) at chosen times: the reference API.

    Args:
        time_epsilon: accepted for compatibility: ``None`` or a non-negative
            finite number of seconds. The reference fires up to this much
            *early*; we never fire before the due time, so the value only
            documents intent and is kept as :attr:`time_epsilon` (and shown as
            ``ts.timer.dontwait_threshold``).
        clock: a :class:`~tempsched_lab.RealClock` (default; times are epoch
            seconds, as from ``time.time()``) or a
            :class:`~tempsched_lab.VirtualClock` (times are its own values; no
            worker thread, runs happen when the clock is stepped).
        queue: the queue design: ``"sorteddict"`` (default, the reference's
            design), ``"heap"``, ``"wheel"`` or a
            :class:`~tempsched_lab.core.queues.TimerQueue`.
        executor: where runs happen: ``"thread"`` (a new non-daemon thread per
            run, as the reference), ``"pool"`` (a bounded pool of
            ``max_workers`` daemon threads), ``"inline"`` or any
            ``concurrent.futures.Executor``. ``None`` (default) means
            ``"thread"`` under a real clock and ``"inline"`` (deterministic)
            under a virtual clock.
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

    At interpreter exit: runs in flight finish (their threads are not daemon
    threads, as in the reference), nothing new starts, and the process exits,
    even without :meth:`shutdown`; with ``keep_alive=True`` the process stays
    up until :meth:`shutdown`, as with the reference.

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
        self._epsilon_given = time_epsilon
        self.time_epsilon: float | None = _check_epsilon(time_epsilon)
        clock = RealClock() if clock is None else clock
        virtual = clock.virtual
        if executor is None or executor == "thread":
            # the reference's runs are non-daemon threads: the interpreter waits for them
            executor = "inline" if virtual and executor is None else ThreadPerRun(daemon=False)
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
        self._wall = None if virtual else WallScale(clock)
        #: what the facade calls beyond the user's API (the scheduler's facade port)
        self._port = port = FacadePort(self.scheduler)
        self._submit = port.submit_request  # bound once: one lookup less per call
        self._cancel = self.scheduler.cancel
        self._done = threading.Event()
        self._timer = TimerView(self)
        self._keeper: threading.Thread | None = None
        if keep_alive and not virtual:
            self._keeper = threading.Thread(
                target=self._keep_alive, name="tempsched-compat-keep-alive", daemon=False
            )
            self._keeper.start()
        elif not virtual:
            _stop_at_exit(self.scheduler)

    # -- the reference API ------------------------------------------------------------
    def schedule_task(
        self,
        callback: Callable[..., Any] | threading.Event,
        absolute_time: float | datetime | None = None,
        delta_t: float | None = None,
        period: float | None = None,
        comment: Any = None,
        task_args: Iterable[Any] | None = None,
        task_kwargs: Mapping[str, Any] | None = None,
    ) -> int:
        """Schedule ``callback`` (or set an Event) at ``absolute_time`` or after ``delta_t``.

        With ``period``, the task runs every ``period`` seconds, keeping its ID:
        first at ``absolute_time`` (or after ``delta_t``), else one period from
        now. Returns the task ID; an identical pending request (same time,
        callback, arguments as given, and period) returns the existing ID.
        ``task_args`` may be any iterable and ``task_kwargs`` is passed as given
        (as with the reference, keyword arguments that are not a mapping fail
        when the task runs: a failed run, logged). ``comment`` becomes the
        task's label in the log.

        Raises ``ValueError`` when no time is given, when both ``absolute_time``
        and ``delta_t`` are given, and when the time is in the past (case 1,
        a :class:`~tempsched_lab.PastTimeError`); ``TypeError`` for a time that
        is not a number, a ``callback`` that is neither callable nor an Event,
        or ``task_args`` that are not iterable; ``RuntimeError``
        (:class:`~tempsched_lab.SchedulerClosedError`) after :meth:`shutdown`.
        Every error names the argument as this method spells it.

        >>> from tempsched_lab import VirtualClock
        >>> ts = TemporalScheduler(clock=VirtualClock(start=10.0))
        >>> ts.schedule_task(print, absolute_time=12.0)
        0
        >>> ts.schedule_task(print, absolute_time=12.0)  # a duplicate: the same ID
        0
        >>> ts.schedule_task(print, absolute_time=5.0)
        Traceback (most recent call last):
        ...
        tempsched_lab.core.scheduler.PastTimeError: absolute_time=5.0: the requested time \
(t = -5.000 s) is 5.000 s in the past (now: t = 0.000 s); case 1: nothing was scheduled
        >>> ts.shutdown()
        """
        if absolute_time is None:
            if delta_t is None and period is None:
                raise ValueError(
                    "schedule_task: no time given; pass absolute_time=, delta_t= or period="
                )
        elif delta_t is not None:
            raise ValueError(
                f"absolute_time={short_repr(absolute_time)} and delta_t={short_repr(delta_t)}: "
                "pass one of them, not both"
            )
        try:
            if task_args is None:
                args: Any = ()
            else:
                args = task_args
                if type(args) is not tuple:
                    _check_iterable(args)
            if not callable(callback) and not isinstance(callback, threading.Event):
                raise TypeError(
                    f"callback={short_repr(callback)}: expected a callable or a threading.Event"
                )
            if comment is None:
                label = None
            elif type(comment) is str:
                label = comment or None
            else:
                label = short_repr(comment)
            task: _Request | _PeriodicRequest
            if period is None:
                task = _Request(0.0, callback, args, task_kwargs, label)
            else:
                task = self._periodic(callback, args, task_kwargs, label, period)
            task.comment = comment
            if absolute_time is not None:
                wall = task.wall = absolute_time  # kept as given (the reference shows it)
                if type(wall) is not float:  # (NaN and inf are refused by the core, renamed below)
                    wall = _wall_seconds(wall)
                    if isinstance(absolute_time, datetime):
                        task.wall = wall
                scale = self._wall
                at = wall if scale is None else scale.to_clock(wall)
                delay = None
            else:
                task.wall = at = None
                delay = delta_t
                if delay is not None and (
                    type(delay) is not float or delay - delay != 0.0 or delay > MAX_HORIZON
                ):
                    delay = _check_delta(delay)
        except (TypeError, ValueError) as exc:
            self._record_rejection(callback, args, period, comment, exc)
            raise
        try:
            task_id: int = self._submit(task, at=at, delay=delay, origin=Origin.COMPAT, full=False)
        except PastTimeError as exc:
            raise PastTimeError(_renamed(exc, absolute_time, delta_t), exc.decision) from None
        except ValueError as exc:  # "more than ~31 years away": said with our argument's name
            raise ValueError(_renamed(exc, absolute_time, delta_t)) from None
        return task_id

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
        if type(timer_id) is not int:
            timer_id = _as_id(timer_id)
            if timer_id is None:
                return False
        result = self._cancel(timer_id)
        if result is CancelResult.CANCELLED:
            return True
        if result is CancelResult.RUNNING:
            # A run in flight: a periodic task stops there (True); a one-shot run cannot be
            # stopped (False). Once the run ended, a stopped periodic task is CANCELLED.
            st = self.scheduler.status(timer_id)
            return st.period is not None or st.state == TaskState.CANCELLED
        return False

    def status(self, timer_id: Any) -> dict[str, Any]:
        """The task as a dict: ``id``, ``periodic``, ``period`` and its due times.

        ``scheduled_execution`` is the next due time and ``previous_execution``
        the due time of the last run (``None`` for one-shot tasks and before a
        periodic task's first run), on the ``time.time()`` scale (an
        ``absolute_time`` comes back as given). While a periodic task's run is
        in flight, ``scheduled_execution`` is its next slot on the fixed-rate
        grid. Raises ``KeyError`` for an unknown ID, and once a one-shot task
        fired or a task was cancelled or dropped by :meth:`shutdown`.

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
            raise KeyError(f"timer_id={short_repr(timer_id)}: no such task (task IDs are integers)")
        pending = self.scheduler.queue.get(task_id)  # (an atomic dict read) for its wall time
        try:
            st = self.scheduler.status(task_id)
        except KeyError:
            raise KeyError(f"timer_id={task_id!r}: no such task") from None
        periodic = st.period is not None
        if not (
            st.state == TaskState.PENDING
            or (st.state == TaskState.RUNNING and periodic and st.next_due is not None)
        ):
            state = TaskState(st.state).name.lower()
            raise KeyError(f"timer_id={task_id!r}: no pending task (it is {state})")
        wall = getattr(pending, "wall", None)
        if wall is not None and st.runs == 0 and pending.runs == 0:  # type: ignore[union-attr]
            scheduled = wall  # its first run: the absolute_time as given
        else:
            scheduled = self._to_wall(st.next_due)
        return {
            "id": task_id,
            "periodic": periodic,
            "period": st.period,
            "scheduled_execution": scheduled,
            "previous_execution": self._to_wall(st.last_due) if periodic else None,
        }

    def shutdown(self, wait_until_done: bool = True) -> None:
        """Drop every pending task and stop; with ``wait_until_done``, wait for runs in flight.

        Idempotent. Called from inside one of this scheduler's tasks it does not
        wait (waiting there would wait for the calling task itself): it stops
        the scheduler and returns. After it, :meth:`schedule_task` raises.
        Without waiting, runs in flight still finish, even if the main thread
        ends first.

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

    # -- the reference's queue, read-only ---------------------------------------------
    @property
    def timer(self) -> TimerView:
        """The reference's ``ts.timer`` queue introspection, as a read-only :class:`TimerView`.

        >>> from tempsched_lab import VirtualClock
        >>> ts = TemporalScheduler(clock=VirtualClock())
        >>> _ = ts.schedule_task(print, absolute_time=1.0), ts.schedule_task(print, delta_t=2.0)
        >>> ts.timer.current_time, list(ts.timer.events), ts.timer.running
        (1.0, [2.0], True)
        >>> ts.shutdown()
        """
        return self._timer

    # -- extras ------------------------------------------------------------------------
    @property
    def log(self) -> EventLog:
        """The scheduler's :class:`~tempsched_lab.EventLog` (``log.to_frame()`` for a DataFrame)."""
        return self.scheduler.log

    @property
    def clock(self) -> Clock:
        """The scheduler's clock."""
        return self.scheduler.clock

    # -- helpers -------------------------------------------------------------------------
    def _periodic(
        self, callback: Any, args: Any, kwargs: Any, label: str | None, period: Any
    ) -> _PeriodicRequest:
        period = self._port.check_period(period)  # requests.py's checks, once
        return _PeriodicRequest(
            0.0, callback, args, kwargs, label, period, False, self.scheduler.misfire
        )

    def _to_wall(self, value: float | None) -> float | None:
        """A value on the clock's scale as a ``time.time()`` value (the current offset)."""
        if value is None or self._wall is None:
            return value
        return value - self._wall.offset

    def _record_rejection(
        self, callback: Any, args: Any, period: Any, comment: Any, exc: BaseException
    ) -> None:
        """Write the ``reject`` row the core writes for its own argument errors."""
        label = comment if isinstance(comment, str) else None
        self._port.record_rejection(callback, args, period, label, Origin.COMPAT, exc)

    def _keep_alive(self) -> None:
        while not self._done.wait(0.5):
            if self.scheduler.closed:  # shut down directly through .scheduler
                return

    def __getattr__(self, name: str) -> Any:
        if name == "TimerThread":
            raise AttributeError(
                "TemporalScheduler.TimerThread: the reference's timer thread class is not "
                "mirrored; read the queue through ts.timer and use ts.scheduler for the rest"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __enter__(self) -> TemporalScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return f"<TemporalScheduler (compat) over {self.scheduler!r}>"


# -- interpreter exit ----------------------------------------------------------------------
_AT_EXIT: weakref.WeakSet[Scheduler] = weakref.WeakSet()
_AT_EXIT_HOOKED = False


def _stop_at_exit(scheduler: Scheduler) -> None:
    """Stop ``scheduler`` when the interpreter exits, before it waits for non-daemon threads.

    Runs in flight then finish (non-daemon threads) and nothing new starts: without
    this, a periodic task's next run would start a new thread while the interpreter
    waits for the last one, and the process would never exit. (The scheduler, not the
    facade, is registered: its worker keeps it alive even if the facade is dropped.)
    """
    global _AT_EXIT_HOOKED
    _AT_EXIT.add(scheduler)
    if _AT_EXIT_HOOKED:
        return
    _AT_EXIT_HOOKED = True
    # threading's own exit hook runs before non-daemon threads are joined (concurrent.futures
    # uses it); atexit runs only after them, too late. Python 3.9+ has it.
    register = getattr(threading, "_register_atexit", None)
    if register is None:  # pragma: no cover - other interpreters
        import atexit

        register = atexit.register
    register(_stop_all)


def _stop_all() -> None:
    for scheduler in list(_AT_EXIT):
        with contextlib.suppress(Exception):  # exiting: never block the exit
            scheduler.shutdown(wait=False)


# -- argument checks (errors name the facade's arguments) ---------------------------------
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


def _check_iterable(value: Any) -> None:
    """``task_args`` must be iterable (the reference unpacks it with ``*``); kept as given."""
    try:
        iter(value)
    except TypeError:
        raise TypeError(
            f"task_args={short_repr(value)}: expected an iterable of positional arguments "
            f"(a tuple, a list...), got {type(value).__name__}"
        ) from None


def _wall_seconds(value: Any) -> float:
    """An ``absolute_time`` as ``time.time()`` seconds (a ``datetime`` is converted)."""
    if isinstance(value, datetime):
        try:
            return value.timestamp()
        except (OverflowError, OSError, ValueError) as exc:
            raise ValueError(f"absolute_time={value!r}: cannot convert to a time: {exc}") from None
    return check_number("absolute_time", value)


def _check_delta(value: Any) -> float:
    result = check_number("delta_t", value)
    if result > MAX_HORIZON:
        raise ValueError(f"delta_t={short_repr(value)}: longer than {MAX_HORIZON:g} s (~31 years)")
    return result


def _renamed(exc: BaseException, absolute_time: Any, delta_t: Any) -> str:
    """The core's message about ``at``/``delay``, naming ``absolute_time``/``delta_t``."""
    text = str(exc)
    detail = text.split(": ", 1)[1] if ": " in text else text
    if absolute_time is not None:
        return f"absolute_time={short_repr(absolute_time)}: {detail}"
    if delta_t is not None:
        return f"delta_t={short_repr(delta_t)}: {detail}"
    return text


def _as_id(value: Any) -> int | None:
    """An integer task ID (``int``, numpy integers...), or ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None
