"""The lab's figures: what they draw, and readable by the same checks as every other figure.

Each figure is drawn from one small experiment and checked with
``tempsched_lab.plots._check.figure_problems`` (no overlapping text, nothing under
11 px, no raw clock value, nothing cut off); the PNGs go to
``artifacts/figures/`` (or ``$FIGURE_ARTIFACTS``) for a human look.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_hex

from tempsched_lab.lab import (
    Experiment,
    exponential,
    plot_case_mix,
    plot_lateness_ecdf,
    plot_metric,
    poisson,
)
from tempsched_lab.lab.figures import GROUP_STYLES
from tempsched_lab.plots import CASE_COLORS
from tempsched_lab.plots._check import figure_problems

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("FIGURE_ARTIFACTS", ROOT / "artifacts" / "figures"))


@pytest.fixture(scope="module")
def experiment():
    e = Experiment(
        poisson,
        grid={"queue": ["sorteddict", "heap", "wheel(tick=0.002)"], "rate": [200, 800, 2400]},
        fixed={"horizon": 0.4, "duration": exponential(0.0003), "lead": exponential(0.01)},
        repeats=2,
        seed=5,
    )
    e.run(progress=None)
    return e


def readable(ax, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"lab-{name}.png"
    problems = figure_problems(ax.figure, save_to=path)
    assert path.read_bytes().startswith(b"\x89PNG")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_a_measure_against_a_parameter_draws_one_line_per_design(experiment):
    ax = plot_metric(experiment, "lateness_p99", x="rate", by="queue", target=0.002)
    lines = [line for line in ax.get_lines() if str(line.get_gid()).startswith("group:")]
    assert [line.get_label() for line in lines] == ["sorteddict", "heap", "wheel(tick=0.002)"]
    results = experiment.results
    heap = results[results["queue"] == "heap"].groupby("rate")["lateness_p99"].median()
    assert np.allclose(lines[1].get_ydata(), heap.to_numpy() * 1e3)  # drawn in ms
    assert ax.get_ylabel() == "99th-percentile lateness (ms)" and ax.get_xscale() == "log"
    assert [to_hex(line.get_color()) for line in lines] == [s[0].lower() for s in GROUP_STYLES[:3]]
    assert not {to_hex(c) for c in CASE_COLORS.values()} & {to_hex(ln.get_color()) for ln in lines}
    assert len(ax.collections) == 3  # a band per design: min to max over the 2 repeats
    assert "target: 2 ms" in [t.get_text() for t in ax.get_legend().get_texts()]
    readable(ax, "metric")


def test_a_log_scale_keeps_runs_that_were_never_late(experiment):
    rows = experiment.results
    assert (rows.loc[rows["rate"] == 200, "lateness_p50"] == 0).any()  # zeros to place
    ax = plot_metric(experiment, "lateness_p50", x="rate", by="queue", logy=True)
    assert ax.get_yscale() == "symlog" and ax.get_ylim()[0] == 0  # a zero sits at the bottom
    lines = [line for line in ax.get_lines() if str(line.get_gid()).startswith("group:")]
    assert all(np.isfinite(line.get_ydata()).all() for line in lines)
    readable(ax, "metric-symlog")
    positive = plot_metric(experiment, "max_queue_depth", x="rate", by="queue", logy=True)
    assert positive.get_yscale() == "log"


def test_counts_and_categories_draw_too(experiment):
    ax = plot_metric(experiment, "max_queue_depth", x="queue", by="rate")
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "sorteddict",
        "heap",
        "wheel(tick=0.002)",
    ]
    assert ax.get_ylabel() == "largest queue depth (tasks)"
    line = next(line for line in ax.get_lines() if line.get_gid() == "group:2400")
    assert line.get_xdata().tolist() == [0, 1, 2]  # in the grid's order, not sorted by name
    results = experiment.results
    depth = results[results["rate"] == 2400].groupby("queue", sort=False)["max_queue_depth"]
    assert line.get_ydata().tolist() == depth.median().tolist()
    readable(ax, "metric-categories")


def test_the_lateness_ecdf_pools_each_groups_runs(experiment):
    ax = plot_lateness_ecdf(experiment, by="queue", where={"rate": 2400})
    lines = [line for line in ax.get_lines() if str(line.get_gid()).startswith("group:")]
    assert len(lines) == 3
    for line in lines:
        ys = np.asarray(line.get_ydata())
        assert ys[0] == 0.0 and ys[-1] == pytest.approx(1.0) and (np.diff(ys) >= 0).all()
    # the wheel's tick makes it later: its curve reaches 99 % further right
    assert lines[2].get_xdata()[-1] > lines[0].get_xdata()[-1]
    readable(ax, "ecdf")
    tail = plot_lateness_ecdf(experiment, by="queue", where={"rate": 2400}, tail=True)
    assert tail.get_yscale() == "log"
    readable(tail, "ecdf-tail")


def test_the_case_mix_uses_the_case_colours_and_sums_to_one(experiment):
    ax = plot_case_mix(experiment, by="queue", where={"rate": 2400})
    bars = [p for p in ax.patches if str(p.get_gid()).startswith("case:")]
    for design in ("sorteddict", "heap", "wheel(tick=0.002)"):
        widths = [b.get_width() for b in bars if b.get_gid().split(":")[1] == design]
        assert sum(widths) == pytest.approx(1.0)
    colours = {to_hex(b.get_facecolor()) for b in bars}
    assert colours <= {to_hex(c) for c in CASE_COLORS.values()}
    readable(ax, "case-mix")


def test_nothing_to_show_says_so():
    e = Experiment(poisson, grid={"rate": [10]}, fixed={"horizon": 0.1})
    for plot in (
        lambda: plot_metric(e, "lateness_p99", x="rate"),
        lambda: plot_case_mix(e, by="rate"),
        lambda: plot_lateness_ecdf(e, by="rate"),
    ):
        ax = plot()
        assert any(t.get_gid() == "message" for t in ax.texts)


def test_a_line_never_mixes_configurations_silently(experiment):
    with pytest.raises(ValueError, match=r"vary in \['rate'\]"):
        plot_metric(experiment, "runs", x="repeat", by="queue")
    with pytest.raises(KeyError, match="'speed'"):
        plot_metric(experiment, "speed", x="rate")
    with pytest.raises(KeyError, match="where="):
        plot_case_mix(experiment, where={"speed": 1})
