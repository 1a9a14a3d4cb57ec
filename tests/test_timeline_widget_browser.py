"""End to end: the interactive timeline and teaching mode in Voila, driven in Debian's Chromium.

One Voila server (``python -m voila tests/browser``, see ``voilakit``) serves
``timeline_widget.ipynb`` (a ``TimelineWidget`` over the demo scenario, with an *add rows*
button and the kernel's own count of what it sent) and ``teaching_dashboard.ipynb`` (a virtual
clock dashboard with the *predict the case* panel). The tests zoom, pan, hover and click on the
canvas, add rows from the page, predict a case and step back through history, all by real
mouse events. Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import re

import pytest
import voilakit as vk

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DATASET_JS = "() => ({...document.querySelector('.tsl-tl').dataset})"
SENT_JS = "() => ({...document.querySelector('.tsl-sent').dataset})"


@pytest.fixture(scope="module")
def server():
    voila = vk.VoilaServer("tests/browser", "voila-tests-timeline.log")
    yield voila
    voila.stop()


@pytest.fixture
def page(browser):
    pg = vk.new_page(browser, width=1280, height=1400)
    yield pg
    pg.context.close()


def state(page) -> dict[str, float]:
    raw = page.evaluate(DATASET_JS)
    return {k: float(v) for k, v in raw.items() if re.fullmatch(r"-?[\d.]+", v or "")}


def canvas_point(page, t: float, lane: int) -> tuple[float, float]:
    """Page coordinates of time ``t`` (seconds) on lane ``lane`` (0: the top row)."""
    box = page.locator("canvas.tsl-tl-canvas").bounding_box()
    s = state(page)
    gutter, axis, lane_h, right = 170, 30, 26, box["width"] - 14
    x = box["x"] + gutter + (t - s["view0"]) / (s["view1"] - s["view0"]) * (right - gutter)
    y = box["y"] + axis + (lane - s["scroll"]) * lane_h + lane_h / 2
    return x, y


def test_timeline_renders_zooms_pans_hovers_highlights_and_streams(page, server):
    from playwright.sync_api import expect

    vk.wait_voila_page(page, server.page_url("timeline_widget.ipynb"), "canvas.tsl-tl-canvas")
    sent = page.evaluate(SENT_JS)
    page.wait_for_function(
        "n => +document.querySelector('.tsl-tl').dataset.rows === n", arg=int(sent["logged"])
    )
    s = state(page)
    assert s["lanes"] == 11 and s["runs"] == 16  # 10 tasks + the rejected row; 16 runs
    page.screenshot(path=str(vk.ARTIFACTS / "timeline-widget.png"))

    # wheel zoom around the pointer: the visible range shrinks, the point under it stays
    x, y = canvas_point(page, 2.0, 3)
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
    # reset: the whole run again
    page.locator("button.tsl-tl-reset").click()
    page.wait_for_function("() => +document.querySelector('.tsl-tl').dataset.view0 < 0")

    # hover the slow import's bar (lane 7: task #6 runs from 1.55 s to 2.45 s)
    x, y = canvas_point(page, 2.0, 7)
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
    x, y = canvas_point(page, middle, 0)
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
