"""End to end: the interactive timeline and teaching mode in Voila, driven in Debian's Chromium.

One Voila server (``python -m voila tests/browser``, see ``voilakit``) serves
``timeline_widget.ipynb`` (a ``TimelineWidget`` over the demo scenario, with an *add rows*
button and the kernel's own count of what it sent), ``teaching_dashboard.ipynb`` (a virtual
clock dashboard with the *predict the case* panel) and ``side_by_side.ipynb`` (a heap and a
wheel stepped together). The tests zoom, pan, hover and click on the canvas, reset after a zoom,
add rows from the page, predict a case, step back through history and step both sides, all by
real mouse events; after every click they wait until every panel of the view shows the same
row (or time) and record how long that took (``artifacts/latency-teaching.json``). Screenshots
go to ``artifacts/``.
"""

from __future__ import annotations

import json
import re
import statistics

import pytest
import voilakit as vk

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DATASET_JS = "() => ({...document.querySelector('.tsl-tl').dataset})"
SENT_JS = "() => ({...document.querySelector('.tsl-sent').dataset})"


@pytest.fixture
def server(browser_pages):
    return browser_pages  # one server of tests/browser for the session (tests/conftest.py)


@pytest.fixture
def page(browser):
    pg = vk.new_page(browser, width=1280, height=1400)
    yield pg
    pg.context.close()


def state(page) -> dict[str, float]:
    raw = page.evaluate(DATASET_JS)
    return {k: float(v) for k, v in raw.items() if re.fullmatch(r"-?[\d.]+(e-?\d+)?", v or "")}


def canvas_point(page, t: float, task: int | None = None, lane: int = 0) -> tuple[float, float]:
    """Page coordinates of time ``t`` (seconds) on task ``task``'s lane (or row ``lane`` on screen).

    The lanes are ordered by the view (tasks with nothing in view fold away), so a task's row
    is asked from the page (``laneY``); the geometry comes from the canvas's own dataset.
    """
    box = page.locator("canvas.tsl-tl-canvas").bounding_box()
    s = state(page)
    gutter, right = s["gutter"], box["width"] - 14
    x = box["x"] + gutter + (t - s["view0"]) / (s["view1"] - s["view0"]) * (right - gutter)
    if task is None:
        return x, box["y"] + s["axis"] + lane * s["laneh"] + s["laneh"] / 2
    y = page.evaluate(f"() => document.querySelector('.tsl-tl').__tsl.laneY({task})")
    assert y is not None, f"task #{task} has no lane on screen"
    return x, box["y"] + y


def reset_shows(page, whole: tuple[float, float]) -> None:
    """Click reset; wait until the view is ``whole`` (the run's extent) again."""
    page.locator("button.tsl-tl-reset").click()
    page.wait_for_function(
        "([a, b]) => { const d = document.querySelector('.tsl-tl').dataset;"
        " return Math.abs(d.view0 - a) < 1e-5 && Math.abs(d.view1 - b) < 1e-5; }",
        arg=list(whole),
    )


def record(name: str, values: list[float]) -> dict[str, object]:
    """Add click-to-every-panel latencies (ms) to ``artifacts/latency-teaching.json``."""
    entry = {
        "view": name,
        "ms": [round(v) for v in values],
        "median_ms": round(statistics.median(values)),
    }
    path = vk.ARTIFACTS / "latency-teaching.json"
    history = json.loads(path.read_text()) if path.exists() else []
    path.write_text(json.dumps([*history[-59:], entry], indent=1))
    print("click -> every panel:", entry)
    return entry


def test_timeline_renders_zooms_pans_hovers_highlights_and_streams(page, server):
    from playwright.sync_api import expect

    vk.wait_voila_page(page, server.page_url("timeline_widget.ipynb"), "canvas.tsl-tl-canvas")
    sent = page.evaluate(SENT_JS)
    page.wait_for_function(
        "n => +document.querySelector('.tsl-tl').dataset.rows === n", arg=int(sent["logged"])
    )
    s = state(page)
    assert s["lanes"] == 11 and s["runs"] == 16  # 10 tasks + the rejected row; 16 runs
    # the canvas fits its lanes (the widget's height, 420 px, is only a cap); text >= 12 px
    assert s["height"] == s["axis"] + 11 * s["laneh"] + 2
    assert s["fontmin"] >= 12
    expect(page.locator(".tsl-tl-status")).to_contain_text(f"{int(s['started'])} runs started")
    assert 0 < s["started"] <= s["runs"]
    page.screenshot(path=str(vk.ARTIFACTS / "timeline-widget.png"))
    whole = (s["view0"], s["view1"])  # following now with window 0: the whole run

    # a wheel zoom while following now narrows the window; reset restores the whole run
    x, y = canvas_point(page, 2.0, lane=3)
    page.mouse.move(x, y)
    page.mouse.wheel(0, -500)
    page.wait_for_function(
        "w => { const d = document.querySelector('.tsl-tl').dataset;"
        " return d.view1 - d.view0 < w; }",
        arg=(whole[1] - whole[0]) * 0.7,
    )
    reset_shows(page, whole)

    # wheel zoom around the pointer: the visible range shrinks, the point under it stays
    x, y = canvas_point(page, 2.0, lane=3)
    width = s["view1"] - s["view0"]
    page.mouse.move(x, y)
    page.locator("button.tsl-tl-follow").click()  # stop following now: zoom around the pointer
    page.mouse.move(x, y)
    page.mouse.wheel(0, -500)
    page.wait_for_function(
        "w => { const d = document.querySelector('.tsl-tl').dataset;"
        " return d.view1 - d.view0 < w; }",
        arg=width * 0.7,
    )
    zoomed = state(page)
    assert zoomed["view0"] < 2.0 < zoomed["view1"]
    # drag to the left: later times come into view, the width stays
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 200, y, steps=10)
    page.mouse.up()
    panned = state(page)
    assert panned["view0"] > zoomed["view0"] + 0.1
    assert panned["view1"] - panned["view0"] == pytest.approx(zoomed["view1"] - zoomed["view0"])
    # zoom out as far as the wheel goes: it stops at the run's extent plus a small margin
    for _ in range(6):
        page.mouse.wheel(0, 2000)
    page.wait_for_function(
        "w => { const d = document.querySelector('.tsl-tl').dataset;"
        " return d.view1 - d.view0 > w; }",
        arg=(whole[1] - whole[0]) * 1.01,
    )
    wide = state(page)
    assert wide["view1"] - wide["view0"] <= (whole[1] - whole[0]) * 1.06 + 1e-6
    assert wide["view0"] <= whole[0] and wide["view1"] >= whole[1]
    # reset: the whole run again
    reset_shows(page, whole)

    # hover the slow import's bar (task #6 runs from 1.55 s to 2.45 s)
    x, y = canvas_point(page, 2.0, task=6)
    page.mouse.move(x, y)
    tip = page.locator(".tsl-tl-tip")
    expect(tip).to_be_visible()
    expect(tip.locator(".tsl-tl-tip-text")).to_contain_text("task #6 finished in 900.00 ms")
    expect(tip.locator(".tsl-tl-tip-details")).to_contain_text("slow import · task #6 · case 4")
    page.screenshot(path=str(vk.ARTIFACTS / "timeline-widget-hover.png"))

    # click: the task's whole history highlighted, the kernel told
    page.mouse.click(x, y)
    page.wait_for_function("() => document.querySelector('.tsl-tl').dataset.selected === '6'")
    expect(page.locator(".tsl-sent")).to_have_attribute("data-selected", "6")
    expect(page.locator(".tsl-tl-status")).to_contain_text("task #6 selected")
    page.screenshot(path=str(vk.ARTIFACTS / "timeline-widget-selected.png"))

    # new rows: they reach the page within one push, and only they cross the wire
    before = page.evaluate(SENT_JS)
    page.locator("button.tsl-more").click()
    page.wait_for_function(
        "n => +document.querySelector('.tsl-sent').dataset.logged > n", arg=int(before["logged"])
    )
    after = page.evaluate(SENT_JS)
    new_rows = int(after["logged"]) - int(before["logged"])
    assert new_rows > 0
    page.wait_for_function(
        "n => +document.querySelector('.tsl-tl').dataset.rows === n", arg=int(after["logged"])
    )
    assert int(after["rows"]) - int(before["rows"]) == new_rows  # not one old row again
    assert int(after["bytes"]) - int(before["bytes"]) == 33 * new_rows
    assert int(after["messages"]) - int(before["messages"]) == 1
    assert int(after["hellos"]) == 1
    grown = state(page)
    assert grown["lanes"] == 12 and grown["runs"] > 16  # the added task, heartbeats run on
    # the newest task has a lane on screen at once, without scrolling
    newest = page.evaluate(
        "() => Math.max(...document.querySelector('.tsl-tl').__tsl.store.taskLanes)"
    )
    page.wait_for_function(
        f"() => document.querySelector('.tsl-tl').__tsl.laneY({newest}) !== null", timeout=5_000
    )

    # zoomed out over far more runs than pixels: one thread lane of 4,000+ runs still draws
    # every run as a mark you can hover (merged rectangles, one hover target each)
    page.locator("button.tsl-dense").click()
    page.wait_for_function("() => +document.querySelector('.tsl-tl').dataset.runs > 4000")
    page.locator("button.tsl-tl-lanes-thread").click()
    page.locator("button.tsl-tl-reset").click()
    page.wait_for_function("() => +document.querySelector('.tsl-tl').dataset.drawn > 3000")
    dense = state(page)
    assert dense["lanes"] == 1  # the simulated worker's lane
    middle = float(page.evaluate(SENT_JS)["dense"])
    assert dense["view0"] < middle < dense["view1"]
    x, y = canvas_point(page, middle, lane=0)
    page.mouse.move(x, y - 40)
    page.mouse.move(x, y)
    expect(tip).to_be_visible()
    expect(tip.locator(".tsl-tl-tip-text")).to_contain_text("finished in")
    page.screenshot(path=str(vk.ARTIFACTS / "timeline-widget-dense.png"))
    vk.check_clean(page)


def test_teaching_dashboard_predict_reveal_and_step_back(page, server):
    from playwright.sync_api import expect

    vk.wait_voila_page(page, server.page_url("teaching_dashboard.ipynb"), ".tsl-dashboard")
    page.wait_for_function(
        "() => document.querySelectorAll('.tsl-dashboard .tsl-stamp').length >= 7"
    )
    # the dashboard draws its timeline on the canvas once the page has it
    expect(page.locator(".tsl-timeline canvas.tsl-tl-canvas")).to_be_visible()
    expect(page.locator("img.tsl-timeline-image")).to_be_hidden()

    request = page.locator(".tsl-predict-request").inner_text()
    assert "The next request, about to be made" in request
    rows_before = int(page.locator(".tsl-rows").inner_text().split()[0])
    page.locator("button.tsl-guess-4").click()  # "new time point"
    verdict = page.locator(".tsl-predict-verdict")
    expect(verdict).to_be_visible()
    case = int(verdict.get_attribute("data-case"))
    right = verdict.get_attribute("data-right") == "1"
    assert right == (case == 4)
    expect(verdict).to_contain_text(f"It was case {case}")
    expect(verdict).to_contain_text("Is the time in the past? " + ("yes" if case == 1 else "no"))
    expect(page.locator(".tsl-score")).to_have_attribute("data-asked", "1")
    expect(page.locator(".tsl-score")).to_have_attribute("data-right", str(int(right)))
    expect(page.locator("button.tsl-guess-1")).to_be_disabled()
    # every panel shows the decision's moment; the tree highlights the real case
    expect(page.locator(".tsl-tree-caption")).to_contain_text(f"→ case {case}")
    page.wait_for_function(
        "n => +document.querySelector('.tsl-rows').textContent.split(' ')[0] > n", arg=rows_before
    )
    page.locator(".tsl-dashboard").screenshot(path=str(vk.ARTIFACTS / "teaching-predict.png"))

    # step back: the history shows the previous row, what it changed marked in the strip
    history = page.locator(".tsl-history")
    newest = int(page.locator(".tsl-history-row").inner_text().split()[1])
    page.locator("button.tsl-history-prev").click()
    expect(page.locator(".tsl-history-row")).to_contain_text(f"Row {newest - 1} ")
    page.locator("button.tsl-history-prev").click()
    expect(page.locator(".tsl-history-row")).to_contain_text(f"Row {newest - 2} ")
    page.locator("button.tsl-history-next").click()
    expect(page.locator(".tsl-history-row")).to_contain_text(f"Row {newest - 1} ")
    # back to the first rows: alpha is new and the head; then beta moves nothing
    for _ in range(newest - 1):
        page.locator("button.tsl-history-prev").click()
    expect(page.locator(".tsl-history-row")).to_contain_text("Row 0 ")
    expect(history.locator(".tsl-chg-new")).to_contain_text("alpha")
    expect(history.locator(".tsl-change")).to_contain_text("task #0 is new and becomes the head")
    page.locator("button.tsl-history-next").click()
    expect(history.locator(".tsl-change")).to_contain_text("task #1 is new")
    expect(history.locator(".tsl-chg-new")).to_contain_text("beta")
    page.wait_for_timeout(500)  # the queue picture (a PNG) lands after the texts
    history.screenshot(path=str(vk.ARTIFACTS / "teaching-history.png"))
    vk.check_clean(page)


#: JavaScript: click ``selector``, then wait until ``done()`` (a JS expression over ``S``, the
#: page's state: stamps, verdict, tree and history rows) holds; returns that state and the ms.
CLICK_UNTIL_JS = """async ([selector, done, timeoutMs]) => {
    const q = s => document.querySelector(s);
    const rowOf = el => {
        const c = el ? [...el.classList].find(c => c.startsWith('tsl-row-')) : undefined;
        return c === undefined ? null : +c.slice(8);
    };
    const state = () => ({
        stamps: [...document.querySelectorAll('.tsl-stamp')].map(e => ({
            panel: e.dataset.panel, seq: +e.dataset.seq, t: +e.dataset.t,
            side: [...document.querySelectorAll('.tsl-sbs-side')].findIndex(s => s.contains(e))})),
        verdict: q('.tsl-predict-verdict') ? +q('.tsl-predict-verdict').dataset.after : null,
        asked: q('.tsl-score') ? +q('.tsl-score').dataset.asked : null,
        tree: rowOf(q('img.tsl-tree-image')),
        treeCaption: (q('.tsl-tree-caption')?.innerText.match(/row (\\d+)/) || [])[1],
        historyRow: +((q('.tsl-history-row')?.innerText.match(/Row (\\d+)/) || [])[1]),
        historyPicture: rowOf(q('img.tsl-history-picture')),
    });
    const test = new Function('S', 'return (' + done + ');');
    const t0 = performance.now();
    q(selector).click();
    return await new Promise((resolve, reject) => {
        const check = () => {
            const S = state();
            if (test(S)) {
                obs.disconnect(); clearTimeout(timer);
                resolve({...S, ms: performance.now() - t0});
            }
        };
        const obs = new MutationObserver(check);
        obs.observe(document.body, {subtree: true, childList: true, characterData: true,
                                    attributes: true, attributeFilter: ['class', 'src']});
        const timer = setTimeout(() => { obs.disconnect();
            reject(new Error('timeout: ' + JSON.stringify(state()))); }, timeoutMs);
        check();
    });
}"""


def click_until(page, selector: str, done: str) -> dict:
    """Click ``selector``; return the page's state once ``done`` holds (20 s at most)."""
    return page.evaluate(CLICK_UNTIL_JS, [selector, done, 20_000])


#: Every panel of a teaching dashboard shows the verdict's moment: the stamps, the tree's
#: picture and caption (the decision's row), the history's text and picture (the newest row).
PREDICT_DONE = (
    "S.verdict !== null && S.stamps.every(s => s.seq === S.verdict)"
    " && S.tree === S.verdict - 1 && +S.treeCaption === S.verdict - 1"
    " && S.historyRow === S.verdict - 1 && S.historyPicture === S.verdict - 1"
)


def test_predict_and_history_show_one_moment_after_each_click(page, server):
    """The verdict, the tree and the history of a predict step agree; so do ◀ ▶ steps."""
    vk.wait_voila_page(page, server.page_url("teaching_dashboard.ipynb"), ".tsl-dashboard")
    page.wait_for_function(
        "() => document.querySelectorAll('.tsl-dashboard .tsl-stamp').length >= 7"
    )
    page.locator("img.tsl-tree-image").wait_for(state="visible")
    latencies = []
    for round_ in range(3):
        state = click_until(
            page, "button.tsl-guess-4", f"{PREDICT_DONE} && S.asked === {round_ + 1}"
        )
        latencies.append(state["ms"])
        page.locator("button.tsl-predict-next").click()
        page.locator("button.tsl-guess-4:not([disabled])").wait_for()
    newest = state["historyRow"]
    steps = []
    for delta, button in ((-1, "prev"), (-1, "prev"), (+1, "next")):
        target = newest + delta
        done = f"S.historyRow === {target} && S.historyPicture === {target}"
        steps.append(click_until(page, f"button.tsl-history-{button}", done)["ms"])
        newest = target
    record("predict: verdict, tree, history", latencies)
    record("history ◀ ▶: row text and queue picture", steps)
    page.locator(".tsl-dashboard").screenshot(path=str(vk.ARTIFACTS / "teaching-one-moment.png"))
    vk.check_clean(page)


def test_step_both_shows_both_sides_at_the_same_time(browser, server):
    """Side by side: after "step both" every panel of both sides shows the step's time."""
    pg = vk.new_page(browser, width=900, height=2600)
    vk.wait_voila_page(pg, server.page_url("side_by_side.ipynb"), ".tsl-side-by-side")
    pg.wait_for_function(
        "() => document.querySelectorAll('.tsl-side-by-side .tsl-stamp').length >= 6"
    )
    # 900 px: still two columns, side by side, and no note about stacking
    sides = pg.locator(".tsl-sbs-side")
    first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    assert abs(first["y"] - second["y"]) < 2 and second["x"] >= first["x"] + first["width"] - 1
    assert pg.locator(".tsl-sbs-stacked").is_hidden()
    latencies = []
    # the next due time of either side: the heap runs "b" at 1.034 s, the wheel at 1.040 s
    for target in (0.5, 1.0, 1.034, 1.04):
        # every panel of a side shows one moment (one log row count), and the panels that show
        # the clock (queue, timeline) show the step's time on both sides
        done = (
            "S.stamps.length >= 6 && [0, 1].every(side => new Set(S.stamps.filter("
            "s => s.side === side).map(s => s.seq)).size === 1) && S.stamps.filter("
            f"s => s.panel !== 'log').every(s => Math.abs(s.t - {target}) < 1e-6)"
        )
        latencies.append(click_until(pg, "button.tsl-sbs-step", done)["ms"])
    record("side by side: step both", latencies)
    pg.locator(".tsl-side-by-side").screenshot(path=str(vk.ARTIFACTS / "side-by-side-900.png"))
    vk.check_clean(pg)
    pg.context.close()


LABELS_JS = "sel => document.querySelector(sel).__tsl.drawnLabels()"
LIVE = ".tsl-live.tsl-tl, .tsl-live .tsl-tl"
FINISHED = ".tsl-timeline-live.tsl-tl"


def tl_state(page, selector: str) -> dict[str, float]:
    raw = page.evaluate("sel => ({...document.querySelector(sel).dataset})", selector)
    return {k: float(v) for k, v in raw.items() if re.fullmatch(r"-?[\d.]+(e-?\d+)?", v or "")}


def test_lanes_follow_activity_live_finished_and_after_reset(browser, server):
    """Lanes by activity (docs/widgets.md), read from the lane labels drawn on the canvas.

    Live, following a 12 s window: after every round the heartbeat (busy all along) is the
    first lane drawn, then that round's tasks; the pending far task, with only a waiting line
    in view, comes after them, and earlier rounds fold. (Before: first-appearance order with
    the view kept on the newest lanes, so the heartbeat was scrolled away from the second round
    on.) Finished (notebook 10's surprising row reopened in a dashboard): the view opens at the
    run's start with every lane from the first; reset after a lane scroll and a zoom shows it so
    again.
    """
    page = vk.new_page(browser, width=1280, height=1600)
    vk.wait_voila_page(page, server.page_url("busy_lanes.ipynb"), "canvas.tsl-tl-canvas")
    page.locator(f"{FINISHED} canvas.tsl-tl-canvas").wait_for()
    for round_ in range(1, 5):
        if round_ > 1:
            page.locator("button.tsl-next-round").click()
        seq = page.wait_for_function(
            "r => { const e = document.querySelector('.tsl-rounds');"
            " return e && +e.dataset.rounds === r && e.dataset.seq; }",
            arg=round_,
        ).json_value()
        page.wait_for_function(
            "([sel, n]) => +document.querySelector(sel).dataset.rows === +n", arg=[LIVE, seq]
        )
        labels = page.evaluate(LABELS_JS, LIVE)
        r = round_ - 1
        first = 2 + 6 * r
        assert labels[0] == "heartbeat #1", (round_, labels)
        assert labels[1:7] == [f"r{r} #{n}" for n in range(first, first + 6)], (round_, labels)
        assert labels[7] == "far #0", (round_, labels)
        if r:
            assert labels[8] == f"+ {6 * r} tasks, nothing in view", (round_, labels)
        s = tl_state(page, LIVE)
        assert s["scroll"] == 0 and s["busy"] == 7
    page.locator(".tsl-live").screenshot(path=str(vk.ARTIFACTS / "timeline-busy-lanes.png"))

    # the finished run: at its start, every lane from the first
    first_t = float(page.locator(".tsl-finished").get_attribute("data-first"))
    page.wait_for_function("sel => +document.querySelector(sel).dataset.lanes > 10", arg=FINISHED)

    def opens_at_start() -> None:
        s = tl_state(page, FINISHED)
        width = s["view1"] - s["view0"]
        assert s["view0"] <= first_t <= s["view0"] + 0.08 * width, (s, first_t)
        assert s["scroll"] == 0
        labels = page.evaluate(LABELS_JS, FINISHED)
        assert labels[:3] == ["poisson #0", "poisson #1", "poisson #2"], labels
        status = page.locator(f"{FINISHED} .tsl-tl-status").inner_text()
        assert " · lanes 1–" in status, status

    opens_at_start()
    page.locator(FINISHED).screenshot(path=str(vk.ARTIFACTS / "timeline-finished-run.png"))
    box = page.locator(f"{FINISHED} canvas.tsl-tl-canvas").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.keyboard.down("Shift")
    page.mouse.wheel(0, 300)  # scroll the lanes down
    page.keyboard.up("Shift")
    page.wait_for_function("sel => +document.querySelector(sel).dataset.scroll > 0", arg=FINISHED)
    page.mouse.wheel(0, -600)  # and zoom in
    page.wait_for_function(
        "sel => { const d = document.querySelector(sel).dataset; return +d.frames > 0; }",
        arg=FINISHED,
    )
    page.locator(f"{FINISHED} button.tsl-tl-reset").click()
    page.wait_for_function("sel => +document.querySelector(sel).dataset.scroll === 0", arg=FINISHED)
    opens_at_start()
    vk.check_clean(page)
    page.context.close()
