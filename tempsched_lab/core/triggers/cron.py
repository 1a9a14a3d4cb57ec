"""Calendar triggers: a cron expression evaluated on the wall clock of a time zone.

The expression is read as Debian's cron reads it (via the ``cronsim`` package,
an optional extra: ``pip install 'tempsched-lab[cron]'``), including what cron
does when the clocks change:

* a job at a *fixed time* (its minute and hour fields do not start with ``*``)
  runs once per matching day: a wall time skipped by spring-forward runs at the
  first instant after the jump (``02:30`` runs at ``03:00``), and a wall time
  that occurs twice at fall-back runs at its first occurrence only;
* an *interval-like* job (minute or hour field starting with ``*``, such as
  ``*/15 * * * *`` or ``0 * * * *``) follows real time: nothing runs in the hour
  that does not exist, and the repeated hour runs again.

>>> from datetime import datetime
>>> from zoneinfo import ZoneInfo
>>> paris = ZoneInfo("Europe/Paris")
>>> weekdays = CronTrigger("0 9 * * mon-fri", tz="Europe/Paris")
>>> weekdays.describe()
'At 09:00 on Monday through Friday (Europe/Paris)'
>>> friday_noon = datetime(2026, 3, 27, 12, 0, tzinfo=paris).timestamp()
>>> datetime.fromtimestamp(weekdays.next_after(friday_noon), paris).isoformat()
'2026-03-30T09:00:00+02:00'
>>> CronTrigger("0 25 * * *", tz="UTC")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: expression='0 25 * * *': bad hour field '25': expected 0-23; lists a,b, ...
"""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any

from .base import check_time
from .zones import Zone, resolve_zone, zone_name

__all__ = ["NICKNAMES", "CronTrigger"]

#: The ``@`` shortcuts of cron and what they stand for (``@reboot`` is not a time).
NICKNAMES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
#: What each field accepts, for error messages.
_ALLOWED = {
    "minute": "0-59",
    "hour": "0-23",
    "day-of-month": "1-31, L or LW, and a day that the listed months have",
    "month": "1-12 or jan-dec",
    "day-of-week": "0-7 or sun-sat (0 and 7 are Sunday), 5L, fri#2",
}
_FIELD_HELP = "fields: minute hour day-of-month month day-of-week"
#: How far back a walk starts when a fall-back is ahead (the longest shift ever used is 2 h).
_LOOKBACK = timedelta(hours=3)
#: Where a new trigger checks that its expression fires at all (cronsim looks 50 years ahead).
_PROBE = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _cronsim() -> Any:
    """The ``cronsim`` module, imported on first use (it is an optional extra)."""
    try:
        import cronsim
    except ImportError as exc:
        raise ImportError(
            "cron triggers need the optional package 'cronsim': pip install 'tempsched-lab[cron]'"
        ) from exc
    return cronsim


class CronTrigger:
    """Fire when the wall clock of ``tz`` matches a 5-field cron expression.

    Args:
        expression: ``"minute hour day-of-month month day-of-week"`` (names such as
            ``mon-fri`` and ``jan``, lists, ranges, steps, ``L`` and ``LW`` in the
            day-of-month field, ``5L`` and ``fri#2`` in the day-of-week field), or a
            nickname from :data:`NICKNAMES` such as ``"@daily"``. As in cron, a day
            matches the day-of-month OR the day-of-week field when both are
            restricted, AND when either starts with ``*``.
        tz: an IANA zone name (``"Europe/Paris"``), a ``zoneinfo.ZoneInfo`` or a
            ``datetime.timezone``; ``None`` (the default) is this machine's zone.

    Fire times are whole seconds since the epoch (floats). Triggers compare equal
    when they fire at the same times in the same zone (``1-5`` equals ``mon-fri``).
    Costs (``benchmarks/bench_triggers.py``): 7 to 50 µs per fire time asked in
    sequence (a week of a minutely job: 68 ms), 30 to 64 µs for an isolated call.

    >>> CronTrigger("0 9 * * 1-5", tz="UTC") == CronTrigger("0  9 * * MON-FRI", tz="UTC")
    True
    >>> CronTrigger("@daily", tz="UTC").next_times(0.0, 2)
    [86400.0, 172800.0]
    """

    __slots__ = ("_cursor", "_expr5", "_fixed_time", "_key", "_lock", "expression", "tz", "zone")

    def __init__(self, expression: str, tz: str | tzinfo | None = None) -> None:
        self._setup(expression, tz, "expression", "tz")

    @classmethod
    def _named(cls, expression: Any, tz: Any, expr_arg: str, tz_arg: str) -> CronTrigger:
        """Build with errors that name the caller's arguments (``cron=``, ``tz=``)."""
        trigger = cls.__new__(cls)
        trigger._setup(expression, tz, expr_arg, tz_arg)
        return trigger

    def _setup(self, expression: Any, tz: Any, expr_arg: str, tz_arg: str) -> None:
        if not isinstance(expression, str):
            raise TypeError(f"{expr_arg}={expression!r}: expected a cron expression (str)")
        text = " ".join(expression.split())
        expr5 = NICKNAMES.get(text.lower(), text)
        parts = expr5.split()
        if text.lower() == "@reboot":
            raise ValueError(f"{expr_arg}={expression!r}: @reboot is not a time of day")
        if len(parts) != 5:
            raise ValueError(
                f"{expr_arg}={expression!r}: expected 5 fields ({_FIELD_HELP[8:]}) "
                f"or a nickname such as '@daily', got {len(parts)}"
            )
        zone = resolve_zone(tz, tz_arg)
        sim = self._parse(expr5, expression, expr_arg)
        #: The expression as given (whitespace collapsed).
        self.expression = text
        #: The zone's name (``'Europe/Paris'``); the zone itself is :attr:`zone`.
        self.tz = zone_name(zone)
        #: The ``tzinfo`` the wall times are read in.
        self.zone: Zone = zone
        self._expr5 = expr5
        self._fixed_time = not (parts[0].startswith("*") or parts[1].startswith("*"))
        self._key = (*_canonical(sim, expr5), self._fixed_time, self.tz)
        self._lock = threading.Lock()
        self._cursor: tuple[float, Iterator[float]] | None = None

    @staticmethod
    def _parse(expr5: str, given: str, arg: str) -> Any:
        cronsim = _cronsim()
        try:
            sim = cronsim.CronSim(expr5, _PROBE)
        except cronsim.CronSimError as exc:
            raise ValueError(f"{arg}={given!r}: {_explain_error(str(exc), expr5)}") from None
        try:
            next(sim)
        except StopIteration:
            raise ValueError(
                f"{arg}={given!r}: never fires (no matching date within 50 years)"
            ) from None
        return sim

    # -- fire times -----------------------------------------------------------------
    def next_after(self, t: float) -> float | None:
        """The first fire time strictly after ``t`` (epoch seconds), or ``None`` when none is
        left: the calendar ends with the year 9999 (``"59 23 31 12 *"`` still fires at
        9999-12-31 23:59; ``"0 0 * * *"`` has nothing after that day's midnight).

        Asking again from the time it just returned continues the same walk instead
        of starting a new one (a re-arm does exactly that): 1.3x to 1.8x faster per
        call, 17-51 µs instead of 30-64 µs (``benchmarks/bench_triggers.py``).
        """
        t = check_time(t)
        with self._lock:
            cursor = self._cursor
            it = cursor[1] if cursor is not None and cursor[0] == t else self._iterate(t)
            result = _first_after(it, t)
            self._cursor = None if result is None else (result, it)
        return result

    def next_times(self, t: float, n: int) -> list[float]:
        """The next ``n`` fire times strictly after ``t`` (fewer if the expression runs out).

        >>> CronTrigger("*/15 * * * *", tz="UTC").next_times(60.0, 3)
        [900.0, 1800.0, 2700.0]
        """
        t = check_time(t)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n={n!r}: expected a count (an int >= 0)")
        it = self._iterate(t)
        result: list[float] = []
        last = t
        while len(result) < n:
            nxt = _first_after(it, last)
            if nxt is None:
                break
            result.append(nxt)
            last = nxt
        return result

    def _iterate(self, t: float) -> Iterator[float]:
        whole = math.floor(t)
        start = _wall_at(whole, self.zone)
        if start is None:
            if whole > 0:  # after the calendar's end (year 9999): nothing is left
                return iter(())
            start = _FIRST_WALL.replace(tzinfo=self.zone)  # before year 1: from its start
        ahead = _wall_at(whole + _LOOKBACK.total_seconds(), self.zone)
        if not self._fixed_time and ahead is not None and ahead.utcoffset() != start.utcoffset():
            # A fall-back is ahead: its second pass revisits wall times earlier than now.
            start -= _LOOKBACK
        # Fire times are whole seconds, so "after t" is "at or after floor(t) + 1"; cronsim's
        # first step is that second (fromtimestamp(t) would round 100.9999997 up to 101).
        walls = _cronsim().CronSim(self._expr5, start.replace(tzinfo=None))
        return _instants(_until_the_end(walls), self.zone, self._fixed_time)

    # -- for people -------------------------------------------------------------------
    def describe(self) -> str:
        """A sentence: ``'At 09:00 on Monday through Friday (Europe/Paris)'``."""
        try:
            text = _cronsim().CronSim(self._expr5, _PROBE).explain()
        except Exception:  # explain() is best effort; the expression itself is valid
            text = f"cron {self._expr5!r}"
        return f"{text} ({self.tz})"

    @property
    def fixed_time(self) -> bool:
        """True when cron's DST rules apply (once per day); False for interval-like jobs."""
        return self._fixed_time

    # -- comparison, hashing, pickling -----------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CronTrigger):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __reduce__(self) -> tuple[Any, ...]:
        # a zone read from /etc/localtime cannot be pickled: the copy looks it up again
        return (CronTrigger, (self.expression, None if self.tz == "localtime" else self.zone))

    def __repr__(self) -> str:
        return f"CronTrigger({self.expression!r}, tz={self.tz!r})"


def _first_after(it: Iterator[float], t: float) -> float | None:
    """The first time ``it`` yields that is strictly after ``t``, or ``None`` when it ends."""
    for value in it:
        if value > t:
            return value
    return None


#: Where a walk starts for a time before the year 1: late on its first day, so that any
#: zone (offsets stay within 24 h) can tell the instant.
_FIRST_WALL = datetime(1, 1, 1, 23, 59)
#: The last instant a UTC datetime can show (9999-12-31 23:59:59.999999).
_LAST_UTC = datetime.max.replace(tzinfo=timezone.utc)


def _wall_at(t: float, zone: Zone) -> datetime | None:
    """The wall time of instant ``t`` in ``zone``; ``None`` outside the zone's years 1-9999.

    West of UTC, the last hours of 9999-12-31 are instants after the last one a UTC
    datetime can show; their wall time is counted on from that last one.
    """
    try:
        return datetime.fromtimestamp(t, zone)
    except (OverflowError, ValueError, OSError):
        pass
    last = _LAST_UTC.timestamp()
    if t <= last:
        return None
    try:
        return _LAST_UTC.astimezone(zone) + timedelta(seconds=t - last)
    except OverflowError:
        return None


def _until_the_end(walls: Iterator[datetime]) -> Iterator[datetime]:
    """cronsim's wall times, ending where the calendar does.

    Past 9999-12-31 cronsim's date arithmetic raises ``OverflowError``: that, and only
    that, means no wall time is left. Any other error is a real one and propagates
    (it once was read as "no fire time left" too, which ended daily jobs for good).
    """
    while True:
        try:
            wall = next(walls)
        except (StopIteration, OverflowError):
            return
        yield wall


def _instants(walls: Iterator[datetime], zone: Zone, fixed_time: bool) -> Iterator[float]:
    """Real instants (epoch seconds, increasing) of the matching wall times ``walls`` yields.

    cronsim walks naive wall times, which is all it has to do: turning a wall time
    into instants across DST is done here, for both kinds of job (cronsim's own
    DST walk skips or adds runs in zones with a 30-minute shift or a skipped
    midnight; see ``docs/triggers.md``). A wall time that does not exist gives a
    fixed-time job the instant the clock jumps, an interval-like job nothing; a
    wall time that exists twice gives a fixed-time job its first instant, an
    interval-like job both, the second one held back until its turn.
    """
    held: list[float] = []  # second occurrences waiting for the walk to pass them
    last = -math.inf
    for wall in walls:
        first, second, gap = _resolve(wall, zone)
        if gap:
            if not fixed_time:
                continue
            first = _after_gap(wall, zone)
        elif second is not None and not fixed_time:
            heapq.heappush(held, second)
        # later wall times never map before `first`: everything held up to it is due
        while held and held[0] <= first:
            value = heapq.heappop(held)
            if value > last:
                last = value
                yield value
        if first > last:
            last = first
            yield first
    while held:
        value = heapq.heappop(held)
        if value > last:
            last = value
            yield value


def _resolve(wall: datetime, zone: Zone) -> tuple[float, float | None, bool]:
    """``(first instant, second instant or None, does not exist)`` of a naive wall time.

    By PEP 495, ``fold=0`` reads a wall time with the offset in force before a
    transition and ``fold=1`` with the one after. Across a fall-back (the offset
    drops) that gives two instants, in order: the wall time exists twice. Across a
    spring-forward (the offset grows) it gives them in the wrong order: the wall
    time does not exist. Pure arithmetic: it also holds on the calendar's last day,
    where a zone west of UTC has instants that no UTC datetime can show.
    """
    first = wall.replace(tzinfo=zone).timestamp()
    later = wall.replace(tzinfo=zone, fold=1).timestamp()
    if later == first:
        return first, None, False
    if later > first:
        return first, later, False  # it exists twice (a fall-back repeats it)
    return first, None, True  # skipped by a spring-forward


def _after_gap(wall: datetime, zone: Zone) -> float:
    """The instant a spring-forward ends: the first existing wall minute after ``wall``.

    The jump lies between the two readings of ``wall`` (see :func:`_resolve`); it is
    found by halving that span (whole seconds: zone data has no finer offsets), so a
    gap of any length is crossed, including a whole skipped day (Pacific/Apia on
    2011-12-30, Pacific/Kwajalein on 1993-08-21).
    """
    minute = wall
    for _ in range(8):  # a second gap right after the first: never seen; a few suffice
        lo = math.floor(minute.replace(tzinfo=zone, fold=1).timestamp())
        hi = math.ceil(minute.replace(tzinfo=zone).timestamp())
        before = _offset(lo, zone)
        while hi - lo > 1:  # the first second whose offset is the new one
            mid = (lo + hi) // 2
            if _offset(mid, zone) == before:
                lo = mid
            else:
                hi = mid
        end = datetime.fromtimestamp(hi, zone).replace(tzinfo=None)  # the gap's first wall after
        minute = end.replace(second=0, microsecond=0)
        if minute < end:
            minute += timedelta(minutes=1)
        first, _, gap = _resolve(minute, zone)
        if not gap:
            return first
    raise RuntimeError(f"no existing wall time found after {wall} in {zone}")  # pragma: no cover


def _offset(t: int, zone: Zone) -> timedelta | None:
    return datetime.fromtimestamp(t, timezone.utc).astimezone(zone).utcoffset()


def _canonical(sim: Any, expr5: str) -> tuple[Any, ...]:
    """The matching sets of a parsed expression: equal sets, equal fire times.

    Reads cronsim's parsed fields; a cronsim without them falls back to the text.
    """
    if not all(hasattr(sim, name) for name in ("minutes", "hours", "days", "months", "weekdays")):
        return (expr5.lower(),)

    def sunday(item: Any) -> Any:  # day-of-week 7 and 0 are both Sunday
        if isinstance(item, tuple):
            return (item[0] % 7, *item[1:])
        return item % 7

    weekdays = frozenset(sunday(item) for item in sim.weekdays)
    return (
        frozenset(sim.minutes),
        frozenset(sim.hours),
        frozenset(sim.days),
        frozenset(sim.months),
        weekdays,
        getattr(sim, "day_and", None),
    )


def _explain_error(message: str, expr5: str) -> str:
    """cronsim's ``'Bad day-of-week'`` as ``"bad day-of-week field 'mon-sun' (fields: ...)"``."""
    parts = expr5.split()
    for index, name in enumerate(_FIELDS):
        if message.lower() == f"bad {name}":
            return (
                f"bad {name} field {parts[index]!r}: expected {_ALLOWED[name]}; lists a,b, "
                f"ranges low-high (no wrap-around) and steps */n or low-high/n ({_FIELD_HELP})"
            )
    return f"{message} ({_FIELD_HELP})"
