"""The event log: completeness (replay), conservation laws (audit), subscribers, export."""

from __future__ import annotations

import contextlib
import gc
import random
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempsched_lab import (
    EventLog,
    PastTimeError,
    Scheduler,
    VirtualClock,
    audit,
    case_counts,
    lateness_summary,
    periodic_runs,
    read_log,
    replay,
    replay_snapshot,
    task_history,
)
from tempsched_lab.log.schema import FRAME_COLUMNS


def noop(*args):
    return None


def boom():
    raise ValueError("boom")


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("at"), st.sampled_from([0.5, 1.0, 1.5, 2.0, 4.0]),
                  st.sampled_from([(), (1,)]), st.sampled_from([None, 0.75, 1.0])),
        st.tuples(st.just("cancel"), st.integers(0, 12)),
        st.tuples(st.just("advance"), st.sampled_from([0.0, 0.3, 0.5, 1.0, 2.0])),
        st.tuples(st.just("fail"), st.sampled_from([0.5, 1.0])),
        st.tuples(st.just("event"), st.sampled_from([0.5, 1.5])),
    ),
    max_size=40,
)  # fmt: skip


def run_scenario(ops, design="sorteddict"):
    """Run random operations; snapshot the live queue state right after every row."""
    clock = VirtualClock()
    opts = {"tick": 0.25, "slots": 4} if design == "wheel" else {}
    s = Scheduler(clock, queue=design, queue_options=opts)
    live = {}
    s.log.tap(lambda row: live.__setitem__(row["seq"], s.queue.state()))
    for op in ops:
        if op[0] == "at":
            _, offset, args, period = op
            with contextlib.suppress(PastTimeError):
                s.schedule(noop, at=clock.now() + offset, args=args, period=period)
        elif op[0] == "cancel":
            s.cancel(op[1])
        elif op[0] == "advance":
            clock.advance(op[1])
        elif op[0] == "fail":
            s.schedule(boom, delay=op[1])
        else:
            s.schedule(threading.Event(), delay=op[1])
    s.shutdown()
    return s, live


@pytest.mark.parametrize("design", ["sorteddict", "heap", "wheel"])
@given(ops=OPS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_replay_equals_the_live_state_after_every_row(design, ops):
    s, live = run_scenario(ops, design)
    frame = s.log.to_frame()
    assert list(frame["seq"]) == list(range(len(frame)))
    for seq, state in live.items():
        assert replay(frame, upto=seq) == state, seq
    report = audit(frame)
    assert report.ok, str(report)
    assert report.ended == report.tasks  # shutdown ended everything


def test_replay_snapshot_shows_each_design_picture():
    s, _ = run_scenario([("at", 2.0, (), None), ("at", 1.0, (), None), ("at", 3.0, (1,), None)])
    frame = s.log.to_frame()
    upto = int(frame.loc[frame["kind"] == "schedule", "seq"].max())
    snaps = {d: replay_snapshot(frame, upto, d) for d in ("sorteddict", "heap", "wheel")}
    assert len({snap.state for snap in snaps.values()}) == 1
    assert snaps["sorteddict"].picture["head"] == [1]
    assert "heap" in snaps["heap"].picture
    assert "buckets" in snaps["wheel"].picture


def test_audit_finds_broken_logs():
    s, _ = run_scenario([("at", 1.0, (), None), ("at", 2.0, (), None), ("advance", 3.0)])
    frame = s.log.to_frame()
    assert audit(frame).ok
    finishes = frame.index[frame["kind"] == "finish"]
    broken = frame.drop(index=finishes[:1])  # a run that never ended + a seq gap
    report = audit(broken)
    assert not report.ok
    assert any("gapless" in p for p in report.problems)
    assert any("vanished" in p or "re-armed" in p for p in report.problems) or report.in_flight
    early = frame.copy()
    early.loc[early["kind"] == "start", "lateness"] = -0.5
    assert any("before it was due" in p for p in audit(early).problems)
    with pytest.raises(AssertionError, match="audit failed"):
        audit(early).raise_if_problems()


def test_thread_hammering_keeps_the_log_gapless_and_sound():
    with Scheduler(executor="pool") as s:

        def hammer(seed):
            rng = random.Random(seed)
            mine = []
            for _ in range(500):
                if mine and rng.random() < 0.4:
                    s.cancel(mine.pop(rng.randrange(len(mine))))
                else:
                    mine.append(s.schedule(noop, delay=rng.uniform(0, 0.05), args=(seed,)))

        threads = [threading.Thread(target=hammer, args=(i,)) for i in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert s.wait_idle(timeout=30)
    frame = s.log.to_frame()
    assert list(frame["seq"]) == list(range(len(frame)))
    assert frame["t"].is_monotonic_increasing
    report = audit(frame)
    assert report.ok, str(report)
    assert report.ended == report.tasks and not report.pending


@pytest.mark.slow
def test_slow_and_raising_subscribers_do_not_delay_scheduling():
    with Scheduler() as s:
        seen = []

        def slow(row):
            time.sleep(0.2)
            seen.append(row["kind"])

        def raising(row):
            raise RuntimeError("subscriber bug")

        slow_sub = s.log.subscribe(slow)
        bad_sub = s.log.subscribe(raising, kinds=["schedule"])
        done = threading.Event()
        t0 = time.monotonic()
        for i in range(20):
            s.schedule(noop, delay=0.01, args=(i,))
        s.schedule(done, delay=0.02)
        assert done.wait(5)
        # 21 rows at 0.2 s each would take > 4 s if delivery blocked scheduling
        assert time.monotonic() - t0 < 3.0
        assert slow_sub.backlog > 0
        assert bad_sub.flush(5)
        assert bad_sub.errors == 21 and isinstance(bad_sub.last_error, RuntimeError)
        slow_sub.close()
        bad_sub.close()
    assert audit(s.log.to_frame()).ok


def test_subscribe_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="unknown"):
        EventLog().subscribe(print, kinds=["nope"])


def _rich_log():
    clock = VirtualClock(start=1_700_000_000.0)
    s = Scheduler(clock)
    s.schedule(noop, delay=1, args=("x, y", 'quote "q"'), label="None")
    s.schedule(boom, delay=1)
    s.schedule(threading.Event(), delay=2)
    tid = s.schedule(noop, delay=0.5, period=0.5, label="NA")
    s.schedule(noop, delay=1)  # same time as the first, other args: case 8
    s.schedule(noop, delay=1, args=("x, y", 'quote "q"'), label="None")  # case 7
    with pytest.raises(PastTimeError):
        s.schedule(noop, delay=-1)
    with pytest.raises(TypeError):
        s.schedule(noop, delay=1, args="bad")
    clock.advance(3)
    s.cancel(tid)
    s.cancel(999)
    s.schedule(noop, delay=5)
    s.shutdown()
    return s


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip_gives_an_equal_frame(tmp_path, suffix):
    s = _rich_log()
    frame = s.log.to_frame()
    path = tmp_path / f"log{suffix}"
    if suffix == ".csv":
        s.log.to_csv(path)
    else:
        s.log.to_parquet(path)
    back = read_log(path)
    pd.testing.assert_frame_equal(back, frame)
    assert audit(back).ok
    assert replay(back) == replay(frame)
    pd.testing.assert_frame_equal(case_counts(back), case_counts(frame))


def test_frame_dtypes_and_columns():
    frame = _rich_log().log.to_frame()
    assert tuple(frame.columns) == FRAME_COLUMNS
    assert str(frame["kind"].dtype) == "category"
    assert str(frame["origin"].dtype) == "category"
    assert str(frame["task_id"].dtype) == "Int64"
    assert str(frame["case"].dtype) == "Int8"
    assert str(frame["time"].dtype).startswith("datetime64")
    kinds = set(frame["kind"].astype(str))
    assert {"schedule", "reject", "dispatch", "start", "finish", "error", "event_set",
            "cancel", "shutdown"} <= kinds  # fmt: skip


def test_analysis_helpers():
    frame = _rich_log().log.to_frame()
    counts = case_counts(frame).set_index("case")["count"]
    assert counts[1] == 1 and counts[7] == 1 and counts.sum() >= 6
    summary = lateness_summary(frame)
    assert set(summary.index.get_level_values("measure")) == {"scheduling", "queueing", "total"}
    assert (summary["median"].dropna() >= 0).all()
    runs = periodic_runs(frame)
    assert runs.loc[0, "label"] == "NA" and runs.loc[0, "runs"] == 6  # 0.5, 1, ..., 3
    history = task_history(frame, 1)
    assert history["kind"].astype(str).tolist() == ["schedule", "dispatch", "start", "error"]


def test_bounded_log_counts_what_it_dropped():
    clock = VirtualClock()
    s = Scheduler(clock, max_log_rows=10)
    for i in range(30):
        s.schedule(noop, delay=1 + i)
    assert len(s.log) == 10 and s.log.dropped == 20
    frame = s.log.to_frame()
    assert frame["seq"].tolist() == list(range(20, 30))
    report = s.log.audit()
    assert report.ok and report.truncated == 20


def test_log_off_records_nothing_but_still_schedules():
    clock = VirtualClock()
    s = Scheduler(clock, log=False)
    ran = []
    s.schedule(ran.append, delay=1, args=(1,))
    clock.run_until_idle()
    assert ran == [1]
    assert len(s.log) == 0 and len(s.log.to_frame()) == 0


@pytest.mark.slow
def test_to_frame_uses_cached_chunks_and_stays_consistent():
    clock = VirtualClock()
    s = Scheduler(clock)
    for i in range(70_000):
        s.schedule(noop, at=1.0 + i)
    first = s.log.to_frame()
    s.schedule(noop, at=0.5)
    second = s.log.to_frame()
    assert len(second) == len(first) + 1
    pd.testing.assert_frame_equal(second.iloc[: len(first)], first)
    assert second["case"].iloc[-1] == 3


def test_the_docs_schema_table_is_the_generated_one():
    from tempsched_lab.log.schema import markdown_table

    page = (Path(__file__).resolve().parents[1] / "docs" / "event-log.md").read_text()
    assert markdown_table() in page, (
        "regenerate the table: tempsched_lab.log.schema.markdown_table()"
    )


def test_rows_hold_only_atoms_and_the_open_chunk_no_object_per_row() -> None:
    # A field holding any container-like object (an enum member, a task) keeps it alive and
    # is one more object every collection walks; the compactor could not pack it either.
    # Every kind of row a run of this mix writes must be atoms only, and the open chunk
    # holds them flat (one list per kind), with no tuple or other tracked object per row.
    def boom() -> None:
        raise ValueError("boom")

    clock = VirtualClock()
    s = Scheduler(clock, executor="inline")
    for i in range(50):
        s.schedule(noop, at=1.0 + i, args=(i,))
    s.schedule(noop, at=1.0, args=(0,))  # a duplicate
    s.schedule(noop, at=0.5)  # earlier than the head
    s.schedule(noop, at=5.0, period=2.0)
    s.schedule(threading.Event(), at=3.0)
    s.schedule(boom, at=4.0)
    s.cancel(s.schedule(noop, at=500.0))
    s.schedule_many([(noop, 600.0 + i) for i in range(10)])
    with pytest.raises(PastTimeError):
        s.schedule(noop, at=-1.0)
    with pytest.raises(TypeError):
        s.schedule(noop, at="soon")  # type: ignore[arg-type]
    clock.advance(20)
    s.shutdown()
    gc.collect()
    rows = s.log._tuples()[0]
    kinds = {row[0] for row in rows}
    assert {0, 1, 3, 4, 5, 6, 7, 9, 10} <= kinds, kinds  # every kind a virtual clock writes
    tracked = [row for row in rows if any(gc.is_tracked(v) for v in row)]
    assert not tracked, [[type(v).__name__ for v in row if gc.is_tracked(v)] for row in tracked]
    tail = s.log._tail
    assert 0 < len(tail) < s.log._chunk_size
    stored = [v for values in tail.fields for v in values]
    assert len(stored) == sum(len(row) - 1 for row in tail.tuples())
    assert not [v for v in stored if gc.is_tracked(v)]


@pytest.mark.parametrize("tap_from, tap_until", [(None, None), (0, 10_000), (700, 2_300)])
def test_the_writer_fills_seals_and_trims_chunks_exactly(tap_from, tap_until):
    """The recorder writes through the log's LogWriter into the open chunk's own lists,
    and settles when its room runs out: at the chunk's end while nobody watches, after
    every row while a tap does (which hands the row on). Either way, and across a tap that
    comes and goes mid-run, every chunk is sealed at exactly its size, a bounded log trims
    the same rows, and the tap saw each row written while it was attached."""

    def run(tapped: bool) -> tuple[Scheduler, list[int], dict[int, int]]:
        s = Scheduler(VirtualClock(), executor="inline", max_log_rows=1_500)
        seen: list[int] = []
        sealed: dict[int, int] = {}  # first seq -> rows, of every chunk ever sealed
        remove = None
        for i in range(3_000):
            sealed.update((c.first, len(c)) for c in s.log._chunks)
            if tapped and i == tap_from:
                remove = s.log.tap(lambda row: seen.append(row["seq"]))
            if tapped and i == tap_until and remove is not None:
                remove()
            if i % 3 == 0:
                s.schedule_many([(_job, 10.0 + i), (_job, 10.0 + i + 0.5)])
            else:
                s.schedule(_job, at=10.0 + i)
        for _ in range(50):  # dispatch, start and finish rows, through the same writer
            s.clock.advance(100)
            sealed.update((c.first, len(c)) for c in s.log._chunks)
        return s, seen, sealed

    plain, _, plain_sealed = run(False)
    tapped, seen, tapped_sealed = run(tap_from is not None)
    chunk = plain.log._chunk_size
    for s, sealed in ((plain, plain_sealed), (tapped, tapped_sealed)):
        assert len(sealed) > 5 and all(first % chunk == 0 for first in sealed)
        assert set(sealed.values()) == {chunk}  # never one row more or less
        tail = s.log._tail
        assert len(tail) < chunk
        assert s.log.writer.kinds is tail.kinds and s.log.writer.fields is tail.fields
        if s.log.watched:  # settle() after every row, which hands it to the tap
            assert s.log.writer.room == 1
        else:  # the room left in the open chunk
            assert s.log.writer.room == chunk - len(tail)
    assert tapped.log.next_seq == plain.log.next_seq > 3 * chunk
    assert len(tapped.log) == len(plain.log) <= 1_500 + chunk
    a, b = plain.log.to_frame(), tapped.log.to_frame()
    assert a["seq"].tolist() == b["seq"].tolist()
    assert a["kind"].tolist() == b["kind"].tolist()
    if tap_from is not None:
        assert seen == list(range(seen[0], seen[0] + len(seen)))  # every row while attached
        assert len(seen) > 1_000


def _job() -> None:
    return None


def test_readers_of_the_open_chunk_see_whole_rows_while_it_grows_without_the_lock() -> None:
    """A reader takes the open chunk by reference (no copy under the scheduler's lock) and
    reads it later: while a thread keeps recording, every read is a gapless run of whole
    rows (each schedule row's task ID is its seq here), across chunk seals too."""
    s = Scheduler(VirtualClock(), max_log_rows=400_000)
    chunk = s.log._chunk_size
    enough = threading.Event()  # the reader read often enough while rows kept coming

    def record() -> None:
        i = 0
        while i < 3 * chunk or (not enough.is_set() and i < 200_000):
            s.schedule(noop, at=1e6 + i, args=(i,))
            i += 1

    writer = threading.Thread(target=record)
    writer.start()
    during = 0
    while writer.is_alive():
        seen = s.log.next_seq
        held = s.log.held_rows(max(0, seen - 700))
        rows = held.rows
        assert [r["seq"] for r in rows] == list(range(held.next_seq - len(rows), held.next_seq))
        for r in rows:
            assert r["kind"] == "schedule" and r["task_id"] == r["seq"], r
            assert r["args"] == f"({r['seq']},)"
        frame = s.log.tail(300)
        assert (frame["task_id"] == frame["seq"]).all()
        if s.log.next_seq > held.next_seq:  # rows came while this read was under way
            during += 1
            if during >= 20:
                enough.set()
    writer.join(30)
    assert during >= 20, during  # (the writer stops at 200,000 rows at the latest)
    total = s.log.next_seq
    assert total >= 3 * chunk and len(s.log._chunks) == total // chunk
    assert s.log.rows(total - 1)[0]["args"] == f"({total - 1},)"


def test_held_stores_give_every_row_asked_for_where_it_is_held() -> None:
    from tempsched_lab.log.columns import Compact
    from tempsched_lab.log.compactor import wait_compacted
    from tempsched_lab.log.rows import FlatRows

    s = Scheduler(VirtualClock(start=1e9))
    chunk = s.log.writer.room
    for i in range(2 * chunk + 100):
        s.schedule(print, at=1.5e9 + i, args=(i,))
    kinds = bytes(s.log.held_columns().columns["kind"].tolist())
    for settled in (False, True):  # while the compactor may be at work, then after it
        if settled:
            assert wait_compacted(30)
        for start, stop in [(0, None), (5, 7), (chunk - 3, chunk + 3), (2 * chunk + 99, None)]:
            held = s.log.held_stores(start, stop)
            end = held.next_seq if stop is None else stop
            assert (held.first_seq, held.next_seq) == (0, 2 * chunk + 100)
            assert held.rows == end - start
            got = b"".join(bytes(store.kinds[a:b]) for store, a, b in held.parts)
            assert got == kinds[start:end]
        stores = [type(store) for store, _, _ in s.log.held_stores().parts]
        assert stores[-1] is FlatRows  # the open chunk
        if settled:
            assert stores == [Compact, Compact, FlatRows]
    assert s.log.held_stores(10**9).rows == 0  # beyond the end: nothing, not an error
