"""Spill an event log to a directory of Parquet segments, chunk by chunk, and read it back whole.

A spill directory holds::

    log.json                   the manifest: format, time origin; at close, segment and row counts
    reserved.json              the seq numbers the log may have handed out (``EventLog``'s)
    segment-000001.parquet     rows seq 0 .. n1-1   (each a complete Parquet log file)
    segment-000002.parquet     rows seq n1 .. n2-1
    ...

Each segment is written atomically (a temporary hidden name, then a rename) and
carries its own metadata: its number, its first ``seq``, its row count and
column checksums. :func:`read_spill` reads every segment in order, checks that
the numbers and the ``seq`` values run on without a gap and names the segment
that is missing or damaged.

What a crash can lose, on the writer's side: only rows not yet handed to
:meth:`SegmentWriter.write`, and the chunk being written when it happened (its
temporary file is ignored by readers, and removed once stale). Every ``write`` that
returned is on disk, complete, and (with ``fsync=True``, the default) survives a
power cut.

A log that could not hand every row over (a segment write failed on a full disk)
closes its directory *incomplete*: the manifest names the ``seq`` range that is
missing and why, and :func:`read_spill` refuses it with
:class:`~.errors.IncompleteLogError` (or, with ``on_incomplete="warn"``, reads the
rows that are there, warns, and marks the frame in ``attrs["incomplete"]``, which
:func:`~tempsched_lab.audit` reports). A closed directory never claims rows it lacks.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...time.scale import ORIGIN_ATTR
from .atomic import STALE_AFTER, atomic_path, remove_stale_temporaries
from .errors import IncompleteLogError, IncompleteLogWarning, LogFileError, UncheckedLogWarning
from .meta import FORMAT_VERSION, dumps, unseal
from .normalize import STORED, concat_frames, normalize_frame, stored_frame
from .parquetfile import KEY, pyarrow_parquet, read_parquet_log, write_parquet_log

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "INCOMPLETE_ATTR",
    "MANIFEST",
    "OUTLIVING_ATTR",
    "RESERVED",
    "SegmentWriter",
    "read_spill",
]

MANIFEST = "log.json"
#: The log's seq reservation beside its segments: ``{"first_seq": F, "bound": B}``, no row
#: has a seq at or beyond B yet (``EventLog`` renews it when a chunk opens; see
#: :class:`~tempsched_lab.log.files.lineage.Lineage`).
RESERVED = "reserved.json"
_SEGMENT = re.compile(r"segment-(\d{6,})\.parquet")
#: ``frame.attrs[INCOMPLETE_ATTR]``: why rows are missing from a frame read with
#: ``on_incomplete="warn"`` (text; :func:`tempsched_lab.audit` reports it).
INCOMPLETE_ATTR = "incomplete"
#: ``frame.attrs[OUTLIVING_ATTR]`` and the manifest's key: the runs still going when the
#: directory was closed (a shutdown's timeout passed first), whose later rows it lacks.
OUTLIVING_ATTR = "outliving_runs"
_ON_INCOMPLETE = ("raise", "warn")


def _our_file(name: str) -> bool:
    """A file a spill writes: a segment or the manifest (the targets of its temporaries)."""
    return name == MANIFEST or _SEGMENT.fullmatch(name) is not None


def segment_name(number: int) -> str:
    """The file name of segment ``number`` (counted from 1)."""
    return f"segment-{number:06d}.parquet"


class SegmentWriter:
    """Writes chunks of an event log as numbered Parquet segments in ``directory``.

    ``write(chunk)`` takes a frame of consecutive rows (the columns of
    ``EventLog.to_frame()``) continuing the previous chunk's ``seq``, and returns
    once its segment is on disk. It is safe to call from a background thread
    (calls are serialized); if it raises (a full disk), nothing was written and
    the same chunk can be written again. ``close()`` records the totals, so that
    a reader can tell a missing last segment; a writer is also a context manager.

    Args:
        directory: a new or empty directory (created if needed).
        time_origin: the clock value shown as ``0.000 s`` (``EventLog.time_origin``).
        fsync: flush each segment to the disk before ``write`` returns.

    >>> import tempfile
    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> for i in range(4):
    ...     _ = s.schedule(print, delay=1 + i)
    >>> frame = s.log.to_frame()
    >>> with SegmentWriter(tempfile.mkdtemp(), time_origin=0.0) as writer:
    ...     _ = writer.write(frame.iloc[:3])
    ...     _ = writer.write(frame.iloc[3:])
    >>> writer.segments, writer.rows, len(read_spill(writer.directory))
    (2, 4, 4)
    """

    def __init__(
        self, directory: str | Path, time_origin: float = 0.0, *, fsync: bool = True
    ) -> None:
        pyarrow_parquet()  # fail now, not at the first spill, when pyarrow is missing
        if isinstance(time_origin, bool) or not isinstance(time_origin, (int, float)):
            raise TypeError(f"time_origin={time_origin!r}: expected a number (clock seconds)")
        self.directory = Path(directory)
        self.time_origin = float(time_origin)
        self.fsync = fsync
        self.directory.mkdir(parents=True, exist_ok=True)
        taken = sorted(p.name for p in self.directory.iterdir())
        if taken:
            raise FileExistsError(
                f"directory={str(self.directory)!r} is not empty (it holds {taken[:3]}): "
                "spill each log to a new directory"
            )
        self._lock = threading.Lock()
        self.segments = 0  #: segments written so far
        self.rows = 0  #: rows written so far
        self.first_seq: int | None = None  #: ``seq`` of the first row written
        self.next_seq: int | None = None  #: the ``seq`` the next chunk must start with
        self.closed = False
        self._write_manifest()

    def write(self, chunk: pd.DataFrame) -> Path | None:
        """Write ``chunk`` as the next segment and return its path (``None`` for no rows)."""
        frame = stored_frame(chunk, source="chunk")
        if not len(frame):
            return None
        seq = frame["seq"].to_numpy()
        if (seq[1:] - seq[:-1] != 1).any():
            i = int((seq[1:] - seq[:-1] != 1).argmax())
            raise ValueError(
                f"chunk: seq jumps from {seq[i]} to {seq[i + 1]} at row {i + 1}: "
                "a segment holds consecutive rows"
            )
        origin = chunk.attrs.get(ORIGIN_ATTR, self.time_origin)
        if origin != self.time_origin:
            raise ValueError(
                f"chunk.attrs['time_origin']={origin!r}: this writer's log has "
                f"time_origin={self.time_origin!r}"
            )
        frame.attrs.update(chunk.attrs)
        frame.attrs[ORIGIN_ATTR] = self.time_origin
        with self._lock:
            if self.closed:
                raise ValueError(f"{self!r} is closed")
            if self.next_seq is not None and int(seq[0]) != self.next_seq:
                raise ValueError(
                    f"chunk starts at seq {int(seq[0])}; the log continues at seq "
                    f"{self.next_seq} (a chunk is missing, or was written twice)"
                )
            number = self.segments + 1
            path = self.directory / segment_name(number)
            with atomic_path(path, fsync=self.fsync, what="the log segment") as tmp:
                write_parquet_log(frame, tmp, segment=number)
            self.segments = number
            self.rows += len(frame)
            self.first_seq = int(seq[0]) if self.first_seq is None else self.first_seq
            self.next_seq = int(seq[-1]) + 1
        return path

    def close(
        self,
        *,
        recorded: int | None = None,
        reason: str | None = None,
        outliving: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Record the totals in the manifest; later ``write`` calls raise. Idempotent.

        ``recorded``: the ``seq`` the log has reached (its ``next_seq``). When rows
        before it were never written here (a ``write`` failed on a full disk and
        could not be repeated), the directory is closed *incomplete*: the manifest
        records the missing ``seq`` range and ``reason``, and :func:`read_spill`
        refuses it with :class:`IncompleteLogError` instead of passing it off as
        the whole log.

        ``outliving``: the runs still going at the close (``{"task_id": ..., "name":
        ...}`` each, from a shutdown whose timeout they outlived). The manifest lists
        them as ``outliving_runs``: the rows they record later (their ``finish`` or
        ``error``) are not in this directory, which :func:`read_spill` says in
        ``frame.attrs["outliving_runs"]``.

        >>> import tempfile
        >>> writer = SegmentWriter(tempfile.mkdtemp())
        >>> writer.close(recorded=20, reason="No space left on device")
        >>> read_spill(writer.directory)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tempsched_lab.log.files.errors.IncompleteLogError: ...: the log is incomplete: rows seq 0..19 (20 rows) were never written to this directory (No space left on device); it holds 0 rows ...
        """  # noqa: E501
        if recorded is not None and (
            isinstance(recorded, bool) or not isinstance(recorded, int) or recorded < 0
        ):
            raise ValueError(f"recorded={recorded!r}: expected the log's next seq (an int >= 0)")
        with self._lock:
            if not self.closed:
                missing = None
                start = self.next_seq if self.next_seq is not None else 0
                if recorded is not None and recorded > start:
                    missing = {"first_seq": start, "stop_seq": recorded, "reason": reason or ""}
                # if this raises, close() can be called again
                self._write_manifest(closed=True, missing=missing, outliving=outliving)
                self.closed = True

    def _write_manifest(
        self,
        *,
        closed: bool = False,
        missing: dict[str, Any] | None = None,
        outliving: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        manifest = {
            "format": FORMAT_VERSION,
            "kind": "tempsched-lab spilled event log",
            "time_origin": self.time_origin,
            "closed": closed,
            "segments": self.segments if closed else None,
            "rows": self.rows if closed else None,
        }
        if closed:
            manifest["complete"] = missing is None
            manifest["missing"] = missing
            if outliving:  # (absent when none, as in the manifests of earlier versions)
                manifest[OUTLIVING_ATTR] = [dict(run) for run in outliving]
        path = self.directory / MANIFEST
        with atomic_path(path, fsync=self.fsync, what="the spill manifest") as tmp:
            tmp.write_text(dumps(manifest) + "\n", encoding="ascii")

    def __enter__(self) -> SegmentWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        where = str(self.directory)
        return f"<SegmentWriter {where!r}: {self.segments} segments, {self.rows} rows, {state}>"


def read_spill(directory: str | Path, *, on_incomplete: str = "raise") -> pd.DataFrame:
    """Every segment of a spill directory in order, as one frame equal to the whole log.

    An open directory (its writer still running, or crashed) reads every segment
    written so far; a closed one must hold exactly the segments it recorded. A
    directory closed *incomplete* (rows that could not be written, see
    :meth:`SegmentWriter.close`) raises :class:`IncompleteLogError` naming the
    missing rows, or with ``on_incomplete="warn"`` gives the rows that are there
    with an :class:`IncompleteLogWarning` and the reason in
    ``frame.attrs["incomplete"]`` (which :func:`~tempsched_lab.audit` reports).

    Temporary files of writes that were killed are removed on the way: in a
    closed directory all of them, in an open one those older than
    :data:`~.atomic.STALE_AFTER` seconds.
    """
    if on_incomplete not in _ON_INCOMPLETE:
        raise ValueError(f"on_incomplete={on_incomplete!r}: expected 'raise' or 'warn'")
    return _read_spill(Path(directory), on_incomplete)


def _read_spill(directory: Path, on_incomplete: str) -> pd.DataFrame:
    """:func:`read_spill`; ``on_incomplete="keep"`` (for the log's own history, which holds
    the missing rows in memory) marks the frame without a warning."""
    import warnings

    source = str(directory)
    manifest = _read_manifest(directory)
    closed = manifest if manifest is not None and manifest["closed"] else None
    # a closed directory has no write under way: any temporary file in it is a leftover
    stale = 0.0 if closed is not None else STALE_AFTER
    remove_stale_temporaries(directory, _our_file, older_than=stale)
    found = {int(m.group(1)): p for p in directory.iterdir() if (m := _SEGMENT.fullmatch(p.name))}
    if manifest is None:
        if not found:
            raise LogFileError(f"{source}: not a spill directory (no {MANIFEST}, no segments)")
        warnings.warn(
            f"{source} has no {MANIFEST}: a missing last segment cannot be detected",
            UncheckedLogWarning,
            stacklevel=3,
        )
    expected = max(found, default=0)
    if closed is not None:
        if expected > closed["segments"]:
            raise LogFileError(
                f"{source}: holds {segment_name(expected)} but the log was closed after "
                f"{closed['segments']} segments"
            )
        expected = closed["segments"]
    frames: list[pd.DataFrame] = []
    for number in range(1, expected + 1):
        path = found.get(number)
        if path is None:
            raise _missing(directory, number, found, frames)
        frame, meta = read_parquet_log(path, f"{source}: segment {number} ({path.name})")
        _check_segment(frame, meta, number, frames, manifest, path, source)
        frames.append(frame)
    incomplete = None
    if closed is not None:
        total = sum(len(f) for f in frames)
        if total != closed["rows"]:
            raise LogFileError(
                f"{source}: holds {total} rows; the log was closed with {closed['rows']}"
            )
        incomplete = _incomplete(closed, source)
        if incomplete is not None and on_incomplete == "raise":
            raise IncompleteLogError(
                f"{incomplete}; it holds {total:,} rows in {len(frames)} segments: "
                "read_log(directory, on_incomplete='warn') reads them"
            )
    if not frames:
        empty = normalize_frame(_empty_stored())
        frames.append(empty)
    out = concat_frames(frames)
    out.attrs = dict(frames[-1].attrs)
    if manifest is not None:
        out.attrs[ORIGIN_ATTR] = manifest["time_origin"]
    if closed is not None and closed.get(OUTLIVING_ATTR):
        out.attrs[OUTLIVING_ATTR] = closed[OUTLIVING_ATTR]
    if incomplete is not None:
        out.attrs[INCOMPLETE_ATTR] = incomplete
        if on_incomplete == "warn":
            warnings.warn(incomplete, IncompleteLogWarning, stacklevel=3)
    return out


def _incomplete(manifest: dict[str, Any], source: str) -> str | None:
    """What a closed manifest says is missing, as a sentence; ``None`` for a whole log."""
    if manifest.get("complete", True):
        return None
    missing = manifest.get("missing")
    if not isinstance(missing, dict):
        return f"{source}: the log is incomplete (its manifest does not say which rows are missing)"
    first, stop = missing.get("first_seq"), missing.get("stop_seq")
    reason = missing.get("reason") or "no reason recorded"
    if not isinstance(first, int) or not isinstance(stop, int):
        return f"{source}: the log is incomplete ({reason}; its manifest does not say which rows)"
    return (
        f"{source}: the log is incomplete: rows seq {first}..{stop - 1} ({stop - first:,} rows) "
        f"were never written to this directory ({reason})"
    )


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="ascii"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise LogFileError(f"{path}: the spill manifest cannot be read ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format", 0) > FORMAT_VERSION:
        raise LogFileError(f"{path}: not a spill manifest this tempsched_lab can read")
    unseal(manifest, str(path))
    return manifest


def _check_segment(
    frame: pd.DataFrame,
    meta: dict[str, Any] | None,
    number: int,
    before: list[pd.DataFrame],
    manifest: dict[str, Any] | None,
    path: Path,
    source: str,
) -> None:
    where = f"{source}: segment {number} ({path.name})"
    if meta is None or meta.get("segment") != number:
        raise LogFileError(
            f"{where}: not segment {number} of this log (its metadata says otherwise)"
        )
    if manifest is not None and meta["time_origin"] != manifest["time_origin"]:
        raise LogFileError(f"{where}: its time origin differs from the log's")
    if before and len(frame):
        previous = before[-1]
        expected = int(previous["seq"].iloc[-1]) + 1
        if int(frame["seq"].iloc[0]) != expected:
            raise LogFileError(
                f"{where}: starts at seq {int(frame['seq'].iloc[0])}, but segment {number - 1} "
                f"ends at seq {expected - 1}: rows are missing or repeated"
            )


def _missing(
    directory: Path, number: int, found: dict[int, Path], before: list[pd.DataFrame]
) -> LogFileError:
    """Name a missing segment, with the ``seq`` range it held when its neighbours tell it."""
    lost = ""
    later = [n for n in sorted(found) if n > number]
    if before and later:
        start = int(before[-1]["seq"].iloc[-1]) + 1
        with contextlib.suppress(Exception):  # only to say more; the segment is missing anyway
            schema = pyarrow_parquet().read_schema(found[later[0]])
            resume = json.loads(schema.metadata[KEY])["first_seq"]
            lost = f": rows seq {start}..{resume - 1} are lost"
        if later[0] > number + 1:
            lost = f" (and up to segment {later[0] - 1}){lost}"
    return LogFileError(f"{directory}: segment {number} ({segment_name(number)}) is missing{lost}")


def _empty_stored() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({name: pd.Series([], dtype=object) for name in STORED})
