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

A scrape that finds nothing new (no row counted, the log's end where it was) answers the
body it encoded last time. The exposition is ``prometheus_client``'s (the text format
0.0.4, or OpenMetrics 1.0 when the ``Accept`` header asks): a custom collector, no metric
object of the client library's on the scheduler's path.

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
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..log.columns import Compact, Same, Texts, float_or_nan
from ..log.kinds import Kind
from ..log.rows import WIDTH, FlatRows
from ..log.schema import COMMON, KIND_CODE, KINDS, LAYOUTS
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
#: Rows counted at once from memory (one view of the log's chunks at a time).
WINDOW = 262_144
_BOUNDS = list(BUCKETS)
_STOPPED = ("cancelled", "running")  # cancel results that stopped a task
_SCHEDULE, _REJECT, _START, _FINISH, _ERROR, _MISSED, _CANCEL, _SHUTDOWN = (
    KIND_CODE[k]
    for k in (Kind.SCHEDULE, Kind.REJECT, Kind.START, Kind.FINISH, Kind.ERROR, Kind.MISSED,
              Kind.CANCEL, Kind.SHUTDOWN)
)  # fmt: skip
#: the kinds whose rows say the queue's size after their step
_SIZED = frozenset(KIND_CODE[k] for k in KINDS if "queue_size" in LAYOUTS[k])
#: where each field of a kind's rows is among its fields (kind code -> name -> index)
_FIELD = [{name: j for j, name in enumerate(COMMON + LAYOUTS[k])} for k in KINDS]


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
        #: the log's next seq when the last update ended (``tempsched_log_next_seq``)
        self.next_seq = 0
        #: the last answer: ((cursor, next_seq, content type), body), sent again while
        #: nothing changed (its encoding is ~350 us of ~1 ms a request; see exposition)
        self.answer: tuple[tuple[int, int, str], bytes] | None = None
        #: re-entrant: :func:`exposition` holds it while the encoder calls :meth:`collect`
        self.lock = threading.RLock()

    def update(self, budget: float = SCRAPE_BUDGET, most: int = SCRAPE_ROWS) -> int:
        """Count the rows recorded since the last update (for at most ``budget`` s and
        ``most`` rows); the number of rows counted now.

        Rows still in memory are counted where they are, converting nothing: a compacted
        chunk from its per-kind arrays (:class:`~tempsched_lab.log.columns.Compact`), a
        chunk the compactor has not reached and the open chunk from their flat lists
        (:class:`~tempsched_lab.log.rows.FlatRows`): C-level counts and slices per kind,
        14-48 instructions a row (``benchmarks/metrics_instructions.py``). Older rows (a
        restarted service's earlier runs, a bounded log's spilled rows) are counted as
        the feed reads them (from their segments, ~12 us a row), or as a gap. The first
        step is always taken, so that every update moves on whatever the budget.
        """
        with self.lock:
            deadline = time.monotonic() + budget
            counted = 0
            reader, log = self.reader, self.reader.log
            while counted < most and (not counted or time.monotonic() < deadline):
                if self.cursor >= reader.next_seq:
                    break
                # the log's rows where they are (``held_columns`` would convert them)
                held = log.held_stores(self.cursor, self.cursor + min(most - counted, WINDOW))
                if held.first_seq <= self.cursor:
                    for store, a, b in held.parts:
                        self._count_store(store, a, b)
                    n = held.rows
                    if not n:
                        break
                    counted += n
                    self.cursor += n
                    continue
                lowest = held.first_seq
                batch = reader.read(self.cursor, most=min(most - counted, lowest - self.cursor))
                if batch.gap is not None:
                    self.gap_rows += batch.gap.last - self.cursor + 1
                    self.cursor = batch.gap.last + 1
                    continue
                if not batch.rows:
                    break  # held in memory while their segment is written: next scrape
                self._count(batch.rows)
                counted += len(batch.rows)
                self.cursor = batch.rows[-1]["seq"] + 1
            self.next_seq = max(self.next_seq, reader.next_seq)  # (>= the cursor)
            return counted

    def _count_store(self, store: Compact | FlatRows, a: int, b: int) -> None:
        """Count rows ``a:b`` (positions) of a chunk, compacted or in flat lists, from each
        kind's fields: a count and a slice per kind present (C-level), numpy for lateness.

        Nothing is converted: a scrape used to turn the open chunk, and any chunk the
        compactor had not reached yet, into columns (``EventLog.held_columns``), then the
        compactor converted them again; 665 instructions a row counted (2.3 % of the
        ``schedule()`` call that recorded it) -> see ``docs/benchmarks.md``.
        """
        if b <= a:
            return
        kinds = store.kinds  # (the open chunk's grows behind us: only a:b is read)
        present = (
            list(store.parts) if isinstance(store, Compact)
            else [code for code, values in enumerate(store.fields) if values]
        )  # fmt: skip
        last = (-1, -1)  # the last row with a queue size: (position, size)
        for code in present:
            k = b - a if len(present) == 1 else kinds.count(code, a, b)
            if not k:
                continue
            r0 = a if len(present) == 1 else kinds.count(code, 0, a)  # its rank among its kind
            self.kinds[KINDS[code]] = self.kinds.get(KINDS[code], 0) + k
            if code in _SIZED:
                found = _last_size(store, code, a, b, r0 + k)
                if found is not None and found[0] > last[0]:
                    last = found
            if code == _START:
                self._count_lateness(
                    _floats(store, code, "t", r0, k), _floats(store, code, "due", r0, k)
                )
            elif code == _FINISH:
                self.runs["ok"] += k
            elif code == _ERROR:
                self.runs["failed"] += k
            elif code == _MISSED:
                self.runs["missed"] += sum(
                    v for v in _values(store, code, "missed", r0, k) if v and v > 0
                )
            elif code == _CANCEL:
                results = _values(store, code, "result", r0, k)
                self.runs["cancelled"] += sum(results.count(r) for r in _STOPPED)
            elif code == _SHUTDOWN:
                self.dropped += _values(store, code, "result", r0, k).count("dropped")
            elif code in (_SCHEDULE, _REJECT):
                decision = "scheduled" if code == _SCHEDULE else "rejected"
                for case, n in _per_case(_values(store, code, "case", r0, k), k).items():
                    key = (case or 0, decision)
                    self.decisions[key] = self.decisions.get(key, 0) + n
        if last[1] >= 0:
            self.pending = last[1]

    def _count_lateness(self, t: Any, due: Any) -> None:
        """Add the start rows' lateness (``t - due``; the missing ones left out)."""
        import numpy as np

        late = t - due
        late = late[np.isfinite(late)]
        where = np.bincount(
            np.searchsorted(_BOUNDS, late, side="left"), minlength=len(self.buckets)
        )
        for i in np.flatnonzero(where).tolist():
            self.buckets[i] += int(where[i])
        self.lateness_sum += float(late.sum())
        self.lateness_count += len(late)

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
                value=self.next_seq,
            )


def _values(store: Compact | FlatRows, code: int, name: str, r0: int, k: int) -> Any:
    """Field ``name`` of the ``k`` rows of kind ``code`` from the ``r0``-th on: a list (or
    an ``array``) of the values rows hold, sliced at C level."""
    if isinstance(store, FlatRows):
        width = WIDTH[code]
        return store.fields[code][r0 * width + _FIELD[code][name] : (r0 + k) * width : width]
    field = store.parts[code][name]
    if isinstance(field, Same):
        return [field.value] * k
    if isinstance(field, Texts):
        return field.values()[r0 : r0 + k]
    return field[r0 : r0 + k]


def _per_case(cases: Any, k: int) -> dict[Any, int]:
    """How many of the ``k`` values ``cases`` (a list, or an ``array('b')``) are each case.

    A compacted chunk's array is counted by numpy (``Counter`` made an int object a row:
    ~200 of the ~200 instructions a row a count then cost); a list (the open chunk's)
    by C-level ``count``s of the cases 0-8 (small ints: identity comparisons), else
    ``Counter``.
    """
    first = cases[0]
    if isinstance(cases, list):
        if cases.count(first) == k:  # the common case: one case for all
            return {first: k}
        per = {case: n for case in range(9) if (n := cases.count(case))}
        return per if sum(per.values()) == k else dict(Counter(cases))
    import numpy as np

    values = np.frombuffer(cases, dtype=cases.typecode)
    if values.min() < 0:  # (not a case: counted as it is)
        return dict(Counter(values.tolist()))
    per_case = np.bincount(values)
    return {case: int(per_case[case]) for case in np.flatnonzero(per_case).tolist()}


def _floats(store: Compact | FlatRows, code: int, name: str, r0: int, k: int) -> Any:
    """:func:`_values` of a float field as a numpy array (missing: NaN); a compacted
    chunk's ``array('d')`` is read in place."""
    import numpy as np

    if isinstance(store, Compact):
        field = store.parts[code][name]
        if isinstance(field, Same):
            return np.full(k, float_or_nan(field.value))
        if not isinstance(field, list | Texts) and field.typecode == "d":
            return np.frombuffer(field, dtype=np.float64, count=k, offset=r0 * field.itemsize)
    return np.array(_values(store, code, name, r0, k), dtype=np.float64)


def _value(store: Compact | FlatRows, code: int, name: str, rank: int) -> Any:
    """Field ``name`` of the ``rank``-th row of kind ``code``."""
    if isinstance(store, FlatRows):
        return store.fields[code][rank * WIDTH[code] + _FIELD[code][name]]
    field = store.parts[code][name]
    if isinstance(field, Same):
        return field.value
    if isinstance(field, Texts):
        return field.values()[rank]
    return field[rank]


def _last_size(
    store: Compact | FlatRows, code: int, a: int, b: int, rank_end: int
) -> tuple[int, int] | None:
    """The last row of kind ``code`` among positions ``a:b`` that knows the queue's size
    (``rank_end``: the rank after that kind's last row there): ``(position, size)``."""
    kinds, end, rank = store.kinds, b, rank_end
    while True:
        end = kinds.rfind(code, a, end)
        if end < 0:
            return None
        rank -= 1
        size = _value(store, code, "queue_size", rank)
        if size is not None and size >= 0:
            return end, size


def exposition(counts: LogCounts, accept: str | None) -> tuple[bytes, str]:
    """Bring ``counts`` up to date and encode them for a scraper whose ``Accept`` header is
    ``accept``: ``(body, content type)`` (OpenMetrics if asked for, else the text format)."""
    from prometheus_client.exposition import choose_encoder
    from prometheus_client.registry import CollectorRegistry

    encoder, content_type = choose_encoder(accept or "")
    with counts.lock:  # (one answer at a time: the count, its key and its body agree)
        counts.update()
        key = (counts.cursor, counts.next_seq, content_type)
        if counts.answer is not None and counts.answer[0] == key:
            return counts.answer[1], content_type  # nothing new since: the same body
        registry = CollectorRegistry(auto_describe=False)
        registry.register(counts)
        body = encoder(registry)
        counts.answer = (key, body)
    return body, content_type
