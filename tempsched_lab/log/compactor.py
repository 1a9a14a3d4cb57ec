"""The logs' one background thread: compacts full chunks, writes spilled segments, seals tails.

A chunk's rows held flat (:mod:`tempsched_lab.log.rows`) cost two to three times the
memory of the same rows as per-kind plain columns (:mod:`tempsched_lab.log.columns`);
converting a 4,096-row chunk takes 1-2 ms, which the recorder must not spend while it
holds a scheduler's lock. Sealed chunks are queued here and converted (and, for a
spilled log, written) by a single daemon thread shared by every log, which also calls
the ``tick`` of each log that bounds how long a row may wait unwritten (:func:`every`).

The queue holds only *weak* references: a chunk that a bounded log dropped is freed
at once, whatever this thread's pace, and is never compacted (a thread that gets a
few percent of the GIL on a busy process once held hundreds of dropped chunks here).

At interpreter exit the thread is **parked** (an :mod:`atexit` hook, which runs once
non-daemon threads were joined and before the interpreter is torn down): it takes no
new work, finishes the item in hand, and ends; the hook waits for it (at most
:data:`PARK_TIMEOUT` seconds). A daemon thread still inside a library's C++ code
(pyarrow, writing a segment) when the interpreter is finalized aborts the whole
process (``terminate called without an active exception``, status 134). Chunks left
uncompacted stay flat, which readers convert on demand. A child process made
by ``os.fork()`` starts a thread of its own when it first needs one.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import threading
import time
import weakref
from typing import Any, Protocol

__all__ = ["PARK_TIMEOUT", "compact_later", "every", "parked", "wait_compacted"]

#: The longest the exit hook waits for the item in hand (a compaction takes tens of ms,
#: a segment write up to a few hundred: the bound only matters for a disk that hangs).
PARK_TIMEOUT = 10.0
#: Queue length past which :func:`compact_later` sweeps out entries with nothing left to
#: do (freed or finished chunks); the threshold then doubles with what stays.
_SWEEP_AT = 64


class _Work(Protocol):
    def finish(self) -> Any: ...

    def pending(self) -> bool: ...


class _Ticking(Protocol):
    def tick(self) -> Any: ...


_queue: collections.deque[weakref.ref[_Work]] = collections.deque()
_cond = threading.Condition(threading.Lock())
_thread: threading.Thread | None = None
_busy = False
_parked = False
_sweep_at = _SWEEP_AT
#: id(owner) -> [weak reference to owner, interval (s), next due (monotonic)]
_ticks: dict[int, list[Any]] = {}


def _ensure_thread() -> None:
    """Start the worker if it is not running (``_cond`` is held)."""
    global _thread
    if _thread is None or not _thread.is_alive():
        _thread = threading.Thread(target=_work, name="tempsched-log-compactor", daemon=True)
        _thread.start()


def compact_later(chunk: _Work) -> None:
    """Queue ``chunk`` for ``chunk.finish()`` (O(1) but for a rare sweep; starts the thread).

    Once the thread is parked (the interpreter is exiting) nothing is queued: the chunk
    stays as it is, and readers convert it when they need it.
    """
    global _sweep_at
    with _cond:
        if _parked:
            return
        _queue.append(weakref.ref(chunk))
        if len(_queue) > _sweep_at:  # only a starved thread lets it grow: keep what has work
            live = [ref for ref in _queue if (c := ref()) is not None and c.pending()]
            _queue.clear()
            _queue.extend(live)
            _sweep_at = max(_SWEEP_AT, 2 * len(live))
        _ensure_thread()
        _cond.notify()


def every(owner: _Ticking, interval: float | None) -> None:
    """Call ``owner.tick()`` from the thread every ``interval`` seconds (of the monotonic
    clock) while ``owner`` lives; ``None`` stops it. Only a weak reference is kept."""
    with _cond:
        if interval is None:
            _ticks.pop(id(owner), None)
            return
        if _parked:
            return
        _ticks[id(owner)] = [weakref.ref(owner), interval, time.monotonic() + interval]
        _ensure_thread()
        _cond.notify()


def wait_compacted(timeout: float | None = 10.0) -> bool:
    """Wait until every queued chunk was compacted (for tests and memory measurements)."""
    with _cond:
        return _cond.wait_for(lambda: not _queue and not _busy, timeout)


def parked() -> bool:
    """True once the interpreter is exiting: no background work starts any more."""
    return _parked


def _park(timeout: float | None = PARK_TIMEOUT) -> bool:
    """Stop taking work, let the item in hand finish, and wait for the thread to end.

    Registered with :mod:`atexit`. Returns True if the thread ended within ``timeout``.
    """
    global _parked
    with _cond:
        _parked = True
        _cond.notify_all()
        thread = _thread
    if thread is None or thread is threading.current_thread():
        return True
    thread.join(timeout)
    return not thread.is_alive()


atexit.register(_park)


def _after_fork_in_child() -> None:
    """A child of ``os.fork()`` has no compactor thread, and the lock may have been held.

    The chunks still queued belong to the parent's logs, of which the child holds dead
    copies: they are dropped from the queue (a reader compacts a chunk when it needs it),
    and so are the parent's timed flushes.
    """
    global _cond, _thread, _busy, _sweep_at
    _cond = threading.Condition(threading.Lock())
    _thread = None
    _busy = False
    _sweep_at = _SWEEP_AT
    _queue.clear()
    _ticks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _next() -> Any:
    """The next thing to do: a queued chunk's ``finish``, a due ``tick``, or ``None`` with
    the seconds to wait (``_cond`` is held)."""
    while _queue:
        chunk = _queue.popleft()()
        if chunk is not None:  # (freed: a bounded log dropped it; nothing to do)
            return chunk.finish, None
    wait = None
    if _ticks:
        now = time.monotonic()
        for key, entry in list(_ticks.items()):
            owner = entry[0]()
            if owner is None:
                del _ticks[key]
                continue
            left = entry[2] - now
            if left <= 0:
                entry[2] = now + entry[1]
                return owner.tick, None
            wait = left if wait is None else min(wait, left)
    return None, wait


def _work() -> None:
    global _busy
    while True:
        with _cond:
            while True:
                if _parked:
                    _busy = False
                    _cond.notify_all()
                    return
                job, wait = _next()
                if job is not None:
                    break
                _busy = False
                _cond.notify_all()
                _cond.wait(wait)
            _busy = True
        with contextlib.suppress(Exception):  # a reader converts a chunk again on demand
            job()
        del job
