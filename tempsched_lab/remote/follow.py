"""Follow a log's spill directory: its segments in ``seq`` order as they appear, gaps named.

A spill directory (``EventLog(spill=...)``, see :mod:`tempsched_lab.log.files.spill`)
gets a new Parquet segment each time the log writes a chunk, atomically (a hidden
temporary name, then a rename). :func:`attach_dir` reads the segments written so
far with the checks :func:`~tempsched_lab.read_log` makes (each segment's number,
time origin and checksums, and that each segment continues the one before it, seq
after seq: a segment of another log, or of a rotated directory, is refused, never
mirrored), then, with ``follow=True``, looks for the next one a few times a second.
Only complete segments are ever read: a temporary file does not have a segment's name.
A segment that is missing while a later one is there (deleted, or lost) is a named
gap: the rows it held, from the seq after the last row read to the one before the
next segment's first.

>>> import tempfile
>>> from tempsched_lab import Scheduler, VirtualClock
>>> from tempsched_lab.log.files import SegmentWriter
>>> s = Scheduler(VirtualClock())
>>> for i in range(5):
...     _ = s.schedule(print, at=1.0 + i)
>>> frame = s.log.to_frame()
>>> with SegmentWriter(tempfile.mkdtemp(), time_origin=0.0) as writer:
...     _ = writer.write(frame.iloc[:2])
...     _ = writer.write(frame.iloc[2:])
>>> mirror = attach_dir(writer.directory, follow=False)
>>> mirror.applied, mirror.link.state, mirror.moment().pending
(5, 'closed', 5)
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from ..log.files.errors import LogFileError
from ..log.files.parquetfile import read_parquet_log
from ..log.files.spill import _SEGMENT, RESERVED, _incomplete, _read_manifest, segment_name
from .link import Link
from .mirror import RemoteScheduler

__all__ = ["DirectoryFeed", "attach_dir"]

#: Seconds between two looks for a new segment while following.
POLL = 0.2


def attach_dir(
    path: str | os.PathLike[str],
    *,
    follow: bool = True,
    design: str = "sorteddict",
    poll: float = POLL,
    max_rows: int | None = None,
) -> RemoteScheduler:
    """A mirror of the log spilled to ``path``: replayed now (``follow=False``) or followed.

    The segments on disk are read before this returns. With ``follow=False`` the
    mirror's link is then ``closed``; with ``follow=True`` a daemon thread reads
    each new segment within ``poll`` seconds of its appearing, until the
    log is closed (its manifest says so) or :meth:`RemoteScheduler.close` is called.
    ``design`` is the queue design whose picture the mirror draws (the state is
    the same for every design). ``max_rows``: hold only the newest rows (see
    :class:`RemoteScheduler`; the rows dropped are named by its ``dropped_rows``).

    A directory that is no spill directory (no manifest, no segment) raises
    :class:`~tempsched_lab.log.files.LogFileError` naming it.
    """
    directory = Path(os.fspath(path))
    if not directory.is_dir():
        raise FileNotFoundError(f"path={str(path)!r}: no such directory")
    if not isinstance(poll, (int, float)) or isinstance(poll, bool) or not 0 < poll <= 60:
        raise ValueError(f"poll={poll!r}: expected seconds, more than 0 and at most 60")
    manifest = _read_manifest(directory)
    segments = sorted(
        (int(m.group(1)), p) for p in directory.iterdir() if (m := _SEGMENT.fullmatch(p.name))
    )
    if manifest is None and not segments:
        raise LogFileError(f"{directory}: not a spill directory (no log.json, no segments)")
    if manifest is not None:
        origin = float(manifest["time_origin"])
    else:  # no manifest (yet): the first segment says the log's origin
        _, meta = read_parquet_log(segments[0][1], f"{directory}: {segments[0][1].name}")
        origin = float(meta["time_origin"]) if meta is not None else 0.0
    mirror = RemoteScheduler(
        str(directory), name=directory.name, time_origin=origin, design=design, max_rows=max_rows
    )
    feed = DirectoryFeed(mirror, directory, follow=follow, poll=float(poll))
    mirror.feed = feed
    if follow:
        mirror.set_link(Link("live", since=mirror.clock.now()))
        feed.read_new()  # what is on disk now, before this returns: then each new segment
        feed.start()
    else:
        feed.run()
    return mirror


class DirectoryFeed:
    """Reads a spill directory's segments into a mirror (in the calling thread, or its own)."""

    def __init__(
        self, mirror: RemoteScheduler, directory: Path, *, follow: bool, poll: float
    ) -> None:
        self.mirror = mirror
        self.directory = directory
        self.follow = follow
        self.poll = poll
        self.number = 1  # the next segment to read
        # a run of a lineage (a restarted service's log, continued) starts after seq 0
        self.first_seq = _first_seq(directory)
        if self.first_seq:
            mirror.begin_at(self.first_seq)
        self._missing: str | None = None  # why the rows before the next segment are missing
        self._last: int | None = None  # the seq of the last row read (None: none yet)
        self._read = 0  # rows read from segments
        self._skipped = False  # a segment was missing
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None
        mirror.add_stopper(self.stop)

    def start(self) -> None:
        """Follow in a daemon thread."""
        self.thread = threading.Thread(
            target=self.run, name=f"tempsched-follow-{self.directory.name}", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        """Stop following (returns at once; the thread ends within one ``poll``)."""
        self._stop.set()
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self.poll + 5.0)

    def run(self) -> None:
        """Read every segment there, then (following) each new one, until closed or stopped."""
        self.mirror.set_link(Link("live", since=self.mirror.clock.now()))
        try:
            while not self._stop.is_set():
                manifest = _read_manifest(self.directory)
                closed = manifest is not None and bool(manifest.get("closed"))
                # a closed log's segments only: one past them is another log's (_finish)
                self.read_new(int(manifest["segments"]) if manifest and closed else None)
                if (
                    manifest is not None and closed
                ):  # every segment of a closed log was written before it closed
                    last = int(manifest["segments"])
                    if self.number <= last:
                        self._missing = (
                            f"segment {last} ({segment_name(last)}) is missing"
                            if self.number == last
                            else f"segments {self.number}..{last} are missing"
                        )
                    self._finish(manifest)
                    return
                if not self.follow:
                    self.mirror.end(
                        f"replayed {self.directory}: "
                        + (
                            "the log was still open (rows not on disk yet are not in it)"
                            if not closed
                            else "the log's segments end early"
                        )
                    )
                    return
                self._stop.wait(self.poll)
        except (LogFileError, OSError, ValueError) as exc:
            # never raised from the thread: the link says it (the mirror keeps its rows)
            self.mirror.end(f"reading {self.directory} failed: {exc}", failed=True)
            if not self.follow:
                raise
            return
        self.mirror.end("the mirror was closed")

    def read_new(self, last: int | None = None) -> None:
        """Read the segments that are there from :attr:`number` on (up to ``last``), naming
        a missing one."""
        while not self._stop.is_set() and (last is None or self.number <= last):
            found = {
                int(m.group(1)): p
                for p in self.directory.iterdir()
                if (m := _SEGMENT.fullmatch(p.name))
            }
            path = found.get(self.number)
            if path is None:
                later = [n for n in found if n > self.number and (last is None or n <= last)]
                if not later:
                    return
                skip = min(later)
                self._missing = (
                    f"segment {self.number} ({segment_name(self.number)}) is missing"
                    if skip == self.number + 1
                    else f"segments {self.number}..{skip - 1} are missing"
                )
                self.number = skip
                self._skipped = True
                continue
            source = f"{self.directory}: segment {self.number} ({path.name})"
            try:
                frame, meta = read_parquet_log(path, source)
            except FileNotFoundError:
                return  # deleted since the listing: the next look names it
            self._check(meta, source)
            if len(frame):
                first = int(frame["seq"].iloc[0])
                self._check_seq(first, source)
                self._last = int(frame["seq"].iloc[-1])
                self._read += len(frame)
                if first > self.mirror.applied and self._missing is not None:
                    self.mirror.gap(self.mirror.applied, first - 1, self._missing)
                self.mirror.apply(frame)
            self._missing = None
            self.number += 1

    def _check(self, meta: dict[str, Any] | None, source: str) -> None:
        if meta is None or meta.get("segment") != self.number:
            raise LogFileError(f"{source}: not segment {self.number} of this log")
        if float(meta["time_origin"]) != self.mirror.time_origin:
            raise LogFileError(f"{source}: its time origin differs from the log's")

    def _check_seq(self, first: int, source: str) -> None:
        """A segment continues the one before it (after a missing one: goes on after it), as
        :func:`~tempsched_lab.read_log` checks: else it is another log's (refused)."""
        last = self._last
        if last is None:
            return
        if first == last + 1 and self._missing is None:
            return
        if first > last + 1 and self._missing is not None:
            return  # the missing segment's rows: a named gap
        raise LogFileError(
            f"{source}: starts at seq {first}, but the segment before it ends at seq {last}: "
            "rows are missing or repeated (a segment of another log, or of a rotated "
            "directory?)"
        )

    def _finish(self, manifest: dict[str, Any]) -> None:
        """The log was closed: check it holds what it says (as ``read_log`` does), name what
        it says is missing, then end."""
        last = int(manifest["segments"])
        later = sorted(
            n
            for p in self.directory.iterdir()
            if (m := _SEGMENT.fullmatch(p.name)) and (n := int(m.group(1))) > last
        )
        if later:
            raise LogFileError(
                f"{self.directory}: holds {segment_name(later[0])} but the log was closed after "
                f"{last} segments (a segment of another log?)"
            )
        rows = int(manifest.get("rows", self.mirror.applied))
        if not self._skipped and self._missing is None and self._read != rows:
            raise LogFileError(
                f"{self.directory}: holds {self._read:,} rows; the log was closed with {rows:,}"
            )
        end_seq = self.first_seq + rows
        missing = manifest.get("missing")
        incomplete = _incomplete(manifest, str(self.directory))
        if isinstance(missing, dict) and isinstance(missing.get("first_seq"), int):
            first, stop = int(missing["first_seq"]), int(missing["stop_seq"])
            self.mirror.gap(first, stop - 1, incomplete or "never written")
        elif end_seq > self.mirror.applied and self._missing is not None:
            self.mirror.gap(self.mirror.applied, end_seq - 1, self._missing)
        self.mirror.end(f"the log was closed ({self.mirror.applied:,} rows)")


def _first_seq(directory: Path) -> int:
    """The seq of the directory's first row: its reservation's ``first_seq`` (a run of a
    :class:`~tempsched_lab.log.files.Lineage` after the first), else 0."""
    try:
        data = json.loads((directory / RESERVED).read_text(encoding="ascii"))
        first = data["first_seq"]
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    return first if isinstance(first, int) and first >= 0 else 0
