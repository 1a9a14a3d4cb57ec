"""Event-log files that never lie: written whole or not at all, read back exactly, or refused.

* :func:`write_log` writes a log frame (``EventLog.to_frame()``) as CSV or
  Parquet under a temporary name and renames it into place, so a failure (a
  full disk, an unwritable directory) leaves no partial file behind.
* Every file carries metadata (format version, row count, a checksum per
  column, the time origin): a Parquet file inside it, a CSV file in a file
  beside it (``run.csv.meta.json``), so that the CSV itself is plain CSV with
  times in seconds since the start. :func:`read_log` gives back a frame equal to the
  one written, dtypes and ``attrs["time_origin"]`` included, or raises
  :class:`LogFileError` saying what is wrong: a file cut short
  (:class:`TruncatedLogError`, "holds 11 of 20 rows"), a damaged column, an
  impossible value (naming the column, the row and the value).
* :class:`SegmentWriter` spills a growing log to a directory of Parquet
  segments; ``read_log(directory)`` reads them back as one frame, and refuses
  (:class:`IncompleteLogError`) a directory closed without every row.

Any text survives: empty strings (not missing), ``"None"``, ``"NA"``, quotes,
commas, bare ``\\r``, lone surrogates. See ``docs/event-log.md`` ("Files").

>>> import tempfile
>>> from pathlib import Path
>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock(start=100.0))
>>> _ = s.schedule(print, delay=1, label="")
>>> path = write_log(s.log.to_frame(), Path(tempfile.mkdtemp()) / "log.csv")
>>> back = read_log(path)
>>> back["label"].tolist(), back.attrs["time_origin"]
([''], 100.0)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .atomic import atomic_path, remove_stale_temporaries
from .csvfile import MAGIC as CSV_MAGIC
from .csvfile import metadata_path, read_csv_log, write_csv_log
from .errors import (
    ForkedLogError,
    IncompleteLogError,
    IncompleteLogWarning,
    LogFileError,
    TruncatedLogError,
    UncheckedLogWarning,
)
from .lineage import Lineage
from .meta import FORMAT_VERSION
from .normalize import concat_frames, normalize_frame, stored_frame
from .parquetfile import MAGIC as PARQUET_MAGIC
from .parquetfile import pyarrow_parquet, read_parquet_log, write_parquet_log
from .spill import SegmentWriter, read_spill

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMAT_VERSION",
    "ForkedLogError",
    "IncompleteLogError",
    "IncompleteLogWarning",
    "Lineage",
    "LogFileError",
    "SegmentWriter",
    "TruncatedLogError",
    "UncheckedLogWarning",
    "concat_frames",
    "normalize_frame",
    "read_log",
    "read_spill",
    "write_log",
]

#: File formats by suffix.
SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"fmt={fmt!r}: expected 'csv' or 'parquet'")
        return fmt
    found = SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise ValueError(
            f"path={str(path)!r}: cannot tell the format from its suffix; name it .csv, "
            ".parquet or .pq, or pass fmt='csv' or fmt='parquet'"
        )
    return found


def write_log(
    frame: pd.DataFrame, path: str | os.PathLike[str], fmt: str | None = None, *, fsync: bool = True
) -> Path:
    """Write an event-log frame to ``path`` as CSV or Parquet, all at once; return the path.

    The format comes from ``fmt`` (``"csv"`` or ``"parquet"``) or the suffix
    (``.csv``, ``.parquet``, ``.pq``). A CSV file gets its metadata in a file
    beside it (``path`` + ``.meta.json``: keep the two together) and holds the
    datetime columns as text for other tools; reading derives them again from
    ``t`` and ``wall``. ``frame.attrs`` entries that
    are text, numbers, booleans or None are kept. A frame that no log can hold
    raises :class:`LogFileError` before any file is touched; a failed write
    raises ``OSError`` naming ``path`` and the cause and leaves ``path`` as it
    was. ``fsync=False`` skips flushing to the disk (faster; a power cut may
    then lose the file, never half of it). Temporary files that an earlier,
    killed write of the same ``path`` left behind are removed once stale (see
    :func:`~.atomic.remove_stale_temporaries`).

    >>> import tempfile
    >>> from tempsched_lab import EventLog
    >>> write_log(EventLog().to_frame(), Path(tempfile.mkdtemp()) / "log.txt")
    Traceback (most recent call last):
    ...
    ValueError: path='...log.txt': cannot tell the format from its suffix; name it .csv, .parquet or .pq, or pass fmt='csv' or fmt='parquet'
    """  # noqa: E501
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path={path!r}: expected a file name (str or Path)")
    target = Path(path)
    kind = _format_of(target, fmt)
    if kind == "parquet":
        pyarrow_parquet()
    data = stored_frame(frame, source="frame")
    data.attrs = dict(frame.attrs)
    # leftovers of an earlier, killed write of this log (the CSV's metadata file too)
    remove_stale_temporaries(target.parent, [target.name, metadata_path(target).name])
    if kind == "csv":
        write_csv_log(data, target, fsync=fsync)  # the CSV and its metadata file, each atomically
        return target
    with atomic_path(target, fsync=fsync, what="the event log") as tmp:
        write_parquet_log(data, tmp)
    return target


def read_log(path: str | os.PathLike[str], *, on_incomplete: str = "raise") -> pd.DataFrame:
    """Read a log file (CSV or Parquet) or a spill directory; same dtypes as ``to_frame()``.

    The format is told by the file's first bytes (Parquet starts with ``PAR1``).
    Raises :class:`TruncatedLogError` for a file cut short, :class:`LogFileError`
    for a damaged one (bytes that are not UTF-8 included, wherever they are), and
    warns (:class:`UncheckedLogWarning`) when reading a file from before format 2,
    which cannot be checked. A spill directory closed without every row of its log
    raises :class:`IncompleteLogError`; ``on_incomplete="warn"`` reads the rows it
    holds instead (see :func:`read_spill`).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path={path!r}: expected a file or directory name (str or Path)")
    target = Path(path)
    try:
        if target.is_dir():
            return read_spill(target, on_incomplete=on_incomplete)
        return _read_file(target)
    except UnicodeDecodeError as exc:
        # Every reader turns bad bytes into a LogFileError where it knows the column; a
        # decoding deeper down (a library's) must still name the file, never escape bare.
        raise LogFileError(f"{target}: holds bytes that are not valid UTF-8 ({exc})") from None


def _read_file(target: Path) -> pd.DataFrame:
    source = str(target)
    with open(target, "rb") as fh:
        head = fh.read(len(CSV_MAGIC))
    if head.startswith(PARQUET_MAGIC):
        return read_parquet_log(target, source)[0]
    parquet_suffix = SUFFIXES.get(target.suffix.lower()) == "parquet"
    if parquet_suffix and PARQUET_MAGIC.startswith(head):
        raise TruncatedLogError(f"{source}: the file is empty or was cut short at its start")
    if parquet_suffix and not head.startswith((CSV_MAGIC[:4], b"seq,")):
        raise LogFileError(f"{source}: not a Parquet file (it does not start with PAR1)")
    return read_csv_log(target, source)
