"""The way in: what a caller passes to ``schedule`` becomes one validated :class:`Request`.

A request's keyword arguments are declared once, in :class:`RequestOptions`:
``Scheduler.schedule``, ``Scheduler.schedule_decision`` and the mappings of
``Scheduler.schedule_many`` all take them, and :meth:`RequestBuilder.build` is the
one place that checks them. A :class:`RequestBuilder` belongs to one scheduler (it
knows the scheduler's default misfire policy, its queue's shortest period and its
clock's date conversion). Every error names the argument and its value, cut short;
nothing here takes the scheduler's lock or changes its state.

>>> from tempsched_lab import VirtualClock
>>> builder = RequestBuilder("skip", 0.0, "sorteddict", VirtualClock().from_datetime)
>>> task, at, delay = builder.build(print, None, (), {"delay": 1.0, "period": 2.0})
>>> task.period, at, delay
(2.0, None, 1.0)
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, TypeAlias, TypedDict

from . import validation as check
from .task import PeriodicTask, Task, TriggeredTask, short_repr
from .triggers.misfire import check_misfire

__all__ = [
    "OtherOptions",
    "Request",
    "RequestBuilder",
    "RequestOptions",
    "due_of",
    "options_signature",
    "round_up",
    "task_id_of",
]


class OtherOptions(TypedDict, total=False):
    """Every option but ``at`` and ``args``: what a door's ``**options`` holds.

    The doors take ``at`` and ``args`` as keyword parameters of their own, so that the
    commonest calls, ``schedule(f, at=t)`` and ``schedule(f, at=t, args=(x,))``, build no
    options dict. ``at``: ``schedule`` 30,124 -> 29,237 instructions per call with the log
    on (-2.9 %), 21,713 -> 20,810 with it off (-4.2 %); ``args``: a burst of
    ``schedule(f, at=t, args=(i,))``, 47,989 -> 45,580 with the log off (-5.0 %), 69,836 ->
    67,303 with it on (-3.6 %; callgrind, 5,000 calls; ``schedule(f, at=t)`` pays 1 % for
    the second parameter). Each brings its workload back within 5 % of its cost before the
    single way in.
    """

    delay: float | None
    period: float | None
    kwargs: Mapping[str, Any] | None
    label: str | None
    fixed_delay: bool
    misfire: str | None
    cron: str | None
    tz: Any
    trigger: Any


class RequestOptions(OtherOptions, total=False):
    """The keyword arguments of a request: the one declaration of ``schedule()``'s signature
    (``at`` and ``args`` here, the others in :class:`OtherOptions`).

    Defaults (:data:`DEFAULTS`): ``args=()``, ``fixed_delay=False``, everything else ``None``.
    """

    at: float | datetime | None
    args: tuple[Any, ...] | list[Any]


#: The default of each option that is not ``None``.
DEFAULTS: dict[str, Any] = {"args": (), "fixed_delay": False}
#: Every option, in the order of the signatures the doors show.
_ANNOTATIONS = {
    name: RequestOptions.__annotations__[name]
    for name in ("at", "delay", "period", "args", *OtherOptions.__annotations__)
}
OPTION_NAMES = frozenset(_ANNOTATIONS)
_CALENDAR = ("cron", "tz", "trigger")


#: One validated request: ``(task, at, delay)``, the task record to store and when.
#: ``at`` is an absolute time on the scheduler's clock, ``delay`` a time from now; with
#: neither, the first time follows the recurrence (one period from now, or the trigger's
#: next fire time). The due time is computed under the scheduler's lock (:func:`due_of`),
#: when *now* is read. A plain tuple, unpacked where it is read.
Request: TypeAlias = "tuple[Task, float | None, float | None]"


def options_signature(first: list[inspect.Parameter], returns: str) -> inspect.Signature:
    """The signature a door shows in ``help()`` and the docs: ``first``, then every option.

    >>> str(options_signature([], "int")).startswith("(*, at: 'float | datetime | None' = None")
    True
    """
    options = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=DEFAULTS.get(name),
            annotation=getattr(hint, "__forward_arg__", hint),  # the text as declared
        )
        for name, hint in _ANNOTATIONS.items()
    ]
    return inspect.Signature([*first, *options], return_annotation=returns)


class RequestBuilder:
    """Builds the requests of one scheduler (its defaults: misfire policy, shortest period).

    ``min_period`` is the queue's (a wheel fires at most once per tick), ``resolution``
    the scheduler's grid: a shorter period is refused, naming both.

    >>> from tempsched_lab import VirtualClock
    >>> builder = RequestBuilder("skip", 0.0, "sorteddict", VirtualClock().from_datetime)
    >>> builder.build(print, 3.0, (), {})[1]
    3.0
    """

    def __init__(
        self,
        misfire: str,
        min_period: float,
        design: str,
        from_datetime: Callable[[datetime], float],
        resolution: float | None = None,
    ) -> None:
        self.misfire = misfire
        self.min_period = min_period
        self.design = design
        self.from_datetime = from_datetime
        self.resolution = resolution

    def build(
        self,
        action: Any,
        at: Any,
        args: Any,
        options: Mapping[str, Any],
        door: str = "schedule",
    ) -> Request:
        """The request for ``action`` at ``at`` with ``args`` and the other options, validated
        (errors name the argument). ``options`` holds neither ``at`` nor ``args``.

        ``door`` names the caller in the error for an unknown option.

        The commonest request (a callable at a finite float time, with a tuple of arguments
        and no other option) is recognised first, by a test that accepts only what is
        certainly valid; anything else, and every error, takes the general path.
        Sparing the call: a burst of ``schedule(f, at=t, args=(i,))``, 70,343 -> 69,771
        instructions with the log on (-0.8 %, which keeps it within 5 % of its cost before
        the single way in; callgrind, 5,000).
        """
        if (  # the common request (RequestBuilder.many makes the same test for (action, at))
            not options
            and type(at) is float
            and type(args) is tuple
            and callable(action)
            and math.isfinite(at)
        ):
            return Task(at, action, args, None, None), at, None
        unknown = options.keys() - OPTION_NAMES
        if unknown:
            raise TypeError(f"{door}() got an unexpected keyword argument {min(unknown)!r}")
        full = {**options, "args": args} if at is None else {**options, "at": at, "args": args}
        return self._general(action, full)

    def _general(self, action: Any, options: Mapping[str, Any]) -> Request:
        get = options.get
        at, delay = get("at"), get("delay")
        if get("cron") is not None or get("tz") is not None or get("trigger") is not None:
            task = self._calendar(action, options)
        else:
            task = self._record(action, options)
        if at is not None:
            return task, self.absolute(at), None
        if delay is not None:
            return task, None, check.check_delay(delay)
        return task, None, None

    def _record(self, action: Any, options: Mapping[str, Any]) -> Task:
        """The task record of a one-shot or periodic request (every error names its argument)."""
        get = options.get
        at, delay, period = get("at"), get("delay"), get("period")
        fixed_delay, misfire = get("fixed_delay", False), get("misfire")
        if not callable(action):
            action = check.check_action(action)
        args = get("args", ())
        if type(args) is not tuple:
            args = check.check_args(args)
        kwargs = get("kwargs")
        if kwargs is not None:
            kwargs = check.check_kwargs(kwargs)
        label = get("label")
        if label is not None and type(label) is not str:
            label = check.check_label(label)
        if fixed_delay is not False:
            check.check_flag("fixed_delay", fixed_delay)
        _one_time(at, delay)
        if period is None:
            if at is None and delay is None:
                raise ValueError("at=None, delay=None, period=None: give a time (at or delay)")
            if fixed_delay or misfire is not None:
                name = "fixed_delay" if fixed_delay else "misfire"
                raise ValueError(f"{name}={short_repr(fixed_delay or misfire)}: needs a period")
            return Task(0.0, action, args, kwargs, label)
        period = self.period(period)
        policy = self.misfire if misfire is None else check_misfire(misfire)
        return PeriodicTask(0.0, action, args, kwargs, label, period, bool(fixed_delay), policy)

    def period(self, period: Any) -> float:
        """``period`` checked: a positive finite number, not below the queue's tick nor the
        scheduler's resolution (the one tick check: the compat facade asks it too).

        >>> builder = RequestBuilder("skip", 0.01, "wheel", None, None)
        >>> builder.period(0.5)
        0.5
        >>> builder.period(0.001)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: period=0.001: shorter than the wheel queue's tick (0.01 s), which fires ...
        """
        if type(period) is not float or not 0.0 < period <= check.MAX_HORIZON:
            period = check.check_period(period)
        if period < self.min_period:
            raise ValueError(
                f"period={short_repr(period)}: shorter than the {self.design} queue's "
                f"tick ({self.min_period:g} s), which fires at most once per tick; use a smaller "
                "tick (queue_options={'tick': ...}) or another queue design"
            )
        if self.resolution is not None and period < self.resolution:
            # Due times are rounded up to the grid: a shorter period would fall due again at
            # the instant it just ran, and run two or three times back to back there.
            raise ValueError(
                f"period={short_repr(period)}: shorter than the scheduler's resolution="
                f"{self.resolution:g} s, which rounds due times up to its grid, so the task "
                "could not run that often; use a period of at least the resolution, or a "
                "finer resolution"
            )
        return period  # type: ignore[no-any-return]

    def _calendar(self, action: Any, options: Mapping[str, Any]) -> Task:
        """The task record of a calendar request (``cron=``/``tz=``/``trigger=``)."""
        from .triggers import trigger_from

        get = options.get
        if get("period") is not None:
            raise ValueError(
                f"period={short_repr(get('period'))} with cron=/trigger=: give one way to recur"
            )
        if get("fixed_delay", False) is not False:
            raise ValueError(
                f"fixed_delay={short_repr(get('fixed_delay'))}: a calendar task follows its trigger"
            )
        _one_time(get("at"), get("delay"))
        repeat = trigger_from(cron=get("cron"), tz=get("tz"), trigger=get("trigger"))
        once = {k: v for k, v in options.items() if k not in _CALENDAR and k != "misfire"}
        if get("at") is None and get("delay") is None:
            once["at"] = 0.0  # (checked as a one-shot request; the trigger gives the time)
        plain = self._record(action, once)
        misfire = get("misfire")
        policy = self.misfire if misfire is None else check_misfire(misfire)
        return TriggeredTask(
            0.0, plain.action, plain.args, plain.kwargs, plain.label, repeat, policy
        )

    def timed(self, task: Task, at: Any, delay: Any) -> Request:
        """The request for a task record a facade built itself, with ``at``/``delay`` checked."""
        if type(at) is float and delay is None and math.isfinite(at):
            return task, at, None
        _one_time(at, delay)
        if at is not None:
            return task, self.absolute(at), None
        if delay is not None:
            return task, None, check.check_delay(delay)
        if task.period is None and task.trigger is None:
            raise ValueError("at=None, delay=None, period=None: give a time (at or delay)")
        return task, None, None

    def absolute(self, at: Any) -> float:
        """``at`` as a finite value on this clock (numbers as given, datetimes converted)."""
        if type(at) is float and math.isfinite(at):  # a finite float: the common case
            return at
        if isinstance(at, datetime):
            try:
                return self.from_datetime(at)
            except (OverflowError, OSError, ValueError) as exc:
                raise ValueError(f"at={at!r}: cannot convert to a time: {exc}") from None
        return check.check_number("at", at)

    def many(self, requests: Iterable[Any]) -> tuple[list[Request], tuple[Any, Exception] | None]:
        """The requests of one ``schedule_many`` call (see :meth:`from_bulk`), up to the first
        invalid one: the built requests, and that one with its error (or ``None``).

        The loop is here, not in the scheduler, so that the common ``(action, at)`` request
        costs no call: :meth:`build`'s test for the common request is made in place, which
        takes ``schedule_many`` from 17,276 to 16,367 instructions
        per request with the log off (-5.3 %) and from 24,987 to 24,108 with it on (-3.5 %;
        callgrind, 5,000 requests).

        >>> from tempsched_lab import VirtualClock
        >>> builder = RequestBuilder("skip", 0.0, "sorteddict", VirtualClock().from_datetime)
        >>> built, failure = builder.many([(print, 1.0), (print, "soon")])
        >>> len(built), failure[1]
        (1, TypeError("at='soon': expected a real number (int or float), got str"))
        """
        built: list[Request] = []
        add = built.append
        for request in requests:
            if type(request) is tuple and len(request) == 2:
                action, at = request
                if type(at) is float and callable(action) and math.isfinite(at):  # build()'s
                    add((Task(at, action, (), None, None), at, None))
                    continue
            try:
                add(self.from_bulk(request))
            except (TypeError, ValueError) as exc:
                return built, (request, exc)
        return built, None

    def from_bulk(self, request: Any) -> Request:
        """One request of ``schedule_many``: ``(action, at)``, ``(action, at, args)`` or a
        mapping of :class:`RequestOptions` plus ``"action"``."""
        if type(request) is tuple and 2 <= len(request) <= 3:
            return self.build(request[0], request[1], request[2] if len(request) == 3 else (), {})
        if not isinstance(request, Mapping):
            raise TypeError(
                f"request={short_repr(request)}: expected (action, at), (action, at, args) "
                "or a mapping of schedule() keyword arguments"
            )
        options = dict(request)
        unknown = options.keys() - OPTION_NAMES - {"action"}
        if unknown or "action" not in options:
            raise TypeError(
                f"request={short_repr(request)}: "
                + (f"unknown keys {sorted(unknown)}" if unknown else "no 'action'")
            )
        action, at, args = options.pop("action"), options.pop("at", None), options.pop("args", ())
        return self.build(action, at, args, options)


def _one_time(at: Any, delay: Any) -> None:
    if at is not None and delay is not None:
        raise ValueError(
            f"at={short_repr(at)} and delay={short_repr(delay)}: give one of them, not both"
        )


def bulk_fields(request: Any) -> tuple[Any, Any]:
    """The action and arguments of a ``schedule_many`` request, as far as it has them (for the
    ``reject`` row of an invalid one)."""
    if isinstance(request, tuple):
        return (request[0] if request else None), (request[2] if len(request) > 2 else ())
    if isinstance(request, Mapping):
        return request.get("action"), request.get("args", ())
    return request, ()


def due_of(request: Request, now: float) -> float:
    """The due time of a validated request read at ``now``.

    A calendar request without ``at``/``delay`` asks its trigger for its first fire time:
    a trigger with none left, or whose answer is not a time after ``now``, is a
    ``ValueError``/``TypeError`` naming the trigger (the scheduler writes its ``reject``
    row).
    """
    task, at, delay = request
    if at is not None:
        return at
    if delay is not None:
        return now + delay
    if isinstance(task, TriggeredTask):
        from .triggers.base import fire_after

        first = fire_after(task.trigger, now)  # NaN, inf, a raise...: an error naming it
        if first is None:
            raise ValueError(f"trigger={short_repr(task.trigger)}: has no fire time after now")
        return first
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
