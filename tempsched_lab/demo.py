"""The demo scenario: every decision case, periodic tasks, Events, cancels and an error.

Run it with ``tempsched-lab demo`` (or ``python -m tempsched_lab demo``); add
``--virtual`` for an instant, deterministic run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from .analysis import case_counts, lateness_summary
from .audit import AuditReport
from .clock import RealClock, VirtualClock
from .scheduler import PastTimeError, Scheduler

__all__ = ["DemoResult", "run_demo"]


def _work(name: str) -> str:
    return name


def _fail() -> None:
    raise RuntimeError("this task fails on purpose: the log keeps its traceback")


class DemoResult:
    """What a demo run produced: the scheduler, its log frame and the audit."""

    def __init__(self, scheduler: Scheduler, frame: pd.DataFrame, report: AuditReport) -> None:
        self.scheduler = scheduler
        self.frame = frame
        self.report = report


def run_demo(
    *,
    virtual: bool = False,
    seconds: float = 3.0,
    scale: float = 1.0,
    progress: Callable[[float], None] | None = None,
) -> DemoResult:
    """Run the demo scenario for ``seconds`` (virtual or real) and return its log.

    ``scale`` stretches every time in the scenario; ``progress(fraction)`` is
    called about ten times a second while a real-clock run waits.

    >>> result = run_demo(virtual=True)
    >>> sorted(set(result.frame["case"].dropna().astype(int)))
    [1, 2, 3, 4, 5, 6, 7, 8]
    """
    clock = VirtualClock() if virtual else RealClock()
    s = Scheduler(clock, executor="inline" if virtual else "pool")
    t0 = clock.now()

    def at(x: float) -> float:
        return t0 + x * scale

    s.schedule(_work, at=at(1.0), args=("a",), label="work")  # case 2: empty
    s.schedule(_work, at=at(0.5), args=("b",), label="work")  # case 3: earlier than head
    s.schedule(_work, at=at(2.0), args=("c",), label="work")  # case 4: new time point
    s.schedule(_work, at=at(0.5), args=("b",), label="work")  # case 5: duplicate of head
    s.schedule(_work, at=at(0.5), args=("d",), label="work")  # case 6: joins head
    s.schedule(_work, at=at(2.0), args=("c",), label="work")  # case 7: duplicate in queue
    s.schedule(_work, at=at(2.0), args=("e",), label="work")  # case 8: joins time point
    with contextlib.suppress(PastTimeError):  # case 1: in the past, rejected
        s.schedule(_work, at=t0 - 1.0, args=("late",), label="work")
    s.schedule(_work, at=at(0.25), period=0.25 * scale, args=("tick",), label="heartbeat")
    s.schedule(threading.Event(), at=at(1.5), label="ready flag")
    s.schedule(_fail, at=at(1.25), label="failing task")
    doomed = s.schedule(_work, at=at(2.5), args=("never",), label="cancelled")
    s.cancel(doomed)
    end = t0 + seconds * scale
    if virtual:
        clock.run_until(end)  # type: ignore[attr-defined]
    else:
        import time

        while (left := end - clock.now()) > 0:
            if progress is not None:
                progress(1.0 - left / (seconds * scale))
            time.sleep(min(0.1, left))
    if progress is not None:
        progress(1.0)
    s.shutdown()
    frame = s.log.to_frame()
    return DemoResult(s, frame, s.log.audit())


def write_outputs(result: DemoResult, out: Path) -> list[Path]:
    """Write into ``out``: the log (CSV, and Parquet with pyarrow), figures, the dashboard."""
    from matplotlib.figure import Figure

    from .plots import plot_summary, plot_timeline

    out.mkdir(parents=True, exist_ok=True)
    written = [out / "event-log.csv"]
    result.scheduler.log.to_csv(written[0])
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        written.append(out / "event-log.parquet")
        result.scheduler.log.to_parquet(written[-1])
    summary = plot_summary(result.frame)
    written.append(out / "summary.png")
    summary.savefig(written[-1], dpi=100)
    timeline = Figure(figsize=(11, 5.5), layout="constrained")
    plot_timeline(result.frame, ax=timeline.add_subplot())
    written.append(out / "timeline.png")
    timeline.savefig(written[-1], dpi=100)
    written.append(write_dashboard(result, out / "dashboard.html"))
    return written


def write_dashboard(result: DemoResult, path: Path) -> Path:
    """The dashboard of the finished run as a static HTML snapshot (opens without a kernel)."""
    from .widgets import Dashboard

    dashboard = Dashboard(result.scheduler, autostart=False, resync_every=None)
    try:
        return dashboard.to_html(path, title="tempsched_lab demo")
    finally:
        dashboard.close()


def summary_text(result: DemoResult) -> str:
    """Case counts and lateness as a short plain-text report."""
    counts = case_counts(result.frame)
    lines = ["case  decision              count"]
    lines += [f"{r.case:>4}  {r.short:<20}  {r.count:>5}" for r in counts.itertuples()]
    late = lateness_summary(result.frame, by=None)
    if len(late):
        lines.append("")
        lines.append("lateness (ms)   median      p99      max")
        for (measure, _), row in late.iterrows():
            lines.append(
                f"{measure:<12} {row['median'] * 1e3:9.3f} {row['p99'] * 1e3:8.3f} "
                f"{row['max'] * 1e3:8.3f}"
            )
    lines.append("")
    lines.append(str(result.report))
    return "\n".join(lines)
