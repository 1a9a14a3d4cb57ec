"""One background thread that compacts full chunks of log rows, off every scheduler's lock.

A chunk of row tuples costs about twice the memory of the same rows as per-kind
numpy arrays; converting a 65,536-row chunk takes tens of milliseconds, which the
recorder must not spend while it holds a scheduler's lock. Sealed chunks are
queued here and converted by a single daemon thread shared by every log. A child
process made by ``os.fork()`` starts a thread of its own when it first needs one.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
from typing import Any, Protocol

__all__ = ["compact_later", "wait_compacted"]


class _Compactable(Protocol):
    def finish(self) -> Any: ...


_queue: collections.deque[_Compactable] = collections.deque()
_cond = threading.Condition(threading.Lock())
_thread: threading.Thread | None = None
_busy = False


def compact_later(chunk: _Compactable) -> None:
    """Queue ``chunk`` for compaction (O(1); starts the thread the first time)."""
    global _thread
    with _cond:
        _queue.append(chunk)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="tempsched-log-compactor", daemon=True)
            _thread.start()
        _cond.notify()


def wait_compacted(timeout: float | None = 10.0) -> bool:
    """Wait until every queued chunk was compacted (for tests and memory measurements)."""
    with _cond:
        return _cond.wait_for(lambda: not _queue and not _busy, timeout)


def _after_fork_in_child() -> None:
    """A child of ``os.fork()`` has no compactor thread, and the lock may have been held.

    The chunks still queued belong to the parent's logs, of which the child holds dead
    copies: they are dropped from the queue (a reader compacts a chunk when it needs it).
    """
    global _cond, _thread, _busy
    _cond = threading.Condition(threading.Lock())
    _thread = None
    _busy = False
    _queue.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _work() -> None:
    global _busy
    while True:
        with _cond:
            while not _queue:
                _busy = False
                _cond.notify_all()
                _cond.wait()
            chunk = _queue.popleft()
            _busy = True
        with contextlib.suppress(Exception):  # a reader converts it again on demand
            chunk.finish()
