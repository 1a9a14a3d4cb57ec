"""One service's log across restarts: a root directory of spill directories, one per process.

A service restarted on the same spill root continues the same log instead of starting
a new one at ``seq`` 0::

    root/lineage.json          {"log_id": "3e54..."}: the log's name for its readers
    root/run-001/              the first process's spill directory (segments, log.json,
                               reserved.json)
    root/run-002/              the next process's, its first row after the last seq
                               run-001 may have handed out
    root/serving.json          {"url": ..., "port": ..., "run": "run-002"}: where the
                               latest run serves (:func:`record_serving`), so that a
                               restart can keep its port and a watcher find it again
    root/run-NNN/serving.json  where that run served

A process killed with ``SIGKILL`` had rows in memory that never reached its directory,
and may have handed some of them to readers (a feed's clients). The log reserves its
``seq`` numbers ahead on disk (``reserved.json``, renewed when a chunk opens: see
``EventLog(first_seq=...)``) and, within that, stores how far it numbered its rows every
64 rows (``numbered.bin``: :mod:`.numbered`), so the next process starts after every
number the killed one may have used, and the numbers in between are one named **gap**,
at most 64 wider than the rows lost: *the previous process (run-001) was killed: its rows
after seq D never reached its spill directory; seq numbers up to N at most were given to
rows*. A process that shut down cleanly left every row on
disk: the next one starts right after its last, no gap. Every ``seq`` is used once in
the whole lineage, so a reader's cursor keeps its meaning across restarts. The scheduler
that continues a lineage is made by :func:`tempsched_lab.restarts.continuing_scheduler`
(a layer above: this module only reads and writes the files).

>>> import tempfile
>>> from tempsched_lab import VirtualClock
>>> root = tempfile.mkdtemp()
>>> from tempsched_lab.restarts import continuing_scheduler
>>> first = continuing_scheduler(root, VirtualClock())
>>> _ = first.schedule(print, delay=1.0)
>>> _ = first.shutdown()
>>> second = continuing_scheduler(root, VirtualClock())  # a restart
>>> second.log.first_seq, second.log.rows()[0]["result"]
(3, 'restarted')
>>> _ = second.shutdown()
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import LogFileError
from .meta import parse_metadata
from .numbered import NUMBERED, STEP, read_numbered
from .rootlock import RootLock
from .spill import MANIFEST, RESERVED

__all__ = ["LINEAGE", "SERVING", "Lineage", "LineageGap", "Run", "record_serving", "serving"]

#: The lineage's own file in its root: ``{"log_id": ...}``.
LINEAGE = "lineage.json"
_RUN = re.compile(r"run-(\d{3,})")
_SEGMENT = re.compile(r"segment-(\d{6,})\.parquet")
#: Where a run serves, in the root (the latest run) and in each run's directory.
SERVING = "serving.json"
#: The ``result`` of the first row of a restarted process (a ``shutdown`` row).
RESTARTED = "restarted"


@dataclass(frozen=True, slots=True)
class Run:
    """One process's spill directory in a lineage, as found on disk."""

    #: its number (``run-NNN``) and directory
    number: int
    directory: Path
    #: the seq of its first row
    first_seq: int
    #: the seq after its last row on disk (its segments')
    on_disk: int
    #: the seq after the last number it may have handed out: its recorded end if it shut
    #: down (its manifest), else the bound in its ``numbered.bin`` (at most 64 past its last
    #: row), else its reservation's bound (``on_disk`` without either)
    end: int
    #: its manifest says it was closed (the process shut down)
    closed: bool
    #: why rows ``on_disk .. end - 1`` are not on disk (``None``: they all are)
    why: str | None


@dataclass(frozen=True, slots=True)
class LineageGap:
    """Rows ``first..last`` (inclusive) of a lineage that exist nowhere, and why."""

    first: int
    last: int
    why: str


class Lineage:
    """A spill root whose ``run-NNN`` directories hold one log across a service's restarts.

    :meth:`open` reads (or starts) it; :meth:`scheduler` makes the next process's
    scheduler, spilling to the next ``run-NNN`` and numbering its rows after the
    runs before it; :meth:`of_run` finds the lineage a spill directory belongs to
    (the feed does, to serve earlier runs' rows and name the gaps between them).
    """

    def __init__(self, root: Path, log_id: str, runs: list[Run]) -> None:
        self.root = root
        #: the log's name for its readers: the same in every run
        self.log_id = log_id
        #: the runs found, oldest first
        self.runs = runs

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> Lineage:
        """The lineage in ``root`` (created, with a new ``log_id``, when there is none yet).

        Raises :class:`~.errors.LogFileError` if ``root`` holds a ``lineage.json`` that
        cannot be read.
        """
        path = Path(root)
        path.mkdir(parents=True, exist_ok=True)
        marker = path / LINEAGE
        if not marker.exists():
            from .atomic import atomic_path

            with atomic_path(marker, what="the lineage file") as tmp:
                tmp.write_text(json.dumps({"log_id": uuid.uuid4().hex}) + "\n", encoding="ascii")
        return cls._read(path)

    @classmethod
    def of_run(cls, directory: str | os.PathLike[str] | None) -> Lineage | None:
        """The lineage whose run ``directory`` is (``None``: not a run of a lineage)."""
        if directory is None:
            return None
        run = Path(directory)
        if not _RUN.fullmatch(run.name) or not (run.parent / LINEAGE).is_file():
            return None
        return cls._read(run.parent)

    @classmethod
    def _read(cls, root: Path) -> Lineage:
        marker = root / LINEAGE
        try:
            data = json.loads(marker.read_text(encoding="ascii"))
            log_id = str(data["log_id"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LogFileError(f"{marker}: not a lineage file ({type(exc).__name__})") from None
        numbers = sorted(
            int(m.group(1)) for name in os.listdir(root) if (m := _RUN.fullmatch(name))
        )
        runs: list[Run] = []
        for number in numbers:
            run = _read_run(root / _run_name(number), number, runs[-1].end if runs else 0)
            runs.append(run)
        return cls(root, log_id, runs)

    @property
    def next_seq(self) -> int:
        """The seq the next run's first row gets: after every number a run may have used."""
        return self.runs[-1].end if self.runs else 0

    @property
    def gaps(self) -> list[LineageGap]:
        """The rows between runs that exist nowhere (handed out, or reserved, never on disk)."""
        out = []
        for run in self.runs:
            if run.on_disk < run.end and run.why is not None:
                out.append(LineageGap(run.on_disk, run.end - 1, run.why))
        return out

    def next_run(self) -> tuple[Path, int, RootLock]:
        """Take the root's lock, then create the next run's directory.

        Returns the directory, the seq its first row gets and the lock, which the new
        run's log holds until its spill directory closes (see :mod:`.rootlock`). The
        runs are read again once the lock is held: what was read before may be stale.
        Raises :class:`~.rootlock.SpillRootBusyError` naming the holder while another
        live process (or another log of this one) holds the root.
        """
        lock = RootLock.acquire(self.root)
        try:
            self.runs = type(self)._read(self.root).runs
            start = self.next_seq
            for number in range((self.runs[-1].number if self.runs else 0) + 1, 100_000):
                path = self.root / _run_name(number)
                try:
                    path.mkdir()
                except FileExistsError:
                    continue
                return path, start, lock
        except BaseException:
            lock.release()
            raise
        lock.release()
        raise RuntimeError(f"{self.root}: no free run-NNN directory left")


def _run_name(number: int) -> str:
    return f"run-{number:03d}"


def _read_run(directory: Path, number: int, after: int) -> Run:
    """What ``directory`` holds: its first seq, rows on disk, the end, and why rows are missing."""
    from .parquetfile import KEY, pyarrow_parquet

    reserved = _read_json(directory / RESERVED)
    if reserved is not None:
        _check_seqs(reserved, directory / RESERVED, ("first_seq", "bound"))
    manifest = _read_json(directory / MANIFEST)
    if manifest is not None and isinstance(manifest.get("missing"), dict):
        _check_seqs(manifest["missing"], directory / MANIFEST, ("first_seq", "stop_seq"))
    first = reserved.get("first_seq") if reserved else None
    on_disk = None
    pq = pyarrow_parquet()
    segments = sorted(
        int(m.group(1)) for name in os.listdir(directory) if (m := _SEGMENT.fullmatch(name))
    )
    for n in segments:
        path = directory / f"segment-{n:06d}.parquet"
        try:
            meta = parse_metadata(pq.read_schema(path).metadata[KEY], str(path))
        except Exception:  # damaged: the segments before it are what is readable
            break
        start, rows = int(meta["first_seq"]), int(meta["rows"])
        if first is None:
            first = start
        if on_disk is not None and start != on_disk:
            break  # a missing middle segment: a reader names that gap itself
        on_disk = start + rows
    first = after if not isinstance(first, int) else first
    on_disk = first if on_disk is None else on_disk
    closed = bool(manifest and manifest.get("closed"))
    if closed and manifest is not None:
        missing = manifest.get("missing")
        if isinstance(missing, dict) and isinstance(missing.get("stop_seq"), int):
            reason = missing.get("reason") or "no reason recorded"
            why = f"never written to {directory.name}'s spill directory ({reason})"
            return Run(number, directory, first, on_disk, int(missing["stop_seq"]), True, why)
        return Run(number, directory, first, on_disk, on_disk, True, None)
    bound = reserved.get("bound") if reserved else None
    numbered = read_numbered(directory / NUMBERED)
    if numbered is not None and numbered < SEQ_LIMIT:  # how far it got, within STEP rows
        end = max(on_disk, numbered if not isinstance(bound, int) else min(bound, numbered))
        how = (
            f"seq numbers up to {end - 1} at most were given to rows ({NUMBERED} records how "
            f"far it got, every {STEP} rows)"
        )
    else:  # (a run of a version without numbered.bin, or the file could not be made)
        end = max(on_disk, bound) if isinstance(bound, int) else on_disk
        how = f"seq numbers up to {end - 1} were reserved (some may never have been used)"
    why = (
        f"the previous process ({directory.name}) was killed: its rows after seq "
        f"{on_disk - 1} never reached its spill directory; {how}"
    )
    return Run(number, directory, first, on_disk, end, False, why)


#: The numbers a seq may take: an int64 column (a seq at or past it cannot be stored).
SEQ_LIMIT = 2**63


def _check_seqs(data: dict[str, Any], path: Path, names: tuple[str, ...]) -> None:
    """Refuse, naming ``path``, a seq that no row could have (a tampered or damaged file):
    the next run would start there, and every frame and segment of it would fail."""
    for name in names:
        value = data.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < SEQ_LIMIT:
            raise LogFileError(
                f"{path}: {name}={value!r} is not a seq a log can reach (an int from 0 to "
                f"2**63 - 1); the file is damaged or was changed by hand: fix or remove it"
            )


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def restart_detail(previous: Run) -> str:
    """The restart row's words: what became of the previous process and its rows."""
    if previous.closed and previous.why is None:
        return (
            f"the service restarted after its previous process ({previous.directory.name}) "
            "shut down; that process's tasks are gone"
        )
    rows = previous.end - previous.on_disk
    return (
        f"the service restarted after its previous process ({previous.directory.name}) "
        f"was killed; that process's tasks are gone; rows seq {previous.on_disk}.."
        f"{previous.end - 1} ({rows:,} numbers) exist nowhere"
    )


def record_serving(run: str | os.PathLike[str], url: str) -> None:
    """Record that the run in directory ``run`` serves at ``url`` (``http://host:port/...``):
    in the run's directory and, as the latest, in its lineage's root.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "run-001").mkdir()
    >>> record_serving(root / "run-001", "http://127.0.0.1:8765/scheduler")
    >>> serving(root)
    {'url': 'http://127.0.0.1:8765/scheduler', 'port': 8765, 'run': 'run-001'}
    """
    from urllib.parse import urlsplit

    from .atomic import atomic_path

    directory = Path(run)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.port is None:
        raise ValueError(f"url={url!r}: expected http://host:port/...")
    data = {"url": url, "port": parts.port, "run": directory.name}
    for path in (directory / SERVING, directory.parent / SERVING):
        with atomic_path(path, what="the serving record") as tmp:
            tmp.write_text(json.dumps(data) + "\n", encoding="ascii")


def serving(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Where the latest run of the lineage in ``root`` (or the run in ``root``) serves:
    ``{"url", "port", "run"}``, or ``None`` when no run recorded it (or the record is
    damaged)."""
    data = _read_json(Path(root) / SERVING)
    if data is None:
        return None
    url, port = data.get("url"), data.get("port")
    if not isinstance(url, str) or isinstance(port, bool) or not isinstance(port, int):
        return None
    if not 0 < port < 65536:
        return None
    return {"url": url, "port": port, "run": str(data.get("run", ""))}
