"""The face of attach: notebook 11 in Voila, watching a service that runs as another process.

The test starts the example service itself (the page attaches to it: ``TEMPSCHED_WATCH_URL``),
sees the panels move in Chromium, kills the service, sees the banner say ``reconnecting``,
starts it again on the same port and spill directory and sees the same dashboard resume the
same log, the banner naming the rows lost with the killed process, its panels moving again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import voilakit as vk

from tempsched_lab.remote.process import ExampleService

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "notebooks/11_watching_a_service.ipynb"
#: JavaScript: the newest row the log panel shows (-1 before it shows one)
LOG_SEQ = (
    "() => { const e = document.querySelector("
    "\".tsl-dashboard .tsl-stamp[data-panel='log']\"); return e ? +e.dataset.seq : -1; }"
)
BANNER = ".tsl-link-banner"


def _moves(page, timeout_ms: int = 30_000) -> None:
    """Wait until the log panel's stamp moves past where it is now."""
    now = page.evaluate(LOG_SEQ)
    page.wait_for_function(f"n => ({LOG_SEQ})() > n", arg=now, timeout=timeout_ms)


def test_the_page_follows_a_service_through_a_kill_and_a_restart(
    browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "token"
    token.write_text("a-read-token-for-the-voila-test-0123456789")
    service = ExampleService.start(
        spill=tmp_path / "runs", token_file=token, args=("--tick", "0.1", "--burst-every", "2")
    )
    again: ExampleService | None = None
    monkeypatch.setenv("TEMPSCHED_WATCH_URL", service.url)
    monkeypatch.setenv("TEMPSCHED_WATCH_TOKEN_FILE", str(token))
    server = vk.VoilaServer(NOTEBOOK, "voila-11-watch.log")
    try:
        page = vk.new_page(browser, width=1280, height=3200)
        vk.wait_voila_page(page, server.page_url(), ".tsl-dashboard")
        page.wait_for_selector(f"{BANNER}.tsl-link-is-live", timeout=30_000)
        _moves(page)  # the panels move with the service
        assert page.locator(".tsl-controls").count() == 0  # read-only: no controls
        page.screenshot(path=str(vk.ARTIFACTS / "voila-11-live.png"))

        service.kill()
        page.wait_for_function(
            f"() => document.querySelector('{BANNER}').textContent.includes('reconnecting since')",
            timeout=10_000,
        )
        page.screenshot(path=str(vk.ARTIFACTS / "voila-11-reconnecting.png"))

        again = service.restart()  # the same spill directory: the same log, continued
        page.wait_for_function(
            f"() => document.querySelector('{BANNER}').textContent.includes('was killed')",
            timeout=60_000,
        )  # the rows lost with the killed process: one gap, named
        page.wait_for_selector(f"{BANNER}.tsl-link-is-gap", timeout=30_000)
        _moves(page)  # the same dashboard's panels move again
        assert page.locator(".tsl-dashboard").count() == 1
        # the timeline draws the rows after the gap (it was left empty: '0 rows', resetting
        # its page to seq 0 over and over while the rows it got began after the gap)
        page.wait_for_function(
            "() => /^[1-9][0-9,]* rows/.test("
            "document.querySelector('.tsl-tl-status')?.textContent || '')",
            timeout=30_000,
        )
        page.screenshot(path=str(vk.ARTIFACTS / "voila-11-resumed.png"))
        vk.check_clean(page)
        page.context.close()
    finally:
        server.stop()
        service.kill()
        if again is not None:
            again.kill()
