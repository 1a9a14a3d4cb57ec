"""Time rendering the task timeline of a 100,000-row log and the pictures of 100,000-task queues.

Usage::

    python benchmarks/bench_plots.py [--rows 100000] [--tasks 100000] [--repeats 3] [--json F]

Two logs of about ``--rows`` rows each, built on a VirtualClock (not timed):

* ``many one-shot tasks``: rows/4 tasks at random times (schedule, dispatch,
  start, finish rows each): far more lanes than fit, so the timeline draws the
  first and last lanes and a density row for the rest;
* ``few periodic tasks``: 5 periodic tasks with rows/20 runs each: few lanes
  but many runs, so the timeline thins its markers.

Timed: ``plot_timeline(frame)`` plus ``fig.savefig(BytesIO, format="png",
dpi=100)``, the median of ``--repeats`` runs (after one warm-up). Target: under
2 s each.

Then, for each queue design, ``--tasks`` pending tasks at random due times over
10 s (scheduled on a VirtualClock, not timed): ``plot_queue(snapshot)`` plus the
PNG, target under 1 s (the picture summarises: first time points, top heap
levels and one line per deeper level, wheel occupancy per bucket). Taking the
snapshot itself (``scheduler.snapshot()``, the queue's own copy) is timed and
reported apart: it is the queue's cost, not the picture's.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import matplotlib
import pandas as pd

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.plots import plot_queue, plot_timeline

TARGET_S = 2.0
DESIGN_TARGET_S = 1.0


def _noop(*args: Any) -> None:
    """The tasks' action."""


def many_one_shot(rows: int, seed: int = 1) -> pd.DataFrame:
    """About ``rows`` rows: rows/4 one-shot tasks at random times in [0, 1000) s."""
    rng = random.Random(seed)
    clock = VirtualClock()
    s = Scheduler(clock)
    for i in range(rows // 4):
        s.schedule(_noop, at=round(rng.uniform(0, 1000), 3), args=(i,), label=f"job {i % 7}")
    clock.run_until(1000.0)
    s.shutdown()
    return s.log.to_frame()


def few_periodic(rows: int, tasks: int = 5) -> pd.DataFrame:
    """About ``rows`` rows: ``tasks`` periodic tasks, each run writing 4 rows."""
    runs = rows // (4 * tasks)
    clock = VirtualClock()
    s = Scheduler(clock)
    for j in range(tasks):
        s.schedule(_noop, at=0.01 * (j + 1), period=1.0, label=f"sensor {j}")
    clock.run_until(runs - 0.5)
    s.shutdown()
    return s.log.to_frame()


def render(frame: pd.DataFrame) -> tuple[float, int]:
    """Seconds to draw the timeline and save it as PNG, and the PNG's size in bytes."""
    t0 = time.perf_counter()
    ax = plot_timeline(frame)
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", dpi=100)
    return time.perf_counter() - t0, buffer.tell()


def big_queue(design: str, tasks: int, seed: int = 1) -> Scheduler:
    """A scheduler on a VirtualClock holding ``tasks`` pending tasks spread over 10 s."""
    rng = random.Random(seed)
    s = Scheduler(VirtualClock(), queue=design, log=False)
    for i in range(tasks):
        s.schedule(_noop, at=1.0 + rng.random() * 10.0, args=(i,), label=f"job {i % 7}")
    return s


def render_queue(snapshot: object) -> tuple[float, int]:
    """Seconds to draw a queue picture and save it as PNG, and the PNG's size in bytes."""
    t0 = time.perf_counter()
    ax = plot_queue(snapshot)
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", dpi=100)
    return time.perf_counter() - t0, buffer.tell()


def bench_designs(tasks: int, repeats: int) -> list[dict[str, Any]]:
    """Median render time of each design's picture of a ``tasks``-task queue."""
    results = []
    for design in ("sorteddict", "heap", "wheel"):
        s = big_queue(design, tasks)
        t0 = time.perf_counter()
        snapshot = s.snapshot()
        snap_s = time.perf_counter() - t0
        render_queue(snapshot)  # warm-up
        times, size = [], 0
        for _ in range(repeats):
            seconds, size = render_queue(snapshot)
            times.append(seconds)
        s.shutdown()
        median = statistics.median(times)
        verdict = "ok" if median < DESIGN_TARGET_S else f"SLOWER than {DESIGN_TARGET_S:g} s"
        print(
            f"{design + ' picture':<20} {tasks:>8,} tasks: {median:6.3f} s (median of {repeats}), "
            f"PNG {size / 1024:.0f} KiB  {verdict}  [snapshot: {snap_s:.3f} s]"
        )
        results.append(
            {
                "picture": design,
                "tasks": tasks,
                "seconds": median,
                "snapshot_seconds": snap_s,
                "png_bytes": size,
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    matplotlib.use("Agg")
    results = []
    for name, build in (
        ("many one-shot tasks", many_one_shot),
        ("few periodic tasks", few_periodic),
    ):
        frame = build(args.rows)
        render(frame)  # warm-up: fonts, caches
        times = []
        size = 0
        for _ in range(args.repeats):
            seconds, size = render(frame)
            times.append(seconds)
        median = statistics.median(times)
        lanes = int(frame["task_id"].nunique())
        results.append(
            {"log": name, "rows": len(frame), "tasks": lanes, "seconds": median, "png_bytes": size}
        )
        verdict = "ok" if median < TARGET_S else f"SLOWER than the {TARGET_S:g} s target"
        print(
            f"{name:<20} {len(frame):>8,} rows {lanes:>7,} tasks: {median:6.3f} s "
            f"(median of {args.repeats}), PNG {size / 1024:.0f} KiB  {verdict}"
        )
    designs = bench_designs(args.tasks, args.repeats)
    if args.json:
        meta = {
            "python": platform.python_version(),
            "matplotlib": matplotlib.__version__,
            "pandas": pd.__version__,
            "machine": platform.machine(),
        }
        payload = {"meta": meta, "results": results, "designs": designs}
        args.json.write_text(json.dumps(payload, indent=2))
    ok = all(r["seconds"] < TARGET_S for r in results)
    return 0 if ok and all(d["seconds"] < DESIGN_TARGET_S for d in designs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
