"""asyncio, the way Jupyter runs: a clock driven by the event loop, runs on the loop, async waits.

A Jupyter kernel runs an asyncio event loop, and notebook code lives on it
(``async def`` functions, top-level ``await``, widgets updated from the
kernel's thread). Here the scheduler joins that loop instead of starting a
worker thread:

* :class:`AsyncioClock` reads ``loop.time()`` on an epoch-like scale (like
  :class:`~tempsched_lab.RealClock`: ``origin`` is the wall time at creation,
  deadlines never move with the wall clock). Its driver, :class:`LoopDriver`,
  waits with one ``loop.call_at`` handle: no thread at all. A head that moves
  earlier reschedules the handle (from another thread through
  ``call_soon_threadsafe``); a handle that fires a hair early (asyncio fires
  timers up to its clock resolution before their time) is re-armed, never fired.
* :class:`LoopExecutor` runs each due task on the loop: a plain function is
  called there (keep it short: it holds the loop, like any callback), a
  coroutine function becomes a task on the loop and its run ends when the
  coroutine does.
* :class:`AsyncScheduler` puts the two together, with ``await s.idle()``,
  ``await s.aclose()`` and ``async with``. :func:`wait_idle_async` and
  :func:`shutdown_async` do the same for any scheduler.

The blocking calls cannot work on the loop's own thread: ``shutdown(wait=True)``
or ``wait_idle()`` there would wait for runs that only this (blocked) loop can
finish. :class:`AsyncScheduler` refuses them there with an error that says what
to await instead; a plain ``Scheduler`` on an :class:`AsyncioClock` refuses
``shutdown(wait=True)`` on the loop's thread too (its driver owns that thread).

>>> import asyncio
>>> async def main():
...     async with AsyncScheduler() as s:
...         async def hello(name):
...             await asyncio.sleep(0)
...             print("hello", name)
...         s.schedule(hello, delay=0.01, args=("loop",))
...         print("idle:", await s.idle(timeout=5))
>>> asyncio.run(main())
hello loop
idle: True
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from .clock import Clock, Drivable, Driver
from .executors import Launcher
from .runs import in_task, run_token
from .scheduler import Scheduler

if TYPE_CHECKING:
    from .runs import Run, Runner
    from .task import TaskStatus

P = ParamSpec("P")
R = TypeVar("R")

__all__ = [
    "AsyncScheduler",
    "AsyncioClock",
    "LoopDriver",
    "LoopExecutor",
    "LoopLauncher",
    "shutdown_async",
    "wait_idle_async",
]

#: How often an async waiter re-checks a scheduler when nothing told it of a change (a cancel
#: or a run ending on another thread does not); run ends on the loop wake it at once.
RECHECK_S = 0.02


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _closed_loop_error(loop: asyncio.AbstractEventLoop) -> RuntimeError:
    return RuntimeError(
        f"the event loop {loop!r} was closed: nothing can run on it any more; create the "
        "scheduler again on a running loop"
    )


def _the_loop(loop: object, who: str) -> asyncio.AbstractEventLoop:
    """``loop`` checked, or the loop running here; a clear error when there is none."""
    if loop is None:
        running = _running_loop()
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


class _Changes:
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


_CHANGES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Changes] = (
    weakref.WeakKeyDictionary()
)


def _changes_of(loop: asyncio.AbstractEventLoop) -> _Changes:
    changes = _CHANGES.get(loop)
    if changes is None:
        changes = _CHANGES[loop] = _Changes(loop)
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
        self.loop: asyncio.AbstractEventLoop = _the_loop(loop, "AsyncioClock()")
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
        :class:`~tempsched_lab.ports.ClockPort`), if any."""
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
        self._changes = _changes_of(clock.loop)
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
        return _running_loop() is self._loop

    def lost(self) -> BaseException | None:
        """Why this driver can never fire again (its loop was closed), or ``None``."""
        if not self._loop.is_closed():
            return None
        return _closed_loop_error(self._loop)

    # -- on the loop ----------------------------------------------------------------
    def _soon(self, callback: Callable[[], None]) -> None:
        if _running_loop() is self._loop:
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


class LoopExecutor:
    """Runs a scheduler's tasks on an event loop (``Scheduler(executor=LoopExecutor())``).

    A plain function is called on the loop; a coroutine function's coroutine
    becomes a task on the loop (its run ends when it does). Runs handed over from
    another thread (a real clock's worker) cross with ``call_soon_threadsafe``.

    Args:
        loop: the event loop (default: the one running where the executor is created).
    """

    kind = "loop"

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop: asyncio.AbstractEventLoop = _the_loop(loop, "LoopExecutor()")

    def make_launcher(self, runner: Runner, on_idle: Callable[[], None]) -> LoopLauncher:
        """The launcher the scheduler hands its due batches to."""
        return LoopLauncher(runner, self.loop)

    def __repr__(self) -> str:
        return f"LoopExecutor(loop={type(self.loop).__name__})"


class LoopLauncher(Launcher):
    """Starts runs on one event loop, in due order (see :class:`LoopExecutor`)."""

    kind = "loop"

    def __init__(self, runner: Runner, loop: asyncio.AbstractEventLoop) -> None:
        self._runner = runner
        self._loop = loop
        self._changes = _changes_of(loop)
        self._backlog: collections.deque[Run] = collections.deque()
        self._lock = threading.Lock()  # the backlog may be fed from another thread

    def launch(self, runs: Sequence[Run]) -> None:
        with self._lock:
            self._backlog.extend(runs)
        if _running_loop() is self._loop:
            self._drain()
            return
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError as exc:  # the loop is closed: each run is recorded as not started
            with self._lock:
                left = list(self._backlog)
                self._backlog.clear()
            for task, due, _ in left:
                self._runner.not_started(task, due, exc)

    def _drain(self) -> None:
        """Run the backlog in order (a Ctrl-C in one leaves the rest for the next firing)."""
        backlog, run, lock = self._backlog, self._runner.run, self._lock
        while True:
            with lock:
                if not backlog:
                    break
                task, due, dispatched = backlog.popleft()
            in_flight = run(task, due, dispatched)
            if in_flight is not None:  # a coroutine: its end is recorded when it is done
                in_flight.add_done_callback(self._changes.notify)
        self._changes.notify()

    def pending_since(self) -> float | None:
        with self._lock:
            return self._backlog[0][2] if self._backlog else None

    def abandon_if_closed(self) -> None:
        """Runs handed over but never started on a loop closed since: recorded as not started."""
        if not self._loop.is_closed():
            return
        with self._lock:
            left = list(self._backlog)
            self._backlog.clear()
        for task, due, _ in left:
            self._runner.not_started(task, due, _closed_loop_error(self._loop))

    def busy(self) -> bool:
        return False  # coroutine runs in flight are the scheduler's running tasks

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None  # the loop is the caller's; runs in flight end on it


# -- waiting and closing from async code ----------------------------------------------
def _loop_driven(s: Scheduler) -> bool:
    """True when ``s`` is driven by the loop running here (await on it, never block it)."""
    clock = s.clock
    return isinstance(clock, AsyncioClock) and clock.loop is _running_loop()


def _idle(s: Scheduler) -> bool:
    return s.pending == 0 and s.running == 0


async def _until(
    s: Scheduler, ready: Callable[[], bool], deadline: float | None
) -> bool:  # the loop's own clock for deadlines
    loop = asyncio.get_running_loop()
    changes = _changes_of(loop)
    while not ready():
        if s.worker_error is not None:
            return False
        left = RECHECK_S if deadline is None else min(RECHECK_S, deadline - loop.time())
        if left <= 0:
            return ready()
        await changes.wait(left)
    return True


def _check_not_inside(s: Scheduler, what: str) -> None:
    if run_token.get() == s.token or getattr(in_task, "token", None) == s.token:
        raise RuntimeError(
            f"{what} called from inside one of this scheduler's runs would wait for that run "
            "itself (a deadlock); use shutdown(wait=False) there"
        )


async def wait_idle_async(s: Scheduler, timeout: float | None = None) -> bool:
    """Wait, without blocking the loop, until ``s`` has nothing pending or running.

    Returns False on timeout (or if its worker died). For a scheduler driven by the
    running loop it waits on the loop; for any other (a real clock's worker
    thread) it waits in a helper thread, in slices.

    >>> import asyncio
    >>> from tempsched_lab import Scheduler
    >>> async def main():
    ...     with Scheduler() as s:
    ...         s.schedule(print, delay=0.01, args=("ran",))
    ...         return await wait_idle_async(s, timeout=5)
    >>> asyncio.run(main())
    ran
    True
    """
    timeout = _check_timeout(timeout)
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    if _loop_driven(s):
        _check_not_inside(s, "wait_idle_async()")
        return await _until(s, lambda: _idle(s), deadline)
    while True:  # a helper thread waits; slices keep a cancelled await from leaving it behind
        left = 0.1 if deadline is None else min(0.1, max(0.0, deadline - loop.time()))
        if await asyncio.to_thread(s.wait_idle, left):
            return True
        if s.worker_error is not None or (deadline is not None and loop.time() >= deadline):
            return False


async def shutdown_async(
    s: Scheduler, timeout: float | None = None, cancel_pending: bool = True
) -> list[TaskStatus]:
    """``s.shutdown(wait=True)`` for async code: the waiting happens without blocking the loop.

    Returns the tasks it dropped. Coroutine runs in flight on this loop finish
    while it waits (``timeout`` bounds the wait); with ``cancel_pending=False``
    pending one-shot tasks run first. Raises ``RuntimeError`` from inside one of
    the scheduler's own runs (it would wait for itself).
    """
    timeout = _check_timeout(timeout)
    if not isinstance(cancel_pending, bool):
        raise TypeError(f"cancel_pending={cancel_pending!r}: expected True or False")
    _check_not_inside(s, "shutdown_async()")
    loop = asyncio.get_running_loop()
    if not _loop_driven(s):
        return await asyncio.to_thread(s.shutdown, True, timeout, cancel_pending)
    deadline = None if timeout is None else loop.time() + timeout
    dropped = Scheduler.shutdown(s, wait=False, cancel_pending=cancel_pending)
    await _until(s, lambda: s.closed and s.running == 0, deadline)
    Scheduler.shutdown(s, wait=False)  # idempotent: closes the log's subscriptions once drained
    return dropped


def _check_timeout(timeout: object) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
        raise ValueError(f"timeout={timeout!r}: expected a number of seconds >= 0, or None")
    return float(timeout)


class AsyncScheduler(Scheduler):
    """A :class:`~tempsched_lab.Scheduler` that lives on an event loop: no worker thread.

    The clock is an :class:`AsyncioClock` and runs happen on the loop
    (:class:`LoopExecutor`) unless ``clock=``/``executor=`` say otherwise; every
    other argument is :class:`~tempsched_lab.Scheduler`'s. Wait and close with
    ``await s.idle()`` and ``await s.aclose()`` (or ``async with``); the blocking
    ``wait_idle()`` and ``shutdown(wait=True)`` raise on the loop's own thread,
    where they would block the runs they wait for.

    >>> import asyncio
    >>> async def main():
    ...     async with AsyncScheduler() as s:
    ...         s.schedule(print, delay=0.01, args=("on the loop",))
    ...         await s.idle(timeout=5)
    ...     return s.closed
    >>> asyncio.run(main())
    on the loop
    True
    """

    def __init__(
        self,
        clock: AsyncioClock | None = None,
        *,
        executor: Any = None,
        loop: asyncio.AbstractEventLoop | None = None,
        **options: Any,
    ) -> None:
        if clock is not None and not isinstance(clock, AsyncioClock):
            raise TypeError(f"clock={clock!r}: expected an AsyncioClock (or None)")
        if loop is None:
            loop = clock.loop if clock is not None else _the_loop(None, "AsyncScheduler()")
        loop = _the_loop(loop, "AsyncScheduler()")
        if clock is not None and clock.loop is not loop:
            raise ValueError(f"clock={clock!r} runs on another loop than loop={loop!r}")
        super().__init__(
            AsyncioClock(loop) if clock is None else clock,
            executor=LoopExecutor(loop) if executor is None else executor,
            loop=loop,
            **options,
        )

    async def idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is pending or running; False on timeout (:func:`wait_idle_async`)."""
        return await wait_idle_async(self, timeout)

    async def aclose(
        self, timeout: float | None = None, cancel_pending: bool = True
    ) -> list[TaskStatus]:
        """Shut down; wait for runs in flight without blocking the loop (:func:`shutdown_async`)."""
        return await shutdown_async(self, timeout, cancel_pending)

    async def __aenter__(self) -> AsyncScheduler:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until idle: from another thread only (on the loop: ``await s.idle()``)."""
        if _loop_driven(self):
            raise RuntimeError(
                "wait_idle() on the event loop's own thread would block the loop that runs "
                "this scheduler; use `await s.idle()` there"
            )
        return super().wait_idle(timeout)

    def shutdown(
        self, wait: bool = True, timeout: float | None = None, cancel_pending: bool = True
    ) -> list[TaskStatus]:
        """Stop (see :meth:`Scheduler.shutdown`); on the loop's thread only ``wait=False``."""
        if wait and _loop_driven(self):
            raise RuntimeError(
                "shutdown(wait=True) on the event loop's own thread would block the loop that "
                "must finish the runs it waits for; use `await s.aclose()` (or `async with`), "
                "or shutdown(wait=False) to close now and let runs in flight end on the loop"
            )
        return super().shutdown(wait, timeout, cancel_pending)
