"""Questions a student asks of an event log, answered as DataFrames.

Every function takes a frame from :meth:`EventLog.to_frame
<tempsched_lab.EventLog.to_frame>` or :func:`~tempsched_lab.read_log`.

>>> from tempsched_lab import Scheduler, VirtualClock, case_counts
>>> clock = VirtualClock()
>>> s = Scheduler(clock)
>>> _ = s.schedule(print, at=2)
>>> _ = s.schedule(print, at=1)
>>> case_counts(s.log.to_frame())["count"].tolist()
[0, 1, 1, 0, 0, 0, 0, 0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.decision import Case
from ..log.kinds import Kind

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["case_counts", "lateness_summary", "periodic_runs", "task_history"]

_QUANTILES = {"median": 0.5, "p90": 0.9, "p99": 0.99}


def case_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """How often each case 1-8 was decided (rejections included), zeros shown.

    Columns: ``case``, ``short`` (the case's short name), ``count``.
    """
    import pandas as pd

    decided = frame.loc[frame["kind"].isin([Kind.SCHEDULE, Kind.REJECT]), "case"].dropna()
    counts = decided.astype(int).value_counts()
    return pd.DataFrame(
        {
            "case": [int(c) for c in Case],
            "short": [c.short for c in Case],
            "count": [int(counts.get(int(c), 0)) for c in Case],
        }
    )


def _summary(values: pd.Series) -> dict[str, float]:
    out: dict[str, float] = {"count": float(values.count())}
    for name, q in _QUANTILES.items():
        out[name] = float(values.quantile(q)) if len(values) else float("nan")
    out["max"] = float(values.max()) if len(values) else float("nan")
    return out


def lateness_summary(frame: pd.DataFrame, by: str | None = "label") -> pd.DataFrame:
    """Lateness statistics (count, median, p90, p99, max; seconds), per ``by`` group.

    Three measures, as a column level ``measure``:

    * ``scheduling`` = due -> dispatch (how late the worker noticed),
    * ``queueing`` = dispatch -> start (waiting for an executor),
    * ``total`` = due -> start (what the task experienced).
    """
    import pandas as pd

    dispatch = frame.loc[frame["kind"] == Kind.DISPATCH]
    start = frame.loc[frame["kind"] == Kind.START]
    measures = {
        "scheduling": (dispatch, "lateness"),
        "queueing": (start, "queue_delay"),
        "total": (start, "lateness"),
    }
    rows = []
    for measure, (part, column) in measures.items():
        if by is None:
            rows.append({"measure": measure, by or "group": "all", **_summary(part[column])})
            continue
        for key, group in part.groupby(by, observed=True, dropna=False, sort=True):
            rows.append({"measure": measure, by: key, **_summary(group[column])})
    index = ["measure", by or "group"]
    columns = [*index, "count", "median", "p90", "p99", "max"]
    result = pd.DataFrame(rows, columns=columns)
    result["count"] = result["count"].astype("int64")
    return result.set_index(index)


def task_history(frame: pd.DataFrame, task_id: int) -> pd.DataFrame:
    """Every row about one task, in order (its decision, runs, cancel, drop)."""
    mask = (frame["task_id"] == task_id).fillna(False)
    return frame.loc[mask].sort_values("seq")


def periodic_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per periodic task: label, period, runs, errors, missed runs, first and last run."""
    import pandas as pd

    sched = frame.loc[(frame["kind"] == Kind.SCHEDULE) & frame["period"].notna()]
    ids = sched["task_id"].dropna().astype("int64").unique()
    rows = []
    for tid in ids:
        rows_t = frame.loc[(frame["task_id"] == tid).fillna(False)]
        starts = rows_t.loc[rows_t["kind"].isin([Kind.START, Kind.EVENT_SET]), "t"]
        first = sched.loc[sched["task_id"] == tid].iloc[0]
        rows.append(
            {
                "task_id": int(tid),
                "label": first["label"],
                "period": float(first["period"]),
                "runs": len(starts),
                "errors": int((rows_t["kind"] == Kind.ERROR).sum()),
                "missed": int(rows_t.loc[rows_t["kind"] == Kind.MISSED, "missed"].sum()),
                "first_run": float(starts.min()) if len(starts) else float("nan"),
                "last_run": float(starts.max()) if len(starts) else float("nan"),
            }
        )
    columns = ["task_id", "label", "period", "runs", "errors", "missed", "first_run", "last_run"]
    return pd.DataFrame(rows, columns=columns)
