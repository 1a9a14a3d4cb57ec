"""Demo scenarios: the command line's (every decision case, periodic tasks, Events, cancels and
an error), and a live one that keeps a real-clock scheduler busy while a dashboard is open.

Run the first with ``tempsched-lab demo`` (or ``python -m tempsched_lab demo``); add
``--virtual`` for a deterministic run that does not wait. Notebook 05 runs the second.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .clock import RealClock, VirtualClock
from .scenarios import quiet_failures, schedule_demo
from .scheduler import PastTimeError, Scheduler, SchedulerClosedError

if TYPE_CHECKING:
    import pandas as pd

    from .audit import AuditReport

__all__ = ["DemoResult", "LiveScenario", "run_demo", "work"]


def _work(*args: str) -> str:
    return args[0] if args else "tick"


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
    with quiet_failures():  # the demo's failing task fails on purpose: summarised at the end
        ids = schedule_demo(s, t0=t0, scale=scale, work=_work)  # the scenario of the plots too
        s.cancel(ids["cancelled"])
        end = t0 + seconds * scale
        if isinstance(clock, VirtualClock):
            clock.run_until(end)
        else:
            while (left := end - clock.now()) > 0:
                if progress is not None:
                    progress(1.0 - left / (seconds * scale))
                time.sleep(min(0.1, left))
        if progress is not None:
            progress(1.0)
        s.shutdown()
    frame = s.log.to_frame()
    return DemoResult(s, frame, s.log.audit())


#: What the demo writes, file by file (the README and ``--help`` say the same).
OUTPUTS = {
    "event-log.csv": "the event log, one row per scheduling step",
    "event-log.parquet": "the same log in Parquet (when pyarrow is installed)",
    "summary.png": "timeline, decision tree, lateness and queue depth on one page",
    "timeline.png": "the task timeline",
    "dashboard.html": "a static snapshot of the dashboard (opens in a browser, no kernel)",
}


def write_outputs(result: DemoResult, out: Path) -> Iterator[Path]:
    """Write into ``out`` (see :data:`OUTPUTS`), yielding each path as soon as it is written."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "event-log.csv"
    result.scheduler.log.to_csv(path)
    yield path
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        path = out / "event-log.parquet"
        result.scheduler.log.to_parquet(path)
        yield path
    from matplotlib.figure import Figure

    from .plots import plot_summary, plot_timeline

    path = out / "summary.png"
    plot_summary(result.frame).savefig(path, dpi=100)
    yield path
    timeline = Figure(figsize=(11, 5.5), layout="constrained")
    plot_timeline(result.frame, ax=timeline.add_subplot())
    path = out / "timeline.png"
    timeline.savefig(path, dpi=100)
    yield path
    yield write_dashboard(result, out / "dashboard.html")


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
    from .analysis import case_counts, lateness_summary

    counts = case_counts(result.frame)
    lines = ["case  decision              count"]
    lines += [f"{r.case:>4}  {r.short:<20}  {r.count:>5}" for r in counts.itertuples()]
    late = lateness_summary(result.frame, by=None)
    if len(late):
        lines.append("")
        lines.append("lateness (ms)   median      p99      max")
        for index, row in late.iterrows():
            measure = str(index[0] if isinstance(index, tuple) else index)
            lines.append(
                f"{measure:<12} {row['median'] * 1e3:9.3f} {row['p99'] * 1e3:8.3f} "
                f"{row['max'] * 1e3:8.3f}"
            )
    errors = result.frame[result.frame["kind"] == "error"]
    for task_id, label, error in zip(
        errors["task_id"], errors["label"], errors["error"], strict=True
    ):
        lines.append("")
        lines.append(f"task {task_id} ({label}) failed, on purpose: {error}")
        lines.append("  (its traceback is in the log's `detail` column; a real failure is also")
        lines.append("  reported on the `tempsched_lab` logger)")
    lines.append("")
    lines.append(str(result.report))
    return "\n".join(lines)


# -- the live scenario -------------------------------------------------------------------------


def work(seconds: float, name: str) -> str:
    """A task that takes ``seconds`` (it sleeps, so the dashboard can show it running).

    >>> work(0.0, "email")
    'email'
    """
    time.sleep(seconds)
    return name


#: One round of the live scenario: (seconds after the round starts, work seconds, label).
ROUND = (
    (1.5, 0.8, "backup"),
    (2.0, 0.2, "email"),
    (3.0, 0.3, "report"),
    (3.0, 0.3, "sms"),  # joins report's time point: case 8
    (2.0, 0.2, "email"),  # the same request again: a duplicate, case 7
    (4.5, 1.0, "cleanup"),
)


class LiveScenario:
    """A scenario that keeps a real-clock scheduler busy, round after round, until stopped.

    A heartbeat runs every ``beat`` seconds; every ``round_every`` seconds a
    *round* starts (itself a periodic task, visible in the queue) and queues
    :data:`ROUND`'s tasks at fixed offsets from its start, a job that another
    task cancels 2.5 s in, and one request in the past (case 1, rejected). The
    tasks sleep, so several executor threads run at once. A dashboard opened
    at any time shows it alive; :meth:`stop` cancels the heartbeat and the
    rounds, and what was already queued runs out (at most ``round_every``).

    >>> from tempsched_lab import Scheduler
    >>> s = Scheduler()
    >>> scenario = LiveScenario(s, round_every=10.0).start()
    >>> scenario.rounds, s.pending >= 8
    (1, True)
    >>> scenario.stop()
    >>> _ = s.shutdown()
    """

    def __init__(
        self, scheduler: Scheduler, *, round_every: float = 10.0, beat: float = 0.5
    ) -> None:
        if scheduler.clock.virtual:
            raise ValueError("scheduler: LiveScenario needs a real clock (Scheduler())")
        if not round_every >= 7.0:
            raise ValueError(f"round_every={round_every!r}: expected at least 7 s (a round's span)")
        if not beat > 0:
            raise ValueError(f"beat={beat!r}: expected a positive number of seconds")
        self.scheduler = scheduler
        self.round_every = float(round_every)
        self.beat = float(beat)
        self.rounds = 0
        self._periodic: list[int] = []
        self._lock = threading.Lock()

    def start(self) -> LiveScenario:
        """Queue the heartbeat and the first round now; later rounds start by themselves."""
        s = self.scheduler
        now = s.clock.now()
        self._periodic = [
            s.schedule(
                work, at=now + self.beat, period=self.beat, args=(0.05, "beat"), label="heartbeat"
            ),
            s.schedule(
                self.next_round, at=now + self.round_every, period=self.round_every,
                label="next round",
            ),
        ]  # fmt: skip
        self.next_round()
        return self

    def next_round(self) -> int:
        """Queue one round's tasks from now on; returns the round number."""
        s = self.scheduler
        with self._lock:
            self.rounds += 1
            number = self.rounds
        start = s.clock.now()
        try:
            for offset, seconds, label in ROUND:
                s.schedule(work, at=start + offset, args=(seconds, label), label=label)
            doomed = s.schedule(work, at=start + 6.0, args=(0.1, "never"), label="cancelled job")
            s.schedule(s.cancel, at=start + 2.5, args=(doomed,), label="cancel the job")
            with contextlib.suppress(PastTimeError):  # case 1, on purpose
                s.schedule(work, at=start - 1.0, args=(0.0, "late"), label="too late")
        except SchedulerClosedError:
            pass  # stopped while this round was being queued
        return number

    def stop(self) -> None:
        """Cancel the heartbeat and the rounds; the tasks already queued still run."""
        for task_id in self._periodic:
            self.scheduler.cancel(task_id)
        self._periodic = []

    def __repr__(self) -> str:
        state = "running" if self._periodic else "stopped"
        return f"<LiveScenario {state}: round {self.rounds}, every {self.round_every:g} s>"
