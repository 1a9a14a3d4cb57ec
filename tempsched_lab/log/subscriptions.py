"""Subscribers: callbacks that receive log rows in their own thread, off the scheduler's lock.

A slow subscriber only delays itself; its backlog is bounded (the oldest rows are
dropped and counted); one that raises, even ``SystemExit`` or ``KeyboardInterrupt``,
has the error counted and kept, and keeps receiving rows.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Subscription"]

Row = tuple[Any, ...]


class Subscription:
    """A callback receiving rows off the scheduler's lock, in its own daemon thread.

    Attributes:
        delivered: rows whose callback returned or raised.
        errors: callbacks that raised (any exception, ``SystemExit`` included).
        last_error: the last one.
        lost: rows dropped because the backlog was full.
    """

    def __init__(
        self,
        callback: Callable[[dict[str, Any]], Any],
        kinds: frozenset[int] | None,
        to_dict: Callable[[int, Row], dict[str, Any]],
        unsubscribe: Callable[[Subscription], None],
        *,
        max_backlog: int = 100_000,
    ) -> None:
        if isinstance(max_backlog, bool) or not isinstance(max_backlog, int) or max_backlog < 1:
            raise ValueError(f"max_backlog={max_backlog!r}: expected a positive integer")
        self.callback = callback
        self.kinds = kinds
        self.max_backlog = max_backlog
        self._to_dict = to_dict
        self._unsubscribe = unsubscribe
        self._pending: collections.deque[tuple[int, Row]] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._closed = False
        self._offered = 0
        self.delivered = 0
        self.errors = 0
        self.lost = 0
        self.last_error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"tempsched-subscriber-{id(self):x}", daemon=True
        )
        self._thread.start()

    def offer(self, seq: int, row: Row) -> None:
        """Queue a row for delivery (called under the scheduler's lock: O(1), never blocks long)."""
        if self._closed or (self.kinds is not None and row[0] not in self.kinds):
            return
        with self._cond:
            if len(self._pending) >= self.max_backlog:
                self._pending.popleft()
                self.lost += 1
            self._pending.append((seq, row))
            self._offered += 1
            self._cond.notify()

    def _run(self) -> None:
        pending, cond = self._pending, self._cond
        while True:
            with cond:
                while not pending and not self._closed:
                    cond.wait()
                if not pending:
                    return
                seq, row = pending.popleft()
            try:
                self.callback(self._to_dict(seq, row))
            except BaseException as exc:  # SystemExit too: a subscriber never dies silently
                self.errors += 1
                self.last_error = exc
            with cond:
                self.delivered += 1
                cond.notify_all()

    @property
    def backlog(self) -> int:
        """Rows waiting to be delivered."""
        return len(self._pending)

    @property
    def alive(self) -> bool:
        """True while the delivery thread runs."""
        return self._thread.is_alive()

    def flush(self, timeout: float | None = 5.0) -> bool:
        """Wait until every row offered so far was delivered (its callback returned).

        Returns False on timeout.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._offered
            while self.delivered + self.lost < target:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def close(self, timeout: float | None = 5.0) -> None:
        """Stop receiving rows; those already queued are still delivered (up to ``timeout``)."""
        self._unsubscribe(self)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"<Subscription {state}: {self.delivered} delivered, {self.backlog} queued, "
            f"{self.errors} errors, {self.lost} lost>"
        )
