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
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from .core.executors import Launcher
from .core.runs import in_task, run_token
from .core.scheduler import Scheduler
from .time.loop import (
    AsyncioClock,
    LoopDriver,
    changes_of,
    closed_loop_error,
    running_loop,
    the_loop,
)

if TYPE_CHECKING:
    from .core.runs import Run, Runner
    from .core.task import TaskStatus

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
        self.loop: asyncio.AbstractEventLoop = the_loop(loop, "LoopExecutor()")

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
        self._changes = changes_of(loop)
        self._backlog: collections.deque[Run] = collections.deque()
        self._lock = threading.Lock()  # the backlog may be fed from another thread

    def launch(self, runs: Sequence[Run]) -> None:
        with self._lock:
            self._backlog.extend(runs)
        if running_loop() is self._loop:
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
            self._runner.not_started(task, due, closed_loop_error(self._loop))

    def busy(self) -> bool:
        return False  # coroutine runs in flight are the scheduler's running tasks

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None  # the loop is the caller's; runs in flight end on it


# -- waiting and closing from async code ----------------------------------------------
def _loop_driven(s: Scheduler) -> bool:
    """True when ``s`` is driven by the loop running here (await on it, never block it)."""
    clock = s.clock
    return isinstance(clock, AsyncioClock) and clock.loop is running_loop()


def _idle(s: Scheduler) -> bool:
    return s.pending == 0 and s.running == 0


async def _until(
    s: Scheduler, ready: Callable[[], bool], deadline: float | None
) -> bool:  # the loop's own clock for deadlines
    loop = asyncio.get_running_loop()
    changes = changes_of(loop)
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
            loop = clock.loop if clock is not None else the_loop(None, "AsyncScheduler()")
        loop = the_loop(loop, "AsyncScheduler()")
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
