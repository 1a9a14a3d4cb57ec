"""Queue depth over time: all pending tasks, and the tasks waiting at the head time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from ..time.scale import TimeScale
from ._axes import FONT, axes_or_new, set_title, show_message, time_axis
from ._data import LogArrays
from ._legend import Section, add_legend
from .colors import MEASURE_COLORS, MEASURE_STYLES, NEUTRAL

__all__ = ["plot_queue_depth", "queue_depth"]


def queue_depth(frame: Any) -> pd.DataFrame:
    """Queue size and head-list size after every row that records the queue size.

    Columns: ``seq``, ``t``, ``kind``, ``queue_size`` (pending tasks),
    ``ready_size`` (tasks at the head time). Rows that do not touch the queue
    (start, finish...) are left out.

    >>> from tempsched_lab.plots import example_frame
    >>> depth = queue_depth(example_frame())
    >>> int(depth["queue_size"].max()), int(depth["ready_size"].max())
    (11, 2)
    """
    a = frame if isinstance(frame, LogArrays) else LogArrays.of(frame)
    rows = np.flatnonzero(np.isfinite(a["queue_size"]))
    seq = a["seq"]
    return pd.DataFrame(
        {
            "seq": seq[rows].astype("int64"),
            "t": a["t"][rows],
            "kind": a["kind"][rows],
            "queue_size": a["queue_size"][rows],
            "ready_size": a["ready_size"][rows],
        }
    )


def plot_queue_depth(
    frame: Any,
    *,
    ax: Axes | None = None,
    now: float | None = None,
    time_scale: TimeScale | None = None,
) -> Axes:
    """Step plot of the queue size and the head list size over time.

    The *queue size* counts every pending task; the *head list* holds the
    tasks due at the earliest time point, the ones the worker will fire next.
    Several steps at one instant (a burst of decisions, a group firing) show
    as vertical jumps. See :func:`queue_depth` for how the head size is
    obtained between the rows that record it.

    Args:
        frame: an event-log frame, an ``EventLog`` or a ``Scheduler``.
        ax: draw into this Axes; by default a new Figure is made.
        now: the current clock time: the last values are drawn up to it.
        time_scale: how times are shown (default: the log's own).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_queue_depth(example_frame())
    >>> [line.get_label() for line in ax.get_lines()]
    ['queue size (pending tasks)', 'head list size (tasks at the head time)']
    """
    a = frame if isinstance(frame, LogArrays) else LogArrays.of(frame)
    depth = queue_depth(a)
    ax = axes_or_new(ax, (9.0, 3.6))
    title = "Queue depth over time"
    if not len(depth) or not (depth["queue_size"] > 0).any():  # never held a task
        ax.set_title(title, fontsize=FONT["title"])
        show_message(ax, "no tasks yet")
        return ax
    scale = time_scale or a.scale
    t = scale.rel(depth["t"].to_numpy())
    x_now = None if now is None else float(scale.rel(float(now)))
    queue_size = depth["queue_size"].to_numpy()
    ready = depth["ready_size"].to_numpy()
    if x_now is not None and x_now > t[-1]:
        t = np.r_[t, x_now]
        queue_size = np.r_[queue_size, queue_size[-1]]
        ready = np.r_[ready, ready[-1]]
    (queue_line,) = ax.step(
        t,
        queue_size,
        where="post",
        color=MEASURE_COLORS["queue size"],
        linestyle=MEASURE_STYLES["queue size"],
        linewidth=1.8,
        label="queue size (pending tasks)",
    )
    (head_line,) = ax.step(
        t,
        ready,
        where="post",
        color=MEASURE_COLORS["head size"],
        linestyle=MEASURE_STYLES["head size"],
        linewidth=1.6,
        label="head list size (tasks at the head time)",
    )
    if x_now is not None:
        ax.axvline(x_now, color=NEUTRAL["ink"], linestyle=":", linewidth=1.0, gid="now")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(bottom=0, top=max(1.0, float(np.nanmax(queue_size))) * 1.08)
    time_axis(ax, scale)
    ax.set_ylabel("tasks", fontsize=FONT["label"])
    ax.grid(color=NEUTRAL["faint"], linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    set_title(ax, title)
    add_legend(ax, [Section("", [queue_line, head_line])])
    return ax
