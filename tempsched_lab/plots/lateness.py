"""Lateness: how long after its due time each run started, and where that time went."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.transforms import blended_transform_factory

from ._axes import axes_or_new, show_message
from ._data import LogArrays, format_duration, time_unit
from .colors import MEASURE_COLORS, NEUTRAL

__all__ = ["lateness_values", "plot_lateness"]

#: (measure, row label), top row first; the measures of :func:`tempsched_lab.lateness_summary`.
MEASURES: tuple[tuple[str, str], ...] = (
    ("total", "total\ndue → start"),
    ("scheduling", "scheduling\ndue → dispatch"),
    ("queueing", "queueing\ndispatch → start"),
)


def lateness_values(frame: Any) -> dict[str, np.ndarray]:
    """The three lateness measures in seconds, NaNs dropped.

    ``total`` = due -> start and ``queueing`` = dispatch -> start come from the
    ``start`` rows, ``scheduling`` = due -> dispatch from the ``dispatch`` rows
    (so Events, which are set at dispatch, count there only), exactly as in
    :func:`tempsched_lab.lateness_summary`.
    """
    a = frame if isinstance(frame, LogArrays) else LogArrays.of(frame)
    start, dispatch = a.kind_is("start"), a.kind_is("dispatch")
    values = {
        "total": a["lateness"][start],
        "scheduling": a["lateness"][dispatch],
        "queueing": a["queue_delay"][start],
    }
    return {k: v[np.isfinite(v)] for k, v in values.items()}


def plot_lateness(frame: Any, *, ax: Axes | None = None, bins: int = 40) -> Axes:
    """Histograms of lateness: total (due -> start), and its two parts, one row each.

    *Scheduling* lateness (due -> dispatch) is how late the scheduler noticed
    the due time (a sleeping worker's wake-up, a timing wheel's tick);
    *queueing* delay (dispatch -> start) is the wait for a free executor. Each
    row is a histogram scaled to its tallest bin, with the median (solid line)
    and the 99th percentile (dashed) marked and their values written on the
    right. Values are in ms, or µs when every value is under a millisecond
    (s when some exceed 10 s).

    Args:
        frame: an event-log frame, an ``EventLog`` or a ``Scheduler``.
        ax: draw into this Axes; by default a new Figure is made.
        bins: histogram bins (shared by the three rows).

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab.plots import example_frame
    >>> ax = plot_lateness(example_frame())
    >>> ax.get_xlabel()
    'lateness (ms)'
    """
    values = lateness_values(frame)
    ax = axes_or_new(ax, (9.0, 4.2))
    title = "Lateness: how long after its due time each run started"
    if not any(len(v) for v in values.values()):
        ax.set_title(title)
        show_message(ax, "no runs yet")
        return ax
    everything = np.concatenate(list(values.values()))
    unit, scale = time_unit(everything)
    lo, hi = float(everything.min()) * scale, float(everything.max()) * scale
    n_bins = max(2, int(bins))
    if hi - lo < 1e-9:  # every value the same (a virtual clock): one bin centred on it
        lo, hi, n_bins = lo - 1.0, hi + 1.0, 41
    edges = np.linspace(lo, hi, n_bins + 1)
    widths = np.diff(edges)
    label_at = blended_transform_factory(ax.transAxes, ax.transData)
    n_rows = len(MEASURES)
    for i, (measure, _) in enumerate(MEASURES):
        y = n_rows - 1 - i
        data = values[measure] * scale
        color = MEASURE_COLORS[measure]
        ax.axhline(y - 0.42, color=NEUTRAL["faint"], linewidth=0.8, zorder=0)
        if not len(data):
            ax.text(
                0.5,
                y,
                "no values",
                transform=label_at,
                ha="center",
                va="center",
                fontsize=8,
                color=NEUTRAL["unknown"],
            )
            continue
        counts, _ = np.histogram(data, bins=edges)
        heights = 0.78 * counts / max(int(counts.max()), 1)
        ax.bar(
            edges[:-1],
            heights,
            width=widths,
            bottom=y - 0.42,
            align="edge",
            color=color,
            edgecolor="white",
            linewidth=0.4,
            zorder=2,
            gid=f"hist:{measure}",
        )
        median = float(np.median(data))
        p99 = float(np.percentile(data, 99))
        ax.plot(
            [median, median],
            [y - 0.45, y + 0.42],
            color=NEUTRAL["ink"],
            linewidth=1.8,
            zorder=3,
            gid=f"median:{measure}",
        )
        ax.plot(
            [p99, p99],
            [y - 0.45, y + 0.42],
            color=NEUTRAL["ink"],
            linewidth=1.4,
            linestyle=(0, (3, 2)),
            zorder=3,
            gid=f"p99:{measure}",
        )
        ax.annotate(
            "median",
            xy=(median, y + 0.42),
            xytext=(-2, 0),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=7,
            color=NEUTRAL["ink"],
        )
        ax.annotate(
            "p99",
            xy=(p99, y + 0.42),
            xytext=(2, 0),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=7,
            color=NEUTRAL["ink"],
        )
        stats = (
            f"n = {len(data):,}\n"
            f"median {format_duration(median / scale, unit, scale)}\n"
            f"p99 {format_duration(p99 / scale, unit, scale)}"
        )
        ax.text(
            1.01,
            y,
            stats,
            transform=label_at,
            ha="left",
            va="center",
            fontsize=8,
            color=NEUTRAL["ink"],
            gid=f"stats:{measure}",
        )
    pad = 0.02 * (hi - lo)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(-0.55, n_rows - 0.45)
    ax.set_yticks(range(n_rows)[::-1], labels=[label for _, label in MEASURES], fontsize=8)
    ax.tick_params(axis="y", length=0)
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)
    ax.grid(axis="x", color=NEUTRAL["faint"], linewidth=0.8)
    ax.set_axisbelow(True)
    ax.set_xlabel(f"lateness ({unit})")
    ax.set_ylabel("runs per bin\n(each row scaled to its tallest bin)", fontsize=8)
    ax.set_title(title, loc="left", pad=16)
    handles = [
        Line2D([], [], color=NEUTRAL["ink"], linewidth=1.8, label="median"),
        Line2D([], [], color=NEUTRAL["ink"], linewidth=1.4, linestyle=(0, (3, 2)), label="p99"),
        *(Patch(color=MEASURE_COLORS[m], label=m) for m, _ in MEASURES),
    ]
    ax.legend(
        handles=handles,
        loc="lower right",
        fontsize=7,
        ncols=5,
        frameon=False,
        bbox_to_anchor=(1.0, 1.0),
        borderaxespad=0.2,
    )
    return ax
