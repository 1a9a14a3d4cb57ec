"""End to end: dashboards in ``tests/browser/`` served by Voila, driven in Debian's Chromium.

One Voila server for the session (``python -m voila tests/browser``, see ``voilakit``) serves a
virtual-clock dashboard (the test steps it and schedules from the page) and a real-clock one fed
by a background thread (the page must catch up with a flood). A third test opens a static export
with no kernel. Screenshots go to ``artifacts/``. The README's own notebooks are tested in
``test_notebooks_voila.py``.
"""

from __future__ import annotations

import re

import pytest
import voilakit as vk

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PANELS = {"controls", "queue", "timeline", "tree", "log", "history"}


@pytest.fixture
def server(browser_pages):
    return browser_pages  # one server of tests/browser for the session (tests/conftest.py)


@pytest.fixture
def page(browser):
    pg = vk.new_page(browser, width=1280, height=2600)
    yield pg
    pg.context.close()


def open_dashboard(page, server, name: str, panels: set[str]) -> None:
    from playwright.sync_api import expect

    vk.wait_voila_page(page, server.page_url(name), ".tsl-dashboard")
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    page.wait_for_function(
        "n => document.querySelectorAll('.tsl-dashboard .tsl-stamp').length >= n", arg=len(panels)
    )


def test_virtual_clock_dashboard_step_and_schedule(page, server):
    from playwright.sync_api import expect

    open_dashboard(page, server, "virtual_dashboard.ipynb", PANELS)
    queue = page.locator(".tsl-queue-table")
    head = queue.locator("tr.tsl-head")
    expect(head).to_contain_text("heartbeat")
    expect(queue).to_contain_text("5 pending")
    expect(page.locator(".tsl-now")).to_have_text("0.000 s")
    # the interactive timeline replaced the PNG once the page loaded it
    canvas = page.locator("canvas.tsl-tl-canvas")
    expect(canvas).to_be_visible()
    assert canvas.evaluate("e => e.clientWidth") > 600
    expect(page.locator("img.tsl-timeline-image")).to_be_hidden()
    assert page.locator("img.tsl-tree-image").evaluate("e => e.naturalWidth") > 300
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-dashboard", 12]) == []  # the default type

    # step: the heartbeat runs at 0.5 and is re-armed; every panel shows that moment
    step = vk.click_and_wait(page, "button.tsl-step")
    seq = step["after"]
    assert step["stamps"] == {name: seq for name in PANELS}  # a virtual clock then stays still
    expect(page.locator(".tsl-now")).to_have_text("0.500 s")
    expect(head).to_contain_text("alpha")
    log = page.locator(".tsl-log-table")
    assert int(log.locator("tr.tsl-row").last.locator("td").first.inner_text()) == seq - 1
    expect(log.locator("tr.tsl-kind-dispatch")).to_contain_text("heartbeat")
    expect(page.locator(".tsl-controls-status")).to_contain_text(f"{seq} log rows")
    expect(page.locator(".tsl-history-row")).to_contain_text(f"Row {seq - 1} ")
    rearm = re.search(r"\(row (\d+), t = 0\.500 s", page.locator(".tsl-tree-caption").inner_text())
    assert rearm and int(rearm.group(1)) < seq  # the heartbeat's re-arm, in this moment

    # schedule "zeta" 0.1 s from now: earlier than the head (case 3), explained in words
    page.locator(".tsl-label input").fill("zeta")
    page.locator(".tsl-when input").fill("0.1")
    page.locator(".tsl-when input").press("Tab")  # Text syncs on blur / enter
    scheduled = vk.click_and_wait(page, "button.tsl-schedule")
    assert "Case 3, earlier than head" in scheduled["result"]
    assert "the new task becomes the head" in scheduled["result"]
    assert "due t = 0.600 s" in scheduled["result"]
    assert scheduled["stamps"] == {name: scheduled["after"] for name in PANELS}
    expect(head).to_contain_text("zeta")
    expect(page.locator(".tsl-tree-caption")).to_contain_text("case 3")
    page.locator(".tsl-dashboard").screenshot(path=str(vk.ARTIFACTS / "dashboard-virtual.png"))
    vk.check_clean(page)


def test_live_queue_catches_up_with_real_clock(page, server):
    from playwright.sync_api import expect

    open_dashboard(page, server, "live_dashboard.ipynb", {"controls", "queue", "timeline", "log"})
    queue = page.locator(".tsl-queue-table")
    # the feeder adds 12 jobs, floods ~5000 rows, then "final": 14 pending with the heartbeat
    expect(queue).to_contain_text("final", timeout=30_000)
    expect(queue).to_contain_text("14 pending", timeout=10_000)
    expect(queue.locator("tr.tsl-head")).to_contain_text("heartbeat")
    rows = int(page.locator(".tsl-log-count").inner_text().split()[0])
    assert rows > 5000, rows  # the flood reached the page, coalesced
    # the page keeps changing by itself: the heartbeat's next rows reach every panel. The
    # moment compared is read now, after the flood, and the test waits for the page to pass
    # it (a value read before the wait could already be the last one: the page may load
    # after the flood has ended)
    shown = max(vk.stamps(page).values())
    page.wait_for_function(
        f"() => Object.values(({vk.STAMPS_JS})()).every(v => v > {shown})", timeout=15_000
    )
    page.locator(".tsl-dashboard").screenshot(path=str(vk.ARTIFACTS / "dashboard-live.png"))
    vk.check_clean(page)


def test_static_export_opens_without_kernel(browser, tmp_path):
    """``Dashboard.to_html``: offline (CDN blocked) the static snapshot stays readable."""
    from playwright.sync_api import expect

    from tempsched_lab import Scheduler, VirtualClock
    from tempsched_lab.widgets import Dashboard, demo_task

    scheduler = Scheduler(VirtualClock())
    scheduler.schedule(demo_task, at=1.0, label="exported-task")
    dash = Dashboard(scheduler, panels=("queue", "log"), autostart=False)
    path = dash.to_html(tmp_path / "dashboard.html")
    dash.close()
    pg = vk.new_page(browser)
    pg.goto(path.as_uri())
    expect(pg.locator("#tsl-static")).to_contain_text("exported-task")
    expect(pg.locator("#tsl-static")).to_contain_text("t = 1.000 s")
    expect(pg.locator("#tsl-static img")).to_have_count(0)  # queue/log only: no images
    pg.context.close()


#: JavaScript: each labelled field of the controls form by name (``tsl-when`` -> ``when``): where
#: its input starts (px) and whether its label is cut.
FIELDS_JS = """() => Object.fromEntries([...document.querySelectorAll('.tsl-controls .tsl-field')]
  .map(f => {
    const name = [...f.classList].find(c => c.startsWith('tsl-') && c !== 'tsl-field').slice(4);
    const label = f.querySelector('.widget-label'), input = f.querySelector('input');
    return [name, { left: Math.round(input.getBoundingClientRect().left),
                    cut: label.scrollWidth > label.clientWidth }];
  }))"""


def test_projector_type_everywhere_and_the_toggle(page, server):
    """``scale="projector"``: no text under 16 px (HTML and canvas), pictures a third larger;
    the page's toggle brings the default back (no text under 12 px) and projector again."""
    from playwright.sync_api import expect

    vk.wait_voila_page(page, server.page_url("projector_dashboard.ipynb"), ".tsl-dashboard")
    page.wait_for_function(
        "() => document.querySelectorAll('.tsl-dashboard .tsl-stamp').length >= 7"
    )
    canvas = page.locator(".tsl-tl")
    expect(canvas).to_have_attribute("data-scale", "projector")
    tree = page.locator("img.tsl-tree-image")
    page.wait_for_function(
        "() => document.querySelector('img.tsl-tree-image').naturalWidth === 840"
    )
    page.wait_for_function("() => +document.querySelector('.tsl-tl').dataset.fontmin >= 16")
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-dashboard", 16]) == []
    assert page.evaluate(vk.SCALED_IMAGES_JS, ".tsl-dashboard") == []
    # the schedule form's inputs line up in two columns, every label whole
    field = page.evaluate(FIELDS_JS)
    assert {field[n]["left"] for n in ("rate", "when", "args", "takes", "cancel-id")} == {
        field["when"]["left"]
    }, field
    assert field["label"]["left"] == field["period"]["left"] > field["when"]["left"], field
    assert not [n for n, f in field.items() if f["cut"]], field
    page.locator(".tsl-dashboard").screenshot(path=str(vk.ARTIFACTS / "dashboard-projector.png"))

    page.locator(".tsl-projector-toggle").click()  # off: the default type
    expect(canvas).to_have_attribute("data-scale", "default")
    page.wait_for_function(
        "() => document.querySelector('img.tsl-tree-image').naturalWidth === 720"
    )
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-dashboard", 12]) == []
    assert float(canvas.get_attribute("data-fontmin")) >= 12
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-dashboard", 16]) != []  # it did change
    page.locator(".tsl-projector-toggle").click()  # and on again
    expect(canvas).to_have_attribute("data-scale", "projector")
    page.wait_for_function(
        "() => document.querySelector('img.tsl-tree-image').naturalWidth === 840"
    )
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-dashboard", 16]) == []
    assert tree.evaluate("e => e.naturalWidth") == 840
    vk.check_clean(page)
