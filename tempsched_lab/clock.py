"""Clocks: where *now* comes from and how the scheduler waits for the future.

The scheduler never calls ``time.*`` itself. A :class:`RealClock` reads
``time.monotonic()`` (so wall-clock jumps never move a deadline) and reports it
on an epoch-like scale; a :class:`VirtualClock` moves only when asked
(:meth:`~VirtualClock.step`, :meth:`~VirtualClock.advance`,
:meth:`~VirtualClock.run_until`) or plays at a chosen ``rate``, which makes
every scenario deterministic and instant.

>>> clock = VirtualClock()
>>> clock.now()
0.0
>>> clock.advance(2.5)
2.5
"""

from __future__ import annotations

import math
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .scheduler import Scheduler

__all__ = ["Clock", "LoopError", "RealClock", "VirtualClock"]


class Clock(Protocol):
    """What the scheduler needs from a clock."""

    #: True for clocks that move only when driven (no worker thread is started).
    virtual: bool

    #: The clock value users see as ``0.000 s`` (see :mod:`tempsched_lab.timescale`).
    origin: float

    def now(self) -> float:
        """The current time in seconds on this clock's scale."""
        ...

    def from_datetime(self, when: datetime) -> float:
        """Convert a ``datetime`` (aware, or naive = local time) to this clock's scale."""
        ...


class RealClock:
    """Monotonic time on an epoch-like scale, immune to wall-clock jumps.

    ``now()`` is the wall time when the clock was created plus the monotonic
    time elapsed since, so its values read like ``time.time()`` but deadlines
    computed from them are not moved by NTP steps or a changed system clock.

    >>> clock = RealClock()
    >>> abs(clock.now() - time.time()) < 60
    True
    """

    virtual = False

    def __init__(self) -> None:
        self._epoch = time.time()
        self._mono = time.monotonic()
        #: ``now()`` when the clock was created: shown to users as ``0.000 s``.
        self.origin = self._epoch

    def now(self) -> float:
        """Seconds on the epoch-like scale."""
        return self._epoch + (time.monotonic() - self._mono)

    def from_datetime(self, when: datetime) -> float:
        """Wall time ``when`` as a value on this clock, converted once at the call."""
        return self.now() + (when.timestamp() - time.time())

    def __repr__(self) -> str:
        return f"RealClock(now={self.now():.6f})"


class LoopError(RuntimeError):
    """A virtual clock could not make progress: endless zero-delay or periodic work."""


class VirtualClock:
    """Simulated time that moves only when asked, one due group at a time.

    Attach one or more schedulers by passing this clock to them. Each due group
    fires with :meth:`now` equal to its own due time; work scheduled with zero
    delay during a step runs at the next step. ``rate`` > 0 plays the clock in
    the background at that many virtual seconds per real second; 0 (the
    default) leaves it to manual stepping.

    Args:
        start: the initial time (seconds; 0.0 reads as 1970-01-01 UTC in datetime columns).
        rate: virtual seconds per real second while playing; 0 means manual.
        max_steps_at_same_time: how many consecutive steps without time advancing
            count as an endless loop of zero-delay work (raises :class:`LoopError`).

    >>> from tempsched_lab import Scheduler
    >>> clock = VirtualClock()
    >>> s = Scheduler(clock)
    >>> _ = s.schedule(lambda: print("tick", clock.now()), delay=1.5)
    >>> clock.run_until_idle()
    tick 1.5
    1.5
    """

    virtual = True

    def __init__(
        self, start: float = 0.0, *, rate: float = 0.0, max_steps_at_same_time: int = 10_000
    ) -> None:
        self._now = _finite("start", start)
        #: ``start``: shown to users as ``0.000 s`` (so ``at=2.0`` reads ``2.000 s``).
        self.origin = self._now
        self._schedulers: list[Scheduler] = []
        self._lock = threading.RLock()
        self._max_same = _positive_int("max_steps_at_same_time", max_steps_at_same_time)
        self._same_count = 0
        self._rate = 0.0
        self._player: threading.Thread | None = None
        self._stop_play = threading.Event()
        self.play_error: BaseException | None = None
        if rate:
            self.rate = rate

    # -- reading ------------------------------------------------------------------
    def now(self) -> float:
        """The current virtual time."""
        return self._now

    def from_datetime(self, when: datetime) -> float:
        """``when.timestamp()``: virtual values are read as epoch seconds."""
        return when.timestamp()

    def next_time(self) -> float | None:
        """When the next due group of any attached scheduler fires, or ``None``."""
        times = [t for s in self._schedulers if (t := s._next_fire_time()) is not None]
        return min(times) if times else None

    # -- attaching ------------------------------------------------------------------
    def _attach(self, scheduler: Scheduler) -> None:
        with self._lock:
            self._schedulers.append(scheduler)

    def _detach(self, scheduler: Scheduler) -> None:
        with self._lock:
            if scheduler in self._schedulers:
                self._schedulers.remove(scheduler)

    # -- driving ------------------------------------------------------------------
    def step(self) -> float | None:
        """Fire the next due group; returns its time, or ``None`` if nothing is pending."""
        with self._lock:
            t = self.next_time()
            if t is None:
                return None
            self._move_to(t)
            for scheduler in list(self._schedulers):
                scheduler._fire_due(self._now)
            return t

    def _move_to(self, t: float) -> None:
        if t <= self._now:
            self._same_count += 1
            if self._same_count > self._max_same:
                self._same_count = 0
                raise LoopError(
                    f"{self._max_same} steps at t={self._now!r} without time advancing: "
                    "a task keeps scheduling zero-delay work. Give it a positive delay, "
                    "or raise max_steps_at_same_time if this is intended."
                )
        else:
            self._same_count = 0
            self._now = t

    def run_until(self, t: float) -> float:
        """Fire every group due up to and including ``t``, each at its own time; end at ``t``."""
        t = _finite("t", t)
        with self._lock:
            if t < self._now:
                raise ValueError(f"t={t!r} is before now={self._now!r}: time can't go backwards")
            while (nxt := self.next_time()) is not None and nxt <= t:
                self.step()
            self._now = max(self._now, t)
            return self._now

    def advance(self, dt: float) -> float:
        """Move time forward by ``dt`` seconds, firing what falls due; returns the new now."""
        dt = _finite("dt", dt)
        if dt < 0:
            raise ValueError(f"dt={dt!r} is negative: time can't go backwards")
        with self._lock:
            return self.run_until(self._now + dt)

    def run_until_idle(self, max_steps: int = 1_000_000) -> float:
        """Step until nothing is pending; returns the final time.

        Raises :class:`LoopError` after ``max_steps`` steps (periodic tasks never
        let a clock go idle: use :meth:`run_until` for them).
        """
        max_steps = _positive_int("max_steps", max_steps)
        with self._lock:
            for _ in range(max_steps):
                if self.step() is None:
                    return self._now
            raise LoopError(
                f"still busy after max_steps={max_steps} steps at t={self._now!r}: periodic "
                "tasks never let the clock go idle; use run_until(t) or cancel them"
            )

    # -- playing ------------------------------------------------------------------
    @property
    def rate(self) -> float:
        """Virtual seconds per real second while playing; 0 = manual (paused)."""
        return self._rate

    @rate.setter
    def rate(self, value: float) -> None:
        value = _finite("rate", value)
        if value < 0:
            raise ValueError(f"rate={value!r} must be >= 0 (0 pauses the clock)")
        self._rate = value
        if value > 0 and (self._player is None or not self._player.is_alive()):
            self._stop_play.clear()
            self._player = threading.Thread(
                target=self._play, name="tempsched-virtual-clock", daemon=True
            )
            self._player.start()
        elif value == 0:
            self.pause()

    def play(self, rate: float = 1.0) -> None:
        """Start playing at ``rate`` virtual seconds per real second."""
        self.rate = rate

    def pause(self) -> None:
        """Stop playing (and wait for the player thread unless called from it)."""
        self._rate = 0.0
        self._stop_play.set()
        player = self._player
        if player is not None and player is not threading.current_thread():
            player.join()
        self._player = None

    def _play(self, interval: float = 0.01) -> None:
        last = time.monotonic()
        while not self._stop_play.wait(interval):
            real = time.monotonic()
            rate = self._rate
            if rate <= 0:
                break
            try:
                self.run_until(self._now + (real - last) * rate)
            except BaseException as exc:  # keep it visible; stop playing
                self.play_error = exc
                self._rate = 0.0
                break
            last = real

    def __repr__(self) -> str:
        return f"VirtualClock(now={self._now!r}, rate={self._rate!r})"


def _finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}={value!r}: expected a real number (int or float)")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name}={value!r}: expected a finite number")
    return result


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}={value!r}: expected a positive integer")
    return value
