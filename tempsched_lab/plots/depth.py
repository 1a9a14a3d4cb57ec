"""Queue depth over time: all pending tasks, and the tasks waiting at the head time."""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from ._axes import axes_or_new, set_title, show_message
from ._data import LogArrays, time_axis_label, time_origin
from .colors import MEASURE_COLORS, NEUTRAL

__all__ = ["plot_queue_depth", "queue_depth"]

_ADDS = frozenset((2.0, 3.0, 4.0, 6.0, 8.0))


def _batches(kind: list[Any], t: list[float]) -> dict[int, list[int]]:
    """Row of the first dispatch of each batch -> rows of every dispatch in that batch.

    The scheduler pops every due group at once and then writes one dispatch
    row per task (an Event's ``event_set`` and re-arm rows may come in
    between), all under its lock and at one clock time: the queue already
    lacks the whole batch at the batch's first row.
    """
    batches: dict[int, list[int]] = {}
    first = -1
    for i, k in enumerate(kind):
        if k == "dispatch":
            if first < 0 or t[i] != t[first]:
                first = i
                batches[first] = []
            batches[first].append(i)
        elif first >= 0 and not (k in _IN_BATCH and t[i] == t[first]):
            first = -1
    return batches


_IN_BATCH = frozenset(("event_set", "schedule", "missed"))


def _rebuild(a: LogArrays) -> tuple[np.ndarray, np.ndarray]:
    """Queue size and head-list size after every row, by counting the log's queue changes.

    The log records ``ready_size`` only on decision and cancel rows; after a
    dispatch the head changes but its new size is not written, so it is
    rebuilt here from the rows that add and remove tasks, with the same rules
    as :class:`tempsched_lab.Replayer` (without building a queue).
    """
    kind = a["kind"].tolist()
    t = a["t"].tolist()
    task = a["task_id"].tolist()
    due = a["due"].tolist()
    case = a["case"].tolist()
    dup = np.isfinite(a["dup_of"]).tolist()
    result = a["result"].tolist()
    batches = _batches(kind, t)
    pending: dict[float, float] = {}  # task id -> due
    per_due: dict[float, int] = {}
    dues: list[float] = []
    sizes = np.zeros(a.n)
    heads = np.zeros(a.n)

    def remove(task_id: float) -> None:
        d = pending.pop(task_id, None)
        if d is not None:
            per_due[d] -= 1

    for i in range(a.n):
        k = kind[i]
        if k == "schedule":
            if case[i] in _ADDS and not dup[i] and task[i] not in pending:
                d = due[i]
                pending[task[i]] = d
                n = per_due.get(d, 0)
                if n == 0:
                    heapq.heappush(dues, d)
                per_due[d] = n + 1
        elif k == "dispatch":
            for j in batches.get(i, ()):
                remove(task[j])
        elif (k == "cancel" and result[i] == "cancelled") or (
            k == "shutdown" and result[i] == "dropped"
        ):
            remove(task[i])
        while dues and per_due.get(dues[0], 0) <= 0:
            per_due.pop(heapq.heappop(dues), None)
        sizes[i] = len(pending)
        heads[i] = per_due[dues[0]] if dues else 0
    return sizes, heads


def queue_depth(frame: Any) -> pd.DataFrame:
    """Queue size and head-list size after every row that records the queue size.

    Columns: ``seq``, ``t``, ``kind``, ``queue_size`` (pending tasks),
    ``ready_size`` (tasks at the head time) and ``ready_recorded`` (whether
    ``ready_size`` was in the log or rebuilt, see below). Rows that do not
    touch the queue (start, finish...) are left out.

    The log writes ``ready_size`` on decisions and cancels only. For a
    complete log (``seq`` starting at 0, no gaps) the missing values are
    rebuilt by counting the tasks each row adds and removes; for a bounded
    log that lost its first rows they are carried forward from the last
    recorded value.

    >>> from tempsched_lab.plots import example_frame
    >>> depth = queue_depth(example_frame())
    >>> int(depth["queue_size"].max()), int(depth["ready_size"].max())
    (11, 2)
    """
    a = frame if isinstance(frame, LogArrays) else LogArrays.of(frame)
    rows = np.flatnonzero(np.isfinite(a["queue_size"]))
    recorded = a["ready_size"][rows]
    have = np.isfinite(recorded)
    seq = a["seq"]
    complete = a.n > 0 and seq[0] == 0 and seq[-1] == a.n - 1
    if have.all():
        ready = recorded
    elif complete:
        ready = np.where(have, recorded, _rebuild(a)[1][rows])
    else:
        ready = pd.Series(recorded).ffill().to_numpy(dtype="float64")
    return pd.DataFrame(
        {
            "seq": seq[rows].astype("int64"),
            "t": a["t"][rows],
            "kind": a["kind"][rows],
            "queue_size": a["queue_size"][rows],
            "ready_size": ready,
            "ready_recorded": have,
        }
    )


def plot_queue_depth(frame: Any, *, ax: Axes | None = None, now: float | None = None) -> Axes:
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
    if not len(depth):
        ax.set_title(title)
        show_message(ax, "no tasks yet")
        return ax
    origin = time_origin(a["t"])
    t = depth["t"].to_numpy() - origin
    queue_size = depth["queue_size"].to_numpy()
    ready = depth["ready_size"].to_numpy()
    if now is not None and float(now) - origin > t[-1]:
        t = np.r_[t, float(now) - origin]
        queue_size = np.r_[queue_size, queue_size[-1]]
        ready = np.r_[ready, ready[-1]]
    ax.step(
        t,
        queue_size,
        where="post",
        color=MEASURE_COLORS["queue size"],
        linewidth=1.8,
        label="queue size (pending tasks)",
    )
    ax.step(
        t,
        ready,
        where="post",
        color=MEASURE_COLORS["head size"],
        linewidth=1.5,
        label="head list size (tasks at the head time)",
    )
    if now is not None:
        ax.axvline(float(now) - origin, color=NEUTRAL["ink"], linestyle="--", linewidth=1.0)
    note = None
    if not depth["ready_recorded"].all() and not (
        a.n and a["seq"][0] == 0 and a["seq"][-1] == a.n - 1
    ):
        note = "Head size carried forward between recorded rows (the log's start is lost)."
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(bottom=0, top=max(1.0, float(np.nanmax(queue_size))) * 1.08)
    ax.set_xlabel(time_axis_label(origin))
    ax.set_ylabel("tasks")
    ax.grid(color=NEUTRAL["faint"], linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    set_title(ax, title, note)
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    return ax
