"""Task records: what the scheduler keeps for every accepted request.

A :class:`Task` is the scheduler's private, mutable record of one request (its
due time changes when a periodic task is re-armed). What crosses the public
API are frozen views: :class:`TaskView` inside queue snapshots and
:class:`TaskStatus` from :meth:`Scheduler.status <tempsched_lab.Scheduler.status>`.
"""

from __future__ import annotations

import enum
import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CancelResult",
    "Origin",
    "Task",
    "TaskState",
    "TaskStatus",
    "TaskView",
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

    @property
    def is_final(self) -> bool:
        """True once the task will never run again."""
        return self >= TaskState.DONE


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
    """Who asked for a schedule decision."""

    USER = "user"
    PERIODIC = "periodic"
    COMPAT = "compat"


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
    name = getattr(action, "__qualname__", None) or getattr(action, "__name__", None)
    if name is None:
        name = type(action).__qualname__
    return str(name)


class Task:
    """The scheduler's record of one accepted request (internal, mutable).

    ``due`` is when the next run is due on the scheduler's clock. A periodic
    task keeps to a fixed-rate grid: slot ``k`` is due at ``base + k * period``
    (``slot_index`` is the current slot), so neither lateness nor float
    rounding accumulates into drift. ``slot`` is free for the queue design that holds the task (heap
    index, wheel round...).
    """

    __slots__ = (
        "action",
        "args",
        "base",
        "due",
        "id",
        "kwargs",
        "label",
        "last_due",
        "period",
        "runs",
        "slot",
        "slot_index",
        "stop_requested",
    )

    def __init__(
        self,
        task_id: int,
        due: float,
        action: Callable[..., Any] | threading.Event,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any] | None,
        period: float | None,
        label: str | None,
    ) -> None:
        self.id = task_id
        self.due = due
        self.base = due
        self.slot_index = 0
        self.action = action
        self.args = args
        self.kwargs = kwargs
        self.period = period
        self.label = label
        self.last_due: float | None = None
        self.runs = 0
        self.slot: Any = None
        self.stop_requested = False

    def slot_due(self, k: int) -> float:
        """Due time of slot ``k`` of a periodic task's grid."""
        return self.base + k * (self.period or 0.0)

    @property
    def name(self) -> str:
        """The label given at schedule time, else the action's qualified name."""
        return self.label if self.label is not None else label_of(self.action)

    def view(self) -> TaskView:
        """A frozen public picture of this task."""
        return TaskView(self.id, self.due, self.name, short_repr(self.args), self.period)

    def __repr__(self) -> str:
        return f"Task(id={self.id}, due={self.due!r}, label={self.name!r}, period={self.period!r})"


@dataclass(frozen=True, slots=True)
class TaskView:
    """A pending task as shown in snapshots, plots and widgets."""

    id: int
    due: float
    label: str
    args: str
    period: float | None


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """The answer of :meth:`Scheduler.status <tempsched_lab.Scheduler.status>`.

    ``next_due`` is ``None`` once the task will not run again (for a periodic
    run in flight it is the next slot of its fixed-rate grid); ``last_due`` is the
    due time of its latest run. After a task's end only ``state`` is kept.
    """

    id: int
    state: TaskState
    next_due: float | None = None
    label: str | None = None
    period: float | None = None
    runs: int = 0
    last_due: float | None = None


_REPR_LIMIT = 80


def short_repr(value: Any) -> str:
    """``repr`` cut to a readable length; never raises.

    >>> short_repr((1, 'a'))
    "(1, 'a')"
    """
    if type(value) is tuple and not value:
        return "()"
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not break scheduling
        text = f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"
    if len(text) > _REPR_LIMIT:
        text = text[: _REPR_LIMIT - 3] + "..."
    return text
