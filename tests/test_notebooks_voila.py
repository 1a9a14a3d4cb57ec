"""The README's notebooks, served as the README says: ``tempsched-lab serve notebooks/<name>``.

The live dashboard gets its own Voila server, started by the README's command
(``python -m tempsched_lab serve notebooks/05_live_dashboard.ipynb`` from the repository root); the
other notebooks share one server of the folder (``serve notebooks``, a page per notebook at
``/voila/render/<name>``, each page with its own kernel: one server start instead of nine), and
Debian's Chromium opens each page offline. Every page must render
without an error output, a broken widget, a console error or any request beyond the server. The
live dashboard (notebook 05) must also be alive when the page shows, show every click in every
panel from one moment, keep its text readable at 1280 and 900 px, and stop its scheduler when
the page goes away. Screenshots and the click-to-every-panel latencies go to ``artifacts/``.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from pathlib import Path

import pytest
import voilakit as vk

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = sorted(p.name for p in (vk.ROOT / "notebooks").glob("*.ipynb"))
DASHBOARD = "05_live_dashboard.ipynb"
PANELS = {"controls", "queue", "timeline", "tree", "log", "history"}
#: Outputs each notebook shows at least (its lesson's prints, tables and pictures).
MIN_OUTPUTS = {name: 4 for name in NOTEBOOKS}


def test_the_readme_points_at_these_notebooks_with_runnable_commands():
    readme = (vk.ROOT / "README.md").read_text()
    assert len(NOTEBOOKS) >= 9
    for name in NOTEBOOKS:
        number = name.partition("_")[0]
        assert number in readme, f"the README does not mention notebook {number}"
    commands = re.findall(r"\.venv/bin/tempsched-lab serve (\S+)", readme)
    assert f"notebooks/{DASHBOARD}" in commands
    assert all((vk.ROOT / c).exists() for c in commands), commands


@pytest.fixture(scope="module")
def dashboard_server():
    server = vk.VoilaServer(f"notebooks/{DASHBOARD}", "voila-05.log")
    yield server
    server.stop()


def open_dashboard(browser, server, width: int = 1280):
    page = vk.new_page(browser, width=width, height=3200)
    seconds = vk.wait_voila_page(page, server.page_url(), ".tsl-dashboard")
    page.wait_for_function(
        "n => document.querySelectorAll('.tsl-dashboard .tsl-stamp').length >= n", arg=len(PANELS)
    )
    return page, seconds


@pytest.fixture(scope="module")
def notebooks_server():
    server = vk.VoilaServer("notebooks", "voila-notebooks.log")
    yield server
    server.stop()


@pytest.mark.parametrize("name", [n for n in NOTEBOOKS if n != DASHBOARD])
def test_teaching_notebook_renders_in_voila(browser, notebooks_server, name):
    server = notebooks_server
    page = vk.new_page(browser, width=1280, height=1600)
    try:
        vk.wait_voila_page(page, server.page_url(name), ".jp-OutputArea-output")
        page.wait_for_load_state("load")
        outputs = page.locator(".jp-OutputArea-output")
        assert outputs.count() >= MIN_OUTPUTS[name]
        assert page.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        assert page.get_by_text("There was an error when executing cell").count() == 0
        broken = page.evaluate(
            # a picture shown to the reader that failed to load (hidden ones wait for content)
            "() => [...document.images].filter("
            "i => i.getClientRects().length && i.complete && !i.naturalWidth).length"
        )
        assert broken == 0
        page.screenshot(path=str(vk.ARTIFACTS / f"voila-{Path(name).stem}.png"))
        vk.check_clean(page)
    finally:
        page.context.close()  # its kernel idles until the server stops, after the module


def test_dashboard_is_live_readable_and_speaks_one_time_language(browser, dashboard_server):
    page, seconds = open_dashboard(browser, dashboard_server)
    vk.check_clean(page)
    # One refresh reaches the browser as one message per panel: a single read can land
    # between two of them, so wait (briefly) for a read in which every panel agrees.
    agreed = page.wait_for_function(
        f"() => {{ const s = ({vk.STAMPS_JS})(); const v = Object.values(s);"
        f" return v.length === {len(PANELS)} && new Set(v).size === 1 ? s : null; }}",
        timeout=10_000,
    )
    first = agreed.json_value()
    assert set(first) == PANELS and len(set(first.values())) == 1, first
    # the page changes by itself on the real clock: new rows reach every panel
    page.wait_for_function(
        f"() => {{ const s = ({vk.STAMPS_JS})(); const v = Object.values(s);"
        f" return v.length === {len(PANELS)} && v.every(x => x > {max(first.values())}); }}",
        timeout=15_000,
    )
    from playwright.sync_api import expect

    queue = page.locator(".tsl-queue-table")
    expect(queue).to_contain_text("next round")  # always pending
    expect(queue).to_contain_text("heartbeat")  # pending, but for the 50 ms of each run
    text = page.locator(".tsl-dashboard").inner_text()
    assert not vk.EPOCH_LIKE.findall(text), vk.EPOCH_LIKE.findall(text)[:5]
    assert re.search(r"now \d+\.\d{3} s", text)
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-dashboard", 12]) == []
    assert page.evaluate(vk.SCALED_IMAGES_JS, ".tsl-dashboard") == []
    # two columns on a wide page
    controls = page.locator(".tsl-controls").bounding_box()
    queue_box = page.locator(".tsl-queue").bounding_box()
    assert abs(controls["y"] - queue_box["y"]) < 2 and queue_box["x"] > controls["x"] + 300
    # the log asks for 700 px (rows on one line): at 1280 px it goes under the tree, full width;
    # the boxes are read in one look (a live page reflows as its pictures change: boxes read one
    # call apart once disagreed), waited for while a new picture settles
    under = """() => { const box = s => document.querySelector(s).getBoundingClientRect();
        const tree = box('.tsl-tree'), log = box('.tsl-log'), board = box('.tsl-dashboard');
        return {under: log.top >= tree.bottom - 2 && log.width >= 0.9 * board.width,
                tree: [tree.top, tree.bottom], log: [log.top, log.width], board: board.width}; }"""
    try:
        page.wait_for_function(f"() => ({under})().under", timeout=10_000)
    except Exception as exc:
        where = page.evaluate(under)
        raise AssertionError(f"the log is not under the tree, full width: {where}") from exc
    page.locator(".tsl-dashboard").screenshot(path=str(vk.ARTIFACTS / "dashboard-05-1280.png"))
    vk.check_clean(page)
    page.context.close()
    (vk.ARTIFACTS / "voila-05-ready.txt").write_text(f"page ready in {seconds:.1f} s\n")


def test_narrow_page_is_one_column_and_still_readable(browser, dashboard_server):
    page, _ = open_dashboard(browser, dashboard_server, width=900)
    boxes = {
        name: page.locator(f".tsl-{name}").bounding_box()
        for name in ("controls", "queue", "timeline", "tree", "log", "history")
    }
    order = sorted(boxes, key=lambda n: boxes[n]["y"])
    assert order == ["controls", "queue", "timeline", "tree", "log", "history"], order
    assert len({round(b["x"]) for b in boxes.values()}) == 1  # one column
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 900
    text = page.locator(".tsl-dashboard").inner_text()  # the first round's rejection is shown
    assert not vk.EPOCH_LIKE.findall(text), vk.EPOCH_LIKE.findall(text)[:5]
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-dashboard", 12]) == []
    assert page.evaluate(vk.SCALED_IMAGES_JS, ".tsl-dashboard") == []
    page.locator(".tsl-dashboard").screenshot(path=str(vk.ARTIFACTS / "dashboard-05-900.png"))
    vk.check_clean(page)
    page.context.close()


#: JavaScript: from now on, remember every moment (``seq``) each panel's stamp shows, including
#: stamps replaced before anyone could read them (a MutationObserver sees every added stamp).
RECORD_STAMPS_JS = """() => {
    const seen = window.__tslSeen = {};
    const note = e => { (seen[e.dataset.panel] = seen[e.dataset.panel] || new Set())
                        .add(+e.dataset.seq); };
    const stamps = () => document.querySelectorAll('.tsl-dashboard .tsl-stamp');
    window.__tslFrom = Math.max(...[...stamps()].map(e => +e.dataset.seq));
    new MutationObserver(records => {
        for (const r of records) for (const n of r.addedNodes) {
            if (n.nodeType !== 1) continue;
            if (n.matches('.tsl-stamp')) note(n);
            n.querySelectorAll('.tsl-stamp').forEach(note);
        }
    }).observe(document.querySelector('.tsl-dashboard'), {subtree: true, childList: true});
}"""

#: JavaScript: the moments each panel showed after the recording started, up to ``upto``.
SEEN_JS = """(upto) => Object.fromEntries(Object.entries(window.__tslSeen).map(
    ([panel, seqs]) => [panel, [...seqs].filter(s => s > window.__tslFrom && s <= upto)
                                        .sort((a, b) => a - b)]))"""


def test_clicks_reach_every_panel_from_one_moment(browser, dashboard_server):
    page, _ = open_dashboard(browser, dashboard_server)
    # the live scenario has run 30 s (three rounds): the timeline follows the present
    page.wait_for_function(
        "() => +document.querySelector('.tsl-tl').dataset.now >= 30", timeout=60_000
    )
    page.locator(".tsl-label input").fill("clicked")
    page.locator(".tsl-label input").press("Tab")
    page.locator(".tsl-log-rows input").fill("60")  # the heartbeat logs ~8 rows/s: keep ours
    page.locator(".tsl-log-rows input").press("Enter")
    page.locator(".tsl-mode button", has_text="at time").click()  # pre-filled 10 s ahead
    page.wait_for_function(
        "() => /^\\d+\\.000$/.test(document.querySelector('.tsl-when input').value)"
    )
    # after 30 s the queue holds the next round's tasks: ask for a time before them (5 s from
    # now, a whole second), so the new task is among the time points the queue table lists
    now = float(page.locator(".tsl-tl").get_attribute("data-now"))
    page.locator(".tsl-when input").fill(f"{math.ceil(now) + 5}")
    page.locator(".tsl-when input").press("Tab")
    page.evaluate(RECORD_STAMPS_JS)
    latencies = []
    first = vk.click_and_wait(page, "button.tsl-schedule")
    assert "Case" in first["result"] and "clicked" in first["queue"] and "clicked" in first["log"]
    task = re.search(r"task #(\d+) is queued", first["result"]).group(1)
    # the new task's lane is on the timeline without scrolling, within a refresh
    page.wait_for_function(
        f"() => document.querySelector('.tsl-tl').__tsl.laneY({task}) !== null", timeout=5_000
    )
    second = vk.click_and_wait(page, "button.tsl-schedule")  # the very same request again
    assert "duplicate" in second["result"] and f"existing task #{task}" in second["result"]
    third = vk.click_and_wait(page, "button.tsl-cancel")  # cancels it by the ID put in the box
    if f"cancel #{task}: already_done" in third["result"]:
        # a loaded machine took the 5 s to the task's time over the clicks: it ran first, and
        # the answer must say so truly (the log holds its run and the refused cancel)
        assert "already ran" in third["result"] and "clicked" in third["log"], third
    else:
        assert f"cancel #{task}: cancelled" in third["result"], third
    assert "clicked" not in third["queue"] and "cancel" in third["log"]
    for outcome in (first, second, third):
        assert set(outcome["stamps"]) == PANELS
        latencies.append(outcome["all"])
    # one moment per frame: wait for a read where every panel shows the same moment, then
    # check that every moment any panel showed since the first click reached every panel
    agreed = page.wait_for_function(
        f"() => {{ const s = ({vk.STAMPS_JS})(); const v = Object.values(s);"
        f" return v.length === {len(PANELS)} && new Set(v).size === 1 ? v[0] : null; }}",
        timeout=15_000,
    ).json_value()
    seen = page.evaluate(SEEN_JS, agreed)
    assert set(seen) == PANELS, seen
    moments = set().union(*map(set, seen.values()))
    assert moments and all(set(seqs) == moments for seqs in seen.values()), seen
    record = {
        "click_to_every_panel_ms": [round(x) for x in latencies],
        "click_to_result_ms": [round(o["answered"]) for o in (first, second, third)],
        "median_ms": round(statistics.median(latencies)),
        "moments_checked": len(moments),
    }
    path = vk.ARTIFACTS / "latency-05.json"
    history = json.loads(path.read_text()) if path.exists() else []
    path.write_text(json.dumps([*history[-19:], record], indent=1))
    print("click -> every panel (ms):", record)
    vk.check_clean(page)
    page.context.close()


def test_closing_the_page_shuts_the_scheduler_down(browser, dashboard_server):
    page, _ = open_dashboard(browser, dashboard_server)
    pid = dashboard_server.kernel_pid(vk.kernel_id(page))
    assert pid is not None, "no kernel process for the page"
    busy = vk.cpu_share(pid, 2.0)
    threads_open = vk.thread_count(pid)
    closed_at = time.monotonic()
    page.context.close()  # no unload handshake: a closed laptop, a crashed tab
    quiet = None
    deadline = closed_at + 30
    while time.monotonic() < deadline:
        if vk.cpu_share(pid, 1.0) < 0.02 and vk.thread_count(pid) <= threads_open - 3:
            quiet = time.monotonic() - closed_at
            break
    assert quiet is not None, (busy, threads_open, vk.thread_count(pid))
    assert busy > 0.02  # it was doing something before
    assert vk.cpu_share(pid, 2.0) < 0.02  # and stays quiet
    (vk.ARTIFACTS / "voila-05-close.txt").write_text(
        f"kernel {pid}: {busy:.0%} of a core and {threads_open} threads while open; "
        f"quiet with {vk.thread_count(pid)} threads {quiet:.1f} s after the page closed\n"
    )
