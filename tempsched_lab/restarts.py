"""A scheduler that continues the log of a service restarted on its spill root.

:class:`~tempsched_lab.log.files.Lineage` reads and writes a lineage's files (one
``run-NNN`` spill directory per process, the ``seq`` numbers each run reserved); this
module makes the scheduler of the next run, a layer above both (the log's files are read
by the log, so they never import the scheduler).

>>> import tempfile
>>> from tempsched_lab import VirtualClock
>>> root = tempfile.mkdtemp()
>>> first = continuing_scheduler(root, VirtualClock())
>>> _ = first.schedule(print, delay=1.0)
>>> _ = first.shutdown()
>>> second = continuing_scheduler(root, VirtualClock())  # the service restarted
>>> second.log.first_seq, second.log.rows()[0]["result"]
(3, 'restarted')
>>> _ = second.shutdown()
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from .core.scheduler import Scheduler
from .log.files.lineage import RESTARTED, Lineage, restart_detail
from .log.schema import KIND_CODE

__all__ = ["continuing_scheduler"]


def continuing_scheduler(
    root: str | os.PathLike[str] | Lineage, clock: Any = None, **options: Any
) -> Scheduler:
    """A new scheduler that continues the log of the lineage at ``root``
    (``Scheduler(clock, **options)``, spilling to the next ``root/run-NNN``, its rows
    numbered after the runs before).

    After an earlier run, its first row is a ``shutdown`` row with result ``restarted``
    that says what became of the previous process (its tasks are gone: a replay empties
    the queue there; task IDs start again at 0).

    >>> continuing_scheduler("/tmp", log_spill="x")
    Traceback (most recent call last):
    TypeError: log_spill=: the lineage sets it (the next run-NNN directory)
    """
    for name in ("log_spill", "log_first_seq"):
        if name in options:
            raise TypeError(f"{name}=: the lineage sets it (the next run-NNN directory)")
    _check_option_names(clock, options)  # before anything is created on disk
    _check_option_values(clock, options)
    lineage = root if isinstance(root, Lineage) else Lineage.open(root)
    directory, first, lock = lineage.next_run()  # the root's lock, held by the new log
    previous = lineage.runs[-1] if lineage.runs else None
    try:
        scheduler = Scheduler(clock, log_spill=directory, log_first_seq=first, **options)
    except BaseException:
        # a value the scheduler refused: leave no run directory behind (only the files its
        # log had begun, nothing any process wrote rows to), then let the root go
        _remove_unused_run(directory)
        lock.release()
        raise
    scheduler.log.hold_until_closed(lock)
    if previous is not None:
        write_restarted_row(scheduler, first, restart_detail(previous))
    return scheduler


def _check_option_names(clock: Any, options: dict[str, Any]) -> None:
    """A ``TypeError`` naming an option :class:`Scheduler` does not take."""
    try:
        inspect.signature(Scheduler).bind(clock, **options)
    except TypeError as exc:
        known = sorted(inspect.signature(Scheduler).parameters)
        raise TypeError(f"continuing_scheduler: {exc}; Scheduler takes {known}") from None


def _check_option_values(clock: Any, options: dict[str, Any]) -> None:
    """The values :class:`Scheduler` would refuse, refused the same way before the lineage's
    root, its lock or a ``run-NNN`` directory exists: a refused start leaves nothing behind.

    Only checks without side effects (a queue object made and dropped, an in-memory log);
    anything else the scheduler refuses later still has its run directory removed.
    """
    from .core import validation as check
    from .core.queues import make_queue
    from .core.triggers.misfire import check_misfire
    from .log.eventlog import _check_interval
    from .time.clock import Clock

    if clock is not None and not isinstance(clock, Clock):
        raise TypeError(f"clock={clock!r}: expected a RealClock, a VirtualClock or a Clock")
    if not options.get("log", True) or options.get("recorder") is not None:
        which = "log" if not options.get("log", True) else "recorder"
        raise TypeError(
            f"{which}={options[which]!r}: a continuing scheduler records its rows in the "
            "lineage's log (a log that is off, or another recorder, would leave an empty run)"
        )
    make_queue(options.get("queue", "sorteddict"), **dict(options.get("queue_options") or {}))
    check.check_resolution(options.get("resolution"))
    check_misfire(options.get("misfire", "skip"))
    _check_interval(options.get("log_spill_interval"), "run-NNN")
    executor = options.get("executor")
    for name in ("max_log_rows", "max_workers"):
        value = options.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ValueError(f"{name}={value!r}: expected a positive integer or None")
    if isinstance(executor, str) and executor not in ("pool", "thread", "inline"):
        raise ValueError(
            f"executor={executor!r}: expected 'pool', 'thread', 'inline' or a "
            "concurrent.futures.Executor"
        )


def _remove_unused_run(directory: Path) -> None:
    """Remove a run directory made a moment ago whose log never started (no segment)."""
    from .log.files.spill import MANIFEST, RESERVED

    with contextlib.suppress(OSError):
        for name in (MANIFEST, RESERVED, RESERVED + ".tmp"):
            (directory / name).unlink(missing_ok=True)
        directory.rmdir()  # (fails, and keeps it, if anything else is in it)


def write_restarted_row(scheduler: Scheduler, first: int, detail: str) -> None:
    """The new process's first row: a ``shutdown`` row, result ``restarted`` (schema's layout:
    task_id, result, due, label, ready_size, queue_size, detail)."""
    row = (
        KIND_CODE["shutdown"],
        scheduler.clock.now(),
        time.time(),
        threading.current_thread().name,
        -1,  # task_id: none
        RESTARTED,
        math.nan,  # due
        None,  # label
        0,  # ready_size: the queue is empty
        0,  # queue_size
        detail,
    )
    with scheduler._lock:  # the log's one writer holds the scheduler's lock (docs/design.md)
        if scheduler.log.next_seq == first:  # (nothing recorded yet: it is the first row)
            scheduler.log.append(row)
