"""Lateness: how long after its due time each run started, and where that time went."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from ..log.kinds import Kind
from ..time.scale import fmt_duration
from ._axes import FONT, axes_or_new, set_title, show_message
from ._data import LogArrays, time_unit
from .colors import MEASURE_COLORS, NEUTRAL

__all__ = ["lateness_values", "plot_lateness"]

#: (measure, row label), top row first; the measures of :func:`tempsched_lab.lateness_summary`.
MEASURES: tuple[tuple[str, str], ...] = (
    ("total", "total\ndue → start"),
    ("scheduling", "scheduling\ndue → dispatch"),
    ("queueing", "queueing\ndispatch → start"),
)
#: The narrowest x range drawn (s): a log whose runs were all equally late (one run, a
#: virtual clock) gets an axis this wide instead of a meaningless ±1 µs.
MIN_SPAN_S = 1e-3
_MEDIAN_STYLE = {"color": NEUTRAL["ink"], "linewidth": 1.8}
_P99_STYLE = {"color": NEUTRAL["ink"], "linewidth": 1.4, "linestyle": (0, (3, 2))}


def lateness_values(frame: Any) -> dict[str, np.ndarray]:
    """The three lateness measures in seconds, NaNs dropped.

    ``total`` = due -> start and ``queueing`` = dispatch -> start come from the
    ``start`` rows, ``scheduling`` = due -> dispatch from the ``dispatch`` rows
    (so Events, which are set at dispatch, count there only), exactly as in
    :func:`tempsched_lab.lateness_summary`.
    """
    a = frame if isinstance(frame, LogArrays) else LogArrays.of(frame)
    start, dispatch = a.kind_is(Kind.START), a.kind_is(Kind.DISPATCH)
    values = {
        "total": a["lateness"][start],
        "scheduling": a["lateness"][dispatch],
        "queueing": a["queue_delay"][start],
    }
    return {k: v[np.isfinite(v)] for k, v in values.items()}


def _x_range(everything: np.ndarray) -> tuple[float, float]:
    """The x range in seconds: the data, or at least :data:`MIN_SPAN_S` wide, never below 0."""
    lo, hi = float(everything.min()), float(everything.max())
    if hi - lo >= MIN_SPAN_S / 10:
        return lo, hi
    span = max(abs(hi) * 0.5, MIN_SPAN_S)
    lo = max(0.0, (lo + hi) / 2 - span / 2) if lo >= 0 else (lo + hi) / 2 - span / 2
    return lo, lo + span


def _row(
    row: Axes, data: np.ndarray, edges: np.ndarray, measure: str, label: str, unit_scale: float
) -> None:
    row.set_ylabel(label, rotation=0, ha="right", va="center", fontsize=FONT["small"])
    row.yaxis.set_major_locator(MaxNLocator(nbins=2, integer=True, min_n_ticks=1))
    row.tick_params(labelsize=FONT["small"])
    for spine in ("top", "right"):
        row.spines[spine].set_visible(False)
    row.grid(axis="x", color=NEUTRAL["faint"], linewidth=0.8)
    row.set_axisbelow(True)
    if not len(data):
        row.set_yticks([])
        row.text(
            0.5,
            0.5,
            "no values",
            transform=row.transAxes,
            ha="center",
            va="center",
            fontsize=FONT["small"],
            color=NEUTRAL["line"],
        )
        return
    scaled = data * unit_scale
    counts, _ = np.histogram(scaled, bins=edges)
    row.bar(
        edges[:-1],
        counts,
        width=np.diff(edges),
        align="edge",
        color=MEASURE_COLORS[measure],
        edgecolor="white",
        linewidth=0.4,
        zorder=2,
        gid=f"hist:{measure}",
    )
    row.set_ylim(0, max(int(counts.max()), 1) * 1.15)
    median, p99 = float(np.median(data)), float(np.percentile(data, 99))
    row.axvline(median * unit_scale, zorder=3, gid=f"median:{measure}", **_MEDIAN_STYLE)  # type: ignore[arg-type]
    row.axvline(p99 * unit_scale, zorder=3, gid=f"p99:{measure}", **_P99_STYLE)  # type: ignore[arg-type]
    row.text(
        1.02,
        0.5,
        f"n = {len(data):,}\n━ median {fmt_duration(median)}\n┅ p99 {fmt_duration(p99)}",
        transform=row.transAxes,
        ha="left",
        va="center",
        fontsize=FONT["small"],
        color=NEUTRAL["ink"],
        linespacing=1.3,
        gid=f"stats:{measure}",
    )


def plot_lateness(frame: Any, *, ax: Axes | None = None, bins: int = 40) -> Axes:
    """Histograms of lateness: total (due -> start), and its two parts, one row each.

    *Scheduling* lateness (due -> dispatch) is how late the scheduler noticed
    the due time (a sleeping worker's wake-up, a timing wheel's tick);
    *queueing* delay (dispatch -> start) is the wait for a free executor. Each
    row is a histogram with its own count axis (runs per bin); the solid line
    is the median and the dashed one the 99th percentile, whose values are
    written on the right. The x axis is in ms, or µs when every value is under
    a millisecond (s when some exceed 10 s), and at least 1 ms wide.

    ``ax`` becomes a frame holding the title; the three rows are its
    ``ax.child_axes`` (top to bottom), sharing one x axis.

    Args:
        frame: an event-log frame, an ``EventLog`` or a ``Scheduler``.
        ax: draw into this Axes; by default a new Figure is made.
        bins: histogram bins (shared by the three rows).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_lateness(example_frame())
    >>> [row.get_ylabel().split()[0] for row in ax.child_axes], ax.child_axes[-1].get_xlabel()
    (['total', 'scheduling', 'queueing'], 'lateness (ms)')
    """
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
        raise ValueError(f"bins={bins!r}: expected an int >= 2")
    values = lateness_values(frame)
    ax = axes_or_new(ax, (9.0, 4.6))
    title = "Lateness: how long after its due time each run started"
    if not any(len(v) for v in values.values()):
        ax.set_title(title, fontsize=FONT["title"])
        show_message(ax, "no runs yet")
        return ax
    lo, hi = _x_range(np.concatenate(list(values.values())))
    unit, unit_scale = time_unit(np.array([lo, hi]))
    edges = np.linspace(lo * unit_scale, hi * unit_scale, bins + 1)
    ax.set_axis_off()
    gap = 0.06
    height = (1.0 - 2 * gap) / len(MEASURES)
    rows: list[Axes] = []
    for i, (measure, label) in enumerate(MEASURES):
        bottom = 1.0 - (i + 1) * height - i * gap
        row = ax.inset_axes((0.0, bottom, 1.0, height), sharex=rows[0] if rows else None)
        _row(row, values[measure], edges, measure, label, unit_scale)
        rows.append(row)
    pad = 0.02 * (edges[-1] - edges[0])
    rows[0].set_xlim(edges[0] - pad, edges[-1] + pad)
    for row in rows[:-1]:
        row.tick_params(labelbottom=False)
    rows[-1].set_xlabel(f"lateness ({unit})", fontsize=FONT["label"])
    set_title(
        ax,
        title,
        "Bars: runs per bin; each row has its own count axis. ━ median, ┅ 99th percentile.",
        loc="left",
    )
    return ax
