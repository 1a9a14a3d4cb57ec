"""What a scheduler needs from a trigger, and the periodic trigger that fits the same slot.

A *trigger* turns "when did this task last fall due" into "when is it due next"
without the scheduler knowing why: a fixed period (:class:`IntervalTrigger`) and
a calendar rule (:class:`~tempsched_lab.core.triggers.CronTrigger`) answer the same
two questions. Times are seconds on the scheduler clock's scale, read as epoch
seconds (a ``RealClock`` reads like ``time.time()``; a ``VirtualClock`` started at
``datetime(...).timestamp()`` does too).

>>> every = IntervalTrigger(2.5, anchor=100.0)
>>> every.next_after(100.0), every.next_after(101.0)
(102.5, 102.5)
>>> next_times(every, 100.0, 3)
[102.5, 105.0, 107.5]
>>> every.describe()
'every 2.500 s'
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Protocol, runtime_checkable

from ...time.scale import fmt_duration
from ..reprs import describe_exception, short_repr

__all__ = [
    "IntervalTrigger",
    "Trigger",
    "check_time",
    "check_trigger",
    "fire_after",
    "next_times",
]


@runtime_checkable
class Trigger(Protocol):
    """When a recurring task falls due, as a rule the scheduler can ask without understanding.

    Implementations must be immutable in what they answer (the same ``t`` gives
    the same result), compare equal when they fire at the same times (duplicate
    detection compares triggers) and be hashable.
    """

    def next_after(self, t: float) -> float | None:
        """The first fire time strictly after ``t`` (epoch seconds), or ``None`` if none is left."""
        ...

    def describe(self) -> str:
        """A sentence for people: ``'At 09:00 on Monday through Friday (Europe/Paris)'``."""
        ...


class IntervalTrigger:
    """Fire every ``period`` seconds on the grid ``anchor + k * period`` (all integers ``k``).

    Each time is one multiplication from the anchor, as the scheduler's periodic
    re-arm computes it, so the grid never drifts however many runs pass.

    Args:
        period: seconds between fire times (a positive finite number).
        anchor: one fire time of the grid (default 0.0).

    >>> IntervalTrigger(60).next_after(90.0)
    120.0
    >>> IntervalTrigger(0)
    Traceback (most recent call last):
    ...
    ValueError: period=0: expected a positive finite number of seconds
    """

    __slots__ = ("anchor", "period")

    def __init__(self, period: float, anchor: float = 0.0) -> None:
        seconds = check_time(period, "period")
        if seconds <= 0:
            raise ValueError(f"period={period!r}: expected a positive finite number of seconds")
        self.period = seconds
        self.anchor = check_time(anchor, "anchor")

    def time_of(self, k: int) -> float:
        """The ``k``-th fire time of the grid."""
        return self.anchor + k * self.period

    def index_after(self, t: float) -> int:
        """The smallest ``k`` whose fire time is strictly after ``t``."""
        k = math.floor((t - self.anchor) / self.period) + 1
        while self.time_of(k) <= t:  # float rounding can leave the estimate one off
            k += 1
        while self.time_of(k - 1) > t:
            k -= 1
        return k

    def next_after(self, t: float) -> float | None:
        """The first grid time strictly after ``t``."""
        return self.time_of(self.index_after(check_time(t)))

    def next_times(self, t: float, n: int) -> list[float]:
        """The first ``n`` grid times strictly after ``t``."""
        k = self.index_after(check_time(t))
        return [self.time_of(k + i) for i in range(_check_count(n))]

    def describe(self) -> str:
        """``'every 2.500 s'``."""
        return f"every {fmt_duration(self.period)}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IntervalTrigger):
            return NotImplemented
        return (
            self.period == other.period and self.anchor % self.period == other.anchor % other.period
        )

    def __hash__(self) -> int:
        return hash((IntervalTrigger, self.period, self.anchor % self.period))

    def __repr__(self) -> str:
        return f"IntervalTrigger(period={self.period!r}, anchor={self.anchor!r})"


def next_times(trigger: Trigger, t: float, n: int) -> list[float]:
    """The next ``n`` fire times of any trigger strictly after ``t`` (fewer if it runs out).

    Uses the trigger's own ``next_times`` when it has one (a cron trigger keeps its
    iterator: one pass instead of ``n`` restarts); other answers are checked
    (:func:`fire_after`).
    """
    n = _check_count(n)
    own = getattr(trigger, "next_times", None)
    if callable(own):
        return list(own(t, n))
    result: list[float] = []
    nxt = fire_after(trigger, check_time(t))
    while nxt is not None and len(result) < n:
        result.append(nxt)
        nxt = fire_after(trigger, nxt)
    return result


def fire_after(trigger: Trigger, t: float) -> float | None:
    """``trigger.next_after(t)``, checked: ``None`` (no fire time left) or a finite number
    of seconds strictly after ``t``.

    Anything else a trigger (a user's own) may answer cannot be stored as a due time,
    or would never let its task move on: it raised, it returned NaN, an infinity, a
    non-number, or a time not after ``t``. That is a ``ValueError`` (``TypeError`` for a
    non-number) naming the trigger and what it gave; the scheduler refuses the request
    (a ``reject`` row) or ends the task (a ``dropped`` row) with it.

    >>> fire_after(IntervalTrigger(2.0), 3.0)
    4.0
    >>> class Stuck:
    ...     def next_after(self, t): return t
    ...     def describe(self): return "stuck"
    ...     def __repr__(self): return "Stuck()"
    >>> fire_after(Stuck(), 3.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: trigger=Stuck(): next_after(t) returned t itself: expected None or a time ...
    """
    try:
        value = trigger.next_after(t)
    except Exception as exc:
        raise ValueError(
            f"trigger={short_repr(trigger)}: next_after(t) raised {describe_exception(exc)}"
        ) from exc
    if value is None:
        return None
    if type(value) is not float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(
                f"trigger={short_repr(trigger)}: next_after(t) returned {short_repr(value)}: "
                "expected None or a time in seconds (a real number)"
            )
        value = float(value)
    if t < value < math.inf:
        return value
    if value == t:
        said = "t itself"
    elif -math.inf < value < t:
        said = f"a time {fmt_duration(t - value)} before t"
    else:  # NaN or an infinity
        said = repr(value)
    raise ValueError(
        f"trigger={short_repr(trigger)}: next_after(t) returned {said}: expected None or a "
        "time strictly after t"
    )


def check_trigger(value: Any, arg: str = "trigger") -> Trigger:
    """``value`` if it is a trigger (has ``next_after`` and ``describe``), else a ``TypeError``."""
    if isinstance(value, Trigger) and not isinstance(value, type):
        return value
    raise TypeError(
        f"{arg}={value!r}: expected a trigger (an object with next_after(t) -> float | None "
        "and describe() -> str), such as CronTrigger('0 9 * * mon-fri', tz='Europe/Paris')"
    )


def check_time(value: Any, arg: str = "t") -> float:
    """A finite real number of seconds, else an error naming ``arg``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{arg}={value!r}: expected seconds as a real number")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{arg}={value!r}: expected a finite number of seconds")
    return result


def _check_count(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n={n!r}: expected a count (an int >= 0)")
    return n
