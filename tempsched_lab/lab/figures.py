"""Figures that compare runs: lateness distributions, a measure against a parameter, case mixes.

Each function takes an experiment's results (or the :class:`~.experiment.Experiment`
itself), an optional ``ax=`` and ``where=`` (a filter: ``{"executor": "pool"}``),
and returns the Axes, like every plot of :mod:`tempsched_lab.plots`, whose
conventions they keep: one palette (case colours for decision cases only, greys
for everything else, told apart by line style and marker, so a figure also
reads in black and white), durations written with units (``ms``, ``µs``),
texts no smaller than the readable floor, one legend right of the plot.

=============================  ===========================================================
:func:`plot_metric`            a measure against a grid parameter, one line per group
                               (the median over repeats), a band for their spread
:func:`plot_lateness_ecdf`     the lateness distribution of each group (an ECDF, or its
                               tail on a log scale)
:func:`plot_case_mix`          the share of each decision case 1-8, one bar per group
=============================  ===========================================================

>>> from tempsched_lab.lab import Experiment, poisson, exponential
>>> e = Experiment(poisson, grid={"queue": ["heap", "wheel"], "rate": [100, 300]},
...                fixed={"horizon": 0.5, "duration": exponential(0.002)}, seed=2)
>>> _ = e.run(progress=None)
>>> ax = plot_metric(e, "lateness_p99", x="rate", by="queue")
>>> [t.get_text() for t in ax.get_legend().get_texts()]
['heap', 'wheel']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from ..core.decision import Case
from ..plots._axes import FONT, axes_or_new, axes_size_pt, set_title, show_message
from ..plots._data import time_unit
from ..plots._legend import Section, add_legend
from ..plots.colors import CASE_COLORS, NEUTRAL, case_label, text_color_on, tint
from .metrics import CASE_COLUMNS, TIME_METRICS

if TYPE_CHECKING:
    import pandas as pd

    from .experiment import Experiment

__all__ = ["GROUP_STYLES", "group_style", "plot_case_mix", "plot_lateness_ecdf", "plot_metric"]

#: (colour, line style, marker) of the n-th group: greys of distinct lightness, never a case
#: colour, and a second and third cue (dashes, marker) so that the lines read in print too.
GROUP_STYLES: tuple[tuple[str, Any, str], ...] = (
    ("#1A1A1A", "solid", "o"),
    ("#6E6E6E", (0, (6, 2)), "s"),
    ("#A0A0A0", (0, (1.5, 1.5)), "^"),
    ("#3C3C3C", (0, (4, 1.5, 1, 1.5)), "D"),
    ("#888888", "solid", "v"),
    ("#555555", (0, (1.5, 1.5)), "P"),
)

#: How parameters and measures are named on axes (others: their key, underscores as spaces).
LABELS: dict[str, str] = {
    "rate": "arrival rate (tasks/s)",
    "max_workers": "pool size (threads)",
    "queue": "queue design",
    "executor": "executor",
    "misfire": "misfire policy",
    "resolution": "resolution (s)",
    "lateness_p50": "median lateness",
    "lateness_p99": "99th-percentile lateness",
    "lateness_max": "largest lateness",
    "lateness_mean": "mean lateness",
    "queue_delay_p99": "99th-percentile queueing delay",
    "max_queue_depth": "largest queue depth (tasks)",
    "mean_queue_depth": "mean queue depth (tasks)",
    "queue_steps": "queue steps (lines run)",
    "wall": "wall time of a run",
    "virtual_time": "virtual time of a run",
}


def group_style(n: int) -> tuple[str, Any, str]:
    """The (colour, line style, marker) of the n-th group (cycling)."""
    return GROUP_STYLES[n % len(GROUP_STYLES)]


def _label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


def _results(source: Any) -> pd.DataFrame:
    import pandas as pd

    results = source.results if hasattr(source, "results") else source
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"expected an Experiment or its results frame, got {type(source).__name__}")
    return results


def _where(results: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    if not where:
        return results
    mask = np.ones(len(results), dtype=bool)
    for key, value in where.items():
        if key not in results.columns:
            raise KeyError(f"where={{{key!r}: ...}}: no column {key!r} in the results")
        mask &= (results[key] == value).to_numpy()
    return results.loc[mask]


def _groups(results: pd.DataFrame, by: str | Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    keys = [by] if isinstance(by, str) else list(by)
    for key in keys:
        if key not in results.columns:
            raise KeyError(f"by={by!r}: no column {key!r} in the results")
    out = []
    for values, rows in results.groupby(keys, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        out.append((" · ".join(str(v) for v in values), rows))
    return out


def _others_vary(results: pd.DataFrame, used: Sequence[str]) -> list[str]:
    """Grid keys besides ``used`` (and repeats) that take several values in ``results``."""
    keys = results.attrs.get("keys") or list(
        results.columns[: list(results.columns).index("repeat")]
    )
    return [k for k in keys if k not in used and results[k].astype(str).nunique() > 1]


def _note(text: str, where: Mapping[str, Any] | None) -> str:
    """A figure's note, with the filter it was drawn under."""
    if where:
        text += "; " + ", ".join(f"{k} = {v}" for k, v in where.items())
    return text


def _runs_per_group(groups: list[tuple[str, pd.DataFrame]]) -> str:
    """``2``, or ``2 to 4`` when the groups hold different numbers of runs."""
    sizes = sorted({len(rows) for _, rows in groups}) or [0]
    return str(sizes[0]) if sizes[0] == sizes[-1] else f"{sizes[0]} to {sizes[-1]}"


def _finish(
    ax: Axes,
    xlabel: str,
    ylabel: str | None,
    by: str | Sequence[str],
    handles: list[Any],
    marks: list[Any],
) -> None:
    """Axis labels, ticks, a faint grid, no top and right spines, the one legend."""
    ax.set_xlabel(xlabel, fontsize=FONT["label"])
    if ylabel is not None:
        ax.set_ylabel(ylabel, fontsize=FONT["label"])
    ax.tick_params(labelsize=FONT["body"])
    ax.grid(color=NEUTRAL["faint"], linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    by_name = by if isinstance(by, str) else " · ".join(by)
    sections = [Section(_label(by_name), handles)]
    if marks:
        sections.append(Section("marks", marks))
    add_legend(ax, sections, fontsize=FONT["body"])


def plot_metric(
    results: Any,
    metric: str = "lateness_p99",
    *,
    x: str,
    by: str | Sequence[str] = "queue",
    where: Mapping[str, Any] | None = None,
    target: float | None = None,
    logx: bool | None = None,
    logy: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """``metric`` against grid parameter ``x``: one line per ``by`` group, the median over repeats.

    The shaded band spans the repeats' smallest to largest value (no band with
    one repeat). Other grid keys must be fixed by ``where`` (a line must not mix
    configurations silently). Durations are drawn in ms or µs; ``target`` adds a
    reference line (e.g. a lateness budget, seconds for a duration). A numeric
    ``x`` spanning more than a decade gets a log axis (``logx`` forces it).

    Args:
        results: an :class:`~.experiment.Experiment` or its results frame.
        metric: a column of the results (:data:`~.metrics.METRICS`, ``wall``).
        x: the grid parameter on the x axis.
        by: the column(s) whose values are the lines.
        where: keep only rows with these values.
        target: a horizontal reference line at this value.
        logx, logy: log axes.
        ax: draw into this Axes; by default a new Figure is made.
    """
    import pandas as pd

    frame = _where(_results(results), where)
    for key in (metric, x):
        if key not in frame.columns:
            raise KeyError(f"{key!r}: not a column of the results ({list(frame.columns)})")
    ax = axes_or_new(ax, (9.0, 5.0))
    title = f"{_label(metric)[0].upper()}{_label(metric)[1:]} against {_label(x)}"
    if not len(frame):
        ax.set_title(title, fontsize=FONT["title"])
        show_message(ax, "no runs to show")
        return ax
    used = [x, *([by] if isinstance(by, str) else by)]
    mixed = _others_vary(frame, used)
    if mixed:
        raise ValueError(
            f"the results vary in {mixed} too: fix them with where={{...}} or add them to by="
        )
    values = frame[metric].to_numpy(dtype="float64", na_value=np.nan)
    is_time = metric in TIME_METRICS
    unit, scale = time_unit(values) if is_time else ("", 1.0)
    xs_all = frame[x]
    numeric = pd.api.types.is_numeric_dtype(xs_all.dtype)
    categories = list(dict.fromkeys(xs_all.astype(str))) if not numeric else []
    handles: list[Any] = []
    repeats = int(frame.groupby(used, dropna=False).size().max())
    for n, (name, rows) in enumerate(_groups(frame, by)):
        color, dash, marker = group_style(n)
        stats = rows.groupby(x, sort=True)[metric].agg(["median", "min", "max"])
        if numeric:
            xs = stats.index.to_numpy(dtype="float64")
        else:
            xs = np.array([categories.index(str(v)) for v in stats.index], dtype="float64")
            stats = stats.iloc[np.argsort(xs, kind="stable")]  # in the order the grid gave them
            xs = np.sort(xs)
        med, lo, hi = (stats[c].to_numpy(dtype="float64") * scale for c in ("median", "min", "max"))
        if repeats > 1:
            ax.fill_between(xs, lo, hi, color=tint(color, 0.75), alpha=0.6, linewidth=0, zorder=1)
        (line,) = ax.plot(
            xs,
            med,
            color=color,
            linestyle=dash,
            marker=marker,
            markersize=6,
            linewidth=1.8,
            label=name,
            zorder=3,
            gid=f"group:{name}",
        )
        handles.append(line)
    marks: list[Any] = []
    if target is not None:
        ax.axhline(
            target * scale,
            color=NEUTRAL["line"],
            linestyle=(0, (2, 2)),
            linewidth=1.2,
            zorder=2,
            gid="target",
        )
        shown = f"{target * scale:g} {unit}".strip()
        marks.append(
            Line2D([], [], color=NEUTRAL["line"], linestyle=(0, (2, 2)), label=f"target: {shown}")
        )
    if repeats > 1:
        marks.append(
            Patch(
                color=tint(GROUP_STYLES[0][0], 0.75),
                alpha=0.6,
                label=f"min to max of {repeats} repeats",
            )
        )
    if numeric:
        positive = xs_all.to_numpy(dtype="float64")
        wide = positive.min() > 0 and positive.max() / positive.min() > 10
        if logx if logx is not None else wide:
            ax.set_xscale("log")
        tried = np.unique(positive)
        if len(tried) <= 12:  # ticks at the values the grid tried, written plainly
            ax.set_xticks(tried, labels=[f"{v:,g}" for v in tried])
            ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_xticks(range(len(categories)), labels=categories)
    if logy:
        shown = values[np.isfinite(values)] * scale
        positive = shown[shown > 0]
        if len(positive) and (shown <= 0).any():
            # zeros (no lateness at all) have no place on a log scale: linear below the
            # smallest positive decade, so that they sit at the bottom, drawn as 0
            floor = 10 ** np.floor(np.log10(positive.min()))
            ax.set_yscale("symlog", linthresh=floor, linscale=0.5)
            ax.set_ylim(bottom=0)
        else:
            ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ylabel = f"{_label(metric)} ({unit})" if is_time else _label(metric)
    _finish(ax, _label(x), ylabel, by, handles, marks)
    set_title(ax, title, _note(f"line: median over {repeats} repeat(s)", where), share=0.7)
    return ax


def _pooled(experiment: Experiment, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Values and weights of the runs' thinned samples, each run weighing as its runs."""
    values, weights = [], []
    for index in rows.index:
        sample, size = experiment.lateness_sample(int(index))
        if len(sample):
            values.append(sample)
            weights.append(np.full(len(sample), size / len(sample)))
    if not values:
        return np.array([]), np.array([])
    return np.concatenate(values), np.concatenate(weights)


def plot_lateness_ecdf(
    experiment: Experiment,
    *,
    by: str | Sequence[str] = "queue",
    where: Mapping[str, Any] | None = None,
    tail: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """The lateness distribution of each ``by`` group: the share of runs started within x.

    The runs of a group (its repeats, and any parameter ``where`` leaves free)
    are pooled, each run weighing as many runs as it made. With ``tail=True``
    the y axis is the share started *later* than x, on a log scale: the tail,
    where designs differ, in view. Needs the experiment's lateness samples
    (``keep_samples=True``, the default).
    """
    results = _where(_results(experiment), where)
    ax = axes_or_new(ax, (9.0, 5.0))
    title = "Lateness: how soon after its due time each run started"
    pooled = [(name, *_pooled(experiment, rows)) for name, rows in _groups(results, by)]
    pooled = [(name, v, w) for name, v, w in pooled if len(v)]
    if not pooled:
        ax.set_title(title, fontsize=FONT["title"])
        show_message(ax, "no runs to show")
        return ax
    unit, scale = time_unit(np.concatenate([v for _, v, _ in pooled]))
    handles = []
    smallest = 1.0
    for n, (name, values, weights) in enumerate(pooled):
        order = np.argsort(values, kind="stable")
        xs = values[order] * scale
        share = np.cumsum(weights[order]) / weights.sum()
        color, dash, _marker = group_style(n)
        if tail:
            later = np.clip(1.0 - share, 0.0, None)
            keep = later > 0
            smallest = min(smallest, float(later[keep].min()) if keep.any() else 1.0)
            xs, ys = xs[keep], later[keep]
        else:  # from 0 at the smallest value up
            xs, ys = np.concatenate([[xs[0]], xs]), np.concatenate([[0.0], share])
        (line,) = ax.step(
            xs,
            ys,
            where="post",
            color=color,
            linestyle=dash,
            linewidth=1.8,
            label=name,
            gid=f"group:{name}",
        )
        handles.append(line)
    marks = []
    if tail:
        ax.set_yscale("log")
        ax.set_ylim(max(smallest / 2, 1e-7), 1.0)
        ax.set_ylabel("share of runs started later", fontsize=FONT["label"])
        ax.axhline(0.01, color=NEUTRAL["line"], linestyle=(0, (2, 2)), linewidth=1.0, gid="p99")
        marks.append(
            Line2D(
                [], [], color=NEUTRAL["line"], linestyle=(0, (2, 2)), label="1 % (the p99 level)"
            )
        )
    else:
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("share of runs started within x", fontsize=FONT["label"])
        ax.axhline(0.99, color=NEUTRAL["line"], linestyle=(0, (2, 2)), linewidth=1.0, gid="p99")
        marks.append(
            Line2D(
                [], [], color=NEUTRAL["line"], linestyle=(0, (2, 2)), label="99 % (the p99 level)"
            )
        )
    ax.set_xlim(left=0)
    _finish(ax, f"lateness, due → start ({unit})", None, by, handles, marks)
    runs = _runs_per_group(_groups(results, by))
    note = f"each line pools {runs} run(s), each weighing as many tasks as it ran"
    set_title(ax, title, _note(note, where), share=0.7)
    return ax


def plot_case_mix(
    results: Any,
    *,
    by: str | Sequence[str] = "queue",
    where: Mapping[str, Any] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """The share of each decision case 1-8 in each ``by`` group: one stacked bar per group.

    Counts are summed over the group's runs (``schedule`` and ``reject`` rows,
    periodic re-arms included); a share is written on its segment when it fits.
    """
    frame = _where(_results(results), where)
    groups = _groups(frame, by)
    ax = axes_or_new(ax, (9.0, 1.6 + 0.55 * max(len(groups), 1)))
    title = "Decision cases: the share of each case 1-8"
    totals = [
        (name, rows[list(CASE_COLUMNS)].sum().to_numpy(dtype="float64")) for name, rows in groups
    ]
    totals = [(name, counts) for name, counts in totals if counts.sum() > 0]
    if not totals:
        ax.set_title(title, fontsize=FONT["title"])
        show_message(ax, "no decisions to show")
        return ax
    width_pt, _ = axes_size_pt(ax)
    used: set[int] = set()
    for row, (name, counts) in enumerate(totals):
        shares = counts / counts.sum()
        left = 0.0
        for case in range(1, 9):
            share = float(shares[case - 1])
            if share <= 0:
                continue
            used.add(case)
            color = CASE_COLORS[case]
            ax.barh(
                row,
                share,
                left=left,
                height=0.7,
                color=color,
                edgecolor="white",
                linewidth=0.6,
                gid=f"case:{name}:{case}",
            )
            text = f"{share:.0%}"
            if share * width_pt * 0.7 > (len(text) * 0.62 * FONT["small"] + 6):
                ax.text(
                    left + share / 2,
                    row,
                    text,
                    ha="center",
                    va="center",
                    fontsize=FONT["small"],
                    color=text_color_on(color),
                )
            left += share
    ax.set_yticks(range(len(totals)), labels=[name for name, _ in totals])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
    ax.set_xlabel("share of the decisions", fontsize=FONT["label"])
    ax.set_ylabel(_label(by if isinstance(by, str) else " · ".join(by)), fontsize=FONT["label"])
    ax.tick_params(labelsize=FONT["body"])
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    patches = [Patch(color=CASE_COLORS[c], label=case_label(Case(c))) for c in sorted(used)]
    add_legend(ax, [Section("decision case", patches)], fontsize=FONT["body"])
    note = (
        f"each bar sums the decisions of {_runs_per_group(groups)} run(s); periodic re-arms count"
    )
    set_title(ax, title, _note(note, where), share=0.7)
    return ax
