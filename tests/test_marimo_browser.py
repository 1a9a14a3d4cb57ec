"""marimo: `marimo run notebooks/13_marimo_dashboard.py` in Chromium, the dashboard live.

The server runs on 127.0.0.1 (a free port) in its own process group, killed at teardown;
Chromium is Debian's, every request beyond 127.0.0.1 aborted. The page must show the
dashboard's anywidget view and the interactive timeline, both following the running
scheduler (their row counts grow), the one line naming the panels marimo cannot show, and
never marimo's "not supported" or "Unsupported mimetype" in place of a view.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from voilakit import (
    ARTIFACTS,
    ROOT,
    browser_banner,
    free_port,
    launch_chromium,
    new_page,
    skip_module_if_missing,
    unavailable,
)

skip_module_if_missing()
pytestmark = [pytest.mark.slow, pytest.mark.browser]

NOTEBOOK = "notebooks/13_marimo_dashboard.py"

# the live view's row count, and the timeline's rows held, found through the shadow roots
SAMPLE = """() => {
  const out = {live: [], timeline: [], text: ''};
  const walk = (n) => {
    if (n.shadowRoot) { out.text += ' ' + n.shadowRoot.textContent; walk(n.shadowRoot); }
    for (const c of n.children || []) walk(c);
    if (n.classList && n.classList.contains('tsl-live-about')) out.live.push(Number(n.dataset.seq));
    if (n.__tsl && n.__tsl.store) out.timeline.push(n.__tsl.store.next);
  };
  walk(document.body);
  out.text += ' ' + document.body.innerText;
  return out;
}"""


@pytest.fixture
def marimo_server():
    if importlib.util.find_spec("marimo") is None:
        unavailable("marimo is not installed (pip install -e '.[marimo]')")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = open(ARTIFACTS / "marimo_run.log", "w")  # noqa: SIM115 - closed below
    command = [sys.executable, "-m", "marimo", "run", NOTEBOOK, "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [*command, "--port", str(port), "--headless", "--no-token"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                unavailable(f"marimo exited with rc={proc.returncode}; see marimo_run.log")
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    unavailable("marimo did not answer within 60 s")
                time.sleep(0.2)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def test_the_dashboard_renders_and_stays_live_in_marimo(marimo_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        print(browser_banner(browser))
        try:
            page = new_page(browser)
            page.goto(marimo_server, timeout=60_000)
            samples = []
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:  # bounded: 90 s, samples every 0.5 s
                page.wait_for_timeout(500)
                sample = page.evaluate(SAMPLE)
                if sample["live"] and sample["timeline"]:
                    samples.append(sample)
                if len(samples) >= 2 and _grew(samples, "live") and _grew(samples, "timeline"):
                    break
            page.screenshot(path=str(ARTIFACTS / "marimo_dashboard.png"), full_page=True)
            assert samples, "no live view or timeline shown within 90 s"
            assert _grew(samples, "live"), [s["live"] for s in samples]
            assert _grew(samples, "timeline"), [s["timeline"] for s in samples]
            text = samples[-1]["text"]
            assert "Not shown in this host" in text and "controls" in text
            for wrong in ("not supported in marimo", "Unsupported mimetype"):
                assert wrong not in text
            assert page.errors == [], page.errors
            print("blocked requests beyond 127.0.0.1:", page.blocked)
        finally:
            browser.close()


def _grew(samples: list[dict], key: str) -> bool:
    first, last = samples[0][key], samples[-1][key]
    return bool(first and last and last[0] > first[0])  # the timeline may start at 0 rows
