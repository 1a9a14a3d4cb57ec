"""The face of a fleet: notebook 12 in Voila, in Chromium, watching three services.

The test starts three example services itself (different tokens; ``batch`` with its clock
6.5 s ahead) and serves notebook 12 with ``TEMPSCHED_FLEET`` naming them, so the page
follows services it did not start. In Chromium it checks a banner line per service (each
live, the skewed one's offset said), lanes grouped by service in the fleet's order, then
SIGKILLs one service and sees its line (and only its line) turn ``reconnecting``.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

import pytest
import voilakit as vk

from tempsched_lab.remote.process import ExampleService

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "notebooks/12_watching_a_fleet.ipynb"
NAMES = ("api", "batch", "worker")
SKEW = 6.5
#: JavaScript: each service's banner line, by name
LINES_JS = (
    "() => Object.fromEntries([...document.querySelectorAll('.tsl-fleet-line')]"
    ".map(e => [e.dataset.service, e.textContent]))"
)
#: JavaScript: the timeline's left column in page order: ['service', name] or ['lane', name]
COLUMN_JS = (
    "() => [...document.querySelectorAll('.tsl-fleet-service, .tsl-fleet-lane')].map(e =>"
    " e.classList.contains('tsl-fleet-service') ? ['service', e.textContent]"
    " : ['lane', e.dataset.service])"
)


def _line_says(page, name: str, words: str, timeout_ms: int) -> None:
    page.wait_for_function(
        f"([n, w]) => (({LINES_JS})()[n] || '').includes(w)",
        arg=[name, words],
        timeout=timeout_ms,
    )


def test_the_fleet_page_shows_a_line_per_service_lanes_by_service_and_a_killed_one(
    browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services: dict[str, ExampleService] = {}
    named: dict[str, list[str]] = {}
    server = None
    try:
        for name in NAMES:
            token = tmp_path / f"{name}.token"
            token.write_text(f"{name}-{secrets.token_urlsafe(24)}")
            skew = ("--clock-skew", str(SKEW)) if name == "batch" else ()
            services[name] = ExampleService.start(
                spill=tmp_path / name,
                token_file=token,
                args=("--tick", "0.1", "--burst-every", "2", "--burst-size", "10", *skew),
            )
            named[name] = [services[name].url, str(token)]
        monkeypatch.setenv("TEMPSCHED_FLEET", json.dumps(named))
        server = vk.VoilaServer(NOTEBOOK, "voila-12-fleet.log")
        page = vk.new_page(browser, width=1280, height=3200)
        vk.wait_voila_page(page, server.page_url(), ".tsl-fleet")

        # a banner line per service, each live; the skewed one's offset said with its bound
        for name in NAMES:
            _line_says(page, name, f"{name}: live", 30_000)
        _line_says(page, "batch", "clock +6.", 30_000)
        lines = page.evaluate(LINES_JS)
        assert sorted(lines) == sorted(NAMES), lines
        batch = re.search(r"clock ([+-]\d+\.\d+) s ± ([\d.]+) ms", lines["batch"])
        assert batch is not None, lines["batch"]
        assert abs(float(batch.group(1)) - SKEW) <= float(batch.group(2)) / 1e3 + 2e-3
        assert "no gaps" in lines["api"]

        # lanes grouped by service, in the fleet's order: a header, then that service's lanes
        page.wait_for_function(
            f"() => new Set(({COLUMN_JS})().filter(c => c[0] === 'lane').map(c => c[1]))"
            ".size === 3",
            timeout=30_000,
        )
        column = page.evaluate(COLUMN_JS)
        headers = [who for kind, who in column if kind == "service"]
        assert headers == list(NAMES), column
        current = None
        for kind, who in column:
            if kind == "service":
                current = who
            else:
                assert who == current, f"a lane of {who} under {current}: {column}"
        page.screenshot(path=str(vk.ARTIFACTS / "voila-12-fleet-live.png"))

        # one killed: its line says so, the others stay live
        services["worker"].kill()
        _line_says(page, "worker", "worker: reconnecting", 15_000)
        lines = page.evaluate(LINES_JS)
        assert lines["api"].startswith("api: live") and lines["batch"].startswith("batch: live")
        assert page.locator(".tsl-fleet-lane[data-service='worker']").count() >= 1  # still drawn
        page.screenshot(path=str(vk.ARTIFACTS / "voila-12-fleet-killed.png"))
        vk.check_clean(page)
        page.context.close()
    finally:
        if server is not None:
            server.stop()
        for service in services.values():
            service.kill()
