"""The widget panels and the dashboard, without a browser or a kernel.

Outside a kernel every widget has a dummy comm: traits, observers and
``Button.click()`` behave as in a notebook and nothing is sent anywhere, so the
panels' logic (and the refresher's rate limit, with an injected clock) can be
checked exactly. The browser side is in ``test_widgets_browser.py``.
"""

from __future__ import annotations

import json
import re
import threading
import time

import ipywidgets as W
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from widgetkit import close_widgets, scenario  # noqa: F401  (an autouse fixture)

from tempsched_lab import CancelResult, Case, RealClock, Scheduler, TaskState, VirtualClock, replay
from tempsched_lab.widgets import (
    ControlsPanel,
    Dashboard,
    DecisionTreePanel,
    HistoryPanel,
    LogPanel,
    QueuePanel,
    Refresher,
    TimelinePanel,
    active_refresher,
    demo_task,
)

PNG = b"\x89PNG\r\n\x1a\n"


def head_labels(html: str) -> list[str]:
    """Labels in the rows of the queue table marked as the head."""
    rows = re.findall(r"<tr class='tsl-head'.*?</tr>", html)
    return [re.findall(r"<td>(.*?)</td>", r)[4] for r in rows]


def is_png(image: W.Image) -> bool:
    return bytes(image.value).startswith(PNG)


class Counter:
    """Counts value changes of widgets (observers run in the thread that sets the value)."""

    def __init__(self, widgets: list[W.Widget]) -> None:
        self.times: dict[int, list[float]] = {id(w): [] for w in widgets}
        self.clock = time.monotonic
        for w in widgets:
            w.observe(self._recorder(id(w)), names="value")

    def _recorder(self, key: int):
        return lambda _change: self.times[key].append(self.clock())

    def count(self, widget: W.Widget) -> int:
        return len(self.times[id(widget)])

    def most(self) -> int:
        return max((len(v) for v in self.times.values()), default=0)


# -- panels -------------------------------------------------------------------------------------


def test_queue_panel_head_time_points_and_countdown():
    s, clock = scenario()
    panel = QueuePanel(s)
    assert "not refreshed" in panel.table.value  # nothing computed in the constructor
    panel.refresh()
    html = panel.table.value
    assert "5 pending</span> in 4 time points" in html
    assert head_labels(html) == ["heartbeat"]
    assert "in 500.00 ms" in html and "every 1.5 s" in html and "(&#x27;beta&#x27;,)" in html
    assert "<th>due t (s)</th>" in html and "<td>0.500</td>" in html  # the time language
    assert panel.image is None  # the sorted dict has no picture by default
    clock.step()  # heartbeat runs at 0.5 and is re-armed for 2.0
    panel.refresh()
    assert head_labels(panel.table.value) == ["alpha"]
    assert "in 500.00 ms" in panel.table.value and "now 0.500 s" in panel.table.value
    clock.step()
    panel.refresh()
    assert head_labels(panel.table.value) == ["beta", "gamma", "heartbeat"]
    panel.close()
    assert panel.closed and panel.table.comm is None


def test_queue_panel_large_queue_shows_first_points_and_a_count():
    s = Scheduler(VirtualClock())
    for i in range(50):
        for j in range(3):
            s.schedule(demo_task, at=1.0 + i, args=(i, j), label=f"t{i}")
    panel = QueuePanel(s, max_points=5, max_tasks=2)
    panel.refresh()
    html = panel.table.value
    assert "150 pending</span> in 50 time points" in html
    assert "… and 45 more time points (135 tasks)" in html
    assert html.count("… and 1 more task(s) at this time") == 5
    assert "t5" not in html and "t4" in html


@pytest.mark.parametrize("design", ["heap", "wheel", "sorteddict"])
def test_queue_panel_design_picture_from_a_reused_figure(design):
    s, clock = scenario(design)
    panel = QueuePanel(s, picture=None if design != "sorteddict" else True)
    panel.refresh()
    assert panel.image is not None and is_png(panel.image)
    figure = panel._fig.figure
    first = panel.image.value
    clock.step()
    panel.refresh()
    assert panel._fig.figure is figure and panel._fig.renders == 2
    assert panel.image.value != first
    panel.close()
    assert panel._fig.figure is None


def test_timeline_panel_draws_png_with_a_now_line_into_one_figure():
    s, clock = scenario()
    panel = TimelinePanel(s)
    panel.refresh()
    figure, first = panel.figure, panel.image.value
    assert is_png(panel.image)
    clock.step()
    panel.refresh()
    assert panel.figure is figure
    assert panel.image.value != first
    texts = [t.get_text() for ax in figure.axes for t in ax.texts]
    assert "now" in texts
    panel.close()
    assert panel.figure is None


def test_decision_tree_panel_highlights_the_last_decision_with_counts():
    s, _ = scenario()
    panel = DecisionTreePanel(s)
    panel.refresh()
    assert panel.last is not None and panel.last["case"] == int(Case.EARLIER_THAN_HEAD)
    assert panel.counts == {1: 0, 2: 1, 3: 1, 4: 2, 5: 0, 6: 0, 7: 0, 8: 1}
    assert "case 3, earlier than head" in panel.caption.value
    assert Case.EARLIER_THAN_HEAD.explanation.split(".")[0] in panel.caption.value.replace(
        "&#x27;", "'"
    )
    first = panel.image.value
    s.schedule(demo_task, at=2.0, args=("beta",))  # a duplicate at a later time point: case 7
    panel.refresh()
    assert panel.last["case"] == 7 and panel.counts[7] == 1
    assert "case 7, duplicate in queue" in panel.caption.value
    assert panel.image.value != first and is_png(panel.image)


def test_log_panel_filters_by_kind_case_and_task():
    s, clock = scenario()
    clock.run_until(2.0)
    s.cancel(3)
    panel = LogPanel(s, rows=50)
    panel.refresh()
    total = s.log.next_seq
    assert panel.table.value.count("tsl-row") == total
    assert f"{total} rows recorded" in panel.summary.value
    panel.kind.value = "cancel"  # an observer refreshes at once
    assert panel.table.value.count("tsl-row") == 1
    assert "cancel task #3: cancelled" in panel.table.value
    panel.kind.value = "all"
    panel.case.value = 8
    assert panel.table.value.count("tsl-row") == 2  # gamma joins beta, heartbeat re-armed
    panel.case.value = 0
    panel.task.value = "0"
    kinds = re.findall(r"tsl-kind-(\w+)", panel.table.value)
    assert kinds == ["schedule", "dispatch", "start", "finish"]
    panel.task.value = "x"
    assert "task ID must be a number" in panel.summary.value
    panel.task.value = ""
    panel.rows.value = 3
    assert panel.table.value.count("tsl-row") == 3


def test_controls_drive_a_virtual_clock():
    s, clock = scenario()
    panel = ControlsPanel(s)
    changes = []
    panel.on_change(lambda: changes.append(clock.now()))
    panel.on_change(panel.refresh)  # a listener (a dashboard's refresher) shows the effect
    panel.step_button.click()
    assert clock.now() == 0.5 and "step</b> to 0.500 s" in panel.result.value
    assert "now <b class='tsl-now'>0.500 s</b>" in panel.status.value
    panel.amount.value = 2.0
    panel.advance_button.click()
    assert clock.now() == 2.5 and s.status(1).state is TaskState.DONE
    panel.amount.value = -1.0
    panel.advance_button.click()
    assert clock.now() == 2.5 and "ValueError" in panel.result.value
    panel.rate.value = 50.0
    panel.play_button.click()
    assert clock.rate == 50.0 and "playing at 50×" in panel.status.value
    time.sleep(0.1)
    panel.rate.value = 20.0  # changing the rate while playing applies at once
    assert clock.rate == 20.0
    panel.pause_button.click()
    assert clock.rate == 0 and clock.now() > 3.0 and "paused" in panel.status.value
    assert len(changes) == 6


def test_controls_schedule_form_explains_each_decision():
    s, clock = scenario()
    panel = ControlsPanel(s)
    panel.label.value, panel.when.value = "zeta", "0.25"
    panel.schedule_button.click()
    d = panel.last_decision
    assert d.case is Case.EARLIER_THAN_HEAD and s.status(d.task_id).state is TaskState.PENDING
    assert "Case 3, earlier than head" in panel.result.value
    assert "the new task becomes the head" in panel.result.value
    assert panel.cancel_id.value == d.task_id
    panel.schedule_button.click()  # the same request again: a duplicate of the head
    assert panel.last_decision.case is Case.DUPLICATE_OF_HEAD
    assert f"the existing task #{d.task_id} is returned" in panel.result.value
    panel.args.value = "1, 'a'"
    panel.schedule_button.click()
    assert panel.last_decision.case is Case.JOINS_HEAD
    assert s.snapshot().tasks[panel.last_decision.task_id].args == "(1, 'a')"
    panel.mode.value = "at"  # pre-filled at_lead (1 s on a virtual clock) ahead, whole seconds
    assert panel.when.value == "1.000" and panel.when.description == "time"
    panel.when.value = "2"
    panel.schedule_button.click()
    assert panel.last_decision.case is Case.JOINS_TIME_POINT
    clock.advance(1.0)
    pending = s.pending
    panel.when.value = "0.5 s"  # in the past: case 1, nothing stored
    panel.schedule_button.click()
    assert panel.last_decision.case is Case.PAST and "rejected" in panel.result.value
    assert s.pending == pending
    panel.mode.value = "delay"
    panel.when.value, panel.period.value = "1", 0.5
    panel.schedule_button.click()
    assert s.status(panel.last_decision.task_id).period == 0.5
    panel.period.value = -1.0
    panel.schedule_button.click()
    assert "schedule rejected" in panel.result.value and "ValueError" in panel.result.value
    panel.period.value = 0.0
    panel.when.value = "soon"  # bad input: a clear error naming the field and the value
    panel.schedule_button.click()
    assert "delay=&#x27;soon&#x27;: expected a number of seconds" in panel.result.value
    panel.mode.value = "at"
    panel.when.value = "later"
    panel.schedule_button.click()
    assert "time=&#x27;later&#x27;: expected seconds since start" in panel.result.value


def test_controls_cancel_by_id_in_words():
    s, _ = scenario()
    panel = ControlsPanel(s)
    panel.cancel_id.value = 3
    panel.cancel_button.click()
    assert panel.last_cancel is CancelResult.CANCELLED
    assert s.status(3).state is TaskState.CANCELLED
    assert "removed from the queue" in panel.result.value
    panel.cancel_button.click()
    assert panel.last_cancel is CancelResult.ALREADY_DONE
    panel.cancel_id.value = 99
    panel.cancel_button.click()
    assert panel.last_cancel is CancelResult.NOT_FOUND and "never issued" in panel.result.value


def test_controls_under_a_real_clock_schedule_and_cancel_only():
    s = Scheduler(RealClock())
    try:
        panel = ControlsPanel(s)
        assert panel.step_button is None and panel.play_button is None
        panel.refresh()
        assert "real clock, running" in panel.status.value
        panel.when.value = "60"
        panel.schedule_button.click()
        assert panel.last_decision.case is Case.EMPTY and s.pending == 1
        panel.cancel_button.click()
        assert panel.last_cancel is CancelResult.CANCELLED and s.pending == 0
    finally:
        s.shutdown()
    panel.schedule_button.click()
    assert "SchedulerClosedError" in panel.result.value


def test_history_panel_replays_the_queue_at_each_row():
    s, clock = scenario("wheel")
    clock.run_until(2.0)
    s.cancel(3)
    panel = HistoryPanel(s, picture=False)  # (the dashboard test checks the heap's picture)
    panel.refresh()
    frame = s.log.to_frame()
    last = int(frame["seq"].iloc[-1])
    assert panel.slider.max == last and panel.slider.value == last and panel.follow.value
    assert "cancel task #3: cancelled" in panel.info.value
    for seq in (0, 3, 4, last // 2, last):
        panel.slider.value = seq  # by hand: follows no more
        state = replay(frame, upto=seq)
        html = panel.queue.value
        assert f"after row {seq}" in html and f"{state.size} pending" in html
        ids = re.findall(r"<tr class='tsl-head'.*?</tr>", html)
        assert len(ids) == len(state.head)
    assert not panel.follow.value
    panel.slider.value = 4
    assert "case 3 (earlier than head)" in panel.info.value and "(t = 0.000 s)" in panel.info.value
    assert "The task is due before the current head" in panel.info.value
    assert "(&#x27;alpha&#x27;,)" in panel.queue.value  # arguments come from the log
    panel.next_button.click()
    assert panel.shown_row == 5
    panel.prev_button.click()
    panel.prev_button.click()
    assert panel.shown_row == 3
    clock.step()
    panel.refresh()  # not following: stays on row 3, the range grows
    assert panel.shown_row == 3 and panel.slider.max == s.log.next_seq - 1
    panel.follow.value = True  # a panel alone refreshes itself at once
    assert panel.shown_row == s.log.next_seq - 1


# -- the dashboard and its refresher ---------------------------------------------------------------


def test_dashboard_composes_every_panel_and_clicks_flow_through():
    s, _ = scenario("heap")
    fake = [0.0]
    dash = Dashboard(s, autostart=False, clock=lambda: fake[0])
    assert set(dash.panels) == {"controls", "queue", "timeline", "tree", "log", "history"}
    assert dash.queue is dash.panels["queue"] and not dash.refresher.running
    assert head_labels(dash.queue.table.value) == ["heartbeat"]  # refreshed when built
    assert all(is_png(p.image) for p in (dash.timeline, dash.tree, dash.queue))
    dash.controls.step_button.click()
    fake[0] = 0.1
    n = dash.refresher.tick()
    assert n >= 5  # every part whose content changed, plots included, in the same round
    assert head_labels(dash.queue.table.value) == ["alpha"]
    assert "heartbeat" in dash.log.table.value and "finish" in dash.log.table.value
    assert dash.history.shown_row == s.log.next_seq - 1 and is_png(dash.history.image)
    assert isinstance(dash._repr_mimebundle_(), dict)
    with pytest.raises(ValueError, match="unknown"):
        Dashboard(s, panels=("queue", "nope"))
    dash.close()


def test_refresher_rate_limit_holds_under_a_flood_fake_clock():
    """20,000 log rows in one (simulated) second: at most 10 refresh rounds."""
    s, _ = scenario()
    fake = [0.0]
    dash = Dashboard(s, autostart=False, clock=lambda: fake[0], resync_every=None)
    widgets = [w for p in dash.panels.values() for w in p.display_widgets()]
    counter = Counter(widgets)
    rounds_before, rows_before = dash.refresher.rounds, s.log.next_seq
    for _ in range(1000):  # 1 ms steps, 20 rows each
        for i in range(10):
            s.cancel(s.schedule(demo_task, delay=100.0, args=(i,), label="flood"))
        fake[0] += 0.001
        dash.refresher.tick()
    assert s.log.next_seq - rows_before == 20_000
    assert dash.refresher.rounds - rounds_before <= 10
    assert counter.most() <= 10
    assert counter.count(dash.timeline.image) <= 10
    assert counter.count(dash.log.table) >= 5
    # the last state always lands once the flood stops
    fake[0] += 1.5
    dash.refresher.tick()
    assert f"{s.log.next_seq} rows recorded" in dash.log.summary.value
    assert str(s.log.next_seq - 1) in dash.log.table.value
    assert dash.history.shown_row == s.log.next_seq - 1
    dash.close()


def test_refresher_thread_rate_limit_under_a_real_flood():
    """A thread writes ~20,000 rows/s for a second; the refresher thread stays near 10/s."""
    s = Scheduler(VirtualClock())
    dash = Dashboard(s, panels=("controls", "queue", "log"), max_rate=10, resync_every=None)
    counter = Counter([dash.log.table, dash.queue.table, dash.controls.status])
    written = [0]

    def flood() -> None:
        start = time.monotonic()
        for slot in range(100):  # 100 slots of 10 ms, 200 rows each
            for i in range(100):
                s.cancel(s.schedule(demo_task, delay=100.0, args=(slot, i)))
            written[0] += 200
            pause = start + (slot + 1) * 0.01 - time.monotonic()
            if pause > 0:
                time.sleep(pause)

    t0 = time.monotonic()
    writer = threading.Thread(target=flood)
    writer.start()
    writer.join()
    elapsed = time.monotonic() - t0
    deadline = time.monotonic() + 3
    while f"{s.log.next_seq} rows recorded" not in dash.log.summary.value:
        assert time.monotonic() < deadline, "the final state never reached the log panel"
        time.sleep(0.02)
    assert written[0] == 20_000 and elapsed < 10, elapsed  # ~1 s unless the machine is loaded
    allowed = (elapsed + 0.5) * 10 + 2
    assert counter.count(dash.log.table) <= allowed, (counter.count(dash.log.table), elapsed)
    assert counter.most() <= allowed
    gaps = [b - a for a, b in zip(*[counter.times[id(dash.log.table)]] * 2, strict=False)]
    assert counter.count(dash.log.table) >= 3, gaps
    dash.close()
    assert not dash.refresher.running


def test_close_stops_the_thread_and_releases_everything():
    s, _ = scenario()
    dash = Dashboard(s, max_rate=20)
    thread = dash.refresher.thread
    assert thread is not None and thread.is_alive() and thread.daemon
    assert active_refresher(s) is dash.refresher
    renderers = [r for p in dash.panels.values() for r in p._renderers]
    widgets = [w for p in dash.panels.values() for w in p._owned] + [dash.header]
    dash.close()
    assert not thread.is_alive()
    assert all(r.figure is None for r in renderers)
    assert all(w.comm is None for w in widgets)
    # the root box stays, showing its last frame (never an empty output): two small models
    (frame,) = dash.widget.children
    assert "tsl-lastframe" in frame._dom_classes and "This view was closed" in frame.value
    assert "<img" in frame.value  # the pictures as they were
    assert active_refresher(s) is None
    dash.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        dash.to_html("never.html")


def test_recreating_a_dashboard_stops_the_old_refresher():
    s, _ = scenario()
    old = Dashboard(s, panels=("queue", "log"))
    old_thread = old.refresher.thread
    new = Dashboard(s, panels=("queue", "log"))  # a re-run cell
    assert old.closed and not old_thread.is_alive() and old.queue.table.comm is None
    assert new.refresher.running and active_refresher(s) is new.refresher
    other, _ = scenario()
    third = Dashboard(other, panels=("log",))  # another scheduler: both stay live
    assert new.refresher.running and third.refresher.running
    new.close()
    third.close()


def test_refresher_resyncs_display_widgets_periodically(monkeypatch):
    s, _ = scenario()
    fake = [0.0]
    panel = LogPanel(s)
    r = Refresher([panel], scheduler=s, clock=lambda: fake[0], resync_every=3.0)
    sent = []
    original = W.HTML.send_state

    def send_state(self, key=None):  # key=None: a full resync (a trait change passes its name)
        if key is None:
            sent.append(self)
        return original(self, key)

    monkeypatch.setattr(W.HTML, "send_state", send_state)
    for step in range(70):  # 7 simulated seconds
        fake[0] = step * 0.1
        r.tick()
    assert r.resyncs == 2 and len(sent) == 2 * len(panel.display_widgets())
    assert all(w in panel.display_widgets() for w in sent)
    assert panel.kind not in panel.display_widgets()  # never an input
    r.close()


def test_refresher_counts_part_errors_and_goes_on():
    s, _ = scenario()
    panel = LogPanel(s)
    broken = QueuePanel(s)

    def fail(_scene) -> None:
        raise RuntimeError("boom")

    r = Refresher([broken, panel], scheduler=s, clock=lambda: 0.0)
    r.parts[0].render = fail
    assert r.tick() == 1 and r.errors == 1 and "boom" in str(r.last_error)
    assert "tsl-row" in panel.table.value
    r.close()


def test_stop_after_bounds_the_thread():
    s, _ = scenario()
    dash = Dashboard(s, panels=("log",), stop_after=0.3)
    dash.refresher.thread.join(3)
    assert not dash.refresher.running
    dash.close()


def test_to_html_writes_embedded_widget_state(tmp_path):
    s, clock = scenario("heap")
    clock.step()
    unrelated = W.HTML("another cell's widget")
    dash = Dashboard(s, autostart=False)
    renders = [r.renders for p in dash.panels.values() for r in p._renderers]
    path = dash.to_html(tmp_path / "snapshot.html", title="lesson 3")
    text = path.read_text()
    assert "<title>lesson 3</title>" in text
    assert 'type="application/vnd.jupyter.widget-view+json"' in text
    state_json = re.search(
        r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', text, re.S
    ).group(1)
    state = json.loads(state_json)["state"]
    values = [m["state"].get("value") for m in state.values()]
    assert any(isinstance(v, str) and "alpha" in v and "tsl-head" in v for v in values)
    images = [m for m in state.values() if m["model_name"] == "ImageModel"]
    assert len(images) >= 4 and all(m.get("buffers") for m in images)
    # only this dashboard's widgets, and a static copy for browsers without the widget manager
    roots = [m for m in state.values() if "tsl-dashboard" in m["state"].get("_dom_classes", ())]
    assert len(roots) == 1 and unrelated.model_id not in state
    assert dash.queue.widget.model_id in state and dash.log.table.model_id in state
    # the canvas timeline is left out: a page without a kernel shows its PNG instead
    assert dash.timeline.live.model_id not in state
    # the dashboard was drawn when built and nothing changed since: no second drawing
    assert [r.renders for p in dash.panels.values() for r in p._renderers] == renders
    assert 'id="tsl-static"' in text and "data:image/png;base64," in text
    dash.close()


def test_the_queue_panel_shows_a_calendar_tasks_rule_and_next_fire_times():
    pytest.importorskip("cronsim")
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from tempsched_lab.widgets.queue import queue_table_html

    paris = ZoneInfo("Europe/Paris")
    start = datetime(2026, 3, 23, tzinfo=paris).timestamp()  # a Monday
    clock = VirtualClock(start=start)
    s = Scheduler(clock)
    s.schedule(print, cron="0 9 * * mon-fri", tz="Europe/Paris", label="standup")
    moment = s.moment()
    html = queue_table_html(moment.queue, moment.now, scale=moment.time_scale)
    assert "At 09:00 on Monday through Friday (Europe/Paris)" in html
    # next fire times in the time language: Tuesday and Wednesday 09:00, as seconds since start
    assert f"then {32400 + 86400:.3f} s, {32400 + 2 * 86400:.3f} s" in html


def test_the_tree_picture_for_a_case_seen_before_equals_a_fresh_drawing():
    """One reused figure per highlighted case: going back to a case redraws only its counts."""
    s, _ = scenario()
    panel = DecisionTreePanel(s)
    panel.refresh()  # case 3 (earlier than head) is the last decision
    s.schedule(demo_task, at=2.0, args=("beta",))  # case 7
    panel.refresh()
    s.schedule(demo_task, at=0.25, args=("first",))  # case 3 again, with new counts
    panel.refresh()
    assert panel.last["case"] == 3
    fresh = DecisionTreePanel(s)
    fresh.refresh()  # the same state drawn from scratch
    assert panel.image.value == fresh.image.value
    panel.close()
    fresh.close()


# -- hostile input from the page and from Python (issue 24, R13 and the timeline traits) ------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-" * 5000 + "1", "args: 5001 characters; at most 1000"),
        ("-" * 900 + "1", "args: nested 900 deep"),
        ("[" * 60 + "]" * 60, "args: nested 60 deep"),
        ("(" * 30 + "1" + ")" * 30, "args: nested 30 deep"),
    ],
)
def test_the_args_box_refuses_deep_or_long_text_with_a_clear_error(text, message):
    s, _ = scenario()
    panel = ControlsPanel(s)
    panel.args.value = text
    panel.schedule_button.click()  # no RecursionError / MemoryError out of the callback
    assert "schedule rejected" in panel.result.value and message in panel.result.value
    panel.args.value = "1, 'a'"  # and the form works on
    panel.schedule_button.click()
    assert "Case" in panel.result.value and s.snapshot().state.size == 6
    panel.close()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="-+~([{}]),1'a ", max_size=1200))
@example("{{}}")  # a set of dicts: literal_eval's TypeError (found by this test in CI)
@example("{[1], 'a'}")
def test_parse_args_answers_any_text_with_a_tuple_or_a_clear_error(text):
    from tempsched_lab.widgets.controls import parse_args

    try:
        args = parse_args(text)
    except ValueError as exc:
        assert str(exc).startswith("args: ")
    else:
        assert isinstance(args, tuple)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("window", float("nan"), "window=nan"),
        ("window", -1.0, "window=-1.0"),
        ("view", [0.0, float("inf")], "view=[0.0, inf]"),
        ("view", [2.0, 1.0], "view=[2.0, 1.0]"),
        ("lanes", "diagonal", "lanes='diagonal'"),
        ("height", 10, "height=10"),
        ("type_scale", "huge", "scale='huge'"),
    ],
)
def test_timeline_traits_set_from_python_are_validated_and_never_bounce(name, value, message):
    import traitlets

    s, _ = scenario()
    panel = TimelinePanel(s, window=30)
    live = panel.live
    before = getattr(live, name)
    with pytest.raises(traitlets.TraitError, match=re.escape(message)):
        setattr(live, name, value)  # was: nan bounced between the two windows (RecursionError)
    assert getattr(live, name) == before
    panel.window.value = 1e9  # the box clamps it: the canvas takes the clamped value, once
    assert live.window == panel.window.value == 86_400.0
    panel.close()


# -- the type scale: default 12 px and up, projector 16 px and up ---------------------------------


def picture_text_px(renderer) -> list[float]:
    from matplotlib.text import Text

    fig = renderer.figure
    return [
        t.get_fontsize() * fig.dpi / 72
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip()
    ]


def test_a_projector_dashboard_sets_every_panel_canvas_and_picture_and_the_toggle_undoes_it():
    s, clock = scenario("heap")
    clock.run_until(2.0)
    dash = Dashboard(s, scale="projector", autostart=False)
    assert all(p.type_scale == "projector" for p in dash.panels.values())
    assert "tsl-projector" in dash.widget._dom_classes and dash.projector.value
    assert dash.timeline.live.type_scale == "projector"
    tree = dash.tree
    assert png_width(tree.image) == 840  # 6.3 in at 100 dpi, drawn a third denser: fits 900 px
    sizes = [px for r in tree._figs.values() for px in picture_text_px(r)]
    assert sizes and min(sizes) >= 16
    # the heap picture (queue and history): 4.15 in, 553 px in projector type (fits a column)
    assert png_width(dash.queue.image) > 540 and png_width(dash.history.image) > 540
    dash.projector.value = False  # the page's toggle
    dash.refresh()
    assert all(p.type_scale == "default" for p in dash.panels.values())
    assert "tsl-projector" not in dash.widget._dom_classes
    assert dash.timeline.live.type_scale == "default" and png_width(tree.image) == 720
    sizes = [px for r in tree._figs.values() for px in picture_text_px(r)]
    assert min(sizes) >= 12
    with pytest.raises(ValueError, match="scale='huge'"):
        Dashboard(s, scale="huge", autostart=False)
    dash.close()


def png_width(image: W.Image) -> int:
    from tempsched_lab.widgets._base import png_size

    return png_size(bytes(image.value))[0]


def test_the_style_sheet_makes_a_projector_view_16_px_and_leaves_the_default_at_12_px_and_up():
    from tempsched_lab.widgets._style import type_css

    css = type_css()
    assert ".tsl-projector, .tsl-projector * { font-size: 16px !important;" in css
    s, _ = scenario()
    dash = Dashboard(s, autostart=False)
    html = " ".join(
        w.value for p in dash.panels.values() for w in p.display_widgets() if isinstance(w, W.HTML)
    )
    sizes = [int(x) for x in re.findall(r"font-size:\s*(\d+)px", html)]
    assert sizes and min(sizes) >= 12
    dash.close()


# -- the static export tells the truth (issue 25, item 5) -------------------------------------


def test_an_export_shows_the_whole_run_and_a_stopped_scheduler_says_only_that(tmp_path):
    s = Scheduler(name="export")  # a real clock: the panel's live window is 30 s
    s.schedule(demo_task, delay=0.05, label="quick")
    assert s.wait_idle(timeout=10)
    s.shutdown()
    dash = Dashboard(s, autostart=False, resync_every=None)
    status = dash.controls.status.value
    assert "scheduler shut down" in status and "running" not in status
    path = dash.to_html(tmp_path / "dashboard.html")
    text = path.read_text()
    assert "the whole run, until the scheduler shut down" in text
    assert "30 s window" not in text
    widths = [int(w) for w in re.findall(r"<img class='tsl-picture' style='width:(\d+)px", text)]
    assert 1300 in widths  # the whole-run timeline, wide enough for the plot and its legend
    dash.close()


def test_the_export_timeline_legend_is_no_wider_than_its_plot():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from tempsched_lab.plots import example_frame, new_figure, plot_timeline
    from tempsched_lab.widgets.figures import EXPORT_WIDTH

    fig = new_figure((EXPORT_WIDTH, 4.6))
    ax = plot_timeline(example_frame(), ax=fig.add_subplot())
    FigureCanvasAgg(fig).draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.width <= ax.get_window_extent().width


def test_set_scale_makes_every_widget_and_figure_made_afterwards_projector_size():
    """One call for a whole notebook (issue 34): before, each widget needed scale= of its own."""
    import tempsched_lab
    from tempsched_lab.plots import plot_decision_tree
    from tempsched_lab.plots._check import drawn_texts
    from tempsched_lab.widgets import HistoryPanel, PredictPanel, TimelineWidget

    s, _ = scenario()
    tempsched_lab.set_scale("projector")
    try:
        made = [Dashboard(s, autostart=False), HistoryPanel(s), PredictPanel(s)]
        timeline = TimelineWidget(s)
        assert [w.type_scale for w in made] == ["projector"] * 3
        assert timeline.type_scale == "projector"
        assert TimelineWidget(s, scale="default").type_scale == "default"  # its own wins
        texts = drawn_texts(plot_decision_tree(4).figure)
        assert min(t.size_px for t in texts) >= 16
    finally:
        tempsched_lab.set_scale("default")
    assert TimelineWidget(s).type_scale == "default"
    with pytest.raises(ValueError, match="scale='huge'"):
        tempsched_lab.set_scale("huge")
    for widget in made:
        widget.close()
