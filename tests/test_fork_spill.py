"""A child of ``os.fork()`` never waits on a thread of its parent's log (issue 41, finding 10).

The child inherits a copy of every log and every lock as it was at the fork, but none of the
parent's threads: a lock that the log's thread held while it wrote a segment stays held in
the child for good. ``flush(timeout=2)`` in such a child hung (3 of 6 forks). What a child
gets instead (docs/event-log.md, "A forked process"): its copy of a spilled log never writes
the parent's directory, so ``flush`` and ``close_spill`` return False at once and
:attr:`~tempsched_lab.EventLog.spill_error` says why (:class:`ForkedLogError`, naming both
processes); reading the copy works; the parent's log goes on intact.

Each fork is real and bounded by a watchdog: a child that does not report within
``CHILD_TIMEOUT`` seconds is killed and counted as hung.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from tempsched_lab import EventLog, Scheduler, VirtualClock, read_log
from tempsched_lab.log.files.spill import SegmentWriter
from tempsched_lab.log.schema import KIND_CODE

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # 3.12+: fork with threads
]

#: seconds a child may take to report before the watchdog kills it (its flush has 2 s)
CHILD_TIMEOUT = 15.0


def _noop() -> None:
    return None


def _fork(body: Any) -> tuple[dict[str, Any] | None, float]:
    """Run ``body()`` in a forked child: (its report, or ``None`` if it hung; seconds taken)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: report, then leave without running any of pytest's code
        os.close(read_end)
        try:
            report = body()
        except BaseException as exc:  # (reported, so the parent's assertion shows it)
            report = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    os.close(write_end)
    started = time.monotonic()
    deadline = started + CHILD_TIMEOUT
    while True:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:  # the watchdog: a hung child is killed and counted
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
            return None, time.monotonic() - started
        time.sleep(0.005)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    return json.loads(data or b"{}"), time.monotonic() - started


def test_flush_in_children_forked_while_the_logs_thread_writes_segments_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fork again and again while the log's background thread writes segments (made slow,
    so that most forks land inside a write): every child's ``flush(timeout=2)`` returns
    False with a named error, no child hangs, and the parent's directory has every row."""
    pytest.importorskip("pyarrow")
    writing = threading.Event()
    real_write = SegmentWriter.write

    def slow_write(self: SegmentWriter, chunk: Any) -> Any:
        writing.set()  # (a child copies it: it says the fork came during a write)
        try:
            time.sleep(0.02)  # a slow disk: the spill's and the writer's locks are held
            return real_write(self, chunk)
        finally:
            writing.clear()

    monkeypatch.setattr(SegmentWriter, "write", slow_write)
    spill = tmp_path / "spill"
    s = Scheduler(VirtualClock(), log_spill=spill, log_spill_interval=0.01)
    s.log.to_frame()  # the lazy imports happen before any fork (see docs/design.md, fork)
    assert s.log.flush()
    stop = threading.Event()

    def churn() -> None:  # rows all the time: the log's thread writes a segment each tick
        i = 0
        while not stop.is_set():
            s.schedule(_noop, delay=1.0 + i)
            i += 1

    def child() -> dict[str, Any]:
        in_write = writing.is_set()
        started = time.monotonic()
        flushed = s.log.flush(timeout=2)
        took = time.monotonic() - started
        error = s.log.spill_error
        closed = s.log.close_spill(timeout=2)
        return {
            "in_write": in_write,
            "flushed": flushed,
            "took": took,
            "error": type(error).__name__,
            "says": str(error),
            "closed": closed,
            "rows": len(s.log.to_frame()),  # reading the copy works
        }

    busy = threading.Thread(target=churn)
    busy.start()
    reports: list[dict[str, Any]] = []
    hung = 0
    try:
        # until 6 forks came while a segment was being written (at most 40 forks)
        for _ in range(40):
            assert writing.wait(CHILD_TIMEOUT), "the log's thread wrote no segment"
            report, _ = _fork(child)
            if report is None:
                hung += 1
                continue
            reports.append(report)
            if sum(r["in_write"] for r in reports) >= 6:
                break
    finally:
        stop.set()
        busy.join()
    during = sum(r["in_write"] for r in reports)
    assert hung == 0, f"{hung} of {hung + len(reports)} forked children hung in flush(timeout=2)"
    assert during >= 6, f"only {during} of {len(reports)} forks came during a segment write"
    for report in reports:
        assert report["flushed"] is False and report["closed"] is False, report
        assert report["error"] == "ForkedLogError", report
        assert f"process {os.getpid()}" in report["says"] and str(spill) in report["says"]
        assert report["rows"] > 0
    assert s.log.spill_error is None  # the parent never noticed
    manifest = json.loads((spill / "log.json").read_text())
    assert not manifest["closed"]  # no child closed (or wrote) the parent's directory
    s.shutdown()
    assert read_log(spill)["seq"].tolist() == list(range(s.log.next_seq))


def _row(i: int) -> tuple[Any, ...]:
    """A ``shutdown`` row (task_id, result, due, label, ready_size, queue_size, detail)."""
    return (KIND_CODE["shutdown"], float(i), time.time(), "t", -1, "x", 0.0, None, 0, 0, "d")


def _fork_while_held(lock: Any, body: Any) -> dict[str, Any] | None:
    """Fork while a thread of this process holds ``lock``; the child's report (``None``: hung)."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait(CHILD_TIMEOUT)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(CHILD_TIMEOUT)
        return _fork(body)[0]
    finally:
        release.set()
        holder.join()


def test_a_standalone_log_whose_lock_a_thread_held_at_the_fork_is_usable_in_the_child(
    tmp_path: Path,
) -> None:
    """A log made without a scheduler owns its lock; a thread of the parent holding it at the
    fork (a reader, a flush writing a segment) must not leave the child's copy locked."""
    log = EventLog(spill=tmp_path / "spill", spill_rows=4)
    for i in range(6):
        log.append(_row(i))

    def child() -> dict[str, Any]:
        return {
            "flushed": log.flush(timeout=2),
            "next_seq": log.next_seq,
            "error": type(log.spill_error).__name__,
        }

    # (held as a flush holds it while it seals the tail)
    report = _fork_while_held(log._lock, child)
    assert report == {"flushed": False, "next_seq": 6, "error": "ForkedLogError"}
    assert log.flush(timeout=CHILD_TIMEOUT) and log.close_spill()
    assert len(read_log(tmp_path / "spill")) == 6


def test_a_child_forked_while_a_reservation_failure_was_reported_does_not_hang(
    tmp_path: Path,
) -> None:
    """The lock held while a failing reservation is reported (a logging call) is renewed in
    the child too: its flush, which reports, returns."""
    log = EventLog(spill=tmp_path / "spill", spill_rows=4)
    log.append(_row(0))
    assert log._spill is not None
    report = _fork_while_held(log._spill._report_lock, lambda: {"flushed": log.flush(timeout=2)})
    assert report == {"flushed": False}
    assert log.close_spill()


def test_a_childs_copy_drops_the_parents_subscribers() -> None:
    """A subscriber's thread stayed in the parent: the child's copy does not hand rows to it
    (its queue's lock may be held for good), and a row appended in the child returns."""
    log = EventLog()
    seen: list[int] = []
    sub = log.subscribe(lambda row: seen.append(row["seq"]))

    def child() -> dict[str, Any]:
        log.append(_row(0))
        return {"rows": len(log.rows()), "watched": log.watched}

    # (held as the subscriber's thread holds it while it takes its queue)
    assert _fork_while_held(sub._cond, child) == {"rows": 1, "watched": False}
    log.append(_row(1))
    assert sub.flush(timeout=CHILD_TIMEOUT)
    assert seen == [0]  # the parent's own row; nothing of the child's
    sub.close()
