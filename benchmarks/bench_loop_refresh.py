"""Refresh rounds from the kernel's event loop against today's thread: delay and loss of rows.

Usage::

    python benchmarks/bench_loop_refresh.py [--seconds 6] [--json F]

A scheduler on the real clock logs rows steadily (a task every 20 ms); a refresher draws one
recording panel at up to 10 rounds/s. For every row, the delay from its log time to the
first round that showed it (on the scheduler's clock), and the rows no round ever showed
(loss; the last round comes after the scheduler stopped). Three ways:

* ``thread``: today, every round drawn by the refresher's thread (``loop=None``);
* ``loop``: rounds handed to a free event loop running in another thread (ipykernel's
  and marimo's loops between cells);
* ``loop, cells``: that loop blocked 1.0 s of every 1.5 s, as by cells of a Run All: the
  rounds the loop cannot take are drawn by the thread after ``patience`` (0.2 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tempsched_lab import Scheduler  # noqa: E402
from tempsched_lab.widgets._base import Panel, Part  # noqa: E402
from tempsched_lab.widgets.refresher import Refresher  # noqa: E402


class Recorder(Panel):
    """A panel that draws nothing: it notes (clock reading, rows shown, thread) per round."""

    name = "recorder"

    def __init__(self, scheduler: Scheduler) -> None:
        super().__init__(scheduler)
        self.rounds: list[tuple[float, int, str]] = []

    def _make_parts(self) -> list[Part]:
        return [Part("record", self._record, lambda scene: scene.seq)]

    def _record(self, scene: Any) -> None:
        now = self.scheduler.clock.now()
        self.rounds.append((now, scene.seq, threading.current_thread().name))


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(mode: str, seconds: float) -> dict[str, Any]:
    loop: asyncio.AbstractEventLoop | None = None
    loop_thread: threading.Thread | None = None
    stop_cells = threading.Event()
    if mode != "thread":
        loop = asyncio.new_event_loop()
        loop_thread = threading.Thread(target=loop.run_forever, name="kernel-loop", daemon=True)
        loop_thread.start()
    s = Scheduler(name=f"bench-{mode}")
    s.schedule(lambda: None, delay=0.02, period=0.02, label="tick")
    panel = Recorder(s)
    r = Refresher([panel], scheduler=s, loop=loop, max_rate=10, resync_every=None)
    cells: threading.Thread | None = None
    if mode == "loop, cells" and loop is not None:
        kernel = loop

        def run_cells() -> None:  # a cell blocks the loop 1.0 s, then 0.5 s between cells
            while not stop_cells.is_set():
                done = threading.Event()
                kernel.call_soon_threadsafe(lambda d=done: (stop_cells.wait(1.0), d.set()))
                done.wait(5)
                stop_cells.wait(0.5)

        cells = threading.Thread(target=run_cells, daemon=True)
        cells.start()
    r.start()
    time.sleep(seconds)
    s.shutdown(wait=True)
    stop_cells.set()
    if cells is not None:
        cells.join(5)
    time.sleep(0.5)  # the rounds after the last row
    r.close()
    frame = s.log.to_frame()
    times = frame["t"].to_numpy()
    delays: list[float] = []
    lost = 0
    rounds = sorted(panel.rounds)
    k = 0
    for seq, t in enumerate(times):
        while k < len(rounds) and rounds[k][1] <= seq:
            k += 1
        if k == len(rounds):
            lost += 1
            continue
        delays.append(rounds[k][0] - float(t))
    on_loop = sum(1 for _, _, name in rounds if name == "kernel-loop")
    if loop is not None and loop_thread is not None:
        loop.call_soon_threadsafe(loop.stop)
        loop_thread.join(5)
        loop.close()
    panel.close()
    return {
        "mode": mode,
        "rows": len(times),
        "lost": lost,
        "rounds": len(rounds),
        "rounds_on_loop": on_loop,
        "misses": r.driver.misses,
        "delay_median_ms": round(1000 * statistics.median(delays), 1),
        "delay_p95_ms": round(1000 * quantile(delays, 0.95), 1),
        "delay_max_ms": round(1000 * max(delays), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = [run(mode, args.seconds) for mode in ("thread", "loop", "loop, cells")]
    for row in results:
        print(
            f"{row['mode']:<12} rows {row['rows']:>4}  lost {row['lost']}  rounds "
            f"{row['rounds']:>3} ({row['rounds_on_loop']} on the loop, {row['misses']} misses)"
            f"  delay median {row['delay_median_ms']} ms, p95 {row['delay_p95_ms']} ms, "
            f"max {row['delay_max_ms']} ms"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
