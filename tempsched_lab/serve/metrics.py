"""``GET /v1/metrics``: the numbers operators expect, in the Prometheus text format.

The metrics are **counted from the log's rows**, at scrape time, from a cursor: the
scheduler does no work for them (no counter on the hot path, no tap, no subscription),
and they agree with the log by construction. A scrape reads the rows recorded since the
previous one through the feed's :class:`~.reader.LogReader` (memory, then spill
segments, or a named gap), adds them to the counts and answers:

* ``tempsched_lateness_seconds`` (histogram): each run's lateness (``t - due`` of the
  log's ``start`` rows), buckets from 10 us to 60 s (:data:`BUCKETS`): a served
  scheduler's median lateness (~120 us) sits below the smallest bucket of the client's
  default histogram (5 ms);
* ``tempsched_runs_total{result}``: ``ok`` (finish rows), ``failed`` (error rows),
  ``missed`` (the runs the missed rows say were skipped), ``cancelled`` (cancel rows
  that stopped a task);
* ``tempsched_decisions_total{case,decision}``: the decision tree's case (1-8) of each
  ``schedule`` (``decision="scheduled"``) and ``reject`` (``"rejected"``) row;
* ``tempsched_dropped_tasks_total``: tasks dropped at shutdown;
* ``tempsched_log_rows_total{kind}``: rows counted, by kind; ``tempsched_log_gap_rows_total``:
  rows that exist nowhere any more (never counted: at most this many);
* ``tempsched_pending_tasks``: the queue's pending tasks after the last counted step;
* ``tempsched_log_counted_seq`` and ``tempsched_log_next_seq``: the metrics count the
  rows ``seq < counted``; ``next - counted`` is how far they lag (a scrape stops
  reading after :data:`SCRAPE_BUDGET` seconds, and goes on at the next one).

The exposition is ``prometheus_client``'s (the text format 0.0.4, or OpenMetrics 1.0
when the ``Accept`` header asks): a custom collector, no metric object of the client
library's on the scheduler's path.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> from tempsched_lab.serve.reader import LogReader
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, delay=1.0)
>>> counts = LogCounts(LogReader(s.log))
>>> counts.update()
1
>>> counts.decisions, counts.pending
({(2, 'scheduled'): 1}, 1)
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..log.kinds import Kind
from ..log.schema import KIND_CODE as _CODE
from ..log.schema import KINDS
from .reader import LogReader

__all__ = ["BUCKETS", "SCRAPE_BUDGET", "LogCounts", "exposition"]

#: The lateness histogram's upper bounds (s): 10 us to 60 s, 1-2.5-5 steps.
BUCKETS: tuple[float, ...] = (
    1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
)  # fmt: skip
#: The longest a scrape reads rows (s); the rest is read by the next scrape.
SCRAPE_BUDGET = 2.0
#: Rows a scrape reads at most (with the time budget: both bound the loop).
SCRAPE_ROWS = 2_000_000
#: Rows counted at once from memory (the columns of at most this many rows are held).
WINDOW = 262_144
_BOUNDS = list(BUCKETS)
#: The columns a count reads (the others are not converted)
_COLUMNS = ("queue_size", "lateness", "missed", "result", "case")
_STOPPED = frozenset({"cancelled", "running"})  # cancel results that stopped a task


class LogCounts:
    """Counts of a log's rows from seq 0 up to a cursor, advanced by :meth:`update`.

    Thread-safe: concurrent scrapes take turns. See the module's docstring for what
    is counted.
    """

    def __init__(self, reader: LogReader) -> None:
        self.reader = reader
        #: the next seq to count (every row before it is counted, or in a gap)
        self.cursor = 0
        self.kinds: dict[str, int] = {}
        self.runs = {"ok": 0, "failed": 0, "missed": 0, "cancelled": 0}
        self.decisions: dict[tuple[int, str], int] = {}
        self.dropped = 0
        self.gap_rows = 0
        self.pending: int | None = None
        #: non-cumulative counts per bucket of BUCKETS, then +Inf
        self.buckets = [0] * (len(BUCKETS) + 1)
        self.lateness_sum = 0.0
        self.lateness_count = 0
        self.lock = threading.Lock()

    def update(self, budget: float = SCRAPE_BUDGET, most: int = SCRAPE_ROWS) -> int:
        """Count the rows recorded since the last update (for at most ``budget`` s and
        ``most`` rows); the number of rows counted now.

        Rows still in memory are counted as numpy columns
        (:meth:`~tempsched_lab.EventLog.held_columns`, ~0.1 us a row); older ones (a
        restarted service's earlier runs, a bounded log's spilled rows) as the feed reads
        them (from their segments, ~12 us a row), or as a gap.
        """
        with self.lock:
            deadline = time.monotonic() + budget
            counted = 0
            reader, log = self.reader, self.reader.log
            while counted < most and time.monotonic() < deadline:
                if self.cursor >= reader.next_seq:
                    break
                stop = self.cursor + min(most - counted, WINDOW)
                held = log.held_columns(self.cursor, stop, _COLUMNS)
                if held.first_seq <= self.cursor:
                    n = len(held.columns["seq"])
                    if not n:
                        break
                    self._count_columns(held.columns)
                    counted += n
                    self.cursor += n
                    continue
                batch = reader.read(
                    self.cursor, most=min(most - counted, held.first_seq - self.cursor)
                )
                if batch.gap is not None:
                    self.gap_rows += batch.gap.last - self.cursor + 1
                    self.cursor = batch.gap.last + 1
                    continue
                if not batch.rows:
                    break  # held in memory while their segment is written: next scrape
                self._count(batch.rows)
                counted += len(batch.rows)
                self.cursor = batch.rows[-1]["seq"] + 1
            return counted

    def _count(self, rows: list[dict[str, Any]]) -> None:
        """Count rows given as row objects (:func:`~.wire.row_to_json`)."""
        kinds, runs, buckets = self.kinds, self.runs, self.buckets
        for row in rows:
            kind = row["kind"]
            kinds[kind] = kinds.get(kind, 0) + 1
            size = row["queue_size"]
            if size is not None:
                self.pending = size
            if kind == Kind.START:
                late = row["lateness"]
                if late is not None:
                    buckets[bisect.bisect_left(BUCKETS, late)] += 1
                    self.lateness_sum += late
                    self.lateness_count += 1
            elif kind == Kind.FINISH:
                runs["ok"] += 1
            elif kind == Kind.ERROR:
                runs["failed"] += 1
            elif kind == Kind.MISSED:
                runs["missed"] += row["missed"] or 0
            elif kind == Kind.CANCEL:
                if row["result"] in _STOPPED:
                    runs["cancelled"] += 1
            elif kind in (Kind.SCHEDULE, Kind.REJECT):
                key = (row["case"] or 0, "scheduled" if kind == Kind.SCHEDULE else "rejected")
                self.decisions[key] = self.decisions.get(key, 0) + 1
            elif kind == Kind.SHUTDOWN and row["result"] == "dropped":
                self.dropped += 1

    def _count_columns(self, cols: dict[str, Any]) -> None:
        """Count rows given as the log's columns (numpy arrays of their stores)."""
        import numpy as np

        kind = cols["kind"]
        per_kind = np.bincount(kind, minlength=len(KINDS))
        for code in np.flatnonzero(per_kind).tolist():
            name = KINDS[code]
            self.kinds[name] = self.kinds.get(name, 0) + int(per_kind[code])
        sizes = cols["queue_size"]
        known = np.flatnonzero(sizes >= 0)
        if len(known):
            self.pending = int(sizes[known[-1]])
        late = cols["lateness"][kind == _CODE[Kind.START]]
        late = late[~np.isnan(late)]
        where = np.bincount(
            np.searchsorted(_BOUNDS, late, side="left"), minlength=len(self.buckets)
        )
        for i in np.flatnonzero(where).tolist():
            self.buckets[i] += int(where[i])
        self.lateness_sum += float(late.sum())
        self.lateness_count += len(late)
        runs = self.runs
        runs["ok"] += int(per_kind[_CODE[Kind.FINISH]])
        runs["failed"] += int(per_kind[_CODE[Kind.ERROR]])
        missed = cols["missed"][kind == _CODE[Kind.MISSED]]
        runs["missed"] += int(missed[missed > 0].sum())
        results = cols["result"]
        cancels = results[kind == _CODE[Kind.CANCEL]]
        runs["cancelled"] += int(np.isin(cancels, list(_STOPPED)).sum())
        shutdown = results[kind == _CODE[Kind.SHUTDOWN]]
        self.dropped += int((shutdown == "dropped").sum())
        for name, decision in ((Kind.SCHEDULE, "scheduled"), (Kind.REJECT, "rejected")):
            cases = np.bincount(cols["case"][kind == _CODE[name]], minlength=9)
            for case in np.flatnonzero(cases).tolist():
                key = (case, decision)
                self.decisions[key] = self.decisions.get(key, 0) + int(cases[case])

    # -- the prometheus_client collector ------------------------------------------------
    def collect(self) -> Iterator[Any]:
        """The metric families (``prometheus_client``'s ``Collector`` protocol)."""
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        with self.lock:
            cumulative, total = [], 0
            for bound, count in zip((*BUCKETS, float("inf")), self.buckets, strict=True):
                total += count
                cumulative.append(("+Inf" if bound == float("inf") else repr(bound), total))
            yield HistogramMetricFamily(
                "tempsched_lateness_seconds",
                "How late each run started (t - due of the log's start rows), seconds.",
                buckets=cumulative,
                sum_value=self.lateness_sum,
            )
            runs = CounterMetricFamily(
                "tempsched_runs",
                "Runs by result (finish, error, missed, cancel rows).",
                labels=["result"],
            )
            for result, value in self.runs.items():
                runs.add_metric([result], value)
            yield runs
            decisions = CounterMetricFamily(
                "tempsched_decisions",
                "schedule() decisions by decision-tree case (schedule and reject rows).",
                labels=["case", "decision"],
            )
            for (case, decision), value in sorted(self.decisions.items()):
                decisions.add_metric([str(case), decision], value)
            yield decisions
            yield CounterMetricFamily(
                "tempsched_dropped_tasks",
                "Tasks dropped at shutdown (shutdown rows).",
                value=self.dropped,
            )
            rows = CounterMetricFamily(
                "tempsched_log_rows", "Log rows counted, by kind.", labels=["kind"]
            )
            for kind, value in sorted(self.kinds.items()):
                rows.add_metric([kind], value)
            yield rows
            yield CounterMetricFamily(
                "tempsched_log_gap_rows",
                "Log rows that exist nowhere any more (at most this many; never counted).",
                value=self.gap_rows,
            )
            if self.pending is not None:
                yield GaugeMetricFamily(
                    "tempsched_pending_tasks",
                    "Tasks in the queue after the last counted step.",
                    value=self.pending,
                )
            yield GaugeMetricFamily(
                "tempsched_log_counted_seq",
                "The metrics count the log's rows with seq below this.",
                value=self.cursor,
            )
            yield GaugeMetricFamily(
                "tempsched_log_next_seq",
                "The seq the log's next row will get (rows recorded so far).",
                value=self.reader.next_seq,
            )


def exposition(counts: LogCounts, accept: str | None) -> tuple[bytes, str]:
    """Bring ``counts`` up to date and encode them for a scraper whose ``Accept`` header is
    ``accept``: ``(body, content type)`` (OpenMetrics if asked for, else the text format)."""
    from prometheus_client.exposition import choose_encoder
    from prometheus_client.registry import CollectorRegistry

    counts.update()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(counts)
    encoder, content_type = choose_encoder(accept or "")
    return encoder(registry), content_type
