"""The timeline: lanes of tasks (or executor threads), from each ``schedule()`` to its run's end.

Built in three parts: the lane layout (:mod:`.lanes`), one drawer per layer
(:mod:`.layers`), and a legend over the marker table (:mod:`.marks`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from ...log.kinds import Kind
from ...time.scale import TimeScale
from .._axes import (
    FONT,
    axes_or_new,
    axes_size_pt,
    count_of,
    set_title,
    short_duration,
    show_message,
    time_axis,
)
from .._data import LogArrays, task_runs
from .._legend import Section, add_legend
from ..colors import CASE_COLORS, NEUTRAL, OUTCOME_COLORS, OUTCOMES, case_label
from .lanes import BAND_ROWS, LaneLayout, lanes_that_fit, layout_lanes
from .layers import LAYERS, Scene, run_colors
from .marks import MARKS

__all__ = ["MAX_DETAIL_RUNS", "MAX_LANES", "plot_timeline"]

#: Default for ``max_lanes``: more lanes than this are folded into a band.
MAX_LANES = 40
#: Above this many runs on the drawn lanes, schedule/due markers and duplicate links are left out.
MAX_DETAIL_RUNS = 3000
#: In the default view, pending due times up to this fraction of the logged span beyond its
#: end widen the x axis; later ones are left off and counted in a note.
FUTURE_REACH = 0.5

#: The y axis spans at least this many rows, so that bars keep their thickness on a lone lane.
MIN_ROWS = 6

_TIMES = ("due", "scheduled", "dispatched", "started", "ended", "event_set", "cancelled", "dropped")


def _check(
    color_by: object, lanes: object, max_lanes: object, window: object, time_scale: object
) -> None:
    if color_by not in ("case", "outcome"):
        raise ValueError(f"color_by={color_by!r}: expected 'case' or 'outcome'")
    if lanes not in LAYERS:
        raise ValueError(f"lanes={lanes!r}: expected 'task' or 'thread'")
    if isinstance(max_lanes, bool) or not isinstance(max_lanes, int) or max_lanes < 2:
        raise ValueError(f"max_lanes={max_lanes!r}: expected an int >= 2")
    if time_scale is not None and not isinstance(time_scale, TimeScale):
        raise TypeError(f"time_scale={time_scale!r}: expected a TimeScale or None")
    if window is None:
        return
    if isinstance(window, (int, float)) and not isinstance(window, bool):
        if not np.isfinite(window) or window <= 0:
            raise ValueError(f"window={window!r}: expected a positive number of seconds")
        return
    if (
        isinstance(window, tuple)
        and len(window) == 2
        and all(isinstance(w, (int, float)) and np.isfinite(w) for w in window)
        and window[0] < window[1]
    ):
        return
    raise ValueError(
        f"window={window!r}: expected seconds before now (e.g. 30.0) or a (start, end) pair "
        "of clock values with start < end"
    )


def _figure_size(rows: int, legend_rows: int) -> tuple[float, float]:
    """Size (inches) of a new figure: 0.26 in a lane (0.19 beyond 44), a legend in one column."""
    height = 1.9 + 0.26 * min(rows, 44) + 0.19 * max(rows - 44, 0)
    height = max(height, 1.4 + 0.18 * legend_rows)
    return 11.0, float(np.clip(height, 4.0, 40.0))


def _lane_label(label: Any, task_id: float, period: float) -> str:
    text = "" if label is None or (isinstance(label, float) and np.isnan(label)) else str(label)
    if len(text) > 22:
        text = text[:21] + "…"
    name = f"{text} #{int(task_id)}" if text else f"task #{int(task_id)}"
    if np.isfinite(period):
        name += f" (every {short_duration(period)})"
    return name


def _thread_label(name: Any) -> str:
    text = str(name)
    return text if len(text) <= 28 else text[:27] + "…"


def _rel_runs(runs: pd.DataFrame, scale: TimeScale) -> pd.DataFrame:
    runs = runs.copy()
    for col in _TIMES:
        runs[col] = scale.rel(runs[col].astype("float64"))
    return runs


def _run_spans(runs: pd.DataFrame, x_end: float) -> tuple[np.ndarray, np.ndarray]:
    """When each run first and last shows on its lane (NaN-safe)."""
    starts = runs[["scheduled", "dispatched", "started", "event_set", "cancelled", "dropped"]]
    begin = starts.min(axis=1).fillna(runs["due"]).to_numpy()
    running = runs["started"].notna() & runs["ended"].isna()
    pending = runs[["started", "event_set", "cancelled", "dropped"]].isna().all(axis=1)
    end = pd.concat(
        [
            runs["ended"],
            runs["started"].where(~running, x_end),
            runs["event_set"],
            runs["cancelled"],
            runs["dropped"],
            runs["due"].where(pending),
            runs["scheduled"],
        ],
        axis=1,
    ).max(axis=1)
    return begin, end.fillna(runs["due"]).to_numpy()


def _x_range(
    t: np.ndarray, runs: pd.DataFrame, x_now: float | None, window: tuple[float, float] | None
) -> tuple[tuple[float, float], int, float]:
    """The x range; and the pending runs due beyond its right edge (count, latest due)."""
    if window is not None:
        beyond = runs["due"].to_numpy() > window[1]
        pending = runs[["started", "event_set", "cancelled"]].isna().all(axis=1).to_numpy()
        latest = float(runs["due"][beyond & pending].max()) if (beyond & pending).any() else 0.0
        return window, int((beyond & pending).sum()), latest
    logged = t[np.isfinite(t)]
    lo = float(logged.min()) if len(logged) else 0.0
    hi = float(logged.max()) if len(logged) else 1.0
    if x_now is not None:
        lo, hi = min(lo, x_now), max(hi, x_now)
    pending = runs[["started", "event_set", "cancelled"]].isna().all(axis=1).to_numpy()
    due = runs["due"].to_numpy()
    reach = hi + FUTURE_REACH * max(hi - lo, 1.0)
    near = pending & np.isfinite(due) & (due > hi) & (due <= reach)
    far = pending & np.isfinite(due) & (due > reach)
    if near.any():
        hi = float(due[near].max())
    latest = float(due[far].max()) if far.any() else 0.0
    span = hi - lo if hi > lo else 1.0
    return (lo - 0.03 * span, hi + 0.03 * span), int(far.sum()), latest


def _resolve_window(
    window: float | tuple[float, float] | None, x_now: float | None, t: np.ndarray, scale: Any
) -> tuple[float, float] | None:
    if window is None:
        return None
    if isinstance(window, tuple):
        return float(scale.rel(window[0])), float(scale.rel(window[1]))
    logged = t[np.isfinite(t)]
    end = x_now if x_now is not None else (float(logged.max()) if len(logged) else 0.0)
    return float(end) - float(window), float(end)


def _lane_keys(
    runs: pd.DataFrame, lanes: str, extra_task_ids: np.ndarray
) -> tuple[np.ndarray, Callable[[int], str]]:
    """The lane keys in lane order, and the label of lane ``i`` (computed for drawn lanes only)."""
    if lanes == "thread":
        keys = np.asarray(pd.unique(runs["thread"].dropna().to_numpy(dtype=object)), dtype=object)
        return keys, lambda i: _thread_label(keys[i])
    ids = np.asarray(pd.unique(np.r_[runs["task_id"].to_numpy(dtype="float64"), extra_task_ids]))
    ids = ids[np.isfinite(ids)]
    first = runs.drop_duplicates("task_id")
    label = dict(zip(first["task_id"], first["label"], strict=True))
    period = dict(zip(first["task_id"], first["period"], strict=True))
    return ids, lambda i: _lane_label(label.get(ids[i]), ids[i], period.get(ids[i], np.nan))


def _legend(ax: Axes, scene: Scene, used: list[Any]) -> None:
    runs, _ = scene.drawn()
    if scene.color_by == "case":
        present = {int(c) for c in runs["case"].dropna()}
        if scene.lanes == "task":  # rejected and duplicate requests are drawn in their colour
            a = scene.a
            marked = (a.kind_is(Kind.REJECT) | np.isfinite(a["dup_of"])) & scene.in_view
            present |= {int(c) for c in a["case"][marked] if np.isfinite(c)}
        colours = [Patch(color=CASE_COLORS[c], label=case_label(c)) for c in sorted(present)]
        title = "decision case (colour)"
    else:
        seen = set(runs["outcome"])
        colours = [Patch(color=OUTCOME_COLORS[o], label=o) for o in OUTCOMES if o in seen]
        title = "outcome (colour)"
    add_legend(ax, [Section(title, colours), Section("marks", used)])


def plot_timeline(
    frame: Any,
    *,
    ax: Axes | None = None,
    color_by: Literal["case", "outcome"] = "case",
    now: float | None = None,
    window: float | tuple[float, float] | None = None,
    lanes: Literal["task", "thread"] = "task",
    max_lanes: int = MAX_LANES,
    time_scale: TimeScale | None = None,
) -> Axes:
    """Draw the log as lanes: when each task was scheduled, when it was due, when it ran.

    With ``lanes="task"`` (the default) each task gets one lane (all runs of a
    periodic task share it). On a lane: a dot where ``schedule()`` was called,
    a grey line while the run waits, a white triangle at its due time, an ink
    tick at its actual start and a bar to its end. Colours give the decision
    case that queued the run (``color_by="case"``) or how the run ended
    (``"outcome"``). Cancels are marked ``x``, errors ``!``, runs dropped at
    shutdown with a hollow square, Events set with a star, slots a periodic
    task skipped (misfire) with ``⊘``. A duplicate request (cases 5 and 7) is
    a diamond above the lane of the task it matched, with an arrow to that
    task's due time. Rejected requests get a row of their own.

    With ``lanes="thread"`` each lane is an executor thread (the ``thread``
    column of the run's ``start`` row): the Gantt view of which thread ran
    what, when; wide bars carry their task's label.

    Lanes beyond ``max_lanes`` (or beyond what the Axes can label legibly)
    are folded: the first and last are drawn and those in between become a
    grey band whose bars count the runs started per time bin. With more than
    :data:`MAX_DETAIL_RUNS` runs on the drawn lanes, markers are thinned. A
    note under the title says what was folded or left out.

    Args:
        frame: an event-log frame (``log.to_frame()`` or ``read_log(path)``),
            an ``EventLog`` or a ``Scheduler``.
        ax: draw into this Axes; by default a new Figure is made.
        color_by: ``"case"`` or ``"outcome"``.
        now: the current clock time (a clock value), drawn as a dashed line
            (for live use); runs still in flight are drawn up to it.
        window: show only this span: a number of seconds ending at ``now``
            (a sliding window; at the end of the log when ``now`` is None), or
            a ``(start, end)`` pair of clock values. Runs crossing its edges
            are clipped.
        lanes: ``"task"`` or ``"thread"``.
        max_lanes: the most lanes drawn one by one.
        time_scale: how times are shown (default: the log's own,
            :func:`~tempsched_lab.time_scale_of`).

    Returns:
        The Axes drawn into (``ax.figure`` is the Figure).

    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_timeline(example_frame(), color_by="outcome")
    >>> ax.get_title()
    'Task timeline: 12 tasks, 16 runs, 1 Event set'
    >>> [float(x) for x in plot_timeline(example_frame(), window=1.0).get_xlim()]
    [3.0, 4.0]
    """
    _check(color_by, lanes, max_lanes, window, time_scale)
    a = frame if isinstance(frame, LogArrays) else LogArrays.of(frame)
    view = _InView.of(a, time_scale or a.scale, now, window, lanes)
    keys, label_of = _lane_keys(view.runs, lanes, view.marked_tasks)
    own_figure = ax is None
    ax = axes_or_new(ax, _figure_size(*_rows_wanted(view, keys, color_by, lanes, max_lanes)))
    width_pt, height_pt = axes_size_pt(ax)
    # a figure made here is sized for its lanes; one given is only as tall as it is
    fit = lanes_that_fit(height_pt, int(view.reject))
    budget = max_lanes if own_figure else min(max_lanes, fit)
    kind_name = "Task" if lanes == "task" else "Thread"
    if not len(keys) and not view.reject:
        ax.set_title(f"{kind_name} timeline", fontsize=FONT["title"])
        show_message(ax, "no runs in this window" if view.window is not None else "no tasks yet")
        return ax

    layout: LaneLayout = layout_lanes(
        keys, label_of, budget=budget, reject_row=view.reject, band_label="+{hidden} more"
    )
    key_col = view.runs["thread"] if lanes == "thread" else view.runs["task_id"]
    runs = view.runs.assign(y=layout.y_of(key_col.to_numpy()))
    x_range, n_beyond, latest = _x_range(view.t[view.in_view], runs, view.x_now, view.window)
    n_drawn = int(runs["y"].notna().sum())
    scene = Scene(
        ax=ax,
        layout=layout,
        lanes=lanes,
        runs=runs,
        colors=run_colors(runs, color_by),
        color_by=color_by,
        a=a,
        scale=view.scale,
        t=view.t,
        in_view=view.in_view,
        x_end=view.x_end,
        detailed=n_drawn <= MAX_DETAIL_RUNS,
        x_range=x_range,
        axes_width_pt=width_pt,
    )
    used = [handle for draw in LAYERS[lanes] for handle in draw(scene)]
    _notes(scene, n_drawn, n_beyond, latest)
    if view.x_now is not None:
        _draw_now(ax, view.x_now)
    _frame(ax, scene)
    set_title(
        ax, _title(kind_name, runs, layout, lanes, window, view.window), "\n".join(scene.notes)
    )
    _legend(ax, scene, used)
    return ax


@dataclass(frozen=True)
class _InView:
    """What the timeline shows of a log: the runs and rows in view, in the scale's seconds."""

    scale: TimeScale
    #: every row's time, and which rows are in view
    t: np.ndarray
    in_view: np.ndarray
    x_now: float | None
    #: where runs still in flight end (now, or the last row)
    x_end: float
    #: the span shown (``None``: the whole log)
    window: tuple[float, float] | None
    runs: pd.DataFrame
    #: a row of rejected requests is drawn
    reject: bool
    #: tasks with a cancel, error or missed slot in view (they get a lane)
    marked_tasks: Any

    @classmethod
    def of(
        cls,
        a: LogArrays,
        scale: TimeScale,
        now: float | None,
        window: float | tuple[float, float] | None,
        lanes: str,
    ) -> _InView:
        t = scale.rel(a["t"])
        x_now = None if now is None else float(scale.rel(float(now)))
        logged = t[np.isfinite(t)]
        x_end = x_now if x_now is not None else (float(logged.max()) if len(logged) else 0.0)
        view = _resolve_window(window, x_now, t, scale)
        runs = _rel_runs(task_runs(a), scale)
        if view is not None:
            begin, end = _run_spans(runs, x_end)
            runs = runs.loc[(end >= view[0]) & (begin <= view[1])]
            in_view = (t >= view[0]) & (t <= view[1])
        else:
            in_view = np.isfinite(t)
        if lanes == "thread":
            runs = runs.loc[runs["thread"].notna()]
        reject = lanes == "task" and bool((a.kind_is(Kind.REJECT) & in_view).any())
        marked = (
            a.kind_is(Kind.CANCEL, Kind.ERROR, Kind.MISSED) & in_view & np.isfinite(a["task_id"])
        )
        marked_tasks = a["task_id"][marked] if lanes == "task" else []
        return cls(scale, t, in_view, x_now, x_end, view, runs, reject, marked_tasks)


def _rows_wanted(
    view: _InView, keys: np.ndarray, color_by: str, lanes: str, max_lanes: int
) -> tuple[int, int]:
    """The lanes (and band, and rejected row) a new figure is sized for; the legend's rows."""
    folded = BAND_ROWS if len(keys) > max_lanes else 0
    rows_wanted = min(len(keys), max_lanes) + int(view.reject) + folded
    runs = view.runs
    n_colours = runs["case"].nunique() if color_by == "case" else runs["outcome"].nunique()
    legend_rows = n_colours + 2 + (len(MARKS) + 1 if lanes == "task" else 3)  # at most
    return rows_wanted, legend_rows


def _notes(scene: Scene, n_drawn: int, n_beyond: int, latest: float) -> None:
    """What the picture leaves out, said under the title."""
    if not scene.detailed:
        scene.notes.append(
            f"Thinned: {n_drawn:,} runs on the drawn lanes; schedule/due markers and "
            "duplicate links are left out (bars, starts, cancels and errors are drawn)."
        )
    if n_beyond:
        scale = scene.scale
        scene.notes.append(
            f"{count_of(n_beyond, 'pending run')} due after the right edge "
            f"(the last at {scale.text(scale.abs(latest))})."
        )


def _draw_now(ax: Axes, x_now: float) -> None:
    """The dashed "now" line, labelled at the top."""
    ax.axvline(x_now, color=NEUTRAL["ink"], linestyle="--", linewidth=1.2, zorder=7, gid="now")
    ax.annotate(
        "now",
        xy=(x_now, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(-3, -3),
        textcoords="offset points",
        ha="right",
        va="top",
        fontsize=FONT["small"],
        color=NEUTRAL["ink"],
        gid="now_label",
        annotation_clip=True,
    )


def _frame(ax: Axes, scene: Scene) -> None:
    """The axes: the time range, one labelled row per lane, a light grid, the time axis."""
    layout = scene.layout
    ax.set_xlim(*scene.x_range)
    pad = max(0.0, (MIN_ROWS - layout.n_rows) / 2)  # a lone lane keeps its bar thickness
    ax.set_ylim(layout.n_rows - 0.5 + pad, -0.75 - pad)
    positions = sorted(layout.labels)
    ax.set_yticks(positions, labels=[layout.labels[p] for p in positions], fontsize=FONT["small"])
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color=NEUTRAL["faint"], linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)
    time_axis(ax, scene.scale)


def _title(
    kind_name: str,
    runs: pd.DataFrame,
    layout: LaneLayout,
    lanes: str,
    window: Any,
    view: tuple[float, float] | None,
) -> str:
    """``Task timeline: 12 tasks, 16 runs, 1 Event set``: only what actually ran is a run."""
    n_lanes = len(layout.keys)
    noun = "task" if lanes == "task" else "thread"
    n_runs = int(runs["started"].notna().sum())
    n_events = int(runs["event_set"].notna().sum())
    title = f"{kind_name} timeline"
    if isinstance(window, (int, float)) and view is not None:
        title += f", last {short_duration(float(window))}"
    title += f": {count_of(n_lanes, noun)}, {count_of(n_runs, 'run')}"
    if n_events:
        title += f", {count_of(n_events, 'Event')} set"
    return title
