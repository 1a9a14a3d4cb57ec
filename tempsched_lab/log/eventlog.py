"""The event log: one typed row per observable scheduling step.

The scheduler's :class:`~tempsched_lab.core.recorder.Recorder` writes one row per step
(through the log's :class:`LogWriter`) while the scheduler holds its lock, so ``seq`` is
gapless and the log order is the true order. The open chunk stores each row's fields
flat, one list per row kind (:mod:`~tempsched_lab.log.rows`: no object per row, and
appending never builds a DataFrame); full chunks of 4,096 rows are compacted in
the background into per-kind plain columns (:mod:`~tempsched_lab.log.columns`: about a
quarter of the memory), and :meth:`EventLog.to_frame` builds a typed pandas DataFrame
on demand. Neither numpy nor pandas is imported until a frame is asked for.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, delay=1, args=("hi",))
>>> s.log.to_frame()[["seq", "kind", "case", "due"]]
   seq      kind  case  due
0    0  schedule     2  1.0
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..time.scale import ORIGIN_ATTR
from . import compactor
from .columns import Compact
from .rows import FlatRows
from .schema import COLUMNS, COMMON, DERIVED, KIND_CODE, KINDS, LAYOUTS, ORIGINS, STORES
from .subscriptions import Subscription

if TYPE_CHECKING:
    import pandas as pd

    from .audit import AuditReport
    from .frame import Columns

__all__ = [
    "EventLog",
    "HeldColumns",
    "HeldRows",
    "HeldStores",
    "LogWriter",
    "Subscription",
    "read_log",
    "row_dict",
]

Row = tuple[Any, ...]
#: Rows per chunk of an unbounded log: compacted a chunk at a time. The open chunk's flat
#: fields (a schedule row's 18 pointers, ~150 B, plus the objects only it holds; ~82 B
#: once compacted; tuples took ~333 B before issue 35) are the log's high-water mark of
#: memory: RSS per pending task with the log on (100,000 tasks, docs/benchmarks.md, issue 35)
#: was ~830 B with 65,536-row chunks (numpy imported first, 1,096 B without), ~610 B with
#: 4,096; a spilled log's chunks are its segments (``spill_rows``) instead.
CHUNK = 4_096
#: Chunks of a spilled log that may wait unwritten before the recording thread writes one
#: itself (the default ``spill_backlog`` is this many times ``spill_rows``).
BACKLOG_CHUNKS = 4
#: Chunks of a log that may wait for the compactor thread before the recording thread
#: compacts the oldest itself (see :meth:`EventLog._catch_up`).
COMPACT_BACKLOG = 4
logger = logging.getLogger("tempsched_lab")


class _View(NamedTuple):
    """What a reader reads, taken in one step under the lock (see :meth:`EventLog._view`)."""

    chunks: list[_Chunk]
    tail: FlatRows
    tail_first: int
    lo: int
    hi: int
    #: the next seq at that instant (rows from it on did not exist yet)
    end: int


class HeldRows(NamedTuple):
    """What :meth:`EventLog.held_rows` read in one step."""

    #: the oldest ``seq`` memory held then (rows before it: on disk, or dropped)
    first_seq: int
    #: the ``seq`` the next row was to get (rows from it on did not exist yet)
    next_seq: int
    #: the rows asked for that memory held, oldest first, as :func:`row_dict` dicts
    rows: list[dict[str, Any]]


class HeldColumns(NamedTuple):
    """What :meth:`EventLog.held_columns` read in one step."""

    #: the oldest ``seq`` memory held then (rows before it: on disk, or dropped)
    first_seq: int
    #: the ``seq`` the next row was to get (rows from it on did not exist yet)
    next_seq: int
    #: the rows asked for that memory held, as the frame's columns before typing: numpy
    #: arrays of each column's store (kind as its code; missing as the store's sentinel)
    columns: Columns


class HeldStores(NamedTuple):
    """What :meth:`EventLog.held_stores` read in one step."""

    #: the oldest ``seq`` memory held then (rows before it: on disk, or dropped)
    first_seq: int
    #: the ``seq`` the next row was to get (rows from it on did not exist yet)
    next_seq: int
    #: ``(store, a, b)``, oldest first: the rows at positions ``a:b`` of ``store``, a
    #: compacted chunk's arrays or a chunk's flat lists, as they were held (never copied)
    parts: list[tuple[Compact | FlatRows, int, int]]

    @property
    def rows(self) -> int:
        """How many rows the parts hold together."""
        return sum(b - a for _, a, b in self.parts)


class LogWriter:
    """The way in of a log's one writer (the scheduler's recorder): store a row of kind
    ``code`` as its kind and its fields (:mod:`~tempsched_lab.log.rows`), count it off
    ``room``, and once ``room`` reaches 0 call the log's :meth:`EventLog.settle`::

        writer.fields[code] += (t, wall, thread, ...)  # the kind's fields, in layout order
        writer.kinds.append(code)  # (second: a row whose fields failed leaves no trace)
        writer.room -= 1
        if writer.room <= 0:
            log.settle()

    ``kinds`` and ``fields`` are the open chunk's own (:class:`~tempsched_lab.log.rows.
    FlatRows`), so a row costs two C-level appends and no Python call. The log keeps
    ``room`` true: while nobody watches, the rows left in the chunk (``settle`` then seals
    it and opens the next); while a tap or subscriber watches, 1, so that ``settle``
    hands each row on as soon as it is written.

    >>> EventLog().writer.room  # an empty chunk's rows
    4096
    """

    __slots__ = ("fields", "kinds", "room")

    def __init__(self) -> None:
        self.kinds = bytearray()
        self.fields: list[list[Any]] = []  # (no kind can be written before a log renews it)
        self.room = 0


class _Chunk:
    """A full chunk of rows: flat lists until the compactor turns them into arrays.

    With a spill directory, the chunk then waits in its spill's queue until its
    segment is written (:meth:`_Spill.drain`); ``spilled`` says it is on disk, and
    only then may a bounded log drop it from memory.
    """

    __slots__ = ("__weakref__", "compact", "dropped", "first", "rows", "spill", "spilled")

    def __init__(self, first: int, rows: FlatRows, spill: _Spill | None = None) -> None:
        self.first = first
        self.rows: FlatRows | None = rows
        self.compact: Compact | None = None
        self.spill = spill
        self.spilled = spill is None
        #: dropped from a bounded log: never compacted (a reader's view may still hold it)
        self.dropped = False

    def finish(self) -> None:
        """Compact, then write what the spill has waiting (the compactor thread calls this)."""
        if self.dropped:
            return
        self.compacted()
        if self.spill is not None:
            self.spill.drain(report=True)

    def pending(self) -> bool:
        """Whether :meth:`finish` has work left (for the compactor's sweep of its queue)."""
        return not self.dropped and (self.compact is None or not self.spilled)

    def __len__(self) -> int:
        rows = self.rows
        return len(rows) if rows is not None else self.compact.n  # type: ignore[union-attr]

    def compacted(self) -> Compact:
        """The chunk as per-kind arrays (converting it now if the compactor has not yet).

        Safe from any thread at once: ``compact`` is set before ``rows`` is dropped, so a
        thread that finds no rows finds the arrays (two threads may both convert).
        """
        compact = self.compact
        if compact is None:
            rows = self.rows
            if rows is None:  # converted by another thread since we looked
                return self.compact  # type: ignore[return-value]
            compact = Compact(rows, self.first)
            self.compact = compact  # set before dropping the rows: readers see one of them
            self.rows = None
        return compact

    def store(self) -> Compact | FlatRows:
        """The rows as they are now, converting nothing: the flat lists, or the arrays.

        ``rows`` is read first: the compactor sets ``compact`` before it drops ``rows``,
        so a chunk found without rows has its arrays (see :meth:`compacted`).
        """
        rows = self.rows
        return rows if rows is not None else self.compact  # type: ignore[return-value]

    def tuples(self, lo: int, hi: int) -> list[Row]:
        """Rows ``lo:hi`` (positions in the chunk) as tuples."""
        rows = self.rows
        if rows is not None:
            return rows.tuples(lo, hi)
        return self.compact.rows()[lo:hi]  # type: ignore[union-attr]


class _Spill:
    """A log's spill directory: its sealed chunks written as segments, in ``seq`` order.

    Sealed chunks wait in :attr:`waiting` (oldest first) until a segment of each is
    written. Whoever calls :meth:`drain` writes them: the compactor thread after
    each chunk, :meth:`EventLog.flush`, the shutdown, and the recording thread
    itself when more than ``backlog`` rows wait (the backpressure that keeps a
    flood of rows from outgrowing the disk). A write that fails (a full disk)
    leaves its chunk waiting, in memory, and the next drain tries it again first.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        time_origin: float,
        backlog: int,
        first_seq: int = 0,
    ) -> None:
        from .files import SegmentWriter
        from .files.numbered import NUMBERED, STEP, open_numbered, store_numbered
        from .files.spill import RESERVED

        self.directory = os.fspath(directory)
        self.time_origin = time_origin
        self.writer = SegmentWriter(self.directory, time_origin)
        if first_seq:
            self.writer.next_seq = first_seq  # its first segment must start there
        self._reserved = os.path.join(self.directory, RESERVED)
        self._first_seq = first_seq
        #: rows that may wait unwritten before the recording thread writes them itself
        self.backlog = backlog
        #: sealed chunks whose segments are not written yet, oldest first
        self.waiting: collections.deque[_Chunk] = collections.deque()
        #: seq after the last sealed row (set under the scheduler's lock)
        self.sealed = first_seq
        #: seq after the last row on disk (set under this spill's lock)
        self.written = first_seq
        #: seq numbers below this one may have been given to rows (see :meth:`reserve`)
        self.reserved = first_seq
        #: why the last reservation could not be written (``None`` while they succeed)
        self.reserve_error: OSError | None = None
        #: the last reservation failure, in words (kept once it succeeds again)
        self.reserve_failed = ""
        self._reserve_reported = False
        #: held while saying so: a caller (flush) returns only once the news is logged,
        #: whichever thread found it first
        self._report_lock = threading.Lock()
        #: why the oldest waiting chunk could not be written (``None`` while writes succeed)
        self.error: BaseException | None = None
        #: failed segment writes so far
        self.failures = 0
        #: set when this copy of the log must never write (a child process after fork)
        self.refused: str | None = None
        #: the spill root's lock (a :class:`~.files.rootlock.RootLock`), released at close
        self.root_lock: Any = None
        self._reported = False
        self._lock = threading.Lock()
        #: ``numbered.bin`` mapped (``None``: it could not be made; ``reserved.json`` bounds)
        self._numbered = open_numbered(os.path.join(self.directory, NUMBERED), first_seq)
        self._store, self._step = store_numbered, STEP  # (no import per call: every STEP rows)
        _spills.add(self)

    @property
    def unwritten(self) -> int:
        """Rows sealed but not yet on disk (the partial tail not counted)."""
        return self.sealed - self.written

    def seal(self, chunk: _Chunk) -> None:
        """Queue ``chunk`` for writing (the scheduler's lock is held)."""
        self.waiting.append(chunk)
        self.sealed = chunk.first + len(chunk)

    def drain(self, keep: int = 0, *, report: bool = False, deadline: float | None = None) -> bool:
        """Write waiting chunks, oldest first, until at most ``keep`` rows wait.

        Returns True when that is done; False if a write failed (kept in
        :attr:`error`; the chunk stays waiting), the directory is closed or
        refused, or ``deadline`` (``time.monotonic()``) passed first. ``report``:
        log a failure and a recovery (only where the scheduler's lock is not held:
        a logging handler may call back into the scheduler).
        """
        timeout = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._lock.acquire(timeout=timeout):
            return False
        try:
            failing = self.error is not None
            ok = self._drain_locked(keep, deadline)
            news = None
            if report and not ok and self.error is not None and not self._reported:
                self._reported = True
                news = self.error
            resumed = report and failing and self.error is None
        finally:
            self._lock.release()
        if report:
            self._report_reservation()
        if news is not None:
            logger.error(
                "cannot write the event log's segment to %s (%r): its rows stay in memory, "
                "later writes retry it, and a shutdown before one succeeds closes the "
                "directory as incomplete",
                self.directory,
                news,
            )
        if resumed:
            logger.warning("the event log's spill to %s resumed", self.directory)
        return ok

    def _report_reservation(self) -> None:
        """Say (once, at ERROR) that the reservation cannot be renewed, and when it can
        again (not under the scheduler's lock: a logging handler may call into it)."""
        with self._report_lock:
            self._report_reservation_locked()

    def _report_reservation_locked(self) -> None:
        failing = self.reserve_error is not None
        if failing and not self._reserve_reported:
            self._reserve_reported = True
            logger.error(
                "cannot renew the event log's seq reservation (%s): the log records no row "
                "numbered past seq %d until it can (a restart after a kill would number "
                "rows from there again); rows meanwhile are counted, and a row says how many",
                self.reserve_failed,
                self.reserved - 1,
            )
        elif not failing and self._reserve_reported:
            self._reserve_reported = False
            logger.warning("the event log's seq reservation in %s is renewed", self.directory)

    def _drain_locked(self, keep: int, deadline: float | None) -> bool:
        from .frame import compact_columns, frame_of

        waiting = self.waiting
        while waiting and self.sealed - self.written > keep:
            if self.refused is not None or self.writer.closed:
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
            chunk = waiting[0]
            try:
                self.writer.write(frame_of(compact_columns(chunk.compacted()), self.time_origin))
            except Exception as exc:  # a full disk: the chunk stays, in memory and waiting
                self.error = exc
                self.failures += 1
                return False
            chunk.spilled = True  # only now may a bounded log drop it
            waiting.popleft()
            self.written = chunk.first + len(chunk)
            self.error, self._reported = None, False
        return True

    def close(
        self, recorded: int, deadline: float | None, outliving: Sequence[Mapping[str, Any]] = ()
    ) -> bool:
        """Write what waits, then close the directory: complete only if every row is on disk.

        ``recorded``: the log's ``next_seq``, every row sealed. Rows that could not be
        written are named in the manifest (an incomplete directory that ``read_log``
        refuses), with a warning. If a write is still under way at ``deadline``, the
        directory stays open (it claims nothing), with a warning. ``outliving``: the
        runs still going, named in the manifest (their later rows are not written).
        True if complete.
        """
        if self.refused is not None:
            return False
        try:
            return self._close(recorded, deadline, outliving)
        finally:
            # the log's life ends here: the root may hold the next process's run
            lock, self.root_lock = self.root_lock, None
            if lock is not None:
                lock.release()
            mark = self._numbered
            if mark is not None and self.writer.closed:  # (the manifest bounds the rows now;
                self._numbered = None  # a directory left open still needs the map)
                mark.close()

    def _close(
        self, recorded: int, deadline: float | None, outliving: Sequence[Mapping[str, Any]]
    ) -> bool:
        import warnings

        from .files import IncompleteLogWarning

        ok = self.drain(report=True, deadline=deadline)
        timeout = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._lock.acquire(timeout=timeout):
            warnings.warn(
                f"the event log's spill directory {self.directory!r} was left open: a segment "
                f"write was still under way; {recorded - self.written:,} rows (seq "
                f"{self.written}..{recorded - 1}) are not on disk (log.history() has them)",
                IncompleteLogWarning,
                stacklevel=5,
            )
            return False
        try:
            if self.writer.closed:
                return ok
            written = self.written
            reason = None if self.error is None else f"{type(self.error).__name__}: {self.error}"
            if reason is None and written < recorded:
                reason = "the shutdown's time ran out before they were written"
            with contextlib.suppress(Exception):  # a manifest that cannot be written stays open
                self.writer.close(recorded=recorded, reason=reason, outliving=outliving)
        finally:
            self._lock.release()
        if written < recorded:
            warnings.warn(
                f"the event log's spill directory {self.directory!r} was closed incomplete: "
                f"rows seq {written}..{recorded - 1} ({recorded - written:,} rows) could not be "
                f"written ({reason}); log.history() still has them in memory",
                IncompleteLogWarning,
                stacklevel=5,
            )
            return False
        return True

    def refuse(self, reason: str) -> None:
        """Never write again (a forked copy of the log: the parent owns the directory)."""
        self.refused = reason

    def _forked(self) -> None:
        """In a child of ``os.fork()``: fresh locks (a thread of the parent, such as the
        compactor writing a segment, may have held them at the fork, and never lets go
        here) and no writing: the parent owns the directory and its root's lock.

        :attr:`error` says so (a :class:`~.files.ForkedLogError`, already "reported": the
        child logs nothing about it), so ``flush`` and ``close_spill`` return False at once
        and the recording thread never writes a segment itself (backpressure).
        """
        from .files import ForkedLogError

        self._lock = threading.Lock()
        self._report_lock = threading.Lock()
        self.writer._lock = threading.Lock()
        self.root_lock = None  # (the lock's own fork hook closed the child's copy)
        self._numbered = None  # (the map is the parent's file: the child never stores in it)
        reason = (
            f"this log is a copy made by os.fork() in process {os.getpid()}; process "
            f"{os.getppid()} writes its spill directory {self.directory}, and the copy never "
            "does (the rows recorded here stay in this process's memory: log.to_frame())"
        )
        self.refuse(reason)
        self.error, self._reported = ForkedLogError(reason), True

    def number(self, seq: int) -> int:
        """Say on disk that rows are numbered up to ``seq + STEP`` (within the reservation)
        and return that bound; the scheduler's lock is held. :data:`NO_BOUND` when nothing
        is stored (no ``numbered.bin``, or a forked copy): the reservation bounds alone.

        Called by the log before it gives its recorder room past the last bound, every
        :data:`~.files.numbered.STEP` rows (see :mod:`~.files.numbered`).
        """
        mark = self._numbered
        if mark is None or self.refused is not None:
            return NO_BOUND
        bound = min(seq + self._step, self.reserved)
        try:
            self._store(mark, bound)
        except ValueError:  # the map was closed (the directory was): the reservation bounds
            return NO_BOUND
        return bound

    def reserve(self, bound: int) -> None:
        """Say on disk that no row has a ``seq`` at or beyond ``bound`` yet (scheduler's lock held).

        Called when a chunk opens, with the seq after its last row, so the file always
        bounds the rows a killed process may have handed out (to readers, over a feed),
        whatever reached the disk: a log restarted on the same lineage starts after it
        (:class:`~tempsched_lab.log.files.Lineage`). A tiny file written in place of the
        last with ``os.replace`` (no fsync: it must survive the process, not the
        machine), once a chunk (16,384 rows by default): 46,385 instructions, under 3 a
        row (callgrind; ``schedule()`` with the log on is unchanged, 30,200 -> 30,206).
        Within it, :meth:`number` says how far the rows got, every 64 rows, so that the
        restart's gap is tight.
        """
        if self.refused is not None or bound <= self.reserved:
            return
        tmp = self._reserved + ".tmp"
        try:
            with open(tmp, "w", encoding="ascii") as file:
                file.write(f'{{"first_seq": {self._first_seq}, "bound": {bound}}}\n')
            os.replace(tmp, self._reserved)
        except OSError as exc:  # a full disk: the log numbers no row past the old bound
            self.reserve_error = exc
            self.reserve_failed = f"{self._reserved}: {type(exc).__name__}: {exc}"
            return
        self.reserved, self.reserve_error = bound, None


#: Seconds a shutdown's close of the spill directory may take beyond the shutdown's own
#: ``timeout`` (:meth:`Scheduler.shutdown`): the rows recorded before it are written even
#: when a run outlived that timeout and used it up; a write still under way after it
#: leaves the directory open, with a warning. Bounded, so a stuck disk never hangs a shutdown.
CLOSE_GRACE_S = 5.0

#: What :meth:`_Spill.number` returns when it stores nothing: no seq reaches it.
NO_BOUND = 2**63

#: Every spill of this process, for the fork hook (weakly: a spill lives with its log).
_spills: weakref.WeakSet[_Spill] = weakref.WeakSet()
#: Every log of this process that made its own lock (a scheduler's log shares the
#: scheduler's, which the scheduler's own fork hook renews), for the fork hook.
_own_locks: weakref.WeakSet[EventLog] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for spill in list(_spills):
        spill._forked()
    for log in list(_own_locks):
        log._inherited_by_fork(threading.Lock(), "")


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def row_dict(seq: int, row: Row) -> dict[str, Any]:
    """A stored row as a dict of every column (missing ones as ``None``/NaN)."""
    out: dict[str, Any] = dict(_BLANK)
    kind = KINDS[row[0]]
    out["seq"], out["kind"] = seq, kind
    for name, value in zip(COMMON + LAYOUTS[kind], row[1:], strict=True):
        out[name] = value
    for rule in DERIVED:
        if kind in rule.kinds:
            op = rule.rule[0]
            if op == "diff":
                a, b = out.get(str(rule.rule[1])), out.get(str(rule.rule[2]))
                out[rule.target] = math.nan if a is None or b is None else a - b
            elif op == "copy":
                out[rule.target] = out[str(rule.rule[1])]
            else:
                out[rule.target] = rule.rule[1]
    out.pop("dispatched", None)
    origin = out["origin"]
    out["origin"] = ORIGINS[origin] if isinstance(origin, int) and origin >= 0 else None
    for name in ("task_id", "dup_of", "ready_size", "queue_size", "missed"):
        if out[name] == -1:
            out[name] = None
    out["case"] = out["case"] or None
    woke = out["woke"]
    out["woke"] = None if woke == -1 or woke is None else bool(woke)
    return out


def _check_interval(value: Any, spill: Any) -> float | None:
    """``spill_interval`` as seconds, or a ValueError naming it."""
    if value is None:
        return None
    if spill is None:
        raise ValueError(
            f"spill_interval={value!r}: needs a spill directory "
            "(EventLog(spill=...), Scheduler(log_spill=...))"
        )
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0.01 <= value <= 86_400
    ):
        raise ValueError(
            f"spill_interval={value!r}: expected seconds (a number from 0.01 to 86400) or None"
        )
    return float(value)


_BLANK: dict[str, Any] = {
    c.name: (math.nan if STORES[c.store].numpy == "float64" else STORES[c.store].missing)
    for c in COLUMNS
}


class EventLog:
    """Every scheduling step as a row; see ``docs/event-log.md`` for the schema.

    Args:
        max_rows: keep only the newest ``max_rows`` rows (older ones are
            dropped a chunk at a time; readers see exactly the newest
            ``max_rows``); :attr:`dropped` counts what fell out. ``None`` keeps
            everything.
        enabled: record nothing when False (``Scheduler(log=False)``).
        lock: the lock the recorder holds while appending (the scheduler's);
            readers take consistent copies under it.
        time_origin: the clock value users see as ``0.000 s`` (the clock's
            origin); frames carry it in ``frame.attrs["time_origin"]``.
        spill: a directory: every ``spill_rows`` rows are written there as a
            Parquet segment, off the lock, so that ``max_rows`` can bound the
            memory without losing history; :meth:`history` (or
            ``read_log(directory)``) reads it all back. A crash loses at most the
            rows not written yet: the tail (fewer than ``spill_rows``) and the
            chunks waiting to be written (at most ``spill_backlog`` rows).
            :meth:`flush` writes them now. A chunk leaves memory only once its
            segment is written: a failed write (a full disk) keeps it, and later
            writes retry it (:attr:`spill_error` says why they fail).
        spill_rows: rows per segment (and per chunk) of a spilled log.
        spill_backlog: at most this many sealed rows wait to be written (default
            4 chunks): past it, the thread recording a row writes the oldest
            waiting chunk itself, with the scheduler's lock held, so a flood of
            rows slows down to what the disk takes instead of filling the memory.
            While writes fail, rows pile up in memory instead (never lost).
        spill_interval: the longest, in seconds of real time (whatever the
            scheduler's clock), a row may wait in memory before its segment is
            written: a quiet log's partial tail is sealed and written within about
            this time (plus the write) instead of once ``spill_rows`` rows came.
            ``None`` (default): only full chunks, :meth:`flush` and the shutdown
            write. The log's background thread does it (nothing is added to the
            recording of a row); each such write is a segment of its own.
        first_seq: the ``seq`` of the first row (default 0): a log that continues
            another one, such as a service's log after a restart
            (:class:`~tempsched_lab.log.files.Lineage`). Rows before it are not this
            log's: they count neither as held nor as :attr:`dropped`. With a spill
            directory, its first segment starts there, and the log keeps a reservation
            file beside its segments (``reserved.json``: no row has a ``seq`` at or
            beyond its ``bound`` yet), renewed when a chunk opens.

    >>> import tempfile
    >>> log = EventLog(spill=tempfile.mkdtemp(), spill_interval=2.0)
    >>> log.spill_interval
    2.0
    >>> log.close_spill()
    True
    """

    def __init__(
        self,
        max_rows: int | None = None,
        *,
        enabled: bool = True,
        lock: threading.Lock | None = None,
        time_origin: float = 0.0,
        spill: str | os.PathLike[str] | None = None,
        spill_rows: int = 16_384,
        spill_backlog: int | None = None,
        spill_interval: float | None = None,
        first_seq: int = 0,
    ) -> None:
        if (
            isinstance(first_seq, bool)
            or not isinstance(first_seq, int)
            or not 0 <= first_seq < 2**63  # (an int64 column)
        ):
            raise ValueError(f"first_seq={first_seq!r}: expected a seq (an int, 0 to 2**63 - 1)")
        if max_rows is not None and (
            isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1
        ):
            raise ValueError(f"max_rows={max_rows!r}: expected a positive integer or None")
        spill_interval = _check_interval(spill_interval, spill)  # (before the directory is made)
        self.enabled = enabled
        self.max_rows = max_rows
        #: The clock value shown as ``0.000 s`` (see :mod:`tempsched_lab.time.scale`).
        self.time_origin = float(time_origin)
        self._lock = lock if lock is not None else threading.Lock()
        if lock is None:  # (a given lock is renewed after a fork by whoever gave it)
            _own_locks.add(self)
        # rows: full chunks (oldest first), then the tail being appended to
        self._chunk_size = CHUNK if max_rows is None else min(CHUNK, max(1024, max_rows))
        self._spill: _Spill | None = None
        if spill is not None:
            if isinstance(spill_rows, bool) or not isinstance(spill_rows, int) or spill_rows < 1:
                raise ValueError(f"spill_rows={spill_rows!r}: expected a positive integer")
            if spill_backlog is None:
                spill_backlog = BACKLOG_CHUNKS * spill_rows
            elif (
                isinstance(spill_backlog, bool)
                or not isinstance(spill_backlog, int)
                or spill_backlog < spill_rows
            ):
                raise ValueError(
                    f"spill_backlog={spill_backlog!r}: expected rows (an int) of at least "
                    f"one chunk (spill_rows={spill_rows})"
                )
            self._spill = _Spill(spill, self.time_origin, spill_backlog, first_seq)
            self._chunk_size = spill_rows
        #: the longest a row waits in memory unwritten (s), or ``None`` (see the arguments)
        self.spill_interval: float | None = spill_interval
        #: the tail's first seq as the last tick saw it (-1: the tail was empty)
        self._aged = -1
        self._chunks: list[_Chunk] = []
        #: sealed chunks not known to be compacted yet, oldest first (see _catch_up)
        self._compacting: collections.deque[_Chunk] = collections.deque()
        self._tail = FlatRows()  # the open chunk
        self._first = first_seq  # seq of the first stored row
        self._tail_first = first_seq  # seq of the tail's first row (the next row's: + len(_tail))
        self._start = first_seq  # seq of this log's first row (rows before it: another log's)
        self._taps: list[Callable[[int, Row], Any]] = []
        self._subs: list[Subscription] = []
        #: rows in the tail before an append takes the slow path (0 while any tap or
        #: subscriber listens): one comparison per append covers both (see _fans)
        self._limit = self._chunk_size
        #: while the seq reservation cannot be renewed: where rows go instead of being
        #: numbered (see :meth:`_pause`), else ``None``
        self._sink: FlatRows | None = None
        #: rows not recorded while the reservation could not be renewed, counted so far
        self._unrecorded = 0
        #: rows not recorded in the pause under way, and the clock time it began
        self._skipped = 0
        self._paused_at = math.nan
        #: no row is numbered at or past this seq before ``numbered.bin`` says so
        #: (:meth:`_Spill.number`; :data:`NO_BOUND` without a spill directory)
        self._numbered = NO_BOUND if self._spill is None else first_seq
        #: the recorder's way in (kept true by _renew_writer)
        self.writer = LogWriter()
        self._renew_writer()
        #: exceptions raised by taps (each removed when it raised)
        self.tap_errors: list[BaseException] = []
        if self._spill is not None:
            self._spill.reserve(first_seq + self._chunk_size)
            if self._spill.reserved <= first_seq:
                self._pause(math.nan)
            else:
                self._renew_writer()  # (room only within what numbered.bin says)
        if spill_interval is not None:
            # two ticks per interval: a row is sealed at the second tick that sees it
            compactor.every(self, spill_interval / 2)

    # -- reading --------------------------------------------------------------------
    @property
    def _seq(self) -> int:
        """The ``seq`` of the next row: rows are counted where they are, never twice."""
        return self._tail_first + len(self._tail)

    def __len__(self) -> int:
        stored = self._seq - self._first
        return stored if self.max_rows is None else min(stored, self.max_rows)

    @property
    def dropped(self) -> int:
        """Rows that fell out of a bounded log."""
        return self._seq - self._start - len(self)

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next row will get (total rows ever recorded)."""
        return self._seq

    @property
    def first_seq(self) -> int:
        """The ``seq`` of the oldest row still in memory (what :meth:`rows`, :meth:`to_frame`
        and :meth:`held_rows` can give); older rows were dropped by ``max_rows`` (with a
        spill directory they are on disk: :meth:`history`, ``read_log(directory)``).

        >>> log = EventLog()
        >>> log.first_seq, log.next_seq
        (0, 0)
        """
        with self._lock:
            return self._seq - len(self)

    def held_rows(self, start: int = 0, stop: int | None = None) -> HeldRows:
        """The rows with ``start <= seq < stop`` that memory still holds, with the bounds
        of what it held at that instant, read in one step (for a reader that resumes from
        a ``seq``: rows before ``first_seq`` must come from the spill directory, or are
        gone).

        >>> from tempsched_lab import Scheduler, VirtualClock
        >>> s = Scheduler(VirtualClock(), max_log_rows=1024)
        >>> for i in range(3000):
        ...     _ = s.schedule(print, delay=1 + i)
        >>> held = s.log.held_rows(100, 2050)
        >>> held.first_seq, held.next_seq, held.rows[0]["seq"], held.rows[-1]["seq"]
        (1976, 3000, 1976, 2049)
        """
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"start={start!r}: expected a seq (an int >= 0)")
        if stop is not None and (isinstance(stop, bool) or not isinstance(stop, int)):
            raise ValueError(f"stop={stop!r}: expected a seq (an int) or None")
        lowest, view = self._view(start, stop, held=False)
        kept, first = self._tuples_of(view)
        rows = [row_dict(first + i, r) for i, r in enumerate(kept)]
        return HeldRows(lowest, view.end, rows)

    def held_columns(
        self, start: int = 0, stop: int | None = None, names: Collection[str] | None = None
    ) -> HeldColumns:
        """:meth:`held_rows` as numpy columns, for a reader that counts rows by the
        thousand (``GET /v1/metrics``): a compacted chunk's columns are reused as they
        are (views), only the open chunk's rows are converted; ~0.1 us a row against
        ~10 us for a row dict. ``names``: only these columns (and ``seq``, ``kind``, and
        the columns they are derived from).

        >>> from tempsched_lab import Scheduler, VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> _ = s.schedule(print, delay=1.0)
        >>> held = s.log.held_columns()
        >>> held.first_seq, held.next_seq, held.columns["kind"].tolist()
        (0, 1, [0])
        >>> sorted(s.log.held_columns(names=["case"]).columns)
        ['case', 'kind', 'seq']
        """
        lowest, view = self._view(start, stop, held=False)
        return HeldColumns(lowest, view.end, self._columns_of(view, names))

    def held_stores(self, start: int = 0, stop: int | None = None) -> HeldStores:
        """:meth:`held_rows` as the log holds them, converting nothing: for a reader that
        counts rows by kind where they are (``GET /v1/metrics``, 14-48 instructions a row
        against ~490 to compact one). A chunk the compactor has not reached, and the open
        chunk, come as their flat lists (:class:`~tempsched_lab.log.rows.FlatRows`), a
        compacted one as its arrays (:class:`~tempsched_lab.log.columns.Compact`); rows
        the recorder appends later are not in them (the open chunk's rows up to the
        view's end never change).

        >>> from tempsched_lab import Scheduler, VirtualClock
        >>> s = Scheduler(VirtualClock())
        >>> _ = s.schedule(print, delay=1.0)
        >>> held = s.log.held_stores()
        >>> held.first_seq, held.next_seq, held.rows, [(a, b) for _, a, b in held.parts]
        (0, 1, 1, [(0, 1)])
        """
        lowest, view = self._view(start, stop, held=False)
        lo, hi = view.lo, view.hi
        parts: list[tuple[Compact | FlatRows, int, int]] = []
        for chunk in view.chunks:
            first, store = chunk.first, chunk.store()
            n = len(store.kinds)
            if first + n > lo and first < hi:
                parts.append((store, max(0, lo - first), min(n, hi - first)))
        if hi > view.tail_first:
            parts.append((view.tail, max(0, lo - view.tail_first), hi - view.tail_first))
        return HeldStores(lowest, view.end, parts)

    def _parts(self, start: int | None, stop: int | None, *, held: bool = False) -> _View:
        """A consistent view: chunks, tail rows, the tail's first seq, seq ``lo:hi`` to read,
        and the next seq at that instant.

        ``held``: every row still held in memory, also those beyond ``max_rows`` that a
        spill keeps until they are on disk (readers of a bounded log see only the newest
        ``max_rows``).
        """
        return self._view(start, stop, held=held)[1]

    def _view(self, start: int | None, stop: int | None, *, held: bool) -> tuple[int, _View]:
        """:meth:`_parts`, with the lowest seq readable at that instant.

        The open chunk is not copied: its rows up to ``end`` never change (the recorder
        only appends, under the lock), so they are read later without the lock.
        """
        with self._lock:
            chunks = list(self._chunks)
            tail = self._tail
            tail_first = self._tail_first
            end = tail_first + len(tail)
            lowest = self._first if held else end - len(self)
        lo = lowest if start is None else min(max(lowest, start), end)
        hi = end if stop is None else min(end, stop)
        return lowest, _View(chunks, tail, tail_first, lo, max(lo, hi), end)

    def _tuples(self, start: int | None = None, stop: int | None = None) -> tuple[list[Row], int]:
        return self._tuples_of(self._parts(start, stop))

    @staticmethod
    def _tuples_of(view: _View) -> tuple[list[Row], int]:
        """The rows of seq ``view.lo:view.hi`` as tuples, and the first one's seq."""
        _, tail, tail_first, lo, hi, _ = view
        out: list[Row] = []
        for chunk in view.chunks:
            if chunk.first + len(chunk) <= lo or chunk.first >= hi:
                continue
            out.extend(chunk.tuples(max(0, lo - chunk.first), hi - chunk.first))
        if hi > tail_first:
            out.extend(tail.tuples(max(0, lo - tail_first), hi - tail_first))
        return out, lo

    def rows(self, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        """The stored rows with ``start <= seq < stop`` as dicts (for small logs and tests)."""
        kept, first = self._tuples(start, stop)
        return [row_dict(first + i, r) for i, r in enumerate(kept)]

    def tail(self, n: int = 20) -> pd.DataFrame:
        """The last ``n`` rows as a DataFrame."""
        stop = self._seq
        return self.to_frame(start=max(0, stop - n) if n > 0 else stop, stop=stop)

    def to_frame(self, start: int | None = None, stop: int | None = None) -> pd.DataFrame:
        """The stored rows with ``start <= seq < stop`` (default: all) as a typed DataFrame.

        ``stop=moment.seq`` gives exactly the rows a :class:`~tempsched_lab.Moment` shows.
        Full chunks are compacted once (in the background, or here if not yet),
        so repeated calls only convert the newest rows.
        """
        return self._frame_of(self._parts(start, stop))

    def _frame_of(self, view: _View) -> pd.DataFrame:
        """The frame of seq ``view.lo:view.hi`` from a view taken by :meth:`_parts`."""
        from .frame import frame_of

        return frame_of(self._columns_of(view), self.time_origin)

    @staticmethod
    def _columns_of(view: _View, names: Collection[str] | None = None) -> Columns:
        """The columns of seq ``view.lo:view.hi`` (compacted chunks' own, sliced: views)."""
        from .frame import compact_columns, concat_columns, slice_columns

        _, tail, tail_first, lo, hi, _ = view
        parts = []
        for chunk in view.chunks:
            if chunk.first + len(chunk) <= lo or chunk.first >= hi:
                continue
            cols = compact_columns(chunk.compacted(), names)
            parts.append(slice_columns(cols, max(0, lo - chunk.first), hi - chunk.first))
        if hi > tail_first or not parts:
            a, b = max(0, lo - tail_first), max(0, hi - tail_first)
            parts.append(compact_columns(Compact(tail.slice(a, b), tail_first + a), names))
        return concat_columns(parts)

    # -- subscribing ------------------------------------------------------------------
    def subscribe(
        self,
        callback: Callable[[dict[str, Any]], Any],
        kinds: Iterable[str] | None = None,
        *,
        max_backlog: int = 100_000,
    ) -> Subscription:
        """Call ``callback(row_dict)`` for every new row (of ``kinds``), off the lock.

        A subscriber that falls more than ``max_backlog`` rows behind loses the
        oldest ones (counted in :attr:`Subscription.lost`); one that raises has
        its errors counted. See :class:`Subscription`.

        >>> log = EventLog()
        >>> sub = log.subscribe(lambda row: None, kinds=["error"])
        >>> sub.close()
        """
        codes = None
        if kinds is not None:
            kinds = [kinds] if isinstance(kinds, str) else list(kinds)
            unknown = [k for k in kinds if k not in KIND_CODE]
            if unknown:
                raise ValueError(f"kinds={unknown!r}: unknown; expected some of {list(KINDS)}")
            codes = frozenset(KIND_CODE[k] for k in kinds)
        sub = Subscription(callback, codes, row_dict, self._unsubscribe, max_backlog=max_backlog)
        with self._lock:
            self._subs = [*self._subs, sub]
            self._fans = True
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs = [s for s in self._subs if s is not sub]
            self._fans = bool(self._taps or self._subs)

    def close_subscriptions(self, timeout: float | None = 5.0) -> None:
        """Deliver what is queued, then stop every subscriber's thread (called at shutdown)."""
        for sub in list(self._subs):
            sub.close(timeout=timeout)

    def tap(self, callback: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        """Call ``callback(row_dict)`` synchronously, *under the scheduler's lock*.

        For tests and debuggers that must see the state right after each row
        (``scheduler.queue.snapshot()`` is safe inside). Keep it fast; never
        call the scheduler or this log's readers from it (its lock is held), nor
        add or remove a tap there (both take the lock). A tap that raises is
        removed (the error is kept in :attr:`tap_errors`), never passed to the
        scheduler. Returns a function that removes the tap.
        """

        def run(seq: int, row: Row) -> None:
            callback(row_dict(seq, row))

        with self._lock:  # (the writer changes: not between a row and its count)
            self._taps = [*self._taps, run]
            self._fans = True

        def remove() -> None:
            with self._lock:
                self._taps = [t for t in self._taps if t is not run]
                self._fans = bool(self._taps or self._subs)

        return remove

    # -- storing (the recorder holds the scheduler's lock) ----------------------------
    @property
    def _fans(self) -> bool:
        """Any tap or subscriber listening: every append then takes the slow path."""
        return self._limit == 0

    @_fans.setter
    def _fans(self, on: bool) -> None:
        self._limit = 0 if on else self._chunk_size
        self._renew_writer()

    def _renew_writer(self) -> None:
        """Make :attr:`writer` true again: the tail changed, or a tap came or went."""
        writer, tail = self.writer, self._tail
        sink = self._sink
        if sink is not None:  # rows are counted, not numbered (see _pause)
            writer.kinds, writer.fields = sink.kinds, sink.fields
            writer.room = self._chunk_size - len(sink)
            return
        writer.kinds, writer.fields = tail.kinds, tail.fields
        # watched: settle() after every row, which hands it on
        room = 1 if self._limit == 0 else self._limit - len(tail)
        seq = self._tail_first + len(tail)
        if seq + room > self._numbered:  # (a spilled log: every STEP rows, see _Spill.number)
            spill = self._spill
            if seq >= self._numbered and spill is not None:
                self._numbered = spill.number(seq)
            room = max(0, min(room, self._numbered - seq))
        writer.room = room

    def append(self, row: Row) -> None:
        """Store one row given as a tuple ``(kind code, *fields)``, laid out as
        :data:`~tempsched_lab.log.schema.LAYOUTS` says, and hand it to the taps and
        subscribers. The general way in; the recorder writes through :attr:`writer`
        (:class:`LogWriter`), which spares the tuple and this call.

        The caller holds the lock the log was given (the scheduler's), so ``seq`` follows
        the true order of the steps.
        """
        self._tail.add(row)
        writer = self.writer
        writer.room -= 1
        if writer.room <= 0:
            self.settle()

    def settle(self) -> None:
        """The writer used up its room: hand the row on if anyone watches, seal the full
        chunk, and renew :attr:`writer`."""
        if self._sink is not None:  # (once a chunk's worth of rows while paused)
            self._count_skipped()
            self._resume()
            return
        if self._limit == 0:
            self._fan_out(self._seq - 1, self._tail.last())
        if len(self._tail) >= self._chunk_size:
            self._seal()
        else:
            self._renew_writer()

    @property
    def watched(self) -> bool:
        """Whether a tap or subscriber sees each row as it is appended.

        >>> EventLog().watched
        False
        """
        return self._limit == 0

    def _seal(self) -> None:
        """The tail is a full chunk: file it (to be compacted off the lock) and start a new one."""
        rows = self._tail
        if not rows:
            return
        spill = self._spill
        chunk = _Chunk(self._tail_first, rows, spill)
        self._chunks.append(chunk)
        self._tail_first += len(rows)
        self._tail = FlatRows()
        if spill is not None:  # (before the writer's room, which numbered.bin bounds by it)
            spill.reserve(self._tail_first + self._chunk_size)  # the chunk that opens now
        self._renew_writer()
        self._trim()
        if spill is not None:
            if spill.reserved <= self._tail_first and spill.refused is None:
                self._pause(rows.last()[1])  # no number past the reservation: see _pause
            spill.seal(chunk)
            if spill.unwritten > spill.backlog and spill.error is None:
                # Backpressure: rows come faster than the disk takes them. Writing the oldest
                # chunk here holds this scheduler up for one segment write (tens of ms)
                # instead of letting memory grow without bound. Not while writes fail: the
                # scheduler keeps going, and the rows wait in memory.
                spill.drain(spill.backlog)
                self._trim()
        compactor.compact_later(chunk)
        backlog = self._compacting
        backlog.append(chunk)
        if len(backlog) > COMPACT_BACKLOG:
            self._catch_up()

    def _catch_up(self) -> None:
        """More than :data:`COMPACT_BACKLOG` chunks wait for the compactor thread (starved of
        the GIL by a busy process, it can fall behind without bound): compact the oldest here,
        holding the scheduler's lock, as spilling writes a segment itself past its backlog.

        The same work the thread would do, done now: memory stays about what the log holds
        (compacted), whatever the thread's pace. Not once the interpreter is exiting.
        """
        self._prune()
        if compactor.parked():
            return
        backlog = self._compacting
        while len(backlog) > COMPACT_BACKLOG:
            backlog.popleft().compacted()

    def _trim(self) -> None:
        """Drop the oldest chunks beyond ``max_rows`` (only once they are on disk, if spilling)."""
        if self.max_rows is None:
            return
        stored = self._seq - self._first
        chunks = self._chunks
        while chunks and chunks[0].spilled and stored - len(chunks[0]) >= self.max_rows:
            stored -= len(chunks[0])
            chunk = chunks.pop(0)
            chunk.dropped = True  # never compacted now (the compactor holds it weakly)
            self._first += len(chunk)
            self._prune()

    def _prune(self) -> None:
        """Forget the oldest chunks of the compaction backlog that are compacted or dropped
        (both happen oldest first): a dropped chunk is then referenced by nothing here."""
        backlog = self._compacting
        while backlog and (backlog[0].dropped or backlog[0].compact is not None):
            backlog.popleft()

    def _pause(self, t: float) -> None:
        """The reservation could not be renewed (``reserved.json`` cannot be written: a full
        disk): number no row past it (the scheduler's lock is held).

        A killed process's successor starts at the reserved bound; a row numbered past it
        and handed to a reader would have its number used twice. So from here rows are
        counted, not recorded (the recorder writes them into a sink that is emptied a
        chunk at a time), the spill's next drain reports it at ERROR, and the renewal is
        tried again every chunk's worth of rows, at every tick (``spill_interval``) and
        flush. Once it succeeds, the first row numbered is a ``shutdown`` row, result
        ``unrecorded``, saying how many rows were not recorded and why; :attr:`unrecorded`
        counts them. The scheduler never stops for it.
        """
        self._sink = FlatRows()
        self._skipped = 0
        self._paused_at = t
        self._renew_writer()

    @property
    def unrecorded(self) -> int:
        """Rows not recorded because the seq reservation could not be renewed (a full
        disk; see ``docs/event-log.md``): 0 while every row is recorded.

        >>> EventLog().unrecorded
        0
        """
        sink = self._sink
        return self._unrecorded + (len(sink) if sink is not None else 0)

    def _count_skipped(self) -> None:
        sink = self._sink
        if sink is not None and sink:
            self._skipped += len(sink)
            self._unrecorded += len(sink)
            self._sink = FlatRows()

    def _resume(self) -> bool:
        """Renew the reservation if it can be now, and then number rows again (with a row
        saying how many were not recorded); the scheduler's lock is held. True if numbering."""
        spill = self._spill
        if self._sink is None:
            return True
        if spill is not None and spill.refused is None:
            spill.reserve(self._tail_first + self._chunk_size)
            if spill.reserved <= self._tail_first:
                self._renew_writer()
                return False
        self._count_skipped()
        self._sink = None
        error = spill.reserve_failed if spill is not None else None
        since = "" if math.isnan(self._paused_at) else f" from t={self._paused_at:.6f} s on"
        detail = (
            f"{self._skipped:,} rows{since} were not recorded: the log's seq reservation "
            f"could not be renewed ({error}), and no row is numbered past it"
        )
        self._renew_writer()
        t = self._paused_at if not math.isnan(self._paused_at) else 0.0
        thread = threading.current_thread().name
        row = (KIND_CODE["shutdown"], t, time.time(), thread, -1, "unrecorded", math.nan, None)
        self.append((*row, -1, -1, detail))
        return True

    def tick(self) -> None:
        """The time-bounded flush (``spill_interval``), every half interval on the log's
        background thread: seal the partial tail if it was already there at the previous
        tick, so that its segment is written next; a row waits at most two ticks.

        Comparing the tail's first ``seq`` with the last tick's costs the recording of a
        row nothing: no clock is read per row.
        """
        with self._lock:
            spill = self._spill
            if spill is None or spill.refused is not None or spill.writer.closed:
                return
            if self._sink is not None and not self._resume():
                return
            if not self._tail:
                self._aged = -1
            elif self._aged != self._tail_first:
                self._aged = self._tail_first  # first seen now: sealed at the next tick
            else:
                self._aged = -1
                self._seal()

    # -- spilling ------------------------------------------------------------------------
    @property
    def spill_directory(self) -> str | None:
        """Where this log spills its rows, or ``None``."""
        return None if self._spill is None else self._spill.directory

    @property
    def spill_error(self) -> BaseException | None:
        """Why writing a segment is failing (``None`` while writes succeed).

        The chunk that failed, and every later one, stay in memory (a bounded log
        keeps them beyond ``max_rows``); each later chunk and :meth:`flush` retry the
        write, in order, and the spill resumes once one succeeds. In a child of
        ``os.fork()``: a :class:`~tempsched_lab.log.files.ForkedLogError` (the copy never
        writes the parent's directory; see ``docs/event-log.md``).
        """
        return None if self._spill is None else self._spill.error

    @property
    def unwritten(self) -> int:
        """Rows recorded but not yet on disk (0 without a spill directory)."""
        if self._spill is None:
            return 0
        return self._seq - self._spill.written

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Write every row recorded so far to the spill directory (the partial tail too).

        Returns True once they are all on disk. Returns False if a segment could
        not be written (:attr:`spill_error` says why; the rows stay in memory and
        the next flush tries again) or ``timeout`` seconds passed first; at once in a
        child of ``os.fork()``, whose copy of the log never writes the parent's
        directory (:attr:`spill_error` is a ``ForkedLogError`` naming both). Without a
        spill directory, it only waits for the compaction of full chunks: the
        partial tail stays as it is (sealing it would leave a chunk per call in a
        loop that flushes after each row).
        """
        if self._spill is None:  # the tail stays: sealing it would make a chunk per flush
            return compactor.wait_compacted(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            numbering = self._resume()
            self._seal()
        ok = self._spill.drain(report=True, deadline=deadline) and numbering
        with self._lock:
            self._trim()
        return ok

    def close_spill(
        self, timeout: float | None = None, *, outliving: Sequence[Mapping[str, Any]] = ()
    ) -> bool:
        """Write what is left, then close the spill directory (at the scheduler's shutdown).

        The directory is closed *complete* only when every row is on disk. Rows
        that could not be written (the disk is full) are recorded in its manifest
        as missing, with the reason, and a :class:`~tempsched_lab.log.files.
        IncompleteLogWarning` says so: ``read_log(directory)`` then refuses it
        instead of passing it off as the whole log, and :meth:`history` still has
        the rows. Returns True when complete (and without a spill directory).

        ``outliving``: runs still going (``{"task_id": ..., "name": ...}`` each; a
        shutdown passes the runs that outlived its timeout): the manifest names them
        as ``outliving_runs``, since the rows they record later are not written, and an
        :class:`~tempsched_lab.log.files.IncompleteLogWarning` says so.

        >>> import tempfile, warnings
        >>> log = EventLog(spill=tempfile.mkdtemp())
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     log.close_spill(timeout=5.0, outliving=[{"task_id": 3, "name": "slow"}])
        True
        >>> "task 3 ('slow')" in str(caught[0].message)
        True
        """
        if self._spill is None:
            return True
        compactor.every(self, None)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._resume()  # (a last try: the row saying how many rows were not recorded)
            self._count_skipped()
            self._seal()
            recorded = self._seq
        complete = self._spill.close(recorded, deadline, outliving)
        if outliving:
            import warnings

            from .files import IncompleteLogWarning

            runs = ", ".join(
                f"task {run.get('task_id')} ({run.get('name')!r})" for run in outliving
            )
            warnings.warn(
                f"the event log's spill directory {self._spill.directory!r} was closed while "
                f"{len(outliving)} run(s) were still going: {runs}; the rows they record from "
                f"seq {recorded} on (their finish or error) are not in it (its manifest names "
                "them as outliving_runs; log.history() will have the rows)",
                IncompleteLogWarning,
                stacklevel=3,
            )
        return complete

    def hold_until_closed(self, lock: Any) -> None:
        """Keep ``lock`` (anything with ``release()``: a spill root's
        :class:`~tempsched_lab.log.files.rootlock.RootLock`) until the spill directory
        closes, then release it (:func:`~tempsched_lab.restarts.continuing_scheduler` hands
        over its root's lock). Without a spill directory it is released now.
        """
        if self._spill is None:
            lock.release()
            return
        self._spill.root_lock = lock

    def history(self) -> pd.DataFrame:
        """Every row ever recorded: the spill directory's segments, then what is in memory.

        Without a spill directory (or before anything was spilled) it is :meth:`to_frame`.
        Safe while the log grows: what is in memory is taken first, then the disk is
        read; a chunk leaves memory only once its segment is written, so every row is
        in one of the two.
        """
        if self._spill is None:
            return self.to_frame()
        from .files import LogFileError, concat_frames
        from .files.spill import INCOMPLETE_ATTR, _read_spill

        view = self._parts(None, None, held=True)
        held_from = view.lo
        memory = self._frame_of(view)
        if held_from <= self._start:
            return memory
        on_disk = _read_spill(Path(self._spill.directory), "keep")
        on_disk.attrs.pop(INCOMPLETE_ATTR, None)  # the rows it lacks are held in memory
        stop = int(on_disk["seq"].iloc[-1]) + 1 if len(on_disk) else self._start
        if stop < held_from:
            raise LogFileError(
                f"{self._spill.directory}: holds rows up to seq {stop - 1} but memory starts at "
                f"seq {held_from}: rows seq {stop}..{held_from - 1} are lost (was the "
                "directory changed?)"
            )
        if stop > held_from:
            on_disk = on_disk[on_disk["seq"] < held_from]
        frame = concat_frames([on_disk, memory])
        frame.attrs[ORIGIN_ATTR] = self.time_origin
        return frame

    def _inherited_by_fork(self, lock: threading.Lock, reason: str) -> None:
        """In a child process after ``os.fork()``: a fresh lock, no spilling, no subscribers.

        The parent keeps writing the spill directory (the spill's own fork hook refused it
        here already; ``reason``, when given, says why in the scheduler's words); subscriber
        threads stayed there, and a row handed to one would wait on its queue's lock, which
        the parent's thread may have held at the fork. Taps (called in the recording
        thread) stay.
        """
        self._lock = lock
        self._subs = []
        self._fans = bool(self._taps)
        if self._spill is not None and reason:
            self._spill.refuse(reason)

    def _fan_out(self, seq: int, row: Row) -> None:
        for tap in self._taps:
            try:
                tap(seq, row)
            except Exception as exc:  # a broken tap must never break the scheduler
                self._taps = [t for t in self._taps if t is not tap]
                self._fans = bool(self._taps or self._subs)
                self.tap_errors = [*self.tap_errors, exc]
        for sub in self._subs:
            sub.offer(seq, row)

    # -- export -------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write the log as plain CSV, its metadata in ``path + ".meta.json"`` beside it.

        ``pandas.read_csv(path)`` reads it as it is (times in seconds since the
        start); :func:`read_log` checks it against its metadata and gives back
        the frame of ``to_frame()``, same dtypes and values.
        """
        from .files import write_log

        write_log(self.to_frame(), path, "csv")

    def to_parquet(self, path: str | os.PathLike[str]) -> None:
        """Write the log as Parquet (needs ``pyarrow``: ``pip install tempsched-lab[parquet]``)."""
        from .files import write_log

        write_log(self.to_frame(), path, "parquet")

    def audit(self) -> AuditReport:
        """Check the log's conservation laws; see :func:`tempsched_lab.audit`."""
        from .audit import audit

        return audit(self.to_frame(), dropped=self.dropped)

    def __repr__(self) -> str:
        return f"<EventLog {len(self)} rows, {self.dropped} dropped>"


def read_log(path: str | os.PathLike[str], *, on_incomplete: str = "raise") -> pd.DataFrame:
    """Read a log written by ``to_csv``/``to_parquet``, or a spill directory; same dtypes as
    ``to_frame()``. See :func:`tempsched_lab.log.files.read_log` (``on_incomplete`` too).
    """
    from .files import read_log as read

    frame: pd.DataFrame = read(path, on_incomplete=on_incomplete)
    return frame
