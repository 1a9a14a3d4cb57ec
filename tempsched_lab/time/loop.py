"""An asyncio event loop as a clock: ``loop.time()`` on an epoch-like scale, and a driver with
no thread, woken by one ``loop.call_at`` handle.

:class:`AsyncioClock` reads ``loop.time()`` like :class:`~tempsched_lab.RealClock` reads
``time.monotonic()`` (``origin`` is the wall time at creation; deadlines never move with the
wall clock). Its driver, :class:`LoopDriver`, waits with one ``loop.call_at`` handle; a head that
moves earlier reschedules it (from another thread through ``call_soon_threadsafe``); a handle
that fires a hair early (asyncio fires timers up to its clock resolution before their time) is
re-armed, never fired. What runs the tasks on the loop, and the scheduler that puts both
together, are a layer up: :mod:`tempsched_lab.aio`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
import weakref
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .clock import Clock, Drivable, Driver

__all__ = [
    "AsyncioClock",
    "LoopChanges",
    "LoopDriver",
    "changes_of",
    "closed_loop_error",
    "running_loop",
    "the_loop",
]


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def closed_loop_error(loop: asyncio.AbstractEventLoop) -> RuntimeError:
    return RuntimeError(
        f"the event loop {loop!r} was closed: nothing can run on it any more; create the "
        "scheduler again on a running loop"
    )


def the_loop(loop: object, who: str) -> asyncio.AbstractEventLoop:
    """``loop`` checked, or the loop running here; a clear error when there is none."""
    if loop is None:
        running = running_loop()
        if running is None:
            raise RuntimeError(
                f"{who} needs an event loop: create it inside async code (a Jupyter cell, a "
                "coroutine under asyncio.run) or pass loop=..."
            )
        return running
    if not isinstance(loop, asyncio.AbstractEventLoop):
        raise TypeError(f"loop={loop!r}: expected an asyncio event loop")
    if loop.is_closed():
        raise ValueError(f"loop={loop!r}: the event loop is closed")
    return loop


class LoopChanges:
    """Wakes the async waiters of one loop when something may have settled (loop thread only)."""

    __slots__ = ("_loop", "_waiters")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiters: set[asyncio.Future[None]] = set()

    async def wait(self, timeout: float) -> None:
        """Until the next :meth:`notify`, or ``timeout`` seconds."""
        fut: asyncio.Future[None] = self._loop.create_future()
        self._waiters.add(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            self._waiters.discard(fut)  # a timed-out waiter must not pile up

    def notify(self, *_: object) -> None:
        waiters, self._waiters = self._waiters, set()
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def __len__(self) -> int:
        return len(self._waiters)


_CHANGES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopChanges] = (
    weakref.WeakKeyDictionary()
)


def changes_of(loop: asyncio.AbstractEventLoop) -> LoopChanges:
    changes = _CHANGES.get(loop)
    if changes is None:
        changes = _CHANGES[loop] = LoopChanges(loop)
    return changes


class AsyncioClock(Clock):
    """Time from an asyncio event loop (``loop.time()``) on an epoch-like scale.

    ``now()`` is the wall time when the clock was created plus the loop time
    elapsed since, so values read like ``time.time()`` while deadlines follow the
    loop's monotonic clock. Attached to a scheduler, it drives it from the loop
    with one ``call_at`` handle (see :class:`LoopDriver`): no worker thread.

    Args:
        loop: the event loop (default: the one running where the clock is created,
            e.g. a Jupyter kernel's).

    >>> import asyncio
    >>> async def read():
    ...     clock = AsyncioClock()
    ...     return abs(clock.now() - time.time()) < 60, clock.now() >= clock.origin
    >>> asyncio.run(read())
    (True, True)
    """

    virtual = False

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop: asyncio.AbstractEventLoop = the_loop(loop, "AsyncioClock()")
        self._epoch = time.time()
        self._loop0 = self.loop.time()
        #: ``now()`` when the clock was created: shown to users as ``0.000 s``.
        self.origin = self._epoch
        self._drivers: weakref.WeakKeyDictionary[Any, LoopDriver] = weakref.WeakKeyDictionary()

    def now(self) -> float:
        """Seconds on the epoch-like scale (read from ``loop.time()``)."""
        return self._epoch + (self.loop.time() - self._loop0)

    def loop_time(self, t: float) -> float:
        """A ``loop.time()`` at which :meth:`now` reads ``t`` or later (never earlier).

        Late by float rounding at most: an epoch-sized value has a coarser grid
        (about 0.2 µs) than a loop time.

        >>> import asyncio
        >>> async def check():
        ...     clock = AsyncioClock()
        ...     t = clock.now() + 1.0
        ...     lt = clock.loop_time(t)
        ...     return clock._epoch + (lt - clock._loop0) >= t
        >>> asyncio.run(check())
        True
        """
        epoch, loop0 = self._epoch, self._loop0
        when = t - epoch + loop0
        # The two float subtractions may round the deadline down by an ulp or two: step up
        # until the clock reads t (one or two steps; the mapping only grows with its input).
        for _ in range(64):
            if epoch + (when - loop0) >= t:
                return when
            when = math.nextafter(when, math.inf)
        return when + 1e-6  # pragma: no cover - unreachable for finite inputs

    def from_datetime(self, when: datetime) -> float:
        """Wall time ``when`` as a value on this clock, converted once at the call."""
        return self.now() + (when.timestamp() - time.time())

    def from_wall(self, seconds: float) -> float:
        """A ``time.time()`` value as a value on this clock, using the wall clock read now."""
        return self.now() + (seconds - time.time())

    def attach(self, target: Drivable, name: str = "") -> LoopDriver:
        """Drive ``target`` from this clock's loop (``call_at``; no thread)."""
        driver = LoopDriver(self, target, name)
        self._drivers[target] = driver
        return driver

    def driver_of(self, target: object) -> LoopDriver | None:
        """The driver attached to ``target`` (what :meth:`attach` was given: a scheduler's
        :class:`~tempsched_lab.core.ports.ClockPort`), if any."""
        return self._drivers.get(target)

    def __repr__(self) -> str:
        return f"AsyncioClock(origin={self.origin:.6f}, loop={type(self.loop).__name__})"


class LoopDriver(Driver):
    """Drives one scheduler from an event loop with a single ``loop.call_at`` handle.

    Everything it does happens in loop callbacks, on the loop's thread. When the
    handle fires it reads the clock and the scheduler's next fire time: due work
    is fired (one batch per loop iteration, so other callbacks keep their turn),
    anything else re-arms the handle. :meth:`wake` may be called from any thread
    while the scheduler's lock is held, so it never calls the scheduler: it only
    queues a re-check on the loop (coalesced: one per loop iteration at most).
    """

    #: Work happens without anyone stepping; blocking waiters in other threads are woken.
    blocking = True
    #: the loop can be closed under it without a word: the scheduler asks :meth:`lost`
    can_be_lost = True

    def __init__(self, clock: AsyncioClock, target: Drivable, name: str) -> None:
        self.name = name
        self._clock = clock
        self._target = target
        self._loop = clock.loop
        self._changes = changes_of(clock.loop)
        self._lock = threading.Lock()  # guards the two flags below (wake() comes from anywhere)
        self._recheck_queued = False
        self._stopped = False
        # loop thread only:
        self._handle: asyncio.TimerHandle | None = None
        self._armed_for: float | None = None
        self._wait: float | None = None
        self._waiting = False
        self._queue_recheck()

    # -- the Driver protocol --------------------------------------------------------
    def wake(self) -> bool:
        """Queue a re-check of the head on the loop; True if a wait was in place."""
        with self._lock:
            if self._stopped or self._recheck_queued:
                return False
            notified = self._waiting
        return self._queue_recheck() and notified

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
        with contextlib.suppress(RuntimeError):  # a closed loop has nothing armed any more
            self._soon(self._cancel_handle)

    def join(self, timeout: float | None) -> None:
        return None  # no thread of its own

    def owns_current_thread(self) -> bool:
        """True on the loop's thread: blocking there would stop the loop this driver needs."""
        return running_loop() is self._loop

    def lost(self) -> BaseException | None:
        """Why this driver can never fire again (its loop was closed), or ``None``."""
        if not self._loop.is_closed():
            return None
        return closed_loop_error(self._loop)

    # -- on the loop ----------------------------------------------------------------
    def _soon(self, callback: Callable[[], None]) -> None:
        if running_loop() is self._loop:
            self._loop.call_soon(callback)
        else:
            self._loop.call_soon_threadsafe(callback)

    def _queue_recheck(self) -> bool:
        with self._lock:
            if self._stopped or self._recheck_queued:
                return False
            self._recheck_queued = True
        try:
            self._soon(self._recheck)
        except RuntimeError:  # a closed loop: nothing can run any more
            with self._lock:
                self._recheck_queued = False
            return False
        return True

    def _recheck(self) -> None:
        with self._lock:
            self._recheck_queued = False
        if self._waiting:
            self._waiting = False
            self._target.woke(self._clock.now(), True, self._wait)
        self._step()

    def _on_timer(self) -> None:
        self._handle = None
        self._waiting = False
        self._target.woke(self._clock.now(), False, self._wait)
        self._step()

    def _cancel_handle(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._armed_for = None
        self._waiting = False

    def _step(self) -> None:
        """Fire what is due now, or arm the handle for the next due time."""
        if self._stopped:
            return
        target, clock = self._target, self._clock
        try:
            now = clock.now()
            nxt = target.next_fire_time()
            if nxt is not None and nxt <= now:
                self._cancel_handle()
                target.fire_due(now)
                self._changes.notify()
                self._queue_recheck()  # more may be due: look again at the next iteration
                return
            self._arm(nxt, now)
        except (KeyboardInterrupt, SystemExit):
            self._queue_recheck()  # Ctrl-C in a run: what is left starts if the loop goes on
            raise
        except BaseException as exc:  # a bug: made loud, never silent
            with self._lock:
                self._stopped = True
            self._cancel_handle()
            target.driver_died(exc)
            self._changes.notify()
            raise

    def _arm(self, nxt: float | None, now: float) -> None:
        self._waiting = True
        if nxt is None:
            if self._handle is not None:
                self._handle.cancel()
                self._handle = None
            self._armed_for = self._wait = None
            return
        if self._handle is not None and self._armed_for == nxt:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._handle = self._loop.call_at(self._clock.loop_time(nxt), self._on_timer)
        self._armed_for, self._wait = nxt, nxt - now

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else ("waiting" if self._waiting else "busy")
        return f"<LoopDriver {self.name or hex(id(self))} {state}>"
