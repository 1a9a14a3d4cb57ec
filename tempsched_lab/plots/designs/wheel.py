"""The timing wheel's picture: the ring of buckets, the cursor, and the jobs by turns left."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PatchCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, Wedge
from matplotlib.text import Text

from ...time.scale import EPOCH_LIKE, TimeScale
from .._axes import FONT, NOTE_GID, axes_or_new, count_of, root_figure, set_title, short_duration
from .._legend import Section, add_legend
from ..colors import HEAD_EDGE, HEAD_FILL, NEUTRAL, TURN_COLORS
from ._common import HIGHLIGHT_MARK, empty, highlight_note, highlights_of, scale_of, snapshot_of
from ._registry import design_picture

__all__ = ["plot_wheel"]

_INNER, _OUTER = 0.72, 1.0  # the ring's radii
_DOT, _STACK = 0.05, 0.15  # a job's dot radius, and the distance between stacked dots
_TURN_TEXT = ("fires this turn", "fires after 1 more turn", "2 or more turns ahead")


def _jobs(buckets: Sequence[Sequence[tuple[int, int]]], slots: int) -> np.ndarray:
    """Every job as a row ``(bucket, task_id, fire tick)``, bucket by bucket."""
    rows = [(b, task_id, rnd) for b, jobs in enumerate(buckets) for task_id, rnd in jobs]
    if not rows:
        return np.empty((0, 3), dtype="int64")
    jobs = np.array(rows, dtype="int64")
    jobs[:, 2] = jobs[:, 2] * slots + jobs[:, 0]
    return jobs


def _hand(cursor: int, jobs: np.ndarray, slots: int, now_tick: int | None) -> tuple[int, str]:
    """The tick the hand stands at for this picture, and a sentence if it is not the cursor.

    The cursor is the next tick the wheel will process; it only moves when jobs
    fire, so a wheel that has not fired for a while (on a real clock: since it
    was made) has its cursor far behind, and the next pop jumps it forward at
    once. The picture counts turns from where the hand really is: ``now``, or
    without a clock the earliest job, when the cursor lags by more than a turn.
    """
    if now_tick is not None and now_tick > cursor:
        return now_tick, " The wheel's cursor lags behind and catches up at the next pop."
    if now_tick is None and len(jobs) and int(jobs[:, 2].min()) - cursor > slots:
        first = int(jobs[:, 2].min())
        return first, " The cursor lags by more than a turn: turns are counted from the first job."
    return cursor, ""


def _angle(b: float, step: float) -> float:
    """Bucket ``b``'s angle in degrees: bucket 0 at the top, clockwise."""
    return 90.0 - (b + 0.5) * step


# 4.0 in (400 px; 533 px in projector type) with the legend under the ring: whole in a
# side-by-side column of 427 px at a 900 px page (5.4 in, legend beside, scrolled: 564 in 427)
@design_picture("wheel", title="wheel", size=(4.0, 5.0), in_panels=True, takes_now=True)
def plot_wheel(
    snapshot: Any,
    *,
    ax: Axes | None = None,
    max_jobs: int = 40,
    max_stack: int = 5,
    time_scale: TimeScale | None = None,
    highlight: int | dict[int, str] | None = None,
    title: str | None = None,
    now: float | None = None,
) -> Axes:
    """The timing wheel: a ring of buckets, the cursor, and the jobs by the turns they wait.

    Bucket ``b`` holds the jobs whose fire tick ``idx`` has ``idx % slots ==
    b``. The arrow is the cursor, the next tick to process. Each job is drawn
    outside its bucket, shaded by how many more turns the hand must make before
    it fires (dark: this turn), and labelled ``#task +k`` (``k`` turns left;
    no ``+k``: this turn). A wheel holding more than ``max_jobs`` jobs is drawn
    as occupancy instead: one bar per bucket, split by turns left, its length
    scaled to the fullest bucket (the note gives the scale).

    Args:
        snapshot: a ``QueueSnapshot`` of a ``wheel`` queue (or a scheduler or
            queue to take one from).
        ax: draw into this Axes; by default a new Figure is made.
        max_jobs: the most jobs drawn one by one.
        max_stack: the most jobs drawn per bucket ("+k" for the rest).
        time_scale: how times are written (default: the scheduler's).
        highlight: a task ID or ``{task_id: reason}`` to outline (see
            :func:`plot_sorteddict`).
        now: the clock's time (given a scheduler: its clock's): the hand is
            drawn where the wheel will process next, even when its cursor has
            not moved since the last jobs fired.
        title: the title to write instead of the design's own (which counts the tasks).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab import replay_snapshot
    >>> from tempsched_lab.core.queues import TimingWheelQueue
    >>> from tempsched_lab.plots import example_frame
    >>> wheel = TimingWheelQueue(slots=16, tick=0.1)
    >>> ax = plot_wheel(replay_snapshot(example_frame(), upto=13, queue=wheel))
    >>> ax.get_title()
    'Timing wheel: 16 slots × 0.1 s, 11 jobs'
    """
    snap = snapshot_of(snapshot)
    picture = snap.picture
    if "buckets" not in picture:
        raise ValueError(f"plot_wheel needs a wheel snapshot, got design {snap.design!r}")
    scale = scale_of(snapshot, snap, time_scale)
    highlights = highlights_of(highlight)
    slots: int = picture["slots"]
    tick: float = picture["tick"]
    origin: float = picture.get("origin", 0.0)
    if now is None and callable(getattr(getattr(snapshot, "clock", None), "now", None)):
        now = snapshot.clock.now()
    # after the wheel processes ``now``, its next tick is the one after now's
    now_tick = None if now is None else math.floor((float(now) - origin) / tick) + 1
    jobs = _jobs(picture["buckets"], slots)
    cursor, lag = _hand(picture["cursor"], jobs, slots, now_tick)
    jobs[:, 2] = np.maximum(0, (jobs[:, 2] - cursor) // slots)  # turns of the hand before it fires
    n_jobs = len(jobs)
    title = (
        title or f"Timing wheel: {slots} slots × {short_duration(tick)}, {count_of(n_jobs, 'job')}"
    )
    ax = axes_or_new(ax, (8.5, 6.6))
    if n_jobs == 0 and not slots:
        return empty(ax, title)
    step = 360.0 / slots
    cursor_bucket = cursor % slots
    counts = np.bincount(jobs[:, 0], minlength=slots) if n_jobs else np.zeros(slots, int)
    _ring(ax, slots, step, cursor_bucket, counts > 0)
    detailed = n_jobs <= max_jobs
    if detailed:
        reach, labels = _job_dots(ax, snap, jobs, step, max_stack, highlights)
    else:
        reach, labels = _occupancy(ax, jobs, slots, step), []
    _cursor(ax, cursor_bucket, step)
    seen = set(np.minimum(jobs[:, 2], 2).tolist()) if n_jobs else set()
    handles = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o" if detailed else "s",
            markersize=8,
            markeredgecolor=NEUTRAL["ink"],
            markerfacecolor=TURN_COLORS[k],
            label=_TURN_TEXT[k],
        )
        for k in (0, 1, 2)
        if k in seen
    ]
    section = "job: #task +turns left" if detailed else "jobs per bucket"
    legend = add_legend(ax, [Section(section, handles)])
    if legend is not None and _narrow(ax):
        _legend_below(legend)
    # tick numbers of a real clock's wheel count from 1970: only small ones are worth reading
    tick_text = f"tick {cursor:,} = " if cursor < 1_000_000 else ""
    hand_at = origin + cursor * tick  # an unused real-clock wheel's hand is still in 1970
    when = f" (at {scale.text(hand_at)})" if abs(scale.rel(hand_at)) < EPOCH_LIKE else ""
    notes = [
        f"Arrow: the hand, {tick_text}bucket {cursor_bucket}{when}.{lag} "
        f"One turn = {slots} × {short_duration(tick)} = {short_duration(slots * tick)}."
    ]
    if not detailed:
        notes.append(
            f"{n_jobs:,} jobs: bar length = jobs in the bucket, the longest "
            f"{int(counts.max()):,} (bucket {int(counts.argmax())})."
        )
    elif n_jobs == 0:
        notes.append("The queue is empty.")
    why = highlight_note(highlights, set(jobs[:, 1].tolist()))
    if why:
        notes.append(why)
    limit = reach + 0.12
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-limit, limit)
    ax.set_aspect("equal")
    ax.set_axis_off()
    set_title(ax, title, " ".join(notes))
    if labels:
        _drop_overlapping(ax, labels)
    return ax


def _narrow(ax: Axes) -> bool:
    """Whether ``ax``'s figure is too narrow for the legend beside the ring (under 5 in)."""
    return float(root_figure(ax).get_figwidth()) < 5.0


def _legend_below(legend: Any) -> None:
    """Put ``legend`` under the ring, centred (constrained layout makes room for it)."""
    legend.set_loc("upper center")
    legend.set_bbox_to_anchor((0.5, -0.01), transform=legend.axes.transAxes)


def _ring(ax: Axes, slots: int, step: float, cursor_bucket: int, occupied: np.ndarray) -> None:
    """The buckets as wedges (occupied ones filled, the cursor's outlined) and their numbers."""
    many = slots > 64  # thin, light edges, or a ring of 256 buckets is all edge
    # one collection for the ring: 256 separate patches cost 0.4 s to add, this ~10 ms
    wedges = [
        Wedge((0, 0), _OUTER, _angle(b, step) - step / 2, _angle(b, step) + step / 2,
              width=_OUTER - _INNER)
        for b in range(slots)
    ]  # fmt: skip
    ax.add_collection(
        PatchCollection(
            wedges,
            facecolors=[HEAD_FILL if full else "white" for full in occupied],
            edgecolors=NEUTRAL["unknown" if many else "line"],
            linewidths=0.25 if many else 0.6,
            zorder=2,
            gid="buckets",
        )
    )
    b = cursor_bucket
    ax.add_patch(
        Wedge(
            (0, 0),
            _OUTER,
            _angle(b, step) - step / 2,
            _angle(b, step) + step / 2,
            width=_OUTER - _INNER,
            facecolor="none",
            edgecolor=HEAD_EDGE,
            linewidth=2.2,
            zorder=3,
            gid="cursor_bucket",
        )
    )
    # numbers every few buckets, so that neighbours stay apart (about 14 a turn at most)
    every = max(1, math.ceil(slots / 14))
    every = next(k for k in (1, 2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128) if k >= every)
    for b in range(0, slots, every):
        a = math.radians(_angle(float(b), step))
        r = (_INNER + _OUTER) / 2
        ax.text(
            r * math.cos(a),
            r * math.sin(a),
            str(b),
            ha="center",
            va="center",
            fontsize=FONT["small"],
            color=NEUTRAL["ink"],
            zorder=4,
            gid="bucket_number",
        )


def _job_dots(
    ax: Axes,
    snap: Any,
    jobs: np.ndarray,
    step: float,
    max_stack: int,
    highlights: dict[int, str],
) -> tuple[float, list[Text]]:
    """A dot per job outside its bucket, and one label per bucket; the radius reached."""
    labels: list[Text] = []
    tallest = 0
    for b in np.unique(jobs[:, 0]):
        here = jobs[jobs[:, 0] == b]
        a = math.radians(_angle(float(b), step))
        cos, sin = math.cos(a), math.sin(a)
        visible = here if len(here) <= max_stack else here[: max_stack - 1]
        tallest = max(tallest, len(visible))
        lines = []
        for k, (_, task_id, turns) in enumerate(visible):
            r = _OUTER + 0.12 + k * _STACK
            marked = int(task_id) in highlights
            ax.add_patch(
                Circle(
                    (r * cos, r * sin),
                    _DOT * (1.4 if marked else 1.0),
                    facecolor=TURN_COLORS[min(int(turns), 2)],
                    edgecolor=NEUTRAL["ink"],
                    linewidth=1.8 if marked else 0.6,
                    zorder=5,
                    gid="job",
                )
            )
            mark = HIGHLIGHT_MARK if marked else ""
            lines.append(f"{mark}#{task_id}" + (f" +{turns}" if turns else ""))
        if len(here) > len(visible):
            lines.append(f"+{len(here) - len(visible)} more")
        r = _OUTER + 0.12 + (len(visible) - 1) * _STACK + 0.09
        labels.append(
            ax.text(
                r * cos,
                r * sin,
                "\n".join(lines),
                ha="left" if cos > 0.25 else ("right" if cos < -0.25 else "center"),
                va="bottom" if sin > 0.25 else ("top" if sin < -0.25 else "center"),
                fontsize=FONT["small"],
                color=NEUTRAL["ink"],
                zorder=6,
                linespacing=1.0,
                gid="job_label",
            )
        )
    return _OUTER + 0.12 + max(tallest - 1, 0) * _STACK + 0.45, labels


def _occupancy(ax: Axes, jobs: np.ndarray, slots: int, step: float) -> float:
    """One radial bar per bucket, split by turns left; the radius reached."""
    length = 0.55
    per_turn = np.zeros((3, slots))
    np.add.at(per_turn, (np.minimum(jobs[:, 2], 2), jobs[:, 0]), 1)
    peak = max(float(per_turn.sum(axis=0).max()), 1.0)
    base = np.full(slots, _OUTER + 0.04)
    wedges, colours = [], []
    for turns in (0, 1, 2):
        for b in np.flatnonzero(per_turn[turns]):
            extent = length * per_turn[turns, b] / peak
            start, end = _angle(float(b), step) - step * 0.45, _angle(float(b), step) + step * 0.45
            wedges.append(Wedge((0, 0), base[b] + extent, start, end, width=extent))
            colours.append(TURN_COLORS[turns])
            base[b] += extent
    ax.add_collection(
        PatchCollection(
            wedges,
            facecolors=colours,
            edgecolors=NEUTRAL["ink"],
            linewidths=0.3,
            zorder=4,
            gid="occupancy",
        )
    )
    return _OUTER + 0.04 + length + 0.1


def _cursor(ax: Axes, cursor_bucket: int, step: float) -> None:
    """The hand: an arrow from the centre to the cursor's bucket (nothing written across it)."""
    a = math.radians(_angle(cursor_bucket, step))
    ax.annotate(
        "",
        xy=(0.68 * math.cos(a), 0.68 * math.sin(a)),
        xytext=(0, 0),
        arrowprops={"arrowstyle": "-|>", "color": NEUTRAL["ink"], "lw": 2.2, "mutation_scale": 16},
        zorder=6,
        gid="cursor",
    )
    ax.add_patch(Circle((0, 0), 0.04, color=NEUTRAL["ink"], zorder=6))


def _drop_overlapping(ax: Axes, labels: list[Text]) -> None:
    """Hide job labels that would overlap another text, after layout; the note says how many.

    The ring is drawn to scale while text keeps its size in points, so whether
    neighbouring labels collide is only known once the figure is laid out.
    """
    fig = root_figure(ax)
    fig.draw_without_rendering()
    renderer = fig._get_renderer()  # type: ignore[attr-defined]
    others = [t for t in ax.texts if t.get_gid() != "job_label"] + [ax.title]
    legend = ax.get_legend()
    if legend is not None:
        others += [*legend.get_texts(), legend.get_title()]
    kept = [t.get_window_extent(renderer) for t in others if t.get_text()]
    hidden = 0
    for label in labels:
        box = label.get_window_extent(renderer).expanded(1.02, 1.1)
        if any(box.overlaps(other) for other in kept):
            label.set_visible(False)
            hidden += 1
        else:
            kept.append(box)
    if hidden:
        note = next(t for t in ax.texts if t.get_gid() == NOTE_GID)
        text = " ".join(note.get_text().split("\n"))
        note.remove()
        set_title(
            ax,
            ax.get_title(),
            f"{text} Labels of {count_of(hidden, 'bucket')} left out where they would overlap.",
        )
