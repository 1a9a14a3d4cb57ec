"""Refreshing views from the kernel's event loop, with a thread only where the loop is busy.

A Jupyter kernel (ipykernel) and marimo both run an :mod:`asyncio` event loop
in the thread that runs the cells. A widget message sent from that loop is
sent the way the kernel sends everything else; one sent from a background
thread reaches the page in JupyterLab and Voila, but some hosts drop it
(Colab: googlecolab/colabtools#3373). So a refresher that has a loop to use
hands each round to the loop (:meth:`LoopDriver.run`: ``loop.call_soon_threadsafe``,
then it waits for the round), and keeps its own thread for the pacing.

While a cell runs (Run All), the loop is blocked until the cell returns.
A round the loop has not started within ``patience`` seconds is taken back
and drawn in the calling thread instead, and the next rounds are drawn there
at once, without waiting, until the loop answers again: views keep filling
while later cells run, and no round is lost or drawn twice.

>>> import asyncio, threading
>>> async def main():
...     driver = LoopDriver(kernel_loop())
...     ran_in = []
...     worker = threading.Thread(target=lambda: driver.run(
...         lambda: ran_in.append(threading.current_thread().name)))
...     worker.start()
...     while worker.is_alive():
...         await asyncio.sleep(0.001)  # the loop is free: the call runs here
...     return ran_in, driver.on_loop, driver.in_thread
>>> asyncio.run(main())
(['MainThread'], 1, 0)
>>> LoopDriver(None).run(lambda: 42)  # no loop: the caller's thread
42
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["LoopDriver", "Repeater", "kernel_loop"]

T = TypeVar("T")


def kernel_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread (a notebook cell's: ipykernel, marimo), or None.

    >>> kernel_loop() is None  # a plain interpreter runs no loop
    True
    """
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Job(Generic[T]):
    """One call handed to the loop: taken by the loop, or taken back by the caller."""

    __slots__ = ("call", "done", "error", "lock", "posted", "result", "started", "withdrawn")

    def __init__(self, call: Callable[[], T]) -> None:
        self.call = call
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.started = False
        self.withdrawn = False
        self.result: T | None = None
        self.error: BaseException | None = None
        self.posted = time.monotonic()


class LoopDriver:
    """Runs calls on an event loop for a worker thread; in that thread while the loop is busy.

    Args:
        loop: the loop to run calls on (``None``: every call runs in its
            caller's thread, as without a driver). Take it with
            :func:`kernel_loop` in a cell.
        patience: seconds a call waits for the loop to start it before the
            caller runs it itself. After such a miss, calls run in the caller
            at once until the loop has run the missed one (it then skips it).

    Counters: ``on_loop`` and ``in_thread`` (calls run in each place),
    ``misses`` (calls the loop did not start in time), and ``delays``
    (the last 1,000 waits, in seconds, from a call handed to the loop to its start there).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None, *, patience: float = 0.2) -> None:
        if not (isinstance(patience, (int, float)) and 0 < patience <= 60):
            raise ValueError(f"patience={patience!r}: expected seconds in (0, 60]")
        self.loop = loop
        self.patience = float(patience)
        self.on_loop = 0
        self.in_thread = 0
        self.misses = 0
        self.delays: deque[float] = deque(maxlen=1000)
        self._pending: _Job[Any] | None = None
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        """Whether the loop has left a call unstarted past ``patience`` (calls run in threads)."""
        pending = self._pending
        return pending is not None and pending.withdrawn

    @property
    def usable(self) -> bool:
        """Whether calls go to a loop at all (one given, still open)."""
        loop = self.loop
        return loop is not None and not loop.is_closed()

    def run(self, call: Callable[[], T]) -> T:
        """``call()`` on the loop, waiting for its result; in this thread if the loop is busy.

        From the loop's own thread, or with no usable loop, ``call()`` runs here
        at once. An exception of ``call`` is raised here either way.
        """
        loop = self.loop
        if loop is None or loop.is_closed() or self.busy or _in_loop_thread(loop):
            self.in_thread += 1
            return call()
        job: _Job[T] = _Job(call)
        with self._lock:
            self._pending = job
        try:
            loop.call_soon_threadsafe(self._on_loop, job)
        except RuntimeError:  # the loop closed meanwhile: no loop from now on
            self.loop = None
            self.in_thread += 1
            return call()
        if not job.done.wait(self.patience):
            with job.lock:
                if not job.started:
                    job.withdrawn = True  # the loop skips it when it gets to it
            if job.withdrawn:
                self.misses += 1
                self.in_thread += 1
                return call()
            job.done.wait()  # the loop started it just now: its result is on its way
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def _on_loop(self, job: _Job[Any]) -> None:
        with self._lock:
            if self._pending is job:
                self._pending = None  # the loop answers again
        with job.lock:
            if job.withdrawn:
                return
            job.started = True
        self.delays.append(time.monotonic() - job.posted)
        self.on_loop += 1
        try:
            job.result = job.call()
        except BaseException as exc:  # handed back to the waiting caller
            job.error = exc
        finally:
            job.done.set()

    def repeat(
        self, step: Callable[[], Any], *, every: float = 0.1, stop_after: float | None = None
    ) -> Repeater:
        """Call ``step()`` every ``every`` seconds through this driver, from a daemon thread.

        For a view no refresher drives, e.g. a standalone
        :class:`~tempsched_lab.widgets.TimelineWidget` in marimo:
        ``LoopDriver(kernel_loop()).repeat(timeline.push)``. Returns the
        :class:`Repeater` (``.stop()`` ends it).
        """
        return Repeater(self, step, every=every, stop_after=stop_after).start()

    def __repr__(self) -> str:
        where = "no loop" if not self.usable else ("loop busy" if self.busy else "loop")
        return (
            f"<LoopDriver {where}: {self.on_loop} on the loop, {self.in_thread} in threads, "
            f"{self.misses} misses>"
        )


def _in_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class Repeater:
    """A daemon thread that calls ``step()`` through a :class:`LoopDriver` every ``every`` s.

    Errors of ``step`` are counted (``errors``, ``last_error``), never raised:
    the next call comes all the same.
    """

    def __init__(
        self,
        driver: LoopDriver,
        step: Callable[[], Any],
        *,
        every: float = 0.1,
        stop_after: float | None = None,
    ) -> None:
        if not (isinstance(every, (int, float)) and every > 0):
            raise ValueError(f"every={every!r}: expected seconds > 0")
        if stop_after is not None and not stop_after > 0:
            raise ValueError(f"stop_after={stop_after!r}: expected seconds > 0 or None")
        self.driver = driver
        self.step = step
        self.every = float(every)
        self.stop_after = stop_after
        self.calls = 0
        self.errors = 0
        self.last_error: BaseException | None = None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tempsched-repeater", daemon=True)

    def start(self) -> Repeater:
        """Start the thread (returns at once)."""
        if not self.thread.is_alive() and not self._stop.is_set():
            self.thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set():
            if self.stop_after is not None and time.monotonic() - started >= self.stop_after:
                return
            try:
                self.driver.run(self.step)
            except Exception as exc:  # keep going: the next call may work
                self.errors += 1
                self.last_error = exc
            self.calls += 1
            self._stop.wait(self.every)

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Stop the thread and wait for it (up to ``timeout``); True if it ended."""
        self._stop.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout)
        return not self.thread.is_alive()
