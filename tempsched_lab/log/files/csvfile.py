r"""CSV event-log files: plain CSV that any tool reads, and a metadata file beside it.

Layout (format 3)::

    run.csv              seq,t,wall,kind,task_id,...,worker_start,time,wall_time
                         0,0.0005641,0.0006001,schedule,0,2,,1.0005641,...
                         ...
    run.csv.meta.json    {"format": 3, "rows": 20, "bytes": 5120, "file_crc": "1c291ca3",
                          "columns": {...},
                          "time_origin": 1796139723.1258159,
                          "relative_to": {"t": 1796139723.1258159, ..., "wall": ...}, ...}

``pandas.read_csv("run.csv")`` gives the rows and columns :func:`read_log` gives
(see ``docs/event-log.md`` for how the dtypes and the time columns differ). Lines
end with ``\r\n`` as RFC 4180 says (Python's ``csv`` writer then quotes any field
holding a bare ``\r``). A missing value is an empty field; text cells use the
escape of :mod:`.text` (an empty string is ``\e``). Times are seconds since the
start (:mod:`.timecols`), the origins in the metadata file, which also holds the
row count, the file's size and CRC-32, and a checksum per column's values:
:func:`read_csv_log` says how many rows a file cut short holds, names a damaged
column, and still reads a file whose bytes changed but not its values (its line
ends converted, say).

Files of format 2 (a metadata line first and an end line last) still read, checked;
files of format 1 (plain CSV, no metadata), or a CSV whose metadata file is missing,
read with an :class:`UncheckedLogWarning`.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import warnings
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ...time.scale import ORIGIN_ATTR
from ..schema import COLUMNS
from .atomic import atomic_path, temporary_name
from .errors import LogFileError, TruncatedLogError, UncheckedLogWarning
from .meta import build_metadata, dumps, parse_metadata, restore_attrs, verify
from .normalize import STORED, TEXT_COLUMNS, add_derived, normalize_frame
from .text import escape_columns, unescape_columns
from .timecols import (
    CLOCK_TIMES,
    DERIVED_TEXT,
    WALL,
    derived_text,
    from_relative,
    origins_of,
    to_relative,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CSV_FORMAT", "MAGIC", "metadata_path", "read_csv_log", "write_csv_log"]

#: The layout :func:`write_csv_log` writes: plain CSV, its metadata in a file beside it.
CSV_FORMAT = 3
#: The first bytes of a CSV log of format 2 (its metadata line).
MAGIC = b"#tempsched-lab event log "
#: The columns of a CSV log of format 3, in order: the stored ones, then the derived times.
FILE_COLUMNS: tuple[str, ...] = (*STORED, *DERIVED_TEXT)
_END = "#end of event log: {rows} rows\r\n"
_NEWLINE = "\r\n"
_MAX_FIRST_LINE = 1 << 24  # the metadata line is a few kB; a longer "line" is not ours
_SIDECAR_SUFFIX = ".meta.json"


def metadata_path(path: Path) -> Path:
    """The metadata file of the CSV log ``path``: ``run.csv`` -> ``run.csv.meta.json``.

    >>> metadata_path(Path("out/event-log.csv")).as_posix()
    'out/event-log.csv.meta.json'
    """
    return path.with_name(path.name + _SIDECAR_SUFFIX)


def write_csv_log(frame: pd.DataFrame, target: Path, *, fsync: bool = True) -> None:
    """Write a normalized ``frame`` as ``target`` and its metadata file, each atomically.

    Both are written under temporary names first, so that a failure (a full disk)
    leaves both files as they were; then the CSV is renamed into place, then its
    metadata file. A crash between the two renames leaves the new CSV beside the
    old metadata file (or none): :func:`read_csv_log` then says they do not match
    (or warns that the file cannot be checked), never reads a wrong frame.
    """
    origin, wall_origin = origins_of(frame, frame.attrs.get(ORIGIN_ATTR))
    stored, escaped = escape_columns(frame[list(STORED)], TEXT_COLUMNS, csv=True)
    origins = {name: origin for name in CLOCK_TIMES} | {WALL: wall_origin}
    stored, relative = to_relative(stored, origins)
    stored = stored.assign(**derived_text(add_derived(frame[["t", WALL]].copy())))
    sidecar = metadata_path(target)
    meta_tmp = temporary_name(sidecar)
    try:
        with atomic_path(target, fsync=fsync, what="the event log") as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                stored.to_csv(fh, index=False, lineterminator=_NEWLINE)
            with open(tmp, "rb") as written:
                file_crc = _crc_of(written)
            meta = build_metadata(
                frame,
                escaped=escaped,
                format=CSV_FORMAT,
                bytes=tmp.stat().st_size,
                file_crc=file_crc,
                relative_to={name: origins[name] for name in relative},
            )
            _write_new(meta_tmp, (dumps(meta, indent=1) + "\n").encode("ascii"), fsync=fsync)
        try:
            os.replace(meta_tmp, sidecar)
            if fsync:
                _fsync_directory(sidecar.parent)
        except OSError as exc:
            raise type(exc)(
                exc.errno, f"cannot write the event log's metadata file {str(sidecar)!r}: {exc}"
            ) from exc
    finally:
        meta_tmp.unlink(missing_ok=True)


def _write_new(path: Path, data: bytes, *, fsync: bool) -> None:
    with open(path, "xb") as fh:
        fh.write(data)
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the files themselves are synced
    finally:
        os.close(fd)


def read_csv_log(path: Path, source: str) -> pd.DataFrame:
    """Read a CSV log, checking it is whole; see the module docstring for the layouts."""
    sidecar = metadata_path(path)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        first = fh.readline(_MAX_FIRST_LINE)
        if first.startswith(MAGIC):
            if not first.endswith(b"\r\n"):
                raise TruncatedLogError(
                    f"{source}: the file was cut short inside its first (metadata) line"
                )
            meta = parse_metadata(first[len(MAGIC) : -2], source)
            return _read_format2(fh, size, meta, source)
        if sidecar.exists():
            fh.seek(0)
            return _read_format3(fh, size, _load_sidecar(sidecar), source)
        if not first or MAGIC.startswith(first):
            raise TruncatedLogError(f"{source}: the file is empty or was cut short at its start")
        if first.lstrip(b"\xef\xbb\xbf").startswith(b"seq,"):
            fh.seek(0)
            return _read_unchecked(fh, sidecar, source)
        raise LogFileError(f"{source}: not an event-log file (it starts with {first[:40]!r})")


def _read_unchecked(fh: IO[bytes], sidecar: Path, source: str) -> pd.DataFrame:
    """A CSV log without metadata: format 1, or format 3 whose metadata file is missing."""
    raw = _parse(fh, source, first_line=1)
    if tuple(raw.columns) == FILE_COLUMNS:  # format 3: every text column is escaped
        why = (
            f"its metadata file {sidecar.name} is missing: it cannot be checked for truncation "
            "or damage, and its times are read as written, in seconds since the start"
        )
        raw = unescape_columns(raw, TEXT_COLUMNS, source)
    else:
        why = (
            "it has no tempsched-lab metadata (it was written before log file format 2): it "
            "cannot be checked for truncation or damage"
        )
    warnings.warn(f"{source}: {why}", UncheckedLogWarning, stacklevel=4)
    return restore_attrs(normalize_frame(raw, source=source), None)


def _load_sidecar(sidecar: Path) -> dict[str, Any]:
    """The metadata of a CSV log of format 3, checked; errors name the metadata file."""
    source = str(sidecar)
    try:
        data = sidecar.read_bytes()
    except OSError as exc:
        raise LogFileError(f"{source}: cannot read the metadata file ({exc})") from None
    meta = parse_metadata(data, source)
    checks: dict[str, Callable[[Any], bool]] = {
        "format": lambda v: v == CSV_FORMAT,
        "bytes": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "file_crc": lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{8}", v) is not None,
        "relative_to": lambda v: (
            isinstance(v, dict)
            and set(v) <= {*CLOCK_TIMES, WALL}
            and all(type(o) in (int, float) and math.isfinite(o) for o in v.values())
        ),
    }
    for key, ok in checks.items():
        if key not in meta or not ok(meta[key]):
            raise LogFileError(f"{source}: its metadata has no valid {key!r} ({meta.get(key)!r})")
    return meta


def _read_format3(fh: IO[bytes], size: int, meta: dict[str, Any], source: str) -> pd.DataFrame:
    rows = meta["rows"]
    same_bytes = _crc_of(fh) == meta["file_crc"]
    fh.seek(0)
    if size < meta["bytes"]:  # cut short, unless only its line ends changed: count whole rows
        data = fh.read()
        if not data:
            raise TruncatedLogError(
                f"{source}: the file is empty (its metadata file says it holds {rows} rows)"
            )
        complete, cut_row = _whole_rows(data)
        if complete is None:
            raise TruncatedLogError(
                f"{source}: holds 0 of {rows} rows: the file was cut short inside its column names"
            )
        if complete < rows:
            detail = f" inside row {complete}" if cut_row else " (or its metadata is another log's)"
            raise TruncatedLogError(
                f"{source}: holds {complete} of {rows} rows: the file was cut short{detail}"
            )
        fh.seek(0)
    try:
        first = fh.readline(_MAX_FIRST_LINE).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogFileError(f"{source}: not UTF-8 text ({exc.reason})") from None
    _check_columns(next(csv.reader([first.rstrip("\r\n")]), []), FILE_COLUMNS, source)
    fh.seek(0)
    raw = _parse(fh, source, first_line=1, usecols=STORED)  # the derived times: below, if needed
    raw = unescape_columns(raw, meta["escaped"], source)
    frame = normalize_frame(from_relative(raw, meta["relative_to"]), source=source)
    verify(frame, meta, source)
    if not same_bytes:  # the values are right: the derived times must be too (line ends may differ)
        fh.seek(0)
        _check_derived(frame, _read_csv(fh, object, source, 1, usecols=list(DERIVED_TEXT)), source)
    return restore_attrs(frame, meta)


def _crc_of(fh: IO[bytes]) -> str:
    """CRC-32 of the rest of ``fh``, as 8 hex digits (read in blocks: a big file is not copied)."""
    crc = 0
    while block := fh.read(1 << 20):
        crc = zlib.crc32(block, crc)
    return f"{crc:08x}"


def _check_columns(names: Sequence[str], expected: tuple[str, ...], source: str) -> None:
    if tuple(names) != expected:
        missing = [c for c in expected if c not in names]
        extra = [c if len(c) <= 40 else c[:40] + "..." for c in names if c not in expected][:5]
        raise LogFileError(
            f"{source}: its column names are not an event log's "
            f"(missing {missing}, unexpected {extra})"
        )


def _check_derived(frame: pd.DataFrame, raw: pd.DataFrame, source: str) -> None:
    """The file's ``time`` and ``wall_time`` text must be what its ``t`` and ``wall`` give.

    Run only when the file's bytes are not the ones written (``file_crc``), at about
    1 s a million rows.
    """
    import numpy as np

    for name, text in derived_text(frame).items():
        found = raw[name].to_numpy(dtype=object, na_value="")
        bad = np.flatnonzero(found != text)
        if len(bad):
            i = int(bad[0])
            raise LogFileError(
                f"{source}: column {name!r}, row {i} (seq {int(frame['seq'].iloc[i])}): "
                f"{found[i]!r} is not the time of its {DERIVED_TEXT[name]!r} ({text[i]!r}): "
                "the file was damaged or edited after it was written"
            )


def _read_format2(fh: IO[bytes], size: int, meta: dict[str, Any], source: str) -> pd.DataFrame:
    """A CSV log of format 2: a metadata line, the rows, an end line (``#end of event log``)."""
    body_start = fh.tell()
    end = _END.format(rows=meta["rows"]).encode("ascii")
    body_end = size - len(end)
    fh.seek(max(body_start, body_end))
    if body_end < body_start or fh.read() != end:
        raise _cut_short(fh, body_start, meta["rows"], end, source)
    raw = _parse(io.BufferedReader(_Window(fh, body_start, body_end)), source, first_line=2)
    _check_columns(list(raw.columns), STORED, source)
    frame = normalize_frame(unescape_columns(raw, meta["escaped"], source), source=source)
    verify(frame, meta, source)
    return restore_attrs(frame, meta)


def _whole_rows(data: bytes) -> tuple[int | None, bool]:
    """How many whole rows CSV ``data`` (column names first) holds, and whether a cut row follows.

    ``None`` when the column names themselves are cut. Lines starting with ``#``
    (a format 2 end line) are not rows.
    """
    text = data.decode("utf-8", "replace")
    records: list[list[str]] = []
    try:
        records.extend(csv.reader(io.StringIO(text, newline=""), strict=True))
        inside_quotes = False
    except csv.Error:  # the cut fell inside a quoted field: that record was not returned
        inside_quotes = True
    last_cut = bool(records) and not inside_quotes and not text.endswith("\n")
    if len(records) <= 1 and (last_cut or inside_quotes or not records):
        return None, False
    data_rows = [r for r in records[1:] if not (r and r[0].startswith("#"))]
    cut_row = inside_quotes or (last_cut and len(data_rows) == len(records) - 1)
    return len(data_rows) - (cut_row and not inside_quotes), cut_row


def _cut_short(fh: IO[bytes], body_start: int, rows: int, end: bytes, source: str) -> LogFileError:
    """Explain a format 2 file without its end line: how many rows are whole, or what follows."""
    fh.seek(body_start)
    data = fh.read()
    at = data.rfind(end)
    if at >= 0:
        return LogFileError(
            f"{source}: holds {len(data) - at - len(end)} unexpected bytes after its end line"
        )
    complete, cut_row = _whole_rows(data)
    if complete is None:
        return TruncatedLogError(
            f"{source}: holds 0 of {rows} rows: the file was cut short inside its column names"
        )
    if complete >= rows:
        return TruncatedLogError(
            f"{source}: holds all {rows} rows but its end line is missing or incomplete: "
            "the file was cut short"
        )
    detail = f" inside row {complete}" if cut_row else ""
    return TruncatedLogError(
        f"{source}: holds {complete} of {rows} rows: the file was cut short{detail}"
    )


class _Window(io.RawIOBase):
    """The bytes ``[start, stop)`` of an open file, as a file of their own (no copy)."""

    def __init__(self, fh: IO[bytes], start: int, stop: int) -> None:
        self._fh, self._start, self._pos, self._stop = fh, start, start, stop

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: self._start, io.SEEK_CUR: self._pos, io.SEEK_END: self._stop}[whence]
        self._pos = min(max(base + offset, self._start), self._stop)
        return self._pos - self._start

    def tell(self) -> int:
        return self._pos - self._start

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self._stop - self._pos)
        if n <= 0:
            return 0
        self._fh.seek(self._pos)
        data = self._fh.read(n)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


_CSV_DTYPE: dict[str, Any] = {
    "seq": "Int64", "int": "Int64", "case": "Int64", "float": "float64", "bool": "boolean",
    "kind": "category", "origin": "category", "cat": "category", "text": object,
}  # fmt: skip


def _csv_dtypes() -> dict[str, Any]:
    return {c.name: _CSV_DTYPE[c.store] for c in COLUMNS} | dict.fromkeys(DERIVED_TEXT, object)


def _float_options() -> dict[str, Any]:
    import pandas as pd

    # pandas 3 parses floats exactly by default (and deprecates the option); pandas 2 needs it.
    return {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def _parse(
    handle: IO[bytes], source: str, first_line: int, usecols: Sequence[str] | None = None
) -> pd.DataFrame:
    """The rows as typed columns; a value that is not of its column's type is located and named."""
    start = handle.tell()
    try:
        return _read_csv(handle, _csv_dtypes(), source, first_line, usecols)
    except LogFileError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # a value not of its column's type
        handle.seek(start)
        raw = _read_csv(handle, object, source, first_line, usecols)
        normalize_frame(raw, source=source)  # names the column, the row and the value
        raise LogFileError(f"{source}: {exc}") from None


def _read_csv(
    handle: IO[bytes],
    dtype: Any,
    source: str,
    first_line: int,
    usecols: Sequence[str] | None = None,
) -> pd.DataFrame:
    """``pd.read_csv`` with the file's conventions; bytes or lines it cannot parse name the file."""
    import pandas as pd

    # Only empty fields are missing: a label such as "None", "NA" or "nan" stays text.
    options = {"keep_default_na": False, "na_values": [""], "index_col": False,
               "encoding": "utf-8", "usecols": usecols, **_float_options()}  # fmt: skip
    try:
        frame: pd.DataFrame = pd.read_csv(handle, dtype=dtype, **options)
    except UnicodeDecodeError as exc:
        raise LogFileError(f"{source}: not UTF-8 text ({exc.reason})") from None
    except pd.errors.ParserError as exc:
        lines = _file_lines(exc, first_line)
        raise LogFileError(f"{source}: not a well-formed CSV file ({lines})") from None
    except pd.errors.EmptyDataError:
        raise TruncatedLogError(
            f"{source}: holds no column names: the file was cut short"
        ) from None
    return frame


def _file_lines(exc: Exception, first_line: int) -> str:
    """pandas counts lines from the column names (line ``first_line`` of the file) as line 1."""
    shift = first_line - 1
    return re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) + shift} of the file", str(exc))
