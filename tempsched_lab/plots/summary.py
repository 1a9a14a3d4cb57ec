"""One page about a whole log: timeline, queue depth, decision-tree counts and lateness."""

from __future__ import annotations

from typing import Any, Literal

from matplotlib.figure import Figure

from ..log.kinds import Kind
from ._axes import LAID_OUT, count_of, new_figure
from ._data import LogArrays, as_frame
from .depth import plot_queue_depth
from .lateness import plot_lateness
from .timeline import plot_timeline
from .tree import plot_decision_tree

__all__ = ["plot_summary"]


def plot_summary(
    frame: Any,
    *,
    color_by: Literal["case", "outcome"] = "case",
    now: float | None = None,
    max_lanes: int = 30,
    figsize: tuple[float, float] = (15.0, 17.0),
) -> Figure:
    """A one-page Figure: the task timeline on top, the queue depth over the same time
    axis under it, and the decision tree with the count of each case and the lateness
    histograms at the bottom.

    Args:
        frame: an event-log frame, an ``EventLog`` or a ``Scheduler``.
        color_by: the timeline's colours, ``"case"`` or ``"outcome"``.
        now: the current clock time (live use), see :func:`plot_timeline`.
        max_lanes: the timeline's lane limit.
        figsize: the Figure's size in inches.

    Returns:
        The Figure (``fig.axes`` is ``[timeline, depth, tree, lateness]``); save it with
        ``fig.savefig("summary.png")`` or show it in Jupyter by evaluating it.

    >>> from tempsched_lab.plots import example_frame
    >>> fig = plot_summary(example_frame())
    >>> [ax.get_title(loc="left") or ax.get_title() for ax in fig.axes][1:3]
    ['Queue depth over time', 'Decision tree: counts from 23 decisions']
    """
    frame = as_frame(frame)
    a = LogArrays.of(frame)
    fig = new_figure(figsize)
    grid = fig.add_gridspec(3, 2, height_ratios=(1.1, 0.42, 1.45), width_ratios=(2.2, 1.0))
    timeline = fig.add_subplot(grid[0, :])
    plot_timeline(a, ax=timeline, color_by=color_by, now=now, max_lanes=max_lanes)
    depth = plot_queue_depth(a, ax=fig.add_subplot(grid[1, :]), now=now)
    if depth.get_lines():  # one time axis for both: a step in the depth lines up with its lane
        depth.set_xlim(timeline.get_xlim())
    tree = fig.add_subplot(grid[2, 0])
    lateness = fig.add_subplot(grid[2, 1])
    # the tree sizes its boxes for the room it gets: lay the page out once first, since its
    # column starts where the timeline's plot does (the columns align), which an estimate from
    # the grid alone misses by the lane labels' width (question texts left their boxes)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    setattr(fig, LAID_OUT, True)
    try:
        plot_decision_tree(counts=frame, ax=tree, fontsize=8.0)
    finally:
        setattr(fig, LAID_OUT, False)
    plot_lateness(a, ax=lateness)
    n_rows = a.n
    n_errors = int(a.kind_is(Kind.ERROR).sum())
    n_decisions = int(a.kind_is(Kind.SCHEDULE, Kind.REJECT).sum())
    fig.suptitle(
        f"Scheduler log summary: {count_of(n_rows, 'row')}, {count_of(n_decisions, 'decision')}, "
        f"{count_of(n_errors, 'error')}",
        fontsize=13,
        fontweight="bold",
    )
    return fig
