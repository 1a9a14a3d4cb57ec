"""Which lanes the timeline draws, in which row, and the band that stands for the rest.

A lane is a task (``lanes="task"``) or an executor thread (``lanes="thread"``).
With more lanes than fit (the caller's ``max_lanes``, or fewer when the Axes is
too short for that many readable labels) the first and last lanes are drawn and
the ones in between are folded into one *band* of :data:`BAND_ROWS` rows that
shows their activity over time with a scale.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..style import FONT

__all__ = ["BAND_ROWS", "LANE_MIN_PT", "Band", "LaneLayout", "lanes_that_fit", "layout_lanes"]

#: Rows the aggregated band takes (its label has three lines).
BAND_ROWS = 3
#: Least height of one lane in multiples of the lane labels' size, so that labels never touch:
#: 12 pt lanes for 8 pt labels (an earlier type scale), 13.5 pt for the default 9 pt.
LANE_MIN_PT = 1.5
#: Points an Axes' grid cell loses to its title, a one-line note, ticks and the x label.
_DECORATION_PT = 75.0


@dataclass(frozen=True)
class Band:
    """The rows standing for the lanes not drawn one by one."""

    top: float  # y of its first row (rows grow downwards)
    rows: int
    hidden: int  # how many lanes it stands for
    keys: np.ndarray  # their keys

    @property
    def centre(self) -> float:
        return self.top + (self.rows - 1) / 2


@dataclass(frozen=True)
class LaneLayout:
    """Rows of the timeline: an optional "rejected requests" row, lanes, and maybe a band."""

    keys: np.ndarray  # every lane key, in lane order
    y: np.ndarray  # row of each key (NaN: folded into the band)
    labels: dict[float, str]  # y tick position -> label
    n_rows: int
    band: Band | None
    reject_row: bool

    def y_of(self, keys: Sequence[object] | np.ndarray) -> np.ndarray:
        """Row of each key (NaN for keys in the band or not laid out)."""
        keys = np.asarray(keys)
        if not len(self.keys) or not len(keys):
            return np.full(len(keys), np.nan)
        index = pd.Index(self.keys).get_indexer(keys)
        out = np.full(len(keys), np.nan)
        found = index >= 0
        out[found] = self.y[index[found]]
        return out


def lanes_that_fit(height_pt: float, rows_besides_lanes: int = 0) -> int:
    """How many lanes an Axes of ``height_pt`` points can label legibly.

    >>> lanes_that_fit(200.0)  # a 3.6 in figure's Axes before layout (9 pt labels)
    9
    """
    usable = max(0.0, height_pt - _DECORATION_PT)
    return max(2, int(usable // (LANE_MIN_PT * FONT["small"])) - rows_besides_lanes)


def layout_lanes(
    keys: np.ndarray,
    label_of: Callable[[int], str],
    *,
    budget: int,
    reject_row: bool,
    band_label: str,
) -> LaneLayout:
    """Place ``keys`` in at most ``budget`` rows, folding the middle ones into a band.

    ``label_of(i)`` is the label of lane ``i``; it is called for drawn lanes only.

    ``band_label`` is formatted with ``hidden`` (the number of folded lanes).

    >>> layout = layout_lanes(np.arange(10.0), lambda i: f"task {i}", budget=7,
    ...                       reject_row=False, band_label="+{hidden} more")
    >>> [layout.labels[y] for y in sorted(layout.labels)]
    ['task 0', 'task 1', '+6 more', 'task 8', 'task 9']
    >>> layout.n_rows, layout.band.hidden
    (7, 6)
    """
    n = len(keys)
    first = 1 if reject_row else 0
    row_labels: dict[float, str] = {}
    if reject_row:
        row_labels[0.0] = "rejected requests"
    y = np.full(n, np.nan)
    band = None
    if n <= budget:
        y[:] = first + np.arange(n)
        n_rows = first + n
    else:
        shown = max(2, budget - BAND_ROWS)
        head = shown // 2
        tail = shown - head
        y[:head] = first + np.arange(head)
        band_top = first + head
        y[n - tail :] = band_top + BAND_ROWS + np.arange(tail)
        hidden_keys = keys[head : n - tail]
        band = Band(float(band_top), BAND_ROWS, len(hidden_keys), hidden_keys)
        row_labels[band.centre] = band_label.format(hidden=f"{len(hidden_keys):,}")
        n_rows = first + head + BAND_ROWS + tail
    for i in np.flatnonzero(np.isfinite(y)):
        row_labels[float(y[i])] = label_of(int(i))
    return LaneLayout(keys, y, row_labels, n_rows, band, reject_row)
