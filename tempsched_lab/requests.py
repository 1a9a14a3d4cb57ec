"""Requests: turning what a caller passed to ``schedule`` into a validated request record.

A :class:`RequestBuilder` belongs to one scheduler (it knows the scheduler's
default misfire policy, its queue's shortest period and its clock's date
conversion) and builds the :class:`~tempsched_lab.task.Task` that the decision
tree reads. Every error names the argument and its value, cut short; nothing
here takes the scheduler's lock or changes its state.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from . import validation as check
from .task import PeriodicTask, Task, TriggeredTask, short_repr

__all__ = ["RequestBuilder", "due_of", "request_field", "round_up", "task_id_of"]

# Bound once: a global name is one lookup; math.isfinite is two (measured 14 ns vs 33 ns
# for the `x - x == 0.0` trick it replaces, which bought nothing).
_isfinite = math.isfinite


class RequestBuilder:
    """Builds the request records of one scheduler's ``schedule`` calls.

    >>> from tempsched_lab import VirtualClock
    >>> builder = RequestBuilder("skip", 0.0, "sorteddict", VirtualClock().from_datetime)
    >>> builder.plain(print, 1.0, None, 2.0, (), None, None, False, None).period
    2.0
    """

    def __init__(
        self,
        misfire: str,
        min_period: float,
        design: str,
        from_datetime: Callable[[datetime], float],
    ) -> None:
        self.misfire = misfire
        self.min_period = min_period
        self.design = design
        self.from_datetime = from_datetime

    def plain(
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
    ) -> Task:
        """The request record for validated arguments (every error names its argument)."""
        if not callable(action):
            action = check.check_action(action)
        if type(args) is not tuple:
            args = check.check_args(args)
        if kwargs is not None:
            kwargs = check.check_kwargs(kwargs)
        if label is not None and type(label) is not str:
            label = check.check_label(label)
        if fixed_delay is not False:
            check.check_flag("fixed_delay", fixed_delay)
        if at is not None and delay is not None:
            raise ValueError(
                f"at={short_repr(at)} and delay={short_repr(delay)}: give one of them, not both"
            )
        if period is None:
            if at is None and delay is None:
                raise ValueError("at=None, delay=None, period=None: give a time (at or delay)")
            if fixed_delay or misfire is not None:
                name = "fixed_delay" if fixed_delay else "misfire"
                raise ValueError(f"{name}={short_repr(fixed_delay or misfire)}: needs a period")
            return Task(0.0, action, args, kwargs, label)
        period = check.check_period(period)
        floor = self.min_period
        if period < floor:
            raise ValueError(
                f"period={short_repr(period)}: shorter than the {self.design} queue's "
                f"tick ({floor:g} s), which fires at most once per tick; use a smaller "
                "tick (queue_options={'tick': ...}) or another queue design"
            )
        policy = self.misfire if misfire is None else check.check_misfire(misfire)
        return PeriodicTask(0.0, action, args, kwargs, label, period, bool(fixed_delay), policy)

    def calendar(
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
        cron: Any,
        tz: Any,
        trigger: Any,
    ) -> Task:
        """The request record of a calendar task (``cron=``/``tz=``/``trigger=``)."""
        from .triggers import trigger_from

        if period is not None:
            raise ValueError(
                f"period={short_repr(period)} with cron=/trigger=: give one way to recur"
            )
        if fixed_delay is not False:
            raise ValueError(
                f"fixed_delay={short_repr(fixed_delay)}: a calendar task follows its trigger"
            )
        if at is not None and delay is not None:
            raise ValueError(
                f"at={short_repr(at)} and delay={short_repr(delay)}: give one of them, not both"
            )
        repeat = trigger_from(cron=cron, tz=tz, trigger=trigger)
        plain = self.plain(
            action,
            0.0 if at is None and delay is None else at,
            delay,
            None,
            args,
            kwargs,
            label,
            False,
            None,
        )
        policy = self.misfire if misfire is None else check.check_misfire(misfire)
        return TriggeredTask(
            0.0, plain.action, plain.args, plain.kwargs, plain.label, repeat, policy
        )

    def absolute(self, at: Any) -> float:
        """``at`` as a finite value on this clock (numbers as given, datetimes converted)."""
        if type(at) is float and _isfinite(at):  # a finite float: the common case
            return at
        if isinstance(at, datetime):
            try:
                return self.from_datetime(at)
            except (OverflowError, OSError, ValueError) as exc:
                raise ValueError(f"at={at!r}: cannot convert to a time: {exc}") from None
        return check.check_number("at", at)

    def from_bulk(self, request: Any) -> tuple[Task, float | None, float | None]:
        """One request of :meth:`schedule_many` as ``(task, at, delay)``, validated."""
        if type(request) is tuple and 2 <= len(request) <= 3:
            action, at = request[0], request[1]
            args = request[2] if len(request) == 3 else ()
            if type(at) is float and _isfinite(at) and type(args) is tuple and callable(action):
                return Task(at, action, args, None, None), at, None
            request = {"action": action, "at": at, "args": args}
        elif isinstance(request, Mapping):
            request = dict(request)
        else:
            raise TypeError(
                f"request={short_repr(request)}: expected (action, at), (action, at, args) "
                "or a mapping of schedule() keyword arguments"
            )
        unknown = set(request) - _REQUEST_KEYS
        if unknown or "action" not in request:
            raise TypeError(
                f"request={short_repr(request)}: "
                + (f"unknown keys {sorted(unknown)}" if unknown else "no 'action'")
            )
        get = request.get
        if get("cron") is not None or get("tz") is not None or get("trigger") is not None:
            task = self.calendar(
                get("action"),
                get("at"),
                get("delay"),
                get("period"),
                get("args", ()),
                get("kwargs"),
                get("label"),
                get("fixed_delay", False),
                get("misfire"),
                get("cron"),
                get("tz"),
                get("trigger"),
            )
        else:
            task = self.plain(
                get("action"),
                get("at"),
                get("delay"),
                get("period"),
                get("args", ()),
                get("kwargs"),
                get("label"),
                get("fixed_delay", False),
                get("misfire"),
            )
        at, delay = get("at"), get("delay")
        if at is not None:
            return task, self.absolute(at), None
        if delay is not None:
            return task, None, check.check_delay(delay)
        return task, None, None


_REQUEST_KEYS = frozenset(
    (
        "action",
        "at",
        "delay",
        "period",
        "args",
        "kwargs",
        "label",
        "fixed_delay",
        "misfire",
        "cron",
        "tz",
        "trigger",
    )
)


def request_field(request: Any, i: int) -> Any:
    if isinstance(request, tuple) and len(request) > i:
        return request[i]
    if isinstance(request, Mapping):
        return request.get(("action", "at", "args")[i])
    return request if i == 0 else None


def due_of(task: Task, at: float | None, delay: float | None, now: float) -> float:
    """The due time of a validated request read at ``now`` (as ``_submit`` computes it)."""
    if at is not None:
        return at
    if delay is not None:
        return now + delay
    if isinstance(task, TriggeredTask):
        first = task.trigger.next_after(now)
        if first is None:
            raise ValueError(f"trigger={task.trigger!r}: has no fire time after now")
        return float(first)
    return now + task.period  # type: ignore[operator]


def task_id_of(value: Any) -> int:
    """A task ID: any integer (numpy integers included), not a bool."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        raise TypeError(f"task_id={value!r}: expected an int task ID")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"task_id={short_repr(value)}: expected an int task ID") from None


def round_up(due: float, resolution: float) -> float:
    """``due`` rounded up to a multiple of ``resolution`` (never earlier than ``due``).

    >>> round_up(1.01, 0.5), round_up(1.5, 0.5)
    (1.5, 1.5)
    """
    k = math.ceil(due / resolution)
    for _ in range(4):  # float rounding may land one grid step low; a few steps suffice
        result = k * resolution
        if result >= due:
            return result
        k += 1
    return due  # pragma: no cover - resolution is at least 1 µs, so the loop returns
