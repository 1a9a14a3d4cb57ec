"""The binary heap's picture: the top levels as a tree, the array beneath, the rest per level."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Circle

from ...time.scale import TimeScale
from .._axes import FONT, axes_or_new, axes_size_pt, count_of, set_title
from ..colors import ENTRY_FILL, HEAD_EDGE, HEAD_FILL, NEUTRAL
from ._common import (
    HIGHLIGHT_MARK,
    box,
    empty,
    highlight_note,
    highlights_of,
    scale_of,
    snapshot_of,
)
from ._registry import design_picture

__all__ = ["plot_heap"]

_LEVEL_GAP = 1.25  # vertical distance between tree levels (in node pitches)
_RADIUS = 0.42  # node radius (in node pitches)
_LINE_PT = 12.5  # height of one line of the per-level table (8 pt text, spacing 1.25)


def _pitch_pt(longest: int, margin_pt: float = 8.0) -> float:
    """The node pitch in points for node texts of ``longest`` characters in small type.

    A figure made here gives the texts ``margin_pt`` of room in their circles; in
    Axes given (a panel's), the levels drawn need at least half of it.
    """
    return max(50.0, (longest * 0.6 * FONT["small"] + margin_pt) / (2 * _RADIUS))


def _span(levels: int, shown: int, row_cells: int) -> float:
    """Width in node pitches of ``levels`` tree levels over an array of ``shown`` entries.

    The array's cells narrow to 0.7 of a pitch (their two short lines still fit)
    before they widen the picture: a 6-entry heap's array is no wider than its
    4 leaves, so a narrow column still shows its three levels.
    """
    return max(2.0 ** (levels - 1), 0.7 * min(shown, row_cells))


def _height(levels: int, shown: int, row_cells: int) -> float:
    """Height in node pitches of ``levels`` tree levels and the array of ``shown`` entries."""
    array_rows = math.ceil(shown / row_cells) if shown else 0
    return _RADIUS + 0.3 + _LEVEL_GAP * (levels - 1) + 1.2 + (array_rows - 1) + 0.6


def _levels_that_fit(ax: Axes | None, pitch_pt: float, n: int, wanted: int, row_cells: int) -> int:
    """How many tree levels of a heap of ``n`` entries ``ax`` holds with nodes ``pitch_pt`` apart.

    The picture keeps its aspect (round nodes), so the levels must fit across
    *and* down: the tree, the array, the lines of the levels not drawn and the
    title. A level that does not fit is summarised instead of drawn with node
    texts overflowing their circles.
    """
    if ax is None:
        return wanted
    width_pt, height_pt = axes_size_pt(ax)
    depth = math.floor(math.log2(n)) if n else 0
    for levels in range(wanted, 1, -1):
        shown = min(n, 2**levels - 1)
        hidden = depth + 1 - levels  # lines under the array
        text_pt = _LINE_PT * (hidden + 1.5 * bool(hidden))
        title_pt = FONT["title"] * 1.3 + 12 + (FONT["small"] * 2.6 if n > shown else 0)
        # 0.97: what constrained layout leaves of the width around an Axes with no axis
        across = width_pt * 0.97 / (_span(levels, shown, row_cells) + 0.6)
        down = (height_pt - title_pt - text_pt) / _height(levels, shown, row_cells)
        if min(across, down) >= pitch_pt:
            return levels
    return 1


def _level_rows(dues: np.ndarray, first_hidden_level: int, scale: TimeScale) -> list[str]:
    """One line per level not drawn as a tree: its occupancy and its range of due times."""
    rows = []
    n = len(dues)
    depth = math.floor(math.log2(n)) if n else 0
    for level in range(first_hidden_level, depth + 1):
        start, stop = 2**level - 1, min(2 ** (level + 1) - 1, n)
        part = dues[start:stop]
        rows.append(
            f"level {level}: {stop - start:,} of {2**level:,} entries, due "
            f"{scale.text(part.min())} – {scale.text(part.max())}"
        )
    return rows


# 4.15 in (415 px; 553 px in projector type): whole in a side-by-side column of 427 px at
# a 900 px page (5.6 in scrolled sideways there: 564 px in 427), with room for a 6-entry
# heap's three levels; long titles wrap (set_title)
@design_picture("heap", title="heap", size=(4.15, 4.4), in_panels=True)
def plot_heap(
    snapshot: Any,
    *,
    ax: Axes | None = None,
    max_nodes: int = 15,
    row_cells: int = 8,
    time_scale: TimeScale | None = None,
    highlight: int | dict[int, str] | None = None,
    title: str | None = None,
) -> Axes:
    """The binary heap as a tree, with the array that stores it beneath.

    Node ``i`` holds ``(task, due)``; its parent is entry ``(i - 1) // 2``
    (the edges are drawn from the snapshot's parent links). Every parent is
    due no later than its children, so the root (highlighted) is the next to
    fire; nothing orders siblings. The array is the heap as stored: the tree
    read level by level. A heap bigger than ``max_nodes`` shows its top levels
    as a tree and every deeper level as one line: how many entries it holds
    and the range of their due times.

    Args:
        snapshot: a ``QueueSnapshot`` of a ``heap`` queue (or a scheduler or
            queue to take one from).
        ax: draw into this Axes; by default a new Figure is made.
        max_nodes: the most entries drawn (whole levels: 1, 3, 7, 15, 31...).
        row_cells: array cells per row.
        time_scale: how due times are written (default: the scheduler's).
        highlight: a task ID or ``{task_id: reason}`` to outline (see
            :func:`plot_sorteddict`).
        title: the title to write instead of the design's own (which counts the tasks).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab import replay_snapshot
    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_heap(replay_snapshot(example_frame(), upto=13, queue="heap"))
    >>> ax.get_title()
    'Binary heap: 11 entries, root = earliest due'
    """
    snap = snapshot_of(snapshot)
    if "heap" not in snap.picture:
        raise ValueError(f"plot_heap needs a heap snapshot, got design {snap.design!r}")
    scale = scale_of(snapshot, snap, time_scale)
    highlights = highlights_of(highlight)
    heap: Sequence[tuple[int, float]] = snap.picture["heap"]
    parent: Sequence[int | None] = snap.picture["parent"]
    n = len(heap)
    title = title or f"Binary heap: {count_of(n, 'entry', 'entries')}, root = earliest due"
    longest = max((len(scale.text(due)) for _, due in heap[:max_nodes]), default=8)
    pitch_pt = _pitch_pt(longest)
    wanted_levels = math.floor(math.log2(max(1, min(n, max_nodes)))) + 1
    levels = _levels_that_fit(ax, _pitch_pt(longest, 4.0), n, wanted_levels, row_cells)
    shown = min(n, 2**levels - 1)
    depth = levels - 1
    width = _span(levels, shown, row_cells)
    array_rows = math.ceil(shown / row_cells) if shown else 0
    top = -_LEVEL_GAP * depth - 1.2  # the array's first row
    table = _level_rows(np.array([d for _, d in heap]), levels, scale) if n > shown else []
    line = _LINE_PT / pitch_pt
    bottom = top - (array_rows - 1) - 0.6 - line * (len(table) + 1.5 * bool(table))
    height = _RADIUS + 0.3 - bottom
    size = (max((width + 0.6) * pitch_pt / 72 + 0.6, 5.5), height * pitch_pt / 72 + 1.3)
    ax = axes_or_new(ax, size)
    if n == 0:
        return empty(ax, title)

    def position(i: int) -> tuple[float, float]:
        level = math.floor(math.log2(i + 1))
        slot = i - (2**level - 1)
        return (slot + 0.5) * width / 2**level, -_LEVEL_GAP * level

    drawn: set[int] = set()
    for i in range(shown):
        x, y = position(i)
        p = parent[i]
        if p is not None and p < shown:
            px, py = position(p)
            ax.plot([px, x], [py, y], color=NEUTRAL["line"], linewidth=1.0, zorder=1)
        task_id, due = heap[i]
        drawn.add(task_id)
        marked = task_id in highlights
        ax.add_patch(
            Circle(
                (x, y),
                _RADIUS,
                facecolor=HEAD_FILL if i == 0 else ENTRY_FILL,
                edgecolor=HEAD_EDGE if (i == 0 or marked) else NEUTRAL["line"],
                linewidth=2.6 if marked else (1.8 if i == 0 else 1.0),
                linestyle=(0, (3, 1.5)) if marked else "solid",
                zorder=2,
                gid="heap_root" if i == 0 else "heap_node",
            )
        )
        ax.text(
            x,
            y,
            f"{HIGHLIGHT_MARK if marked else ''}#{task_id}\n{scale.text(due)}\n[{i}]",
            ha="center",
            va="center",
            fontsize=FONT["small"],
            zorder=3,
            color=NEUTRAL["ink"],
            linespacing=1.0,
            fontweight="bold" if (i == 0 or marked) else "normal",
            gid="heap_label",
        )
    _array(ax, heap, shown, width, top, row_cells)
    if table:
        ax.text(
            0,
            top - (array_rows - 1) - 0.6,
            "\n".join(["deeper levels (not drawn):", *table]),
            ha="left",
            va="top",
            fontsize=FONT["small"],
            color=NEUTRAL["ink"],
            linespacing=1.25,
            gid="levels",
        )
    notes = []
    if n > shown:
        notes.append(
            f"Showing the top {count_of(levels, 'level')} ({shown:,} of {n:,} entries); "
            "the levels below are summarised under the array."
        )
    why = highlight_note(highlights, drawn)
    if why:
        notes.append(why)
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(bottom, _RADIUS + 0.3)
    ax.set_aspect("equal")
    ax.set_axis_off()
    set_title(ax, title, " ".join(notes))
    return ax


def _array(
    ax: Axes,
    heap: Sequence[tuple[int, float]],
    shown: int,
    width: float,
    top: float,
    row_cells: int,
) -> None:
    """The array as stored, cell ``i`` holding entry ``i``, ``row_cells`` cells a row."""
    cell = min(1.0, width / min(shown, row_cells))
    for i in range(shown):
        r, c = divmod(i, row_cells)
        in_row = min(row_cells, shown - r * row_cells)
        x = (width - in_row * cell) / 2 + (c + 0.5) * cell
        task_id, _ = heap[i]
        box(
            ax,
            x,
            top - r * 1.0,
            cell * 0.94,
            0.62,
            f"[{i}]\n#{task_id}",
            face=HEAD_FILL if i == 0 else "white",
            gid="array_cell",
        )
    ax.text(
        0,
        top + 0.4,
        "the array as stored: [index] and task",
        fontsize=FONT["small"],
        ha="left",
        va="bottom",
        color=NEUTRAL["ink"],
    )
