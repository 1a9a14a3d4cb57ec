"""The timeline's layers: one small drawer per kind of thing drawn.

Each drawer takes the :class:`Scene` (the Axes, the lane layout, the runs and
log rows in view, on the x axis's scale) and returns the legend entries it
used, so the legend lists exactly what is on the picture.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.lines import Line2D

from ...log.kinds import Kind
from ...time.scale import TimeScale
from .._axes import FONT, short_duration
from .._data import LogArrays
from ..colors import CASE_COLORS, NEUTRAL, OUTCOME_COLORS, case_color, text_color_on
from .lanes import LaneLayout
from .marks import MARKS

__all__ = ["LAYERS", "MAX_ARROWS", "MAX_SKIPPED", "Scene"]

#: Above this many duplicate requests, their links are plain lines (no arrow heads).
MAX_ARROWS = 150
#: The most skipped periodic slots drawn (a note counts the rest).
MAX_SKIPPED = 2000

BAR_HALF = 0.22
#: How far below its lane a periodic re-arm's decision dot is drawn (lane units).
REARM_OFFSET = 0.32
#: The most task labels written inside bars on thread lanes.
MAX_RUN_LABELS = 200
#: Time bins of the band that stands for the folded lanes.
BAND_BINS = 120


@dataclass
class Scene:
    """What every layer needs, with times already on the x axis's scale (``TimeScale.rel``)."""

    ax: Axes
    layout: LaneLayout
    lanes: str  # "task" or "thread"
    runs: pd.DataFrame  # runs in view, with a "y" column (NaN: folded into the band)
    colors: np.ndarray  # one per run
    color_by: str
    a: LogArrays
    scale: TimeScale
    t: np.ndarray  # every row's time, relative
    in_view: np.ndarray  # rows whose time is inside the x range
    x_end: float  # where runs still in flight end (now, or the last logged time)
    detailed: bool
    x_range: tuple[float, float] = (0.0, 1.0)
    axes_width_pt: float = 600.0
    notes: list[str] = field(default_factory=list)
    band_counts: np.ndarray | None = None

    def row_keys(self) -> np.ndarray:
        """Each log row's lane key: its task, or the thread that took the step."""
        return self.a["thread"] if self.lanes == "thread" else self.a["task_id"]

    def rows_on_lanes(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x, y, row index)`` of the rows in ``mask`` that are in view on a drawn lane."""
        rows = np.flatnonzero(mask & self.in_view)
        y = self.layout.y_of(self.row_keys()[rows])
        ok = np.isfinite(y)
        return self.t[rows[ok]], y[ok], rows[ok]

    def drawn(self) -> tuple[pd.DataFrame, np.ndarray]:
        """The runs on drawn lanes and their colours."""
        on = self.runs["y"].notna().to_numpy()
        return self.runs.loc[on], self.colors[on]


def run_colors(runs: pd.DataFrame, color_by: str) -> np.ndarray:
    """Each run's colour: its decision case, or its outcome."""
    if color_by == "case":
        mapping = {float(c): col for c, col in CASE_COLORS.items()}
        colors = runs["case"].astype("float64").map(mapping)
    else:
        colors = runs["outcome"].map(OUTCOME_COLORS)
    return colors.fillna(NEUTRAL["unknown"]).to_numpy(dtype=object)


def _segments(x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> Any:
    """``(n, 2, 2)`` line segments, as collections take them (an array; typed Any for the stubs)."""
    return np.stack([np.column_stack([x0, y0]), np.column_stack([x1, y1])], axis=1)


def _rectangles(x0: np.ndarray, x1: np.ndarray, y: np.ndarray, half: float) -> Any:
    """``(n, 4, 2)`` bar outlines, as ``PolyCollection`` takes them."""
    return np.stack(
        [
            np.column_stack([x0, y - half]),
            np.column_stack([x1, y - half]),
            np.column_stack([x1, y + half]),
            np.column_stack([x0, y + half]),
        ],
        axis=1,
    )


# -- layers ----------------------------------------------------------------------------------


def draw_waits(scene: Scene) -> list[Artist]:
    """Grey line from the decision (or dispatch) to the start, set, cancel, drop, or due time."""
    runs, _ = scene.drawn()
    scheduled = runs["scheduled"].to_numpy()
    wait_from = np.where(np.isfinite(scheduled), scheduled, runs["dispatched"].to_numpy())
    wait_to = (
        runs["started"]
        .fillna(runs["event_set"])
        .fillna(runs["cancelled"])
        .fillna(runs["dropped"])
        .fillna(runs["dispatched"])
        .fillna(runs["due"])
        .to_numpy()
    )
    y = runs["y"].to_numpy()
    ok = np.isfinite(wait_from) & np.isfinite(wait_to)
    scene.ax.add_collection(
        LineCollection(
            _segments(wait_from[ok], wait_to[ok], y[ok], y[ok]),
            colors=NEUTRAL["wait"],
            linewidths=1.2,
            zorder=1,
            gid="waiting",
        )
    )
    if not ok.any():
        return []
    return [Line2D([], [], color=NEUTRAL["wait"], lw=1.5, label="waiting")]


def draw_runs(scene: Scene) -> list[Artist]:
    """A bar from each run's start to its end (runs in flight: to now), an ink tick at the start.

    Back-to-back runs (a catch-up) stay apart: each bar has an outline and each
    start its own tick.
    """
    runs, colors = scene.drawn()
    started = runs["started"].to_numpy()
    ended = runs["ended"].fillna(scene.x_end).to_numpy()
    y = runs["y"].to_numpy()
    has_run = np.isfinite(started)
    if not has_run.any():
        return []
    x0, x1 = started[has_run], np.maximum(ended[has_run], started[has_run])
    scene.ax.add_collection(
        PolyCollection(
            _rectangles(x0, x1, y[has_run], BAR_HALF),
            facecolors=list(colors[has_run]),
            # white outlines: back-to-back runs (a catch-up) show as separate bars
            edgecolors="white" if scene.detailed else "none",
            linewidths=1.0,
            zorder=2,
            gid="runs",
        )
    )
    MARKS["starts"].draw(scene.ax, x0, y[has_run])
    if scene.lanes == "thread":
        _label_wide_bars(scene, runs.loc[has_run], x0, x1, y[has_run], colors[has_run])
    return [MARKS["starts"].handle()]


def _label_wide_bars(
    scene: Scene, runs: pd.DataFrame, x0: np.ndarray, x1: np.ndarray, y: np.ndarray, colors: Any
) -> None:
    """Write the task's label inside each bar wide enough to hold it (thread lanes)."""
    lo, hi = scene.x_range
    per_pt = (hi - lo) / max(scene.axes_width_pt * 0.75, 1.0)  # the layout narrows the Axes
    char_pt = 0.6 * FONT["small"]
    labels = runs["label"].to_numpy()
    ids = runs["task_id"].to_numpy()
    for i in np.argsort(x0 - x1)[:MAX_RUN_LABELS]:  # widest first
        left, right = max(x0[i], lo), min(x1[i], hi)
        text = f"{labels[i]} #{int(ids[i])}" if labels[i] else f"#{int(ids[i])}"
        if (right - left) / per_pt < (len(text) + 1) * char_pt:
            break
        scene.ax.text(
            (left + right) / 2,
            y[i],
            text,
            ha="center",
            va="center",
            fontsize=FONT["small"],
            color=text_color_on(str(colors[i])),
            clip_on=True,
            zorder=6,
            gid="run_label",
        )


def draw_decisions(scene: Scene) -> list[Artist]:
    """The ``schedule()`` call (a dot in the run's colour) and the due time (a white triangle)."""
    if not scene.detailed:
        return []
    runs, colors = scene.drawn()
    y = runs["y"].to_numpy()
    used: list[Artist] = []
    scheduled = runs["scheduled"].to_numpy()
    # a periodic re-arm is decided as a run ends: its dot goes under the lane, clear of the
    # next run's start tick
    rearm = (runs["origin"] == "periodic").to_numpy()
    ok = np.isfinite(scheduled)
    y_dot = np.where(rearm, y + REARM_OFFSET, y)
    if MARKS["scheduled"].draw(scene.ax, scheduled[ok], y_dot[ok], colors[ok]) is not None:
        used.append(MARKS["scheduled"].handle())
    due = runs["due"].to_numpy()
    ok = np.isfinite(due)
    if MARKS["due"].draw(scene.ax, due[ok], y[ok]) is not None:
        used.append(MARKS["due"].handle())
    used += _late_periodic_runs(scene, runs, due, y)
    return used


def _link(
    ax: Axes,
    start: tuple[float, float],
    end: tuple[float, float],
    gid: str,
    *,
    dashed: bool,
    bend: float,
) -> None:
    """A thin curved arrow ``start`` -> ``end`` (a duplicate to its task, a slot to its run).

    Clipped to the plot: an arc from the top lane would otherwise cross the note above it.
    """
    link = ax.annotate(
        "",
        xy=end,
        xytext=start,
        zorder=3,
        gid=gid,
        arrowprops={
            "arrowstyle": "-|>",
            "color": NEUTRAL["line"],
            "lw": 1.0 if dashed else 0.9,
            "linestyle": (0, (2, 1.5)) if dashed else "solid",
            "shrinkA": 4 if dashed else 3,
            "shrinkB": 1 if dashed else 2,
            "connectionstyle": f"arc3,rad={bend}",
        },
    )
    if link.arrow_patch is not None:
        link.arrow_patch.set_clip_box(ax.bbox)
        link.arrow_patch.set_clip_on(True)


def _late_periodic_runs(
    scene: Scene, runs: pd.DataFrame, due: np.ndarray, y: np.ndarray
) -> list[Artist]:
    """A dotted link from a periodic slot's due time to its run, when the run started late.

    A periodic task's runs share one lane, so a run that started half a period
    or more after its slot (a catch-up after an overrun) is linked to the slot
    it ran for.
    """
    started = runs["started"].to_numpy()
    period = runs["period"].to_numpy(dtype="float64")
    late = np.isfinite(started) & np.isfinite(period) & (started - due >= 0.5 * period)
    if not late.any():
        return []
    top = y[late] - MARKS["due"].y_offset
    for x0, y0, x1, y1 in zip(due[late][:MAX_ARROWS], top, started[late], y[late], strict=False):
        _link(scene.ax, (x0, y0), (x1, y1 - BAR_HALF), "late_link", dashed=True, bend=-0.35)
    dashes = (0, (2.0, 1.5))
    return [Line2D([], [], color=NEUTRAL["line"], lw=1.0, ls=dashes, label="late run ← its slot")]


def draw_events(scene: Scene) -> list[Artist]:
    """A star where an Event action was set."""
    runs, colors = scene.drawn()
    event_t = runs["event_set"].to_numpy()
    ok = np.isfinite(event_t)
    mark = MARKS["event_set"]
    if mark.draw(scene.ax, event_t[ok], runs["y"].to_numpy()[ok], colors[ok]) is None:
        return []
    return [mark.handle()]


def _row_marks(scene: Scene, mask: np.ndarray, name: str) -> list[Artist]:
    x, y, _ = scene.rows_on_lanes(mask)
    mark = MARKS[name]
    return [mark.handle()] if mark.draw(scene.ax, x, y) is not None else []


def draw_cancels(scene: Scene) -> list[Artist]:
    """``x`` where ``cancel()`` removed a task."""
    return _row_marks(scene, scene.a.kind_is(Kind.CANCEL), "cancels")


def draw_errors(scene: Scene) -> list[Artist]:
    """``!`` where a run raised."""
    return _row_marks(scene, scene.a.kind_is(Kind.ERROR), "errors")


def draw_drops(scene: Scene) -> list[Artist]:
    """A hollow square where shutdown dropped a pending task."""
    a = scene.a
    return _row_marks(scene, a.kind_is(Kind.SHUTDOWN) & (a["result"] == "dropped"), "drops")


def draw_skipped(scene: Scene) -> list[Artist]:
    """Every slot a periodic task skipped (``missed`` rows), at the slot's due time."""
    a = scene.a
    rows = np.flatnonzero(a.kind_is(Kind.MISSED))
    if not len(rows):
        return []
    y = scene.layout.y_of(a["task_id"][rows])
    ok = np.isfinite(y) & np.isfinite(a["due"][rows]) & np.isfinite(a["period"][rows])
    rows, y = rows[ok], y[ok]
    counts = np.nan_to_num(a["missed"][rows], nan=1.0).astype("int64").clip(min=1)
    total = int(counts.sum())
    drawn = np.minimum(counts, MAX_SKIPPED // max(len(rows), 1) + 1)
    first = scene.scale.rel(a["due"][rows])
    xs = np.concatenate(
        [f + np.arange(k) * p for f, k, p in zip(first, drawn, a["period"][rows], strict=True)]
        or [np.empty(0)]
    )
    ys = np.repeat(y, drawn)
    lo, hi = scene.x_range
    inside = (xs >= lo) & (xs <= hi)
    if int(drawn.sum()) < total:
        scene.notes.append(
            f"Skipped slots: {total:,} in all; the first {int(drawn.sum()):,} are drawn."
        )
    mark = MARKS["skipped"]
    return [mark.handle()] if mark.draw(scene.ax, xs[inside], ys[inside]) is not None else []


def draw_duplicates(scene: Scene) -> list[Artist]:
    """A diamond just above the lane of the task a duplicate request matched, arrow to its due."""
    if not scene.detailed:
        return []
    a = scene.a
    mask = a.kind_is(Kind.SCHEDULE) & np.isfinite(a["dup_of"]) & scene.in_view
    rows = np.flatnonzero(mask)
    y = scene.layout.y_of(a["dup_of"][rows])
    ok = np.isfinite(y)
    rows, y = rows[ok], y[ok]
    if not len(rows):
        return []
    x, due = scene.t[rows], scene.scale.rel(a["due"][rows])
    cases = a["case"][rows]
    colors = [
        case_color(int(c)) if np.isfinite(c) and scene.color_by == "case" else NEUTRAL["unknown"]
        for c in cases
    ]
    mark = MARKS["duplicates"]
    top = y - mark.y_offset
    if len(rows) <= MAX_ARROWS:
        for x0, y0, x1, y1 in zip(x, top, due, y, strict=True):
            _link(scene.ax, (x0, y0), (x1, y1 - 0.05), "duplicate", dashed=False, bend=-0.15)
    else:
        scene.ax.add_collection(
            LineCollection(
                _segments(x, due, top, y), colors=NEUTRAL["line"], linewidths=0.6, zorder=3
            )
        )
    mark.draw(scene.ax, x, y, colors)
    return [mark.handle()]


def draw_rejected(scene: Scene) -> list[Artist]:
    """Requests refused before anything was stored, on their own row at the top."""
    if not scene.layout.reject_row:
        return []
    a = scene.a
    rows = np.flatnonzero(a.kind_is(Kind.REJECT) & scene.in_view)
    cases = a["case"][rows]
    colors = [
        case_color(int(c)) if np.isfinite(c) and scene.color_by == "case" else NEUTRAL["unknown"]
        for c in cases
    ]
    mark = MARKS["rejected"]
    drawn = mark.draw(scene.ax, scene.t[rows], np.zeros(len(rows)), colors)
    return [mark.handle()] if drawn is not None else []


def _nice_step(raw: float) -> float:
    """The 1-2-5 step at least ``raw``: ``_nice_step(0.0194) == 0.02``."""
    if not np.isfinite(raw) or raw <= 0:
        return 1.0
    power = 10.0 ** np.floor(np.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * power >= raw * (1 - 1e-9):
            return float(factor * power)
    return float(10.0 * power)


def draw_band(scene: Scene) -> list[Artist]:
    """The folded lanes' activity: runs started (or Events set) per time bin, scaled to the band.

    The band's label gives the bin width and the tallest bar's count, so the
    bars can be read as numbers.
    """
    band = scene.layout.band
    if band is None:
        return []
    hidden = scene.runs.loc[scene.runs["y"].isna()]
    when = hidden["started"].fillna(hidden["event_set"]).to_numpy(dtype="float64")
    when = when[np.isfinite(when)]
    lo, hi = scene.x_range
    width = _nice_step((hi - lo) / BAND_BINS)
    edges = np.arange(np.floor(lo / width), np.ceil(hi / width) + 1) * width
    counts, edges = np.histogram(when, bins=edges)
    peak = int(counts.max()) if len(counts) else 0
    base = band.top + band.rows - 0.55  # rows grow downwards: bars rise towards smaller y
    height = band.rows - 0.3
    scene.ax.stairs(
        base - height * counts / max(peak, 1),
        edges,
        baseline=base,
        fill=True,
        color=NEUTRAL["unknown"],
        zorder=1,
        gid="density",
    )
    scene.ax.axhspan(band.top - 0.45, base, color=NEUTRAL["faint"], alpha=0.5, zorder=0, lw=0)
    scene.band_counts = counts
    kind = "tasks" if scene.lanes == "task" else "threads"
    scene.layout.labels[band.centre] = (
        f"+{band.hidden:,} more {kind}\n"
        f"bars: runs started per {short_duration(width)}\n"
        f"(tallest bar: {peak:,})"
    )
    scene.notes.append(
        f"Aggregated: {len(scene.layout.keys):,} {kind} are more than the lanes that fit; "
        f"the {band.hidden:,} in the middle form the grey band ({len(hidden):,} runs)."
    )
    return []


Layer = Callable[[Scene], list[Artist]]

#: The layers of each lane view, bottom to top; their legend entries in this order.
LAYERS: dict[str, tuple[Layer, ...]] = {
    "task": (
        draw_band,
        draw_waits,
        draw_runs,
        draw_decisions,
        draw_events,
        draw_cancels,
        draw_errors,
        draw_drops,
        draw_skipped,
        draw_duplicates,
        draw_rejected,
    ),
    "thread": (draw_band, draw_runs, draw_events, draw_errors),
}
