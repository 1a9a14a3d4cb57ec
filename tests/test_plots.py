"""The plots: expected artists and labels, empty logs, logs read back from disk, PNG output."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Circle, FancyBboxPatch, StepPatch, Wedge

from tempsched_lab import (
    TREE,
    Case,
    Replayer,
    Scheduler,
    VirtualClock,
    case_counts,
    fmt_duration,
    lateness_summary,
    read_log,
    replay_snapshot,
    time_style,
)
from tempsched_lab.core.queues import TimingWheelQueue
from tempsched_lab.plots import (
    CASE_COLORS,
    OUTCOME_COLORS,
    OUTCOMES,
    example_frame,
    example_scheduler,
    new_figure,
    plot_decision_tree,
    plot_heap,
    plot_lateness,
    plot_queue,
    plot_queue_depth,
    plot_sorteddict,
    plot_summary,
    plot_timeline,
    plot_wheel,
    queue_depth,
    task_runs,
    tree_layout,
)
from tempsched_lab.plots import timeline as timeline_module
from tempsched_lab.plots._check import figure_problems
from tempsched_lab.plots.colors import (
    ENTRY_FILL,
    HEAD_EDGE,
    HEAD_FILL,
    MEASURE_COLORS,
    TURN_COLORS,
    case_label,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def noop(*args):
    return None


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """The fixed example scenario: all 8 cases, a periodic task, an Event, an error..."""
    return example_frame()


@pytest.fixture(scope="module")
def csv_frame(tmp_path_factory) -> pd.DataFrame:
    """The same scenario written to CSV and read back with read_log."""
    path = tmp_path_factory.mktemp("logs") / "log.csv"
    example_scheduler().log.to_csv(path)
    return read_log(path)


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("raw") / "log.csv"
    example_scheduler().log.to_csv(path)
    return path


@pytest.fixture()
def empty_frame() -> pd.DataFrame:
    return Scheduler(VirtualClock()).log.to_frame()


@pytest.fixture(scope="module")
def many_tasks() -> pd.DataFrame:
    """120 one-shot tasks: more lanes than a reader can follow."""
    clock = VirtualClock()
    s = Scheduler(clock)
    for i in range(120):
        s.schedule(noop, at=1.0 + (i * 7919 % 100) / 10, args=(i,), label=f"job {i}")
    clock.run_until_idle()
    s.shutdown()
    return s.log.to_frame()


def png(figure: Figure) -> bytes:
    """Render to PNG and check it is a real, non-empty image."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=60)
    data = buffer.getvalue()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 2000
    return data


def by_gid(ax: Axes, gid: str, kind: type = object) -> list:
    """Artists of ``ax`` with this gid (exact) and type."""
    return [a for a in ax.get_children() if a.get_gid() == gid and isinstance(a, kind)]


def gids(ax: Axes, prefix: str) -> list[str]:
    return sorted(
        a.get_gid() for a in ax.get_children() if a.get_gid() and a.get_gid().startswith(prefix)
    )


def legend_sections(ax: Axes) -> dict[str, list[str]]:
    """Section title -> entry labels of the one legend drawn on ``ax`` (bold rows are titles)."""
    legends = [a for a in ax.get_children() if isinstance(a, Legend)]
    assert len(legends) <= 1, "more than one legend on one Axes"
    if not legends:
        return {}
    (legend,) = legends
    current = legend.get_title().get_text()
    sections: dict[str, list[str]] = {}
    for text in legend.get_texts():
        if text.get_fontweight() == "bold":
            current = text.get_text()
            sections[current] = []
        else:
            sections.setdefault(current, []).append(text.get_text())
    return sections


def all_texts(fig: Figure) -> list[str]:
    """Every text of every Axes of ``fig`` (titles, labels and texts), in order."""
    out = []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel(), *texts(ax)]
    return out


def assert_no_text_overlaps(fig: Figure) -> None:
    problems = figure_problems(fig)
    assert not problems, "\n".join(problems)


def ytick_labels(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


def texts(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts]


# -- the package itself ---------------------------------------------------------------------


@pytest.mark.slow
def test_the_package_never_imports_pyplot():
    code = (
        "import sys, tempsched_lab.plots as p; p.plot_summary(p.example_frame()); "
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    package = Path(timeline_module.__file__).parents[1]  # tempsched_lab/plots
    sources = list(package.rglob("*.py"))
    assert len(sources) > 15  # the subpackages too
    for source in sources:
        text = source.read_text()
        assert not re.search(
            r"import\s+matplotlib\.pyplot|from\s+matplotlib\s+import\s+pyplot|plt\.", text
        ), source.name


@pytest.mark.slow
def test_importing_the_plots_touches_no_ipython_display():
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "import tempsched_lab.plots as p\n"
        "from matplotlib.figure import Figure\n"
        "shell.display_formatter.formatters['image/png'].lookup_by_type(Figure)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "KeyError" in done.stderr  # no printer registered for Figure: no global side effect
    fig = new_figure((3, 2))
    assert fig._repr_png_().startswith(PNG_SIGNATURE)  # figures display themselves instead


def test_colours_besides_the_cases_are_never_case_colours(frame):
    cases = {c.upper() for c in CASE_COLORS.values()}
    others = [*MEASURE_COLORS.values(), HEAD_FILL, HEAD_EDGE, ENTRY_FILL, *TURN_COLORS]
    assert not {c.upper() for c in others} & cases
    fig = plot_summary(frame)  # the page that shows the timeline, depth, tree and lateness
    lateness_bars = [
        p.get_facecolor()
        for row in fig.axes[3].child_axes
        for p in row.patches
        if str(p.get_gid()).startswith("hist:")
    ]
    assert lateness_bars
    case_rgb = {tuple(np.round(to_rgb(c), 3)) for c in CASE_COLORS.values()}
    assert not {tuple(np.round(c[:3], 3)) for c in lateness_bars} & case_rgb


def test_case_colours_are_eight_distinct_and_used_everywhere():
    assert sorted(CASE_COLORS) == [int(c) for c in Case]
    assert len(set(CASE_COLORS.values())) == 8
    assert set(OUTCOME_COLORS) == set(OUTCOMES)


# -- task runs -----------------------------------------------------------------------------


def test_task_runs_pairs_each_decision_with_its_run(frame):
    runs = task_runs(frame)
    outcome = dict(zip(runs["label"], runs["outcome"], strict=False))
    assert outcome["failing task"] == "failed"
    assert outcome["ready flag"] == "event set"
    assert outcome["cancelled job"] == "cancelled"
    assert outcome["never reached"] == "dropped"
    assert outcome["report"] == "finished"
    heartbeat = runs[runs["label"] == "heartbeat"]
    assert len(heartbeat) == 9  # 8 runs and the one dropped at shutdown
    assert heartbeat["task_id"].nunique() == 1
    assert (heartbeat["origin"].iloc[1:] == "periodic").all()


def test_task_runs_equal_for_a_log_read_back(frame, csv_frame):
    pd.testing.assert_frame_equal(task_runs(frame), task_runs(csv_frame))


# -- timeline ------------------------------------------------------------------------------


def test_timeline_draws_one_lane_per_task_and_rejected_requests(frame):
    ax = plot_timeline(frame)
    labels = ytick_labels(ax)
    assert labels[0] == "rejected requests"
    assert len(labels) == 1 + 12  # 12 tasks, the periodic one on a single lane
    assert "heartbeat #5 (every 0.5 s)" in labels
    runs = task_runs(frame)
    n_started = int(runs["started"].notna().sum())
    assert n_started < len(runs)  # cancelled, dropped and Event runs never started
    assert ax.get_title() == f"Task timeline: 12 tasks, {n_started} runs, 1 Event set"
    assert ax.get_xlabel() == "time since start (s)"
    (bars,) = by_gid(ax, "runs", PolyCollection)
    assert len(bars.get_paths()) == n_started
    (starts,) = by_gid(ax, "starts", PathCollection)
    assert len(starts.get_offsets()) == n_started  # one tick per run: back-to-back runs stay apart
    (cancels,) = by_gid(ax, "cancels", PathCollection)
    assert len(cancels.get_offsets()) == 1
    (errors,) = by_gid(ax, "errors", PathCollection)
    assert len(errors.get_offsets()) == 1
    (rejected,) = by_gid(ax, "rejected", PathCollection)
    assert len(rejected.get_offsets()) == 1
    (waiting,) = by_gid(ax, "waiting", LineCollection)
    assert len(waiting.get_segments()) == len(runs)
    png(ax.figure)


def test_timeline_links_duplicates_to_the_task_they_matched(frame):
    ax = plot_timeline(frame)
    labels = ytick_labels(ax)
    arrows = by_gid(ax, "duplicate")
    assert len(arrows) == 2  # case 5 (email) and case 7 (backup)
    targets = sorted(labels[round(a.xy[1])] for a in arrows)
    assert targets == ["backup #2", "email #1"]
    dues = sorted(a.xy[0] for a in arrows)
    assert dues == [0.55, 2.0]  # each arrow ends at the matched task's due time


def test_timeline_has_one_legend_with_a_section_per_meaning(frame):
    ax = plot_timeline(frame)
    assert len([a for a in ax.get_children() if isinstance(a, Legend)]) == 1
    by_case = legend_sections(ax)
    assert by_case["decision case (colour)"] == [case_label(c) for c in Case]
    for expected in (
        "schedule() called",
        "due time",
        "cancel()",
        "error (run failed)",
        "dropped at shutdown",
        "Event set",
        "duplicate request → task it matched",
        "rejected request",
    ):
        assert expected in by_case["marks"]
    ax = plot_timeline(frame, color_by="outcome")
    by_outcome = legend_sections(ax)["outcome (colour)"]
    assert by_outcome == ["finished", "failed", "cancelled", "dropped", "event set"]
    (bars,) = by_gid(ax, "runs", PolyCollection)
    runs = task_runs(frame)
    started = runs[runs["started"].notna()]
    expected = [OUTCOME_COLORS[o] for o in started["outcome"]]
    got = [tuple(np.round(c[:3], 3)) for c in bars.get_facecolors()]
    assert got == [tuple(np.round(to_rgb(c), 3)) for c in expected]


def test_timeline_now_line_and_running_runs():
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(noop, at=1.0, label="soon")
    s.schedule(noop, at=5.0, label="later")
    clock.run_until(2.0)
    ax = plot_timeline(s, now=2.0)  # a live Scheduler is accepted too
    (now,) = by_gid(ax, "now")
    assert list(now.get_xdata()) == [2.0, 2.0]
    assert "now" in texts(ax)
    assert legend_sections(plot_timeline(s.log, color_by="outcome"))["outcome (colour)"] == [
        "finished",
        "pending",
    ]
    s.shutdown()


def test_timeline_window_follows_now_and_clips(frame):
    ax = plot_timeline(frame, now=3.0, window=1.0)
    assert ax.get_xlim() == (2.0, 3.0)  # never stretched back to the log's beginning
    assert ax.get_title().startswith("Task timeline, last 1 s: ")
    labels = ytick_labels(ax)
    assert "report #0" not in labels  # ran at 1.0-1.15 s, outside the window
    assert "failing task #8" in labels and "never reached #10" in labels
    # a run crossing the left edge is drawn, clipped
    crossing = plot_timeline(frame, window=(1.5, 2.5))
    assert crossing.get_xlim() == (1.5, 2.5)
    assert "slow import #6" in ytick_labels(crossing)
    outside = plot_timeline(frame, window=(100.0, 101.0))
    assert texts(outside) == ["no runs in this window"]
    with time_style("wall"):
        wall = plot_timeline(frame, window=1.0)
    assert wall.get_xlabel() == "wall-clock time"


def test_timeline_thread_lanes_show_which_thread_ran_what(frame):
    ax = plot_timeline(frame, lanes="thread")
    threads = set(frame.loc[frame["kind"] == "start", "thread"].astype(str))
    assert set(ytick_labels(ax)) == threads
    assert ax.get_title().startswith(f"Thread timeline: {len(threads)} thread")
    (bars,) = by_gid(ax, "runs", PolyCollection)
    assert len(bars.get_paths()) == int((frame["kind"] == "start").sum())
    assert "slow import #6" in [t.get_text() for t in by_gid(ax, "run_label")]
    png(ax.figure)


def test_timeline_thread_lanes_of_a_thread_pool():
    s = Scheduler(executor="pool", max_workers=3, name="test-thread-lanes")
    barrier = threading.Barrier(3, timeout=5)
    for i in range(3):
        s.schedule(lambda: barrier.wait(), delay=0.01, label=f"meet {i}")
    s.wait_idle(timeout=5)
    s.shutdown()
    ax = plot_timeline(s.log.to_frame(), lanes="thread")
    assert len(ytick_labels(ax)) == 3  # three runs waited for each other: three threads
    assert not any(abs(float(t)) > 1e6 for t in ax.get_xlim())  # relative to the clock's origin


def test_timeline_folds_lanes_beyond_max_lanes_into_a_band_with_a_scale(many_tasks):
    ax = plot_timeline(many_tasks, max_lanes=20)
    labels = ytick_labels(ax)
    band = [label for label in labels if label.startswith("+")]
    assert len(band) == 1
    hidden = int(re.match(r"\+(\d+) more tasks", band[0]).group(1))
    assert len(labels) - 1 + hidden == 120  # every task is a lane or in the band
    assert labels[0] == "job 0 #0" and labels[-1] == "job 119 #119"
    tallest = int(re.search(r"tallest bar: (\d+)", band[0]).group(1))
    (density,) = by_gid(ax, "density", StepPatch)
    heights, _, base = density.get_data()
    assert (base - heights).max() == pytest.approx(ax_band_height(density))
    assert round(((base - heights) / ax_band_height(density) * tallest).sum()) == hidden
    (note,) = by_gid(ax, "note")
    assert note.get_text().startswith("Aggregated: 120 tasks")
    png(ax.figure)
    assert not by_gid(plot_timeline(many_tasks, max_lanes=200), "note")


def ax_band_height(density: StepPatch) -> float:
    heights, _, base = density.get_data()
    return float((base - heights).max())


def test_timeline_draws_no_more_lanes_than_its_axes_can_label(many_tasks):
    fig = new_figure((10.0, 3.6))
    ax = plot_timeline(many_tasks, ax=fig.add_subplot(), max_lanes=100)
    n_lanes = len([label for label in ytick_labels(ax) if not label.startswith("+")])
    assert 2 <= n_lanes < 20  # a 3.6 in figure cannot label 100 lanes
    assert_no_text_overlaps(fig)


def test_timeline_axis_is_not_stretched_by_far_future_or_cancelled_due_times():
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(noop, at=1.0, period=1.0, label="heartbeat")
    for i in range(2500):  # a flood scheduled far ahead and cancelled at once
        s.cancel(s.schedule(noop, at=900.0, args=(i,), label="flood"))
    s.schedule(noop, at=600.0, label="far")
    clock.run_until(5.0)
    ax = plot_timeline(s, now=5.0)
    assert ax.get_xlim()[1] < 10.0
    (note,) = by_gid(ax, "note")
    text = " ".join(note.get_text().split())
    assert "1 pending run due after the right edge (the last at 600.000 s)" in text
    assert_no_text_overlaps(ax.figure)
    fig = new_figure((10.0, 3.6))  # the dashboard's panel: a few lanes, the band, no overlap
    small = plot_timeline(s, ax=fig.add_subplot(), now=5.0, max_lanes=24)
    assert any(label.startswith("+") for label in ytick_labels(small))
    assert_no_text_overlaps(fig)
    s.shutdown()


def test_timeline_marks_the_slots_a_periodic_task_skipped():
    clock = VirtualClock()
    s = Scheduler(clock)

    def run():
        if clock.now() < 1.5:
            clock.advance(2.5)  # the first run overruns: the slots at 2 and 3 are skipped

    s.schedule(run, at=1.0, period=1.0, label="overrun")
    clock.run_until(5.0)
    s.shutdown()
    ax = plot_timeline(s.log.to_frame())
    (skipped,) = by_gid(ax, "skipped", PathCollection)
    assert sorted(skipped.get_offsets()[:, 0]) == [2.0, 3.0]
    assert "slot skipped (misfire)" in legend_sections(ax)["marks"]


def test_timeline_links_catch_up_runs_to_their_slots():
    clock = VirtualClock()
    s = Scheduler(clock)
    durations = iter([0.02, 0.02, 0.35])

    def run():
        clock.advance(next(durations, 0.02))

    s.schedule(run, at=0.1, period=0.1, misfire="catch_up", label="catching up")
    clock.run_until(1.0)
    s.shutdown()
    ax = plot_timeline(s.log.to_frame())
    links = by_gid(ax, "late_link")
    assert sorted(round(a.xyann[0], 6) for a in links) == [0.4, 0.5, 0.6]  # from each slot...
    assert sorted(round(a.xy[0], 2) for a in links) == [0.65, 0.67, 0.69]  # ...to its late run
    (starts,) = by_gid(ax, "starts", PathCollection)
    assert len(starts.get_offsets()) == int((s.log.to_frame()["kind"] == "start").sum())
    assert "late run ← its slot" in legend_sections(ax)["marks"]


def test_timeline_speaks_the_time_language_on_a_real_clock():
    s = Scheduler(name="test-timeline-real")
    s.schedule(noop, delay=0.01, label="soon")
    s.wait_idle(timeout=5)
    s.shutdown()
    frame = s.log.to_frame()
    ax = plot_timeline(frame)
    lo, hi = ax.get_xlim()
    assert -1.0 < lo < hi < 60.0  # seconds since the clock's origin, not epoch values
    png(ax.figure)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels and not any("e+" in label or len(label) > 8 for label in labels)


def test_timeline_thins_markers_beyond_the_detail_limit(frame, monkeypatch):
    monkeypatch.setattr(timeline_module, "MAX_DETAIL_RUNS", 5)
    ax = plot_timeline(frame)
    (note,) = by_gid(ax, "note")
    assert note.get_text().startswith("Thinned: 20 runs")
    assert not by_gid(ax, "scheduled") and not by_gid(ax, "due")
    assert by_gid(ax, "runs") and by_gid(ax, "errors")


def test_timeline_of_an_empty_log_says_so(empty_frame):
    ax = plot_timeline(empty_frame)
    assert texts(ax) == ["no tasks yet"]
    png(ax.figure)


def test_timeline_of_a_log_read_back_from_csv(frame, csv_frame, csv_path):
    live = plot_timeline(frame)
    # read_log, and a plain read_csv (times in seconds since the start, no metadata)
    raw = pd.read_csv(csv_path)
    for other in (csv_frame, raw):
        ax = plot_timeline(other)
        assert ytick_labels(ax) == ytick_labels(live)
        assert legend_sections(ax) == legend_sections(live)
        png(ax.figure)


@pytest.mark.slow
def test_every_plot_on_a_parquet_log(frame, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "log.parquet"
    example_scheduler().log.to_parquet(path)
    read = read_log(path)
    assert ytick_labels(plot_timeline(read)) == ytick_labels(plot_timeline(frame))
    assert all_texts(plot_lateness(read).figure) == all_texts(plot_lateness(frame).figure)
    pd.testing.assert_frame_equal(queue_depth(read), queue_depth(frame))
    png(plot_summary(read))


def test_timeline_draws_into_a_given_axes(frame):
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_timeline(frame, ax=ax) is ax
    assert fig.axes == [ax]


def test_timeline_rejects_bad_arguments(frame):
    with pytest.raises(ValueError, match="color_by"):
        plot_timeline(frame, color_by="label")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_lanes"):
        plot_timeline(frame, max_lanes=1)
    with pytest.raises(ValueError, match="lanes='worker'"):
        plot_timeline(frame, lanes="worker")  # type: ignore[arg-type]
    for bad in (0.0, -1.0, (2.0, 1.0), (1.0,), "10"):
        with pytest.raises(ValueError, match="window="):
            plot_timeline(frame, window=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="time_scale"):
        plot_timeline(frame, time_scale=0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not an event log"):
        plot_timeline(pd.DataFrame({"a": [1]}))


# -- decision tree ---------------------------------------------------------------------------


def test_tree_layout_comes_from_tree():
    positions, edges = tree_layout()
    assert {key for kind, key in positions if kind == "question"} == {q.key for q in TREE}
    assert {key for kind, key in positions if kind == "case"} == set(Case)
    assert len(edges) == 2 * len(TREE)
    assert positions[("question", TREE[0].key)][1] == 0.0  # the root on top


def test_decision_tree_boxes_edges_and_labels():
    ax = plot_decision_tree()
    questions = [p for p in ax.patches if str(p.get_gid()).startswith("question:")]
    leaves = [p for p in ax.patches if str(p.get_gid()).startswith("case:")]
    assert len(questions) == len(TREE) and len(leaves) == 8
    assert len(gids(ax, "edge:")) == 14
    assert not [g for g in gids(ax, "") if g.endswith(":highlighted")]
    assert texts(ax).count("yes") == 7 and texts(ax).count("no") == 7
    for q in TREE:
        assert any(" ".join(t.split()) == q.text for t in texts(ax))
    for c in Case:
        assert any(t.startswith(f"{int(c)} ") for t in texts(ax))
    assert ax.get_title() == "Decision tree of schedule()"
    png(ax.figure)


@pytest.mark.parametrize("case", list(Case))
def test_decision_tree_highlights_the_path_of_a_case(case):
    ax = plot_decision_tree(case)
    highlighted = [g for g in gids(ax, "") if g.endswith(":highlighted")]
    nodes = sorted(g.split(":")[1] for g in highlighted if g.startswith("question:"))
    assert nodes == sorted(key for key, _ in case.path)
    assert f"case:{int(case)}:highlighted" in highlighted
    edges = sorted(g for g in highlighted if g.startswith("edge:"))
    assert edges == sorted(
        f"edge:{key}:{'yes' if answer else 'no'}:highlighted" for key, answer in case.path
    )
    (explanation,) = by_gid(ax, "explanation")
    assert case.short in explanation.get_text()


def test_decision_tree_highlight_is_unmistakable():
    plain = plot_decision_tree()
    (leaf8,) = [p for p in plain.patches if p.get_gid() == "case:8"]
    assert leaf8.get_linewidth() < 2.0  # black case 8 off the path: no thick black border
    assert to_rgb(leaf8.get_edgecolor()) != to_rgb("#000000")
    chosen = plot_decision_tree(Case.DUPLICATE_IN_QUEUE)
    (leaf7,) = [p for p in chosen.patches if p.get_gid() == "case:7:highlighted"]
    assert leaf7.get_linewidth() >= 3.0
    path = [a for a in chosen.get_children() if str(a.get_gid()).endswith(":highlighted")]
    edges = [a for a in path if str(a.get_gid()).startswith("edge:")]
    assert edges and all(a.arrow_patch.get_path_effects() for a in edges)  # cased: visible on white
    s = Scheduler(VirtualClock())
    s.schedule(noop, at=1.0, args=("a",))
    duplicate = s.schedule_decision(noop, at=1.0, args=("a",))
    (explained,) = by_gid(plot_decision_tree(duplicate), "explanation")
    assert "It matched task 0" in " ".join(explained.get_text().split())  # what happened


def test_decision_tree_of_a_decision_with_counts(frame, csv_frame):
    s = Scheduler(VirtualClock())
    s.schedule(noop, at=2.0)
    decision = s.schedule_decision(noop, at=2.0, args=(1,))
    assert decision.case is Case.JOINS_HEAD
    ax = plot_decision_tree(decision, counts=frame)
    assert "case:6:highlighted" in gids(ax, "case:")
    expected = case_counts(frame)
    for case, count in zip(expected["case"], expected["count"], strict=True):
        (text,) = by_gid(ax, f"count:{case}")
        assert text.get_text() == f"n = {count}"
    assert ax.get_title().endswith(f"counts from {expected['count'].sum()} decisions")
    from_csv = plot_decision_tree(decision, counts=csv_frame)
    assert [t.get_text() for t in from_csv.texts] == [t.get_text() for t in ax.texts]
    as_mapping = plot_decision_tree(counts={1: 3, 4: 2})
    assert by_gid(as_mapping, "count:1")[0].get_text() == "n = 3"
    assert by_gid(as_mapping, "count:2")[0].get_text() == "n = 0"
    as_table = plot_decision_tree(counts=case_counts(frame))
    assert by_gid(as_table, "count:4")[0].get_text() == by_gid(ax, "count:4")[0].get_text()
    png(ax.figure)


def test_decision_tree_counts_of_an_empty_log(empty_frame):
    ax = plot_decision_tree(counts=empty_frame)
    assert {by_gid(ax, f"count:{int(c)}")[0].get_text() for c in Case} == {"n = 0"}
    png(ax.figure)


def test_decision_tree_rejects_what_is_not_a_case():
    with pytest.raises(ValueError, match="decision_or_case"):
        plot_decision_tree(9)
    with pytest.raises(ValueError, match="decision_or_case"):
        plot_decision_tree("earlier")


# -- lateness --------------------------------------------------------------------------------


def test_lateness_rows_with_counts_median_and_p99(frame):
    ax = plot_lateness(frame)
    rows = ax.child_axes
    assert [row.get_ylabel() for row in rows] == [
        "total\ndue → start",
        "scheduling\ndue → dispatch",
        "queueing\ndispatch → start",
    ]
    assert rows[-1].get_xlabel() == "lateness (ms)"
    summary = lateness_summary(frame, by=None)
    for row, measure in zip(rows, ("total", "scheduling", "queueing"), strict=True):
        stats = summary.loc[(measure, "all")]
        (median,) = by_gid(row, f"median:{measure}")
        (p99,) = by_gid(row, f"p99:{measure}")
        assert median.get_xdata()[0] == pytest.approx(stats["median"] * 1e3)
        assert p99.get_xdata()[0] == pytest.approx(stats["p99"] * 1e3)
        (text,) = by_gid(row, f"stats:{measure}")
        assert f"n = {int(stats['count'])}" in text.get_text()
        assert f"median {fmt_duration(stats['median'])}" in text.get_text()
        assert f"p99 {fmt_duration(stats['p99'])}" in text.get_text()
        bars = by_gid(row, f"hist:{measure}")
        assert sum(bar.get_height() for bar in bars) == int(stats["count"])  # a count axis
        ticks = [t for t in row.get_yticks() if 0 <= t <= row.get_ylim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)
    assert not [
        t for row in rows for t in texts(row) if t in ("median", "p99")
    ]  # no colliding tags
    assert_no_text_overlaps(ax.figure)


def test_lateness_of_one_run_has_a_sane_axis():
    s = Scheduler(VirtualClock())
    s.schedule(noop, at=1.0)
    s.clock.run_until_idle()
    ax = plot_lateness(s.log.to_frame())
    lo, hi = ax.child_axes[-1].get_xlim()
    assert ax.child_axes[-1].get_xlabel() == "lateness (ms)"
    assert hi - lo >= 1.0 and lo > -0.1  # at least 1 ms wide, not -1..+1 µs
    assert "median 0 s" in by_gid(ax.child_axes[0], "stats:total")[0].get_text()
    png(ax.figure)


def test_lateness_of_an_empty_log_and_a_csv_log(empty_frame, frame, csv_frame):
    ax = plot_lateness(empty_frame)
    assert texts(ax) == ["no runs yet"]
    png(ax.figure)
    live, read = plot_lateness(frame), plot_lateness(csv_frame)
    assert all_texts(read.figure) == all_texts(live.figure)
    png(read.figure)
    with pytest.raises(ValueError, match="bins=1"):
        plot_lateness(frame, bins=1)


# -- queue depth -----------------------------------------------------------------------------


def test_queue_depth_steps_match_the_log_and_replay(frame):
    depth = queue_depth(frame)
    rows = frame[frame["queue_size"].notna()]
    assert depth["queue_size"].tolist() == rows["queue_size"].astype(int).tolist()
    recorded = rows["ready_size"].notna().to_numpy()
    assert (depth["ready_size"].to_numpy()[recorded] == rows["ready_size"][recorded]).all()
    replayer = Replayer(frame)
    for seq, ready in zip(depth["seq"], depth["ready_size"], strict=True):
        replayer.advance_to(int(seq))
        assert len(replayer.state().head) == ready, seq
    ax = plot_queue_depth(frame)
    queue_line, head_line = ax.get_lines()
    assert queue_line.get_label() == "queue size (pending tasks)"
    assert head_line.get_label() == "head list size (tasks at the head time)"
    assert queue_line.get_drawstyle() == "steps-post"
    assert list(queue_line.get_ydata()) == depth["queue_size"].tolist()
    assert ax.get_xlabel() == "time since start (s)" and ax.get_ylabel() == "tasks"
    assert legend_sections(ax)[""] == [queue_line.get_label(), head_line.get_label()]
    png(ax.figure)


def test_queue_depth_of_a_bounded_log_uses_the_recorded_head_sizes():
    clock = VirtualClock()
    s = Scheduler(clock, max_log_rows=10)
    for i in range(10):
        s.schedule(noop, at=1.0 + i, args=(i,))
    clock.run_until_idle()
    depth = queue_depth(s.log.to_frame())
    assert len(depth) and depth["ready_size"].notna().all()
    assert depth["queue_size"].iloc[-1] == 0 and depth["ready_size"].iloc[-1] == 0
    png(plot_queue_depth(s.log.to_frame()).figure)


def test_queue_depth_of_an_empty_log_and_a_csv_log(empty_frame, frame, csv_frame):
    ax = plot_queue_depth(empty_frame)
    assert texts(ax) == ["no tasks yet"]
    png(ax.figure)
    pd.testing.assert_frame_equal(queue_depth(csv_frame), queue_depth(frame))
    png(plot_queue_depth(csv_frame, now=4.5).figure)


# -- queue designs ---------------------------------------------------------------------------


def test_sorteddict_view(frame):
    snapshot = replay_snapshot(frame, upto=13)
    ax = plot_sorteddict(snapshot, max_points=12)
    assert len(by_gid(ax, "head_time", FancyBboxPatch)) == 1
    assert len(by_gid(ax, "time_point", FancyBboxPatch)) == len(snapshot.state.points) - 1
    assert len(by_gid(ax, "head_task", FancyBboxPatch)) == len(snapshot.state.head)
    assert len(by_gid(ax, "task", FancyBboxPatch)) == snapshot.state.size - len(snapshot.state.head)
    assert "head\n0.250 s" in texts(ax)  # due times in the time language
    assert_no_text_overlaps(ax.figure)
    few = plot_sorteddict(snapshot, max_points=3, max_stack=1)
    assert "Showing the first 3 of 8 later time points" in by_gid(few, "note")[0].get_text()
    assert by_gid(few, "more")


def test_design_pictures_mark_the_task_a_duplicate_matched():
    s = Scheduler(VirtualClock())
    first = s.schedule(noop, at=1.0, args=("a",), label="a")
    s.schedule(noop, at=2.0, args=("b",), label="b")
    decision = s.schedule_decision(noop, at=2.0, args=("b",), label="b")  # case 7
    assert decision.case is Case.DUPLICATE_IN_QUEUE
    why = {decision.duplicate_of: "matched by the request (case 7)"}
    for draw in (plot_sorteddict, plot_heap, plot_wheel):
        if draw is not plot_sorteddict:
            other = Scheduler(VirtualClock(), queue="heap" if draw is plot_heap else "wheel")
            other.schedule(noop, at=1.0, args=("a",), label="a")
            other.schedule(noop, at=2.0, args=("b",), label="b")
            source = other
        else:
            source = s
        ax = draw(source, highlight=why)
        note = by_gid(ax, "note")[0].get_text().replace("\n", " ")
        assert f"★ #{decision.duplicate_of}: matched by the request (case 7)." in note
        assert any(
            t.startswith(f"★ #{decision.duplicate_of}") or f"★#{decision.duplicate_of}" in t
            for t in texts(ax)
        )
        assert_no_text_overlaps(ax.figure)
    plain = plot_sorteddict(s)
    assert not any("★" in t for t in texts(plain))
    assert first == 0
    with pytest.raises(TypeError, match="highlight="):
        plot_sorteddict(s, highlight="b")  # type: ignore[arg-type]


def test_heap_view(frame):
    snapshot = replay_snapshot(frame, upto=13, queue="heap")
    n = len(snapshot.picture["heap"])
    ax = plot_heap(snapshot)
    assert len(by_gid(ax, "heap_root", Circle)) == 1
    assert len(by_gid(ax, "heap_node", Circle)) == n - 1
    assert len(by_gid(ax, "array_cell", FancyBboxPatch)) == n
    assert len(ax.get_lines()) == n - 1  # one edge per parent link
    root_id, root_due = snapshot.picture["heap"][0]
    assert root_due == snapshot.state.head_time
    assert f"#{root_id}\n{root_due:.3f} s\n[0]" in texts(ax)
    assert_no_text_overlaps(ax.figure)
    top = plot_heap(snapshot, max_nodes=7)
    assert len(by_gid(top, "array_cell")) == 7
    assert by_gid(top, "note")[0].get_text().startswith("Showing the top 3 levels (7 of 11")
    (levels,) = by_gid(top, "levels")
    assert "level 3: 4 of 8 entries, due " in levels.get_text()


def heap_of(entries: int, first_due: float) -> Scheduler:
    """A heap scheduler with ``entries`` tasks due from ``first_due`` on (times of that width)."""
    s = Scheduler(VirtualClock(), queue="heap")
    for i in range(entries):
        s.schedule(noop, at=first_due + (i * 37 % 11) * 1.25, label=f"job {i}")
    return s


HEAP_CASES = [(3, 0.6), (6, 0.6), (7, 11.5), (40, 123.0)]


@pytest.mark.parametrize(
    ("figsize", "entries", "first_due"),
    [(size, *case) for size in [(5.6, 4.4), (4.0, 4.0)] for case in HEAP_CASES]
    + [(size, *case) for size in [(5.6, 3.2), (8.0, 3.6)] for case in HEAP_CASES[:3]],
)
def test_heap_node_texts_stay_in_their_circles_in_axes_given(figsize, entries, first_due):
    """A heap drawn into a panel's Axes keeps its round nodes (equal aspect): it draws the
    levels whose texts fit in their circles and summarises the rest (it drew 3 levels in a
    5.6 x 3.2 in panel, texts up to 1.5 times as wide as their circles). Smaller Axes (8 x 3
    in; 5.6 x 3.2 in for 40 entries due after 100 s) can still not hold the root's text."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    s = heap_of(entries, first_due)
    fig = Figure(figsize=figsize, dpi=100, layout="constrained")
    ax = plot_heap(s, ax=fig.add_subplot())
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    nodes = by_gid(ax, "heap_root", Circle) + by_gid(ax, "heap_node", Circle)
    labels = by_gid(ax, "heap_label")
    assert len(nodes) == len(labels) >= 1
    for node, label in zip(nodes, labels, strict=True):
        circle = node.get_window_extent(renderer)
        text = label.get_window_extent(renderer)
        assert text.width <= 0.97 * circle.width, (label.get_text(), text.width, circle.width)
        assert text.height <= 0.97 * circle.height, (label.get_text(), text.height, circle.height)
    if len(nodes) < entries:  # the levels not drawn are said, not lost
        assert by_gid(ax, "levels") or len(by_gid(ax, "array_cell")) == entries
    s.shutdown()


def test_the_heap_panel_picture_draws_a_small_heap_whole():
    from tempsched_lab.plots.designs import picture_of

    s = heap_of(6, 0.6)
    fig = Figure(figsize=picture_of("heap").size, dpi=100, layout="constrained")
    ax = plot_heap(s, ax=fig.add_subplot())
    assert len(by_gid(ax, "heap_node", Circle)) == 5  # three levels: every entry
    s.shutdown()


def test_wheel_view(frame):
    wheel = TimingWheelQueue(slots=16, tick=0.1)
    snapshot = replay_snapshot(frame, upto=13, queue=wheel)
    ax = plot_wheel(snapshot)
    (ring,) = by_gid(ax, "buckets")
    assert len(ring.get_paths()) == 16
    assert len(by_gid(ax, "job", Circle)) == snapshot.state.size
    assert by_gid(ax, "cursor") and by_gid(ax, "cursor_bucket", Wedge)
    cursor = snapshot.picture["cursor"]
    labels = "\n".join(t.get_text() for t in by_gid(ax, "job_label") if t.get_visible())
    for b, bucket in enumerate(snapshot.picture["buckets"]):
        for task_id, rnd in bucket:
            turns = max(0, (rnd * 16 + b - cursor) // 16)  # relative to the cursor
            assert (f"#{task_id} +{turns}" if turns else f"#{task_id}") in labels
    assert not re.search(r"\br\d", labels)  # no absolute rounds
    assert legend_sections(ax)["job: #task +turns left"] == [
        "fires this turn",
        "fires after 1 more turn",
        "2 or more turns ahead",
    ]
    note = by_gid(ax, "note")[0].get_text()
    assert f"tick {cursor}" in note and "One turn = 16 × 0.1 s = 1.6 s" in " ".join(note.split())
    assert_no_text_overlaps(ax.figure)
    default = plot_wheel(replay_snapshot(frame, upto=40, queue="wheel"))  # 256 slots
    (ring,) = by_gid(default, "buckets")
    assert len(ring.get_paths()) == 256
    assert_no_text_overlaps(default.figure)


def test_big_queues_are_summarised_not_drawn_task_by_task(design):
    s = Scheduler(VirtualClock(), queue=design, log=False)
    for i in range(3000):
        s.schedule(noop, at=1.0 + (i * 7919 % 3000) / 300, args=(i,), label=f"job {i % 7}")
    ax = plot_queue(s)
    patches = len(ax.patches) + sum(len(c.get_paths()) for c in ax.collections)
    bound = 4 * 256 + 10 if design == "wheel" else 100  # the wheel: ring + 3 bars per bucket
    assert patches < bound  # a summary, not 3,000 tasks
    note = by_gid(ax, "note")[0].get_text().replace("\n", " ")
    expected = {
        "sorteddict": "Showing the first 10 of 2,999 later time points",
        "heap": "Showing the top 4 levels (15 of 3,000 entries)",
        "wheel": "3,000 jobs: bar length = jobs in the bucket, the longest",
    }[design]
    assert expected in note
    assert_no_text_overlaps(ax.figure)
    s.shutdown()


def test_design_pictures_speak_the_time_language_on_a_real_clock(design):
    s = Scheduler(queue=design, name=f"test-design-real-{design}")
    s.schedule(noop, delay=30.0, label="later")
    s.schedule(noop, delay=60.0, label="much later")
    ax = plot_queue(s)
    assert_no_text_overlaps(ax.figure)  # includes: no raw epoch value such as 1.796e+09
    written = " ".join(texts(ax))
    assert re.search(r"\b(29|30)\.\d{3} s\b", written) or design == "wheel"
    bare = plot_queue(s.snapshot())  # no origin: wall-clock times, never epoch floats
    assert_no_text_overlaps(bare.figure)
    s.shutdown()


def test_design_pictures_fit_a_small_axes(frame):
    snapshot = replay_snapshot(frame, upto=19)
    fig = new_figure((5.0, 3.0))
    ax = plot_sorteddict(snapshot, ax=fig.add_subplot(), max_points=12)
    assert len(by_gid(ax, "time_point")) < 8  # fewer columns than asked: they would not fit
    assert_no_text_overlaps(fig)


def test_plot_queue_dispatches_on_the_design_of_a_live_snapshot(design):
    clock = VirtualClock()
    s = Scheduler(clock, queue=design)
    for i, at in enumerate([3.0, 1.0, 2.0, 1.0, 5.5]):
        s.schedule(noop, at=at, args=(i,), label=f"t{i}")
    ax = plot_queue(s)
    expected = {
        "sorteddict": "Sorted-dict queue: 5 tasks at 4 time points",
        "heap": "Binary heap: 5 entries, root = earliest due",
        "wheel": "Timing wheel: 256 slots × 10 ms, 5 jobs",
    }[design]
    assert ax.get_title() == expected
    png(ax.figure)
    clock.run_until_idle()
    empty = plot_queue(s.snapshot())
    assert "the queue is empty" in texts(empty) or "The queue is empty." in " ".join(
        t.get_text().replace("\n", " ") for t in by_gid(empty, "note")
    )
    png(empty.figure)
    s.shutdown()


def test_design_views_refuse_another_designs_snapshot(frame):
    snapshot = replay_snapshot(frame, upto=13)
    with pytest.raises(ValueError, match="heap snapshot"):
        plot_heap(snapshot)
    with pytest.raises(ValueError, match="wheel snapshot"):
        plot_wheel(snapshot)
    heap = replay_snapshot(frame, upto=13, queue="heap")
    assert plot_sorteddict(heap).get_title() == "Sorted-dict queue: 11 tasks at 9 time points"
    with pytest.raises(TypeError, match="snapshot="):
        plot_queue(42)
    with pytest.raises(TypeError, match="time_scale="):
        plot_heap(heap, time_scale=1.0)  # type: ignore[arg-type]


# -- summary -------------------------------------------------------------------------------


def test_summary_page(frame, csv_frame):
    fig = plot_summary(frame)
    assert isinstance(fig, Figure)
    timeline, depth, tree, lateness = fig.axes
    assert timeline.get_title() == "Task timeline: 12 tasks, 16 runs, 1 Event set"
    assert depth.get_title() == "Queue depth over time"
    assert [line.get_label() for line in depth.get_lines()][:2] == [
        "queue size (pending tasks)",
        "head list size (tasks at the head time)",
    ]
    assert depth.get_xlim() == timeline.get_xlim()  # one time axis: steps line up with lanes
    assert tree.get_title() == "Decision tree: counts from 23 decisions"
    assert lateness.child_axes[-1].get_xlabel() == "lateness (ms)"
    assert fig.get_suptitle() == "Scheduler log summary: 77 rows, 23 decisions, 1 error"
    png(fig)
    again = plot_summary(csv_frame, color_by="outcome")
    assert [ax.get_title() for ax in again.axes] == [ax.get_title() for ax in fig.axes]
    png(again)


def test_summary_of_an_empty_log(empty_frame):
    fig = plot_summary(empty_frame)
    timeline, depth, _, lateness = fig.axes
    assert texts(timeline) == ["no tasks yet"] and texts(lateness) == ["no runs yet"]
    assert texts(depth) == ["no tasks yet"]
    png(fig)


def test_missed_rows_are_not_drawn_as_runs():
    clock = VirtualClock()
    s = Scheduler(clock)
    starts = []

    def run():
        starts.append(clock.now())
        if len(starts) == 1:
            clock.elapse(2.5)  # the first run overruns: the slots at 2 and 3 are skipped

    s.schedule(run, at=1.0, period=1.0)
    clock.run_until(5.0)
    s.shutdown()
    frame = s.log.to_frame()
    assert (frame["kind"] == "missed").any()
    runs = task_runs(frame)
    assert "pending" not in set(runs["outcome"])
    assert sorted(runs.loc[runs["outcome"] == "finished", "due"]) == [1.0, 4.0, 5.0]


# -- the type scale: one place, every figure follows it -----------------------------------------


@pytest.mark.parametrize(("scale", "floor_px"), [("default", 12.0), ("projector", 16.0)])
def test_every_text_of_the_tree_follows_the_type_scale(scale, floor_px):
    from matplotlib.text import Text

    from tempsched_lab.plots.style import FONT, type_scale

    with type_scale(scale):
        ax = plot_decision_tree(Case.JOINS_HEAD, counts={4: 3, 6: 1})
        small = FONT["small"]
        # a size under the scale's floor (plot_summary asks for 8 pt) is raised to it
        squeezed = plot_decision_tree(counts={4: 3}, fontsize=8.0)
    fig = ax.figure
    px = [t.get_fontsize() * fig.dpi / 72 for t in fig.findobj(Text) if t.get_text().strip()]
    assert fig.dpi == 100 and min(px) >= floor_px
    leaves = [t for t in squeezed.texts if t.get_text()[:1].isdigit()]
    assert leaves and min(t.get_fontsize() for t in leaves) >= small
    assert FONT["small"] == 9.0  # the block's scale ended with it


def test_the_type_scale_names_a_bad_scale():
    from tempsched_lab.plots.style import set_type_scale, type_scale

    with pytest.raises(ValueError, match="scale='huge'"):
        set_type_scale("huge")
    with pytest.raises(ValueError, match="scale='huge'"), type_scale("huge"):
        pass
