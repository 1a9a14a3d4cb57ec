"""The sorted-dict design's picture: the head list apart, then every later time point in order."""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes

from ...time.scale import TimeScale
from .._axes import FONT, axes_or_new, axes_size_pt, count_of, set_title
from ..colors import ENTRY_FILL, HEAD_EDGE, HEAD_FILL, NEUTRAL
from ._common import box, empty, highlight_note, highlights_of, scale_of, snapshot_of, task_text
from ._registry import design_picture

__all__ = ["plot_sorteddict"]

#: Least column pitch and row pitch, in points, for 8 pt box texts.
_COLUMN_PT, _ROW_PT = 62.0, 30.0
_HEAD_GAP = 1.4  # the head column stands apart from the later ones (in columns)
_W, _H = 0.86, 0.8  # box width and task-box height (in columns and rows)


def _fit(ax: Axes | None, pitch_pt: float, columns: int, rows: int) -> tuple[int, int]:
    """How many later columns and task rows a given Axes can hold legibly."""
    if ax is None:
        return columns, rows
    width_pt, height_pt = axes_size_pt(ax)
    fit_columns = int(width_pt * 0.9 / pitch_pt - _HEAD_GAP - 0.5)
    fit_rows = int((height_pt - 70.0) / _ROW_PT - 2.2)
    return max(1, min(columns, fit_columns)), max(1, min(rows, fit_rows))


@design_picture("sorteddict", title="sorted dict", size=(5.6, 3.2), in_panels=False, fallback=True)
def plot_sorteddict(
    snapshot: Any,
    *,
    ax: Axes | None = None,
    max_points: int = 10,
    max_stack: int = 6,
    time_scale: TimeScale | None = None,
    highlight: int | dict[int, str] | None = None,
    title: str | None = None,
) -> Axes:
    """The sorted-dict design: the head list, then every later time point in time order.

    Each column is one time point (its due time at the bottom) with its tasks
    stacked above in insertion order, the order they will run in. The head
    (the earliest time point, the one the worker waits for) is kept apart, as
    the design keeps it. Works for any snapshot: without the design's picture
    the time points come from ``snapshot.state``. A big queue is shown by its
    first time points, with a note counting the rest; an Axes too small for
    ``max_points`` columns or ``max_stack`` rows of legible boxes gets fewer.

    Args:
        snapshot: a ``QueueSnapshot`` (or a scheduler or queue to take one from).
        ax: draw into this Axes; by default a new Figure is made.
        max_points: the most later time points drawn (a note tells how many more).
        max_stack: the most tasks drawn per time point ("+k more" for the rest).
        time_scale: how due times are written (default: the scheduler's, see
            :func:`~tempsched_lab.time_scale_of`).
        highlight: a task ID, or ``{task_id: reason}``: those tasks get a thick
            dashed outline and a ★, and the note says why (e.g. the task a
            duplicate request matched).
        title: the title to write instead of the design's own (which counts the tasks).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab import replay_snapshot
    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_sorteddict(replay_snapshot(example_frame(), upto=13))
    >>> ax.get_title()
    'Sorted-dict queue: 11 tasks at 9 time points'
    """
    snap = snapshot_of(snapshot)
    scale = scale_of(snapshot, snap, time_scale)
    highlights = highlights_of(highlight)
    picture = snap.picture
    if "time_points" in picture:
        head_time, head = picture["head_time"], list(picture["head"])
        later = picture["time_points"]
    else:
        state = snap.state
        head_time, head = state.head_time, list(state.head)
        later = state.points[1:]
    n_points = len(later) + (head_time is not None)
    n_tasks = len(head) + sum(len(ids) for _, ids in later)
    title = (
        title
        or f"Sorted-dict queue: {count_of(n_tasks, 'task')} at {count_of(n_points, 'time point')}"
    )
    longest = max(len(scale.text(head_time)) if head_time is not None else 0, 10)
    pitch_pt = max(_COLUMN_PT, (longest * 0.6 * FONT["small"] + 10.0) / _W)
    tallest = max([len(head), *(len(ids) for _, ids in later[:max_points])], default=0)
    given = ax
    columns, rows = _fit(given, pitch_pt, min(max_points, len(later)), min(tallest, max_stack))
    shown = [(t, list(ids)) for t, ids in later[:columns]]
    x_span = (_HEAD_GAP + max(len(shown) - 1, 0) if shown else 0.6) + _W + 0.9
    y_span = rows + 2.2
    ax = axes_or_new(ax, (max(x_span * pitch_pt / 72 + 1.0, 5.5), y_span * _ROW_PT / 72 + 1.5))
    if head_time is None:
        return empty(ax, title)

    drawn: set[int] = set()
    columns_xy = [(0.0, head_time, head, True)]
    columns_xy += [(_HEAD_GAP + i, t, ids, False) for i, (t, ids) in enumerate(shown)]
    for x, t, ids, is_head in columns_xy:
        box(
            ax,
            x,
            0.0,
            _W,
            0.62,
            ("head\n" if is_head else "") + scale.text(t),
            face=HEAD_FILL if is_head else "white",
            edge=HEAD_EDGE if is_head else NEUTRAL["line"],
            lw=1.8 if is_head else 1.0,
            weight="bold" if is_head else "normal",
            gid="head_time" if is_head else "time_point",
        )
        visible = ids if len(ids) <= rows else ids[: rows - 1]
        for j, task_id in enumerate(visible):
            drawn.add(task_id)
            box(
                ax,
                x,
                1.0 + j,
                _W,
                _H,
                task_text(snap, task_id, highlights, 12),
                face=HEAD_FILL if is_head else ENTRY_FILL,
                gid="head_task" if is_head else "task",
                highlighted=task_id in highlights,
            )
        if len(ids) > len(visible):
            box(
                ax,
                x,
                1.0 + len(visible),
                _W,
                _H,
                f"+{len(ids) - len(visible):,} more",
                face=NEUTRAL["faint"],
                gid="more",
            )
    _captions(ax, [c[0] for c in columns_xy[1:]])
    notes = []
    if len(later) > len(shown):
        notes.append(
            f"Showing the first {len(shown):,} of {len(later):,} later time points; the "
            f"last is at {scale.text(later[-1][0])}."
        )
    if tallest > rows:
        notes.append(f"Columns show their first {rows - 1} tasks.")
    why = highlight_note(highlights, drawn)
    if why:
        notes.append(why)
    right = columns_xy[-1][0] + _W / 2 + 0.1
    ax.set_xlim(-_W / 2 - 0.45, max(right, 0.6 + _W / 2))
    ax.set_ylim(-1.2, max(1.0 + rows - 0.4, 1.6))
    ax.set_axis_off()
    set_title(ax, title, " ".join(notes))
    return ax


def _captions(ax: Axes, later_xs: list[float]) -> None:
    """What the head column and the later columns are, under them."""
    if later_xs:
        ax.plot(
            [later_xs[0] - _W / 2, later_xs[-1] + _W / 2], [-0.45, -0.45], color=NEUTRAL["line"]
        )
        ax.annotate(
            "later time points, sorted by time  →" if len(later_xs) > 2 else "later, by time →",
            xy=(later_xs[0] - _W / 2, -0.5),
            ha="left",
            va="top",
            fontsize=FONT["small"],
            color=NEUTRAL["ink"],
        )
    ax.annotate(
        "head list\n(runs next)",
        xy=(0, -0.5),
        ha="center",
        va="top",
        fontsize=FONT["small"],
        color=NEUTRAL["ink"],
        fontweight="bold",
    )
