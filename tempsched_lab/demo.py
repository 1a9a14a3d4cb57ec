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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .core.scheduler import PastTimeError, Scheduler, SchedulerClosedError
from .log.kinds import Kind
from .scenarios import quiet_failures, schedule_demo
from .time.clock import RealClock, VirtualClock

if TYPE_CHECKING:
    import pandas as pd

    from .log.audit import AuditReport

__all__ = ["OUTPUTS", "DemoResult", "LiveScenario", "Output", "run_demo", "work", "write_outputs"]


def _work(*args: str) -> str:
    return args[0] if args else "tick"


class DemoResult:
    """What a demo run produced: the scheduler, its log frame, the audit, the run's wall time."""

    def __init__(
        self,
        scheduler: Scheduler,
        frame: pd.DataFrame,
        report: AuditReport,
        run_seconds: float = 0.0,
    ) -> None:
        self.scheduler = scheduler
        self.frame = frame
        self.report = report
        #: Wall-clock seconds from the clock's start to the scheduler's shutdown.
        self.run_seconds = run_seconds


def run_demo(
    *,
    virtual: bool = False,
    seconds: float = 3.0,
    scale: float = 1.0,
    say: Callable[[str], None] | None = None,
) -> DemoResult:
    """Run the demo scenario for ``seconds`` (virtual or real) and return its log.

    ``scale`` stretches every time in the scenario. ``say``, if given, is called
    with each step of the log as a line (see :class:`~tempsched_lab.reading.narration.Narrator`),
    from this thread: as it happens on the real clock (about ten times a second),
    all at the end of a virtual run (which does not wait).

    >>> result = run_demo(virtual=True)
    >>> sorted(set(result.frame["case"].dropna().astype(int)))
    [1, 2, 3, 4, 5, 6, 7, 8]
    >>> lines = []
    >>> _ = run_demo(virtual=True, say=lines.append)
    >>> print(lines[0])
       0.000 s  report          case 2 (nothing scheduled): task #0 queued, due t = 1.000 s
    """
    if say is not None:  # imported before the clock starts: an import would hold the GIL
        from .reading.narration import Narrator
    clock = VirtualClock() if virtual else RealClock()
    s = Scheduler(clock, executor="inline" if virtual else "pool")
    narrator = None if say is None else Narrator(s.log, say)
    started = time.perf_counter()
    t0 = clock.now()
    with quiet_failures():  # the demo's failing task fails on purpose: summarised at the end
        try:
            ids = schedule_demo(s, t0=t0, scale=scale, work=_work)  # the plots' scenario too
            s.cancel(ids["cancelled"])
            end = t0 + seconds * scale
            if isinstance(clock, VirtualClock):
                clock.run_until(end)
            else:
                while (left := end - clock.now()) > 0:
                    time.sleep(min(0.1, left))
                    if narrator is not None:
                        narrator.poll()
        except BaseException:  # Ctrl-C: stop the scheduler's threads before going
            s.shutdown(wait=False)
            raise
        s.shutdown()
    run_seconds = time.perf_counter() - started
    if narrator is not None:
        narrator.finish()
    frame = s.log.to_frame()
    return DemoResult(s, frame, s.log.audit(), run_seconds)


#: What the demo writes, file by file (``--help`` and the README say the same).
OUTPUTS = {
    "event-log.csv": "the event log, plain CSV, times since the start",
    "event-log.csv.meta.json": "its metadata: rows, checksums, time origins",
    "event-log.parquet": "the log in Parquet (needs pyarrow; said if not)",
    "summary.png": "timeline, queue depth, tree and lateness, one page",
    "timeline.png": "the task timeline",
    "dashboard.html": "a static snapshot of the dashboard (any browser, offline, no kernel)",
}


@dataclass(frozen=True)
class Output:
    """One file of :data:`OUTPUTS`: written, or skipped and why."""

    path: Path
    skipped: str | None = None

    @property
    def what(self) -> str:
        """What the file holds (from :data:`OUTPUTS`)."""
        return OUTPUTS.get(self.path.name, "")


def write_outputs(result: DemoResult, out: Path) -> Iterator[Output]:
    """Write into ``out`` (see :data:`OUTPUTS`), yielding each file as soon as it is written.

    The log files come first: they are written even if drawing fails.
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / "event-log.csv"
    result.scheduler.log.to_csv(path)
    yield Output(path)
    yield Output(out / "event-log.csv.meta.json")
    path = out / "event-log.parquet"
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        why = "pyarrow is not installed (pip install 'tempsched-lab[parquet]')"
        yield Output(path, skipped=why)
    else:
        result.scheduler.log.to_parquet(path)
        yield Output(path)
    from matplotlib.figure import Figure

    from .plots import plot_summary, plot_timeline

    path = out / "summary.png"
    plot_summary(result.frame).savefig(path, dpi=100)
    yield Output(path)
    timeline = Figure(figsize=(11, 5.5), layout="constrained")
    plot_timeline(result.frame, ax=timeline.add_subplot())
    path = out / "timeline.png"
    timeline.savefig(path, dpi=100)
    yield Output(path)
    yield Output(write_dashboard(result, out / "dashboard.html"))


def write_dashboard(result: DemoResult, path: Path) -> Path:
    """The dashboard of the finished run as a plain HTML page: no kernel, no script, no CDN."""
    from .widgets import Dashboard

    dashboard = Dashboard(result.scheduler, autostart=False, resync_every=None)
    try:
        # plainly static: the widget manager would come from a CDN (offline: a static picture
        # anyway, after a failed request)
        return dashboard.to_html(path, title="tempsched_lab demo", widgets=False)
    finally:
        dashboard.close()


def summary_text(result: DemoResult) -> str:
    """Case counts and lateness as a short plain-text report."""
    from .reading.analysis import case_counts, lateness_summary

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
    errors = result.frame[result.frame["kind"] == Kind.ERROR]
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
