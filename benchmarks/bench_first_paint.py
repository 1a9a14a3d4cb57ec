"""First paint in Voila: seconds from opening a notebook's page to its first widget, and to all.

Usage::

    python benchmarks/bench_first_paint.py [NOTEBOOK ...] [--runs 3] [--whole] [--json F]

For each notebook (default: 05, 09 and 10, the pages issue 34 names) and each run, starts a
fresh server with the README's command (``tempsched-lab serve notebooks/<name> --no-browser``,
through ``tests/voilakit.py``'s ``VoilaServer``: progressive rendering on, the project's
template), opens the page in Debian's Chromium (``/usr/bin/chromium``: headless, no sandbox, no
GPU, no background networking, every non-loopback request blocked) at 1400 x 900 px, and reads
in the page, from its navigation start (``performance.now()``, sampled at every animation frame):

* ``output``: the first cell output shown (text, a table, a picture or a widget);
* ``widget``: the first widget view or picture shown: a rendered ipywidgets view (not "Loading
  widget..."), an image that has loaded, or a canvas, with a non-empty box;
* ``all``: every cell shown (no skeleton left, every cell's output area in place) and no widget
  still loading.

``--detail`` adds the kernel's seconds for the slowest cells (progressive pages only: from the
cells' execution timestamps). Each line says the load average when the run started
(``os.getloadavg()``, 1 minute) and how many processors the machine has: the figures mean
little without them. ``--whole`` passes ``--VoilaConfiguration.progressive_rendering=False``
(Voila's default: nothing until every cell has run) to compare. A new server per run: each
run starts a kernel as a first visitor does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import voilakit as vk  # noqa: E402  (the browser tests' helpers: servers, Chromium)

DEFAULT = ["05_live_dashboard.ipynb", "09_interactive_timeline.ipynb", "10_lab_experiment.ipynb"]
#: The flags the brief names for a quiet, offline Chromium.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]

#: JavaScript run before the page's own: note when the first output, the first widget or
#: picture, and every cell are shown (ms since navigation start), checked at every frame.
WATCH_JS = """(() => {
    const paint = window.__tslPaint = {};
    const shown = e => { const r = e.getBoundingClientRect();
                         return r.width > 0 && r.height > 0; };
    const widget = () => [...document.querySelectorAll(
            '.jp-OutputArea-output .jupyter-widgets, .jp-OutputArea-output img,'
            + ' .jp-OutputArea-output canvas')]
        .some(e => shown(e) && (e.tagName !== 'IMG' || (e.complete && e.naturalWidth))
                   && !/Loading widget/.test(e.textContent || ''));
    const all = () => {
        const config = document.getElementById('jupyter-config-data');
        if (!config || document.querySelector('.voila-skeleton-container')) return false;
        const cells = [...document.querySelectorAll('[cell-index]')];
        const progressive = JSON.parse(config.textContent).progressiveRendering;
        const visible = document.getElementById('rendered_cells');
        return cells.length > 0 && visible && shown(visible)
            && (!progressive || cells.every(c => c.querySelector('.jp-Cell-outputWrapper')))
            && !/Loading widget/.test(document.body.innerText);
    };
    const check = () => {
        const now = performance.now();
        if (paint.output === undefined && [...document.querySelectorAll(
                '.jp-OutputArea-output')].some(shown)) paint.output = now;
        if (paint.widget === undefined && widget()) paint.widget = now;
        if (paint.all === undefined && all()) paint.all = now;
        if (paint.all === undefined || paint.widget === undefined) requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
})();"""


def cell_seconds(page: Any) -> dict[int, float]:
    """From now on, ``{cell: seconds the kernel took}`` for each cell of a progressive page.

    Read from the ``execution_result`` messages' timestamps (busy to the execute reply), so a
    slow first paint can be told apart: kernel start, imports, a heavy cell.
    """
    from datetime import datetime

    took: dict[int, float] = {}

    def on_frame(payload: str | bytes) -> None:
        if isinstance(payload, bytes) or '"execution_result"' not in payload:
            return
        message = json.loads(payload)["payload"]
        stamps = message["output_cell"].get("metadata", {}).get("execution", {})
        if "iopub.status.busy" in stamps and "shell.execute_reply" in stamps:
            busy, reply = (
                datetime.fromisoformat(stamps[k].replace("Z", "+00:00"))
                for k in ("iopub.status.busy", "shell.execute_reply")
            )
            took[int(message["cell_index"])] = round((reply - busy).total_seconds(), 2)
            took.setdefault(-1, busy.timestamp())  # when the kernel began the first cell

    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", on_frame) if "/voila/execution/" in ws.url else None,
    )
    return took


def one_run(pw: Any, notebook: str, whole: bool, timeout_s: float) -> dict[str, Any]:
    """Serve ``notebook``, open it once, return the seconds to each paint and the load."""
    options = ("--VoilaConfiguration.progressive_rendering=False",) if whole else ()
    server = vk.VoilaServer(f"notebooks/{notebook}", f"bench-paint-{notebook}.log", options)
    try:
        browser = pw.chromium.launch(executable_path=vk.CHROMIUM, args=ARGS)
        try:
            load = os.getloadavg()[0]
            page = vk.new_page(browser, width=1400, height=900)
            cells = cell_seconds(page)
            page.add_init_script(WATCH_JS)
            page.goto(server.page_url(), wait_until="commit", timeout=timeout_s * 1000)
            page.wait_for_function(
                "() => window.__tslPaint && window.__tslPaint.all !== undefined"
                " && window.__tslPaint.widget !== undefined",
                timeout=timeout_s * 1000,
                polling=200,
            )
            paint = page.evaluate("() => window.__tslPaint")
            origin = page.evaluate("() => performance.timeOrigin") / 1000
            began = cells.pop(-1, None)  # the kernel's first cell, from navigation start
            assert not page.blocked, page.blocked  # nothing fetched beyond the server
            return {
                "notebook": notebook,
                "progressive": not whole,
                "load_1min": round(load, 2),
                **{k: round(paint[k] / 1000, 2) for k in ("output", "widget", "all") if k in paint},
                "first_cell_began": None if began is None else round(began - origin, 2),
                "cells": cells,
            }
        finally:
            browser.close()
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--whole", action="store_true", help="progressive rendering off")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per page")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--detail", action="store_true", help="the slowest cells' kernel time")
    args = parser.parse_args(argv)
    why = vk.missing()
    if why:
        parser.error(why)
    from playwright.sync_api import sync_playwright

    print(f"{os.cpu_count()} processors; Chromium {vk.CHROMIUM}; 1400 x 900 px")
    rows = []
    with sync_playwright() as pw:
        for notebook in args.notebooks:
            for i in range(args.runs):
                row = one_run(pw, notebook, args.whole, args.timeout)
                rows.append(row)
                print(
                    f"{notebook} run {i + 1}/{args.runs}: first output {row.get('output', '-')} s,"
                    f" first widget {row['widget']} s, all cells {row['all']} s"
                    f" (load {row['load_1min']}, {'progressive' if not args.whole else 'whole'})",
                    flush=True,
                )
                if args.detail and row["cells"]:
                    slow = sorted(row["cells"].items(), key=lambda kv: -kv[1])[:4]
                    print(
                        f"  first cell began at {row['first_cell_began']} s; kernel seconds,"
                        f" slowest cells: {dict(slow)}",
                        flush=True,
                    )
                time.sleep(2.0)  # let the last kernel's exit settle before the next load reading
    for notebook in args.notebooks:
        mine = [r for r in rows if r["notebook"] == notebook]
        print(
            f"{notebook}: first widget median {statistics.median(r['widget'] for r in mine):.1f} s"
            f" (max {max(r['widget'] for r in mine):.1f}), all cells median"
            f" {statistics.median(r['all'] for r in mine):.1f} s, load"
            f" {min(r['load_1min'] for r in mine)}-{max(r['load_1min'] for r in mine)}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
