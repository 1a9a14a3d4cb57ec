"""How much of the service's interpreter the feed's readers may take: a CPU-time duty cycle.

A reader's rows are read, made into row objects and encoded in the service's own
process, under its one GIL: about 70,000 instructions a row against ~28,800 for the
``schedule()`` that recorded it (docs/benchmarks.md, "Serving a scheduler"). A reader
that followed a scheduler working flat out took a third of its throughput. The
budget makes readers **polite**: while the rest of the process is busy, the readers
**together** take at most ``share`` of the time (after work that cost ``c`` seconds of
CPU they all wait ``c * (1 - share) / share``); they fall behind, and catch up once the
service is quieter. Nothing is lost (rows wait in the log's memory or on disk, a reader
being a cursor); the lag is what the reader sees between its last ``id`` and
``/v1/moment``'s ``seq``. While the service is idle, a reader takes what it needs (a
catch-up runs at full speed).

**Bursts included.** Readers work in *turns*, one at a time for the whole feed
(:meth:`ReaderBudget.turn`, then :meth:`ReaderBudget.done`): a turn is given only once
the pause the last one earned is over, so ten readers arriving together cannot all pass
the check before any is charged (they did: ten readers catching up at once cut a busy
service to 0.07-0.09 of its rows/s for 2 s, issue 41). The feed queues its streams for
turns in arrival order (a FIFO limiter of one), so every reader gets its turn: held
back, never starved.

Busy means: the scheduler recorded more than :data:`BUSY_ROWS` rows a second over a
window of :data:`WINDOW` seconds or more (read off ``log.next_seq``, no lock) in the last
:data:`HOLD` seconds; a verdict not known yet (the first look, or one after more than
:data:`STALE` seconds without a look and more rows than one busy window holds: an average
over an idle hour would hide the burst of its last second) is "busy" until :data:`HOLD`
seconds of looking found it quiet. A
turn is charged if the service was busy when it began *or* when it ended. The process's
CPU clock would be the obvious signal, but the feed's own sending (on the event loop)
counts there too: with the other threads' CPU share as the signal, an idle service's
catch-up ran at 15,866 rows/s instead of 42,365.

>>> budget = ReaderBudget(0.1, clock=iter([0.0, 0.1, 0.1, 0.1]).__next__)
>>> budget.busy(next_seq=0)  # the first look: nothing to compare with, so not idle
True
>>> budget.busy(next_seq=5_000)  # 5,000 rows in the 0.1 s since: 50,000 a second
True
>>> round(budget.spent(0.002, busy=True), 3)  # 2 ms of work: the readers wait 9x that
0.018
>>> round(budget.turn(5_000), 3)  # the next turn, 18 ms later
0.018
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["BUSY_ROWS", "HOLD", "SHARE", "ReaderBudget"]

#: The readers' share of the interpreter while the service is busy (``asgi_app(share=...)``).
SHARE = 0.02
#: Rows a second the scheduler records above which it counts as busy: below it, its
#: ``schedule()`` calls take under ~6 % of a core (28,800 instructions a row), and a
#: reader's work costs it no throughput (only the GIL's switch interval of lateness).
BUSY_ROWS = 2_000.0
#: Seconds over which the rate of rows is measured (at least).
WINDOW = 0.02
#: A look more than this many seconds after the last one starts a new window.
STALE = 0.25
#: Seconds the rate must stay under ``busy_rows`` before the service counts as idle: one
#: quiet 20 ms window proves little on a loaded machine (the scheduler's thread may just
#: not have been given a core), and an idle verdict lets the readers take what they need.
HOLD = 0.25


class ReaderBudget:
    """A duty cycle for a feed's readers, taken in turns (see the module docstring); thread-safe.

    Args:
        share: the readers' share of the time while the service is busy, in (0, 1];
            ``1.0``: never held back.
        busy_rows: rows a second the scheduler records above which it is busy.
        clock: the wall clock (for tests).

    >>> budget = ReaderBudget(0.5)
    >>> budget.share
    0.5
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
        self._busy = self.share < 1.0  # not known yet: not idle
        self._busy_at = 0.0  # the clock reading of the last look that found it busy
        self._turn = False  # a reader's turn is under way (between turn() and done())
        #: the service was busy when the turn under way began (its reads are then small)
        self.turn_busy = False
        #: seconds the readers were held back so far
        self.held_back = 0.0
        #: pieces of work charged or counted (reads, sends)
        self.batches = 0
        #: the readers' CPU seconds counted while the service was busy, and in all
        self.cpu_busy = 0.0
        self.cpu = 0.0

    def pause(self) -> float:
        """Seconds before the readers' next turn may begin (0: now)."""
        return max(0.0, self._until - self._clock())

    def busy(self, next_seq: int) -> bool:
        """Whether the scheduler is busy: it recorded more than ``busy_rows`` rows a second
        over the last :data:`WINDOW` seconds or more (the log's ``next_seq`` is now
        ``next_seq``). Streams look at every poll and every turn, so the verdict is at most a
        poll old; it says idle only after :data:`HOLD` seconds of quiet looks."""
        with self._lock:
            return self._look(self._clock(), next_seq)

    def _look(self, now: float, next_seq: int) -> bool:
        if self.share >= 1.0:
            return False
        mark = self._mark
        if mark is None or now - mark[0] > STALE:
            # not looked at for a while: an average over it would hide a burst at its end,
            # unless so few rows came that no window of it can have been busy
            if mark is None or next_seq - mark[1] > self.busy_rows * WINDOW:
                self._busy_at = now  # not known: not idle
            self._mark = (now, next_seq)
        else:
            wall = now - mark[0]
            if wall >= WINDOW:
                if next_seq - mark[1] > self.busy_rows * wall:
                    self._busy_at = now
                self._mark = (now, next_seq)
            elif next_seq - mark[1] > self.busy_rows * WINDOW:
                self._busy_at = now  # that many rows already: busy, say it now
        self._busy = now - self._busy_at < HOLD
        return self._busy

    def turn(self, next_seq: int) -> float:
        """Ask for the readers' turn (the log's ``next_seq`` is ``next_seq``): ``0.0``, it is
        the caller's until :meth:`done` (or :meth:`release`); else the seconds to wait
        before asking again (the pause the readers earned, or another reader's turn).

        The check and the taking are one step under the budget's lock: readers asking
        together get one turn, not one each."""
        with self._lock:
            now = self._clock()
            busy = self._look(now, next_seq)
            if self._turn:
                return WINDOW  # another reader works now: its charge decides the next pause
            if busy and self._until > now:
                return self._until - now
            self._turn, self.turn_busy = True, busy
            return 0.0

    def done(self, seconds: float, next_seq: int) -> float:
        """End the caller's turn, whose work cost ``seconds`` of its thread's CPU time (the
        log's ``next_seq`` is now ``next_seq``); returns the pause this imposes on every
        reader (0: none). Charged if the service was busy when the turn began or now."""
        with self._lock:
            began_busy, self._turn = self.turn_busy, False
            busy = self._look(self._clock(), next_seq) or began_busy
            return self._charge(seconds, busy)

    def release(self) -> None:
        """End the caller's turn without a charge (its work never ran: an error, a stop)."""
        with self._lock:
            self._turn = False

    def spent(self, seconds: float, busy: bool) -> float:
        """Work outside a turn (sending a batch on the event loop) cost ``seconds`` of its
        thread's CPU time while the service was ``busy``; returns the pause this imposes on
        the readers (0: none). Charged if the service was busy then or is now."""
        with self._lock:
            return self._charge(seconds, busy or self._busy)

    def _charge(self, seconds: float, busy: bool) -> float:
        self.batches += 1
        self.cpu += seconds
        if not busy or self.share >= 1.0:
            return 0.0  # the scheduler is quiet: the reader takes what it needs
        self.cpu_busy += seconds
        wait = seconds * (1.0 - self.share) / self.share
        self._until = max(self._until, self._clock()) + wait
        self.held_back += wait
        return wait
