"""The ``"pool"`` executor: a bounded thread pool fed a whole due group at once.

``concurrent.futures.ThreadPoolExecutor`` creates a ``Future`` and a work item
per ``submit`` and wakes a thread each time: about 20 µs per task on a 2-core
machine, so 1,000 tasks due at one instant took 21-25 ms just to hand over
(measured in ``benchmarks/``). The scheduler needs no futures (runs record
their own end), so this pool takes a due group in one call: one lock, one
``extend``, one ``notify``.

>>> import threading
>>> pool = BatchThreadPool(max_workers=2)
>>> done = threading.Event()
>>> pool.submit_batch(lambda ev: ev.set(), [(done,)])
>>> done.wait(5)
True
>>> pool.shutdown()
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["BatchThreadPool"]


class BatchThreadPool:
    """Up to ``max_workers`` daemon threads running ``fn(*args)`` items in FIFO order.

    Threads start lazily, when there is more work than idle threads. A call
    that raises is swallowed (the scheduler's runs record their own errors),
    so a pool thread never dies.

    Args:
        max_workers: the most threads (default ``min(32, cpu_count + 4)``, as
            ``ThreadPoolExecutor``).
        name: the prefix of the threads' names.
    """

    def __init__(self, max_workers: int | None = None, name: str = "tempsched-pool") -> None:
        if max_workers is None:
            max_workers = min(32, (os.cpu_count() or 1) + 4)
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers={max_workers!r}: expected a positive integer")
        self.max_workers = max_workers
        self.name = name
        self._work: collections.deque[tuple[Callable[..., Any], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._cond = threading.Condition(threading.Lock())
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit_batch(self, fn: Callable[..., Any], items: Iterable[tuple[Any, ...]]) -> None:
        """Queue ``fn(*item)`` for every item, in order, with one wake-up of the pool."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the pool is shut down")
            before = len(self._work)
            self._work.extend((fn, item) for item in items)
            added = len(self._work) - before
            if not added:
                return
            spare = min(len(self._work) - self._idle, self.max_workers - len(self._threads))
            for _ in range(max(0, spare)):
                thread = threading.Thread(
                    target=self._loop,
                    name=f"{self.name}-{len(self._threads)}",
                    daemon=True,
                )
                thread.start()
                self._threads.append(thread)
            self._cond.notify(added)

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Queue one call."""
        self.submit_batch(fn, (args,))

    def _loop(self) -> None:
        work = self._work
        cond = self._cond
        while True:
            with cond:
                while not work:
                    if self._closed:
                        return
                    self._idle += 1
                    try:
                        cond.wait()
                    finally:
                        self._idle -= 1
                fn, args = work.popleft()
            with contextlib.suppress(BaseException):  # runs record their own errors
                fn(*args)

    @property
    def threads(self) -> int:
        """Threads started so far."""
        return len(self._threads)

    def shutdown(self, wait: bool = True, timeout: float | None = None) -> None:
        """Stop taking work; threads finish what is queued, then exit. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            threads = list(self._threads)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join(timeout)

    def __repr__(self) -> str:
        return (
            f"<BatchThreadPool {len(self._threads)}/{self.max_workers} threads, "
            f"{len(self._work)} queued{', closed' if self._closed else ''}>"
        )
