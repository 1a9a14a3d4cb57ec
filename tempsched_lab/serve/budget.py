"""How much of the service's interpreter the feed's readers may take: a CPU-time duty cycle.

A reader's rows are read, made into row objects and encoded in the service's own
process, under its one GIL: about 70,000 instructions a row against ~28,800 for the
``schedule()`` that recorded it (docs/benchmarks.md, "Serving a scheduler"). A reader
that followed a scheduler working flat out took a third of its throughput. The
budget makes readers **polite**: while the rest of the process is busy, the readers
together take at most ``share`` of the time (after a batch that cost ``c`` seconds of
CPU they wait ``c * (1 - share) / share``); they fall behind, and catch up once the
service is quieter. Nothing is lost (rows wait in the log's memory or on disk, a reader
being a cursor); the lag is what the reader sees between its last ``id`` and
``/v1/moment``'s ``seq``. While the service is idle, a reader takes what it needs (a
catch-up runs at full speed).

Busy means: the scheduler recorded more than :data:`BUSY_ROWS` rows a second since the
readers' last batch (read off ``log.next_seq``, no lock). The process's CPU clock
would be the obvious signal, but the feed's own sending (on the event loop) counts
there too: with the other threads' CPU share as the signal, an idle service's
catch-up ran at 15,866 rows/s instead of 42,365. One budget per feed, shared by its
streams: N readers take ``share`` together, not N times it.

>>> budget = ReaderBudget(0.1, clock=iter([0.0, 1.0, 1.0]).__next__)
>>> budget.busy(next_seq=0)  # the first look: nothing to compare with yet
False
>>> budget.busy(next_seq=5_000)  # 5,000 rows in the second since
True
>>> round(budget.spent(0.002, busy=True), 3)  # a batch of 2 ms: the readers wait 9x that
0.018
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["BUSY_ROWS", "SHARE", "ReaderBudget"]

#: The readers' share of the interpreter while the service is busy (``asgi_app(share=...)``).
SHARE = 0.02
#: Rows a second the scheduler records above which it counts as busy: below it, its
#: ``schedule()`` calls take under ~6 % of a core (28,800 instructions a row), and a
#: reader's work costs it no throughput (only the GIL's switch interval of lateness).
BUSY_ROWS = 2_000.0
#: Seconds over which the rate of rows is measured (at least).
WINDOW = 0.02


class ReaderBudget:
    """A duty cycle for a feed's readers (see the module docstring); thread-safe.

    Args:
        share: the readers' share of the time while the service is busy, in (0, 1];
            ``1.0``: never held back.
        busy_rows: rows a second the scheduler records above which it is busy.
        clock: the wall clock (for tests).
    """

    def __init__(
        self,
        share: float = SHARE,
        *,
        busy_rows: float = BUSY_ROWS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
            raise ValueError(f"share={share!r}: expected a share of the time in (0, 1]")
        self.share = float(share)
        self.busy_rows = float(busy_rows)
        self._clock = clock
        self._lock = threading.Lock()
        self._until = 0.0  # no reader works before this clock reading
        self._mark: tuple[float, int] | None = None  # (wall, the log's next seq) at a look
        self._busy = False
        #: seconds the readers were held back so far; pieces of work charged (reads, sends)
        self.held_back = 0.0
        self.batches = 0

    def pause(self) -> float:
        """Seconds a reader must wait before its next batch (0: go on)."""
        return max(0.0, self._until - self._clock())

    def busy(self, next_seq: int) -> bool:
        """Whether the scheduler is busy: it recorded more than ``busy_rows`` rows a second
        over the last :data:`WINDOW` seconds or more (the log's ``next_seq`` is now
        ``next_seq``). Streams look at every poll, so the verdict is at most a poll old; a
        busy service's readers read small batches (the first costs it one ``batch`` at most)."""
        with self._lock:
            now = self._clock()
            mark = self._mark
            if mark is None:
                self._mark = (now, next_seq)
                return self._busy
            wall = now - mark[0]
            if wall >= WINDOW:
                self._busy = self.share < 1.0 and next_seq - mark[1] > self.busy_rows * wall
                self._mark = (now, next_seq)
            elif next_seq - mark[1] > self.busy_rows * WINDOW:
                self._busy = self.share < 1.0  # that many rows already: busy, say it now
            return self._busy

    def spent(self, seconds: float, busy: bool) -> float:
        """A reader's work cost ``seconds`` of its thread's CPU time while the service was
        ``busy`` (reading and encoding a batch in a worker thread, then sending it on the
        event loop: both count); returns the pause this imposes on the readers (0: none)."""
        with self._lock:
            self.batches += 1
            if not busy:
                return 0.0  # the scheduler is quiet: the reader takes what it needs
            wait = seconds * (1.0 - self.share) / self.share
            self._until = max(self._until, self._clock()) + wait
            self.held_back += wait
            return wait
