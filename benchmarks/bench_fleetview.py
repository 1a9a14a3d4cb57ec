"""What the fleet view's pan and zoom cost at 20 services x 10,000 rows.

Usage::

    python benchmarks/bench_fleetview.py [--services 20] [--rows 10000] [--steps 60]

A fleet frame of ``--services`` services of ``--rows`` rows each (one periodic task
per service busy with a third of its rows, the rest spread over 200 tasks, so every
service aggregates), built as :meth:`Fleet.to_frame` builds it; then:

* ``build``: :class:`~tempsched_lab.widgets.fleetview.FleetLanes` from the frame (once
  per look that finds new rows, not per pan or zoom);
* ``pan_zoom``: ``--steps`` pans and zooms of a :class:`FleetView`-like cycle (zoom in
  x2 five times, pan by a quarter both ways, zoom out), each one the whole data path the
  view uses to redraw: :func:`~tempsched_lab.widgets.fleetview.render` (the bins, the
  picture, its PNG and the HTML string the widget gets). Median, p95 and max in ms.

The browser's part (decoding one PNG of 800 x 560 pixels and laying out one image) is
not in these figures. Timings are taken on the shared 2-core machine under the load of
other work: labelled so.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def fleet_frame(services: int, rows: int) -> Any:
    """A fleet frame like :meth:`Fleet.to_frame`'s (the columns the view reads)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(42)
    parts = []
    kinds = np.array(["schedule", "dispatch", "start", "finish", "error", "missed"])
    for k in range(services):
        task = np.where(rng.random(rows) < 1 / 3, 0, rng.integers(1, 201, rows))
        parts.append(
            pd.DataFrame(
                {
                    "service": f"svc{k:02d}",
                    "seq": np.arange(rows),
                    "task_id": task,
                    "kind": kinds[rng.choice(6, rows, p=[0.2, 0.2, 0.28, 0.28, 0.02, 0.02])],
                    "label": np.where(task == 0, "tick", "job"),
                    "local_wall": 1.7e9 + np.sort(rng.random(rows)) * 600 + rng.normal(0, 2),
                }
            )
        )
    frame = pd.concat(parts, ignore_index=True)
    frame["service"] = pd.Categorical(frame["service"], categories=sorted(set(frame["service"])))
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=20)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from tempsched_lab.widgets.fleetview import FleetLanes, render

    frame = fleet_frame(args.services, args.rows)
    builds = []
    for _ in range(5):
        began = time.perf_counter()
        lanes = FleetLanes(frame)
        builds.append(time.perf_counter() - began)
    start, stop = lanes.span
    moves = ["in"] * 5 + ["left", "right", "right", "left"] + ["out"] * 5
    times, sizes = [], []
    for i in range(args.steps):
        move = moves[i % len(moves)]
        width = stop - start
        if move == "in":
            start, stop = start + width / 4, stop - width / 4
        elif move == "out":
            start, stop = start - width / 2, stop + width / 2
        else:
            step = width / 4 * (-1 if move == "left" else 1)
            start, stop = start + step, stop + step
        began = time.perf_counter()
        page = render(lanes, start, stop)
        times.append(time.perf_counter() - began)
        sizes.append(len(page))
    times.sort()
    result = {
        "machine": f"{platform.machine()}, {platform.python_version()}, shared 2-core box",
        "services": args.services,
        "rows_per_service": args.rows,
        "rows": len(frame),
        "lanes": len(lanes.lanes),
        "build_ms_median": round(statistics.median(builds) * 1e3, 1),
        "pan_zoom_ms_median": round(statistics.median(times) * 1e3, 2),
        "pan_zoom_ms_p95": round(times[int(0.95 * (len(times) - 1))] * 1e3, 2),
        "pan_zoom_ms_max": round(times[-1] * 1e3, 2),
        "html_kb_median": round(statistics.median(sizes) / 1e3, 1),
        "steps": args.steps,
    }
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
