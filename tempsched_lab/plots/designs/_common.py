"""What the three design pictures share: taking a snapshot, its time scale, boxes, highlights."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.axes import Axes
from matplotlib.patches import FancyBboxPatch

from ...core.queues import QueueSnapshot
from ...time.scale import EPOCH_LIKE, TimeScale, time_scale_of
from .._axes import FONT, show_message
from ..colors import NEUTRAL

__all__ = [
    "HIGHLIGHT_MARK",
    "box",
    "empty",
    "highlight_note",
    "highlights_of",
    "scale_of",
    "snapshot_of",
    "task_text",
]

#: Written before the task ID of a highlighted task (and in the note that says why).
HIGHLIGHT_MARK = "★"


def snapshot_of(snapshot: Any) -> QueueSnapshot:
    """A :class:`QueueSnapshot`, taken from a scheduler or a queue if that is what was given."""
    if isinstance(snapshot, QueueSnapshot):
        return snapshot
    taken = snapshot.snapshot() if callable(getattr(snapshot, "snapshot", None)) else None
    if isinstance(taken, QueueSnapshot):  # from a Scheduler or a TimerQueue
        return taken
    raise TypeError(
        f"snapshot={snapshot!r}: expected a QueueSnapshot (or a scheduler or queue to take one)"
    )


def scale_of(source: Any, snap: QueueSnapshot, time_scale: TimeScale | None) -> TimeScale:
    """How the picture writes times: ``time_scale``, else the source's or the snapshot's origin.

    A bare snapshot of a real clock's queue carries no origin: its epoch-like
    times are then written as wall-clock times (never as raw epoch numbers).
    """
    if time_scale is not None:
        if not isinstance(time_scale, TimeScale):
            raise TypeError(f"time_scale={time_scale!r}: expected a TimeScale or None")
        return time_scale
    for candidate in (source, snap):
        try:
            return time_scale_of(candidate)
        except TypeError:
            continue
    times = [t for t, _ in snap.state.points]
    if times and abs(times[0]) >= EPOCH_LIKE:
        return TimeScale(0.0, "wall")
    return TimeScale(0.0)


def highlights_of(highlight: Any) -> dict[int, str]:
    """``{task_id: why}`` from ``None``, a task ID, or a mapping task ID -> reason."""
    if highlight is None:
        return {}
    if isinstance(highlight, int) and not isinstance(highlight, bool):
        return {highlight: "highlighted"}
    if isinstance(highlight, Mapping) and all(
        isinstance(k, int) and not isinstance(k, bool) for k in highlight
    ):
        return {int(k): str(v) for k, v in highlight.items()}
    raise TypeError(f"highlight={highlight!r}: expected a task ID or a mapping {{task_id: reason}}")


def highlight_note(highlights: Mapping[int, str], shown: set[int]) -> str | None:
    """``★ #1: matched by the request`` for each highlighted task (and where it is not shown)."""
    if not highlights:
        return None
    parts = []
    for task_id, why in highlights.items():
        where = "" if task_id in shown else " (not in this picture)"
        parts.append(f"{HIGHLIGHT_MARK} #{task_id}: {why}{where}")
    return "; ".join(parts) + "."


def task_text(snap: QueueSnapshot, task_id: int, highlights: Mapping[int, str], width: int) -> str:
    """``#3`` over the task's label cut to ``width`` characters (``★ #3`` when highlighted)."""
    view = snap.tasks.get(task_id)
    text = f"{HIGHLIGHT_MARK} #{task_id}" if task_id in highlights else f"#{task_id}"
    if view is not None and view.label:
        label = view.label if len(view.label) <= width else view.label[: width - 1] + "…"
        text += f"\n{label}"
    return text


def box(
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
    gid: str | None = None,
    weight: str = "normal",
    highlighted: bool = False,
) -> None:
    """A rounded box centred at ``(x, y)`` holding ``text`` (highlighted: thick and dashed)."""
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.01,rounding_size=0.06",
            facecolor=face,
            edgecolor=NEUTRAL["ink"] if highlighted else edge,
            linewidth=2.6 if highlighted else lw,
            linestyle=(0, (3, 1.5)) if highlighted else "solid",
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
        fontsize=FONT["small"],
        zorder=4,
        color=NEUTRAL["ink"],
        linespacing=1.05,
        fontweight="bold" if highlighted else weight,
    )


def empty(ax: Axes, title: str) -> Axes:
    """An empty queue: the title and a message, nothing else."""
    ax.set_title(title, fontsize=FONT["title"])
    show_message(ax, "the queue is empty")
    return ax
