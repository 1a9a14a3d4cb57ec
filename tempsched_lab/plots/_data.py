"""Turning an event-log frame into plain numpy arrays and per-run records.

Plots accept a frame from :meth:`EventLog.to_frame`, one read back with
:func:`~tempsched_lab.read_log` (categoricals, nullable integers), a raw
``pd.read_csv`` of the same file (objects and floats), an :class:`EventLog`
or a :class:`Scheduler`. Everything is converted once here to float arrays
(missing -> NaN) and object arrays of strings (missing -> ``None``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.decision import Case
from ..log.kinds import Kind
from ..time.scale import TimeScale, time_scale_of

__all__ = ["LogArrays", "as_frame", "task_runs", "time_unit"]

_NUMERIC = (
    "seq",
    "t",
    "task_id",
    "case",
    "dup_of",
    "due",
    "fire_at",
    "period",
    "lateness",
    "queue_delay",
    "duration",
    "ready_size",
    "queue_size",
    "missed",
)
_TEXT = ("kind", "label", "result", "origin", "where", "thread")


def as_frame(log: Any) -> pd.DataFrame:
    """The event-log frame of ``log`` (a DataFrame, an ``EventLog`` or a ``Scheduler``)."""
    if isinstance(log, pd.DataFrame):
        frame = log
    elif hasattr(log, "to_frame"):
        frame = log.to_frame()
    elif hasattr(log, "log") and hasattr(log.log, "to_frame"):
        frame = log.log.to_frame()
    else:
        raise TypeError(
            f"expected an event-log DataFrame, an EventLog or a Scheduler, got {type(log).__name__}"
        )
    missing = [c for c in ("seq", "t", "kind", "task_id") if c not in frame.columns]
    if missing:
        raise ValueError(f"not an event log: columns {missing} are missing")
    return frame


def _numeric(col: pd.Series) -> np.ndarray:
    if isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype(object)
    return pd.to_numeric(col, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def _text(col: pd.Series) -> np.ndarray:
    values = col.astype(object).to_numpy()
    missing = pd.isna(values)
    if missing.any():
        values = values.copy()
        values[missing] = None
    return values


@dataclass
class LogArrays:
    """The columns plots need, as numpy arrays sorted by ``seq``, and the log's time scale."""

    n: int
    cols: dict[str, np.ndarray]
    scale: TimeScale

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    @classmethod
    def of(cls, log: Any) -> LogArrays:
        """Convert a frame (or anything :func:`as_frame` accepts)."""
        frame = as_frame(log)
        seq = _numeric(frame["seq"])
        order = None
        if len(seq) > 1 and not (np.diff(seq) >= 0).all():
            order = np.argsort(seq, kind="stable")
        cols: dict[str, np.ndarray] = {}
        n = len(frame)
        for name in _NUMERIC:
            values = _numeric(frame[name]) if name in frame.columns else np.full(n, np.nan)
            cols[name] = values if order is None else values[order]
        for name in _TEXT:
            values = _text(frame[name]) if name in frame.columns else np.full(n, None, object)
            cols[name] = values if order is None else values[order]
        return cls(n, cols, time_scale_of(frame))

    def kind_is(self, *kinds: Kind) -> np.ndarray:
        """Boolean mask of the rows of these kinds (:class:`~tempsched_lab.log.kinds.Kind`)."""
        kind = self.cols["kind"]
        mask = kind == kinds[0]
        for k in kinds[1:]:
            mask |= kind == k
        return np.asarray(mask, dtype=bool)


def time_unit(values: np.ndarray) -> tuple[str, float]:
    """A unit for durations: ``("µs", 1e6)``, ``("ms", 1e3)`` or ``("s", 1.0)``.

    >>> time_unit(np.array([0.0002])), time_unit(np.array([0.2])), time_unit(np.array([30.0]))
    (('µs', 1000000.0), ('ms', 1000.0), ('s', 1.0))
    """
    finite = np.abs(values[np.isfinite(values)])
    biggest = float(finite.max()) if len(finite) else 0.0
    if biggest < 1e-3:
        return "µs", 1e6
    if biggest < 10.0:
        return "ms", 1e3
    return "s", 1.0


def format_duration(seconds: float, unit: str, scale: float) -> str:
    """``"1.25 ms"``: a duration in a chosen unit with three significant digits."""
    if not np.isfinite(seconds):
        return "n/a"
    value = seconds * scale
    if value == 0:
        return f"0 {unit}"
    return f"{value:.3g} {unit}"


#: Rows that place a run in the queue: decisions of cases that store a task.
_ADDS = tuple(float(c) for c in Case if c.adds_task)

#: Columns of :func:`task_runs`.
RUN_COLUMNS = (
    "task_id",
    "due",
    "seq",
    "scheduled",
    "case",
    "origin",
    "label",
    "period",
    "dispatched",
    "started",
    "ended",
    "event_set",
    "cancelled",
    "dropped",
    "failed",
    "outcome",
    "thread",
)


def _first_per_key(a: LogArrays, mask: np.ndarray, **values: np.ndarray) -> pd.DataFrame:
    data = {"task_id": a["task_id"][mask], "due": a["due"][mask]}
    data.update({k: v[mask] for k, v in values.items()})
    part = pd.DataFrame(data)
    return part.drop_duplicates(["task_id", "due"], keep="first")


def task_runs(log: Any) -> pd.DataFrame:
    """One row per *run* of a task: when it was scheduled, dispatched, started, ended.

    A run is identified by ``(task_id, due)``: a one-shot task has one run, a
    periodic task one per period (all with the same ``task_id``). Times are the
    scheduler clock's seconds (NaN when the step did not happen, or fell out
    of a bounded log). ``thread`` names the thread that ran the run (or set
    its Event). ``outcome`` is one of
    :data:`~tempsched_lab.plots.colors.OUTCOMES`; ``case`` is the decision that
    placed this run in the queue (NaN if that row is not in the log).

    >>> from tempsched_lab.plots import example_frame
    >>> runs = task_runs(example_frame())
    >>> runs.loc[runs["label"] == "failing task", "outcome"].tolist()
    ['failed']
    """
    a = log if isinstance(log, LogArrays) else LogArrays.of(log)
    if a.n == 0:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in RUN_COLUMNS})
    # a ``missed`` row names the first skipped slot of a periodic task: not a run
    has_task = np.isfinite(a["task_id"]) & np.isfinite(a["due"]) & ~a.kind_is(Kind.MISSED)
    result = a["result"]
    sched = has_task & a.kind_is(Kind.SCHEDULE) & ~np.isfinite(a["dup_of"])
    sched &= np.isin(a["case"], _ADDS)
    parts = {
        "scheduled": _first_per_key(
            a,
            sched,
            scheduled=a["t"],
            seq=a["seq"],
            case=a["case"],
            origin=a["origin"],
            label=a["label"],
            period=a["period"],
        ),
        "dispatched": _first_per_key(a, has_task & a.kind_is(Kind.DISPATCH), dispatched=a["t"]),
        "started": _first_per_key(
            a, has_task & a.kind_is(Kind.START), started=a["t"], run_thread=a["thread"]
        ),
        "finished": _first_per_key(a, has_task & a.kind_is(Kind.FINISH), finished=a["t"]),
        "failed": _first_per_key(a, has_task & a.kind_is(Kind.ERROR), failed=a["t"]),
        "event_set": _first_per_key(
            a, has_task & a.kind_is(Kind.EVENT_SET), event_set=a["t"], set_thread=a["thread"]
        ),
        "cancelled": _first_per_key(
            a, has_task & a.kind_is(Kind.CANCEL) & (result == "cancelled"), cancelled=a["t"]
        ),
        "dropped": _first_per_key(
            a, has_task & a.kind_is(Kind.SHUTDOWN) & (result == "dropped"), dropped=a["t"]
        ),
    }
    # Rows other than the decision carry the label too (the decision may have fallen out).
    any_row = _first_per_key(a, has_task, first_seq=a["seq"], any_label=a["label"])
    runs = any_row[["task_id", "due"]]
    for part in parts.values():
        runs = runs.merge(part, on=["task_id", "due"], how="left")
    runs = runs.merge(any_row, on=["task_id", "due"], how="left")
    runs["seq"] = runs["seq"].fillna(runs["first_seq"])
    runs["label"] = runs["label"].where(runs["label"].notna(), runs["any_label"])
    runs = runs.drop(columns=["first_seq", "any_label"])
    runs = runs.sort_values("seq", kind="stable").reset_index(drop=True)
    runs["thread"] = runs["run_thread"].where(runs["run_thread"].notna(), runs["set_thread"])
    runs["ended"] = runs["failed"].where(runs["failed"].notna(), runs["finished"])
    started = runs["started"].notna().to_numpy()
    runs["outcome"] = np.select(
        [
            runs["failed"].notna().to_numpy(),
            runs["finished"].notna().to_numpy(),
            runs["event_set"].notna().to_numpy(),
            runs["cancelled"].notna().to_numpy(),
            runs["dropped"].notna().to_numpy() & ~started,
            started | runs["dispatched"].notna().to_numpy(),
        ],
        ["failed", "finished", "event set", "cancelled", "dropped", "running"],
        default="pending",
    )
    return runs[list(RUN_COLUMNS)]
