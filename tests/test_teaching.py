"""Teaching mode without a browser: predict then reveal, what each row changed, runs that take
virtual time, two designs side by side, a clicked task filtering the log."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from widgetkit import close_widgets, scenario  # noqa: F401 - the fixture closes widgets

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.core.decision import Case
from tempsched_lab.scenarios import SimulatedWorker
from tempsched_lab.widgets import (
    ControlsPanel,
    Dashboard,
    HistoryPanel,
    PredictPanel,
    SideBySide,
    craft_request,
    demo_task,
)
from tempsched_lab.widgets.controls import virtual_work
from tempsched_lab.widgets.teaching import Request, path_text

# -- predict, then reveal ------------------------------------------------------------------------

requests = st.lists(
    st.tuples(st.integers(1, 6), st.integers(0, 2)),  # (due in whole seconds, argument)
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(made=requests, steps=st.integers(0, 2), seed=st.integers(0, 10_000))
def test_a_crafted_request_lands_in_the_case_it_was_made_for(made, steps, seed):
    clock = VirtualClock()
    s = Scheduler(clock)
    known: dict[int, Request] = {}
    for due, arg in made:
        request = Request(float(due), (f"x{arg}",), "job", 0)
        decision = s.schedule_decision(demo_task, at=request.at, args=request.args, label="job")
        if decision.duplicate_of is None:
            known[decision.task_id] = request
    for _ in range(steps):
        clock.step()
    state = s.snapshot().state
    pending = {i for _, ids in state.points for i in ids}
    known = {i: r for i, r in known.items() if i in pending}
    rng = random.Random(seed)
    for serial in range(1, 4):
        request = craft_request(state, clock.now(), known, rng, serial)
        try:
            decision = s.schedule_decision(
                demo_task, at=request.at, args=request.args, label=request.label
            )
        except Exception as exc:  # PastTimeError carries the decision
            decision = exc.decision
        assert int(decision.case) == request.intended, (request, state)
        state = s.snapshot().state
        pending = {i for _, ids in state.points for i in ids}
        if decision.task_id is not None and decision.duplicate_of is None:
            known[decision.task_id] = request
        known = {i: r for i, r in known.items() if i in pending}


def test_every_case_comes_up_in_a_lesson():
    clock = VirtualClock()
    s = Scheduler(clock)
    panel = PredictPanel(s, seed=3)
    seen = set()
    for round_ in range(80):
        request = panel.pending
        decision = panel.guess(request.intended if round_ % 2 else 1)
        seen.add(int(decision.case))
        if round_ % 8 == 7:
            clock.advance(10.0)  # the queue runs empty: case 2 becomes possible again
        panel.new_request()
    assert seen == {int(c) for c in Case}
    right, asked = panel.score
    assert asked == 80 and right == sum(g == a for g, a in panel.history)
    assert 40 <= right < 80  # every second guess was the intended case, the others case 1


def test_reveal_says_right_or_wrong_with_the_path_and_explanation():
    s, _ = scenario()
    panel = PredictPanel(s, seed=0)
    panel.pending = Request(2.0, ("new",), "joiner", int(Case.JOINS_TIME_POINT))
    decision = panel.guess(int(Case.NEW_TIME_POINT))
    assert decision.case is Case.JOINS_TIME_POINT
    text = panel.result.value.replace("&#x27;", "'")
    assert "Not quite" in text and "you said case 4 (new time point)" in text
    assert "case 8, joins time point" in text
    assert path_text(Case.JOINS_TIME_POINT) in text.replace("&gt;", ">")
    assert Case.JOINS_TIME_POINT.explanation in text
    assert panel.score == (0, 1) and all(b.disabled for b in panel.buttons.values())
    panel.next_button.click()
    assert panel.pending is not None and not any(b.disabled for b in panel.buttons.values())
    panel.buttons[panel.pending.intended].click()
    assert "Right!" in panel.result.value and panel.score == (1, 2)
    assert "data-right='1' data-asked='2'" in panel.score_text.value
    with pytest.raises(ValueError, match="case=9"):
        panel.guess(9)


def test_teaching_dashboard_shows_the_prediction_beside_the_tree_in_one_moment():
    s, _ = scenario()
    dash = Dashboard(s, autostart=False, teaching=True)
    assert "predict" in dash.panels
    dash.predict.guess(dash.predict.pending.intended)
    dash.refresh()
    seq = s.log.next_seq
    for panel in dash.panels.values():
        stamps = [
            w.value for w in panel.display_widgets() if "tsl-stamp" in str(getattr(w, "value", ""))
        ]
        assert stamps and f"data-seq='{seq}'" in stamps[0], panel.name
    case = dash.predict.last.case
    assert f"case {int(case)}, {case.short}" in dash.tree.caption.value
    plain = Dashboard(Scheduler(VirtualClock()), autostart=False)
    assert "predict" not in plain.panels
    plain.close()
    dash.close()


# -- step back and forward: what changed ---------------------------------------------------------


def test_history_marks_the_new_task_the_matched_duplicate_the_old_head_and_the_leavers():
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(demo_task, at=2.0, args=("a",), label="first")  # row 0
    s.schedule(demo_task, at=1.0, args=("b",), label="second")  # row 1: case 3
    s.schedule(demo_task, at=1.0, args=("b",), label="second")  # row 2: case 5
    s.schedule(demo_task, at=1.0, args=("c",), label="third")  # row 3: case 6
    clock.step()  # row 4, 5: the due group #1, #2 leaves
    panel = HistoryPanel(s, picture=False)
    panel.refresh()
    panel.slider.value = 1
    strip = panel.strip.value
    assert panel.change.added == (1,) and panel.change.old_head == (0,)
    assert "tsl-chg-new" in strip and "data-task='1'" in strip and "tsl-chg-oldhead" in strip
    assert "task #1 is new and becomes the head; the old head (#0) moves back" in strip
    panel.prev_button.click()  # step back: row 0
    assert panel.slider.value == 0 and panel.change.added == (0,)
    assert "tsl-chg-oldhead" not in panel.strip.value
    panel.slider.value = 2
    assert panel.change.matched == 1 and panel.change.added == ()
    assert "tsl-chg-dup" in panel.strip.value and "matched task #1" in panel.strip.value
    dispatch = int(s.log.to_frame().query("kind == 'dispatch'")["seq"].iloc[0])
    panel.slider.value = dispatch
    assert panel.change.leaving == (1, 2)
    assert "tsl-chg-leaving" in panel.strip.value
    assert "the due group #1, #2 are handed to its executor" in panel.strip.value
    panel.next_button.click()  # the start row: nothing moves in the queue
    assert panel.slider.value == dispatch + 1
    assert panel.change.summary() == "the queue did not change"
    panel.close()


# -- runs that take virtual time -----------------------------------------------------------------


def test_tasks_scheduled_from_the_form_can_take_virtual_time():
    clock = VirtualClock()
    s = Scheduler(clock)
    panel = ControlsPanel(s)
    panel.takes.value = 1.5
    panel.when.value = "1"
    panel.schedule_button.click()  # due at 1, runs 1.5 s
    panel.takes.value = 0.0
    panel.when.value = "2"
    panel.schedule_button.click()  # due at 2: falls due while the first one runs
    panel.step_button.click()
    panel.step_button.click()
    frame = s.log.to_frame()
    finish = frame[frame["kind"] == "finish"]
    assert finish["duration"].round(6).tolist() == [1.5, 0.0]
    late = frame.loc[frame["kind"] == "dispatch", "lateness"].round(6).tolist()
    assert late == [0.0, 0.5]  # the second ran late: an overrun shown without real waiting
    # the same request again is still a duplicate (the same virtual action)
    assert virtual_work(clock, 1.5) is virtual_work(clock, 1.5)
    assert virtual_work(clock, 1.5) is not virtual_work(VirtualClock(), 1.5)
    panel.close()


# -- side by side --------------------------------------------------------------------------------


def lesson(s: Scheduler) -> None:
    s.schedule(demo_task, at=1.0, args=("a",), label="a")
    s.schedule(demo_task, at=1.034, args=("b",), label="b")
    s.schedule(demo_task, at=0.5, period=1.0, label="beat")


def test_side_by_side_steps_both_designs_to_the_same_times_and_links_the_views():
    pair = SideBySide(lesson, designs=("heap", "wheel"), autostart=False)
    heap, wheel = pair.schedulers
    assert [s.queue.design for s in pair.schedulers] == ["heap", "wheel"]
    assert pair.step() == 0.5 and heap.clock.now() == wheel.clock.now() == 0.5
    pair.step()
    pair.step()
    assert heap.clock.now() == wheel.clock.now() == 1.034
    assert heap.moment().pending == 1 and wheel.moment().pending == 2  # the wheel rounds up
    pair.advance(1.0)
    assert heap.clock.now() == wheel.clock.now() == 2.034
    first, second = (d.timeline.live for d in pair.dashboards)
    first.view = [0.2, 1.2]
    first.selected = 1
    second.lanes = "thread"
    assert second.view == [0.2, 1.2] and second.selected == 1 and first.lanes == "thread"
    pair.refresh()
    assert "heap queue" in pair.status.value and "wheel queue" in pair.status.value
    with pytest.raises(ValueError, match="seconds=-1"):
        pair.advance(-1)
    pair.close()
    assert heap.closed and wheel.closed


def test_side_by_side_on_two_executors_queues_on_the_simulated_worker():
    def slow(s: Scheduler) -> None:
        work = virtual_work(s.clock, 0.6)
        s.schedule(work, at=1.0, args=("x",), label="x")
        s.schedule(work, at=1.0, args=("y",), label="y")

    pair = SideBySide(slow, designs=("heap",), executors=(None, SimulatedWorker()), autostart=False)
    pair.advance(3.0)
    inline, worker = (s.log.to_frame() for s in pair.schedulers)
    delays = worker.loc[worker["kind"] == "start", "queue_delay"].round(6).tolist()
    assert delays == [0.0, 0.6]  # one simulated worker: "y" waits for "x"
    assert len(inline[inline["kind"] == "finish"]) == 2
    assert "simulated worker" in pair.schedulers[1].name
    with pytest.raises(ValueError, match="two sides"):
        SideBySide(slow, designs=("heap",))
    pair.close()


# -- a clicked task filters the log --------------------------------------------------------------


def test_clicking_a_task_in_the_timeline_filters_the_log_to_its_history():
    s, clock = scenario()
    clock.run_until(4.0)
    dash = Dashboard(s, autostart=False)
    dash.timeline.live.selected = 4  # the heartbeat, as a click in the page sets it
    dash.refresh()
    assert dash.log.task.value == "4"
    shown = dash.log.filtered()
    assert len(shown) > 3 and set(shown["task_id"]) == {4}
    dash.timeline.live.selected = -1
    assert dash.log.task.value == ""
    dash.close()


# -- one moment per frame in the teaching views (issue 25, item 2) -------------------------------


def record_writes(monkeypatch) -> list[tuple[str, object]]:
    """Every widget write that reaches the page, in order: ``(what, widget)``; and the renders."""
    from tempsched_lab.widgets import _base

    events: list[tuple[str, object]] = []
    write, render = _base._write, _base.FigureRenderer.render

    def recorded_write(widget, traits):
        events.append(("write", widget))
        return write(widget, traits)

    def recorded_render(self, *args, **kwargs):
        events.append(("render", self))
        return render(self, *args, **kwargs)

    monkeypatch.setattr(_base, "_write", recorded_write)
    monkeypatch.setattr(_base.FigureRenderer, "render", recorded_render)
    return events


def test_a_new_predict_panel_starts_clean():
    s, _ = scenario("heap")
    panel = PredictPanel(s)
    assert panel.score == (0, 0) and "data-right='0' data-asked='0'" in panel.score_text.value
    assert "pick the case you expect" in panel.result.value
    panel.close()


def test_the_verdict_reaches_the_page_in_the_frame_that_draws_the_tree(monkeypatch):
    s, _ = scenario("heap")
    dash = Dashboard(s, teaching=True, autostart=False)
    events = record_writes(monkeypatch)
    decision = dash.predict.guess(4)
    # nothing of the verdict is shown yet: it waits for the round that shows its rows
    assert "pick the case you expect" in dash.predict.result.value
    assert [e for e in events if e[0] == "write"] == []
    dash.refresher.tick()  # the poke's round
    assert "tsl-predict-verdict" in dash.predict.result.value
    writes = [w for kind, w in events if kind == "write"]
    renders = [i for i, (kind, _) in enumerate(events) if kind == "render"]
    first_write = next(i for i, (kind, _) in enumerate(events) if kind == "write")
    assert renders and max(renders) < first_write  # every picture drawn before anything is sent
    tree_image, verdict = dash.tree.image, dash.predict.result
    assert tree_image in writes and verdict in writes and dash.history.info in writes
    assert writes.index(tree_image) < writes.index(verdict)
    row = s.log.next_seq - 1
    assert f"tsl-row-{row}" in tree_image._dom_classes and f"row {row}," in dash.tree.caption.value
    assert (
        f"data-after='{row + 1}'" in verdict.value and f"case {int(decision.case)}" in verdict.value
    )
    dash.close()


def test_a_history_step_sends_its_picture_and_texts_together_picture_first(monkeypatch):
    s, clock = scenario("heap")
    clock.run_until(1.0)
    panel = HistoryPanel(s)
    panel.refresh()
    events = record_writes(monkeypatch)
    panel.prev_button.click()
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "render" and "render" not in kinds[1:]  # drawn, then everything sent
    writes = [w for kind, w in events if kind == "write"]
    assert writes.index(panel.image) < writes.index(panel.info)
    row = panel.slider.value
    assert f"tsl-row-{row}" in panel.image._dom_classes and f"<b>Row {row}</b>" in panel.info.value
    panel.close()


def test_step_both_draws_both_sides_and_then_sends_them_as_one_frame(monkeypatch):
    from tempsched_lab.widgets import _base

    def lesson(s):
        s.schedule(demo_task, at=1.0, args=("a",), label="a")
        s.schedule(demo_task, at=1.034, args=("b",), label="b")

    pair = SideBySide(lesson, designs=("heap", "wheel"), autostart=False)
    for dash in pair.dashboards:
        dash.timeline.live.hellos = 1  # a page shows the pair (before one does, steps only poke)
    applied = []
    apply = _base.Stage.apply
    monkeypatch.setattr(_base.Stage, "apply", lambda self: applied.append(apply(self)) or 0)
    events = record_writes(monkeypatch)
    assert pair.step() == 1.0
    assert len(applied) == 1  # one stage for both sides
    first_write = next(i for i, (kind, _) in enumerate(events) if kind == "write")
    assert all(i < first_write for i, (kind, _) in enumerate(events) if kind == "render")
    shown = {d.queue.shown.now for d in pair.dashboards if d.queue.shown is not None}
    assert shown == {1.0}
    for dash in pair.dashboards:
        assert "t = 1.000 s" in pair.status.value
        assert "data-t='1.000000'" in dash.queue.table.value
    pair.close()


def test_history_names_a_rows_kind_once():
    """Before: "<b>shutdown</b>: shutdown: stopped (...)" (the kind, then the sentence's own)."""
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(demo_task, at=5.0, label="late")
    s.shutdown()
    panel = HistoryPanel(s, picture=False)
    panel.refresh()
    last = s.log.next_seq - 1
    panel.slider.value = last
    text = panel.info.value
    assert "<b>shutdown</b>: stopped" in text and "shutdown: shutdown" not in text
    panel.slider.value = last - 1  # the dropped task's row
    assert "<b>shutdown</b> — late: task #0 dropped" in panel.info.value
    panel.close()
