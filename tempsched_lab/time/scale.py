"""One time language for everything a user reads: seconds since the clock's origin.

Scheduler clocks count in seconds on their own scale: a
:class:`~tempsched_lab.RealClock` reads like ``time.time()`` (epoch-sized
values such as ``1796075052.89``), a :class:`~tempsched_lab.VirtualClock`
starts wherever it was told (``0.0`` by default). Raw values are right for
arithmetic and wrong for people, so every panel, plot, table and ``repr``
shows times through a :class:`TimeScale`:

* ``"elapsed"`` (the default): seconds since the clock's *origin* (the moment a
  real clock was created, a virtual clock's ``start``), as ``12.345 s``;
* ``"wall"``: local wall-clock time ``HH:MM:SS.mmm`` (a virtual clock's values
  are read as epoch seconds, as :meth:`VirtualClock.from_datetime
  <tempsched_lab.VirtualClock.from_datetime>` does).

Durations (lateness, periods, waits) are not times: :func:`fmt_duration` writes
them with a unit chosen by size (``850 µs``, ``4.20 ms``, ``1.250 s``).

>>> scale = TimeScale(origin=1_000.0)
>>> scale.text(1_012.3456)
'12.346 s'
>>> scale.rel(1_002.0), scale.parse("2.5")
(2.0, 1002.5)
>>> fmt_duration(0.0042)
'4.20 ms'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, tzinfo
from typing import Any, Literal

__all__ = [
    "TimeScale",
    "TimeStyle",
    "fmt_duration",
    "get_time_style",
    "set_time_style",
    "time_scale_of",
    "time_style",
]

TimeStyle = Literal["elapsed", "wall"]
_STYLES: tuple[str, ...] = ("elapsed", "wall")
_default_style: TimeStyle = "elapsed"

#: Key of the time origin in ``DataFrame.attrs`` (set by ``EventLog.to_frame``/``read_log``).
ORIGIN_ATTR = "time_origin"
#: Without a recorded origin, clock values at least this large are read as epoch seconds.
EPOCH_LIKE = 1e6


def _check_style(style: object) -> TimeStyle:
    if style not in _STYLES:
        raise ValueError(f"style={style!r}: expected 'elapsed' or 'wall'")
    return style  # type: ignore[return-value]


def set_time_style(style: TimeStyle) -> None:
    """Choose how times are shown everywhere (default ``"elapsed"``).

    >>> set_time_style("wall"); get_time_style()
    'wall'
    >>> set_time_style("elapsed")
    """
    global _default_style
    _default_style = _check_style(style)


def get_time_style() -> TimeStyle:
    """The style :class:`TimeScale` objects use when they were given none."""
    return _default_style


@contextmanager
def time_style(style: TimeStyle) -> Iterator[None]:
    """Show times in ``style`` inside a ``with`` block (for a figure, a test).

    >>> with time_style("wall"):
    ...     get_time_style()
    'wall'
    """
    global _default_style
    before = _default_style
    _default_style = _check_style(style)
    try:
        yield
    finally:
        _default_style = before


def _missing(t: Any) -> bool:
    if t is None:
        return True
    try:
        return bool(math.isnan(t))
    except (TypeError, ValueError):
        return True


class TimeScale:
    """How clock values are shown: relative to ``origin`` (``"elapsed"``) or as wall time.

    Args:
        origin: the clock value shown as ``0.000 s`` (the clock's origin).
        style: ``"elapsed"``, ``"wall"``, or ``None`` to follow
            :func:`set_time_style` (read at each call).

    Plots draw ``scale.rel(t)`` on their x axes and label them with
    :meth:`axis_label` and :meth:`tick_formatter`, so a wall-clock style needs
    no second code path.

    >>> TimeScale(0.0).text(2.5), TimeScale(0.0).text(None)
    ('2.500 s', '')
    """

    __slots__ = ("_style", "origin", "tz")

    def __init__(
        self, origin: float = 0.0, style: TimeStyle | None = None, tz: tzinfo | None = None
    ) -> None:
        if isinstance(origin, bool) or not isinstance(origin, (int, float)):
            raise TypeError(f"origin={origin!r}: expected a number of seconds")
        if not math.isfinite(origin):
            raise ValueError(f"origin={origin!r}: expected a finite number")
        self.origin = float(origin)
        self._style = None if style is None else _check_style(style)
        if tz is not None and not isinstance(tz, tzinfo):
            raise TypeError(f"tz={tz!r}: expected a datetime.tzinfo (e.g. a ZoneInfo) or None")
        #: the zone of wall-clock times (``None``: this machine's local time)
        self.tz = tz

    @property
    def style(self) -> TimeStyle:
        """The style in force (this scale's own, else the global one)."""
        return self._style if self._style is not None else _default_style

    def with_style(self, style: TimeStyle | None) -> TimeScale:
        """The same origin in another style."""
        return TimeScale(self.origin, style, self.tz)

    # -- numbers ----------------------------------------------------------------------
    def rel(self, t: Any) -> Any:
        """Seconds since the origin (works on floats and numpy arrays)."""
        return t - self.origin

    def abs(self, seconds: Any) -> Any:
        """The clock value ``seconds`` after the origin (the inverse of :meth:`rel`)."""
        return seconds + self.origin

    # -- text -------------------------------------------------------------------------
    def text(self, t: Any, digits: int = 3) -> str:
        """A clock value as the user reads it: ``12.345 s`` or ``21:48:00.302``; ``""`` if missing.

        >>> TimeScale(10.0, "elapsed").text(9.5)
        '-0.500 s'
        """
        if _missing(t):
            return ""
        t = float(t)
        if self.style == "wall":
            return _wall_text(t, digits, self.tz)
        return f"{t - self.origin:.{digits}f} s"

    def number(self, t: Any, digits: int = 3) -> str:
        """Like :meth:`text` without the unit (for table cells under a ``t (s)`` header)."""
        if _missing(t):
            return ""
        t = float(t)
        if self.style == "wall":
            return _wall_text(t, digits, self.tz)
        return f"{t - self.origin:.{digits}f}"

    def at(self, t: Any, digits: int = 3) -> str:
        """``t = 12.345 s`` (or ``at 21:48:00.302``), for sentences."""
        if _missing(t):
            return "t = ?"
        if self.style == "wall":
            return f"at {_wall_text(float(t), digits, self.tz)}"
        return f"t = {self.text(t, digits)}"

    def column_header(self) -> str:
        """The header of a column of :meth:`number` cells."""
        return "time" if self.style == "wall" else "t (s)"

    def axis_label(self) -> str:
        """The x-axis label for values drawn as :meth:`rel`."""
        if self.style == "wall":
            return "wall-clock time"
        return "time since start (s)"

    def tick_formatter(self) -> Any:
        """A matplotlib ``Formatter`` for an axis of :meth:`rel` values.

        Elapsed style: plain seconds. Wall style: calendar-aware, by the span the
        axis shows: ``HH:MM:SS.f`` under a minute, ``HH:MM:SS`` under a day, then
        ``Mon 09:00`` (weekday and time) under two weeks, then ``Mar 29``, in the
        scale's time zone.
        """
        from matplotlib.ticker import Formatter, ScalarFormatter

        if self.style != "wall":
            formatter = ScalarFormatter(useOffset=False)
            formatter.set_scientific(False)
            return formatter
        origin, tz = self.origin, self.tz

        class CalendarFormatter(Formatter):
            def __call__(self, x: float, pos: int | None = None) -> str:
                axis = self.axis
                lo, hi = axis.get_view_interval() if axis is not None else (x, x)
                return _calendar_text(x + origin, abs(hi - lo), tz)

        return CalendarFormatter()

    def tick_locator(self) -> Any:
        """A matplotlib ``Locator`` for an axis of :meth:`rel` values (``None``: the default).

        Wall style: ticks on round wall-clock times in the scale's zone (whole
        seconds, minutes, hours, midnights), so a week of calendar runs is marked
        by its days.
        """
        if self.style != "wall":
            return None
        from matplotlib.ticker import Locator

        origin, tz = self.origin, self.tz

        class CalendarLocator(Locator):
            def __call__(self) -> list[float]:
                lo, hi = sorted(self.axis.get_view_interval()) if self.axis else (0.0, 1.0)
                return [t - origin for t in _calendar_ticks(lo + origin, hi + origin, tz)]

            def tick_values(self, vmin: float, vmax: float) -> list[float]:
                lo, hi = sorted((vmin, vmax))
                return [t - origin for t in _calendar_ticks(lo + origin, hi + origin, tz)]

        return CalendarLocator()

    # -- input ------------------------------------------------------------------------
    def parse(self, value: Any) -> float:
        """A user's time (seconds since the origin, or ``HH:MM:SS[.fff]`` today) as a clock value.

        >>> TimeScale(100.0).parse(" 2.5 s ")
        102.5
        """
        if isinstance(value, bool):
            raise TypeError(f"time={value!r}: expected seconds since start or HH:MM:SS")
        if isinstance(value, (int, float)):
            if not math.isfinite(value):
                raise ValueError(f"time={value!r}: expected a finite number")
            return self.origin + float(value)
        if not isinstance(value, str):
            raise TypeError(f"time={value!r}: expected seconds since start or HH:MM:SS")
        text = value.strip()
        match = re.fullmatch(r"([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)\s*s?", text)
        if match:
            return self.origin + float(match.group(1))
        match = re.fullmatch(r"(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)", text)
        if match:
            hours, minutes, seconds = int(match[1]), int(match[2]), float(match[3])
            if hours > 23 or minutes > 59 or seconds >= 60:
                raise ValueError(f"time={value!r}: not a time of day")
            today = datetime.now().replace(hour=hours, minute=minutes, second=0, microsecond=0)
            return today.timestamp() + seconds
        raise ValueError(
            f"time={value!r}: expected seconds since start (e.g. '12.5') or HH:MM:SS[.fff]"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TimeScale):
            return NotImplemented
        return (self.origin, self._style, self.tz) == (other.origin, other._style, other.tz)

    def __hash__(self) -> int:
        return hash((self.origin, self._style, self.tz))

    def __repr__(self) -> str:
        return f"TimeScale(origin={self.origin!r}, style={self.style!r})"


def _wall_text(t: float, digits: int, tz: tzinfo | None = None) -> str:
    try:
        stamp = datetime.fromtimestamp(t, tz)
    except (OverflowError, OSError, ValueError):
        return f"{t:.{digits}f}"
    text = stamp.strftime("%H:%M:%S")
    if digits > 0:
        text += f"{t - math.floor(t):.{digits}f}"[1:]
    return text


_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
          86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400)  # fmt: skip


def _calendar_ticks(lo: float, hi: float, tz: tzinfo | None, most: int = 8) -> list[float]:
    """Round wall-clock instants between ``lo`` and ``hi`` (epoch seconds), at most ``most``."""
    span = hi - lo
    if not span > 0:
        return [lo]
    step = next((s for s in _STEPS if span / s <= most), _STEPS[-1])
    try:
        start = datetime.fromtimestamp(lo, tz)
    except (OverflowError, OSError, ValueError):
        return []
    midnight = start.replace(hour=0, minute=0, second=0, microsecond=0)
    if step >= 86400:  # whole days, counted from local midnights (DST days last 23 or 25 h)
        ticks, day = [], midnight
        while (t := day.timestamp()) <= hi:
            if t >= lo:
                ticks.append(t)
            day = (day + timedelta(days=step // 86400)).replace(hour=0)
            day = day.replace(tzinfo=day.tzinfo)
        return ticks
    base = midnight.timestamp()
    k = math.ceil((lo - base) / step)
    return [base + i * step for i in range(k, k + most + 2) if base + i * step <= hi]


def _calendar_text(t: float, span: float, tz: tzinfo | None) -> str:
    """A wall-clock tick label whose detail fits the span the axis shows."""
    if span < 60.0:
        return _wall_text(t, 1, tz).rstrip("0").rstrip(".")
    try:
        stamp = datetime.fromtimestamp(t, tz)
    except (OverflowError, OSError, ValueError):
        return f"{t:.0f}"
    if span < 86_400.0:
        return stamp.strftime("%H:%M:%S" if span < 3_600.0 else "%H:%M")
    if span < 14 * 86_400.0:
        return stamp.strftime("%a %H:%M")
    return stamp.strftime("%b %d")


def fmt_duration(seconds: Any, digits: int = 3) -> str:
    """A duration with a unit chosen by size: ``850 µs``, ``4.20 ms``, ``1.250 s``, ``2 min 5 s``.

    >>> fmt_duration(0.00085), fmt_duration(1.25), fmt_duration(-0.002), fmt_duration(125)
    ('850 µs', '1.250 s', '-2.00 ms', '2 min 5.0 s')
    """
    if _missing(seconds):
        return ""
    s = float(seconds)
    if not math.isfinite(s):
        return "∞ s" if s > 0 else "-∞ s"
    size = abs(s)
    sign = "-" if s < 0 else ""
    if size == 0:
        return "0 s"
    if size < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if size < 1.0:
        return f"{s * 1e3:.2f} ms"
    if size < 100.0:
        return f"{s:.{digits}f} s"
    minutes, rest = divmod(size, 60.0)
    if minutes < 60:
        return f"{sign}{int(minutes)} min {rest:.1f} s"
    hours, minutes = divmod(minutes, 60.0)
    return f"{sign}{int(hours)} h {int(minutes)} min"


def time_scale_of(source: Any, style: TimeStyle | None = None) -> TimeScale:
    """The :class:`TimeScale` of a scheduler, clock, event log, log frame, or a number (origin).

    A frame carries its origin in ``frame.attrs["time_origin"]`` (set by
    ``EventLog.to_frame`` and :func:`~tempsched_lab.read_log`). A frame without
    it (read some other way) falls back to 0 for virtual-clock values and to its
    first time for epoch-like ones.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> time_scale_of(Scheduler(VirtualClock(start=5.0))).origin
    5.0
    """
    if isinstance(source, TimeScale):
        return source if style is None else source.with_style(style)
    if isinstance(source, (int, float)) and not isinstance(source, bool):
        return TimeScale(float(source), style)
    origin = getattr(source, "time_origin", None)
    if isinstance(origin, (int, float)) and not isinstance(origin, bool):
        return TimeScale(float(origin), style)
    clock = getattr(source, "clock", None)
    origin = getattr(clock, "origin", None)
    if isinstance(origin, (int, float)) and not isinstance(origin, bool):
        return TimeScale(float(origin), style)
    attrs = getattr(source, "attrs", None)
    if isinstance(attrs, dict) and isinstance(attrs.get(ORIGIN_ATTR), (int, float)):
        return TimeScale(float(attrs[ORIGIN_ATTR]), style)
    if attrs is not None and "t" in getattr(source, "columns", ()):
        return TimeScale(_guess_origin(source["t"]), style)
    origin = getattr(source, "origin", None)  # a clock
    if isinstance(origin, (int, float)) and not isinstance(origin, bool):
        return TimeScale(float(origin), style)
    raise TypeError(
        f"cannot tell the time origin of {type(source).__name__}: expected a Scheduler, "
        "a clock, an EventLog, a log DataFrame or a number"
    )


def _guess_origin(t: Any) -> float:
    values = [float(v) for v in t if not _missing(v)]
    if not values:
        return 0.0
    first = min(values)
    return first if abs(first) >= EPOCH_LIKE else 0.0
