"""The event log: one typed row per observable scheduling step.

The scheduler's :class:`Recorder` writes one row per step while the scheduler
holds its lock, so ``seq`` is gapless and the log order is the true order. Rows
are stored as small tuples (appending never builds a DataFrame); full chunks of
rows are compacted in the background into per-kind numpy arrays (about half the
memory), and :meth:`EventLog.to_frame` builds a typed pandas DataFrame on demand.
Neither numpy nor pandas is imported until a frame is asked for.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, delay=1, args=("hi",))
>>> s.log.to_frame()[["seq", "kind", "case", "due"]]
   seq      kind  case  due
0    0  schedule     2  1.0
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .compactor import compact_later
from .schema import COLUMNS, COMMON, DERIVED, KIND_CODE, KINDS, LAYOUTS, ORIGINS, STORES
from .subscriptions import Subscription
from .task import Task, describe_exception, short_repr
from .timescale import ORIGIN_ATTR

if TYPE_CHECKING:
    import pandas as pd

    from .audit import AuditReport
    from .logframe import Compact
    from .queues.base import DueGroup, TimerQueue

__all__ = ["EventLog", "Recorder", "Subscription", "read_log", "row_dict"]

Row = tuple[Any, ...]
#: Rows per chunk of an unbounded log: compacted (and spilled) a chunk at a time.
CHUNK = 65_536


class _Chunk:
    """A full chunk of rows: tuples until the compactor turns them into arrays.

    With a spill directory, the compactor then writes the chunk as a segment
    (:meth:`finish`); ``spilled`` says it is on disk, so a bounded log may drop it.
    """

    __slots__ = ("compact", "first", "rows", "spill", "spilled")

    def __init__(self, first: int, rows: list[Row], spill: _Spill | None = None) -> None:
        self.first = first
        self.rows: list[Row] | None = rows
        self.compact: Compact | None = None
        self.spill = spill
        self.spilled = spill is None

    def finish(self) -> None:
        """Compact, and write to the spill directory (the compactor thread calls this)."""
        compact = self.compacted()
        if self.spill is not None and not self.spilled:
            self.spill.write(compact)
            self.spilled = True

    def __len__(self) -> int:
        rows = self.rows
        return len(rows) if rows is not None else self.compact.n  # type: ignore[union-attr]

    def compacted(self) -> Compact:
        """The chunk as per-kind arrays (converting it now if the compactor has not yet)."""
        compact = self.compact
        if compact is None:
            from .logframe import Compact

            rows = self.rows
            assert rows is not None
            compact = Compact(rows, self.first)
            self.compact = compact  # set before dropping the rows: readers see one of them
            self.rows = None
        return compact

    def tuples(self) -> list[Row]:
        rows = self.rows
        if rows is not None:
            return rows
        return self.compact.rows()  # type: ignore[union-attr]


class _Spill:
    """A log's spill directory: segments written in ``seq`` order by the compactor thread."""

    def __init__(self, directory: str | os.PathLike[str], time_origin: float) -> None:
        from .logfiles import SegmentWriter

        self.directory = os.fspath(directory)
        self.time_origin = time_origin
        self.writer = SegmentWriter(self.directory, time_origin)
        self.error: BaseException | None = None
        self._lock = threading.Lock()

    def write(self, compact: Compact) -> None:
        from .logframe import frame_of

        with self._lock:
            if self.error is not None:
                return  # a failed segment stops the spill: later rows would leave a gap
            try:
                self.writer.write(frame_of(compact.columns(), self.time_origin))
            except BaseException as exc:  # kept and reported by EventLog.spill_error
                self.error = exc

    def close(self) -> None:
        with self._lock, contextlib.suppress(Exception):
            self.writer.close()


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
            rows not written yet: the tail (fewer than ``spill_rows``) and any
            chunk still being compacted. :meth:`flush` writes the tail now.
        spill_rows: rows per segment (and per chunk) of a spilled log.
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
    ) -> None:
        if max_rows is not None and (
            isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1
        ):
            raise ValueError(f"max_rows={max_rows!r}: expected a positive integer or None")
        self.enabled = enabled
        self.max_rows = max_rows
        #: The clock value shown as ``0.000 s`` (see :mod:`tempsched_lab.timescale`).
        self.time_origin = float(time_origin)
        self._lock = lock if lock is not None else threading.Lock()
        # rows: full chunks (oldest first), then the tail being appended to
        self._chunk_size = CHUNK if max_rows is None else min(CHUNK, max(1024, max_rows))
        self._spill: _Spill | None = None
        if spill is not None:
            if isinstance(spill_rows, bool) or not isinstance(spill_rows, int) or spill_rows < 1:
                raise ValueError(f"spill_rows={spill_rows!r}: expected a positive integer")
            self._spill = _Spill(spill, self.time_origin)
            self._chunk_size = spill_rows
        self._chunks: list[_Chunk] = []
        self._rows: list[Row] = []
        self._first = 0  # seq of the first stored row
        self._seq = 0
        self._taps: list[Callable[[int, Row], Any]] = []
        self._subs: list[Subscription] = []
        #: rows in the tail before an append takes the slow path (0 while any tap or
        #: subscriber listens): one comparison per append covers both (see _fans)
        self._limit = self._chunk_size
        self._local = threading.local()
        #: exceptions raised by taps (each removed when it raised)
        self.tap_errors: list[BaseException] = []

    # -- reading --------------------------------------------------------------------
    def __len__(self) -> int:
        stored = self._seq - self._first
        return stored if self.max_rows is None else min(stored, self.max_rows)

    @property
    def dropped(self) -> int:
        """Rows that fell out of a bounded log."""
        return self._seq - len(self)

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next row will get (total rows ever recorded)."""
        return self._seq

    def _parts(
        self, start: int | None, stop: int | None
    ) -> tuple[list[_Chunk], list[Row], int, int, int]:
        """A consistent view: chunks, tail rows, the tail's first seq, and seq ``lo:hi`` to read."""
        with self._lock:
            chunks = list(self._chunks)
            tail = self._rows[:]
            tail_first = self._seq - len(tail)
            lowest = self._seq - len(self)
        end = tail_first + len(tail)
        lo = lowest if start is None else min(max(lowest, start), end)
        hi = end if stop is None else min(end, stop)
        return chunks, tail, tail_first, lo, max(lo, hi)

    def _tuples(self, start: int | None = None, stop: int | None = None) -> tuple[list[Row], int]:
        chunks, tail, tail_first, lo, hi = self._parts(start, stop)
        out: list[Row] = []
        for chunk in chunks:
            if chunk.first + len(chunk) <= lo or chunk.first >= hi:
                continue
            out.extend(chunk.tuples()[max(0, lo - chunk.first) : hi - chunk.first])
        if hi > tail_first:
            out.extend(tail[max(0, lo - tail_first) : hi - tail_first])
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
        from .logframe import Compact, concat_columns, frame_of, slice_columns

        chunks, tail, tail_first, lo, hi = self._parts(start, stop)
        parts = []
        for chunk in chunks:
            if chunk.first + len(chunk) <= lo or chunk.first >= hi:
                continue
            cols = chunk.compacted().columns()
            parts.append(slice_columns(cols, max(0, lo - chunk.first), hi - chunk.first))
        if hi > tail_first or not parts:
            a, b = max(0, lo - tail_first), max(0, hi - tail_first)
            parts.append(Compact(tail[a:b], tail_first + a).columns())
        return frame_of(concat_columns(parts), self.time_origin)

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
        call the scheduler or this log's readers from it (its lock is held). A
        tap that raises is removed (the error is kept in :attr:`tap_errors`),
        never passed to the scheduler. Returns a function that removes the tap.
        """

        def run(seq: int, row: Row) -> None:
            callback(row_dict(seq, row))

        self._taps = [*self._taps, run]
        self._fans = True

        def remove() -> None:
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

    def _append(self, row: Row) -> None:
        """Store one row (the recorder's hottest rows inline these five lines)."""
        rows = self._rows
        rows.append(row)
        self._seq += 1
        if len(rows) >= self._limit:
            self._after_append(row)

    def _extend(self, rows: list[Row]) -> None:
        """Append many rows at once (``schedule_many``), sealing chunks as they fill."""
        for row in rows:  # rarely more than a chunk: the seal check stays per row
            self._rows.append(row)
            self._seq += 1
            if len(self._rows) >= self._limit:
                self._after_append(row)

    def _after_append(self, row: Row) -> None:
        """The rare work after an append: seal a full chunk, hand the row to taps/subscribers."""
        if len(self._rows) >= self._chunk_size:
            self._seal()
        if self._fans:
            self._fan_out(self._seq - 1, row)

    def _seal(self) -> None:
        """The tail is a full chunk: file it (to be compacted off the lock) and start a new one."""
        rows = self._rows
        if not rows:
            return
        chunk = _Chunk(self._seq - len(rows), rows, self._spill)
        self._chunks.append(chunk)
        self._rows = []
        self._trim()
        compact_later(chunk)

    def _trim(self) -> None:
        """Drop the oldest chunks beyond ``max_rows`` (only once they are on disk, if spilling)."""
        if self.max_rows is None:
            return
        stored = self._seq - self._first
        chunks = self._chunks
        while chunks and chunks[0].spilled and stored - len(chunks[0]) >= self.max_rows:
            stored -= len(chunks[0])
            self._first += len(chunks.pop(0))

    # -- spilling ------------------------------------------------------------------------
    @property
    def spill_directory(self) -> str | None:
        """Where this log spills its rows, or ``None``."""
        return None if self._spill is None else self._spill.directory

    @property
    def spill_error(self) -> BaseException | None:
        """Why writing a segment failed (the spill then stops; rows stay in memory)."""
        return None if self._spill is None else self._spill.error

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Write every row recorded so far to the spill directory (the partial tail too).

        Returns False if that did not finish within ``timeout`` seconds. Without
        a spill directory, it only waits for the compaction of sealed chunks.
        """
        from .compactor import wait_compacted

        with self._lock:
            self._seal()
        return wait_compacted(timeout)

    def close_spill(self) -> None:
        """Flush, then record the totals in the spill directory (at the scheduler's shutdown)."""
        if self._spill is not None:
            self.flush()
            self._spill.close()

    def history(self) -> pd.DataFrame:
        """Every row ever recorded: the spill directory's segments, then what is in memory.

        Without a spill directory (or before anything was spilled) it is :meth:`to_frame`.
        """
        if self._spill is None:
            return self.to_frame()
        from .compactor import wait_compacted
        from .logfiles import concat_frames, read_log

        wait_compacted(30.0)
        on_disk = read_log(self._spill.directory) if self._spill.writer.segments else None
        start = 0 if on_disk is None else int(on_disk["seq"].iloc[-1]) + 1 if len(on_disk) else 0
        tail = self.to_frame(start=start)
        frame = tail if on_disk is None else concat_frames([on_disk, tail])
        frame.attrs[ORIGIN_ATTR] = self.time_origin
        return frame

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

    def _thread_name(self) -> str:
        """The current thread's name, cached in thread-local storage (a hot-path saving)."""
        try:
            return self._local.name  # type: ignore[no-any-return]
        except AttributeError:
            name = self._local.name = threading.current_thread().name
            return name

    # -- export -------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write the log as plain CSV, its metadata in ``path + ".meta.json"`` beside it.

        ``pandas.read_csv(path)`` reads it as it is (times in seconds since the
        start); :func:`read_log` checks it against its metadata and gives back
        the frame of ``to_frame()``, same dtypes and values.
        """
        from .logfiles import write_log

        write_log(self.to_frame(), path, "csv")

    def to_parquet(self, path: str | os.PathLike[str]) -> None:
        """Write the log as Parquet (needs ``pyarrow``: ``pip install tempsched-lab[parquet]``)."""
        from .logfiles import write_log

        write_log(self.to_frame(), path, "parquet")

    def audit(self) -> AuditReport:
        """Check the log's conservation laws; see :func:`tempsched_lab.audit`."""
        from .audit import audit

        return audit(self.to_frame(), dropped=self.dropped)

    def __repr__(self) -> str:
        return f"<EventLog {len(self)} rows, {self.dropped} dropped>"


def read_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a log written by ``to_csv``/``to_parquet``; same dtypes as ``to_frame()``.

    The format is chosen by the file's suffix (``.parquet``/``.pq``, else CSV).
    """
    from .logfiles import read_log as read

    frame: pd.DataFrame = read(path)
    return frame


#: A decision's case as a plain int (``CASE_INT[case]``). A row holding only atoms (numbers,
#: strings, ``None``) is untracked by the garbage collector after its first collection; one
#: holding a ``Case`` member stays tracked, and every later full collection walks every such
#: row: storing the int saves ~1,800 instructions per ``schedule`` with the log on (callgrind,
#: 5,000 calls: 29,712 -> 27,931).
CASE_INT: tuple[int, ...] = tuple(range(9))


class Recorder:
    """Writes the event log in the scheduler's words: one method per kind of step.

    The scheduler calls these while holding its lock; each reads the queue
    context (head time, head size, queue size) itself, so a row always says
    what the queue looked like right after the step. None of them raises for
    any task, argument or exception a user can supply.
    """

    __slots__ = ("_append", "_fire", "_index", "_local", "_queue", "_wall", "log")

    def __init__(self, log: EventLog, queue: TimerQueue) -> None:
        self.log = log
        self._queue = queue
        self._append = log._append
        self._local = log._local
        self._index = queue.index  # len() of it is the queue size, without a method call
        self._wall = time.time
        fire = type(queue).fire_time
        from .queues.base import TimerQueue

        self._fire = None if fire is TimerQueue.fire_time else queue.fire_time

    def _thread(self) -> str:
        try:
            return self._local.name  # type: ignore[no-any-return]
        except AttributeError:
            name = self._local.name = threading.current_thread().name
            return name

    # -- decisions ------------------------------------------------------------------
    def scheduled(
        self,
        now: float,
        task: Task,
        case: int,
        origin: int,
        head_before: float | None,
        head_after: float | None,
        woke: bool,
    ) -> None:
        """A request stored as ``task`` (cases 2, 3, 4, 6, 8), or a periodic re-arm."""
        due = task.due
        args = task.args
        try:
            thread = self._local.name
        except AttributeError:
            thread = self._thread()
        row = (
            0,
            now,
            self._wall(),
            thread,
            task.id,
            CASE_INT[case],
            -1,
            due,
            due if self._fire is None else self._fire(due),
            task.label,
            "()" if args == () else short_repr(args),
            task.period,
            origin,
            head_before,
            head_after,
            self._queue.head_size(),
            len(self._index),
            woke,
            task.trigger_text,
        )
        log = self.log  # EventLog._append inlined on the hottest rows: ~550 instructions a row
        log._rows.append(row)
        log._seq += 1
        if len(log._rows) >= log._limit:
            log._after_append(row)

    def duplicate(
        self, now: float, request: Task, dup: Task, case: int, origin: int, head: float | None
    ) -> None:
        """A request that matched pending task ``dup`` (cases 5 and 7): nothing stored."""
        queue = self._queue
        due = request.due
        self._append(
            (
                0,
                now,
                self._wall(),
                self._thread(),
                dup.id,
                CASE_INT[case],
                dup.id,
                due,
                due if self._fire is None else self._fire(due),
                request.name,
                short_repr(request.args),
                request.period,
                origin,
                head,
                head,
                queue.head_size(),
                len(self._index),
                False,
                request.trigger_text,
            )
        )

    def rejected(
        self,
        now: float,
        case: int,
        due: float,
        label: str,
        args: str,
        period: float | None,
        origin: int,
        reason: str,
    ) -> None:
        """A request rejected: case 1 (in the past), or invalid input (``case`` 0)."""
        queue = self._queue
        self._append(
            (
                1,
                now,
                self._wall(),
                self._thread(),
                case,
                due,
                label,
                args,
                period,
                origin,
                queue.head_time(),
                queue.head_size(),
                len(self._index),
                reason,
            )
        )

    # -- the worker -------------------------------------------------------------------
    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        """The worker's wait ended: notified (the head moved earlier) or timed out."""
        queue = self._queue
        self._append(
            (
                2,
                now,
                self._wall(),
                self._thread(),
                "notified" if notified else "timeout",
                wait,
                queue.head_time(),
                queue.head_size(),
                len(self._index),
            )
        )

    # -- runs -------------------------------------------------------------------------
    def dispatched(self, now: float, groups: Sequence[DueGroup]) -> None:
        """The due ``groups`` just taken left the queue for their executors: one row per
        task, in order, each with the queue as it is after the whole batch left.

        One reading of the wall clock, the thread and the queue for the batch: 5,000 due at
        once cost ~1,700 instructions a task less than a call per row (callgrind); a group of
        one costs ~1,000 more (the extra loop).
        """
        queue = self._queue
        head, ready, size = queue.head_time(), queue.head_size(), len(self._index)
        try:
            thread = self._local.name
        except AttributeError:
            thread = self._thread()
        wall, fire, log = self._wall(), self._fire, self.log
        rows = log._rows
        for group in groups:
            for task in group.tasks:
                due = task.due
                row = (
                    3,
                    now,
                    wall,
                    thread,
                    task.id,
                    due,
                    due if fire is None else fire(due),
                    task.label,
                    head,
                    ready,
                    size,
                )
                rows.append(row)  # EventLog._append inlined, as in scheduled()
                log._seq += 1
                if len(rows) >= log._limit:
                    log._after_append(row)
                    rows = log._rows  # (a full chunk was filed: a new tail)

    def started(self, now: float, task: Task, due: float, dispatched: float) -> None:
        """A run started."""
        try:
            thread = self._local.name
        except AttributeError:
            thread = self._thread()
        row = (4, now, self._wall(), thread, task.id, due, task.label, dispatched)
        log = self.log
        log._rows.append(row)
        log._seq += 1
        if len(log._rows) >= log._limit:
            log._after_append(row)

    def finished(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        result: Any,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        """A run returned (``result``: its return value, only its type name is kept).

        ``worker``/``worker_start``: where and when a run handed to a cluster started.
        """
        try:
            thread = self._local.name
        except AttributeError:
            thread = self._thread()
        row = (
            5,
            now,
            self._wall(),
            thread,
            task.id,
            due,
            task.label,
            duration,
            type(result).__name__,
            worker,
            worker_start,
        )
        log = self.log
        log._rows.append(row)
        log._seq += 1
        if len(log._rows) >= log._limit:
            log._after_append(row)

    def failed(
        self,
        now: float,
        task: Task,
        due: float,
        duration: float,
        exc: BaseException,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> str:
        """A run raised ``exc``; returns the traceback text it recorded."""
        text = traceback_text(exc)
        self._append(
            (
                6,
                now,
                self._wall(),
                self._thread(),
                task.id,
                due,
                task.label,
                duration,
                describe_exception(exc),
                text,
                worker,
                worker_start,
            )
        )
        return text

    def event_set(self, now: float, task: Task, due: float) -> None:
        """A ``threading.Event`` action was set."""
        self._append((7, now, self._wall(), self._thread(), task.id, due, task.label))

    def missed(self, now: float, task: Task, due: float, missed: int, policy: str) -> None:
        """A periodic re-arm skipped ``missed`` runs under misfire ``policy``."""
        self._append(
            (
                8,
                now,
                self._wall(),
                self._thread(),
                task.id,
                due,
                task.label,
                task.period,
                missed,
                policy,
            )
        )

    # -- cancel and shutdown ----------------------------------------------------------
    def cancelled(
        self,
        now: float,
        task_id: int,
        result: str,
        where: str | None,
        task: Task | None,
        head_before: float | None,
    ) -> None:
        """A cancel request and what it did."""
        queue = self._queue
        self._append(
            (
                9,
                now,
                self._wall(),
                self._thread(),
                task_id,
                result,
                where,
                math.nan if task is None else task.due,
                None if task is None else task.label,
                head_before,
                queue.head_time(),
                queue.head_size(),
                len(self._index),
            )
        )

    def dropped(self, now: float, task: Task, detail: str | None) -> None:
        """``task`` was dropped by shutdown (pending, or a periodic task not re-armed)."""
        queue = self._queue
        self._append(
            (
                10,
                now,
                self._wall(),
                self._thread(),
                task.id,
                "dropped",
                task.due,
                task.label,
                queue.head_size(),
                len(self._index),
                detail,
            )
        )

    def stopped(self, now: float, detail: str) -> None:
        """The scheduler stopped (the last row of a closed scheduler's log)."""
        queue = self._queue
        self._append(
            (
                10,
                now,
                self._wall(),
                self._thread(),
                -1,
                "stopped",
                math.nan,
                None,
                queue.head_size(),
                len(self._index),
                detail,
            )
        )


def traceback_text(exc: BaseException) -> str:
    """The formatted traceback of ``exc`` from the task's own code on; never raises.

    The runner's frame (``tempsched_lab/runs.py``, which called the task) is left
    out; a broken ``__str__`` is named instead of raising.
    """
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename == _RUNS:
        tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(exc), exc, tb))
    except Exception:
        frames = traceback.format_tb(tb) if tb is not None else []
        return "".join(frames) + describe_exception(exc) + "\n"


_RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs.py")
