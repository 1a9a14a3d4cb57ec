"""End to end: the dashboard served by Voila, driven by Playwright in Debian's Chromium.

Voila serves ``tests/browser/`` on 127.0.0.1 (a free port, its own process
group, killed at teardown); Python Playwright drives ``/usr/bin/chromium``
(never a downloaded browser) with every non-loopback request aborted.
Screenshots go to ``artifacts/`` (``E2E_ARTIFACTS`` overrides it).

Without Chromium, Playwright or Voila these tests are skipped, unless
``REQUIRE_E2E=1`` (set by ``.ci/run``): then they fail.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "tests" / "browser"
ARTIFACTS = Path(os.environ.get("E2E_ARTIFACTS", ROOT / "artifacts"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
REQUIRE = os.environ.get("REQUIRE_E2E") == "1"
CHROME_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
NOT_LOOPBACK = re.compile(r"^(https?|wss?)://(?!127\.0\.0\.1[:/])")


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return (
            "Python playwright is not installed (pip install playwright; no `playwright install`)"
        )
    if importlib.util.find_spec("voila") is None:
        return "voila is not installed (pip install 'voila>=0.5,<0.6')"
    if not (shutil.which(CHROMIUM) or os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


MISSING = _missing()
if MISSING and not REQUIRE:
    pytest.skip(f"browser e2e skipped: {MISSING}", allow_module_level=True)


def unavailable(reason: str) -> None:
    """Fail under REQUIRE_E2E=1 (CI), skip otherwise."""
    if REQUIRE:
        pytest.fail(f"REQUIRE_E2E=1 but the browser e2e cannot run: {reason}")
    pytest.skip(f"browser e2e skipped: {reason}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def voila_url():
    if MISSING:
        unavailable(MISSING)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log = open(ARTIFACTS / "voila.log", "w")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "voila",
            str(NOTEBOOKS),
            "--no-browser",
            "--Voila.ip=127.0.0.1",
            f"--port={port}",
            "--VoilaConfiguration.show_tracebacks=True",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: voila and its kernels
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                unavailable(
                    f"voila exited with rc={proc.returncode}; see {ARTIFACTS / 'voila.log'}"
                )
            try:
                urllib.request.urlopen(url + "/", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    unavailable("voila did not answer within 60 s")
                time.sleep(0.2)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def browser():
    if MISSING:
        unavailable(MISSING)
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROME_ARGS)
        except Error as exc:
            unavailable(f"Chromium did not start: {exc}")
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 2400})
    blocked: list[str] = []

    def abort(route):
        blocked.append(route.request.url)
        route.abort()

    ctx.route(NOT_LOOPBACK, abort)  # offline: no CDN, no telemetry
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and errors.append(m.text))
    pg.errors = errors
    pg.blocked = blocked
    yield pg
    ctx.close()


def open_dashboard(page, url: str, name: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/voila/render/{name}", wait_until="commit", timeout=60_000)
    page.locator(".tsl-dashboard").wait_for(state="visible", timeout=60_000)
    expect(page.get_by_text("Loading widget")).to_have_count(0, timeout=30_000)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    expect(page.locator(".tsl-queue-table")).to_contain_text("pending", timeout=10_000)


def check_clean(page) -> None:
    """No page errors; console errors only for the blocked CDN resources."""
    errors = [e for e in page.errors if not e.startswith("Failed to load resource")]
    assert not errors, errors
    assert all(NOT_LOOPBACK.match(u) for u in page.blocked), page.blocked


def test_virtual_clock_dashboard_step_and_schedule(page, voila_url):
    from playwright.sync_api import expect

    open_dashboard(page, voila_url, "virtual_dashboard.ipynb")
    queue = page.locator(".tsl-queue-table")
    head = queue.locator("tr.tsl-head")
    log = page.locator(".tsl-log-table")
    expect(head).to_contain_text("heartbeat")
    expect(queue).to_contain_text("5 pending")
    expect(page.locator(".tsl-now")).to_have_text("0.000")
    assert page.locator("img.tsl-timeline-image").evaluate("e => e.naturalWidth") > 300
    assert page.locator("img.tsl-tree-image").evaluate("e => e.naturalWidth") > 300

    # step: the heartbeat runs at 0.5 and is re-armed; alpha (1.0) becomes the head
    page.locator(".tsl-step button, button.tsl-step").first.click()
    expect(page.locator(".tsl-now")).to_have_text("0.500", timeout=10_000)
    expect(head).to_contain_text("alpha", timeout=10_000)
    expect(log).to_contain_text("finish", timeout=10_000)
    expect(log.locator("tr.tsl-kind-dispatch")).to_contain_text("heartbeat")

    # schedule "zeta" 0.1 s from now: earlier than the head (case 3), explained in words
    page.locator(".tsl-label input").fill("zeta")
    page.locator(".tsl-when input").fill("0.1")
    page.locator(".tsl-when input").press("Tab")  # FloatText syncs on blur / enter
    page.locator(".tsl-schedule button, button.tsl-schedule").first.click()
    decision = page.locator(".tsl-decision")
    expect(decision).to_contain_text("Case 3, earlier than head", timeout=10_000)
    expect(decision).to_contain_text("the new task becomes the head")
    expect(head).to_contain_text("zeta", timeout=10_000)
    expect(page.locator(".tsl-tree-caption")).to_contain_text("case 3", timeout=10_000)
    page.locator(".tsl-dashboard").screenshot(path=str(ARTIFACTS / "dashboard-virtual.png"))
    check_clean(page)


def test_live_queue_catches_up_with_real_clock(page, voila_url):
    from playwright.sync_api import expect

    open_dashboard(page, voila_url, "live_dashboard.ipynb")
    queue = page.locator(".tsl-queue-table")
    now = page.locator(".tsl-now")
    first = now.inner_text()
    # the feeder adds 12 jobs, floods ~5000 rows, then "final": 14 pending with the heartbeat
    expect(queue).to_contain_text("final", timeout=20_000)
    expect(queue).to_contain_text("14 pending", timeout=10_000)
    expect(queue.locator("tr.tsl-head")).to_contain_text("heartbeat")
    expect(page.locator(".tsl-log-count")).to_contain_text("rows recorded")
    rows = int(page.locator(".tsl-log-count").inner_text().split()[0])
    assert rows > 5000, rows  # the flood reached the page, coalesced
    assert now.inner_text() != first  # the clock line keeps moving
    page.locator(".tsl-dashboard").screenshot(path=str(ARTIFACTS / "dashboard-live.png"))
    check_clean(page)


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
    ctx = browser.new_context()
    ctx.route(NOT_LOOPBACK, lambda route: route.abort())
    pg = ctx.new_page()
    pg.goto(path.as_uri())
    expect(pg.locator("#tsl-static")).to_contain_text("exported-task")
    expect(pg.locator("#tsl-static img")).to_have_count(0)  # queue/log only: no images
    ctx.close()
