"""Bounded memory without losing history: the spill directory, released caches, a soak.

Issue 13's last part: a long live session must not grow without bound, and
bounding it must not throw history away.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from tempsched_lab import Replayer, Scheduler, VirtualClock, audit, read_log
from tempsched_lab.log.compactor import wait_compacted

pytest.importorskip("pyarrow")


def noop(*args):
    return None


def _scenario(s: Scheduler, clock: VirtualClock, seconds: float) -> None:
    """A 1 kHz periodic task plus churn: tasks scheduled and cancelled as time runs."""
    if not any(status.label == "poller" for status in map(s.status, s.queue.index)):
        s.schedule(noop, delay=0.001, period=0.001, label="poller")
    for _ in range(int(seconds * 10)):
        t = clock.now()
        ids = [s.schedule(noop, at=t + 0.05 + 0.001 * i, args=(i,)) for i in range(20)]
        for tid in ids[::2]:
            s.cancel(tid)
        clock.run_until(t + 0.1)


def _comparable(frame):
    return frame.drop(columns=["wall", "wall_time", "thread"]).reset_index(drop=True)


def test_a_spilled_bounded_log_reads_back_every_row(tmp_path: Path):
    spill = tmp_path / "spill"
    runs = {}
    for name, options in (("full", {}), ("spilled", {"max_log_rows": 4000, "log_spill": spill})):
        clock = VirtualClock()
        s = Scheduler(clock, **options)
        _scenario(s, clock, 3.0)
        s.shutdown()
        runs[name] = s
    full, spilled = runs["full"].log, runs["spilled"].log
    assert len(spilled) <= 4000 < len(full)  # memory held the tail only
    history = spilled.history()
    assert _comparable(history).equals(_comparable(full.to_frame()))
    on_disk = read_log(spill)  # after shutdown every row is on disk
    assert _comparable(on_disk).equals(_comparable(full.to_frame()))
    assert audit(on_disk).ok
    replayer = Replayer(on_disk)  # replay across segments
    replayer.advance_to(None)
    assert replayer.state() == runs["spilled"].queue.state()


def test_a_crash_loses_at_most_the_unwritten_tail(tmp_path: Path):
    spill = tmp_path / "spill"
    clock = VirtualClock()
    s = Scheduler(clock, max_log_rows=2000, log_spill=spill)
    _scenario(s, clock, 8.0)  # more rows than one segment
    wait_compacted(30)  # what a crash right now would find: no shutdown, no flush
    on_disk = read_log(spill)
    total = s.log.next_seq
    assert len(on_disk) > 0 and (on_disk["seq"].diff().dropna() == 1).all()
    assert total - len(on_disk) < 16_384  # at most the tail, fewer than spill_rows rows
    assert s.log.flush()  # flush() writes the tail too
    assert len(read_log(spill)) == s.log.next_seq


def test_spilling_bounds_memory_without_losing_rows(tmp_path: Path):
    gc.collect()
    tracemalloc.start()
    clock = VirtualClock()
    s = Scheduler(clock, max_log_rows=5000, log_spill=tmp_path / "spill")
    _scenario(s, clock, 5.0)  # warm up: a segment written (pyarrow imported), compaction
    wait_compacted(30)
    gc.collect()
    before, rows_before = tracemalloc.get_traced_memory()[0], s.log.next_seq
    _scenario(s, clock, 10.0)
    wait_compacted(30)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    added = s.log.next_seq - rows_before
    s.shutdown()
    assert added > 40_000
    # kept in memory, these rows would take >= 200 B each (compacted): > 8 MB
    assert grown < 3 * 2**20, f"{grown / 2**20:.1f} MiB for {added:,} rows"
    assert len(read_log(tmp_path / "spill")) == s.log.next_seq


def test_a_frame_leaves_no_cache_behind():
    clock = VirtualClock()
    s = Scheduler(clock)
    _scenario(s, clock, 2.0)
    wait_compacted(30)
    s.log.to_frame()  # warm up pandas
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    frame = s.log.to_frame()
    size = frame.memory_usage(deep=False).sum()
    del frame
    gc.collect()
    left = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert size > 1_000_000
    assert left < size / 20  # nothing of the frame's size stays cached


def test_the_wheel_releases_ticks_of_cancelled_tasks():
    s = Scheduler(VirtualClock(), queue="wheel", queue_options={"tick": 0.001, "slots": 256})
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for block in range(20):
        ids = [s.schedule(noop, at=1.0 + block * 10 + 0.001 * i) for i in range(5000)]
        for tid in ids:
            s.cancel(tid)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    s.queue.check_invariants()
    # the log holds ~200,000 rows; the queue itself is empty: what remains is the log's
    per_row = held / s.log.next_seq
    assert per_row < 400, per_row


@pytest.mark.slow
def test_soak_20_seconds_of_1khz_and_churn_with_spill_stays_bounded(tmp_path: Path):
    """20 s on the real clock: a 1 kHz periodic task, bursts scheduled and cancelled."""

    def rss() -> int:
        with open(f"/proc/{os.getpid()}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")

    stop = threading.Event()
    with Scheduler(max_log_rows=20_000, log_spill=tmp_path / "spill") as s:
        s.schedule(noop, delay=0.001, period=0.001, label="poller")

        def churn():
            while not stop.is_set():
                ids = [s.schedule(noop, delay=0.05 + 0.001 * i, args=(i,)) for i in range(20)]
                for tid in ids[::2]:
                    s.cancel(tid)
                time.sleep(0.01)

        worker = threading.Thread(target=churn)
        worker.start()
        time.sleep(5.0)  # warm up: chunks spilled, segments written
        start = rss()
        time.sleep(15.0)
        grown = rss() - start
        stop.set()
        worker.join()
        assert s.log.spill_error is None
    on_disk = read_log(tmp_path / "spill")
    assert len(on_disk) == s.log.next_seq  # nothing lost
    assert audit(on_disk).ok
    assert grown < 40 * 2**20, f"RSS grew {grown / 2**20:.1f} MiB in 15 s"
