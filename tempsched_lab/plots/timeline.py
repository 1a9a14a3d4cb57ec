"""The task timeline: one lane per task, from the ``schedule()`` call to the end of each run."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.patheffects import withStroke

from ._axes import axes_or_new, set_title, show_message
from ._data import LogArrays, task_runs, time_axis_label, time_origin
from .colors import (
    CASE_COLORS,
    NEUTRAL,
    OUTCOME_COLORS,
    OUTCOMES,
    case_color,
    case_label,
)

__all__ = ["plot_timeline"]

#: Above this many runs on the visible lanes, schedule/due markers and arrows are left out.
MAX_DETAIL_RUNS = 3000
#: Above this many duplicate requests, their links are plain lines (no arrow heads).
MAX_ARROWS = 150
#: Bins of the density row that summarises hidden lanes.
DENSITY_BINS = 200

_BAR_HALF = 0.22
_DUE_OFFSET = 0.34
_DUP_OFFSET = 0.36


def _lane_label(label: Any, task_id: int, period: float) -> str:
    text = "" if label is None or (isinstance(label, float) and np.isnan(label)) else str(label)
    if len(text) > 22:
        text = text[:21] + "…"
    name = f"{text} #{task_id}" if text else f"task #{task_id}"
    if np.isfinite(period):
        name += f" (every {period:g} s)"
    return name


def _colors(runs: pd.DataFrame, color_by: str) -> np.ndarray:
    if color_by == "case":
        mapping = {float(c): col for c, col in CASE_COLORS.items()}
        colors = runs["case"].map(mapping)
    else:
        colors = runs["outcome"].map(OUTCOME_COLORS)
    return colors.fillna(NEUTRAL["unknown"]).to_numpy(dtype=object)


def _segments(x0: np.ndarray, x1: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.stack([np.column_stack([x0, y]), np.column_stack([x1, y])], axis=1)


def _rectangles(x0: np.ndarray, x1: np.ndarray, y: np.ndarray, half: float) -> np.ndarray:
    return np.stack(
        [
            np.column_stack([x0, y - half]),
            np.column_stack([x1, y - half]),
            np.column_stack([x1, y + half]),
            np.column_stack([x0, y + half]),
        ],
        axis=1,
    )


def plot_timeline(
    frame: Any,
    *,
    ax: Axes | None = None,
    color_by: Literal["case", "outcome"] = "case",
    now: float | None = None,
    max_lanes: int = 50,
) -> Axes:
    """Draw every task as a lane: when it was scheduled, when it was due, when it ran.

    Each task gets one lane (all runs of a periodic task share it). On a lane:
    a dot where ``schedule()`` was called (the decision's ``t``), a grey line
    while the run waits, a white triangle at its due time, a tick at its actual
    start and a bar to its finish. Colours give the decision case that queued
    the run (``color_by="case"``) or how the run ended (``"outcome"``).
    Cancels are marked ``x``, errors ``!``, runs dropped at shutdown with a
    hollow square, Events set with a star. A duplicate request (cases 5 and 7)
    is a diamond just above the lane of the task it matched, with an arrow to
    that task's due time. Rejected requests get a lane of their own.

    With more tasks than ``max_lanes``, the first and last ``max_lanes // 2``
    lanes are drawn and the tasks in between become one density row; with more
    than :data:`MAX_DETAIL_RUNS` runs, markers are thinned. The plot says so in
    a note under its title.

    Args:
        frame: an event-log frame (``log.to_frame()`` or ``read_log(path)``),
            an ``EventLog`` or a ``Scheduler``.
        ax: draw into this Axes; by default a new Figure is made.
        color_by: ``"case"`` or ``"outcome"``.
        now: the current clock time, drawn as a dashed line (for live use);
            runs still in flight are drawn up to it.
        max_lanes: the most task lanes drawn one by one.

    Returns:
        The Axes drawn into (``ax.figure`` is the Figure).

    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_timeline(example_frame(), color_by="outcome")
    >>> ax.get_title()
    'Task timeline: 12 tasks, 20 runs'
    """
    if color_by not in ("case", "outcome"):
        raise ValueError(f"color_by={color_by!r}: expected 'case' or 'outcome'")
    if isinstance(max_lanes, bool) or not isinstance(max_lanes, int) or max_lanes < 2:
        raise ValueError(f"max_lanes={max_lanes!r}: expected an int >= 2")
    a = frame if isinstance(frame, LogArrays) else LogArrays.of(frame)
    runs = task_runs(a)
    reject = a.kind_is("reject")
    lane_ids = pd.unique(runs["task_id"].to_numpy(dtype="float64")) if len(runs) else np.empty(0)
    n_tasks = len(lane_ids)
    n_rows_wanted = min(n_tasks, max_lanes + 1) + int(reject.any())
    ax = axes_or_new(ax, (11.0, float(np.clip(1.6 + 0.3 * n_rows_wanted, 3.0, 16.0))))
    if n_tasks == 0 and not reject.any():
        ax.set_title("Task timeline")
        show_message(ax, "no tasks yet")
        return ax

    origin = time_origin(a["t"])
    t = a["t"] - origin
    for col in ("due", "scheduled", "dispatched", "started", "ended", "event_set", "cancelled"):
        runs[col] = runs[col].astype("float64") - origin
    runs["dropped"] = runs["dropped"].astype("float64") - origin
    x_now = None if now is None else float(now) - origin
    last_t = float(np.nanmax(t)) if np.isfinite(t).any() else 0.0

    # -- rows: rejected lane, first lanes, density row, last lanes ------------------------
    labels: list[str] = []
    row = 0
    if reject.any():
        labels.append("rejected requests")
        row = 1
    first_row = row
    aggregated = n_tasks > max_lanes
    if aggregated:
        head = max_lanes // 2
        tail = max_lanes - head
        shown = np.r_[np.arange(head), np.arange(n_tasks - tail, n_tasks)]
        hidden = n_tasks - head - tail
        lane_y = np.full(n_tasks, np.nan)
        lane_y[:head] = first_row + np.arange(head)
        density_y = first_row + head
        lane_y[n_tasks - tail :] = density_y + 1 + np.arange(tail)
    else:
        shown = np.arange(n_tasks)
        head = tail = hidden = 0
        lane_y = first_row + np.arange(n_tasks, dtype="float64")
        density_y = None
    first_runs = runs.drop_duplicates("task_id")
    first_label = dict(zip(first_runs["task_id"], first_runs["label"], strict=True))
    first_period = dict(zip(first_runs["task_id"], first_runs["period"], strict=True))
    lane_labels = {
        i: _lane_label(first_label[lane_ids[i]], int(lane_ids[i]), float(first_period[lane_ids[i]]))
        for i in shown
    }
    n_rows = first_row + len(shown) + (1 if aggregated else 0)
    labels += [""] * (n_rows - len(labels))
    for i in shown:
        labels[int(lane_y[i])] = lane_labels[i]
    if density_y is not None:
        labels[density_y] = f"… {hidden:,} more tasks (runs per time bin)"

    lane_index = pd.Index(lane_ids)
    runs_y = lane_y[lane_index.get_indexer(runs["task_id"].to_numpy(dtype="float64"))]
    visible = np.isfinite(runs_y)
    vis = runs.loc[visible]
    y = runs_y[visible]
    colors = _colors(vis, color_by)
    detailed = len(vis) <= MAX_DETAIL_RUNS

    def y_of(task_ids: np.ndarray) -> np.ndarray:
        idx = lane_index.get_indexer(task_ids)
        out = np.full(len(task_ids), np.nan)
        ok = idx >= 0
        out[ok] = lane_y[idx[ok]]
        return out

    marker_handles: list[Line2D] = []
    extra_cases: set[int] = set()  # cases drawn besides the runs' (duplicates, rejections)

    def handle(label: str, **style: Any) -> None:
        marker_handles.append(Line2D([], [], linestyle="none", label=label, **style))

    # -- waiting: from the decision (or dispatch) to start / set / cancel / drop / due ----
    scheduled = vis["scheduled"].to_numpy()
    wait_from = np.where(np.isfinite(scheduled), scheduled, vis["dispatched"].to_numpy())
    wait_to = (
        vis["started"]
        .fillna(vis["event_set"])
        .fillna(vis["cancelled"])
        .fillna(vis["dropped"])
        .fillna(vis["dispatched"])
        .fillna(vis["due"])
        .to_numpy()
    )
    ok = np.isfinite(wait_from) & np.isfinite(wait_to)
    ax.add_collection(
        LineCollection(
            _segments(wait_from[ok], wait_to[ok], y[ok]),
            colors=NEUTRAL["wait"],
            linewidths=1.2,
            zorder=1,
            gid="waiting",
        )
    )
    if ok.any():
        marker_handles.append(Line2D([], [], color=NEUTRAL["wait"], lw=1.5, label="waiting"))

    # -- runs: bar from start to end (in-flight runs up to now) --------------------------
    started = vis["started"].to_numpy()
    end_fill = x_now if x_now is not None else last_t
    ended = vis["ended"].fillna(end_fill).to_numpy()
    has_run = np.isfinite(started)
    if has_run.any():
        bars = PolyCollection(
            _rectangles(
                started[has_run],
                np.maximum(ended[has_run], started[has_run]),
                y[has_run],
                _BAR_HALF,
            ),
            facecolors=list(colors[has_run]),
            edgecolors=NEUTRAL["ink"] if detailed else "none",
            linewidths=0.4,
            zorder=2,
            gid="runs",
        )
        ax.add_collection(bars)
        ax.scatter(
            started[has_run],
            y[has_run],
            marker="|",
            s=140,
            linewidths=2.0,
            c=list(colors[has_run]),
            zorder=3,
            gid="starts",
        )
        handle(
            "start → finish",
            marker="s",
            markersize=9,
            markerfacecolor=NEUTRAL["unknown"],
            markeredgecolor=NEUTRAL["ink"],
        )

    if detailed:
        ok = np.isfinite(scheduled)
        ax.scatter(
            scheduled[ok],
            y[ok],
            marker="o",
            s=22,
            c=list(colors[ok]),
            edgecolors=NEUTRAL["ink"],
            linewidths=0.6,
            zorder=4,
            gid="scheduled",
        )
        handle(
            "schedule() called",
            marker="o",
            markersize=6,
            markerfacecolor=NEUTRAL["unknown"],
            markeredgecolor=NEUTRAL["ink"],
        )
        due = vis["due"].to_numpy()
        ok = np.isfinite(due)
        ax.scatter(
            due[ok],
            y[ok] - _DUE_OFFSET,
            marker="v",
            s=26,
            c="white",
            edgecolors=NEUTRAL["ink"],
            linewidths=0.8,
            zorder=4,
            gid="due",
        )
        handle(
            "due time",
            marker="v",
            markersize=6,
            markerfacecolor="white",
            markeredgecolor=NEUTRAL["ink"],
        )

    event_t = vis["event_set"].to_numpy()
    ok = np.isfinite(event_t)
    if ok.any():
        ax.scatter(
            event_t[ok],
            y[ok],
            marker="*",
            s=150,
            c=list(colors[ok]),
            edgecolors=NEUTRAL["ink"],
            linewidths=0.6,
            zorder=5,
            gid="event_set",
        )
        handle(
            "Event set",
            marker="*",
            markersize=10,
            markerfacecolor=NEUTRAL["unknown"],
            markeredgecolor=NEUTRAL["ink"],
        )

    # -- marks from the raw rows: cancels, errors, drops ---------------------------------
    task = a["task_id"]

    def marks(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ys = y_of(task[mask])
        xs = t[mask]
        ok = np.isfinite(ys) & np.isfinite(xs)
        return xs[ok], ys[ok]

    xs, ys = marks(a.kind_is("cancel"))
    if len(xs):
        ax.scatter(
            xs,
            ys,
            marker="x",
            s=70,
            c=OUTCOME_COLORS["cancelled"],
            linewidths=2.0,
            zorder=6,
            gid="cancels",
        )
        handle(
            "cancel()",
            marker="x",
            markersize=8,
            markeredgewidth=2,
            color=OUTCOME_COLORS["cancelled"],
        )
    xs, ys = marks(a.kind_is("error"))
    if len(xs):
        ax.scatter(
            xs,
            ys,
            marker="$!$",
            s=260,
            c=NEUTRAL["ink"],
            linewidths=0.3,
            zorder=6,
            gid="errors",
            path_effects=[withStroke(linewidth=3, foreground="white")],
        )
        handle("error (run failed)", marker="$!$", markersize=12, color=NEUTRAL["ink"])
    xs, ys = marks(a.kind_is("shutdown") & (a["result"] == "dropped"))
    if len(xs):
        ax.scatter(
            xs,
            ys,
            marker="s",
            s=60,
            facecolors="none",
            edgecolors=OUTCOME_COLORS["dropped"],
            linewidths=1.8,
            zorder=6,
            gid="drops",
        )
        handle(
            "dropped at shutdown",
            marker="s",
            markersize=8,
            markerfacecolor="none",
            markeredgecolor=OUTCOME_COLORS["dropped"],
            markeredgewidth=1.8,
        )

    # -- duplicates: a diamond above the matched task's lane, arrow to its due time -----
    dup = a.kind_is("schedule") & np.isfinite(a["dup_of"])
    dup_y = y_of(a["dup_of"][dup])
    dup_x, dup_due, dup_case = t[dup], a["due"][dup] - origin, a["case"][dup]
    ok = np.isfinite(dup_y) & np.isfinite(dup_x)
    n_dup = int(ok.sum())
    if n_dup and detailed:
        dup_y, dup_x, dup_due, dup_case = dup_y[ok], dup_x[ok], dup_due[ok], dup_case[ok]
        extra_cases.update(int(c) for c in dup_case if np.isfinite(c))
        if color_by == "case":
            dup_colors = [
                case_color(int(c)) if np.isfinite(c) else NEUTRAL["unknown"] for c in dup_case
            ]
        else:
            dup_colors = [NEUTRAL["unknown"]] * n_dup
        top = dup_y - _DUP_OFFSET
        if n_dup <= MAX_ARROWS:
            for x0, y0, x1, y1 in zip(dup_x, top, dup_due, dup_y, strict=True):
                ax.annotate(
                    "",
                    xy=(x1, y1 - 0.05),
                    xytext=(x0, y0),
                    zorder=3,
                    gid="duplicate",
                    arrowprops={
                        "arrowstyle": "-|>",
                        "color": NEUTRAL["line"],
                        "lw": 0.9,
                        "shrinkA": 3,
                        "shrinkB": 2,
                        "connectionstyle": "arc3,rad=-0.15",
                    },
                )
        else:
            ax.add_collection(
                LineCollection(
                    np.stack([np.column_stack([dup_x, top]), np.column_stack([dup_due, dup_y])], 1),
                    colors=NEUTRAL["line"],
                    linewidths=0.6,
                    zorder=3,
                )
            )
        ax.scatter(
            dup_x,
            top,
            marker="D",
            s=30,
            c=dup_colors,
            edgecolors=NEUTRAL["ink"],
            linewidths=0.6,
            zorder=5,
            gid="duplicates",
        )
        handle(
            "duplicate request → task it matched",
            marker="D",
            markersize=6,
            markerfacecolor=NEUTRAL["unknown"],
            markeredgecolor=NEUTRAL["ink"],
        )

    # -- rejected requests ---------------------------------------------------------------
    if reject.any():
        rx = t[reject]
        rcase = a["case"][reject]
        extra_cases.update(int(c) for c in rcase if np.isfinite(c))
        rcolors = [
            case_color(int(c)) if np.isfinite(c) and color_by == "case" else NEUTRAL["unknown"]
            for c in rcase
        ]
        ax.scatter(
            rx,
            np.zeros(len(rx)),
            marker="X",
            s=70,
            c=rcolors,
            edgecolors=NEUTRAL["ink"],
            linewidths=0.6,
            zorder=5,
            gid="rejected",
        )
        handle(
            "rejected request",
            marker="X",
            markersize=8,
            markerfacecolor=case_color(1) if color_by == "case" else NEUTRAL["unknown"],
            markeredgecolor=NEUTRAL["ink"],
        )

    # -- x range, density row, now -----------------------------------------------------
    pieces = [t[np.isfinite(t)], runs["due"].to_numpy()]
    if x_now is not None:
        pieces.append(np.array([x_now]))
    every = np.concatenate(pieces)
    every = every[np.isfinite(every)]
    lo, hi = (float(every.min()), float(every.max())) if len(every) else (0.0, 1.0)
    span = hi - lo if hi > lo else 1.0
    x_lo, x_hi = lo - 0.03 * span, hi + 0.03 * span

    notes = []
    if density_y is not None:
        hidden_runs = runs.loc[~visible]
        when = (
            hidden_runs["started"].fillna(hidden_runs["event_set"]).fillna(hidden_runs["scheduled"])
        )
        when = when.to_numpy(dtype="float64")
        when = when[np.isfinite(when)]
        counts, _ = np.histogram(when, bins=DENSITY_BINS, range=(x_lo, x_hi))
        ax.imshow(
            counts[np.newaxis, :],
            extent=(x_lo, x_hi, density_y + 0.4, density_y - 0.4),
            aspect="auto",
            cmap="Greys",
            vmin=0,
            interpolation="nearest",
            zorder=1,
            gid="density",
        )
        notes.append(
            f"Aggregated: {n_tasks:,} tasks are more than {max_lanes} lanes can show; the first "
            f"{head:,} and last {tail:,} are drawn, the {hidden:,} in between form the grey "
            f"density row ({len(hidden_runs):,} runs, darker = more runs started)."
        )
    if not detailed:
        notes.append(
            f"Thinned: {len(vis):,} runs on the drawn lanes; schedule/due markers and "
            "duplicate links are left out (bars, starts, cancels and errors are drawn)."
        )
    if x_now is not None:
        ax.axvline(x_now, color=NEUTRAL["ink"], linestyle="--", linewidth=1.2, zorder=7, gid="now")
        ax.annotate(
            "now",
            xy=(x_now, 0),
            xycoords=("data", "axes fraction"),
            xytext=(3, 3),
            textcoords="offset points",
            fontsize=8,
            color=NEUTRAL["ink"],
        )

    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(n_rows - 0.5, -0.75)
    ax.set_yticks(np.arange(n_rows), labels=labels, fontsize=8)
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color=NEUTRAL["faint"], linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)
    ax.set_xlabel(time_axis_label(origin))
    n_runs = len(runs)
    set_title(
        ax,
        f"Task timeline: {n_tasks:,} task{'s' * (n_tasks != 1)}, "
        f"{n_runs:,} run{'s' * (n_runs != 1)}",
        "\n".join(notes),
    )

    # -- legends: colours, then markers ------------------------------------------------
    if color_by == "case":
        present = sorted({int(c) for c in vis["case"].dropna()} | extra_cases)
        color_handles = [Patch(color=CASE_COLORS[c], label=case_label(c)) for c in present]
        color_title = "decision case (colour)"
    else:
        present_o = set(vis["outcome"])
        color_handles = [
            Patch(color=OUTCOME_COLORS[o], label=o) for o in OUTCOMES if o in present_o
        ]
        color_title = "outcome (colour)"
    legend = ax.legend(
        handles=color_handles,
        title=color_title,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        title_fontsize=8,
        frameon=False,
    )
    ax.add_artist(legend)
    legend.set_clip_on(False)  # so that constrained layout makes room for it too
    ax.legend(
        handles=marker_handles,
        title="marks",
        loc="lower left",
        bbox_to_anchor=(1.01, 0.0),
        fontsize=8,
        title_fontsize=8,
        frameon=False,
    )
    return ax
