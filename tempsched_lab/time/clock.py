"""Clocks: where *now* comes from, and what drives a scheduler when work falls due.

The scheduler never calls ``time.*`` itself. A clock gives it *now* and, when
the scheduler attaches, a :class:`Driver`: the thing that notices that work is
due and asks the scheduler to fire it. The driver is given the scheduler's
clock port (:class:`~tempsched_lab.core.ports.ClockPort`), a small :class:`Drivable`
(when is the next group due, fire what is due now), and calls nothing else,
so a new kind of clock needs no change in the scheduler.

* :class:`RealClock` reads ``time.monotonic()`` (wall-clock jumps never move a
  deadline) on an epoch-like scale; its driver is a daemon worker thread that
  waits for the next due time and is woken when an earlier one arrives.
* :class:`VirtualClock` moves only when asked (:meth:`~VirtualClock.step`,
  :meth:`~VirtualClock.advance`, :meth:`~VirtualClock.run_until`) or plays at
  a chosen ``rate``; there is no worker thread, which makes every scenario
  deterministic and instant.

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
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .wall import WallScale

__all__ = [
    "Clock",
    "Drivable",
    "Driver",
    "GroupFirer",
    "LoopError",
    "RealClock",
    "ThreadDriver",
    "VirtualClock",
]

_WAIT_MAX = min(threading.TIMEOUT_MAX, 3600.0)  # a worker re-checks at least hourly

#: A real clock's worker stops sleeping this long before a due time and watches the clock
#: for the rest: lateness p50 with the inline executor falls from 160 µs (mostly the OS
#: wake-up delay) to 21 µs, with the pool from 207 to 69 µs (benchmarks/run.py, Dec 1 2026;
#: the bare Event.wait floor: 133 µs), for at most 0.25 ms of one core per due time.
#: ``RealClock(spin=0)`` turns it off.
DEFAULT_SPIN = 0.00025


class Drivable(Protocol):
    """What a clock's driver needs from what it drives (its side of the clock protocol).

    A scheduler attaches its :class:`~tempsched_lab.core.ports.ClockPort` (never itself: its
    public names are its users'); the lab's pool attaches a
    :class:`~tempsched_lab.lab.pool.Calendar`. The first four members are required; the
    last two have defaults that a target gets by naming this class as a base (``class
    Calendar(Drivable): ...``), as every built-in target does. A clock calls only these
    members: a new clock needs nothing else.
    """

    def next_fire_time(self) -> float | None:
        """When the earliest pending group fires, or ``None`` when nothing is pending."""
        ...

    def fire_due(self, now: float) -> None:
        """Dispatch every group due at ``now`` (runs may happen right here, inline)."""
        ...

    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        """A driver's wait ended: ``notified`` (an earlier head arrived) or timed out."""
        ...

    def driver_died(self, error: BaseException) -> None:
        """The driver failed (a bug): the scheduler must refuse new work, loudly."""
        ...

    def fire_next(self, until: float, move: Callable[[float], float | None], limit: int) -> int:
        """Fire the earliest group while it is due by ``until``, at most ``limit`` groups,
        calling ``move(t)`` with each group's time first (it returns the clock's time then,
        or ``None``: nothing may be fired now); returns how many groups fired.

        A virtual clock driving one target alone asks it for a whole window this way (no
        query across targets per group). The default asks :meth:`next_fire_time` and
        calls :meth:`fire_due` per group; the scheduler finds its groups itself.
        """
        fired = 0
        while fired < limit:
            t = self.next_fire_time()
            if t is None or t > until:
                break
            now = move(t)
            if now is None:
                break
            self.fire_due(now)
            fired += 1
        return fired

    def periodic_runs_until(self, t: float) -> int:
        """At least how many runs the target's periodic tasks alone have due up to ``t``
        (a virtual clock refuses a window that would exceed ``max_steps``); default 0."""
        return 0


#: The name of :class:`Drivable` before ``fire_next`` was declared on it (kept for imports).
GroupFirer = Drivable


class Driver(Protocol):
    """Drives one scheduler for a clock (returned by :meth:`Clock.attach`).

    The members with a value or a body are optional: a driver gets them by naming this
    class as a base, as every built-in driver does.
    """

    #: True when a thread waits for due times (``wait_idle`` can block for work to finish).
    blocking: bool
    #: the thread that fires, if the driver has one (``Scheduler.worker_thread``)
    thread: threading.Thread | None = None
    #: True when the driver can stop without telling (an event loop closed under it):
    #: the scheduler then asks :meth:`lost` before each request and while it waits
    can_be_lost: bool = False

    def wake(self) -> bool:
        """The head moved earlier: recompute the wait. True if a waiting thread was notified."""
        ...

    def stop(self) -> None:
        """Stop driving (idempotent); the scheduler is closing."""
        ...

    def join(self, timeout: float | None) -> None:
        """Wait for the driver's thread (if any) to end."""
        ...

    def owns_current_thread(self) -> bool:
        """True when called from the driver's own thread."""
        ...

    def lost(self) -> BaseException | None:
        """Why the driver can no longer fire (it stopped without telling), or ``None``."""
        return None


@runtime_checkable
class Clock(Protocol):
    """What the scheduler needs from a clock (``Scheduler(clock)`` checks it is one).

    ``origin`` and :meth:`inherited_by_fork` have defaults, which a clock gets by naming
    this class as a base (``class JumpClock(Clock): ...``), as every built-in clock does.
    """

    #: True for clocks that move only when driven (runs default to the inline executor).
    virtual: bool

    #: The clock value users see as ``0.000 s`` (see :mod:`tempsched_lab.time.scale`).
    origin: float = 0.0

    #: True when ``now()`` is ``time.monotonic()`` plus a constant, so that a wall scale
    #: may read the C call instead of the method (:class:`~tempsched_lab.time.wall.WallScale`).
    monotonic_based: bool = False

    def now(self) -> float:
        """The current time in seconds on this clock's scale."""
        ...

    def from_datetime(self, when: datetime) -> float:
        """Convert a ``datetime`` (aware, or naive = local time) to this clock's scale."""
        ...

    def attach(self, target: Drivable, name: str) -> Driver:
        """Start driving ``target`` (a scheduler's clock port); returns the driver the
        scheduler wakes and stops."""
        ...

    def inherited_by_fork(self) -> None:
        """Called in the child of ``os.fork()`` on a scheduler's clock: renew what a thread
        of the parent may hold (locks, a player thread). Default: nothing to renew."""
        return None


class ThreadDriver(Driver):
    """A daemon worker thread that waits for the next due time of one scheduler.

    The no-lost-wake-up rule: the worker clears ``_pending_wake`` *before* it
    reads the next fire time, and waits only if no :meth:`wake` happened since.
    A ``wake`` that follows an insert the worker did not see sets the flag, so the
    worker re-reads instead of sleeping past the new head. The driver's small
    lock is never held while calling into the scheduler (whose lock is held by
    callers of :meth:`wake`), so the two locks cannot deadlock.
    """

    blocking = True

    def __init__(self, clock: RealClock, target: Drivable, name: str) -> None:
        self._clock = clock
        self._target = target
        self._cond = threading.Condition(threading.Lock())
        self._pending_wake = False
        self._waiting = False
        self._stopped = False
        self.thread: threading.Thread = threading.Thread(target=self._work, name=name, daemon=True)
        self.thread.start()

    def wake(self) -> bool:
        with self._cond:
            self._pending_wake = True
            if self._waiting:
                self._cond.notify()
                return True
            return False

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def join(self, timeout: float | None) -> None:
        if self.thread is not threading.current_thread():
            self.thread.join(timeout)

    def owns_current_thread(self) -> bool:
        return self.thread is threading.current_thread()

    def _work(self) -> None:
        target, cond, clock = self._target, self._cond, self._clock
        spin = clock.spin
        try:
            while True:
                with cond:
                    if self._stopped:
                        return
                    self._pending_wake = False
                now = clock.now()
                nxt = target.next_fire_time()
                if nxt is not None and nxt <= now:
                    target.fire_due(now)
                    continue
                if nxt is not None and nxt - now <= spin:
                    self._watch_clock(nxt)
                    continue  # due now (or woken: an earlier head, a stop): read again
                wait = None if nxt is None else min(nxt - now - spin, _WAIT_MAX)
                with cond:
                    if self._stopped:
                        return
                    if self._pending_wake:
                        continue
                    self._waiting = True
                    try:
                        notified = cond.wait(wait)
                    finally:
                        self._waiting = False
                    if self._stopped:
                        return
                target.woke(clock.now(), notified, wait)
        except BaseException as exc:  # a bug: made loud, never silent
            target.driver_died(exc)
            raise

    def _watch_clock(self, deadline: float) -> None:
        """The last stretch before a due time: read the clock until it is reached.

        A timed wait of the OS wakes this thread ~130 µs after its deadline (p50
        on the 2-core CI machine, p99 ~160 µs); this loop reaches ``deadline``
        within ~1 µs. It holds the GIL, at most ``clock.spin`` seconds per due
        time, and gives up at once when :meth:`wake` or :meth:`stop` is called.
        """
        now = self._clock.now
        while now() < deadline and not (self._pending_wake or self._stopped):
            pass


class RealClock(Clock):
    """Monotonic time on an epoch-like scale, immune to wall-clock jumps.

    ``now()`` is the wall time when the clock was created plus the monotonic
    time elapsed since, so its values read like ``time.time()`` but deadlines
    computed from them are not moved by NTP steps or a changed system clock.

    Args:
        spin: seconds before each due time from which the worker thread reads
            the clock in a loop instead of sleeping, so that runs start within
            a few microseconds of their due time rather than after the OS's
            wake-up delay (~0.13 ms here). Costs at most ``spin`` of one core,
            holding the GIL, per due time; ``0`` always sleeps.

    >>> clock = RealClock()
    >>> abs(clock.now() - time.time()) < 60
    True
    >>> RealClock(spin=0).spin
    0.0
    """

    virtual = False
    #: ``now()`` is a constant plus ``time.monotonic()`` (a wall scale may read the latter)
    monotonic_based = True

    def __init__(self, spin: float = DEFAULT_SPIN) -> None:
        if isinstance(spin, bool) or not isinstance(spin, (int, float)) or not 0 <= spin <= 0.01:
            raise ValueError(
                f"spin={spin!r}: expected seconds between 0 and 0.01 (0: always sleep)"
            )
        #: Seconds before a due time from which the worker watches the clock instead of
        #: sleeping (see :data:`DEFAULT_SPIN`).
        self.spin = float(spin)
        self._epoch = time.time()
        self._mono = time.monotonic()
        #: ``now()`` when the clock was created: shown to users as ``0.000 s``.
        self.origin = self._epoch
        self._wall: WallScale | None = None  # made on first use

    def now(self) -> float:
        """Seconds on the epoch-like scale."""
        return self._epoch + (time.monotonic() - self._mono)

    def from_datetime(self, when: datetime) -> float:
        """Wall time ``when`` as a value on this clock (see :meth:`from_wall`)."""
        return self.from_wall(when.timestamp())

    def from_wall(self, seconds: float) -> float:
        """A ``time.time()`` value as a value on this clock.

        The offset between the wall clock and this monotonic scale is checked at
        each call, so that after a wall-clock step (NTP, resume from suspend)
        "at 12:00:05" still means that; it only changes when the wall clock really
        stepped (more than 0.2 ms), so equal wall times give equal due times
        (duplicates are found). The wall clock is read first: a thread switch
        between the two reads errs late, never early.
        """
        scale = self._wall
        if scale is None:
            from .wall import WallScale

            scale = self._wall = WallScale(self)
        return scale.to_clock(seconds)

    def attach(self, target: Drivable, name: str) -> ThreadDriver:
        """Start a daemon worker thread that fires ``target``'s groups when they fall due."""
        return ThreadDriver(self, target, name)

    def __repr__(self) -> str:
        return f"RealClock(origin={self.origin:.6f})"


_UNLIMITED = 1 << 62
#: Groups a window fires before it checks that the rest fits in its ``max_steps``.
_CHECK_AFTER = 10_000
#: Groups the player fires between two looks at a pause or stop (~20 ms with the log on).
_PLAY_BATCH = 1_000
#: The longest the player works on one slice before it looks again (a rate it cannot keep).
_PLAY_SLICE_S = 0.05


class LoopError(RuntimeError):
    """A virtual clock could not make progress: endless zero-delay or periodic work."""


class _VirtualDriver(Driver):
    """A virtual clock's handle on one attached scheduler (no thread: the clock steps it)."""

    blocking = False

    def __init__(self, clock: VirtualClock, target: Drivable) -> None:
        self._clock = clock
        self.target = target

    def wake(self) -> bool:
        return False  # nobody waits: the next step reads the new head

    def stop(self) -> None:
        self._clock._detach(self)

    def join(self, timeout: float | None) -> None:
        return None

    def owns_current_thread(self) -> bool:
        return False


class VirtualClock(Clock):
    """Simulated time that moves only when asked, one due group at a time.

    Attach one or more schedulers by passing this clock to them. Each due group
    fires with :meth:`now` equal to its own due time; work scheduled with zero
    delay during a step runs at the next step. ``rate`` > 0 plays the clock in
    the background at that many virtual seconds per real second; 0 (the
    default) leaves it to manual stepping. A task can let virtual time pass
    while it runs with :meth:`elapse` (runs "take time" without real waiting).

    Args:
        start: the initial time (seconds; shown to users as ``0.000 s``; read as
            epoch seconds where a date is needed, so ``start=datetime(...).timestamp()``
            starts the simulation on that date).
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
        # The attached schedulers: a tuple replaced whole under ``_attach_lock`` (never
        # changed in place), so a reader takes a consistent set with one attribute read.
        self._drivers: tuple[_VirtualDriver, ...] = ()
        # A leaf lock: held only to replace ``_drivers``, never while calling anything. A
        # scheduler attaches and detaches (``shutdown``) holding its own lock, and the
        # stepping thread holds ``_lock`` while it calls into schedulers: were detaching
        # to take ``_lock``, the two would wait for each other for good (issue 32).
        self._attach_lock = threading.Lock()
        # The step lock: one thread moves the clock and fires at a time. Lock order:
        # ``_lock``, then a scheduler's lock, then leaf locks; never the other way round.
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

    def from_wall(self, seconds: float) -> float:
        """Wall-clock seconds are virtual seconds (identity)."""
        return seconds

    def next_time(self) -> float | None:
        """When the next due group of any attached scheduler fires, or ``None``."""
        times = [t for d in self._drivers if (t := d.target.next_fire_time()) is not None]
        return min(times) if times else None

    # -- attaching ------------------------------------------------------------------
    def attach(self, target: Drivable, name: str = "") -> _VirtualDriver:
        """Drive ``target`` from this clock's steps (no thread).

        Never waits for a step in progress (only the leaf lock is taken): a scheduler
        made while the clock plays joins from the next group on.
        """
        driver = _VirtualDriver(self, target)
        with self._attach_lock:
            self._drivers = (*self._drivers, driver)
        return driver

    def _detach(self, driver: _VirtualDriver) -> None:
        """Stop driving ``driver``'s target; called by a scheduler's shutdown holding its
        own lock, so it takes only the leaf lock (see ``__init__``)."""
        with self._attach_lock:
            self._drivers = tuple(d for d in self._drivers if d is not driver)

    # -- driving ------------------------------------------------------------------
    def step(self) -> float | None:
        """Fire the next due group; returns its time, or ``None`` if nothing is pending."""
        with self._lock:
            t = self.next_time()
            if t is None:
                return None
            self._fire_at(t)
            return t

    def _fire_at(self, t: float) -> None:
        """Move to ``t`` and let every attached target fire what is due then."""
        self._move_to(t)
        now = self._now
        for driver in self._drivers:
            driver.target.fire_due(now)

    def _move_alone(self, t: float) -> float | None:
        """``move`` for a lone target's ``fire_next``: :meth:`_move_to` ``t`` and return the
        time; or ``None`` (not moved) once another target is attached: the clock's loop
        takes over."""
        return self._move_to(t) if len(self._drivers) == 1 else None

    def _move_to(self, t: float) -> float:
        """Move to ``t`` (never back: a group late by an ``elapse`` fires at ``now``)."""
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
        return self._now

    def elapse(self, seconds: float) -> float:
        """Let ``seconds`` of virtual time pass without firing anything; returns the new now.

        For a task that "takes time" on a virtual clock (an overrunning run, a slow
        job in a teaching scenario): call it from inside the run. What falls due
        meanwhile fires at the next step, late, as it would on a real clock.

        >>> clock = VirtualClock()
        >>> clock.elapse(0.25)
        0.25
        """
        seconds = _finite("seconds", seconds)
        if seconds < 0:
            raise ValueError(f"seconds={seconds!r} is negative: time can't go backwards")
        with self._lock:
            self._now += seconds
            return self._now

    def run_until(self, t: float, *, max_steps: int | None = 1_000_000) -> float:
        """Fire every group due up to and including ``t``, each at its own time; end at ``t``.

        At most ``max_steps`` groups (``None``: no limit): a window that holds more (a 1 s
        periodic task and ``advance(1e9)``) raises :class:`LoopError` instead of holding
        the thread for hours. It raises early, after the first 10,000 groups, when the
        periodic tasks alone would fire more than the rest of ``max_steps``; otherwise
        once ``max_steps`` groups fired. The groups fired stay fired, exactly as stepping
        would have fired them, and the clock stays at the last one: calling again goes on.
        """
        t = _finite("t", t)
        if max_steps is None:
            limit = _UNLIMITED
        elif type(max_steps) is int and max_steps > 0:  # the check inline: advance() in a loop
            limit = max_steps
        else:
            limit = _positive_int("max_steps", max_steps)
        with self._lock:
            if t < self._now:
                raise ValueError(f"t={t!r} is before now={self._now!r}: time can't go backwards")
            start = self._now
            fired = self._run_window(t, limit if limit < _CHECK_AFTER else _CHECK_AFTER)
            if fired == _CHECK_AFTER < limit and self._due_by(t):
                ahead = self._periodic_groups_until(t)
                if ahead > limit - fired:
                    raise self._too_many(start, t, fired, limit, ahead)
                fired += self._run_window(t, limit - fired)
            if fired >= limit and self._due_by(t):
                raise self._too_many(start, t, fired, limit, None)
            self._now = max(self._now, t)
            return self._now

    def _due_by(self, t: float) -> bool:
        nxt = self.next_time()
        return nxt is not None and nxt <= t

    def _periodic_groups_until(self, t: float) -> int:
        """At least how many groups the attached schedulers' periodic tasks fire up to ``t``."""
        total = 0
        for driver in self._drivers:
            total += driver.target.periodic_runs_until(t)
        return total

    def _too_many(
        self, start: float, t: float, fired: int, limit: int, ahead: int | None
    ) -> LoopError:
        if ahead is not None:
            why = f"its periodic tasks alone would fire {ahead:,} more, beyond max_steps={limit:,}"
        else:
            why = f"it held more than max_steps={limit:,} groups"
        return LoopError(
            f"the window from t={start!r} to t={t!r} was stopped at t={self._now!r} after "
            f"{fired:,} groups: {why}. The groups fired are kept (as stepping would have "
            "fired them); go on with a shorter window, or pass max_steps=None to run it all"
        )

    def _run_window(self, until: float, max_steps: int) -> int:
        """Fire groups due up to ``until`` (at most ``max_steps``); returns how many fired.

        The clock decides when: each group at its own time. A lone target that can find
        its own next group (:meth:`Drivable.fire_next`) is asked for the whole window
        in one call, and fires it group by group, moving the clock to each group's time
        (:meth:`_move_alone`, which hands the rest back here if a run attached another
        target); otherwise the earliest time across targets is looked up and every target
        fires.

        A lone target that fired fewer groups than allowed has nothing more due by
        ``until``, unless the set of targets changed meanwhile (a run made a second
        scheduler and shut the first down): then the window goes on with the new set.
        """
        steps = 0
        while steps < max_steps:
            drivers = self._drivers
            if len(drivers) == 1:
                fired = drivers[0].target.fire_next(until, self._move_alone, max_steps - steps)
                steps += fired
                if steps < max_steps and self._drivers is drivers:
                    return steps  # the same lone target has nothing more due by ``until``
                continue
            t = self.next_time()
            if t is None or t > until:
                return steps
            self._fire_at(t)
            steps += 1
        return steps

    def advance(self, dt: float, *, max_steps: int | None = 1_000_000) -> float:
        """Move time forward by ``dt`` seconds, firing what falls due; returns the new now.

        At most ``max_steps`` groups, as :meth:`run_until` (``LoopError`` beyond them).
        """
        dt = _finite("dt", dt)
        if dt < 0:
            raise ValueError(f"dt={dt!r} is negative: time can't go backwards")
        with self._lock:
            return self.run_until(self._now + dt, max_steps=max_steps)

    def run_until_idle(self, max_steps: int = 1_000_000) -> float:
        """Step until nothing is pending; returns the final time.

        Raises :class:`LoopError` after ``max_steps`` steps (periodic tasks never
        let a clock go idle: use :meth:`run_until` for them).
        """
        max_steps = _positive_int("max_steps", max_steps)
        with self._lock:
            self._run_window(math.inf, max_steps)
            if self.next_time() is None:
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
        target = self._now
        while not self._stop_play.wait(interval):
            real = time.monotonic()
            rate = self._rate
            if rate <= 0:
                break
            target = max(target, self._now) + (real - last) * rate
            last = real
            try:
                self._play_toward(target)
            except BaseException as exc:  # keep it visible; stop playing
                self.play_error = exc
                self._rate = 0.0
                break

    def _play_toward(self, target: float) -> None:
        """Fire what is due up to ``target``, in batches that a pause or stop can cut.

        A rate the machine cannot keep (a 1 ms periodic task at a million virtual seconds
        per real second) leaves the clock behind ``target`` at the last group it fired,
        never skipping one; the next slice goes on from there. Each slice works at most
        :data:`_PLAY_SLICE_S`, so ``pause()`` returns within one batch.
        """
        until = time.monotonic() + _PLAY_SLICE_S
        with self._lock:
            while True:
                fired = self._run_window(target, _PLAY_BATCH)
                if fired < _PLAY_BATCH:
                    self._now = max(self._now, target)
                    return
                if self._stop_play.is_set() or time.monotonic() >= until:
                    return

    def inherited_by_fork(self) -> None:
        """A copy in a child of ``os.fork()``: no player thread, and a lock nobody holds."""
        self._lock = threading.RLock()
        self._attach_lock = threading.Lock()
        self._player = None
        self._rate = 0.0
        self._stop_play = threading.Event()

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
