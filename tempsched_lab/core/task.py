"""Task records: what the scheduler keeps for every request it accepts.

A :class:`Task` is the request record: validation builds one, the decision tree
reads it, and when the decision stores it, it becomes the scheduler's private,
mutable record of that task (a periodic task's due time moves at each re-arm).
Periodic tasks are :class:`PeriodicTask` s, which add the fixed-rate grid and
their misfire options. What crosses the public API are frozen views:
:class:`TaskView` inside queue snapshots and :class:`TaskStatus` from
:meth:`Scheduler.status <tempsched_lab.Scheduler.status>`.
"""

from __future__ import annotations

import enum
import functools
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..time.scale import TimeScale, fmt_duration
from .reprs import describe_exception, short_repr
from .triggers.base import fire_after
from .triggers.misfire import first_slot_at_or_after, pick, plan_rearm

__all__ = [
    "CancelResult",
    "Origin",
    "PeriodicTask",
    "Task",
    "TaskState",
    "TaskStatus",
    "TaskView",
    "TriggeredTask",
    "describe_exception",
    "label_of",
    "short_repr",
]


class TaskState(enum.IntEnum):
    """Where a task is in its life. Stored as one byte per task ID."""

    UNKNOWN = 0
    PENDING = 1
    RUNNING = 2
    DONE = 3
    FAILED = 4
    CANCELLED = 5
    DROPPED = 6

    def __str__(self) -> str:
        return self.name.lower()


class CancelResult(str, enum.Enum):
    """What :meth:`Scheduler.cancel <tempsched_lab.Scheduler.cancel>` did.

    ``RUNNING`` means a run is in flight: it finishes, but a periodic task will
    not run again (so a task can cancel itself from inside its own run).
    """

    CANCELLED = "cancelled"
    NOT_FOUND = "not_found"
    ALREADY_DONE = "already_done"
    RUNNING = "running"

    def __bool__(self) -> bool:  # truthy only when something was actually stopped
        return self in (CancelResult.CANCELLED, CancelResult.RUNNING)


class Origin(str, enum.Enum):
    """Who asked for a schedule decision (stored in the log as its index)."""

    USER = "user"
    PERIODIC = "periodic"
    COMPAT = "compat"

    @property
    def code(self) -> int:
        """The small integer stored in log rows."""
        return _ORIGIN_CODES[self]


_ORIGIN_CODES = {origin: i for i, origin in enumerate(Origin)}


def label_of(action: Any) -> str:
    """A readable name for an action: its qualified name, or ``Event.set``.

    >>> label_of(print)
    'print'
    """
    name = getattr(action, "__qualname__", None)  # functions, methods, builtins: the fast path
    if type(name) is str:
        return name
    if isinstance(action, threading.Event):
        return "Event.set"
    if isinstance(action, functools.partial):
        return f"partial({label_of(action.func)})"
    name = getattr(action, "__name__", None)
    if not isinstance(name, str):
        name = type(action).__qualname__
    return name


class Task:
    """One request, and once accepted the scheduler's record of that task (internal, mutable).

    ``id`` is ``-1`` until the decision stores the task. ``due`` is when the
    next run is due on the scheduler's clock. ``queue_pos`` belongs to the
    queue design holding the task (its heap index, its wheel tick...).
    ``stop_requested`` is set by a cancel that found the task running.
    """

    __slots__ = (
        "action",
        "args",
        "due",
        "id",
        "kwargs",
        "label",
        "last_due",
        "period",
        "queue_pos",
        "runs",
        "stop_requested",
    )

    #: Periodic tasks re-arm after each run (see :class:`PeriodicTask`).
    periodic = False
    #: A calendar task's trigger and its description (see :class:`TriggeredTask`).
    trigger: Any = None
    trigger_text: str | None = None

    def __init__(
        self,
        due: float,
        action: Callable[..., Any] | threading.Event,
        args: Any = (),
        kwargs: Mapping[str, Any] | None = None,
        label: str | None = None,
    ) -> None:
        self.id = -1
        self.due = due
        self.action = action
        self.args = args
        self.kwargs = kwargs
        self.period: float | None = None
        self.label = label
        self.last_due: float | None = None
        self.runs = 0
        self.queue_pos: Any = None
        self.stop_requested = False

    @property
    def name(self) -> str:
        """The label given at schedule time, else the action's qualified name."""
        return self.label if self.label is not None else label_of(self.action)

    @property
    def repeat(self) -> Any:
        """How the task recurs (its period, its trigger, or ``None``): part of its duplicate key."""
        return self.period

    def next_due(self) -> float | None:
        """When the task runs next if nothing changes (``None`` for a one-shot run in flight)."""
        return None

    def find_duplicate(self, action: Any, args: Any, kwargs: Any, repeat: Any) -> Task | None:
        """This task if it is the same request (a time point of one stores the task bare).

        Never raises: a comparison that fails counts as "not equal".
        """
        from .decision import same_request

        if (
            same_request(self.action, action)
            and same_request(self.repeat, repeat)
            and same_request(self.args, args)
            and same_request(self.kwargs or None, kwargs or None)
        ):
            return self
        return None

    def upcoming(self, n: int) -> tuple[float, ...]:
        """The next ``n`` due times after the current one (periodic and calendar tasks)."""
        return ()

    def next_slot(self, now: float) -> tuple[float | None, int, float]:
        """Where a recurring task re-arms after a run: ``(due, missed, first missed due)``
        (a one-shot task never does: ``(None, 0, now)``)."""
        return None, 0, now

    def view(self) -> TaskView:
        """A frozen public picture of this task (a calendar task's rule and next times too)."""
        if self.trigger_text is None:
            return TaskView(self.id, self.due, self.name, short_repr(self.args), self.period)
        return TaskView(self.id, self.due, self.name, short_repr(self.args), self.period,
                        self.trigger_text, self.upcoming(2))  # fmt: skip

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id}, due={self.due!r}, label={self.name!r})"


class PeriodicTask(Task):
    """A task that re-arms after each run, keeping its ID.

    Fixed-rate by default: run ``k`` is due at ``base + k * period`` (``grid_index``
    is the current ``k``), computed by one multiplication so that neither
    lateness nor float rounding accumulates into drift. With ``fixed_delay``,
    the next run is due ``period`` after the end of the previous one.
    ``misfire`` says what a re-arm does with slots already in the past.
    """

    __slots__ = ("base", "fixed_delay", "grid_index", "misfire")

    periodic = True

    def __init__(
        self,
        due: float,
        action: Callable[..., Any] | threading.Event,
        args: Any,
        kwargs: Mapping[str, Any] | None,
        label: str | None,
        period: float,
        fixed_delay: bool,
        misfire: str,
    ) -> None:
        super().__init__(due, action, args, kwargs, label)
        self.period = period
        self.base = due
        self.grid_index = 0
        self.fixed_delay = fixed_delay
        self.misfire = misfire

    def grid_due(self, k: int) -> float:
        """Due time of slot ``k`` of the fixed-rate grid."""
        return self.base + k * self.period  # type: ignore[operator]

    def next_due(self) -> float | None:
        """The next slot of the fixed-rate grid.

        ``None`` with ``fixed_delay`` (it depends on the run's end) or once stopped.
        """
        if self.fixed_delay or self.stop_requested:
            return None
        return self.grid_due(self.grid_index + 1)

    def upcoming(self, n: int) -> tuple[float, ...]:
        if self.fixed_delay:
            return ()
        return tuple(self.grid_due(self.grid_index + k) for k in range(1, n + 1))

    def next_slot(self, now: float) -> tuple[float | None, int, float]:
        """Move to the slot to arm after a run that ended at ``now``: ``(due, missed, first
        missed due)``, the misfire policy
        (:func:`tempsched_lab.core.triggers.misfire.pick`) applied.

        Slot ``k`` of the fixed-rate grid is due at ``base + k * period``, one
        multiplication: adding the period run after run would accumulate rounding (on
        an epoch-sized clock each 1 ms step rounds by up to 0.1 us: a 1 kHz grid ran
        72 ppm fast that way). With ``fixed_delay`` the grid restarts at the run's end.

        >>> task = PeriodicTask(1.0, print, (), None, None, 1.0, False, "skip")
        >>> task.next_slot(1.2), task.next_slot(4.5)
        ((2.0, 0, 2.0), (5.0, 2, 3.0))
        """
        period: float = self.period  # type: ignore[assignment]
        if self.fixed_delay:
            self.base, self.grid_index = now + period, 0
            return self.base, 0, self.base
        base, k = self.base, self.grid_index + 1
        due = base + k * period
        if due >= now:
            self.grid_index = k
            return due, 0, due
        slot, missed = pick(self.misfire, first_slot_at_or_after(base, period, now) - k)
        self.grid_index = k + slot
        return base + (k + slot) * period, missed, due


class TriggeredTask(Task):
    """A task re-armed by a trigger (a cron expression in a time zone, or any ``Trigger``).

    After each run the next due time is ``trigger.next_after(this run's due)``; runs
    whose time passed during an overrun follow ``misfire``. The task ends when the
    trigger has no fire time left.
    """

    __slots__ = ("misfire", "trigger", "trigger_text")

    periodic = True

    def __init__(
        self,
        due: float,
        action: Callable[..., Any] | threading.Event,
        args: Any,
        kwargs: Mapping[str, Any] | None,
        label: str | None,
        trigger: Any,
        misfire: str,
    ) -> None:
        super().__init__(due, action, args, kwargs, label)
        self.trigger = trigger
        self.misfire = misfire
        try:
            text = str(trigger.describe())
        except Exception:
            text = short_repr(trigger)
        self.trigger_text = text

    @property
    def repeat(self) -> Any:
        return self.trigger

    def next_due(self) -> float | None:
        if self.stop_requested:
            return None
        try:
            return fire_after(self.trigger, self.due)
        except (TypeError, ValueError):  # the re-arm will end the task, with a row saying why
            return None

    def next_slot(self, now: float) -> tuple[float | None, int, float]:
        """The slot to arm after a run that ended at ``now``: ``(due, missed, first missed
        due)``; ``due`` is ``None`` when the trigger has no fire time left (see
        :func:`tempsched_lab.core.triggers.plan_rearm`, which applies the misfire policy)."""
        plan = plan_rearm(self.trigger, self.due, now, self.misfire)
        return plan.due, plan.missed, plan.first_late if plan.first_late is not None else now

    def upcoming(self, n: int) -> tuple[float, ...]:
        """The next ``n`` fire times after this one, as far as the trigger gives valid ones
        (a status or a dashboard frame never breaks on a faulty user trigger)."""
        out: list[float] = []
        t: float | None = self.due
        while len(out) < n and t is not None:
            try:
                t = fire_after(self.trigger, t)
            except (TypeError, ValueError):
                break
            if t is not None:
                out.append(t)
        return tuple(out)


@dataclass(frozen=True, slots=True)
class TaskView:
    """A pending task as shown in snapshots, plots and widgets (``due`` on the clock's scale)."""

    id: int
    due: float
    label: str
    args: str
    period: float | None
    #: a calendar task's rule, described, and its next fire times after ``due``
    trigger: str | None = None
    upcoming: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """The answer of :meth:`Scheduler.status <tempsched_lab.Scheduler.status>`.

    ``next_due`` and ``last_due`` are values on the scheduler's clock (its
    ``repr`` shows them in the time language: seconds since the clock's
    origin). ``next_due`` is ``None`` once the task will not run again (for a
    periodic run in flight it is the next slot of its fixed-rate grid);
    ``last_due`` is the due time of its latest run. After a task's end only
    ``state`` is kept.

    >>> status = TaskStatus(3, TaskState.PENDING, 12.5, "tick", 0.5, 4, 12.0)
    >>> status  # doctest: +NORMALIZE_WHITESPACE
    TaskStatus(id=3, state=pending, next_due=12.500 s, label='tick', period=500.00 ms,
               runs=4, last_due=12.000 s)
    """

    id: int
    state: TaskState
    next_due: float | None = None
    label: str | None = None
    period: float | None = None
    runs: int = 0
    last_due: float | None = None
    time_scale: TimeScale = field(default=TimeScale(0.0), repr=False, compare=False)
    #: a calendar task's trigger, described (``"At 09:00 on Monday through Friday (...)"``)
    trigger: str | None = None
    #: the due times after ``next_due`` (periodic and calendar tasks; a few)
    upcoming: tuple[float, ...] = ()

    def __repr__(self) -> str:
        scale = self.time_scale
        parts = [f"id={self.id}", f"state={self.state}"]
        if self.next_due is not None:
            parts.append(f"next_due={scale.text(self.next_due)}")
        if self.label is not None:
            parts.append(f"label={self.label!r}")
        if self.period is not None:
            parts.append(f"period={fmt_duration(self.period)}")
        if self.runs:
            parts.append(f"runs={self.runs}")
        if self.last_due is not None:
            parts.append(f"last_due={scale.text(self.last_due)}")
        if self.trigger is not None:
            parts.append(f"trigger={self.trigger!r}")
        if self.upcoming:
            parts.append(f"upcoming=[{', '.join(scale.text(t) for t in self.upcoming)}]")
        return f"TaskStatus({', '.join(parts)})"


def is_number(value: Any) -> bool:
    """A finite float or int (not bool): the fast check for times."""
    return (type(value) is float or type(value) is int) and math.isfinite(value)


def make_task(
    task_id: int,
    due: float,
    action: Callable[..., Any] | threading.Event = print,
    args: Any = (),
    kwargs: Mapping[str, Any] | None = None,
    period: float | None = None,
    label: str | None = None,
) -> Task:
    """A stored-task record with a given ID, for queues used on their own (tests, replay, docs).

    >>> make_task(3, 1.5).id, make_task(3, 1.5, period=2.0).period
    (3, 2.0)
    """
    task = Task(due, action, args, kwargs, label)
    task.id = task_id
    task.period = period
    return task
