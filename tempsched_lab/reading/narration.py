"""Say what a scheduler does as it happens: each new log row as a sentence, at a readable pace.

A :class:`Narrator` follows an :class:`~tempsched_lab.EventLog` from the thread
that calls :meth:`Narrator.poll` (the command line's main thread: nothing is ever
printed from the scheduler's own threads). Each new row becomes one line: its time
in the package's time language, the task's label, and the sentence the dashboard's
log panel shows for it::

      0.000 s  report          case 2 (nothing scheduled): task #0 queued, due t = 1.000 s
      0.550 s  email           task #1 started on thread ThreadPoolExecutor-0_0

A burst is throttled by the rows' own clock times (so a virtual-clock run says
the same lines as a real one): at most ``burst`` lines at one moment and ``rate``
lines a second on average. The rows left out are counted on one line before the
next line said (``... 12 rows not shown (wake 6, dispatch 6)``); the log holds
them all.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> clock = VirtualClock()
>>> s = Scheduler(clock)
>>> lines = []
>>> narrator = Narrator(s.log, lines.append)
>>> _ = s.schedule(print, at=1.0, args=("hi",), label="greet")
>>> narrator.poll()
1
>>> print(lines[0])
   0.000 s  greet           case 2 (nothing scheduled): task #0 queued, due t = 1.000 s
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..time.scale import TimeScale, time_scale_of
from .sentences import describe_row  # the log panel's own sentences (no widgets imported)

if TYPE_CHECKING:
    from ..log.eventlog import EventLog

__all__ = ["Narrator"]

#: Width of the time and label columns of a line.
_TIME_WIDTH = 10
_LABEL_WIDTH = 15


class Narrator:
    """Turns the new rows of ``log`` into lines for ``say``, throttled; see the module docstring.

    Args:
        log: the event log to follow (``scheduler.log``).
        say: called with each line, in the thread that calls :meth:`poll`.
        rate: lines a second, on average, by the rows' clock times.
        burst: lines at most at one moment.
        time_scale: how times are written (default: the log's own).
    """

    def __init__(
        self,
        log: EventLog,
        say: Callable[[str], None],
        *,
        rate: float = 20.0,
        burst: int = 40,
        time_scale: TimeScale | None = None,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate={rate!r}: expected a positive number of lines a second")
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise ValueError(f"burst={burst!r}: expected a whole number of lines, at least 1")
        self.log = log
        self.say = say
        self.rate = float(rate)
        self.burst = burst
        self.scale = time_scale if time_scale is not None else time_scale_of(log)
        self._next = 0  # the seq of the first row not seen yet
        self._tokens = float(burst)
        self._last_t: float | None = None
        self._held: collections.Counter[str] = collections.Counter()
        #: Rows said and rows left out so far.
        self.said = 0
        self.left_out = 0

    def poll(self) -> int:
        """Say the rows recorded since the last call (throttled); returns how many were said."""
        rows = self.log.rows(start=self._next)
        said = 0
        for row in rows:
            self._next = int(row["seq"]) + 1
            if self._take(float(row["t"])):
                self._flush_held()
                self.say(self.line(row))
                said += 1
            else:
                self._held[str(row["kind"])] += 1
        self.said += said
        return said

    def finish(self) -> None:
        """Say the last rows, then how many were left out since the last line said."""
        self.poll()
        self._flush_held()

    @staticmethod
    def header() -> str:
        """The column names of the lines, to say before the first one."""
        return f"{'time':>{_TIME_WIDTH}}  {'task':<{_LABEL_WIDTH}} what happened"

    def line(self, row: dict[str, Any]) -> str:
        """One row as a line: its time, its task's label, its sentence."""
        label = row.get("label")
        label = "" if label is None else str(label)
        if len(label) > _LABEL_WIDTH:
            label = label[: _LABEL_WIDTH - 1] + "…"
        time = self.scale.text(float(row["t"]))
        return f"{time:>{_TIME_WIDTH}}  {label:<{_LABEL_WIDTH}} {describe_row(row, self.scale)}"

    def _take(self, t: float) -> bool:
        """A token for a line at clock time ``t`` (a bucket of ``burst``, refilled at ``rate``)."""
        if self._last_t is not None and t > self._last_t:
            self._tokens = min(float(self.burst), self._tokens + (t - self._last_t) * self.rate)
        if self._last_t is None or t > self._last_t:
            self._last_t = t
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def _flush_held(self) -> None:
        if not self._held:
            return
        count = sum(self._held.values())
        kinds = ", ".join(f"{kind} {n}" for kind, n in self._held.most_common())
        rows = "row" if count == 1 else "rows"
        self.say(f"{'':>{_TIME_WIDTH}}  ... {count} {rows} not shown ({kinds}): the log has them")
        self.left_out += count
        self._held.clear()

    def __repr__(self) -> str:
        return f"<Narrator {self.said} rows said, {self.left_out} left out>"
