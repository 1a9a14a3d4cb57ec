"""``time.time()`` values on a real clock's monotonic scale, following wall-clock steps.

:class:`~tempsched_lab.RealClock` converts wall-clock times (``at=`` a
``datetime``, the compat facade's ``absolute_time``) through a
:class:`WallScale`, so that equal wall times map to equal due times (duplicates
are found) while a real step of the wall clock is still followed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["WallScale"]


class ReadsNow(Protocol):
    """What a :class:`WallScale` reads of its clock (every :class:`~tempsched_lab.time.clock.Clock`
    has both; declared here so that the scale needs nothing of the clock module)."""

    @property
    def monotonic_based(self) -> bool: ...

    def now(self) -> float: ...


#: Wall-clock steps smaller than this are not followed: the offset stays put, so that equal
#: ``absolute_time`` values keep mapping to equal due times (duplicates, shared time points).
_WALL_STEP = 2e-4
#: A careful offset reading brackets the clock read between two wall reads closer than this.
_BRACKET = 1e-4


class WallScale:
    """Converts ``time.time()`` values to a real clock's monotonic scale.

    The offset between the two scales is checked at each call (a wall-clock step, NTP or a
    resume from suspend, is followed from the next call on) but only *changes* when it moved
    by more than :data:`_WALL_STEP`: re-reading it exactly each time would give the same
    ``absolute_time`` a slightly different due time at each call (two clock reads are never
    simultaneous), and duplicates would no longer be found. The wall clock is read before
    the monotonic one, so a preemption between the two errs late, never early.

    ``read`` is the cheapest monotonic reading of the clock: ``time.monotonic`` for a
    :class:`~tempsched_lab.RealClock` (whose ``now()`` is a constant plus it; the C call
    instead of the Python method saves ~630 of the ~2,400 instructions a conversion cost,
    counted with ``benchmarks/instructions.py``), else the clock's own ``now``.
    """

    __slots__ = ("_base", "high", "low", "offset", "read", "skew")

    def __init__(self, clock: ReadsNow) -> None:
        self.read: Callable[[], float]
        if clock.monotonic_based:
            self.read = time.monotonic
            m = time.monotonic()
            self._base = clock.now() - m  # read after m: errs late, never early
        else:
            self.read = clock.now
            self._base = 0.0
        self._adopt(self._measure()[0])

    def _adopt(self, skew: float) -> None:
        #: ``read() - time.time()`` as last adopted, and the band in which it is kept
        self.skew, self.low, self.high = skew, skew - _WALL_STEP, skew + _WALL_STEP
        #: what a ``time.time()`` value adds to become a value on the clock's scale
        self.offset = self._base + skew

    def _measure(self) -> tuple[float, float]:
        """The skew read carefully, and the uncertainty of that reading (late-biased)."""
        best_skew, best_span = 0.0, math.inf
        for _ in range(8):
            w1 = time.time()
            r = self.read()
            w2 = time.time()
            span = w2 - w1
            if span < best_span:
                best_skew, best_span = r - w1, span
            if span < _BRACKET:
                break
        return best_skew, best_span

    def resync(self) -> None:
        """Re-read the skew carefully; adopt it if the wall clock stepped (not a preemption)."""
        measured, span = self._measure()
        if abs(measured - self.skew) > _WALL_STEP + span:
            self._adopt(measured)

    def to_clock(self, wall: float) -> float:
        """``wall`` (a ``time.time()`` value) on the clock's scale, with the current offset."""
        w = time.time()  # wall first: a preemption before the next read errs late
        if not self.low <= self.read() - w <= self.high:
            self.resync()
        return wall + self.offset
