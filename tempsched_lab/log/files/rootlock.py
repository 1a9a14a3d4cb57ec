"""One live service per spill root: an OS lock on a file in the root, held for the log's life.

Two processes spilling to one :class:`~tempsched_lab.log.files.Lineage` root would each
take the previous run for a killed one and number their rows with the same ``seq`` under
one ``log_id``: every reader's "row n" would name two rows. So the process that starts a
run takes an exclusive ``fcntl.flock`` on ``root/spill.lock`` first, and keeps it until its
log's spill directory is closed (at shutdown) or the process ends (the OS releases it,
also after ``SIGKILL``: a lock never outlives its holder, so it never needs clearing by
hand). Beside it, ``root/holder.json`` says who holds it (``pid``, ``host``, ``started``),
which is what a refused second process names::

    SpillRootBusyError: spill root '/srv/runs' is held by a live service: process 4242 on
    host h1, started 2026-12-05 08:40:01 UTC (lock file /srv/runs/spill.lock) ...

A child of ``os.fork()`` gets no share of the lock: its inherited descriptor is closed in
the child (the parent keeps the lock; closing one copy of a descriptor does not release a
``flock`` held through another).

>>> import tempfile
>>> root = tempfile.mkdtemp()
>>> lock = RootLock.acquire(root)
>>> RootLock.acquire(root)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
tempsched_lab.log.files.rootlock.SpillRootBusyError: spill root ... held by a live service: ...
>>> lock.release(); RootLock.acquire(root).release()
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import socket
import threading
import weakref
from pathlib import Path
from typing import Any

from .errors import LogFileError

__all__ = ["HOLDER", "LOCK", "RootLock", "SpillRootBusyError"]

#: The lock file in a spill root (its content is nothing; the OS lock on it is the point).
LOCK = "spill.lock"
#: Who holds the lock: ``{"pid": ..., "host": ..., "started": "... UTC"}``.
HOLDER = "holder.json"

_held: weakref.WeakSet[RootLock] = weakref.WeakSet()


class SpillRootBusyError(LogFileError):
    """A spill root is held by a live service (another process, or this one)."""


class RootLock:
    """An exclusive OS lock on a spill root, held until :meth:`release` (or the process ends)."""

    def __init__(self, root: Path, fd: int) -> None:
        self.root = root
        self._fd: int | None = fd
        self._guard = threading.Lock()
        _held.add(self)

    @classmethod
    def acquire(cls, root: str | os.PathLike[str]) -> RootLock:
        """Take ``root``'s lock now, or raise :class:`SpillRootBusyError` naming its holder."""
        import fcntl

        path = Path(root)
        lock_path = path / LOCK
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SpillRootBusyError(
                f"spill root {str(path)!r} is held by a live service: {_holder(path)} (lock file "
                f"{lock_path}); two services on one root would number rows with the same seq: "
                "stop that one first, or give this one another root"
            ) from None
        lock = cls(path, fd)
        with contextlib.suppress(OSError):  # (a full disk: the lock holds, unnamed)
            _write_holder(path)
        return lock

    @property
    def held(self) -> bool:
        """Whether this process still holds the lock through this object."""
        return self._fd is not None

    def release(self) -> None:
        """Let another process take the root (idempotent)."""
        import fcntl

        with self._guard:
            fd, self._fd = self._fd, None
            if fd is None:
                return
            with contextlib.suppress(OSError):
                (self.root / HOLDER).unlink(missing_ok=True)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _forked(self) -> None:
        """In a child of ``os.fork()``: drop the inherited copy without unlocking the parent's."""
        self._guard = threading.Lock()
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:  # (closing the last copy of the descriptor releases the lock)
            os.close(fd)

    def __repr__(self) -> str:
        return f"<RootLock {str(self.root)!r}: {'held' if self.held else 'released'}>"


def _write_holder(root: Path) -> None:
    from .atomic import atomic_path

    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": started}
    with atomic_path(root / HOLDER, fsync=False, what="the spill root's holder") as tmp:
        tmp.write_text(json.dumps(holder) + "\n", encoding="ascii")


def _holder(root: Path, attempts: int = 300) -> str:
    """Who holds ``root``'s lock, in words, from its holder file.

    The holder writes its file just after it takes the lock, so a process refused in between
    finds none yet, or the file of a holder that was killed (its process gone): it looks
    again every 10 ms, ``attempts`` times at most (3 s: a holder descheduled on a loaded
    machine; only on this refused path).
    """
    import time

    for attempt in range(attempts):
        try:
            data: Any = json.loads((root / HOLDER).read_text(encoding="ascii"))
            pid, host = int(data["pid"]), str(data["host"])
            if host != socket.gethostname() or _alive(pid):  # (else: a killed holder's file)
                return f"process {pid} on host {host}, started {data['started']}"
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if attempt + 1 < attempts:
            time.sleep(0.01)
    return f"a process that has not said who it is (no readable {HOLDER})"


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (a killed holder leaves its file behind)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (it exists, owned by another user)
        return True
    return True


def _after_fork_in_child() -> None:
    for lock in list(_held):
        lock._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
