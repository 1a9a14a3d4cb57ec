"""A run's measures, computed from its own event log (so that each can be checked against it).

Every measure is a plain function of the log frame's rows (see
``docs/event-log.md``); :data:`METRICS` says which rows, in words, and the
tests recompute each one from the log independently:

* lateness is the ``start`` rows' ``lateness`` (due -> start: what a task
  experienced), its quantiles interpolated linearly between order statistics
  (``numpy.quantile``'s and pandas' default);
* queue depth is the ``queue_size`` column (pending tasks after each step that
  changes or reads the queue);
* cases are counted over ``schedule`` and ``reject`` rows, as
  :func:`~tempsched_lab.case_counts` does (periodic re-arms are decisions too).

A run made with ``record="metrics"`` has no log: :func:`recorded_metrics` gives
the same measures, exactly, from its :class:`~tempsched_lab.core.recorder.MetricsRecorder`'s
running totals.

>>> from tempsched_lab.lab import simulate, bursts
>>> m = run_metrics(simulate(bursts(size=3, every=1.0, horizon=2.0, seed=0, duration=0.1)).frame)
>>> m["runs"], round(m["lateness_max"], 3), m["max_queue_depth"], m["case_6"]
(6, 0.2, 3, 4)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..log.kinds import Kind

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ..core.recorder import MetricsRecorder

__all__ = [
    "CASE_COLUMNS",
    "METRICS",
    "TIME_METRICS",
    "lateness_of",
    "recorded_metrics",
    "run_metrics",
    "thinned",
]

#: The case columns: decisions of each case 1-8.
CASE_COLUMNS: tuple[str, ...] = tuple(f"case_{c}" for c in range(1, 9))

#: Measure -> what it is, from which rows of the run's log.
METRICS: dict[str, str] = {
    "runs": "runs started: start rows",
    "failed": "runs that raised: error rows",
    "cancelled": "one-shot tasks stopped before they ran: cancel rows whose result is "
    "'cancelled' (the stop of recurring tasks at the horizon is not counted)",
    "misfires": "periodic runs skipped by the misfire policy: the missed rows' missed, summed",
    "lateness_p50": "median lateness, due -> start (virtual s): start rows' lateness",
    "lateness_p99": "99th percentile of the lateness (virtual s)",
    "lateness_max": "largest lateness (virtual s)",
    "lateness_mean": "mean lateness (virtual s)",
    "queue_delay_p99": "99th percentile of dispatch -> start (virtual s): start rows' queue_delay",
    "max_queue_depth": "most tasks pending at once: the largest queue_size",
    "mean_queue_depth": "tasks pending, averaged over time from the clock's start to the last "
    "row (each queue_size holds until the next)",
    **{f"case_{c}": f"decisions of case {c}: schedule and reject rows" for c in range(1, 9)},
    "queue_steps": "lines run in the queue's code (count_steps=True; missing otherwise)",
    "events": "rows in the run's event log",
    "virtual_time": "virtual seconds from the clock's start to the log's last row",
}
#: Measures that are durations in seconds (figures write them in ms or µs).
TIME_METRICS: frozenset[str] = frozenset(
    {
        "lateness_p50",
        "lateness_p99",
        "lateness_max",
        "lateness_mean",
        "queue_delay_p99",
        "virtual_time",
        "wall",
    }
)


def _kinds(frame: pd.DataFrame) -> Any:
    """``kinds(name)`` -> the boolean mask of the rows of that kind (codes read once)."""
    import numpy as np

    column = frame["kind"]
    if hasattr(column, "cat"):
        codes = np.asarray(column.cat.codes.to_numpy())
        index = {name: i for i, name in enumerate(column.cat.categories)}

        def mask(kind: str) -> np.ndarray:
            code = index.get(kind)
            return codes == code if code is not None else np.zeros(len(codes), dtype=bool)

        return mask
    values = np.asarray(column.to_numpy())
    return lambda kind: values == kind


def _floats(frame: pd.DataFrame, column: str) -> np.ndarray:
    import numpy as np

    values: np.ndarray = np.asarray(frame[column].to_numpy(dtype="float64", na_value=np.nan))
    return values


def lateness_of(frame: pd.DataFrame) -> np.ndarray:
    """The lateness of every run (due -> start, seconds), in start order."""
    values: np.ndarray = _floats(frame, "lateness")[_kinds(frame)(Kind.START)]
    return values


def _time_weighted_depth(frame: pd.DataFrame) -> tuple[float, float]:
    """(largest, time-weighted mean) of ``queue_size`` from the clock's origin to the last row."""
    import numpy as np

    size = _floats(frame, "queue_size")
    t = _floats(frame, "t")
    known = ~np.isnan(size)
    if not known.any():
        return 0.0, 0.0
    origin = float(frame.attrs.get("time_origin", t[0] if len(t) else 0.0))
    end = float(t[-1])
    ts, qs = t[known], size[known]
    spans = np.diff(np.append(ts, end))
    span = end - origin
    # math.fsum, not np.dot: a threaded BLAS adds in an order that depends on its thread
    # count (one in a Dask worker, several here), so the last bits of a run's measures differed
    # between engines; fsum is exactly rounded, whatever the order
    mean = math.fsum((qs * spans).tolist()) / span if span > 0 else float(qs[-1])
    return float(qs.max()), mean


def run_metrics(frame: pd.DataFrame, steps: int | None = None) -> dict[str, Any]:
    """The measures of :data:`METRICS` for one run's log frame (in that order).

    Counts are ints; durations are floats in seconds (NaN when nothing ran);
    ``queue_steps`` is ``steps`` (``None`` when not counted).
    """
    import numpy as np

    if "seq" in frame.columns and not frame["seq"].is_monotonic_increasing:
        frame = frame.sort_values("seq", kind="stable")
    kind = _kinds(frame)
    start = kind(Kind.START)
    lateness = _floats(frame, "lateness")[start]
    queue_delay = _floats(frame, "queue_delay")[start]
    decided = kind(Kind.SCHEDULE) | kind(Kind.REJECT)
    cases = _floats(frame, "case")[decided]
    counts = np.bincount(cases[~np.isnan(cases)].astype("int64"), minlength=9)
    missed = _floats(frame, "missed")[kind(Kind.MISSED)]
    schedule = kind(Kind.SCHEDULE)
    recurring_rows = schedule & (
        ~np.isnan(_floats(frame, "period")) | frame["trigger"].notna().to_numpy()
    )
    recurring = np.unique(_floats(frame, "task_id")[recurring_rows])
    cancel = kind(Kind.CANCEL) & (frame["result"] == "cancelled").to_numpy()
    cancelled_ids = _floats(frame, "task_id")[cancel]
    largest, mean = _time_weighted_depth(frame)
    t = _floats(frame, "t")
    origin = float(frame.attrs.get("time_origin", 0.0))
    return _measures(
        lateness,
        queue_delay,
        runs=int(start.sum()),
        failed=int(kind(Kind.ERROR).sum()),
        cancelled=int((~np.isin(cancelled_ids, recurring)).sum()),
        misfires=int(np.nansum(missed)),
        depth=(int(largest), mean),
        cases=[int(counts[c]) for c in range(9)],
        steps=steps,
        events=len(frame),
        virtual_time=float(t[-1] - origin) if len(t) else 0.0,
    )


def recorded_metrics(recorder: MetricsRecorder, steps: int | None = None) -> dict[str, Any]:
    """The measures of :data:`METRICS` from a run's running totals (no log, no rows).

    Equal, measure for measure, to :func:`run_metrics` of the same run's full log (the
    same values through the same arithmetic; ``tests/test_metrics_recorder.py``).
    """
    import numpy as np

    largest, mean = recorder.depth()
    last = recorder.last_t
    return _measures(
        np.frombuffer(recorder.lateness, dtype="float64"),
        np.frombuffer(recorder.queue_delay, dtype="float64"),
        runs=len(recorder.lateness),
        failed=recorder.failures,
        cancelled=recorder.cancelled_count(),
        misfires=recorder.misfires,
        depth=(largest, mean),
        cases=recorder.cases,
        steps=steps,
        events=recorder.events,
        virtual_time=float(last - recorder.time_origin) if recorder.events else 0.0,
    )


def _measures(
    lateness: np.ndarray,
    queue_delay: np.ndarray,
    *,
    runs: int,
    failed: int,
    cancelled: int,
    misfires: int,
    depth: tuple[int, float],
    cases: list[int],
    steps: int | None,
    events: int,
    virtual_time: float,
) -> dict[str, Any]:
    """The measures in :data:`METRICS`' order: the lateness ones from the values themselves."""
    import numpy as np

    has_runs = len(lateness) > 0
    nan = float("nan")
    return {
        "runs": runs,
        "failed": failed,
        "cancelled": cancelled,
        "misfires": misfires,
        "lateness_p50": float(np.quantile(lateness, 0.5)) if has_runs else nan,
        "lateness_p99": float(np.quantile(lateness, 0.99)) if has_runs else nan,
        "lateness_max": float(lateness.max()) if has_runs else nan,
        "lateness_mean": math.fsum(lateness.tolist()) / len(lateness) if has_runs else math.nan,
        "queue_delay_p99": float(np.quantile(queue_delay, 0.99)) if has_runs else nan,
        "max_queue_depth": depth[0],
        "mean_queue_depth": depth[1],
        **{f"case_{c}": cases[c] for c in range(1, 9)},
        "queue_steps": steps,
        "events": events,
        "virtual_time": virtual_time,
    }


def thinned(values: np.ndarray, max_points: int = 10_001) -> np.ndarray:
    """``values`` sorted, cut to at most ``max_points`` evenly spaced order statistics.

    The smallest and the largest value are always kept, so a curve drawn from
    the result (an ECDF) has the right ends; with fewer values, all are kept.

    >>> import numpy as np
    >>> thinned(np.arange(100.0), max_points=5).tolist()
    [0.0, 25.0, 50.0, 74.0, 99.0]
    """
    import numpy as np

    ordered: np.ndarray = np.sort(np.asarray(values, dtype="float64"))
    if len(ordered) <= max_points:
        return ordered
    picks = np.round(np.linspace(0, len(ordered) - 1, max_points)).astype("int64")
    kept: np.ndarray = ordered[picks]
    return kept
