"""Updates of a live dashboard in real hosts (JupyterLab, Voila): rounds drawn on the kernel's
loop (``refresh_loop="auto"``, now) against the refresher's thread alone (``None``, before).

Usage::

    python benchmarks/bench_host_updates.py [--rounds 3] [--hosts lab,voila] [--json F]

The benchmark writes a notebook per mode: a scheduler on the real clock with a task every
50 ms, a ``Dashboard(panels=("log",))`` showing the newest 250 log rows, an output holding
the scheduler clock's wall origin (a data attribute), then two cells that keep the kernel
busy 3 s each (pure Python, as cells of a Run All do) and a **phases** button. A click on it
(by the benchmark, once the page shows the dashboard) blocks the kernel's loop 3 s (a long
widget callback: in Voila the only way a kernel is busy after the page is shown), leaves it
idle 3 s, blocks it 3 s, idle 3 s, then writes the log's ``(seq, t)``, the busy stretches
and the origin to a JSON file and stops the scheduler.

The page (Debian's Chromium, every request outside 127.0.0.1 blocked) records with a
MutationObserver every change of the log table: ``Date.now()`` at arrival and the first and
last ``seq`` it shows. A row's delay is the arrival of the first update that showed it minus
its wall time (its log time ``t`` plus the origin: the same machine clock). Counted are the
rows logged after the first update arrived, up to the newest row of the last update. **Lost**:
such a row that no update showed (every update shows a contiguous run of the newest 250 rows,
about 2 s of log at 120 rows/s, six per run, so a row is lost only if no update arrived for
that long, or an update was dropped). A row is **busy** when logged while the kernel's loop
was blocked (a cell ran or the click's callback did), **idle** otherwise.

JupyterLab: a real ``jupyter lab`` (``tests/labkit.py``), the notebook opened, Run > Run All
Cells, the button clicked after the last cell ran.

The dashboard is made with ``on_page_close="ignore"`` (``--watch`` to change it): with the
page watch on, a kernel busy longer than ``page_timeout`` (5 s) after the page's first answer
takes the page for gone, as the watch cannot hear the page while the loop is blocked: in
Voila (``"shutdown"``) the two 3 s cells and the click's first stretch stopped the scheduler
8.3 s after the page's first update, in both modes. Voila: ``python -m tempsched_lab serve NB
--no-browser`` (``tests/voilakit.py``); Voila runs every cell before it sends the page, so only
the click's stretches are seen there. Modes alternate within each round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import labkit  # noqa: E402
import voilakit as vk  # noqa: E402

MODES = {"loop": "auto", "thread": None}  # loop: now; thread: before (the thread alone)

SETUP = """\
import json, threading, time
import ipywidgets as W
from IPython.display import HTML, display
from tempsched_lab import Scheduler
from tempsched_lab.widgets import Dashboard
from tempsched_lab.widgets.loopdriver import kernel_loop

MODE = {mode!r}
OUT = {out!r}
WATCH = {watch!r}
s = Scheduler(name="bench-" + str(MODE))
s.schedule(lambda: None, delay=0.05, period=0.05, label="tick")
busy = []  # (wall start, wall end, what) of every stretch the kernel's loop is blocked


def spin(seconds, what):
    start = time.time()
    while time.time() < start + seconds:
        sum(range(1000))
    busy.append((start, time.time(), what))


def finish():
    frame = s.log.to_frame()
    result = dict(mode=MODE, origin=time.time() - s.clock.now(), busy=busy,
                  seq=[int(x) for x in frame["seq"]], t=[float(x) for x in frame["t"]])
    s.shutdown(wait=False)
    with open(OUT + ".tmp", "w") as f:
        json.dump(result, f)
    import os
    os.replace(OUT + ".tmp", OUT)


def phases(_button=None):
    loop = kernel_loop()
    loop.call_later(0.5, spin, 3.0, "callback")
    loop.call_later(6.5, spin, 3.0, "callback")
    loop.call_later(12.5, finish)


button = W.Button(description="phases")
button.add_class("bench-phases")
button.on_click(phases)
dash = Dashboard(s, panels=("log",), options={{"log": {{"rows": 250}}}}, refresh_loop=MODE,
                 on_page_close=WATCH)
display(HTML("<div class='bench-origin' data-origin='%r' data-mode='%s'>origin</div>"
             % (time.time() - s.clock.now(), MODE)))
display(button)
dash
"""

# Every change of the log table: [arrival ms, first seq, last seq, rows shown].
OBSERVE_JS = """() => {
  if (window.__upd) return;
  window.__upd = []; let last = '';
  const look = () => {
    const rows = document.querySelectorAll('.tsl-log-table tr.tsl-row');
    if (!rows.length) return;
    const lo = +rows[0].cells[0].textContent, hi = +rows[rows.length - 1].cells[0].textContent;
    const key = lo + ':' + hi;
    if (key === last) return;
    last = key;
    window.__upd.push([Date.now(), lo, hi, rows.length]);
  };
  new MutationObserver(look).observe(document,
    { childList: true, subtree: true, characterData: true });
}"""


def write_notebook(path: Path, mode: str | None, out: Path, watch: str = "ignore") -> None:
    cells = [
        SETUP.format(mode=mode, out=str(out), watch=watch),
        "spin(3.0, 'cell')",
        "spin(3.0, 'cell')",
    ]
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
             "outputs": [], "source": src}
            for i, src in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    path.write_text(json.dumps(nb))


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def analyse(updates: list[list[float]], dump: dict[str, Any]) -> dict[str, Any]:
    """Per phase (idle, busy): rows counted, lost, delay median/p95/max (ms); updates seen."""
    origin = dump["origin"]
    wall = {seq: (t + origin) * 1000 for seq, t in zip(dump["seq"], dump["t"], strict=True)}
    stretches = [(a * 1000, b * 1000, what) for a, b, what in dump["busy"]]
    first_arrival = updates[0][0]
    newest = updates[-1][2]
    shown: dict[int, float] = {}
    for arrival, lo, hi, _n in updates:
        for seq in range(int(lo), int(hi) + 1):
            shown.setdefault(seq, arrival)

    def phase(ms: float) -> str:
        return "busy" if any(a <= ms < b for a, b, _ in stretches) else "idle"

    out: dict[str, Any] = {}
    for name in ("idle", "busy"):
        rows = [
            s for s, w in wall.items() if w > first_arrival and s <= newest and phase(w) == name
        ]
        delays = [shown[s] - wall[s] for s in rows if s in shown]
        out[name] = {
            "rows": len(rows),
            "lost": sum(1 for s in rows if s not in shown),
            "updates": sum(1 for u in updates if phase(u[0]) == name),
            "delay_median_ms": round(statistics.median(delays), 1) if delays else None,
            "delay_p95_ms": round(quantile(delays, 0.95), 1) if delays else None,
            "delay_max_ms": round(max(delays), 1) if delays else None,
        }
        if name == "idle" and delays:
            # where the idle phase's slowest row was logged: how long before the next stretch
            # that blocked the loop (a round posted as a stretch starts waits out the
            # driver's patience before the thread draws it)
            worst = max((s for s in rows if s in shown), key=lambda s: shown[s] - wall[s])
            after = [a - wall[worst] for a, _, _ in stretches if a >= wall[worst]]
            out[name]["max_row_before_busy_ms"] = round(min(after), 1) if after else None
    out["updates"] = len(updates)
    out["gaps"] = sum(1 for u in updates if u[2] - u[1] + 1 != u[3])  # non-contiguous tables
    out["busy_stretches"] = [round((b - a) / 1000, 2) for a, b, _ in stretches]
    return out


def wait_dump(out: Path, seconds: float) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while not out.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the notebook wrote no {out} in {seconds:g} s")
        time.sleep(0.2)
    return json.loads(out.read_text())


def run_lab(
    browser: Any, server: labkit.LabServer, name: str, work: Path, watch: str
) -> dict[str, Any]:
    from test_hosts_browser import _accept_kernel, _run_all, _wait_all_ran

    out = work / f"{name}.json"
    write_notebook(server.dir / f"{name}.ipynb", MODES[name.split("-")[1]], out, watch)
    page = vk.new_page(browser, 1400, 1600)
    try:
        # ?reset: a fresh workspace, without the tabs of the previous runs
        page.goto(f"{server.url}/lab/tree/{name}.ipynb?reset", timeout=120_000)
        idle = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
        page.wait_for_selector(idle, timeout=120_000)
        _accept_kernel(page)
        page.evaluate(OBSERVE_JS)
        _run_all(page)
        _wait_all_ran(page, 120)
        page.locator(".bench-phases").click(timeout=30_000)
        dump = wait_dump(out, 60)
        page.wait_for_timeout(1500)  # the last updates drawn before the stop
        updates = page.evaluate("() => window.__upd")
        assert not page.blocked, page.blocked
    finally:
        page.context.close()
        stop_kernels(server.url)
    return analyse(updates, dump)


def stop_kernels(url: str) -> None:
    """Shut every kernel of the JupyterLab server down (REST, no token; the _xsrf cookie)."""
    import http.cookiejar

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    try:
        opener.open(url + "/lab", timeout=30).read()  # sets the _xsrf cookie
        xsrf = next((c.value for c in jar if c.name == "_xsrf"), "")
        with opener.open(url + "/api/kernels", timeout=10) as answer:
            kernels = json.load(answer)
        for kernel in kernels:
            request = urllib.request.Request(
                f"{url}/api/kernels/{kernel['id']}", method="DELETE", headers={"X-XSRFToken": xsrf}
            )
            opener.open(request, timeout=30).read()
    except OSError as exc:
        print(f"  (could not stop the kernels: {exc})", file=sys.stderr)


def run_voila(browser: Any, name: str, work: Path, watch: str) -> dict[str, Any]:
    out = work / f"{name}.json"
    nb = work / f"{name}.ipynb"
    write_notebook(nb, MODES[name.split("-")[1]], out, watch)
    server = vk.VoilaServer(str(nb), f"bench-host-updates-{name}.log")
    page = vk.new_page(browser, 1400, 1600)
    try:
        page.add_init_script(f"({OBSERVE_JS})()")
        page.goto(server.page_url(), timeout=120_000)
        page.locator(".bench-phases").click(timeout=120_000)
        dump = wait_dump(out, 60)
        page.wait_for_timeout(1500)
        updates = page.evaluate("() => window.__upd")
        assert not page.blocked, page.blocked
    finally:
        page.context.close()
        server.stop()
    return analyse(updates, dump)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per host and mode, per phase: the medians over rounds of the figures, lost summed."""
    table: dict[str, Any] = {}
    for key in sorted({(r["host"], r["mode"]) for r in runs}):
        mine = [r for r in runs if (r["host"], r["mode"]) == key]
        entry: dict[str, Any] = {"rounds": len(mine)}
        for name in ("idle", "busy"):
            parts = [r["result"][name] for r in mine]
            entry[name] = {
                "rows": sum(p["rows"] for p in parts),
                "lost": sum(p["lost"] for p in parts),
                "updates": sum(p["updates"] for p in parts),
            }
            for stat in ("delay_median_ms", "delay_p95_ms", "delay_max_ms"):
                values = [p[stat] for p in parts if p[stat] is not None]
                entry[name][stat] = round(statistics.median(values), 1) if values else None
            entry[name]["delay_max_ms_worst"] = max(
                (p["delay_max_ms"] for p in parts if p["delay_max_ms"] is not None), default=None
            )
        table[f"{key[0]} / {key[1]}"] = entry
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", default="lab,voila")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--watch",
        default="ignore",
        help="the dashboard's on_page_close (default ignore: see the module's docstring)",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    os.environ.pop("TEMPSCHED_HEADLESS", None)
    runs: list[dict[str, Any]] = []
    loads = [load()]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        work = Path(tmp)
        browser = vk.launch_chromium(pw)
        lab = labkit.LabServer(work / "lab") if "lab" in args.hosts else None
        try:
            for rnd in range(args.rounds):
                order = ["loop", "thread"] if rnd % 2 == 0 else ["thread", "loop"]
                for host in args.hosts.split(","):
                    for mode in order:
                        name = f"{host}{rnd}-{mode}"
                        if host == "lab":
                            assert lab is not None
                            result = run_lab(browser, lab, name, work, args.watch)
                        else:
                            result = run_voila(browser, name, work, args.watch)
                        runs.append({"host": host, "mode": mode, "round": rnd, "result": result})
                        print(name, json.dumps(result), flush=True)
                loads.append(load())
        finally:
            if lab is not None:
                lab.close()
            browser.close()
    report = {
        "what": __doc__.splitlines()[0],
        "on_page_close": args.watch,
        "load": loads,
        "summary": summarise(runs),
        "runs": runs,
    }
    print(json.dumps(report["summary"], indent=1))
    print("\n".join(loads))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
