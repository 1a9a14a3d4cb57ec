"""The interactive timeline's wire format: event-log rows packed into one compact binary block.

The browser-side timeline (:class:`~tempsched_lab.widgets.TimelineWidget`)
receives only the rows that are new since the last frame. Each batch is one
custom widget message: a small JSON header and **one** binary buffer holding the
rows column by column, 33 bytes a row (a JSON row of the same fields takes
about 200 bytes; the buffer also skips base64):

====== ======= =====================================================
column  type    meaning
====== ======= =====================================================
t       float64 the row's time, seconds since the scheduler's origin
due     float64 the task's (or this run's) due time, same scale (NaN: none)
task    int32   task ID (-1: none)
dup     int32   for a duplicate request: the task it matched (-1: none)
label   int32   index into the label table (-1: none)
lane    uint16  index into the lane table: the executor thread of a start
                row, the worker of a finish/error row (65535: none)
kind    uint8   :data:`~tempsched_lab.log.schema.KINDS` code
case    int8    decision case 1-8 (0: none)
flags   uint8   :data:`FLAGS` bits (a cancel that removed the task, ...)
====== ======= =====================================================

Rows are gapless from the header's ``first`` (``seq`` of the first row), so
``seq`` itself is not sent. Labels and lane names are sent once: a header lists
only the table entries new in its batch.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, at=1.0, label="hello")
>>> feed = TimelineFeed()
>>> header, block = feed.encode(s.log.to_frame(), origin=0.0)
>>> header["first"], header["count"], len(block), header["labels"]
(0, 1, 33, ['hello'])
>>> decode(block, 1)["due"].tolist()
[1.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..log.kinds import Kind
from ..log.schema import KIND_CODE

__all__ = ["BYTES_PER_ROW", "COLUMNS", "FLAGS", "NO_LANE", "TimelineFeed", "decode"]

#: The binary block's columns, in order: (name, numpy dtype). Widest first, so each column
#: starts aligned for the browser's typed arrays.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("t", "<f8"),
    ("due", "<f8"),
    ("task", "<i4"),
    ("dup", "<i4"),
    ("label", "<i4"),
    ("lane", "<u2"),
    ("kind", "u1"),
    ("case", "i1"),
    ("flags", "u1"),
)
#: Bytes one row takes on the wire.
BYTES_PER_ROW = sum(np.dtype(dtype).itemsize for _, dtype in COLUMNS)
#: The ``lane`` value of rows that name no thread or worker.
NO_LANE = 0xFFFF
#: Bits of the ``flags`` column.
FLAGS: Mapping[str, int] = {
    "removed": 1,  # a cancel that took the task out of the queue (result "cancelled")
    "dropped": 2,  # a shutdown row that dropped a pending task
    "periodic": 4,  # a schedule row that re-arms a periodic task
}


def _ints(frame: pd.DataFrame, column: str) -> np.ndarray:
    return frame[column].to_numpy(dtype="float64", na_value=np.nan)


class TimelineFeed:
    """Packs event-log frames into the timeline's binary rows; remembers the string tables.

    Labels and lane names are numbered in the order they first appear and each
    is sent once; the numbering never changes, so every page that shows the
    widget decodes every batch the same way (a page that connects late gets the
    whole tables first). :meth:`reset` forgets them (a new log).
    """

    def __init__(self) -> None:
        self.labels: dict[str, int] = {}
        self.lanes: dict[str, int] = {}

    def reset(self) -> None:
        """Forget the tables: the next batch re-sends every label and lane it uses."""
        self.labels.clear()
        self.lanes.clear()

    def _index(self, table: dict[str, int], values: pd.Series, new: list[str]) -> np.ndarray:
        """Table index of each value (-1 where missing); names new to ``table`` go to ``new``."""
        # through the categorical's codes: one dict lookup per distinct name, not per row
        # (400,000 rows: 4 ms instead of 0.6 s with a Python loop over the values)
        series = (
            values if isinstance(values.dtype, pd.CategoricalDtype) else values.astype("category")
        )
        codes = series.cat.codes.to_numpy()
        mapping = np.empty(len(series.cat.categories) + 1, dtype="int64")
        mapping[-1] = -1  # code -1 (missing) indexes the last slot
        used = np.zeros(len(mapping), dtype=bool)
        used[codes] = True
        for i, name in enumerate(series.cat.categories):
            if not used[i]:
                continue
            name = str(name)
            code = table.get(name)
            if code is None:
                code = table[name] = len(table)
                new.append(name)
            mapping[i] = code
        return mapping[codes]

    def encode(self, frame: pd.DataFrame, origin: float) -> tuple[dict[str, Any], bytes]:
        """``(header, block)`` for the rows of ``frame`` (gapless ``seq``), times minus ``origin``.

        The header holds ``first`` (seq of the first row), ``count``, and the
        ``labels`` and ``lanes`` new to the tables (in index order).
        """
        n = len(frame)
        first = int(frame["seq"].iloc[0]) if n else 0
        if n and int(frame["seq"].iloc[-1]) - first != n - 1:
            raise ValueError("frame: rows must be gapless in seq (a slice of one log)")
        kinds = frame["kind"].astype(object).to_numpy()
        kind_code = np.array([KIND_CODE[k] for k in kinds], dtype="u1") if n else np.empty(0, "u1")
        new_labels: list[str] = []
        new_lanes: list[str] = []
        labels = self._index(self.labels, frame["label"], new_labels)
        lanes = self._index(self.lanes, _lane_names(frame, kinds), new_lanes)
        result = frame["result"].astype(object).to_numpy()
        origin_col = frame["origin"].astype(object).to_numpy()
        flags = (
            ((kinds == Kind.CANCEL) & (result == "cancelled")) * FLAGS["removed"]
            | ((kinds == Kind.SHUTDOWN) & (result == "dropped")) * FLAGS["dropped"]
            | ((kinds == Kind.SCHEDULE) & (origin_col == "periodic")) * FLAGS["periodic"]
        )
        columns = {
            "t": frame["t"].to_numpy(dtype="float64") - origin,
            "due": frame["due"].to_numpy(dtype="float64") - origin,
            "task": np.nan_to_num(_ints(frame, "task_id"), nan=-1.0),
            "dup": np.nan_to_num(_ints(frame, "dup_of"), nan=-1.0),
            "label": labels,
            "lane": np.where(lanes < 0, NO_LANE, lanes),
            "kind": kind_code,
            "case": np.nan_to_num(_ints(frame, "case"), nan=0.0),
            "flags": np.asarray(flags, dtype="u1") if n else np.empty(0, "u1"),
        }
        block = b"".join(
            np.ascontiguousarray(columns[name], dtype=dtype).tobytes() for name, dtype in COLUMNS
        )
        header = {"first": first, "count": n, "labels": new_labels, "lanes": new_lanes}
        return header, block


def _lane_names(frame: pd.DataFrame, kinds: np.ndarray) -> pd.Series:
    """The lane each row names: a start's thread, a finish/error's worker (Dask), else none."""
    import pandas as pd

    thread = frame["thread"]
    started = (kinds == Kind.START) | (kinds == Kind.EVENT_SET)
    lanes = thread.where(pd.Series(started, index=frame.index))
    if "worker" in frame.columns:
        worker = frame["worker"].astype(object)
        ends = pd.Series((kinds == Kind.FINISH) | (kinds == Kind.ERROR), index=frame.index)
        ends &= worker.notna()
        if ends.any():
            lanes = lanes.astype(object).where(~ends, worker)
    return lanes


def decode(block: bytes, count: int) -> dict[str, np.ndarray]:
    """The columns of a binary block of ``count`` rows (what the browser reads; for tests).

    >>> decode(b"", 0)["t"].tolist()
    []
    """
    if len(block) != count * BYTES_PER_ROW:
        raise ValueError(
            f"block: {len(block)} bytes for count={count} rows; expected {count * BYTES_PER_ROW}"
        )
    out: dict[str, np.ndarray] = {}
    offset = 0
    for name, dtype in COLUMNS:
        size = np.dtype(dtype).itemsize * count
        out[name] = np.frombuffer(block, dtype=dtype, count=count, offset=offset)
        offset += size
    return out
