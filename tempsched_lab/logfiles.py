"""Event-log files: CSV and Parquet (interim version; see docs/event-log.md)."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from .logframe import typed_frame
from .schema import COLUMNS

__all__ = ["normalize_frame", "read_log", "write_log"]

_TEXT_DTYPES = {c.name: object for c in COLUMNS if c.store in ("cat", "text")}


def normalize_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Give a frame read from disk exactly the dtypes ``EventLog.to_frame`` produces."""
    return typed_frame(frame)


def write_log(frame: pd.DataFrame, path: str | os.PathLike[str], fmt: str | None = None) -> None:
    """Write an event-log frame as ``csv`` or ``parquet`` (from the suffix when ``fmt`` is None)."""
    p = os.fspath(path)
    if fmt is None:
        fmt = "parquet" if p.endswith((".parquet", ".pq")) else "csv"
    stored = frame[[c.name for c in COLUMNS]]
    if fmt == "csv":
        stored.to_csv(p, index=False)
    elif fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError(
                "to_parquet needs pyarrow: pip install 'tempsched-lab[parquet]'"
            ) from exc
        stored.to_parquet(p, index=False)
    else:
        raise ValueError(f"fmt={fmt!r}: expected 'csv' or 'parquet'")


def read_log(path: str | os.PathLike[str]) -> Any:
    """Read a log written by ``write_log``; same dtypes as ``to_frame()``."""
    p = os.fspath(path)
    if p.endswith((".parquet", ".pq")):
        raw = pd.read_parquet(p)
    else:
        # Only empty fields are missing: a label such as "None" or "NA" stays text.
        raw = pd.read_csv(p, keep_default_na=False, na_values=[""], dtype=_TEXT_DTYPES)
    return normalize_frame(raw)
