"""A row received from elsewhere (a feed's JSON, a segment's frame) put back as the log stores it.

The mirror of a served scheduler keeps its rows in an ordinary
:class:`~tempsched_lab.EventLog`, so its frames are built by the same code as the
service's own. :func:`stored_row` is :func:`~tempsched_lab.log.eventlog.row_dict` read
backwards: a row as a dict of columns (missing values as ``None``, NaN or ``pd.NA``)
becomes the tuple laid out as :data:`~tempsched_lab.log.schema.LAYOUTS` says. Values
come back bit for bit: the one field that is not a column (a start row's dispatch
time) is ``t - queue_delay``, exact because the delay was ``t - dispatched`` of
two floats on the same scale.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> from tempsched_lab.log.eventlog import row_dict
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, at=1.0, label="hi")
>>> row = s.log.rows()[0]
>>> stored_row(row) == s.log._tuples()[0][0]
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..log.schema import COMMON, KIND_CODE, LAYOUTS, ORIGINS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Row", "frame_rows", "json_row", "stored_row"]

Row = tuple[Any, ...]
_INTS = frozenset(("task_id", "dup_of", "ready_size", "queue_size", "missed"))
_ORIGIN_CODE = {name: i for i, name in enumerate(ORIGINS)}


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT
    except (TypeError, ValueError):  # pd.NA refuses to be a bool
        return True


def _field(row: Mapping[str, Any], name: str) -> Any:
    """The stored value of field ``name`` of ``row`` (missing values as the log stores them)."""
    if name == "dispatched":  # not a column: queue_delay = t - dispatched
        delay: Any = row.get("queue_delay")
        return None if _missing(delay) else float(row["t"]) - float(delay)
    value: Any = row.get(name)
    if name == "origin":
        return -1 if _missing(value) else _ORIGIN_CODE[str(value)]
    if name == "case":
        return 0 if _missing(value) else int(value)
    if name == "woke":
        return -1 if _missing(value) else int(bool(value))
    if name in _INTS:
        return -1 if _missing(value) else int(value)
    if _missing(value):
        return None
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    return value


def stored_row(row: Mapping[str, Any]) -> Row:
    """The stored tuple of ``row``, a dict of the log's columns with times on the clock's scale.

    An unknown ``kind`` raises ``ValueError`` naming it (and the row's ``seq``).
    """
    kind = str(row.get("kind"))
    code = KIND_CODE.get(kind)
    if code is None:
        raise ValueError(f"row seq {row.get('seq')!r}: unknown kind {kind!r}")
    return (code, *(_field(row, name) for name in COMMON + LAYOUTS[kind]))


def frame_rows(frame: pd.DataFrame) -> list[Row]:
    """The stored tuples of a log frame (``to_frame()``'s columns), in its order."""
    return [stored_row({str(k): v for k, v in r.items()}) for r in frame.to_dict("records")]


def json_row(obj: Mapping[str, Any], time_origin: float) -> Row:
    """The stored tuple of a wire row object (:func:`tempsched_lab.serve.wire.row_to_json`:
    clock times in seconds since ``time_origin``).

    Row by row, without a DataFrame: ``wire.rows_from_json`` builds a typed frame, ~100 ms
    for a batch of 10 rows on this machine under load, against ~0.1 ms here.
    """
    from ..log.files.timecols import CLOCK_TIMES

    row = dict(obj)
    for name in CLOCK_TIMES:
        value = row.get(name)
        if value is not None:
            row[name] = float(value) + time_origin
    return stored_row(row)
