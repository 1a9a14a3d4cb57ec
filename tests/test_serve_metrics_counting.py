"""``LogCounts`` counts rows where the log holds them, converting nothing: a compacted
chunk from its per-kind arrays, a chunk the compactor has not reached and the open chunk
from their flat lists. Both ways, cut anywhere, must give the counts of the rows read
one by one (the path of rows read from disk), and a count taken while the scheduler
records must end equal to a count of the whole log.
"""

from __future__ import annotations

import threading
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("prometheus_client")

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.log.columns import Compact
from tempsched_lab.log.rows import FlatRows
from tempsched_lab.serve.metrics import LogCounts, exposition
from tempsched_lab.serve.reader import LogReader
from tempsched_lab.serve.wire import row_to_json


def _ok() -> None:
    return None


def _fail() -> None:
    raise RuntimeError("on purpose")


def _state(counts: LogCounts) -> tuple[Any, ...]:
    return (
        counts.kinds,
        counts.runs,
        counts.decisions,
        counts.buckets,
        counts.lateness_count,
        counts.dropped,
        counts.pending,
    )


def by_row_objects(s: Scheduler) -> LogCounts:
    """The reference: every row as a row object, counted one by one."""
    counts = LogCounts(LogReader(s.log))
    counts._count([row_to_json(r, s.log.time_origin) for r in s.log.rows()])
    return counts


def by_pieces(s: Scheduler, cuts: list[int], compacted: bool) -> LogCounts:
    """The log's rows as one chunk (flat lists, or compacted), counted piece by piece
    between the ``cuts`` (positions)."""
    tuples, first = s.log._tuples()
    flat = FlatRows.of(tuples)
    store: Compact | FlatRows = Compact(flat, first) if compacted else flat
    counts = LogCounts(LogReader(s.log))
    bounds = sorted({0, len(tuples), *(c % (len(tuples) + 1) for c in cuts)})
    for a, b in pairwise(bounds):
        counts._count_store(store, a, b)
    return counts


def _check_every_way(s: Scheduler, cuts: list[int]) -> None:
    expected = by_row_objects(s)
    for compacted in (False, True):
        got = by_pieces(s, cuts, compacted)
        assert _state(got) == _state(expected), f"compacted={compacted}, cuts={cuts}"
        assert got.lateness_sum == pytest.approx(expected.lateness_sum, abs=1e-9)


def test_every_kind_counted_from_flat_lists_and_arrays_cut_anywhere() -> None:
    """A real-clock log with every outcome (failed, missed, cancelled while running,
    rejected, dropped at shutdown), counted as flat lists and as arrays, whole and cut
    at every 37th row: equal to its rows counted one by one."""
    from test_serve_metrics import varied_scheduler

    s = varied_scheduler()
    reference = by_row_objects(s)
    assert reference.runs["missed"] > 0 and reference.runs["cancelled"] > 0
    assert reference.dropped > 0 and reference.runs["failed"] == 7
    _check_every_way(s, [])
    _check_every_way(s, list(range(0, s.log.next_seq, 37)))
    _check_every_way(s, list(range(s.log.next_seq)))  # a row at a time


ops = st.lists(
    st.one_of(
        st.tuples(st.just("schedule"), st.integers(0, 20)),
        st.tuples(st.just("past"), st.integers(1, 5)),
        st.tuples(st.just("cancel"), st.integers(0, 30)),
        st.tuples(st.just("advance"), st.integers(0, 10)),
        st.tuples(st.just("periodic"), st.integers(1, 4)),
    ),
    max_size=80,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops, st.lists(st.integers(0, 400), max_size=12), st.booleans())
def test_counts_of_any_pieces_of_either_store_equal_the_rows_counted_one_by_one(
    steps: list[Any], cuts: list[int], shut: bool
) -> None:
    from test_serve_metrics import take_step

    s = Scheduler(VirtualClock(start=100.0))
    ids: list[int] = []
    for op, n in steps:
        take_step(s, ids, op, n)
    if shut:
        s.shutdown(wait=False)  # the pending tasks dropped: shutdown rows
    _check_every_way(s, cuts)


def test_counted_while_recorded_ends_equal_to_the_whole_logs_count() -> None:
    """One thread records ~30,000 rows (chunks sealed, compacted or not yet, the open one
    growing) while another counts again and again: after the writer's last row, one more
    update counts exactly what a count of the finished log counts."""
    s = Scheduler(VirtualClock())
    counts = LogCounts(LogReader(s.log))
    done = threading.Event()
    counted_midway = threading.Event()  # (the writer waits for it: never for a time)
    midway = 0

    def write() -> None:
        try:
            for i in range(16_000):
                task = s.schedule(_fail if i % 401 == 0 else _ok, delay=1.0 + (i % 97) * 0.01)
                if i % 13 == 0:
                    s.cancel(task)
                if i % 500 == 499:
                    s.clock.advance(5.0)  # dispatch, start, finish, error rows
                if i == 8_000:  # half-way: a count has happened while rows were coming
                    assert counted_midway.wait(60.0)
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    while not done.is_set():
        if counts.update() and not counted_midway.is_set():
            midway = counts.cursor
            counted_midway.set()
    writer.join()
    counts.update()
    assert 0 < midway < counts.cursor == s.log.next_seq > 4 * 4_096
    whole = LogCounts(LogReader(s.log))
    whole.update()
    assert _state(counts) == _state(whole)
    assert _state(counts) == _state(by_row_objects(s))
    frame = s.log.to_frame()
    assert counts.lateness_count == int((frame["kind"] == "start").sum())
    assert counts.runs["failed"] == int((frame["kind"] == "error").sum()) > 0


def test_a_scrape_with_nothing_new_answers_the_same_body_a_new_row_a_new_one() -> None:
    from prometheus_client.parser import text_string_to_metric_families

    def schedules(body: bytes) -> float:
        for family in text_string_to_metric_families(body.decode()):
            for sample in family.samples:
                if sample.name == "tempsched_log_rows_total":
                    return sample.value
        raise AssertionError("no tempsched_log_rows_total")

    s = Scheduler(VirtualClock())
    s.schedule(_ok, delay=1.0)
    counts = LogCounts(LogReader(s.log))
    first, text = exposition(counts, None)
    again, _ = exposition(counts, None)
    assert again is first and schedules(first) == 1  # the cached body, not a new one
    other, openmetrics = exposition(counts, "application/openmetrics-text; version=1.0.0")
    assert openmetrics != text and other.endswith(b"# EOF\n")  # (cached per content type)
    s.schedule(_ok, delay=2.0)
    third, _ = exposition(counts, None)
    assert third is not first and schedules(third) == 2


def test_an_update_with_no_time_left_still_counts_a_step() -> None:
    s = Scheduler(VirtualClock())
    for i in range(100):
        s.schedule(_ok, delay=1.0 + i)
    counts = LogCounts(LogReader(s.log))
    assert counts.update(budget=0.0) == 100 == counts.cursor
