"""Conservation laws of an event log, checked on a live log or a frame read from disk.

* ``seq`` is gapless and increasing;
* every accepted task ends exactly once (finished, failed, event set, cancelled
  or dropped at shutdown) or is still pending or in flight;
* every dispatch has a start (or an ``Event.set``), every start an end;
* nothing ran before it was due (lateness >= 0);
* no rows are known to be missing: a frame read from a spill directory that was
  closed without every row (``read_log(directory, on_incomplete="warn")``) carries
  the reason in ``frame.attrs["incomplete"]``, and fails the audit with it.

>>> from tempsched_lab import Scheduler, VirtualClock, audit
>>> clock = VirtualClock()
>>> s = Scheduler(clock)
>>> _ = s.schedule(print, delay=1, args=("ok",))
>>> _ = clock.run_until_idle()
ok
>>> audit(s.log.to_frame()).ok
True
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .kinds import Kind

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AuditReport", "audit"]

_MAX_LISTED = 20


@dataclass
class AuditReport:
    """What :func:`audit` found. ``problems`` is empty for a sound log."""

    rows: int = 0
    tasks: int = 0
    ended: int = 0
    pending: list[int] = field(default_factory=list)
    in_flight: list[int] = field(default_factory=list)
    truncated: int = 0
    #: why rows are missing from the log (``frame.attrs["incomplete"]``), if they are
    incomplete: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no law is broken."""
        return not self.problems

    def __bool__(self) -> bool:
        return self.ok

    def raise_if_problems(self) -> None:
        """Raise ``AssertionError`` listing the problems, if any."""
        if self.problems:
            raise AssertionError("event log audit failed:\n  " + "\n  ".join(self.problems))

    def __str__(self) -> str:
        head = (
            f"audit of {self.rows} rows, {self.tasks} tasks: {self.ended} ended, "
            f"{len(self.pending)} pending, {len(self.in_flight)} in flight"
        )
        if self.truncated:
            head += f", {self.truncated} rows dropped before the first kept row"
        if self.ok:
            return head + ": OK"
        return head + "\n  " + "\n  ".join(self.problems)


def _listed(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:_MAX_LISTED])
    return shown + (f" (+{len(ids) - _MAX_LISTED} more)" if len(ids) > _MAX_LISTED else "")


def _audit_runs(
    frame: pd.DataFrame, dropped: int, starts: list[int], report: AuditReport
) -> AuditReport:
    """Audit each process's rows of a restarted service's log on their own (see ``audit``)."""
    parts = [frame.iloc[a:b] for a, b in zip([0, *starts], [*starts, len(frame)], strict=True)]
    reports = [audit(part, dropped if i == 0 else 0) for i, part in enumerate(parts)]
    last = reports[-1]
    report.tasks = sum(r.tasks for r in reports)
    report.ended = sum(r.ended for r in reports)
    report.pending, report.in_flight = last.pending, last.in_flight  # the earlier ones: gone
    report.truncated = reports[0].truncated
    report.problems += [p for r in reports for p in r.problems]
    return report


def audit(frame: pd.DataFrame, dropped: int = 0) -> AuditReport:
    """Check the log's conservation laws; returns an :class:`AuditReport`.

    ``dropped`` is the number of rows a bounded log discarded (its first kept
    row then has ``seq == dropped``); laws about tasks whose rows fell out are
    not checked.
    """
    import numpy as np

    report = AuditReport(rows=len(frame))
    incomplete = frame.attrs.get("incomplete")
    if incomplete:
        report.incomplete = str(incomplete)
        report.problems.append(f"rows are missing: {incomplete}")
    if not len(frame):
        return report
    frame = frame.sort_values("seq", kind="stable")
    # a service's next process continues its log (log.files.Lineage): its first row, a
    # shutdown row "restarted", begins a log of its own (task IDs start again, the previous
    # process's tasks are gone, the rows a killed process never wrote are a gap before it)
    restarts = np.flatnonzero(
        (frame["kind"].astype(object).to_numpy() == Kind.SHUTDOWN)
        & (frame["result"].astype(object).to_numpy() == "restarted")
    ).tolist()
    if restarts and restarts != [0]:
        return _audit_runs(frame, dropped, [p for p in restarts if p > 0], report)
    seq = frame["seq"].to_numpy()
    first = int(seq[0])
    report.truncated = first if first else dropped
    if restarts == [0]:
        dropped = first  # it starts where its lineage's previous process left off: none dropped
        report.truncated = 0
    if np.any(np.diff(seq) != 1):
        gaps = np.flatnonzero(np.diff(seq) != 1)
        report.problems.append(
            f"seq is not gapless and increasing after seq {int(seq[gaps[0]])} "
            f"({len(gaps)} place(s))"
        )
    if first != dropped:
        report.problems.append(f"first seq is {first} but {dropped} rows were dropped")

    kind = frame["kind"].astype(object).to_numpy()
    tid = frame["task_id"].to_numpy(dtype="float64", na_value=math.nan)
    case = frame["case"].to_numpy(dtype="float64", na_value=math.nan)
    dup = frame["dup_of"].to_numpy(dtype="float64", na_value=math.nan)
    result = frame["result"].astype(object).to_numpy()
    origin = frame["origin"].astype(object).to_numpy()
    period = frame["period"].to_numpy(dtype="float64")
    recurring = ~np.isnan(period)
    if "trigger" in frame.columns:  # calendar tasks recur without a period
        recurring |= frame["trigger"].notna().to_numpy()
    lateness = frame["lateness"].to_numpy(dtype="float64")

    periodic: dict[int, bool] = {}
    ends: Counter[int] = Counter()
    phase: dict[int, str] = {}  # queued -> dispatched -> started -> ran -> (queued again)
    accepted: list[int] = []

    def problem(i: int, text: str) -> None:
        report.problems.append(f"seq {int(seq[i])}: {text}")

    for i in range(len(frame)):
        k = kind[i]
        if tid[i] != tid[i]:
            continue
        t = int(tid[i])
        if k == Kind.SCHEDULE:
            if not 2 <= case[i] <= 8:
                problem(i, f"schedule row with case {case[i]}")
            if case[i] in (5, 7):
                if dup[i] != t:
                    problem(i, "duplicate decision without dup_of")
                continue
            if origin[i] != "periodic":
                if t in periodic:
                    problem(i, f"task {t} was accepted twice")
                accepted.append(t)
                periodic[t] = bool(recurring[i])
            elif phase.get(t) != "ran" and t in periodic:
                problem(i, f"task {t} re-armed while {phase.get(t)}")
            phase[t] = "queued"
            continue
        if t not in periodic:
            if not report.truncated and k not in (Kind.CANCEL,):
                problem(i, f"{k} row for task {t}, which was never accepted")
            continue  # (or its schedule row fell out of a bounded log)
        now = phase.get(t)
        if k == Kind.DISPATCH:
            if now != "queued":
                problem(i, f"task {t} dispatched while {now}")
            if lateness[i] < 0:
                problem(i, f"task {t} dispatched {-lateness[i]:.6f} s early")
            phase[t] = "dispatched"
        elif k in (Kind.START, Kind.EVENT_SET):
            if now != "dispatched":
                problem(i, f"task {t}: {k} without a dispatch (was {now})")
            if lateness[i] < 0:
                problem(i, f"task {t} started {-lateness[i]:.6f} s before it was due")
            phase[t] = "started" if k == Kind.START else "ran"
        elif k in (Kind.FINISH, Kind.ERROR):
            if not (now == "started" or (k == Kind.ERROR and now == "dispatched")):
                problem(i, f"task {t}: {k} without a start (was {now})")
            phase[t] = "ran"
        is_end = False
        if k in (Kind.FINISH, Kind.ERROR, Kind.EVENT_SET):
            is_end = not periodic[t]
        elif k == Kind.CANCEL:
            is_end = result[i] == "cancelled" or (result[i] == "running" and periodic[t])
            if result[i] == "cancelled":
                if now != "queued":
                    problem(i, f"task {t} cancelled while {now}")
                phase[t] = "ended"
        elif k == Kind.SHUTDOWN and result[i] == "dropped":
            is_end = True
            if now == "queued":
                phase[t] = "ended"
        if is_end:
            ends[t] += 1

    report.tasks = len(accepted)
    twice = sorted(t for t, n in ends.items() if n > 1)
    if twice:
        report.problems.append(f"tasks that ended more than once: {_listed(twice)}")
    lost = []
    for t in accepted:
        if ends[t]:
            report.ended += 1
        elif phase.get(t) == "queued":
            report.pending.append(t)
        elif phase.get(t) in ("dispatched", "started"):
            report.in_flight.append(t)
        else:
            lost.append(t)
    if lost:
        report.problems.append(f"tasks that vanished (not pending, no end): {_listed(lost)}")
    return report
