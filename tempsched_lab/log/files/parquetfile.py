"""Parquet event-log files: the stored columns, with the metadata under the key ``tempsched_lab``.

Every data page carries a CRC (``write_page_checksum``) that the reader checks,
on top of the per-column value checksums of :mod:`.meta`. A Parquet file keeps
its schema and row count in a footer at its very end, so a file cut short has
none and is reported as such. Text columns holding a lone surrogate are stored
escaped (:mod:`.text`; UTF-8 cannot hold one) and listed in the metadata.
Needs ``pyarrow`` (``pip install 'tempsched-lab[parquet]'``).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import LogFileError, TruncatedLogError, UncheckedLogWarning
from .meta import build_metadata, dumps, parse_metadata, restore_attrs, verify
from .normalize import STORED, TEXT_COLUMNS, normalize_frame
from .text import escape_columns, unescape_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAGIC", "read_parquet_log", "write_parquet_log"]

MAGIC = b"PAR1"
KEY = b"tempsched_lab"
# zstd: a 1M-row log takes 13.3 MB and writes in 0.59 s, reads in 0.27 s; snappy (pyarrow's
# default) 26.1 MB, 0.88 s and 0.38 s (pyarrow 26, measured 2026-11-30 on the 2-core machine).
COMPRESSION = "zstd"


#: The oldest pyarrow trusted with files users are handed: 14.0.0 and earlier run code
#: hidden in a crafted Parquet file (CVE-2023-47248); the extras ask for >= 15.
SAFE_PYARROW = (14, 0, 1)


def pyarrow_parquet() -> Any:
    """``pyarrow.parquet``, or an ImportError that says how to install (or upgrade) it."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            "Parquet event-log files need pyarrow: pip install 'tempsched-lab[parquet]' "
            "(or write CSV: write_log(frame, 'log.csv'))"
        ) from exc
    import pyarrow as pa

    if _version(pa.__version__) < SAFE_PYARROW and "pyarrow_hotfix" not in sys.modules:
        raise ImportError(
            f"pyarrow {pa.__version__} runs code hidden in a crafted Parquet file "
            "(CVE-2023-47248): pip install -U 'pyarrow>=15' (or import pyarrow_hotfix first)"
        )
    return pq


def _version(text: str) -> tuple[int, ...]:
    """``"14.0.1"`` as ``(14, 0, 1)``; a part that is not a number ends it (``"15.0.0.dev1"``)."""
    parts: list[int] = []
    for part in text.split(".")[:3]:
        digits = part[: len(part) - len(part.lstrip("0123456789"))] if part else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def write_parquet_log(frame: pd.DataFrame, tmp: Path, **extra: Any) -> None:
    """Write a normalized ``frame`` to ``tmp``; ``extra`` goes into the metadata."""
    pq = pyarrow_parquet()
    import pyarrow as pa

    stored, escaped = escape_columns(frame[list(STORED)], TEXT_COLUMNS, csv=False)
    meta = build_metadata(frame, escaped=escaped, **extra)
    stored.attrs = {}  # the metadata holds them; pyarrow would try (and warn) on its own
    table = pa.Table.from_pandas(stored, preserve_index=False)
    # Only our metadata: the reader types columns itself, not from pandas' own JSON.
    table = table.replace_schema_metadata({KEY: dumps(meta).encode("ascii")})
    pq.write_table(table, tmp, compression=COMPRESSION, write_page_checksum=True)


def read_parquet_log(path: Path, source: str) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """The frame and its metadata (``None`` for a file of format 1, with a warning)."""
    pq = pyarrow_parquet()
    import pyarrow as pa

    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(4)
        fh.seek(max(0, size - 4))
        tail = fh.read(4)
    if head != MAGIC:
        raise LogFileError(f"{source}: not a Parquet file (it does not start with PAR1)")
    if size < 12 or tail != MAGIC:
        raise TruncatedLogError(
            f"{source}: the file was cut short ({size} bytes, its Parquet footer is missing)"
        )
    try:
        pf = pq.ParquetFile(path, page_checksum_verification=True)
        schema_meta = pf.schema_arrow.metadata or {}
    except (pa.ArrowException, OSError, ValueError) as exc:
        # ValueError: a column name that is not UTF-8 fails to decode (UnicodeDecodeError)
        raise LogFileError(f"{source}: its Parquet footer is damaged ({exc})") from None
    meta = None
    if KEY in schema_meta:
        meta = parse_metadata(schema_meta[KEY], source)
        if pf.metadata.num_rows != meta["rows"]:
            raise LogFileError(
                f"{source}: holds {pf.metadata.num_rows} rows but its metadata says "
                f"{meta['rows']}: the file was changed after it was written"
            )
    elif b"pandas" not in schema_meta:  # format 1 was pandas' to_parquet: it always has this
        raise LogFileError(f"{source}: its tempsched-lab metadata is missing or damaged")
    else:
        warnings.warn(
            f"{source} has no tempsched-lab metadata (it was written before log file format 2): "
            "it cannot be checked for damage",
            UncheckedLogWarning,
            stacklevel=3,
        )
    try:
        raw = _read_table(pf, source).to_pandas(types_mapper=_pandas_type, ignore_metadata=True)
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise LogFileError(f"{source}: its columns cannot be read ({exc})") from None
    if meta is not None:
        raw = unescape_columns(raw, meta["escaped"], source)
    frame = normalize_frame(raw, source=source)
    if meta is not None:
        verify(frame, meta, source)
    return restore_attrs(frame, meta), meta


def _pandas_type(arrow_type: Any) -> Any:
    """Nullable pandas dtypes for integer and boolean columns (numpy ones cannot hold NA)."""
    import pandas as pd
    import pyarrow as pa

    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    return None


def _read_table(pf: Any, source: str) -> Any:
    """Every column; a page that fails its CRC (or will not decode) is named by its column."""
    import pyarrow as pa

    names = pf.schema_arrow.names
    missing = [c for c in STORED if c not in names]
    if missing:
        raise LogFileError(f"{source}: not an event log: columns {missing} are missing")
    try:
        return pf.read(columns=list(STORED))
    except (pa.ArrowException, OSError) as exc:
        for name in STORED:
            try:
                pf.read(columns=[name])
            except (pa.ArrowException, OSError) as column_exc:
                raise LogFileError(f"{source}: column {name!r} is damaged ({column_exc})") from None
        raise LogFileError(f"{source}: the file is damaged ({exc})") from None
