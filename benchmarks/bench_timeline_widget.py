"""The interactive timeline on a 100,000-run log, against plotly's FigureWidget.

Usage::

    python benchmarks/bench_timeline_widget.py [--runs 100000] [--steps 120] [--json F]
                                               [--no-browser] [--no-plotly]

The log: ``--runs`` one-shot tasks at random due times over ``runs / 100`` seconds on a
VirtualClock, each run taking 20-200 ms of virtual time (``VirtualClock.elapse``); about
four rows per run. Built once, not timed.

Measured:

* **bytes per refresh at 1 kHz of new rows** (no browser): a dashboard's refresher at its
  10 rounds a second while 1000 rows a second arrive, for 3 (simulated) seconds; every
  message that leaves the kernel is captured at the comm (JSON text plus binary buffers).
  For plotly, the same runs as one ``Scattergl`` trace (``x = [start, end, None, ...]``) and
  each refresh assigning the grown arrays, which is how a ``FigureWidget`` takes new data.
* **frame time while panning** (Chromium, ``performance.now()``): the page (Voila, every
  non-loopback request blocked) holds the whole log; a drag of ``--steps`` mouse moves pans
  the time axis. Reported: the time between animation frames during the drag (median,
  p95), and for our canvas also the drawing time of each frame. Lanes by task (100,000
  lanes, about a dozen on screen) and by thread (one lane holding every run).
* **install weight**: wheel sizes and installed sizes of what each needs beyond ipywidgets.

plotly is measured only when installed (``pip install plotly`` in a scratch venv: it is not
a dependency of this project).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def build(runs: int, seed: int = 7) -> Any:
    """A scheduler whose log holds ``runs`` runs of ``runs`` tasks (not timed)."""
    from tempsched_lab import Scheduler, VirtualClock
    from tempsched_lab.widgets.controls import virtual_work

    rng = random.Random(seed)
    clock = VirtualClock()
    s = Scheduler(clock)
    span = runs / 100.0
    works = [virtual_work(clock, d) for d in (0.02, 0.05, 0.1, 0.2)]
    for i in range(runs):
        s.schedule(rng.choice(works), at=rng.uniform(0.0, span), args=(i,), label=f"job{i % 50}")
    clock.run_until(span + 5.0)
    return s


# -- bytes per refresh -----------------------------------------------------------------------


class Wire:
    """Bytes that leave the kernel through one widget's comm, per message."""

    def __init__(self, widget: Any) -> None:
        self.sizes: list[int] = []

        def send(data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
            text = json.dumps(data, default=str)
            self.sizes.append(len(text) + sum(len(memoryview(b).cast("B")) for b in buffers or []))

        widget.comm.send = send


def ours_bytes_at_1khz(s: Any, seconds: float = 3.0) -> dict[str, Any]:
    from tempsched_lab.widgets import Dashboard, demo_task

    fake = [0.0]
    dash = Dashboard(
        s, panels=("timeline",), autostart=False, clock=lambda: fake[0], resync_every=None
    )
    wire = Wire(dash.timeline.live)
    rows0 = s.log.next_seq
    for _ in range(int(seconds * 1000)):
        s.schedule(demo_task, delay=1e6, args=(fake[0],), label="new")
        fake[0] += 0.001
        dash.refresher.tick()
    rows = s.log.next_seq - rows0
    rounds = dash.refresher.rounds - 1  # the first round drew the log before the flood
    out = {
        "rows": rows,
        "refreshes": rounds,
        "messages": len(wire.sizes),
        "bytes_per_refresh": round(sum(wire.sizes) / rounds),
        "bytes_per_row": round(sum(wire.sizes) / rows, 1),
    }
    dash.close()
    return out


def runs_xy(s: Any, lanes: str) -> tuple[list[float | None], list[float | None]]:
    from tempsched_lab.plots._data import task_runs

    runs = task_runs(s.log.to_frame())
    runs = runs[runs["started"].notna()]
    x: list[float | None] = []
    y: list[float | None] = []
    for task, start, end in zip(runs["task_id"], runs["started"], runs["ended"], strict=True):
        lane = float(task) if lanes == "task" else 0.0
        x += [float(start), float(end), None]
        y += [lane, lane, None]
    return x, y


def plotly_bytes_at_1khz(s: Any, seconds: float = 3.0) -> dict[str, Any]:
    import plotly.graph_objects as go

    x, y = runs_xy(s, "task")
    fig = go.FigureWidget(go.Scattergl(x=x, y=y, mode="lines", line={"width": 8}))
    wire = Wire(fig)
    rng = random.Random(1)
    end = max(v for v in x if v is not None)
    for _ in range(int(seconds * 10)):  # 10 refreshes a second, 100 new rows (25 runs) each
        for _ in range(25):
            start = end + rng.uniform(0, 0.04)
            x += [start, start + 0.02, None]
            y += [y[-2] or 0.0, y[-2] or 0.0, None]
        with fig.batch_update():
            fig.data[0].x = x
            fig.data[0].y = y
    refreshes = int(seconds * 10)
    return {
        "rows": int(seconds * 1000),
        "refreshes": refreshes,
        "messages": len(wire.sizes),
        "bytes_per_refresh": round(sum(wire.sizes) / refreshes),
        "bytes_per_row": round(sum(wire.sizes) / (seconds * 1000), 1),
    }


# -- frame times in Chromium -------------------------------------------------------------------

OURS_NB = """
import sys; sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
from bench_timeline_widget import build
from tempsched_lab.widgets import TimelineWidget
s = build({runs})
timeline = TimelineWidget(s, lanes={lanes!r}, follow=False, height=420)
timeline.push()
timeline
"""

PLOTLY_NB = """
import sys; sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
import plotly.graph_objects as go
from bench_timeline_widget import build, runs_xy
s = build({runs})
x, y = runs_xy(s, {lanes!r})
span = max(v for v in x if v is not None)
fig = go.FigureWidget(go.Scattergl(x=x, y=y, mode="lines", line={{"width": 8}}))
lanes_shown = [-0.5, 12.5] if {lanes!r} == "task" else [-1, 1]
fig.update_layout(dragmode="pan", height=420, width=1200,
                  xaxis_range=[0, span / 20], yaxis_range=lanes_shown)
fig
"""

#: JavaScript: record animation-frame times until stopped; also the canvas's own draw times.
RAF_JS = """() => { window.__frames = []; window.__rafOn = true;
  const tick = t => { window.__frames.push(t); if (window.__rafOn) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  const el = document.querySelector('.tsl-tl');
  if (el && el.__tsl) el.__tsl.drawTimes.length = 0; }"""
STOP_JS = """() => { window.__rafOn = false; const f = window.__frames;
  const d = []; for (let i = 1; i < f.length; i++) d.push(f[i] - f[i - 1]);
  const el = document.querySelector('.tsl-tl');
  return {intervals: d, draws: el && el.__tsl ? el.__tsl.drawTimes.slice() : []}; }"""


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def browser_frames(runs: int, steps: int, plotly: bool, ready_s: float = 240.0) -> dict[str, Any]:
    import nbformat
    import voilakit as vk
    from playwright.sync_api import sync_playwright

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        folder = Path(tmp)
        pages = {}
        for lanes in ("thread", "task"):
            for name, source in (("ours", OURS_NB), ("plotly", PLOTLY_NB)):
                if name == "plotly" and not plotly:
                    continue
                nb = nbformat.v4.new_notebook()
                code = source.format(
                    root=str(ROOT), bench=str(ROOT / "benchmarks"), runs=runs, lanes=lanes
                )
                nb.cells = [nbformat.v4.new_code_cell(code)]
                nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
                path = folder / f"{name}_{lanes}.ipynb"
                nbformat.write(nb, path)
                pages[(name, lanes)] = path.name
        server = vk.VoilaServer(str(folder.relative_to(ROOT)), "voila-bench-timeline.log")
        try:
            with sync_playwright() as p:
                browser = vk.launch_chromium(p)
                for (name, lanes), page_name in pages.items():
                    page = vk.new_page(browser, width=1280, height=900)
                    ready = "canvas.tsl-tl-canvas" if name == "ours" else ".js-plotly-plot"
                    started = time.monotonic()
                    try:
                        vk.wait_voila_page(page, server.page_url(page_name), ready, ready_s * 1000)
                    except Exception as exc:  # plotly at 100,000 runs: never ready in time
                        results[f"{name} by {lanes}"] = {
                            "not_ready_after_s": round(time.monotonic() - started),
                            "error": type(exc).__name__,
                        }
                        page.context.close()
                        continue
                    if name == "ours":
                        page.wait_for_function(
                            "() => +document.querySelector('.tsl-tl').dataset.runs > 0",
                            timeout=120_000,
                        )
                        box = page.locator("canvas.tsl-tl-canvas").bounding_box()
                    else:
                        page.wait_for_timeout(3000)
                        box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
                    load = time.monotonic() - started
                    x0, y0 = box["x"] + box["width"] * 0.7, box["y"] + box["height"] * 0.5
                    page.mouse.move(x0, y0)
                    page.evaluate(RAF_JS)
                    page.mouse.down()
                    for i in range(steps):  # to the left and back: later times, then earlier
                        dx = -3 * (i if i < steps // 2 else steps - i)
                        page.mouse.move(x0 + dx, y0)
                    page.mouse.up()
                    page.wait_for_timeout(300)
                    got = page.evaluate(STOP_JS)
                    page.screenshot(path=str(vk.ARTIFACTS / f"bench-{name}-{lanes}.png"))
                    intervals, draws = got["intervals"], got["draws"]
                    results[f"{name} by {lanes}"] = {
                        "page_ready_s": round(load, 1),
                        "frames": len(intervals),
                        "frame_ms_median": round(statistics.median(intervals), 1),
                        "frame_ms_p95": round(_pct(intervals, 0.95), 1),
                        "draw_ms_median": round(statistics.median(draws), 2) if draws else None,
                        "draw_ms_p95": round(_pct(draws, 0.95), 2) if draws else None,
                        "errors": [e for e in page.errors if "Failed to load" not in e][:3],
                    }
                    page.context.close()
                browser.close()
        finally:
            server.stop()
    return results


# -- install weight ----------------------------------------------------------------------------


def installed_mb(*names: str) -> float:
    total = 0
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        root = Path(spec.origin).parent
        total += sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    return round(total / 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-plotly", action="store_true")
    args = parser.parse_args()
    have_plotly = importlib.util.find_spec("plotly") is not None and not args.no_plotly
    started = time.perf_counter()
    s = build(args.runs)
    rows = s.log.next_seq
    print(f"log: {args.runs:,} runs, {rows:,} rows, built in {time.perf_counter() - started:.1f} s")
    report: dict[str, Any] = {"runs": args.runs, "rows": rows}
    report["ours_1khz"] = ours_bytes_at_1khz(build(1000))
    print("ours, 1 kHz of new rows:", report["ours_1khz"])
    if have_plotly:
        report["plotly_1khz"] = plotly_bytes_at_1khz(s)
        print("plotly, 1 kHz of new rows:", report["plotly_1khz"])
    report["installed_mb"] = {
        "anywidget + psygnal": installed_mb("anywidget", "psygnal"),
        "tempsched_lab/widgets/static (our module)": round(
            sum(f.stat().st_size for f in (ROOT / "tempsched_lab/widgets/static").iterdir()) / 1e6,
            3,
        ),
    }
    if have_plotly:
        report["installed_mb"]["plotly + narwhals"] = installed_mb("plotly", "narwhals")
    print("installed:", report["installed_mb"])
    if not args.no_browser:
        report["browser"] = browser_frames(args.runs, args.steps, have_plotly)
        for name, numbers in report["browser"].items():
            print(f"{name}: {numbers}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
