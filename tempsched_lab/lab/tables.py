"""Result and workload tables shown in the project's time language (``632 µs``, ``0.0115 s``).

The frames themselves keep plain floats in seconds (that is what users compute
with, and what files store); :func:`with_units` returns a copy for showing
them, so a lateness of 0.000632 reads ``632 µs`` instead of ``0.000632`` (or
``0.000000`` once pandas rounds it), the same units the figures and the
dashboard use.

>>> import pandas as pd
>>> frame = pd.DataFrame({"queue": ["heap"], "lateness_p99": [0.000632], "wall": [1.5]})
>>> with_units(frame)
  queue lateness_p99     wall
0  heap       632 µs  1.500 s
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..time.scale import fmt_duration
from .metrics import TIME_METRICS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DURATION_COLUMNS", "MISSING", "TIME_COLUMNS", "with_units"]

#: Columns that are moments, seconds since the clock's start: a workload's, and an event
#: log's (a run's log from ``experiment.log(row)``).
TIME_COLUMNS: frozenset[str] = frozenset({"submit", "due", "cancel_at", "t", "fire_at"})
#: Columns that are durations: a workload's, and an event log's.
DURATION_COLUMNS: frozenset[str] = frozenset(
    {"duration", "period", "lateness", "queue_delay", "wait"}
)
#: What a missing value reads as in a shown table: one marker, whatever the column's type
#: (pandas would print a blank, ``NaN`` or ``<NA>`` depending on it).
MISSING = ""
#: The columns of :func:`~.stats.summarize` and :func:`~.stats.compare` that are in the
#: unit of the measure they summarise (``frame.attrs["metric"]``).
_IN_METRIC_UNIT = ("mean", "ci_low", "ci_high", "median", "min", "max", "mean_diff")


def _moment(t: Any) -> str:
    """Seconds since the clock's start, ``0.0115 s``; blank when missing."""
    return f"{float(t):.4f} s" if fmt_duration(t) else ""


def with_units(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` for showing, its time columns as text with units.

    Durations (the lateness measures, ``wall``, a workload's ``duration``, and the
    statistics of :func:`~.stats.summarize` / :func:`~.stats.compare` of a time
    measure) read as ``632 µs`` / ``4.20 ms`` / ``1.250 s``; a workload's moments
    (``submit``, ``due``, ``cancel_at``) as seconds since the clock's start with
    four decimals; so do an event log's (``t``, ``fire_at``, ``lateness``, ...). Missing
    values read as one marker, a blank, in every column (pandas would print a blank,
    ``NaN`` or ``<NA>`` depending on the column's type). The frame is not changed; compute
    with it, show the copy (a plain frame: no Jinja2 needed, prints as text too).

    >>> import pandas as pd
    >>> shown = with_units(pd.DataFrame({"t": [0.017814], "dup_of": pd.array([None], "Int64"),
    ...                                  "period": [float("nan")], "label": [None]}))
    >>> shown.iloc[0].tolist()
    ['0.0178 s', '', '', '']
    """
    formats: dict[str, Any] = {}
    for column in frame.columns:
        if column in TIME_METRICS or column in DURATION_COLUMNS:
            formats[column] = fmt_duration
        elif column in TIME_COLUMNS:
            formats[column] = _moment
    if frame.attrs.get("metric") in TIME_METRICS:
        formats.update({c: fmt_duration for c in _IN_METRIC_UNIT if c in frame.columns})
    shown = frame.copy()
    for column, text in formats.items():
        shown[column] = [text(v) for v in frame[column]]
    for column in frame.columns:
        if column not in formats and frame[column].isna().any():
            values = frame[column].astype(object)
            shown[column] = values.where(frame[column].notna(), MISSING)
    return shown
