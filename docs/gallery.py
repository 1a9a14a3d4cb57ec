"""Regenerate every figure of ``docs/plots.md`` into ``docs/images/``.

Usage::

    python docs/gallery.py [--out docs/images] [--dpi 100]

Every figure comes from the fixed VirtualClock scenario of
:func:`tempsched_lab.plots.example_frame` (one simulated worker, a 16-slot
timing wheel of 0.1 s ticks), so the images are the same on every machine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tempsched_lab import Case, Scheduler, VirtualClock, replay_snapshot
from tempsched_lab.plots import (
    example_frame,
    plot_decision_tree,
    plot_heap,
    plot_lateness,
    plot_queue_depth,
    plot_sorteddict,
    plot_summary,
    plot_timeline,
    plot_wheel,
)
from tempsched_lab.queues import TimingWheelQueue

#: The row after which the queue-design pictures are taken (t = 0.4 s: 11 tasks pending).
SNAPSHOT_ROW = 19
#: The "live" timeline shows the log as it was at this clock time.
LIVE_AT = 2.5


def _noop(*args: object) -> None:
    """The action of the many-tasks scenario."""


def many_tasks(n: int = 400) -> pd.DataFrame:
    """``n`` one-shot tasks at spread-out times and a periodic one: too many lanes to draw."""
    clock = VirtualClock()
    s = Scheduler(clock)
    for i in range(n):
        s.schedule(_noop, at=1.0 + (i * 7919 % 1000) / 10, args=(i,), label=f"job {i % 9}")
    s.schedule(_noop, at=0.5, period=5.0, label="heartbeat")
    clock.run_until(102.0)
    s.shutdown()
    return s.log.to_frame()


def figures() -> dict[str, Callable[[], Axes | Figure]]:
    """File stem -> a function drawing that figure."""
    frame = example_frame()
    live = frame[frame["t"] <= LIVE_AT]
    wheel = TimingWheelQueue(slots=16, tick=0.1)
    return {
        "timeline": lambda: plot_timeline(frame),
        "timeline_live": lambda: plot_timeline(live, color_by="outcome", now=LIVE_AT),
        "timeline_aggregated": lambda: plot_timeline(many_tasks(), max_lanes=24),
        "decision_tree": lambda: plot_decision_tree(Case.DUPLICATE_IN_QUEUE, counts=frame),
        "lateness": lambda: plot_lateness(frame),
        "queue_depth": lambda: plot_queue_depth(frame),
        "sorteddict": lambda: plot_sorteddict(replay_snapshot(frame, upto=SNAPSHOT_ROW)),
        "heap": lambda: plot_heap(replay_snapshot(frame, upto=SNAPSHOT_ROW, queue="heap")),
        "wheel": lambda: plot_wheel(replay_snapshot(frame, upto=SNAPSHOT_ROW, queue=wheel)),
        "summary": lambda: plot_summary(frame),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "images")
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for stem, draw in figures().items():
        drawn = draw()
        fig = drawn if isinstance(drawn, Figure) else drawn.get_figure()
        path = args.out / f"{stem}.png"
        # a fixed Software tag and no timestamps: re-running gives identical files
        fig.savefig(path, dpi=args.dpi, metadata={"Software": "tempsched_lab docs/gallery.py"})
        print(f"{path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
