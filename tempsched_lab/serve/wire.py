"""The feed's wire format: a :class:`~tempsched_lab.Moment` and log rows as plain JSON, and back.

Both ends import this module: the server (:mod:`tempsched_lab.serve`) to write,
a client (``tempsched_lab.remote``, ``curl``, a browser) to read. It needs
neither starlette nor uvicorn, and imports pandas only to build a frame.

Every time on the wire is in the project's one time language, **seconds since
the scheduler's start** (its clock's origin): a row's ``t``, ``due``,
``fire_at``, ``head_before``, ``head_after`` and ``worker_start``, a moment's
``now``, a task's ``due``. The origin itself travels in ``time_origin`` (the
fields of the scheduler's :class:`~tempsched_lab.TimeScale`), so a reader can
put times back on the clock's scale (``moment_from_json`` and
``rows_from_json`` do) or show them as wall-clock times. ``wall`` stays what
``time.time()`` read (seconds since 1970, UTC). Durations (``lateness``,
``period``, ...) are seconds. A missing value is ``null``; no NaN, no infinity
(standard JSON that ``JSON.parse`` accepts).

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock(start=100.0))
>>> _ = s.schedule(print, delay=2.5)
>>> data = moment_to_json(s.moment(), name="demo", first_seq=0)
>>> data["now"], data["seq"], data["queue"]["head_time"], data["time_origin"]["origin"]
(0.0, 1, 2.5, 100.0)
>>> moment_from_json(data).queue.head_time  # back on the clock's scale
102.5
>>> row = row_to_json(s.log.rows()[0], s.log.time_origin)
>>> row["seq"], row["kind"], row["case"], row["due"]
(0, 'schedule', 2, 2.5)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from ..core.moment import Moment
from ..core.queues.base import QueueSnapshot, QueueState
from ..core.task import TaskView
from ..log.files.meta import FORMAT_VERSION
from ..log.files.timecols import CLOCK_TIMES
from ..log.schema import COLUMNS
from ..time.scale import TimeScale

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COLUMN_NAMES",
    "SCHEMA_VERSION",
    "WIRE_VERSION",
    "dumps_rows",
    "frame_to_json",
    "moment_from_json",
    "moment_to_json",
    "row_to_json",
    "rows_from_json",
    "time_scale_from_json",
    "time_scale_to_json",
]

#: The version of this wire format (the ``/v1/`` of the routes).
WIRE_VERSION = 1
#: The event log's schema version (that of its files), sent in every moment as ``schema``.
SCHEMA_VERSION = FORMAT_VERSION
#: A row object's keys, in order: the log's stored columns (``EventLog.rows()``).
COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
_CLOCK = frozenset(CLOCK_TIMES)
#: float columns that are not clock times (``wall``, durations)
_FLOATS = tuple(c.name for c in COLUMNS if c.store == "float" and c.name not in _CLOCK)


def _num(value: Any) -> float | None:
    """A float for JSON: ``None`` for missing, NaN or infinite values."""
    if value is None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _rel(value: Any, origin: float) -> float | None:
    """A clock value as seconds since the origin (``None`` if missing)."""
    out = _num(value)
    return None if out is None else out - origin


def _abs(value: Any, origin: float) -> float | None:
    out = _num(value)
    return None if out is None else out + origin


# -- the time origin --------------------------------------------------------------------
def time_scale_to_json(scale: TimeScale) -> dict[str, Any]:
    """A :class:`TimeScale` as JSON: ``{"origin": clock value of 0.000 s, "style", "tz"}``.

    ``style`` is ``null`` when the scale follows the reader's global style; ``tz``
    is an IANA zone name (``"Europe/Paris"``) or ``null`` for the reader's local time.

    >>> time_scale_to_json(TimeScale(1_800_000_000.0))
    {'origin': 1800000000.0, 'style': None, 'tz': None}
    """
    tz = scale.tz
    name = getattr(tz, "key", None) if tz is not None else None
    return {"origin": scale.origin, "style": scale._style, "tz": name}


def time_scale_from_json(data: Mapping[str, Any]) -> TimeScale:
    """The :class:`TimeScale` of :func:`time_scale_to_json`'s output."""
    tz: tzinfo | None = None
    name = data.get("tz")
    if isinstance(name, str):
        from zoneinfo import ZoneInfo

        tz = ZoneInfo(name)
    style = data.get("style")
    return TimeScale(float(data["origin"]), style if style is not None else None, tz)


# -- a moment ---------------------------------------------------------------------------
def _task_to_json(view: TaskView, origin: float) -> dict[str, Any]:
    return {
        "id": view.id,
        "due": _rel(view.due, origin),
        "label": view.label,
        "args": view.args,
        "period": _num(view.period),
        "trigger": view.trigger,
        "upcoming": [_rel(t, origin) for t in view.upcoming],
    }


def _task_from_json(data: Mapping[str, Any], origin: float) -> TaskView:
    due = _abs(data["due"], origin)
    return TaskView(
        int(data["id"]),
        math.nan if due is None else due,
        str(data["label"]),
        str(data["args"]),
        _num(data.get("period")),
        data.get("trigger"),
        tuple(float(t) + origin for t in data.get("upcoming") or ()),
    )


# The built-in designs' pictures: which of their parts are clock times, both ways. A
# design registered elsewhere sends its picture as it is (tuples as lists, times as they are).
def _sorteddict_picture(pic: Mapping[str, Any], move: Callable[[Any], Any]) -> dict[str, Any]:
    return {
        "head_time": move(pic["head_time"]),
        "head": list(pic["head"]),
        "time_points": [(move(t), list(ids)) for t, ids in pic["time_points"]],
    }


def _heap_picture(pic: Mapping[str, Any], move: Callable[[Any], Any]) -> dict[str, Any]:
    return {
        "heap": [(int(tid), move(due)) for tid, due in pic["heap"]],
        "parent": list(pic["parent"]),
    }


def _wheel_picture(pic: Mapping[str, Any], move: Callable[[Any], Any]) -> dict[str, Any]:
    return {
        "slots": pic["slots"],
        "tick": pic["tick"],
        "origin": move(pic["origin"]),
        "cursor": pic["cursor"],
        "buckets": [[(int(tid), rnd) for tid, rnd in bucket] for bucket in pic["buckets"]],
    }


_PICTURES: dict[str, Callable[[Mapping[str, Any], Callable[[Any], Any]], dict[str, Any]]] = {
    "sorteddict": _sorteddict_picture,
    "heap": _heap_picture,
    "wheel": _wheel_picture,
}


def _plain(value: Any) -> Any:
    """Any picture as JSON-able values (tuples as lists; other objects as their ``str``)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return _num(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _picture_to_json(design: str, picture: Mapping[str, Any], origin: float) -> Any:
    convert = _PICTURES.get(design)
    if convert is not None and picture:
        picture = convert(picture, lambda t: _rel(t, origin))
    return _plain(picture)


def _picture_from_json(design: str, picture: Mapping[str, Any], origin: float) -> dict[str, Any]:
    convert = _PICTURES.get(design)
    if convert is not None and picture:
        return convert(picture, lambda t: _abs(t, origin))
    return dict(picture)


def moment_to_json(
    moment: Moment,
    *,
    name: str | None = None,
    first_seq: int | None = None,
    log_id: str | None = None,
) -> dict[str, Any]:
    """A :class:`~tempsched_lab.Moment` as the JSON object ``GET /v1/moment`` answers.

    Args:
        moment: the moment (``scheduler.moment()``).
        name: the scheduler's name (``null`` if it has none).
        first_seq: the first ``seq`` still held in the server's memory (``null``:
            not known); older rows come from the spill directory, if any.
        log_id: the identity of this log (a server names each scheduler it serves);
            a client that finds another one is talking to a new log (a restart).

    The shape (documented in ``docs/serving.md``)::

        {"wire": 1, "schema": 2, "log_id": ..., "name": ..., "serial": 7,
         "now": 12.5, "seq": 340, "first_seq": 0, "pending": 3, "closed": false,
         "running": [task, ...],
         "queue": {"design": "sorteddict", "head_time": 13.0, "head": [4],
                   "points": [[13.0, [4]], [14.0, [5, 6]]], "tasks": [task, ...],
                   "picture": {...}},
         "time_origin": {"origin": 1796075052.89, "style": null, "tz": null}}

    where a task is ``{"id", "due", "label", "args", "period", "trigger", "upcoming"}``.
    """
    scale = moment.time_scale
    origin = scale.origin
    queue = moment.queue
    state = queue.state
    return {
        "wire": WIRE_VERSION,
        "schema": SCHEMA_VERSION,
        "log_id": log_id,
        "name": name,
        "serial": moment.serial,
        "now": _rel(moment.now, origin),
        "seq": moment.seq,
        "first_seq": first_seq,
        "pending": moment.pending,
        "closed": moment.closed,
        "running": [_task_to_json(v, origin) for v in moment.running],
        "queue": {
            "design": queue.design,
            "head_time": _rel(state.head_time, origin),
            "head": list(state.head),
            "points": [[_rel(t, origin), list(ids)] for t, ids in state.points],
            "tasks": [_task_to_json(v, origin) for _, v in sorted(queue.tasks.items())],
            "picture": _picture_to_json(queue.design, queue.picture, origin),
        },
        "time_origin": time_scale_to_json(scale),
    }


def moment_from_json(data: Mapping[str, Any]) -> Moment:
    """The :class:`~tempsched_lab.Moment` of :func:`moment_to_json`'s output, times back on the
    scheduler's clock (``time_origin`` added back: exact for a real clock's epoch-sized
    values and for a zero origin, within a rounding step otherwise).

    The fields a Moment has no place for (``name``, ``first_seq``, ``log_id``) are read
    from ``data`` itself. Raises ``KeyError``/``ValueError``/``TypeError`` for data of
    another shape.
    """
    scale = time_scale_from_json(data["time_origin"])
    origin = scale.origin
    q = data["queue"]
    points = tuple((float(t) + origin, tuple(int(i) for i in ids)) for t, ids in q["points"])
    head_time = _abs(q["head_time"], origin)
    state = QueueState(head_time, tuple(int(i) for i in q["head"]), points)
    tasks = {int(t["id"]): _task_from_json(t, origin) for t in q["tasks"]}
    design = str(q["design"])
    snapshot = QueueSnapshot(
        design=design,
        state=state,
        tasks=tasks,
        picture=_picture_from_json(design, q.get("picture") or {}, origin),
        time_origin=origin,
    )
    now = _abs(data["now"], origin)
    return Moment(
        serial=int(data["serial"]),
        seq=int(data["seq"]),
        now=math.nan if now is None else now,
        queue=snapshot,
        running=tuple(_task_from_json(t, origin) for t in data["running"]),
        closed=bool(data["closed"]),
        time_scale=scale,
    )


# -- rows -------------------------------------------------------------------------------
def row_to_json(row: Mapping[str, Any], time_origin: float) -> dict[str, Any]:
    """One row of ``EventLog.rows()`` as a row object
    (a :func:`~tempsched_lab.log.eventlog.row_dict`).

    Keys in :data:`COLUMN_NAMES` order; clock times as seconds since ``time_origin``;
    missing values (``None``, NaN) as ``None``; ``kind``/``origin``/``label``/... as text,
    ``case``/``task_id``/... as integers, ``woke`` as a boolean.
    """
    # One dict built by a comprehension, then only the float columns looked at: 1.4x faster
    # than a test per column (20.3 -> 14.2 µs a row, same session, under load; a live reader
    # converts every row).
    out = {name: row.get(name) for name in COLUMN_NAMES}
    isfinite = math.isfinite
    for name in CLOCK_TIMES:
        value = out[name]
        if value is not None:
            out[name] = value - time_origin if isfinite(value) else None
    for name in _FLOATS:
        value = out[name]
        if value is not None and not isfinite(value):
            out[name] = None
    return out


_NULLABLE_INTS = frozenset({"case", "task_id", "dup_of", "ready_size", "queue_size", "missed"})


def _masked(values: list[Any], missing: Any) -> list[Any]:
    import numpy as np

    for i in np.flatnonzero(missing).tolist():
        values[i] = None
    return values


def dumps_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """Row objects as the compact JSON text of a ``rows`` event.

    With ``orjson`` installed (the ``serve`` extra), about half of what a reader costs the
    service per row goes (the stdlib encoder was half of 124,113 instructions a row;
    docs/benchmarks.md); without it, or for a value orjson refuses (an integer beyond 64 bits,
    as ``cancel(2**70)`` records), the standard library's encoder. Both write floats as their
    shortest exact text.

    >>> dumps_rows([{"seq": 0, "t": 1.5, "task_id": None}])
    '[{"seq":0,"t":1.5,"task_id":null}]'
    """
    try:
        import orjson
    except ImportError:
        return json.dumps(rows, separators=(",", ":"), allow_nan=False)
    try:
        text: str = orjson.dumps(rows).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(rows, separators=(",", ":"), allow_nan=False)
    return text


def _column_values(name: str, series: Any, origin: float) -> list[Any]:
    """One frame column as JSON values (``None`` for missing), converted a column at a time
    (``astype(object)`` and a per-value check cost 5x more on a 2,048-row batch)."""
    import numpy as np
    import pandas as pd

    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        values = series.to_numpy()
        if name in _CLOCK:
            values = values - origin
        return _masked(values.tolist(), ~np.isfinite(values))
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return [int(v) for v in series.to_numpy().tolist()]
    if isinstance(dtype, pd.CategoricalDtype):
        table = [str(c) for c in dtype.categories] + [None]  # code -1 (missing): the last
        return [table[c] for c in series.cat.codes.to_numpy().tolist()]
    missing = series.isna().to_numpy()
    if name in _NULLABLE_INTS:
        return _masked(series.to_numpy(dtype="int64", na_value=0).tolist(), missing)
    if name == "woke":
        return _masked(series.to_numpy(dtype=bool, na_value=False).tolist(), missing)
    out = series.to_numpy(dtype=object, na_value=None).tolist()
    return [None if v is None else str(v) for v in out]


def frame_to_json(frame: pd.DataFrame, time_origin: float) -> list[dict[str, Any]]:
    """The rows of a log frame (``to_frame()``, ``read_log``) as row objects, column by column.

    The same objects :func:`row_to_json` makes of the same rows (a test holds both to it);
    the way for many rows at once (a catch-up, a spill segment).
    """
    columns = [_column_values(name, frame[name], time_origin) for name in COLUMN_NAMES]
    return [dict(zip(COLUMN_NAMES, values, strict=True)) for values in zip(*columns, strict=True)]


def rows_from_json(
    rows: Iterable[Mapping[str, Any]] | Sequence[Mapping[str, Any]], time_origin: float
) -> pd.DataFrame:
    """Row objects as the typed DataFrame ``EventLog.to_frame()`` gives, times back on the clock.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, delay=1)
    >>> frame = rows_from_json([row_to_json(r, 0.0) for r in s.log.rows()], 0.0)
    >>> frame[["seq", "kind", "case", "due"]]
       seq      kind  case  due
    0    0  schedule     2  1.0
    """
    import pandas as pd

    from ..log.frame import typed_frame

    records = list(rows)
    data: dict[str, list[Any]] = {name: [] for name in COLUMN_NAMES}
    for row in records:
        for name in COLUMN_NAMES:
            data[name].append(row.get(name))
    for name in CLOCK_TIMES:
        data[name] = [math.nan if v is None else float(v) + time_origin for v in data[name]]
    for name in _FLOATS:
        data[name] = [math.nan if v is None else float(v) for v in data[name]]
    frame = pd.DataFrame({name: pd.Series(values, dtype=object) for name, values in data.items()})
    return typed_frame(frame, float(time_origin))
