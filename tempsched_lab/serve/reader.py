"""Rows after a cursor: from the log's memory, then from its spill segments, or a named gap.

A feed's connection holds nothing but a cursor (the next ``seq`` it needs) and asks
:meth:`LogReader.read` for the rows from there; there is no per-client queue, so a
reader that stalls costs the service no memory and the scheduler no work. The log
keeps its newest rows in memory (all of them, or ``max_rows``) and, with a spill
directory, writes every sealed chunk as a Parquet segment before it leaves memory:
every row ever recorded is in one of the two, except rows of a segment deleted
since (or of a log without a spill directory that dropped them). Those are a
:class:`Gap`, named by its inclusive ``seq`` range and why; never skipped in silence.

Runs in a worker thread (reading a segment takes milliseconds; ``EventLog.rows``
takes the scheduler's lock for a moment), never on the event loop.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .wire import frame_to_json, row_to_json

if TYPE_CHECKING:
    import pandas as pd

    from ..log.eventlog import EventLog
    from ..log.files.lineage import Lineage

__all__ = ["Batch", "Gap", "LogReader"]

_SEGMENT = re.compile(r"segment-(\d{6,})\.parquet")
#: Behind the end by more than this many rows, a reader catches up through frames rather
#: than ``EventLog.rows`` (a row dict each, ~10 µs; and a compacted chunk is turned back
#: into tuples whole on each call). Measured on the project's 2-core machine.
CATCH_UP = 2_048
#: Rows per window a catch-up reads from memory with one ``to_frame`` call. ``to_frame``
#: converts every chunk it touches whole (a 65,536-row chunk's columns take ~0.3 s), so
#: reading 2,048 rows at a time cost that per batch: 200,000 rows caught up at 5,174
#: rows/s. Reading a whole window once and slicing it lifts that tenfold (docs/benchmarks.md).
WINDOW = 65_536
#: Frames kept for catch-ups (windows of memory, segments of disk), shared by every
#: connection: the memory a catch-up holds does not grow with the number of readers.
KEEP_FRAMES = 2


@dataclass(frozen=True, slots=True)
class Gap:
    """Rows ``first..last`` (inclusive) exist nowhere any more: not in memory, not on disk."""

    first: int
    last: int
    why: str
    #: the range is an upper bound: numbers a killed process had reserved, not all used
    at_most: bool = False

    def to_json(self) -> dict[str, Any]:
        """The ``data`` of a ``gap`` event: ``{"from": first, "to": last, "why": ...}``, and
        ``"at_most": true`` when not every number of the range was a row."""
        data: dict[str, Any] = {"from": self.first, "to": self.last, "why": self.why}
        if self.at_most:
            data["at_most"] = True
        return data


@dataclass(slots=True)
class Batch:
    """What :meth:`LogReader.read` found at a cursor: rows, a gap, or nothing readable yet."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    gap: Gap | None = None


@dataclass(slots=True)
class _Segment:
    number: int
    path: Path
    first: int
    rows: int

    @property
    def stop(self) -> int:
        return self.first + self.rows


class LogReader:
    """Reads a log's rows by ``seq`` range for any number of connections (thread-safe).

    Args:
        log: the scheduler's :class:`~tempsched_lab.EventLog`.
        batch: rows per answer while following the live end.
        catch_up: rows per answer while catching up (through frames, or segments).
        lineage: the lineage the log's spill directory is a run of (a service restarted on
            its spill root): the earlier runs' segments are read too, and the rows between
            runs that exist nowhere are gaps, named by the lineage.
    """

    def __init__(
        self,
        log: EventLog,
        *,
        batch: int = 500,
        catch_up: int = CATCH_UP,
        lineage: Lineage | None = None,
    ) -> None:
        # The first catch-up would otherwise import pandas and numpy inside a read: ~0.5 s
        # of CPU holding the GIL (and the import lock), the first thing ten readers arriving
        # at a busy service did (issue 41). Paid here, once, when the feed is made.
        from ..log import frame  # noqa: F401

        self.log = log
        self.origin = log.time_origin
        self.batch = batch
        self.catch_up = catch_up
        directory = log.spill_directory
        self.directory = None if directory is None else Path(directory)
        #: the spill directories read: the log's own, and those of earlier runs of its lineage
        self.directories = [] if self.directory is None else [self.directory]
        #: rows between runs that exist nowhere (first, last, why)
        self.lineage_gaps: list[Gap] = []
        if lineage is not None:
            own = None if self.directory is None else self.directory.resolve()
            runs = [r.directory for r in lineage.runs if r.directory.resolve() != own]
            self.directories = [*runs, *self.directories]
            self.lineage_gaps = [Gap(g.first, g.last, g.why, at_most=True) for g in lineage.gaps]
        self._segments: dict[Path, _Segment] = {}
        #: recent catch-up frames: ("window", first seq) or ("segment", path) -> frame
        self._frames: collections.OrderedDict[tuple[str, int | str], pd.DataFrame] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    # -- memory ---------------------------------------------------------------------------
    @property
    def next_seq(self) -> int:
        """The ``seq`` the next row will get (read without the scheduler's lock)."""
        return self.log.next_seq

    def first_held(self) -> int:
        """The first ``seq`` readers find in memory (older rows: on disk, or gone)."""
        log = self.log
        return log.next_seq - len(log)

    def _memory(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Rows ``start <= seq < stop`` held in memory, as row objects (maybe fewer, later)."""
        log = self.log
        lo = start - start % WINDOW
        if stop - start > self.batch and lo + WINDOW <= log.next_seq:
            # a whole window, far behind the end: its rows no longer change (a range of the
            # tail goes through rows(): to_frame of tail rows cost 4x more per row, measured)
            frame = self._frame(("window", lo), lambda: log.to_frame(lo, lo + WINDOW))
            if frame is None or not len(frame):
                return []
            first = int(frame["seq"].iloc[0])
            part = frame.iloc[max(0, start - first) : max(0, stop - first)]
            return frame_to_json(part, self.origin) if len(part) else []
        return [row_to_json(r, self.origin) for r in log.rows(start, stop)]

    def _frame(
        self, key: tuple[str, int | str], build: Callable[[], pd.DataFrame | None]
    ) -> pd.DataFrame | None:
        """A shared catch-up frame, built once (by ``build()``; ``None``: cannot be read)."""
        with self._lock:
            frame = self._frames.get(key)
            if frame is not None:
                self._frames.move_to_end(key)
                return frame
        frame = build()  # outside the lock: two readers may both build it, rarely
        if frame is None:
            return None
        with self._lock:
            self._frames[key] = frame
            while len(self._frames) > KEEP_FRAMES:
                self._frames.popitem(last=False)
        return frame

    # -- the answer -----------------------------------------------------------------------
    def read(self, start: int, most: int | None = None) -> Batch:
        """The rows from ``seq`` ``start`` on (at most one batch, or ``most`` rows), or the gap
        that starts there.

        An empty batch without a gap: nothing to read yet (``start`` is the end, or the
        rows are held in memory beyond ``max_rows`` while their segment is being
        written: they become readable on disk in a moment).
        """
        end = self.log.next_seq
        if start >= end:
            return Batch()
        behind = end - start
        size = self.catch_up if behind > self.catch_up else self.batch
        stop = min(end, start + (size if most is None else min(most, size)))
        rows = self._memory(start, stop)
        if rows and rows[0]["seq"] == start:
            return Batch(rows)
        # Older than memory: the missing stretch runs up to memory's first row.
        held = rows[0]["seq"] if rows else max(self.first_held(), stop)
        return self._from_disk(start, min(held, start + self.catch_up), held)

    def _from_disk(self, start: int, stop: int, held: int) -> Batch:
        for gap in self.lineage_gaps:  # between two runs of a restarted service
            if gap.first <= start <= gap.last:
                return Batch(gap=Gap(start, gap.last, gap.why, gap.at_most))
        if not self.directories:
            return Batch(gap=Gap(start, held - 1, self._dropped_why()))
        segments = self._index()
        for seg in segments:
            if seg.first <= start < seg.stop:
                key = ("segment", str(seg.path))
                frame = self._frame(key, functools.partial(self._segment, seg))
                if frame is None:  # deleted since the index was made
                    return self.read(start) if self._forget(seg) else Batch()
                lo, hi = start - seg.first, min(stop, seg.stop) - seg.first
                return Batch(frame_to_json(frame.iloc[lo:hi], self.origin))
        later = [s.first for s in segments if s.first > start]
        disk_end = max((s.stop for s in segments), default=0)
        if start >= disk_end:
            missing = self._manifest_missing(start)
            if missing is not None:
                return Batch(gap=missing)
            # held in memory beyond max_rows until their segment is written: wait for it
            return Batch()
        to = min([*later, held]) - 1
        return Batch(gap=Gap(start, to, self._segment_gone_why(start, segments)))

    def first_gap(self, start: int, stop: int) -> Gap | None:
        """The first stretch of rows ``[start, stop)`` that exists nowhere, found without
        reading a row (the lineage's gaps, the segments' footers, memory's first row), as
        :meth:`read` would meet it; ``None``: every row of the range can be read."""
        held = self.first_held()
        cursor = start
        segments: list[_Segment] | None = None
        while cursor < min(stop, held):
            lineage = next((g for g in self.lineage_gaps if g.first <= cursor <= g.last), None)
            if lineage is not None:
                return Gap(cursor, lineage.last, lineage.why, lineage.at_most)
            if not self.directories:
                return Gap(cursor, held - 1, self._dropped_why())
            segments = self._index() if segments is None else segments
            seg = next((s for s in segments if s.first <= cursor < s.stop), None)
            if seg is not None:
                cursor = seg.stop
                continue
            if cursor >= max((s.stop for s in segments), default=0):
                return self._manifest_missing(cursor)  # else: being written, readable soon
            later = [s.first for s in segments if s.first > cursor]
            return Gap(cursor, min([*later, held]) - 1, self._segment_gone_why(cursor, segments))
        return None

    # -- the spill directory --------------------------------------------------------------
    def _index(self) -> list[_Segment]:
        """The segments on disk, by number (new ones read from their footers, once each)."""
        from ..log.files.meta import parse_metadata
        from ..log.files.parquetfile import KEY, pyarrow_parquet

        pq = pyarrow_parquet()
        names: dict[Path, int] = {}
        for directory in self.directories:
            try:
                listed = os.listdir(directory)
            except FileNotFoundError:
                continue
            names.update(
                (directory / name, int(m.group(1)))
                for name in listed
                if (m := _SEGMENT.fullmatch(name))
            )
        with self._lock:
            known = self._segments
            for gone in [p for p in known if p not in names]:
                del known[gone]
            for path, number in names.items():
                if path in known:
                    continue
                try:
                    raw = pq.read_schema(path).metadata[KEY]
                    meta = parse_metadata(raw, str(path))
                    known[path] = _Segment(number, path, int(meta["first_seq"]), meta["rows"])
                except Exception:  # unreadable (damaged, or being replaced): not served
                    continue
            return sorted(known.values(), key=lambda s: s.first)

    def _forget(self, seg: _Segment) -> bool:
        with self._lock:
            return self._segments.pop(seg.path, None) is not None

    @staticmethod
    def _segment(seg: _Segment) -> pd.DataFrame | None:
        from ..log.files.parquetfile import read_parquet_log

        try:
            frame, _ = read_parquet_log(seg.path, f"{seg.path.name}")
        except FileNotFoundError:
            return None
        return frame

    def _manifest_missing(self, start: int) -> Gap | None:
        """The rows a directory closed *incomplete* says it never got (a full disk)."""
        assert self.directory is not None
        try:
            manifest = json.loads((self.directory / "log.json").read_text(encoding="ascii"))
        except (OSError, ValueError):
            return None
        missing = manifest.get("missing") if isinstance(manifest, dict) else None
        if not isinstance(missing, dict):
            return None
        first, stop = missing.get("first_seq"), missing.get("stop_seq")
        if isinstance(first, int) and isinstance(stop, int) and first <= start < stop:
            reason = missing.get("reason") or "no reason recorded"
            return Gap(start, stop - 1, f"never written to the spill directory ({reason})")
        return None

    def _dropped_why(self) -> str:
        return (
            f"dropped from memory (the log keeps its newest max_rows={self.log.max_rows} "
            "rows) and the log has no spill directory"
        )

    @staticmethod
    def _segment_gone_why(start: int, segments: list[_Segment]) -> str:
        if not segments or start < segments[0].first:
            return "gone from memory, and their segment files were removed from the spill directory"
        return "gone from memory, and their segment file is missing from the spill directory"
