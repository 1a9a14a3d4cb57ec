"""Times in a CSV log as seconds since the start, put back on the clock's scale exactly.

A real clock's times read like ``time.time()`` (``1796139723.1265159``): right for
arithmetic, unreadable in a spreadsheet. So a CSV log file stores

* the clock's times (:data:`CLOCK_TIMES`: ``t``, ``due``, ``fire_at``, ...) as seconds
  since the frame's time origin (``attrs["time_origin"]``, the moment the clock
  was created), and
* ``wall`` as seconds since a wall-clock origin: the time origin too for a real
  clock (so ``t`` and ``wall`` read alike), the first row's wall time for a
  virtual one (whose times have nothing to do with the wall clock's),

and keeps both origins in its metadata. Durations (``period``, ``lateness``, ...)
are written as they are. A column is stored relative only if every value comes
back bit for bit (``(v - o) + o == v``; for epoch-sized values it always does,
the subtraction being exact), otherwise as it is; ``relative_to`` names the
columns stored relative, with their origins. The derived ``time`` and
``wall_time`` columns are written as ISO 8601 UTC text, for people and other
tools (``2026-12-01T15:42:03.126515865Z``).

>>> import pandas as pd
>>> frame = pd.DataFrame({"t": [1_800_000_000.25], "due": [1_800_000_001.0]})
>>> stored, relative = to_relative(frame, {"t": 1_800_000_000.0, "due": 1_800_000_000.0})
>>> stored["t"].tolist(), stored["due"].tolist(), relative
([0.25], [1.0], ['t', 'due'])
>>> from_relative(stored, {"t": 1_800_000_000.0, "due": 1_800_000_000.0})["t"].tolist()
[1800000000.25]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...time.scale import EPOCH_LIKE

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "CLOCK_TIMES",
    "DERIVED_TEXT",
    "DURATIONS",
    "SAME_CLOCK",
    "WALL",
    "derived_text",
    "from_relative",
    "origins_of",
    "to_relative",
]

#: Columns holding times on the scheduler's clock (stored as seconds since the time origin).
CLOCK_TIMES: tuple[str, ...] = ("t", "due", "fire_at", "head_before", "head_after", "worker_start")
#: The wall-clock column (stored as seconds since the wall origin).
WALL = "wall"
#: Float columns that are durations, not times: written as they are.
DURATIONS: tuple[str, ...] = ("period", "lateness", "queue_delay", "duration", "wait")
#: Seconds by which ``wall`` and ``t`` may differ in a row for the two to count as one clock.
SAME_CLOCK = 1.0
#: The derived datetime columns and the column each comes from.
DERIVED_TEXT: dict[str, str] = {"time": "t", "wall_time": "wall"}


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def origins_of(frame: pd.DataFrame, time_origin: Any) -> tuple[float | None, float | None]:
    """The origins to write ``frame``'s times against: (clock times, wall times).

    ``time_origin`` is the frame's own (``None`` when it has none: then the first
    time for epoch-sized values, 0 otherwise, as :func:`~tempsched_lab.time_scale_of`
    guesses). The wall origin is the time origin too when the two clocks agree (a
    real clock: ``wall`` and ``t`` of the first row within :data:`SAME_CLOCK` seconds),
    else the first row's wall time; ``None`` for an empty frame.
    """
    import numpy as np

    origin = _finite(time_origin)
    t = frame["t"].to_numpy(dtype="float64", na_value=np.nan)
    if origin is None and time_origin is None:
        finite = t[np.isfinite(t)]
        first = float(finite.min()) if len(finite) else 0.0
        origin = first if abs(first) >= EPOCH_LIKE else 0.0
    wall = frame[WALL].to_numpy(dtype="float64", na_value=np.nan)
    both = np.flatnonzero(np.isfinite(wall) & np.isfinite(t))
    if not len(both):
        finite_wall = wall[np.isfinite(wall)]
        return origin, float(finite_wall[0]) if len(finite_wall) else None
    first_wall, first_t = float(wall[both[0]]), float(t[both[0]])
    if origin is not None and abs(first_wall - first_t) <= SAME_CLOCK:
        return origin, origin
    return origin, first_wall


def _exact(values: np.ndarray, restored: np.ndarray) -> bool:
    """Whether ``restored`` is ``values`` bit for bit (any NaN matching any NaN)."""
    import numpy as np

    nan = np.isnan(values)
    same = (restored == values) & (np.signbit(restored) == np.signbit(values))
    return bool(np.all(np.where(nan, np.isnan(restored), same)))


def to_relative(
    frame: pd.DataFrame, origins: Mapping[str, float | None]
) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with each column of ``origins`` less its origin, where that is exact.

    Returns the new frame (``frame`` is not changed) and the columns stored relative.
    """
    import numpy as np

    out = frame.copy(deep=False)
    relative: list[str] = []
    for name, origin in origins.items():
        if origin is None or origin == 0.0:
            continue
        values = frame[name].to_numpy(dtype="float64", na_value=np.nan)
        shifted = values - origin
        if _exact(values, shifted + origin):
            out[name] = shifted
            relative.append(name)
    return out, relative


def from_relative(frame: pd.DataFrame, relative_to: Mapping[str, float]) -> pd.DataFrame:
    """Add each column's origin back (``relative_to``: column -> origin), in place."""
    import numpy as np

    for name, origin in relative_to.items():
        frame[name] = frame[name].to_numpy(dtype="float64", na_value=np.nan) + origin
    return frame


def derived_text(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The ``time`` and ``wall_time`` columns of a frame with derived columns, as ISO text.

    Missing (or out-of-range) times are empty strings, as CSV writes missing values.
    """
    import numpy as np

    out: dict[str, np.ndarray] = {}
    for name in DERIVED_TEXT:
        stamps = frame[name].to_numpy(dtype="datetime64[ns]")
        text = np.datetime_as_string(stamps, unit="ns", timezone="UTC").astype(object)
        text[np.isnat(stamps)] = ""
        out[name] = text
    return out
