r"""CSV event-log files: a metadata line, the rows, an end line.

Layout (format 2; lines end with ``\r\n`` as RFC 4180 says, which also makes
Python's ``csv`` writer quote any field holding a bare ``\r``)::

    #tempsched-lab event log {"format":2,"rows":20,...}
    seq,t,wall,kind,task_id,case,...
    0,0.0,1764547200.25,schedule,0,2,...
    ...
    #end of event log: 20 rows

A missing value is an empty field; text cells use the escape of :mod:`.text`
(an empty string is ``\e``). A file without the end line was cut short: the
reader says how many of its rows are whole. Files of format 1 (a plain CSV
starting with the column names) still read, with an :class:`UncheckedLogWarning`.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..schema import COLUMNS
from .errors import LogFileError, TruncatedLogError, UncheckedLogWarning
from .frames import STORED, TEXT_COLUMNS, normalize_frame
from .meta import build_metadata, dumps, parse_metadata, restore_attrs, verify
from .text import escape_columns, unescape_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAGIC", "read_csv_log", "write_csv_log"]

MAGIC = b"#tempsched-lab event log "
_END = "#end of event log: {rows} rows\r\n"
_NEWLINE = "\r\n"
_MAX_FIRST_LINE = 1 << 24  # the metadata line is a few kB; a longer "line" is not ours


def write_csv_log(frame: pd.DataFrame, tmp: Path) -> None:
    """Write a normalized ``frame`` to ``tmp`` (the caller renames it into place)."""
    stored, escaped = escape_columns(frame[list(STORED)], TEXT_COLUMNS, csv=True)
    meta = build_metadata(frame, escaped=escaped)
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(MAGIC.decode("ascii") + dumps(meta) + _NEWLINE)
        stored.to_csv(fh, index=False, lineterminator=_NEWLINE)
        fh.write(_END.format(rows=len(frame)))


def read_csv_log(path: Path, source: str) -> pd.DataFrame:
    """Read a CSV log, checking it is whole; see the module docstring for the layout."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        first = fh.readline(_MAX_FIRST_LINE)
        if first.startswith(MAGIC):
            if not first.endswith(b"\r\n"):
                raise TruncatedLogError(
                    f"{source}: the file was cut short inside its first (metadata) line"
                )
            meta = parse_metadata(first[len(MAGIC) : -2], source)
            return _read_checked(fh, size, meta, source)
        if not first or MAGIC.startswith(first):
            raise TruncatedLogError(f"{source}: the file is empty or was cut short at its start")
        if first.lstrip(b"\xef\xbb\xbf").startswith(b"seq,"):
            warnings.warn(
                f"{source} has no tempsched-lab metadata (it was written before log file "
                "format 2): it cannot be checked for truncation or damage",
                UncheckedLogWarning,
                stacklevel=3,
            )
            fh.seek(0)
            frame = normalize_frame(_parse(fh, source, first_line=1), source=source)
            return restore_attrs(frame, None)
        raise LogFileError(f"{source}: not an event-log file (it starts with {first[:40]!r})")


def _read_checked(fh: IO[bytes], size: int, meta: dict[str, Any], source: str) -> pd.DataFrame:
    body_start = fh.tell()
    end = _END.format(rows=meta["rows"]).encode("ascii")
    body_end = size - len(end)
    fh.seek(max(body_start, body_end))
    if body_end < body_start or fh.read() != end:
        raise _cut_short(fh, body_start, meta["rows"], end, source)
    raw = _parse(io.BufferedReader(_Window(fh, body_start, body_end)), source, first_line=2)
    if tuple(raw.columns) != STORED:
        missing = [c for c in STORED if c not in raw.columns]
        extra = [c for c in raw.columns if c not in STORED]
        raise LogFileError(
            f"{source}: its column names are not an event log's "
            f"(missing {missing}, unexpected {extra})"
        )
    frame = normalize_frame(unescape_columns(raw, meta["escaped"], source), source=source)
    verify(frame, meta, source)
    return restore_attrs(frame, meta)


def _cut_short(fh: IO[bytes], body_start: int, rows: int, end: bytes, source: str) -> LogFileError:
    """Explain a file without its end line: how many rows are whole, or what follows the end."""
    fh.seek(body_start)
    data = fh.read()
    at = data.rfind(end)
    if at >= 0:
        return LogFileError(
            f"{source}: holds {len(data) - at - len(end)} unexpected bytes after its end line"
        )
    text = data.decode("utf-8", "replace")
    records: list[list[str]] = []
    try:
        records.extend(csv.reader(io.StringIO(text, newline=""), strict=True))
        inside_quotes = False
    except csv.Error:  # the cut fell inside a quoted field: that record was not returned
        inside_quotes = True
    last_cut = bool(records) and not inside_quotes and not text.endswith("\n")
    if len(records) <= 1 and (last_cut or inside_quotes or not records):
        return TruncatedLogError(
            f"{source}: holds 0 of {rows} rows: the file was cut short inside its column names"
        )
    data_rows = [r for r in records[1:] if not (r and r[0].startswith("#"))]
    cut_row = inside_quotes or (last_cut and len(data_rows) == len(records) - 1)
    complete = len(data_rows) - (cut_row and not inside_quotes)
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
    return {c.name: _CSV_DTYPE[c.store] for c in COLUMNS}


def _float_options() -> dict[str, Any]:
    import pandas as pd

    # pandas 3 parses floats exactly by default (and deprecates the option); pandas 2 needs it.
    return {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def _parse(handle: IO[bytes], source: str, first_line: int) -> pd.DataFrame:
    """The rows as typed columns; a value that is not of its column's type is located and named."""
    import pandas as pd

    # Only empty fields are missing: a label such as "None", "NA" or "nan" stays text.
    options = {"keep_default_na": False, "na_values": [""], "index_col": False,
               "encoding": "utf-8", **_float_options()}  # fmt: skip
    start = handle.tell()
    try:
        frame: pd.DataFrame = pd.read_csv(handle, dtype=_csv_dtypes(), **options)
        return frame
    except pd.errors.ParserError as exc:
        lines = _file_lines(exc, first_line)
        raise LogFileError(f"{source}: not a well-formed CSV file ({lines})") from None
    except UnicodeDecodeError as exc:
        raise LogFileError(f"{source}: not UTF-8 text ({exc.reason})") from None
    except pd.errors.EmptyDataError:
        raise TruncatedLogError(
            f"{source}: holds no column names: the file was cut short"
        ) from None
    except (ValueError, TypeError, OverflowError) as exc:
        handle.seek(start)
        raw = pd.read_csv(handle, dtype=object, **options)
        normalize_frame(raw, source=source)  # names the column, the row and the value
        raise LogFileError(f"{source}: {exc}") from None


def _file_lines(exc: Exception, first_line: int) -> str:
    """pandas counts lines from the column names (line ``first_line`` of the file) as line 1."""
    shift = first_line - 1
    return re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) + shift} of the file", str(exc))
