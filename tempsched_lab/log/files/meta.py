"""The metadata every log file carries, and the checks it makes possible.

One JSON object, the same for both formats (a CSV file's metadata file beside it,
``run.csv.meta.json``, or the first line of a CSV file of format 2; a Parquet
file's key-value metadata under ``tempsched_lab``)::

    {"format": 2, "rows": 20, "first_seq": 0, "checksum": "crc32",
     "columns": {"seq": "1c291ca3", ...}, "time_origin": 0.0,
     "escaped": ["label", ...], "attrs": {}}

``rows`` finds a file that was cut short, ``columns`` (one checksum per stored
column, see :func:`.frames.column_checksums`) one that was damaged or edited,
and names the column; ``time_origin`` restores ``frame.attrs["time_origin"]``.
"""

from __future__ import annotations

import json
import warnings
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...time.scale import ORIGIN_ATTR
from .errors import LogFileError
from .normalize import STORED, column_checksums

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMAT_VERSION",
    "NEWEST_FORMAT",
    "build_metadata",
    "dumps",
    "parse_metadata",
    "restore_attrs",
    "unseal",
    "verify",
]

#: Version of the Parquet and spill layouts; 1 was the plain CSV/Parquet of earlier releases
#: (no metadata). CSV files are format 3 (:data:`.csvfile.CSV_FORMAT`): plain CSV, metadata beside.
FORMAT_VERSION = 2
#: The newest format this version reads.
NEWEST_FORMAT = 3


def _portable_attrs(frame: pd.DataFrame) -> dict[str, Any]:
    """``frame.attrs`` entries a file can hold (JSON scalars); the others are named in a warning."""
    kept: dict[str, Any] = {}
    for key, value in frame.attrs.items():
        if isinstance(key, str) and (value is None or isinstance(value, (str, int, float, bool))):
            kept[key] = value
        else:
            warnings.warn(
                f"frame.attrs[{key!r}] is not saved in the log file: only text, numbers, "
                f"booleans and None are (its value is of type {type(value).__name__})",
                stacklevel=4,
            )
    return kept


def build_metadata(frame: pd.DataFrame, *, escaped: list[str], **extra: Any) -> dict[str, Any]:
    """The metadata of a normalized ``frame`` about to be written as it is."""
    attrs = _portable_attrs(frame)
    origin = attrs.pop(ORIGIN_ATTR, None)
    return {
        "format": FORMAT_VERSION,
        "rows": len(frame),
        "first_seq": int(frame["seq"].iloc[0]) if len(frame) else None,
        "checksum": "crc32",
        "columns": column_checksums(frame),
        "time_origin": origin,
        "escaped": escaped,
        "attrs": attrs,
        **extra,
    }


def _json(meta: dict[str, Any]) -> str:
    return json.dumps(meta, ensure_ascii=True, separators=(",", ":"))


def dumps(meta: dict[str, Any], indent: int | None = None) -> str:
    """ASCII JSON (non-ASCII and lone surrogates escaped; NaN allowed), sealed.

    The last key, ``meta_crc``, is the CRC-32 of the compact JSON before it, so a
    damaged time origin or row count is found like damaged data. ``indent=None``
    gives one line; a number, an indented text for people (the seal is the same).
    """
    sealed = {**meta, "meta_crc": f"{zlib.crc32(_json(meta).encode('ascii')):08x}"}
    if indent is None:
        return _json(sealed)
    return json.dumps(sealed, ensure_ascii=True, indent=indent)


def unseal(meta: dict[str, Any], source: str) -> None:
    """Check and remove ``meta_crc`` (parsing and dumping again gives the same text)."""
    seal = meta.pop("meta_crc", None)
    if seal != f"{zlib.crc32(_json(meta).encode('ascii')):08x}":
        raise LogFileError(f"{source}: its metadata is damaged (it does not match its checksum)")


def parse_metadata(text: str | bytes, source: str) -> dict[str, Any]:
    """The metadata object, checked for the keys and the version this reader understands."""
    try:
        meta = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise LogFileError(f"{source}: its metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("format"), int):
        raise LogFileError(f"{source}: its metadata has no format version")
    if meta["format"] > NEWEST_FORMAT:
        raise LogFileError(
            f"{source}: written in log file format {meta['format']}; this version of "
            f"tempsched_lab reads formats up to {NEWEST_FORMAT}: upgrade tempsched_lab"
        )
    unseal(meta, source)
    checks: dict[str, Callable[[Any], bool]] = {
        "rows": lambda v: isinstance(v, int) and v >= 0,
        "columns": lambda v: isinstance(v, dict) and set(STORED) <= set(v),
        "escaped": lambda v: isinstance(v, list) and set(v) <= set(STORED),
        "attrs": lambda v: isinstance(v, dict),
        "time_origin": lambda v: v is None or isinstance(v, (int, float)),
        "checksum": lambda v: v == "crc32",
    }
    for key, ok in checks.items():
        if key not in meta or not ok(meta[key]):
            raise LogFileError(f"{source}: its metadata has no valid {key!r} ({meta.get(key)!r})")
    return meta


def verify(frame: pd.DataFrame, meta: dict[str, Any], source: str) -> None:
    """Raise :class:`LogFileError` unless ``frame`` is exactly what ``meta`` says was written."""
    if len(frame) != meta["rows"]:
        raise LogFileError(
            f"{source}: holds {len(frame)} rows but its metadata says {meta['rows']}: "
            "the file was changed after it was written"
        )
    sums = column_checksums(frame)
    for name in STORED:
        if sums[name] != meta["columns"][name]:
            raise LogFileError(
                f"{source}: column {name!r} does not match its checksum: the file was damaged "
                "or edited after it was written"
            )


def restore_attrs(frame: pd.DataFrame, meta: dict[str, Any] | None) -> pd.DataFrame:
    """Put the saved ``attrs`` back on ``frame``; a file without a time origin gets a guess.

    The guess is :func:`~tempsched_lab.time.scale.time_scale_of`'s: 0 for virtual-clock
    times, the first time for epoch-like ones. So every frame read carries
    ``attrs["time_origin"]``, as ``to_frame()`` frames do.
    """
    from ...time.scale import time_scale_of

    origin = None
    if meta is not None:
        frame.attrs.update(meta["attrs"])
        origin = meta["time_origin"]
    if origin is None:
        try:
            origin = time_scale_of(frame).origin
        except (TypeError, ValueError):  # times no scale can show (inf): count from 0
            origin = 0.0
    frame.attrs[ORIGIN_ATTR] = origin
    return frame
