"""Click to every panel: how long the live dashboard takes to show a user's action everywhere.

Usage::

    python benchmarks/bench_click_latency.py [--clicks 20] [--settle 5] [--json F]

Serves ``notebooks/05_live_dashboard.ipynb`` with Voila, exactly as the README does, opens
it in Debian's Chromium (every non-loopback request blocked), waits ``--settle`` seconds
after the page is ready, then alternates **schedule** (a task 10 s ahead) and **cancel**
(that task) ``--clicks`` times, 1.5 s apart. For each click, in the page
(``performance.now()``): when the result text answered, and when every panel's moment
stamp included the click's rows (the same check as the browser test,
``tests/voilakit.py``). Reports medians and the 90th percentile per kind of click.

The browser test measures the same thing on its three clicks right after the page
loads (``artifacts/latency-05.json``), while the kernel still draws its first rounds;
this benchmark measures a page that has settled, which is what a user clicking meets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import voilakit as vk  # noqa: E402  (the browser tests' helpers: servers, Chromium)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=20)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    why = vk.missing()
    if why:
        parser.error(why)
    from playwright.sync_api import sync_playwright

    server = vk.VoilaServer("notebooks/05_live_dashboard.ipynb", "bench-click.log")
    samples: dict[str, list[dict[str, float]]] = {"schedule": [], "cancel": []}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=vk.CHROMIUM, args=vk.CHROME_ARGS)
            page = vk.new_page(browser, width=1280, height=3200)
            ready = vk.wait_voila_page(page, server.page_url(), ".tsl-dashboard")
            time.sleep(args.settle)
            page.locator(".tsl-mode button", has_text="at time").click()
            time.sleep(1.0)
            for i in range(args.clicks):
                kind = "schedule" if i % 2 == 0 else "cancel"
                out = vk.click_and_wait(page, f"button.tsl-{kind}")
                samples[kind].append({"all": out["all"], "answered": out["answered"]})
                took, answered = out["all"], out["answered"]
                line = f"{kind:8} every panel {took:6.0f} ms  result {answered:5.0f} ms"
                print(line, file=sys.stderr)
                time.sleep(1.5)
            browser.close()
    finally:
        server.stop()
    every = [s["all"] for kind in samples for s in samples[kind]]
    report = {
        "page_ready_s": round(ready, 2),
        "clicks": args.clicks,
        "settle_s": args.settle,
        "median_ms": round(statistics.median(every)),
        "p90_ms": round(quantile(every, 0.9)),
        "by_kind": {
            kind: {
                "median_ms": round(statistics.median(s["all"] for s in rows)),
                "p90_ms": round(quantile([s["all"] for s in rows], 0.9)),
                "result_median_ms": round(statistics.median(s["answered"] for s in rows)),
            }
            for kind, rows in samples.items()
            if rows
        },
        "samples": samples,
    }
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
