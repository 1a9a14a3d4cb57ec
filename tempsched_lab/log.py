"""The event log: one typed row per observable scheduling step.

The scheduler calls one recording method per step while it holds its lock, so
``seq`` is gapless and the log order is the true order. Rows are stored as
tuples (appending never builds a DataFrame); :meth:`EventLog.to_frame` builds a
typed pandas DataFrame on demand.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, delay=1, args=("hi",))
>>> s.log.to_frame()[["seq", "kind", "case", "due"]]
   seq      kind  case  due
0    0  schedule     2  1.0
"""

from __future__ import annotations

import collections
import gc
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .schema import COLUMNS, KIND_CODE, KINDS, LAYOUTS, ORIGIN_CODE, ORIGINS
from .timescale import ORIGIN_ATTR

__all__ = ["EventLog", "Subscription", "read_log"]

_CHUNK = 65_536
Row = tuple[Any, ...]


class Subscription:
    """A callback receiving rows off the scheduler's lock, in its own thread.

    A slow subscriber only delays itself; one that raises has its errors
    counted in :attr:`errors` (the last one kept in :attr:`last_error`).
    """

    def __init__(
        self, log: EventLog, callback: Callable[[dict[str, Any]], Any], kinds: frozenset[int] | None
    ) -> None:
        self._log = log
        self.callback = callback
        self.kinds = kinds
        self._pending: collections.deque[tuple[int, Row]] = collections.deque()
        self._wake = threading.Event()
        self._closed = False
        self.delivered = 0
        self.errors = 0
        self.last_error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"tempsched-subscriber-{id(self):x}", daemon=True
        )
        self._thread.start()

    def _offer(self, seq: int, row: Row) -> None:
        if self.kinds is None or row[0] in self.kinds:
            self._pending.append((seq, row))
            self._wake.set()

    def _run(self) -> None:
        pending = self._pending
        while True:
            self._wake.wait()
            self._wake.clear()
            while pending:
                seq, row = pending.popleft()
                try:
                    self.callback(row_dict(seq, row))
                except Exception as exc:
                    self.errors += 1
                    self.last_error = exc
                self.delivered += 1
            if self._closed:
                return

    @property
    def backlog(self) -> int:
        """Rows waiting to be delivered."""
        return len(self._pending)

    def flush(self, timeout: float | None = 5.0) -> bool:
        """Wait until every row offered so far was delivered; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._pending or self._wake.is_set():
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.001)
        return True

    def close(self) -> None:
        """Stop delivering (rows already queued are still delivered)."""
        self._closed = True
        self._log._unsubscribe(self)
        self._wake.set()


def row_dict(seq: int, row: Row) -> dict[str, Any]:
    """A stored row as a dict of every column (missing ones as ``None``/NaN)."""
    out: dict[str, Any] = dict(_BLANK)
    kind = KINDS[row[0]]
    out["seq"], out["kind"], out["t"], out["wall"], out["thread"] = seq, kind, *row[1:4]
    for name, value in zip(LAYOUTS[kind], row[4:], strict=True):
        out[name] = value
    for name, value in _CONSTANT[kind]:
        out[name] = value
    if kind in ("reject", "wake"):
        out["head_after"] = out["head_before"]
    if kind in _LATE_KINDS:
        out["lateness"] = out["t"] - out["due"]
    if kind == "start":
        out["queue_delay"] = out["t"] - out.pop("dispatched")
    origin = out["origin"]
    out["origin"] = ORIGINS[origin] if isinstance(origin, int) and origin >= 0 else None
    for name in ("task_id", "dup_of", "ready_size", "queue_size", "missed"):
        if out[name] == -1:
            out[name] = None
    out["case"] = out["case"] or None
    woke = out["woke"]
    out["woke"] = None if woke == -1 or woke is None else bool(woke)
    return out


class EventLog:
    """Every scheduling step as a row; see ``docs/event-log.md`` for the schema.

    Args:
        max_rows: keep only the newest ``max_rows`` rows (a ring buffer);
            :attr:`dropped` counts what fell out. ``None`` keeps everything.
        enabled: record nothing when False (``Scheduler(log=False)``).
        lock: the lock the recorder holds while appending (the scheduler's);
            readers of a bounded log copy it under this lock.
        time_origin: the clock value users see as ``0.000 s`` (the clock's
            origin); frames carry it in ``frame.attrs["time_origin"]``.
    """

    def __init__(
        self,
        max_rows: int | None = None,
        *,
        enabled: bool = True,
        lock: threading.Lock | None = None,
        time_origin: float = 0.0,
    ) -> None:
        if max_rows is not None and (
            isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1
        ):
            raise ValueError(f"max_rows={max_rows!r}: expected a positive integer or None")
        self.enabled = enabled
        self.max_rows = max_rows
        #: The clock value shown as ``0.000 s`` (see :mod:`tempsched_lab.timescale`).
        self.time_origin = float(time_origin)
        self._rows: list[Row] | collections.deque[Row] = (
            [] if max_rows is None else collections.deque(maxlen=max_rows)
        )
        self._seq = 0
        self._lock = lock if lock is not None else threading.Lock()
        self._taps: list[Callable[[int, Row], Any]] = []
        self._subs: list[Subscription] = []
        self._chunks: list[dict[str, np.ndarray]] = []  # converted full chunks (list mode)
        self._current = threading.current_thread
        self._local = threading.local()
        self._wall = time.time

    # -- reading --------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._rows)

    @property
    def dropped(self) -> int:
        """Rows that fell out of a bounded log."""
        return self._seq - len(self._rows)

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next row will get (total rows ever recorded)."""
        return self._seq

    def _copy(self) -> tuple[list[Row], int]:
        """A consistent copy of the stored rows and the ``seq`` of the first one."""
        rows = self._rows
        if isinstance(rows, list):  # append-only, never drops: a slice is consistent
            return rows[:], 0
        with self._lock:  # a deque drops rows as it appends: copy under the recorder's lock
            return list(rows), self._seq - len(rows)

    def rows(self) -> list[dict[str, Any]]:
        """The stored rows as dicts (for small logs and tests)."""
        kept, first = self._copy()
        return [row_dict(first + i, r) for i, r in enumerate(kept)]

    def tail(self, n: int = 20) -> pd.DataFrame:
        """The last ``n`` rows as a DataFrame."""
        kept, first = self._copy()
        part = kept[-n:] if n > 0 else []
        return self._stamped(_frame([_columns(part, first + len(kept) - len(part))]))

    def _stamped(self, frame: pd.DataFrame) -> pd.DataFrame:
        frame.attrs[ORIGIN_ATTR] = self.time_origin
        return frame

    def to_frame(self) -> pd.DataFrame:
        """All stored rows as a typed DataFrame (built now, from the stored tuples).

        Full chunks of an unbounded log are converted once and cached, so
        repeated calls (a live dashboard) only convert what is new.
        """
        rows = self._rows
        if isinstance(rows, list):
            n = len(rows)
            while (len(self._chunks) + 1) * _CHUNK <= n:
                k = len(self._chunks)
                self._chunks.append(_columns(rows[k * _CHUNK : (k + 1) * _CHUNK], k * _CHUNK))
            done = len(self._chunks) * _CHUNK
            return self._stamped(_frame([*self._chunks, _columns(rows[done:n], done)]))
        kept, first = self._copy()
        return self._stamped(_frame([_columns(kept, first)]))

    # -- subscribing ------------------------------------------------------------------
    def subscribe(
        self, callback: Callable[[dict[str, Any]], Any], kinds: Iterable[str] | None = None
    ) -> Subscription:
        """Call ``callback(row_dict)`` for every new row (of ``kinds``), off the lock.

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
        sub = Subscription(self, callback, codes)
        self._subs = [*self._subs, sub]
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        self._subs = [s for s in self._subs if s is not sub]

    def tap(self, callback: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        """Call ``callback(row_dict)`` synchronously, *under the scheduler's lock*.

        For tests and debuggers that must see the state right after each row
        (``scheduler.queue.snapshot()`` is safe inside). Keep it fast; never
        call the scheduler or this log's readers from it (its lock is held).
        Returns a function that removes the tap.
        """

        def run(seq: int, row: Row) -> None:
            callback(row_dict(seq, row))

        self._taps = [*self._taps, run]

        def remove() -> None:
            self._taps = [t for t in self._taps if t is not run]

        return remove

    # -- recording (the scheduler holds its lock) ------------------------------------
    # Each kind stores only its own fields (see schema.LAYOUTS), after the common
    # (kind code, t, wall, thread); seq is the row's position. Floats may be None.
    def _push(self, row: Row) -> None:
        seq = self._seq
        self._seq = seq + 1
        self._rows.append(row)
        if self._taps or self._subs:
            self._fan_out(seq, row)

    def _fan_out(self, seq: int, row: Row) -> None:
        for tap in self._taps:
            tap(seq, row)
        for sub in self._subs:
            sub._offer(seq, row)

    def _thread_name(self) -> str:
        """The current thread's name, cached in thread-local storage (a hot-path saving)."""
        try:
            return self._local.name  # type: ignore[no-any-return]
        except AttributeError:
            name = self._local.name = self._current().name
            return name

    def schedule(
        self,
        t: float,
        task_id: int,
        case: int,
        dup_of: int,
        due: float,
        fire_at: float,
        label: str,
        args: str,
        period: float | None,
        origin: int,
        head_before: float | None,
        head_after: float | None,
        ready_size: int,
        queue_size: int,
        woke: bool,
    ) -> None:
        """A decision of case 2-8 (the hot path: ``_push`` inlined)."""
        row = (0, t, self._wall(), self._thread_name(), task_id, case, dup_of, due, fire_at,
               label, args, period, origin, head_before, head_after, ready_size, queue_size,
               woke)  # fmt: skip
        seq = self._seq
        self._seq = seq + 1
        self._rows.append(row)
        if self._taps or self._subs:
            self._fan_out(seq, row)

    def reject(
        self,
        t: float,
        case: int,
        due: float,
        label: str | None,
        args: str | None,
        period: float | None,
        origin: int,
        head: float | None,
        ready_size: int,
        queue_size: int,
        reason: str,
    ) -> None:
        """A rejected request: case 1, or invalid input (case 0 = not classified)."""
        self._push((1, t, self._wall(), self._thread_name(), case, due, label, args, period,
                    origin, head, ready_size, queue_size, reason))  # fmt: skip

    def wake(self, t: float, notified: bool, wait: float | None, head: float | None,
             ready_size: int, queue_size: int) -> None:  # fmt: skip
        """The worker woke up: notified, or its wait timed out."""
        self._push((2, t, self._wall(), self._thread_name(),
                    "notified" if notified else "timeout", wait, head, ready_size,
                    queue_size))  # fmt: skip

    def dispatch(self, t: float, task_id: int, due: float, fire_at: float, label: str,
                 head_after: float | None, ready_size: int, queue_size: int) -> None:  # fmt: skip
        """A due task was handed to its executor (its whole due batch already left the queue)."""
        self._push((3, t, self._wall(), self._thread_name(), task_id, due, fire_at, label,
                    head_after, ready_size, queue_size))  # fmt: skip

    def start(self, t: float, task_id: int, due: float, label: str, dispatched: float) -> None:
        """A run started."""
        self._push((4, t, self._wall(), self._thread_name(), task_id, due, label, dispatched))

    def finish(self, t: float, task_id: int, due: float, label: str, duration: float,
               result_type: str) -> None:  # fmt: skip
        """A run returned normally."""
        self._push((5, t, self._wall(), self._thread_name(), task_id, due, label, duration,
                    result_type))  # fmt: skip

    def error(self, t: float, task_id: int, due: float, label: str, duration: float,
              error: str, traceback_text: str) -> None:  # fmt: skip
        """A run raised."""
        self._push((6, t, self._wall(), self._thread_name(), task_id, due, label, duration,
                    error, traceback_text))  # fmt: skip

    def event_set(self, t: float, task_id: int, due: float, label: str) -> None:
        """A ``threading.Event`` action was set (inline, by the worker)."""
        self._push((7, t, self._wall(), self._thread_name(), task_id, due, label))

    def missed(self, t: float, task_id: int, due: float, label: str, period: float,
               missed: int, policy: str) -> None:  # fmt: skip
        """A periodic task's re-arm skipped ``missed`` runs under ``policy``."""
        self._push((8, t, self._wall(), self._thread_name(), task_id, due, label, period,
                    missed, policy))  # fmt: skip

    def cancel(self, t: float, task_id: int, result: str, where: str | None, due: float,
               label: str | None, head_before: float | None, head_after: float | None,
               ready_size: int, queue_size: int) -> None:  # fmt: skip
        """A cancel request and what it did."""
        self._push((9, t, self._wall(), self._thread_name(), task_id, result, where, due,
                    label, head_before, head_after, ready_size, queue_size))  # fmt: skip

    def shutdown(self, t: float, task_id: int, result: str, due: float, label: str | None,
                 ready_size: int, queue_size: int, detail: str | None) -> None:  # fmt: skip
        """Shutdown: one ``dropped`` row per pending task, then one ``stopped`` row."""
        self._push((10, t, self._wall(), self._thread_name(), task_id, result, due, label,
                    ready_size, queue_size, detail))  # fmt: skip

    # -- export -------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write the log as CSV; :func:`read_log` reads it back with the same dtypes."""
        write_frame(self.to_frame(), path, "csv")

    def to_parquet(self, path: str | os.PathLike[str]) -> None:
        """Write the log as Parquet (needs ``pyarrow``: ``pip install tempsched-lab[parquet]``)."""
        write_frame(self.to_frame(), path, "parquet")

    def audit(self) -> Any:
        """Check the log's conservation laws; see :func:`tempsched_lab.audit`."""
        from .audit import audit

        return audit(self.to_frame(), dropped=self.dropped)

    def __repr__(self) -> str:
        return f"<EventLog {len(self)} rows, {self.dropped} dropped>"


_COMMON = ("t", "wall", "thread")
_LATE_KINDS = frozenset({"dispatch", "start", "event_set", "missed"})
_CONSTANT: dict[str, tuple[tuple[str, Any], ...]] = {kind: () for kind in KINDS}
_CONSTANT.update(
    reject=(("result", "rejected"),),
    error=(("result", "error"),),
    missed=(("origin", ORIGIN_CODE["periodic"]),),
)
_BLANK: dict[str, Any] = {
    c.name: (math.nan if c.store == "float" else -1 if c.store in ("int", "origin", "bool")
             else 0 if c.store == "case" else None)
    for c in COLUMNS
}  # fmt: skip


# -- conversion -----------------------------------------------------------------------


def _columns(rows: Sequence[Row], first_seq: int) -> dict[str, np.ndarray]:
    """Turn stored rows into one numpy array per stored column (kind by kind)."""
    # Transposing creates many tuples; the cyclic GC would rescan the whole log for
    # each batch of them (it doubled the time). Nothing made here can form a cycle.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _transpose(rows, first_seq)
    finally:
        if enabled:
            gc.enable()


def _transpose(rows: Sequence[Row], first_seq: int) -> dict[str, np.ndarray]:
    n = len(rows)
    cols = {c.name: _blank_column(c.store, n) for c in COLUMNS}
    cols["seq"] = np.arange(first_seq, first_seq + n, dtype=np.int64)
    if not n:
        return cols
    kinds = np.fromiter((r[0] for r in rows), dtype=np.int8, count=n)
    cols["kind"] = kinds
    for code in np.unique(kinds):
        kind = KINDS[code]
        idx = np.flatnonzero(kinds == code)
        part = [rows[i] for i in idx.tolist()] if len(idx) < n else rows
        fields = list(zip(*part, strict=False))  # rows of one kind have one length
        for name, values in zip(_COMMON + LAYOUTS[kind], fields[1:], strict=True):
            target = cols.get(name)
            if target is not None:  # ("dispatched" is not a column: see below)
                target[idx] = np.asarray(values, dtype=target.dtype)
        for name, value in _CONSTANT[kind]:
            cols[name][idx] = value
        if kind in ("reject", "wake"):
            cols["head_after"][idx] = cols["head_before"][idx]
        if kind in _LATE_KINDS:
            cols["lateness"][idx] = cols["t"][idx] - cols["due"][idx]
        if kind == "start":
            dispatched = np.asarray(fields[4 + LAYOUTS["start"].index("dispatched")], float)
            cols["queue_delay"][idx] = cols["t"][idx] - dispatched
    return cols


def _blank_column(store: str, n: int) -> np.ndarray:
    if store == "float":
        return np.full(n, np.nan)
    if store in ("int",):
        return np.full(n, -1, dtype=np.int64)
    if store in ("origin", "bool"):
        return np.full(n, -1, dtype=np.int8)
    if store in ("code", "case"):
        return np.zeros(n, dtype=np.int8)
    return np.full(n, None, dtype=object)


_KIND_DTYPE = pd.CategoricalDtype(list(KINDS))
_ORIGIN_DTYPE = pd.CategoricalDtype(list(ORIGINS))


def _frame(parts: list[dict[str, np.ndarray]]) -> pd.DataFrame:
    data: dict[str, Any] = {}
    for c in COLUMNS:
        values = parts[0][c.name] if len(parts) == 1 else np.concatenate([p[c.name] for p in parts])
        data[c.name] = _typed(c.name, c.store, values)
    return _add_derived(pd.DataFrame(data))


def _typed(name: str, store: str, values: np.ndarray) -> Any:
    if store == "int":
        if name == "seq":
            return values
        return pd.arrays.IntegerArray(values, values == -1)
    if store == "float":
        return values
    if store == "code":
        return pd.Categorical.from_codes(values, dtype=_KIND_DTYPE)
    if store == "origin":
        return pd.Categorical.from_codes(values, dtype=_ORIGIN_DTYPE)
    if store == "case":
        return pd.arrays.IntegerArray(values, values == 0)
    if store == "bool":
        return pd.arrays.BooleanArray(values == 1, values == -1)
    if store == "cat":
        return _categorical(values)
    return _strings(values)


def _categorical(values: Any) -> pd.Categorical:
    """Categories in order of first appearance, so a round trip gives an equal dtype."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))


def _strings(values: Any) -> Any:
    """A nullable ``string`` array (missing = ``<NA>``), built without a per-item check."""
    obj = np.asarray(values, dtype=object)
    return pd.arrays.StringArray(np.where(pd.isna(obj), pd.NA, obj).astype(object))


def _add_derived(frame: pd.DataFrame) -> pd.DataFrame:
    frame["time"] = pd.to_datetime(frame["t"], unit="s", utc=True, errors="coerce")
    frame["wall_time"] = pd.to_datetime(frame["wall"], unit="s", utc=True, errors="coerce")
    return frame


def normalize_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Give a frame read from disk exactly the dtypes :meth:`EventLog.to_frame` produces."""
    missing = [c.name for c in COLUMNS if c.name not in frame.columns]
    if missing:
        raise ValueError(f"not an event log: columns {missing} are missing")
    data: dict[str, Any] = {}
    for c in COLUMNS:
        col = frame[c.name]
        if c.store == "int":
            values = pd.to_numeric(col).astype("Int64")
            data[c.name] = values.to_numpy("int64") if c.name == "seq" else values.array
        elif c.store == "float":
            data[c.name] = pd.to_numeric(col).to_numpy("float64", na_value=np.nan)
        elif c.store == "code":
            data[c.name] = pd.Categorical(col.astype(object), dtype=_KIND_DTYPE)
        elif c.store == "origin":
            data[c.name] = pd.Categorical(col.astype(object), dtype=_ORIGIN_DTYPE)
        elif c.store == "case":
            data[c.name] = pd.to_numeric(col).astype("Int8").array
        elif c.store == "bool":
            data[c.name] = col.astype("boolean").array
        elif c.store == "cat":
            data[c.name] = _categorical(col.astype(object).where(col.notna(), None))
        else:
            data[c.name] = _strings(col.astype(object).to_numpy())
    return _add_derived(pd.DataFrame(data))


def write_frame(frame: pd.DataFrame, path: str | os.PathLike[str], fmt: str) -> None:
    """Write an event-log frame as ``csv`` or ``parquet``."""
    stored = frame[[c.name for c in COLUMNS]]
    if fmt == "csv":
        stored.to_csv(path, index=False)
    elif fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError(
                "to_parquet needs pyarrow: pip install 'tempsched-lab[parquet]'"
            ) from exc
        stored.to_parquet(path, index=False)
    else:
        raise ValueError(f"fmt={fmt!r}: expected 'csv' or 'parquet'")


_TEXT_DTYPES = {c.name: object for c in COLUMNS if c.store in ("cat", "text")}


def read_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a log written by ``to_csv``/``to_parquet``; same dtypes as ``to_frame()``.

    The format is chosen by the file's suffix (``.parquet``/``.pq``, else CSV).
    """
    p = os.fspath(path)
    if p.endswith((".parquet", ".pq")):
        raw = pd.read_parquet(p)
    else:
        # Only empty fields are missing: a label such as "None" or "NA" stays text.
        raw = pd.read_csv(p, keep_default_na=False, na_values=[""], dtype=_TEXT_DTYPES)
    return normalize_frame(raw)
