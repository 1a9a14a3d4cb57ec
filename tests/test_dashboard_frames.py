"""One moment per frame, one time language, readable pictures, and a page watch: no browser.

The dashboard's refresher takes one :meth:`Scheduler.moment` per round and
every panel renders from it. These tests read what each panel rendered (the
``tsl-stamp`` marker in its HTML, the counts it prints) and check that all of
them describe the same moment, also while another thread keeps the scheduler
busy. The browser side of the same promises is in ``test_widgets_browser.py``.
"""

from __future__ import annotations

import math
import re
import threading
import time

import ipywidgets as W
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from widgetkit import close_widgets, scenario  # noqa: F401  (an autouse fixture)

from tempsched_lab import Case, PastTimeError, RealClock, Scheduler, VirtualClock, time_style
from tempsched_lab.widgets import (
    ControlsPanel,
    Dashboard,
    PageWatch,
    Refresher,
    TimelinePanel,
    demo_task,
    in_voila,
)
from tempsched_lab.widgets._base import MIN_TEXT_PX, png_size, text_px
from tempsched_lab.widgets.figures import timeline_supports

STAMP = re.compile(r"data-panel='(\w+)' data-seq='(\d+)'")
EPOCH_LIKE = re.compile(r"(?<![\d.])\d{7,}(?:\.\d+)?|\d\.\d+e\+0\d")


def busy_scheduler(design: str = "heap") -> tuple[Scheduler, VirtualClock]:
    return scenario(design)


def stamps(dash: Dashboard) -> dict[str, set[int]]:
    """The moment (``seq``) each panel's HTML says it was rendered from."""
    out: dict[str, set[int]] = {}
    for panel in dash.panels.values():
        for widget in panel.display_widgets():
            if isinstance(widget, W.HTML):
                for name, seq in STAMP.findall(widget.value):
                    out.setdefault(name, set()).add(int(seq))
    return out


def check_one_moment(dash: Dashboard, frame: pd.DataFrame) -> None:
    """Every panel shows ``dash.refresher.scene``; ``frame`` is the full log, read afterwards."""
    scene = dash.refresher.scene
    assert scene is not None
    seq = scene.seq
    assert all(panel.shown is scene for panel in dash.panels.values())
    assert stamps(dash) == {name: {seq} for name in dash.panels}
    before = frame[frame["seq"] < seq]
    # controls: rows and pending tasks of the moment
    assert f"{seq} log rows" in dash.controls.status.value
    assert f"{scene.moment.pending} pending, " in dash.controls.status.value
    # queue: the same pending count
    assert f"{scene.moment.pending} pending</span>" in dash.queue.table.value
    # log: the newest row shown is the last one before the moment
    shown = [
        int(x) for x in re.findall(r"<tr class='tsl-row[^>]*><td>(\d+)</td>", dash.log.table.value)
    ]
    assert shown and max(shown) == seq - 1
    assert f"{seq} rows recorded" in dash.log.summary.value
    # tree: the decisions before the moment, and the last of them
    decided = before["case"].notna()
    assert f"{int(decided.sum())} decisions by case" in dash.tree.caption.value
    last = int(before.loc[decided, "seq"].iloc[-1])
    assert f"(row {last}, " in dash.tree.caption.value
    # history: follows the newest row of the moment
    assert dash.history.slider.max == seq - 1 and dash.history.shown_row == seq - 1


def test_every_panel_shows_the_same_moment_after_each_click():
    s, _ = busy_scheduler()
    fake = [0.0]
    dash = Dashboard(s, autostart=False, clock=lambda: fake[0])
    check_one_moment(dash, s.log.to_frame())
    controls = dash.controls
    actions = [
        controls.step_button.click,
        controls.schedule_button.click,
        controls.cancel_button.click,
        controls.advance_button.click,
        controls.schedule_button.click,
        controls.step_button.click,
    ]
    for act in actions:
        before = s.log.next_seq
        act()
        fake[0] += 0.1
        assert dash.refresher.tick() > 0
        assert dash.refresher.scene.seq > before  # the round after a click shows it
        check_one_moment(dash, s.log.to_frame())
    dash.close()


@pytest.mark.slow
def test_panels_agree_while_another_thread_keeps_logging():
    """The issue's reproduction: log, tree and history lagged the queue after steps."""
    s, clock = busy_scheduler("wheel")
    fake = [0.0]
    dash = Dashboard(
        s,
        autostart=False,
        clock=lambda: fake[0],
        resync_every=None,
        panels=("controls", "queue", "tree", "log", "history"),
        options={"tree": {"picture": False}},
    )  # fmt: skip  (the timeline and the tree's picture are checked in the test above)
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            s.cancel(s.schedule(demo_task, delay=50.0, args=(i,), label="churn"))
            if i % 7 == 0:
                clock.advance(0.01)
            i += 1
            time.sleep(0.001)  # ~2000 rows/s: busy, yet a round still draws in well under a second

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        rounds = 0
        deadline = time.monotonic() + 20
        while rounds < 8 and time.monotonic() < deadline:
            fake[0] += 0.1
            if dash.refresher.tick():
                rounds += 1
                check_one_moment(dash, s.log.to_frame())
        assert rounds >= 8
    finally:
        stop.set()
        thread.join()
    dash.close()


OPS = st.lists(
    st.sampled_from(["step", "schedule", "cancel", "advance", "dup", "tick"]), max_size=15
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_any_sequence_of_actions_leaves_one_moment_on_screen(ops):
    s, _ = busy_scheduler("sorteddict")
    fake = [0.0]
    dash = Dashboard(
        s, panels=("controls", "queue", "tree", "log", "history"), autostart=False,
        clock=lambda: fake[0], options={"tree": {"picture": False}},
    )  # fmt: skip
    c = dash.controls
    c.label.value = "h"
    for op in ops:
        if op == "step":
            c.step_button.click()
        elif op == "schedule":
            c.schedule_button.click()
        elif op == "cancel":
            c.cancel_button.click()
        elif op == "advance":
            c.advance_button.click()
        elif op == "dup":  # the same request twice: a duplicate
            c.schedule_button.click()
            c.schedule_button.click()
        fake[0] += 0.1
        dash.refresher.tick()
        check_one_moment(dash, s.log.to_frame())
    dash.close()


def test_a_round_writes_nothing_until_every_part_is_drawn():
    s, clock = busy_scheduler()
    fake = [0.0]
    dash = Dashboard(s, autostart=False, clock=lambda: fake[0])
    events: list[str] = []
    for part in dash.refresher.parts:
        render = part.render
        part.render = lambda scene, render=render: (events.append("draw"), render(scene))[1]
    for panel in dash.panels.values():
        for widget in panel.display_widgets():
            widget.observe(lambda _change: events.append("write"), names="value")
    clock.step()
    fake[0] += 0.1
    assert dash.refresher.tick() >= 6
    first_write = events.index("write")
    assert "draw" not in events[first_write:], events
    assert events.count("draw") >= 6
    dash.close()


# -- one time language ----------------------------------------------------------------------------


def all_text(dash: Dashboard) -> str:
    parts = [dash.header.value]
    for panel in dash.panels.values():
        parts += [w.value for w in panel.display_widgets() if isinstance(w, W.HTML)]
    return "\n".join(parts)


def test_a_real_clock_dashboard_never_shows_epoch_numbers():
    s = Scheduler(RealClock(), queue="wheel")
    try:
        for i in range(4):
            s.schedule(demo_task, delay=30.0 + i, args=(i,), label=f"job{i}")
        s.schedule(demo_task, delay=0.01, label="soon")
        with pytest.raises(PastTimeError):  # a case 1 row: its error text holds raw clock values
            s.schedule(demo_task, at=s.clock.now() - 1.0, label="too late")
        time.sleep(0.1)
        dash = Dashboard(s, autostart=False)
        before = s.clock.now() - s.time_origin
        dash.controls.mode.value = "at"
        after = s.clock.now() - s.time_origin
        text = all_text(dash)
        assert not EPOCH_LIKE.findall(text), EPOCH_LIKE.findall(text)[:5]
        assert not EPOCH_LIKE.findall(dash.controls.when.value)
        assert "t = 0.0" in text and "30.0" in text  # seconds since the clock's origin
        assert re.search(
            r"case 1 \(in the past\): rejected, due t = -?\d+\.\d{3} s is 1\.000 s "
            r"before now \(t = \d+\.\d{3} s\)",
            text,
        )
        at = float(dash.controls.when.value)  # 10 s ahead, whole seconds since the origin
        assert at == int(at) and math.ceil(before + 10) <= at <= math.ceil(after + 10)
        dash.close()
    finally:
        s.shutdown()


def test_wall_style_shows_clock_times_everywhere():
    s = Scheduler(RealClock())
    try:
        s.schedule(demo_task, delay=30.0, label="later")
        with time_style("wall"):
            dash = Dashboard(s, autostart=False)
            text = all_text(dash)
            walls = re.findall(r"\b\d\d:\d\d:\d\d\.\d{3}\b", text)
            assert len(walls) >= 4 and not EPOCH_LIKE.findall(text)
            assert "<th>due time</th>" in dash.queue.table.value
            dash.controls.mode.value = "at"
            assert re.fullmatch(r"\d\d:\d\d:\d\d\.000", dash.controls.when.value)
            dash.close()
    finally:
        s.shutdown()


def test_the_duplicate_recipe_works_on_a_real_clock():
    """Notebook 05: "at time" twice is the same request, so the second one is a duplicate."""
    s = Scheduler(RealClock())
    try:
        panel = ControlsPanel(s)
        panel.mode.value = "at"
        prefilled = panel.when.value
        assert float(prefilled) == int(float(prefilled))  # a whole second
        panel.schedule_button.click()
        first = panel.last_decision
        time.sleep(0.3)  # a teacher is slower than that
        panel.schedule_button.click()
        second = panel.last_decision
        assert first.case is Case.EMPTY
        assert second.case in (Case.DUPLICATE_OF_HEAD, Case.DUPLICATE_IN_QUEUE)
        assert second.duplicate_of == first.task_id and panel.when.value == prefilled
        panel.close()
    finally:
        s.shutdown()


# -- pictures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("design", ["heap", "wheel"])
def test_pictures_are_shown_at_their_pixel_size_with_readable_text(design):
    s, clock = busy_scheduler(design)
    clock.run_until(2.5)
    dash = Dashboard(s, autostart=False)
    images = [dash.queue.image, dash.timeline.image, dash.tree.image, dash.history.image]
    for image in images:
        width, height = png_size(bytes(image.value))
        assert image.layout.width == f"{width}px" and image.layout.height == f"{height}px"
        assert 300 <= width <= 960, width  # fits a column of a 1000 px page, or a half of 1280
    for panel in dash.panels.values():
        for renderer in panel._renderers:
            fig = renderer.figure
            texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize")) if t.get_text()]
            assert texts and min(text_px(t, fig.dpi) for t in texts) >= MIN_TEXT_PX - 1e-6
    dash.close()


def test_timeline_window_follows_now_pauses_and_switches_lanes():
    s, clock = busy_scheduler()
    clock.run_until(50.0)
    panel = TimelinePanel(s, window=20.0)
    panel.refresh()
    ax = panel.figure.axes[0]
    lo, hi = ax.get_xlim()
    assert hi - lo == pytest.approx(20.0, rel=0.05)
    assert "20 s window, now t = 50.000 s" in panel.caption.value
    panel.pause.value = True  # freezes the window at t = 50
    clock.run_until(60.0)
    panel.refresh()
    assert "paused: 30.000 s to 50.000 s" in panel.caption.value
    assert ax is not panel.figure.axes[0] and panel.figure.axes[0].get_xlim() == (lo, hi)
    panel.pause.value = False
    assert "now t = 60.000 s" in panel.caption.value
    panel.window.value = 0  # the whole run
    assert "the whole run up to t = 60.000 s" in panel.caption.value
    if timeline_supports("lanes"):
        panel.lanes.value = "thread"
        assert "one lane per executor thread" in panel.caption.value
    else:  # an older plots module: the toggle says so by being disabled
        assert panel.lanes.disabled
    with pytest.raises(ValueError, match="window=-1"):
        TimelinePanel(s, window=-1)
    with pytest.raises(ValueError, match="lanes='cpu'"):
        TimelinePanel(s, lanes="cpu")
    panel.close()


def test_young_scheduler_window_starts_at_the_origin():
    s, clock = busy_scheduler()
    clock.run_until(3.0)
    panel = TimelinePanel(s, window=30.0)
    assert panel.span(panel.source.scene()) == (0.0, 30.0)
    panel.close()


# -- the page watch ------------------------------------------------------------------------------


def test_page_watch_states_and_pings():
    fake = [0.0]
    watch = PageWatch(every=1.0, timeout=3.0, clock=lambda: fake[0])
    playing: list[bool] = []
    watch.widget.observe(lambda ch: playing.append(ch["new"]), names="playing")
    assert watch.state() == "waiting" and watch.ping_if_due() and not watch.ping_if_due()
    assert playing[-2:] == [False, True] or playing == [True]  # off then on: a fresh request
    watch.widget.value += 1  # what the browser's Play model sends back
    assert watch.state() == "alive" and watch.pongs == 1
    fake[0] = 3.5
    assert watch.state() == "gone"
    watch.widget.value += 1
    assert watch.state() == "alive"
    with pytest.raises(ValueError, match="timeout=1"):
        PageWatch(every=1.0, timeout=1.0)
    watch.close()


def _pong_until(watch: PageWatch, stop: threading.Event) -> threading.Thread:
    def pong() -> None:
        while not stop.is_set():
            watch.widget.value += 1
            time.sleep(0.03)

    thread = threading.Thread(target=pong)
    thread.start()
    return thread


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_closed_page_shuts_the_scheduler_down():
    s = Scheduler(RealClock())
    s.schedule(demo_task, delay=0.05, period=0.05, label="heartbeat")
    dash = Dashboard(s, panels=("controls", "log"), on_page_close="shutdown", page_timeout=0.5)
    watch = dash.watch
    watch.every = 0.05
    stop = threading.Event()
    ponger = _pong_until(watch, stop)
    assert wait_for(lambda: watch.state() == "alive")
    time.sleep(0.3)
    assert not s.closed and dash.refresher.running
    stop.set()  # the page goes away
    ponger.join()
    assert wait_for(lambda: s.closed and not dash.refresher.running)
    assert dash.closed and dash.refresher.ended == "page gone"


def test_closed_tab_outside_voila_pauses_rendering_and_resumes():
    s, clock = busy_scheduler()
    dash = Dashboard(s, panels=("controls", "log"), page_timeout=0.4)
    assert dash.on_page_close == ("shutdown" if in_voila() else "pause")
    dash.refresher.on_page_gone = None  # pause, whatever the environment
    watch = dash.watch
    watch.every = 0.05
    stop = threading.Event()
    ponger = _pong_until(watch, stop)
    assert wait_for(lambda: watch.state() == "alive")
    stop.set()
    ponger.join()
    assert wait_for(lambda: dash.refresher.paused)
    rounds = dash.refresher.rounds
    clock.step()  # the scheduler goes on; nothing is drawn for nobody
    time.sleep(0.4)
    assert dash.refresher.rounds == rounds and not s.closed
    stop.clear()
    ponger = _pong_until(watch, stop)  # the tab is shown again: the present, at once
    assert wait_for(
        lambda: not dash.refresher.paused and dash.refresher.scene.seq == s.log.next_seq
    )
    stop.set()
    ponger.join()
    dash.close()


def test_page_close_policy_is_checked_and_follows_voila(monkeypatch):
    s, _ = busy_scheduler()
    with pytest.raises(ValueError, match="on_page_close='later'"):
        Dashboard(s, on_page_close="later", autostart=False)  # type: ignore[arg-type]
    monkeypatch.setenv("VOILA_KERNEL_ID", "k-1")
    assert in_voila()
    dash = Dashboard(s, panels=("log",), autostart=False)
    assert dash.on_page_close == "shutdown" and dash.watch is not None
    dash.close()
    monkeypatch.delenv("VOILA_KERNEL_ID")
    for name in ("VOILA_SERVER_URL", "VOILA_BASE_URL", "VOILA_REQUEST_URL"):
        monkeypatch.delenv(name, raising=False)
    assert not in_voila()
    dash = Dashboard(s, panels=("log",), autostart=False, on_page_close="ignore")
    assert dash.watch is None and dash.refresher.watch is None
    dash.close()


def test_refresher_rests_after_costly_rounds_to_keep_its_cpu_budget():
    s, _ = busy_scheduler()
    r = Refresher([], scheduler=s, cpu_budget=0.25, max_rate=10)
    assert r.rest_after(0.0) == pytest.approx(0.1)  # never more than max_rate rounds/s
    assert r.rest_after(0.05) == pytest.approx(0.15)  # 50 ms of drawing, 150 ms of rest: 25 %
    assert r.rest_after(0.4) == pytest.approx(1.2)
    assert Refresher([], scheduler=s, cpu_budget=1.0).rest_after(0.4) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="cpu_budget=0"):
        Refresher([], scheduler=s, cpu_budget=0)
    r.close()


def test_tree_redraws_only_its_counts_and_matches_a_full_drawing():
    import io

    import numpy as np
    from PIL import Image

    from tempsched_lab.plots import plot_decision_tree
    from tempsched_lab.widgets._base import FigureRenderer
    from tempsched_lab.widgets.figures import _tree_texts

    def pixels(png: bytes) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(png))).astype(int)

    reused = FigureRenderer((7.2, 5.0))
    for k in range(3):  # the same highlighted path, new counts each time
        counts = {c: (c + k) * (c != 5) for c in range(1, 9)}
        png = reused.render(
            lambda ax, counts=counts: plot_decision_tree(3, counts=counts, ax=ax, explain=False),
            reuse=("tree", 3),
            texts=_tree_texts,
        )
    assert reused.text_redraws >= 1  # at least one took the short path (same title lines)
    full = FigureRenderer((7.2, 5.0)).render(
        lambda ax: plot_decision_tree(3, counts=counts, ax=ax, explain=False)
    )
    assert np.array_equal(pixels(png), pixels(full))
    other = reused.render(  # another path highlighted: everything is drawn again
        lambda ax: plot_decision_tree(7, counts=counts, ax=ax, explain=False),
        reuse=("tree", 7),
        texts=_tree_texts,
    )
    assert not np.array_equal(pixels(other), pixels(png))


def test_following_again_jumps_to_the_newest_row_without_new_rows():
    s, _ = busy_scheduler("sorteddict")
    fake = [0.0]
    dash = Dashboard(s, panels=("log", "history"), autostart=False, clock=lambda: fake[0])
    newest = s.log.next_seq - 1
    dash.history.slider.value = 1  # by hand: follows no more
    assert dash.history.shown_row == 1 and not dash.history.follow.value
    fake[0] += 0.1
    dash.refresher.tick()
    assert dash.history.shown_row == 1  # a round does not move a slider the user holds
    dash.history.follow.value = True  # the dashboard's next round jumps back
    fake[0] += 0.1
    dash.refresher.tick()
    assert dash.history.shown_row == newest and s.log.next_seq - 1 == newest
    dash.close()


def test_quiet_rounds_draw_every_case_of_the_tree_ahead_of_a_click():
    from tempsched_lab.widgets import DecisionTreePanel

    s = Scheduler(VirtualClock(), executor="inline")
    tree = DecisionTreePanel(s)
    fake = [0.0]
    r = Refresher([tree], scheduler=s, max_rate=10, clock=lambda: fake[0])

    def tick() -> int:
        fake[0] += 0.1
        return r.tick()

    assert tick() == 2  # the first round draws the picture and caption, nothing ahead
    assert tree.drawn_cases == {None}
    s.schedule(print, at=1.0)
    r.poke()  # a click: its round draws what changed and no idle work
    assert tick() == 2 and tree.drawn_cases == {None, Case.EMPTY}
    for _ in range(12):  # quiet rounds: one case ahead of time each, none counted as updates
        assert tick() == 0
    assert tree.drawn_cases == {None, *Case}
    assert r.errors == 0
    s.schedule(print, at=1.0)  # case 5, never decided before: only its counts are redrawn
    assert tick() == 2
    warmed = tree.renderer_for(Case.DUPLICATE_OF_HEAD)
    assert warmed is not None
    assert warmed.renders == 2 and warmed.text_redraws == 1
    r.close()
    tree.close()


def test_a_click_round_starts_at_once_but_pokes_cannot_flood():
    s = Scheduler(VirtualClock(), executor="inline")
    fake = [0.0]
    dash = Dashboard(s, panels=("queue", "log"), autostart=False, clock=lambda: fake[0])
    r = dash.refresher  # its first round was drawn at t = 0
    fake[0] = 0.01
    s.schedule(print, at=1.0)
    assert r.tick() == 0  # new rows, but 10 ms after a round: they wait for the rate limit
    r.poke()
    assert r.tick() > 0  # a click: at once
    rounds = r.rounds
    for i in range(1, 40):  # pokes every 5 ms for 0.2 s, each with something new to show
        fake[0] = 0.01 + 0.005 * i
        s.schedule(print, at=1.0 + i)
        r.poke()
        r.tick()
    assert 2 <= r.rounds - rounds <= 4  # <= 2 x max_rate rounds/s (0.2 s: 2 early + 2 regular)
    fake[0] = 1.0
    r.tick()
    assert r.scene is not None and r.scene.seq == s.log.next_seq  # nothing is lost
    dash.close()


def test_a_png_drawn_while_the_page_says_hello_is_cleared_next_round():
    s = Scheduler(VirtualClock(), executor="inline")
    fake = [0.0]
    dash = Dashboard(s, panels=("timeline",), autostart=False, clock=lambda: fake[0])
    panel = dash.timeline
    assert panel.live is not None and panel.image.value  # no page yet: the PNG is drawn
    panel.live.hellos = 1  # the page's canvas said hello while a PNG round was in flight
    panel._page_has_canvas()
    panel.image.value = b"\x89PNG stale"  # that round's write lands after the hello
    s.schedule(print, at=1.0)
    fake[0] = 0.5
    dash.refresher.tick()
    assert panel.image.value == b""
    dash.close()


def test_a_shut_down_scheduler_is_shown_at_its_shutdown_on_every_panel():
    # the demo's dashboard.html is drawn seconds after its run ended: the status line said
    # "now 10.574 s" beside a history and a queue "now 3.001 s"; the picture stops at shutdown
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(print, at=1.0, label="a")
    s.schedule(print, at=9.0, label="b")
    clock.run_until(2.0)
    s.shutdown()
    other = Scheduler(clock)  # the clock goes on for others
    other.schedule(lambda: None, at=7.0)
    clock.run_until(7.5)
    assert clock.now() == 7.5 and s.moment().now == 2.0
    assert s.log.to_frame()["t"].iloc[-1] == 2.0  # its last row: the shutdown
    dash = Dashboard(s, autostart=False)
    dash.refresher.tick()
    html = " ".join(
        w.value
        for panel in dash.panels.values()
        for w in panel.display_widgets()
        if isinstance(w, W.HTML)
    )
    nows = re.findall(r"now (?:<b[^>]*>)?(-?[\d.]+ s)", html)
    assert len(nows) >= 2 and set(nows) == {"2.000 s"}, nows  # controls, queue, history...
    dash.close()
    other.shutdown()
