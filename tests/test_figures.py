"""Every public figure, on small, big, empty and real-clock logs, is readable.

Each figure of :data:`tempsched_lab.plots.catalog.FIGURES` is drawn from each
sample log of :data:`~tempsched_lab.plots.catalog.SAMPLES` (empty, one task,
the demo scenario, ~43k rows; virtual and real clock) at its default size and
dpi, and checked: no two texts overlap, no text is under 11 px, no text prints
a raw clock value (``1.796e+09``, ``1796073853.24``, ``r449018630``), nothing is
cut off at the figure's edge. The PNGs go to ``artifacts/figures/`` (or
``$FIGURE_ARTIFACTS``) for a human look. All but the virtual demo sample are
``slow`` (the whole set takes about 40 s).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from tempsched_lab.plots import new_figure
from tempsched_lab.plots._check import (
    drawn_texts,
    figure_problems,
    raw_epoch_texts,
    small_texts,
    text_overlaps,
    texts_on_lines,
    texts_outside,
    texts_outside_boxes,
)
from tempsched_lab.plots.catalog import FIGURES, SAMPLES

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("FIGURE_ARTIFACTS", ROOT / "artifacts" / "figures"))
#: The fast lane draws the demo scenario; test_plots covers empty logs there, the rest is slow.
FAST = {("demo", "virtual")}


def _cases() -> list:
    cases = []
    for key in SAMPLES:
        marks = [] if key in FAST else [pytest.mark.slow]
        cases += [
            pytest.param(key, figure, id=f"{key[0]}-{key[1]}-{figure}", marks=marks)
            for figure in FIGURES
        ]
    return cases


def _file_name(key: tuple[str, str], figure: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{key[0]} {key[1]} {figure}".lower()).strip("-") + ".png"


@pytest.mark.parametrize(("key", "figure"), _cases())
def test_every_figure_is_readable(key, figure):
    loaded = SAMPLES[key].load()
    fig = FIGURES[figure](loaded)
    assert isinstance(fig, Figure)
    assert fig.dpi == 100  # matplotlib's default: the size the 11 px floor is about
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / _file_name(key, figure)
    problems = figure_problems(fig, save_to=path)
    assert path.read_bytes().startswith(b"\x89PNG")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


# -- the checks themselves can fail -------------------------------------------------------------


def _figure_with(*texts: tuple[float, float, str, float]) -> Figure:
    fig = new_figure((4.0, 3.0), layout=None)  # no layout engine to make room for stray text
    ax = fig.add_subplot()
    for x, y, text, size in texts:
        ax.text(x, y, text, fontsize=size, transform=ax.transAxes)
    return fig


def test_the_check_finds_overlapping_texts():
    fig = _figure_with((0.2, 0.5, "first label", 10), (0.25, 0.5, "second label", 10))
    pairs = text_overlaps(drawn_texts(fig))
    assert [(a.text, b.text) for a, b in pairs] == [("first label", "second label")]
    apart = _figure_with((0.1, 0.2, "first label", 10), (0.1, 0.7, "second label", 10))
    assert not text_overlaps(drawn_texts(apart))


def test_the_check_finds_small_text_raw_epochs_and_cut_off_text():
    fig = _figure_with(
        (0.1, 0.8, "tiny", 6),
        (0.1, 0.5, "due 1796073853.24", 10),
        (0.1, 0.3, "round r449018630", 10),
        (0.9, 0.1, "runs off the right edge", 10),
    )
    texts = drawn_texts(fig)
    assert [t.text for t in small_texts(texts)] == ["tiny"]
    assert [t.text for t in raw_epoch_texts(texts)] == ["due 1796073853.24", "round r449018630"]
    assert [t.text for t in texts_outside(fig, texts)] == ["runs off the right edge"]
    assert len(figure_problems(fig)) == 4


def test_the_check_finds_text_under_a_line_and_text_leaving_or_under_its_box():
    from matplotlib.patches import FancyBboxPatch

    fig = new_figure((4.0, 3.0), layout=None)
    ax = fig.add_subplot()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    arrow = ax.annotate("", xy=(9, 2), xytext=(1, 2), arrowprops={"arrowstyle": "-|>", "lw": 4})
    arrow.arrow_patch.set_gid("edge:a")
    ax.text(5, 2, "on the line", ha="center", va="center", zorder=4)
    ax.text(5, 4, "beside it", ha="center", va="center")
    box = FancyBboxPatch((4, 6), 2, 1, boxstyle="round,pad=0.02", gid="box:b", zorder=5)
    ax.add_patch(box)
    ax.text(5, 6.5, "far wider than its box", ha="center", va="center", zorder=6)
    ax.text(3.2, 6.6, "under the box", zorder=4)
    texts = drawn_texts(fig)
    assert [(t.text, gid) for t, gid in texts_on_lines(fig, texts)] == [("on the line", "edge:a")]
    assert sorted((t.text, gid) for t, gid in texts_outside_boxes(fig, texts)) == [
        ("far wider than its box", "box:b"),
        ("under the box", "box:b"),
    ]


@pytest.mark.parametrize("scale", ["default", "projector"])
@pytest.mark.parametrize("size", [(10.0, 7.6)])
def test_the_decision_tree_keeps_its_labels_off_the_arrows_and_texts_in_their_boxes(scale, size):
    """Every highlighted case, at the tree's own size, default and projector type.

    Before: the thick arrows of the path ran through their yes/no labels (14 lines through
    labels on every tree), and in summary.png question texts were wider than their boxes.
    """
    from tempsched_lab.core.decision import Case
    from tempsched_lab.plots import plot_decision_tree
    from tempsched_lab.plots.style import type_scale

    with type_scale(scale):
        for case in [None, *Case]:
            ax = new_figure(size).add_subplot()
            plot_decision_tree(case, counts={1: 3, 4: 12, 8: 1}, ax=ax)
            problems = figure_problems(ax.figure, min_px=12.0 if scale == "default" else 16.0)
            assert not problems, (scale, size, case, problems)


def test_the_check_reads_epoch_tick_labels_as_raw():
    fig = new_figure((6.0, 3.0))
    ax = fig.add_subplot()
    ax.plot([1.796e9, 1.796e9 + 10], [0, 1])
    ax.ticklabel_format(useOffset=False, style="plain")
    assert any("raw clock value" in p for p in figure_problems(fig))
    sci = new_figure((6.0, 3.0))
    ax = sci.add_subplot()
    ax.set_xticks([1.796e9], labels=["1.796e+09"])
    assert any("1.796e+09" in p for p in figure_problems(sci))


def test_numbers_that_are_not_clock_values_pass():
    fig = _figure_with((0.1, 0.8, "100,000 jobs", 10), (0.1, 0.5, "12.345 s", 10))
    assert figure_problems(fig) == []
