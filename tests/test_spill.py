"""A spilled, bounded event log when the disk fails or cannot keep up (issue 24, R1-R5).

A full disk is simulated deterministically: the function that writes a segment's
Parquet file raises ``OSError(ENOSPC)`` from a chosen segment on. Nothing
acknowledged may be lost: rows that cannot be written stay in memory, ``flush()``
says they are not on disk, and a directory closed without them says so when read.
"""

from __future__ import annotations

import errno
import json
import logging
import threading
import time
import warnings
from pathlib import Path

import pytest

from tempsched_lab import EventLog, Scheduler, VirtualClock, audit, read_log
from tempsched_lab.core.queues import make_queue
from tempsched_lab.core.recorder import Recorder
from tempsched_lab.log.compactor import wait_compacted
from tempsched_lab.log.files import (
    IncompleteLogError,
    IncompleteLogWarning,
    LogFileError,
    SegmentWriter,
    write_log,
)
from tempsched_lab.log.files import spill as spill_module

pytest.importorskip("pyarrow")

#: rows per segment of a Scheduler's spilled log (EventLog's default spill_rows)
SEGMENT = 16_384


def noop(*args):
    return None


@pytest.fixture(autouse=True)
def settled():
    """Leave no spill work to the shared compactor thread: it would run into the next test."""
    yield
    assert wait_compacted(60)


class Disk:
    """Segment writes that fail with ENOSPC from segment ``full_at`` on (``times`` times)."""

    def __init__(self, monkeypatch, full_at: int, times: int | None = None) -> None:
        self.full_at = full_at
        self.times = times
        self.failed = 0
        self.gate: threading.Event | None = None
        self.at_gate = threading.Event()
        real = spill_module.write_parquet_log

        def write(frame, tmp, **extra):
            if self.gate is not None:
                self.at_gate.set()
                assert self.gate.wait(30), "the test never opened the gate"
            if extra.get("segment", 0) >= self.full_at and (
                self.times is None or self.failed < self.times
            ):
                self.failed += 1
                raise OSError(errno.ENOSPC, "No space left on device")
            real(frame, tmp, **extra)

        monkeypatch.setattr(spill_module, "write_parquet_log", write)


def flood(s: Scheduler, pairs: int, start: float = 1000.0) -> None:
    """Schedule and cancel ``pairs`` tasks: two rows each."""
    for i in range(pairs):
        s.schedule(noop, at=start + i * 1e-3)
        s.cancel(i)


def comparable(frame):
    return frame.drop(columns=["wall", "wall_time", "thread"]).reset_index(drop=True)


def whole_log(pairs: int):
    s = Scheduler(VirtualClock())
    flood(s, pairs)
    return s.log.to_frame()


# -- R1, R3: a failed segment keeps its rows; flush says they are not on disk --------------


def test_r1_a_failed_segment_keeps_its_rows_in_memory_and_history_has_no_hole(
    tmp_path, monkeypatch
):
    disk = Disk(monkeypatch, full_at=3)
    s = Scheduler(VirtualClock(), max_log_rows=20_000, log_spill=tmp_path / "spill")
    flood(s, 26_000)  # 52,000 rows: segments 1 and 2 written, 3 fails
    recorded = s.log.next_seq
    assert not s.log.flush()  # R3: rows are not on disk
    assert disk.failed >= 1
    assert isinstance(s.log.spill_error, OSError) and s.log.spill_error.errno == errno.ENOSPC
    assert s.log.unwritten == recorded - 2 * SEGMENT
    history = s.log.history()
    assert history["seq"].tolist() == list(range(recorded))  # no hole
    assert comparable(history).equals(comparable(whole_log(26_000)))
    on_disk = read_log(tmp_path / "spill")  # still open: what was written so far
    assert len(on_disk) == 2 * SEGMENT
    with pytest.warns(IncompleteLogWarning):
        s.shutdown()


def test_r1_the_spill_resumes_once_the_disk_has_room_again(tmp_path, monkeypatch):
    disk = Disk(monkeypatch, full_at=2, times=3)  # three failures, then room again
    s = Scheduler(VirtualClock(), max_log_rows=20_000, log_spill=tmp_path / "spill")
    flood(s, 20_000)
    while disk.failed < 3:  # the compactor thread tries too: count the failures, not the calls
        s.log.flush()
    assert s.log.flush()  # the 4th try of segment 2 succeeds: the spill resumed
    assert s.log.spill_error is None and s.log.unwritten == 0
    flood(s, 20_000, start=2000.0)
    s.shutdown()
    back = read_log(tmp_path / "spill")
    assert back["seq"].tolist() == list(range(s.log.next_seq))
    assert audit(back).ok


# -- R2: a directory that lost rows says so when read ----------------------------------------


def test_r2_shutdown_after_a_failed_segment_closes_the_directory_incomplete(tmp_path, monkeypatch):
    Disk(monkeypatch, full_at=3)
    s = Scheduler(VirtualClock(), max_log_rows=20_000, log_spill=tmp_path / "spill")
    flood(s, 26_000)
    with pytest.warns(IncompleteLogWarning, match=r"rows seq 32768\.\.52000 \(19,233 rows\)"):
        s.shutdown()
    recorded = s.log.next_seq
    manifest = json.loads((tmp_path / "spill" / "log.json").read_text())
    assert manifest["closed"] and not manifest["complete"]
    assert manifest["missing"]["first_seq"] == 2 * SEGMENT
    assert manifest["missing"]["stop_seq"] == recorded
    assert "No space left on device" in manifest["missing"]["reason"]
    with pytest.raises(
        IncompleteLogError, match=r"rows seq 32768\.\.52000 \(19,233 rows\) were never written"
    ):
        read_log(tmp_path / "spill")
    with pytest.warns(IncompleteLogWarning, match="No space left on device"):
        partial = read_log(tmp_path / "spill", on_incomplete="warn")
    assert len(partial) == 2 * SEGMENT
    report = audit(partial)
    assert not report.ok and "incomplete" in str(report)
    # exported again, the mark stays with the rows
    again = read_log(write_log(partial, tmp_path / "partial.parquet"))
    assert not audit(again).ok
    # the log itself still has every row
    assert s.log.history()["seq"].tolist() == list(range(recorded))


def test_r2_an_incomplete_directory_is_refused_by_every_reader(tmp_path):
    writer = SegmentWriter(tmp_path / "spill", fsync=False)
    writer.close(recorded=5, reason="OSError: disk full")
    with pytest.raises(IncompleteLogError, match=r"rows seq 0\.\.4 \(5 rows\).*disk full"):
        read_log(tmp_path / "spill")
    with pytest.raises(ValueError, match="on_incomplete='ignore'"):
        read_log(tmp_path / "spill", on_incomplete="ignore")
    complete = SegmentWriter(tmp_path / "whole", fsync=False)
    complete.close(recorded=0)
    assert len(read_log(tmp_path / "whole")) == 0


# -- R4: history() of a running log never misses rows ----------------------------------------


def test_r4_rows_spilled_and_dropped_while_history_reads_the_disk_are_not_lost(
    tmp_path, monkeypatch
):
    """The race of R4, made to happen: chunks sealed, written and dropped from memory between
    history()'s reading of the directory and of the memory."""
    lock = threading.Lock()
    log = EventLog(1_000, lock=lock, spill=tmp_path / "spill", spill_rows=500)
    rec = Recorder(log, make_queue("heap"))

    def record(n):
        for _ in range(n):
            with lock:
                rec.woke(float(log.next_seq), False, None)

    record(5_000)
    assert log.flush()
    real = spill_module.read_parquet_log
    grown = []

    def read_segment(path, source):
        if not grown:  # the first segment read: the log moves on meanwhile
            grown.append(True)
            record(3_000)  # chunks sealed,
            assert wait_compacted(30)  # written as segments,
            record(500)  # and dropped from memory at the next seal
        return real(path, source)

    monkeypatch.setattr(spill_module, "read_parquet_log", read_segment)
    before = log.next_seq
    seq = log.history()["seq"].tolist()
    assert grown and len(seq) >= before
    assert seq == list(range(len(seq))), "a hole in history()"


def test_r4_history_while_the_log_grows_and_spills_is_always_whole(tmp_path):
    lock = threading.Lock()
    log = EventLog(3_000, lock=lock, spill=tmp_path / "spill", spill_rows=2_000)
    rec = Recorder(log, make_queue("heap"))
    total = 30_000

    def grow():
        for t in range(total):
            with lock:
                rec.woke(float(t), False, None)

    thread = threading.Thread(target=grow)
    thread.start()
    calls = 0
    try:
        while thread.is_alive() or calls < 3:
            before = log.next_seq
            seq = log.history()["seq"].to_numpy()
            assert len(seq) >= before
            assert (seq == range(len(seq))).all(), f"a hole in history() at call {calls}"
            calls += 1
    finally:
        thread.join()
    assert log.flush()
    assert read_log(tmp_path / "spill")["seq"].tolist() == list(range(total))


# -- R5: backpressure and an honest close ----------------------------------------------------


def test_r5_rows_waiting_for_the_disk_stay_bounded(tmp_path, monkeypatch):
    """A slow disk (each segment write waits) cannot make the backlog grow without bound."""
    real = spill_module.write_parquet_log
    slow = threading.Event()

    def write(frame, tmp, **extra):
        slow.wait(0.02)  # a slow disk: 20 ms per segment of 500 rows
        real(frame, tmp, **extra)

    monkeypatch.setattr(spill_module, "write_parquet_log", write)
    lock = threading.Lock()
    log = EventLog(1_000, lock=lock, spill=tmp_path / "spill", spill_rows=500, spill_backlog=1_500)
    rec = Recorder(log, make_queue("heap"))
    worst = 0
    for i in range(15_000):
        with lock:
            rec.woke(float(i), False, None)
        worst = max(worst, log.unwritten)
    assert worst <= 1_500 + 500, worst  # the backlog plus the tail being filled
    assert log.close_spill()
    assert read_log(tmp_path / "spill")["seq"].tolist() == list(range(15_000))


def test_r5_a_shutdown_that_runs_out_of_time_never_closes_the_directory_as_complete(
    tmp_path, monkeypatch
):
    disk = Disk(monkeypatch, full_at=10**9)  # never full, but every write waits for the gate
    s = Scheduler(VirtualClock(), max_log_rows=20_000, log_spill=tmp_path / "spill")
    disk.gate = threading.Event()
    flood(s, 10_000)  # 20,000 rows: one chunk sealed, its write held at the gate
    assert disk.at_gate.wait(30)  # the compactor thread is writing it
    with pytest.warns(IncompleteLogWarning, match="left open"):
        assert not s.log.close_spill(timeout=0.2)
    manifest = json.loads((tmp_path / "spill" / "log.json").read_text())
    assert not manifest["closed"]  # open: it claims nothing
    disk.gate.set()
    assert wait_compacted(30)
    s.shutdown()  # now every row can be written
    manifest = json.loads((tmp_path / "spill" / "log.json").read_text())
    assert manifest["closed"] and manifest["complete"]
    assert len(read_log(tmp_path / "spill")) == s.log.next_seq


def test_a_spill_failure_is_logged_once_and_the_recovery_too(tmp_path, monkeypatch, caplog):
    disk = Disk(monkeypatch, full_at=1, times=4)
    s = Scheduler(VirtualClock(), log_spill=tmp_path / "spill")
    flood(s, SEGMENT)  # two chunks
    with caplog.at_level(logging.WARNING, logger="tempsched_lab"):
        while disk.failed < 4:
            s.log.flush()
        assert s.log.flush()
        # the write that succeeded may be the compactor thread's: it logs after its lock
        resumed = threading.Event()
        deadline = time.monotonic() + 30
        while not resumed.is_set() and time.monotonic() < deadline:
            if any("resumed" in r.getMessage() for r in list(caplog.records)):
                resumed.set()
            time.sleep(0.01)
        assert resumed.is_set(), "the recovery was not logged"
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "No space left on device" in errors[0].getMessage()
    s.shutdown()


def test_spill_backlog_is_checked(tmp_path):
    with pytest.raises(ValueError, match=r"spill_backlog=10: expected rows .*\(spill_rows=500\)"):
        EventLog(spill=tmp_path / "a", spill_rows=500, spill_backlog=10)


# -- stale temporary files --------------------------------------------------------------------


def _stale(path: Path) -> Path:
    import os

    path.write_bytes(b"PAR1 half a file")
    os.utime(path, (0, 0))  # nobody wrote to it since 1970: its writer is gone
    return path


def test_temporaries_of_a_killed_write_log_are_removed_by_the_next_write(tmp_path):
    s = Scheduler(VirtualClock())
    s.schedule(noop, delay=1)
    stale = _stale(tmp_path / ".run.csv.0badc0de.tmp")
    fresh = tmp_path / ".run.csv.12345678.tmp"  # a write under way in another process
    fresh.write_bytes(b"seq,")
    other = _stale(tmp_path / ".notes.txt.0badc0de.tmp")  # not the target: not ours to judge
    alien = _stale(tmp_path / ".run.csv.tmp")  # not our pattern
    s.log.to_csv(tmp_path / "run.csv")
    assert not stale.exists()
    assert fresh.exists() and other.exists() and alien.exists()


def test_temporaries_of_a_killed_spill_are_removed_when_the_directory_is_read(tmp_path):
    writer = SegmentWriter(tmp_path / "spill", fsync=False)
    stale = _stale(tmp_path / "spill" / ".segment-000001.parquet.0badc0de.tmp")
    fresh = tmp_path / "spill" / ".segment-000001.parquet.12345678.tmp"
    fresh.write_bytes(b"PAR1")
    read_log(tmp_path / "spill")  # open: only the stale one goes
    assert not stale.exists() and fresh.exists()
    writer.close()
    read_log(tmp_path / "spill")  # closed: no write can be under way
    assert not fresh.exists()
    assert sorted(p.name for p in (tmp_path / "spill").iterdir()) == ["log.json"]


def test_reading_never_fails_because_a_temporary_cannot_be_removed(tmp_path, monkeypatch):
    import os

    writer = SegmentWriter(tmp_path / "spill", fsync=False)
    writer.close()
    _stale(tmp_path / "spill" / ".log.json.0badc0de.tmp")

    def refuse(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "read-only")

    monkeypatch.setattr(os, "unlink", refuse)
    assert len(read_log(tmp_path / "spill")) == 0


def test_the_log_is_never_lost_when_history_reads_a_tampered_directory(tmp_path):
    s = Scheduler(VirtualClock(), max_log_rows=2_000, log_spill=tmp_path / "spill")
    flood(s, 3 * SEGMENT)
    assert s.log.flush()
    (tmp_path / "spill" / "segment-000002.parquet").unlink()
    with pytest.raises(LogFileError, match=r"segment 2 .* is missing"):
        s.log.history()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.shutdown()
