"""Tables for a paper: a measure summarised per group, and paired comparisons against a baseline.

Every configuration of one repeat plays the same workload (common random
numbers, see :mod:`~.experiment`), so two designs are best compared *paired*:
the difference of a measure between them on the same workload, repeat by
repeat, removes the workload's own variation from the comparison.

Confidence intervals are percentile bootstraps drawn from a seeded
``numpy.random.Generator`` (the same table every time). With few repeats they
are rough: two repeats give an interval between the two values at best; use
more repeats for claims.

>>> import pandas as pd
>>> results = pd.DataFrame({"queue": ["heap", "wheel"] * 3, "repeat": [0, 0, 1, 1, 2, 2],
...                         "p99": [1.0, 3.0, 2.0, 5.0, 1.5, 5.5]})
>>> summarize(results, "p99", by="queue")[["queue", "n", "mean", "median"]]
   queue  n  mean  median
0   heap  3   1.5     1.5
1  wheel  3   4.5     5.0
>>> compare(results, "p99", between="queue", baseline="heap")[["queue", "pairs", "mean_diff"]]
   queue  pairs  mean_diff
0  wheel      3        3.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["bootstrap_interval", "compare", "summarize"]


def bootstrap_interval(
    values: Any, *, confidence: float = 0.95, resamples: int = 2_000, seed: int = 0
) -> tuple[float, float]:
    """A percentile bootstrap interval of the mean of ``values`` (NaN for no values).

    >>> bootstrap_interval([2.0, 2.0, 2.0])
    (2.0, 2.0)
    """
    import numpy as np

    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence!r}: expected a number between 0 and 1")
    data = np.asarray(values, dtype="float64")
    data = data[np.isfinite(data)]
    if not len(data):
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    means = np.sort(data[picks].mean(axis=1))
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def _keys(results: pd.DataFrame, by: str | Sequence[str]) -> list[str]:
    keys = [by] if isinstance(by, str) else list(by)
    missing = [k for k in keys if k not in results.columns]
    if missing:
        raise KeyError(f"by={by!r}: no column {missing} in the results")
    return keys


def summarize(
    results: Any,
    metric: str,
    by: str | Sequence[str],
    *,
    confidence: float = 0.95,
    resamples: int = 2_000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per group: ``n``, ``mean``, a bootstrap interval of the mean, ``median``, extremes.

    ``results``: an experiment or its results frame. Columns: the ``by`` keys,
    ``n``, ``mean``, ``ci_low``, ``ci_high``, ``median``, ``min``, ``max``.
    """
    import pandas as pd

    frame = results.results if hasattr(results, "results") else results
    if metric not in frame.columns:
        raise KeyError(f"metric={metric!r}: not a column of the results")
    keys = _keys(frame, by)
    rows = []
    for values, group in frame.groupby(keys, sort=False, dropna=False):
        data = group[metric].to_numpy(dtype="float64", na_value=float("nan"))
        low, high = bootstrap_interval(data, confidence=confidence, resamples=resamples, seed=seed)
        label = values if isinstance(values, tuple) else (values,)
        rows.append(
            {
                **dict(zip(keys, label, strict=True)),
                "n": len(data),
                "mean": float(pd.Series(data).mean()),
                "ci_low": low,
                "ci_high": high,
                "median": float(pd.Series(data).median()),
                "min": float(pd.Series(data).min()),
                "max": float(pd.Series(data).max()),
            }
        )
    table = pd.DataFrame(rows)
    table.attrs["metric"] = metric  # with_units() shows a time measure's statistics with units
    return table


def compare(
    results: Any,
    metric: str,
    *,
    between: str,
    baseline: Any,
    confidence: float = 0.95,
    resamples: int = 2_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired differences of ``metric`` against the ``baseline`` value of ``between``.

    Each run is paired with the baseline's run that has the same other grid
    keys and the same ``repeat`` (so the same workload); the table has one row
    per other value of ``between`` and combination of the other keys: ``pairs``,
    ``mean_diff`` (value minus baseline: below 0 is lower than the baseline), a
    bootstrap interval of it, and ``lower_share``, the share of pairs where the
    value was strictly lower.
    """
    import numpy as np
    import pandas as pd

    frame = results.results if hasattr(results, "results") else results
    if metric not in frame.columns or between not in frame.columns:
        raise KeyError(f"metric={metric!r} or between={between!r}: not a column of the results")
    if not (frame[between] == baseline).any():
        raise ValueError(f"baseline={baseline!r}: no run has {between}={baseline!r}")
    grid = frame.attrs.get("keys") or list(frame.columns[: list(frame.columns).index("repeat")])
    others = [k for k in grid if k != between]
    on = [*others, "repeat"]
    base = frame[frame[between] == baseline][[*on, metric]]
    rest = frame[frame[between] != baseline][[between, *on, metric]]
    paired = rest.merge(base, on=on, suffixes=("", "_baseline"), how="inner")
    paired["diff"] = paired[metric] - paired[f"{metric}_baseline"]
    rows = []
    for values, group in paired.groupby([between, *others], sort=False, dropna=False):
        diff = group["diff"].to_numpy(dtype="float64")
        low, high = bootstrap_interval(diff, confidence=confidence, resamples=resamples, seed=seed)
        label = values if isinstance(values, tuple) else (values,)
        rows.append(
            {
                **dict(zip([between, *others], label, strict=True)),
                "pairs": len(diff),
                "mean_diff": float(np.mean(diff)),
                "ci_low": low,
                "ci_high": high,
                "lower_share": float(np.mean(diff < 0)),
            }
        )
    columns = [between, *others, "pairs", "mean_diff", "ci_low", "ci_high", "lower_share"]
    table = pd.DataFrame(rows, columns=columns)
    table.attrs["metric"] = metric  # with_units() shows a time measure's differences with units
    return table
