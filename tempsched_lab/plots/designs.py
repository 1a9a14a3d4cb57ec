"""Pictures of the three queue designs, from a :class:`~tempsched_lab.queues.QueueSnapshot`.

Get a snapshot from a live scheduler (``scheduler.snapshot()``), a queue
(``queue.snapshot()``) or a log at any row (:func:`tempsched_lab.replay_snapshot`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyBboxPatch, Wedge

from ..queues import QueueSnapshot
from ._axes import axes_or_new, set_title, show_message
from .colors import MEASURE_COLORS, NEUTRAL, OKABE_ITO

__all__ = ["plot_heap", "plot_queue", "plot_sorteddict", "plot_wheel"]

HEAD = MEASURE_COLORS["head size"]  # the head / next to fire, as in the queue-depth plot
HEAD_FILL = "#F7DDA6"
ENTRY_FILL = "#DCEBF7"
_TURN_COLORS = (OKABE_ITO["orange"], OKABE_ITO["sky blue"], OKABE_ITO["blue"])


def _snapshot(snapshot: Any) -> QueueSnapshot:
    if isinstance(snapshot, QueueSnapshot):
        return snapshot
    if callable(getattr(snapshot, "snapshot", None)):  # a Scheduler or a TimerQueue
        return snapshot.snapshot()
    raise TypeError(f"expected a QueueSnapshot (or a scheduler/queue), got {type(snapshot)}")


def _label(snapshot: QueueSnapshot, task_id: int) -> str:
    view = snapshot.tasks.get(task_id)
    text = f"#{task_id}"
    if view is not None and view.label:
        label = view.label if len(view.label) <= 10 else view.label[:9] + "…"
        text += f"\n{label}"
    return text


def _box(
    ax: Axes,
    x: float,
    y: float,
    w: float,
    h: float,
    text: str,
    *,
    face: str,
    edge: str = NEUTRAL["line"],
    lw: float = 1.0,
    fontsize: float = 7.5,
    gid: str | None = None,
    weight: str = "normal",
) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.01,rounding_size=0.06",
            facecolor=face,
            edgecolor=edge,
            linewidth=lw,
            zorder=3,
            gid=gid,
        )
    )
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        fontsize=fontsize,
        zorder=4,
        color=NEUTRAL["ink"],
        linespacing=1.05,
        fontweight=weight,
    )


def _empty(ax: Axes, title: str) -> Axes:
    ax.set_title(title)
    show_message(ax, "the queue is empty")
    return ax


def _fit(x_span: float, y_span: float, inches_per_unit: float) -> tuple[float, float]:
    """A figure size for an equal-aspect drawing of this many data units (width <= 16 in)."""
    scale = min(inches_per_unit, 16.0 / (x_span + 0.4))
    return max(x_span * scale + 0.4, 4.0), y_span * scale + 0.8


def _fmt_time(t: float) -> str:
    return f"{t:.6g} s"


# -- sorted dict ---------------------------------------------------------------------------


def plot_sorteddict(
    snapshot: Any, *, ax: Axes | None = None, max_points: int = 12, max_stack: int = 6
) -> Axes:
    """The sorted-dict design: the head list, then every later time point in time order.

    Each column is one time point (its due time at the bottom) with its tasks
    stacked above in insertion order, the order they will run in. The head
    (the earliest time point, the one the worker waits for) is kept apart, as
    the design keeps it. Works for any snapshot: without the design's picture
    the time points come from ``snapshot.state``.

    Args:
        snapshot: a ``QueueSnapshot`` (or a scheduler or queue to take one from).
        ax: draw into this Axes; by default a new Figure is made.
        max_points: the most later time points drawn (a note tells how many more).
        max_stack: the most tasks drawn per time point ("+k more" for the rest).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab import replay_snapshot
    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_sorteddict(replay_snapshot(example_frame(), upto=13))
    >>> ax.get_title()
    'Sorted-dict queue: 11 tasks at 9 time points'
    """
    snap = _snapshot(snapshot)
    picture = snap.picture
    if "time_points" in picture:
        head_time, head = picture["head_time"], list(picture["head"])
        later = [(t, list(ids)) for t, ids in picture["time_points"]]
    else:
        state = snap.state
        head_time, head = state.head_time, list(state.head)
        later = [(t, list(ids)) for t, ids in state.points[1:]]
    n_points = len(later) + (head_time is not None)
    n_tasks = len(head) + sum(len(ids) for _, ids in later)
    title = f"Sorted-dict queue: {n_tasks} task{'s' * (n_tasks != 1)} at {n_points} time point"
    title += "s" * (n_points != 1)
    shown = later[:max_points]
    tallest = max([len(head), *(len(ids) for _, ids in shown)], default=0)
    rows = min(tallest, max_stack)
    w, h = 0.86, 0.8
    x_span = (1.4 + max(len(shown) - 1, 0) + w / 2 + 0.1 if shown else 1.5) + w / 2 + 0.45
    ax = axes_or_new(ax, _fit(x_span, max(1.0 + rows - 0.4, 1.6) + 1.25, 0.95))
    if head_time is None:
        return _empty(ax, title)

    columns = [(0.0, head_time, head, True)]
    columns += [(1.4 + i, t, ids, False) for i, (t, ids) in enumerate(shown)]
    for x, t, ids, is_head in columns:
        _box(
            ax,
            x,
            0.0,
            w,
            0.62,
            ("head\n" if is_head else "") + _fmt_time(t),
            face=HEAD if is_head else "white",
            edge=HEAD if is_head else NEUTRAL["line"],
            lw=1.8 if is_head else 1.0,
            weight="bold" if is_head else "normal",
            gid="head_time" if is_head else "time_point",
        )
        visible = ids if len(ids) <= max_stack else ids[: max_stack - 1]
        for j, task_id in enumerate(visible):
            _box(
                ax,
                x,
                1.0 + j,
                w,
                h,
                _label(snap, task_id),
                face=HEAD_FILL if is_head else ENTRY_FILL,
                gid="head_task" if is_head else "task",
            )
        if len(ids) > len(visible):
            _box(
                ax,
                x,
                1.0 + len(visible),
                w,
                h,
                f"+{len(ids) - len(visible)} more",
                face=NEUTRAL["faint"],
                gid="more",
            )
    if shown:
        xs = [c[0] for c in columns[1:]]
        ax.plot([xs[0] - w / 2, xs[-1] + w / 2], [-0.45, -0.45], color=NEUTRAL["line"], lw=1.0)
        ax.annotate(
            "later time points, sorted by time  →",
            xy=(xs[0] - w / 2, -0.5),
            ha="left",
            va="top",
            fontsize=8,
            color=NEUTRAL["ink"],
        )
    ax.annotate(
        "head list\n(runs next)",
        xy=(0, -0.5),
        ha="center",
        va="top",
        fontsize=8,
        color=NEUTRAL["ink"],
        fontweight="bold",
    )
    top = 1.0 + rows - 0.4
    ax.annotate(
        "tasks in insertion order ↑",
        xy=(-w / 2 - 0.12, 1.0),
        ha="right",
        va="bottom",
        rotation=90,
        fontsize=7,
        color=NEUTRAL["line"],
    )
    note = None
    if len(later) > len(shown):
        note = (
            f"Showing the first {len(shown)} of {len(later)} later time points; the "
            f"last is at {_fmt_time(later[-1][0])}."
        )
    right = columns[-1][0] + w / 2 + 0.1
    ax.set_xlim(-w / 2 - 0.45, max(right, 1.5))
    ax.set_ylim(-1.25, max(top, 1.6))
    ax.set_aspect("equal")
    ax.set_axis_off()
    set_title(ax, title, note)
    return ax


# -- heap ----------------------------------------------------------------------------------


def plot_heap(
    snapshot: Any, *, ax: Axes | None = None, max_nodes: int = 31, row_cells: int = 16
) -> Axes:
    """The binary heap as a tree, with the array that stores it beneath.

    Node ``i`` holds ``(task, due)``; its parent is entry ``(i - 1) // 2``
    (the edges are drawn from the snapshot's parent links). Every parent is
    due no later than its children, so the root (highlighted) is the next to
    fire; nothing orders siblings. The array is the heap as stored: the tree
    read level by level.

    Args:
        snapshot: a ``QueueSnapshot`` of a ``heap`` queue (or a scheduler or
            queue to take one from).
        ax: draw into this Axes; by default a new Figure is made.
        max_nodes: the most entries drawn (the top levels; a note tells the rest).
        row_cells: array cells per row.

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab import replay_snapshot
    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_heap(replay_snapshot(example_frame(), upto=13, queue="heap"))
    >>> ax.get_title()
    'Binary heap: 11 entries, root = earliest due'
    """
    snap = _snapshot(snapshot)
    if "heap" not in snap.picture:
        raise ValueError(f"plot_heap needs a heap snapshot, got design {snap.design!r}")
    heap: Sequence[tuple[int, float]] = snap.picture["heap"]
    parent: Sequence[int | None] = snap.picture["parent"]
    n = len(heap)
    title = f"Binary heap: {n} entr{'ies' if n != 1 else 'y'}, root = earliest due"
    shown = min(n, max_nodes)
    depth = max(0, math.floor(math.log2(shown))) if shown else 0
    width = float(max(2**depth, min(shown, row_cells)))
    array_rows = math.ceil(shown / row_cells) if shown else 0
    radius = 0.42
    top = -1.25 * depth - 1.2
    ax = axes_or_new(ax, _fit(width + 0.6, radius + 0.3 - (top - (array_rows - 1) - 0.6), 0.8))
    if n == 0:
        return _empty(ax, title)

    def position(i: int) -> tuple[float, float]:
        level = math.floor(math.log2(i + 1))
        slot = i - (2**level - 1)
        return (slot + 0.5) * width / 2**level, -1.25 * level

    for i in range(shown):
        x, y = position(i)
        p = parent[i]
        if p is not None and p < shown:
            px, py = position(p)
            ax.plot([px, x], [py, y], color=NEUTRAL["line"], linewidth=1.0, zorder=1)
        root = i == 0
        ax.add_patch(
            Circle(
                (x, y),
                radius,
                facecolor=HEAD if root else ENTRY_FILL,
                edgecolor=NEUTRAL["ink"] if root else NEUTRAL["line"],
                linewidth=1.8 if root else 1.0,
                zorder=2,
                gid="heap_root" if root else "heap_node",
            )
        )
        task_id, due = heap[i]
        ax.text(
            x,
            y,
            f"#{task_id}\n{due:.4g}",
            ha="center",
            va="center",
            fontsize=7,
            zorder=3,
            color=NEUTRAL["ink"],
            fontweight="bold" if root else "normal",
        )
        ax.text(
            x + radius * 0.75,
            y + radius * 0.75,
            f"[{i}]",
            fontsize=6,
            color=NEUTRAL["line"],
            zorder=3,
        )
    # the array beneath: cell i holds entry i, row by row
    cell = min(1.0, width / min(shown, row_cells))
    for i in range(shown):
        r, c = divmod(i, row_cells)
        in_row = min(row_cells, shown - r * row_cells)
        x = (width - in_row * cell) / 2 + (c + 0.5) * cell
        y = top - r * 1.0
        task_id, due = heap[i]
        _box(
            ax,
            x,
            y,
            cell * 0.96,
            0.62,
            f"#{task_id}\n{due:.4g}",
            face=HEAD if i == 0 else "white",
            fontsize=6.5,
            gid="array_cell",
        )
        ax.text(x, y + 0.34, str(i), ha="center", va="bottom", fontsize=6, color=NEUTRAL["line"])
    ax.text(
        0,
        top + 0.62,
        "the array as stored (index above each cell):",
        fontsize=8,
        ha="left",
        va="bottom",
        color=NEUTRAL["ink"],
    )
    note = None
    if n > shown:
        note = f"Showing the first {shown} of {n} entries (the top {depth + 1} levels)."
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(top - (array_rows - 1) - 0.6, radius + 0.3)
    ax.set_aspect("equal")
    ax.set_axis_off()
    set_title(ax, title, note)
    return ax


# -- wheel ---------------------------------------------------------------------------------


def plot_wheel(
    snapshot: Any, *, ax: Axes | None = None, max_labels: int = 40, max_stack: int = 5
) -> Axes:
    """The timing wheel: a ring of buckets, the cursor, and every job with its round.

    Bucket ``b`` holds the jobs whose fire tick ``idx`` has ``idx % slots ==
    b``; each job also keeps its round ``idx // slots``. Jobs are drawn outside
    their bucket, coloured by how many more turns the hand (cursor) must make
    before they fire; labels read ``#task r<round>``. The arrow is the cursor,
    the next tick to process.

    Args:
        snapshot: a ``QueueSnapshot`` of a ``wheel`` queue (or a scheduler or
            queue to take one from).
        ax: draw into this Axes; by default a new Figure is made.
        max_labels: the most job labels written (markers are always drawn).
        max_stack: the most jobs drawn per bucket ("+k" for the rest).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab import replay_snapshot
    >>> from tempsched_lab.queues import TimingWheelQueue
    >>> from tempsched_lab.plots import example_frame
    >>> wheel = TimingWheelQueue(slots=16, tick=0.1)
    >>> ax = plot_wheel(replay_snapshot(example_frame(), upto=13, queue=wheel))
    >>> ax.get_title()
    'Timing wheel: 16 slots × 0.1 s, 11 jobs'
    """
    snap = _snapshot(snapshot)
    picture = snap.picture
    if "buckets" not in picture:
        raise ValueError(f"plot_wheel needs a wheel snapshot, got design {snap.design!r}")
    slots: int = picture["slots"]
    tick: float = picture["tick"]
    cursor: int = picture["cursor"]
    buckets: Sequence[Sequence[tuple[int, int]]] = picture["buckets"]
    n_jobs = sum(len(b) for b in buckets)
    title = f"Timing wheel: {slots} slots × {tick:g} s, {n_jobs} job{'s' * (n_jobs != 1)}"
    ax = axes_or_new(ax, (7.5, 7.5))
    step = 360.0 / slots
    inner, outer = 0.72, 1.0

    def angle(b: float) -> float:  # bucket 0 at the top, clockwise
        return 90.0 - (b + 0.5) * step

    cursor_bucket = cursor % slots
    for b in range(slots):
        occupied = bool(buckets[b])
        ax.add_patch(
            Wedge(
                (0, 0),
                outer,
                angle(b) - step / 2,
                angle(b) + step / 2,
                width=outer - inner,
                facecolor=HEAD_FILL if occupied else "white",
                edgecolor=NEUTRAL["ink"] if b == cursor_bucket else NEUTRAL["line"],
                linewidth=2.2 if b == cursor_bucket else 0.6,
                zorder=2 + (b == cursor_bucket),
                gid="bucket",
            )
        )
    label_every = max(1, math.ceil(slots / 32))
    for b in range(0, slots, label_every):
        a = math.radians(angle(b))
        r = (inner + outer) / 2
        ax.text(
            r * math.cos(a),
            r * math.sin(a),
            str(b),
            ha="center",
            va="center",
            fontsize=6.5 if slots <= 32 else 5.5,
            color=NEUTRAL["ink"],
            zorder=4,
        )

    # jobs, outside their bucket, one dot per job, one label per bucket
    turns_seen: set[int] = set()
    labels_left = max_labels
    stack_step = 0.15
    tallest = 0
    for b, jobs in enumerate(buckets):
        if not jobs:
            continue
        a = math.radians(angle(b))
        cos, sin = math.cos(a), math.sin(a)
        visible = jobs if len(jobs) <= max_stack else jobs[: max_stack - 1]
        tallest = max(tallest, len(visible))
        lines = []
        for k, (task_id, rnd) in enumerate(visible):
            turns = max(0, (rnd * slots + b - cursor) // slots)
            turns_seen.add(min(turns, 2))
            r = outer + 0.12 + k * stack_step
            ax.add_patch(
                Circle(
                    (r * cos, r * sin),
                    0.05,
                    facecolor=_TURN_COLORS[min(turns, 2)],
                    edgecolor=NEUTRAL["ink"],
                    linewidth=0.6,
                    zorder=5,
                    gid="job",
                )
            )
            if labels_left > 0:
                labels_left -= 1
                lines.append(f"#{task_id} r{rnd}")
        if len(jobs) > len(visible):
            lines.append(f"+{len(jobs) - len(visible)} more")
        if lines:
            r = outer + 0.12 + (len(visible) - 1) * stack_step + 0.09
            ha = "left" if cos > 0.25 else ("right" if cos < -0.25 else "center")
            va = "bottom" if sin > 0.25 else ("top" if sin < -0.25 else "center")
            ax.text(
                r * cos,
                r * sin,
                "\n".join(lines),
                ha=ha,
                va=va,
                fontsize=6.5,
                color=NEUTRAL["ink"],
                zorder=6,
                linespacing=1.0,
                gid="job_label",
            )

    # the cursor
    a = math.radians(angle(cursor_bucket))
    ax.annotate(
        "",
        xy=(0.68 * math.cos(a), 0.68 * math.sin(a)),
        xytext=(0, 0),
        arrowprops={"arrowstyle": "-|>", "color": NEUTRAL["ink"], "lw": 2.2, "mutation_scale": 16},
        zorder=6,
        gid="cursor",
    )
    ax.text(
        0,
        -0.1,
        f"cursor: tick {cursor}\n= bucket {cursor_bucket}, round {cursor // slots}",
        ha="center",
        va="top",
        fontsize=8,
        color=NEUTRAL["ink"],
        zorder=7,
        bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
    )
    ax.text(
        0,
        -0.4,
        f"one turn = {slots} × {tick:g} s = {slots * tick:g} s",
        ha="center",
        va="top",
        fontsize=7.5,
        color=NEUTRAL["line"],
    )
    handles = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=7,
            markeredgecolor=NEUTRAL["ink"],
            markerfacecolor=_TURN_COLORS[k],
            label=text,
        )
        for k, text in (
            (0, "fires this turn"),
            (1, "fires after 1 more turn"),
            (2, "2 or more turns ahead"),
        )
        if k in turns_seen
    ]
    if handles:
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            fontsize=8,
            frameon=False,
            ncols=3,
            title="job (label: #task r<round>)",
            title_fontsize=8,
        )
    note = None
    if n_jobs > max_labels:
        note = f"Labels on the first {max_labels} of {n_jobs} jobs only."
    elif n_jobs == 0:
        ax.text(0, 0.3, "the queue is empty", ha="center", fontsize=9, color=NEUTRAL["line"])
    reach = outer + 0.12 + max(tallest - 1, 0) * stack_step + 0.3
    ax.set_xlim(-reach - 0.3, reach + 0.3)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.set_axis_off()
    set_title(ax, title, note)
    return ax


_VIEWS: dict[str, Callable[..., Axes]] = {
    "sorteddict": plot_sorteddict,
    "heap": plot_heap,
    "wheel": plot_wheel,
}


def plot_queue(snapshot: Any, *, ax: Axes | None = None, **options: Any) -> Axes:
    """The picture of the snapshot's own design (``snapshot.design``).

    ``"heap"`` -> :func:`plot_heap`, ``"wheel"`` -> :func:`plot_wheel`, and the
    sorted dict or any other design -> :func:`plot_sorteddict` (time points).
    ``options`` go to that function.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock(), queue="heap")
    >>> _ = s.schedule(print, at=1.0)
    >>> plot_queue(s.snapshot()).get_title()
    'Binary heap: 1 entry, root = earliest due'
    """
    snap = _snapshot(snapshot)
    view = _VIEWS.get(snap.design, plot_sorteddict)
    return view(snap, ax=ax, **options)
