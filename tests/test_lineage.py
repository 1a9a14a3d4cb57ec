"""A log that continues another (EventLog(first_seq=)), its seq reservation, and a Lineage of runs.

A killed process is stood for by a scheduler whose spill directory is never closed (its
rows after the last flush exist only in its memory, as a SIGKILL leaves them);
tests/test_remote_restart.py does it with a real process and SIGKILL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempsched_lab import EventLog, Scheduler, VirtualClock, read_log
from tempsched_lab.log.files import Lineage
from tempsched_lab.log.files.numbered import STEP
from tempsched_lab.reading.replay import Replayer
from tempsched_lab.reading.sentences import describe_row
from tempsched_lab.restarts import continuing_scheduler
from tempsched_lab.serve.reader import LogReader


def _noop() -> None:
    return None


def test_a_log_can_start_at_a_given_seq(tmp_path: Path) -> None:
    log_dir = tmp_path / "spill"
    s = Scheduler(VirtualClock(), log_spill=log_dir, log_first_seq=1000)
    for i in range(5):
        s.schedule(_noop, delay=1 + i)
    log = s.log
    assert (log.first_seq, log.next_seq, len(log), log.dropped) == (1000, 1005, 5, 0)
    assert [r["seq"] for r in log.rows()] == list(range(1000, 1005))
    assert log.history()["seq"].tolist() == list(range(1000, 1005))
    s.shutdown()
    assert read_log(log_dir)["seq"].tolist()[0] == 1000
    with pytest.raises(ValueError, match="first_seq=-1"):
        EventLog(first_seq=-1)
    with pytest.raises(ValueError, match="first_seq=True"):
        EventLog(first_seq=True)


def test_the_reservation_bounds_every_seq_handed_out_and_moves_when_a_chunk_opens(
    tmp_path: Path,
) -> None:
    s = Scheduler(VirtualClock(), log_spill=tmp_path, log_first_seq=10)
    s.log._spill.writer.fsync = False  # (speed only)
    reserved = tmp_path / "reserved.json"
    chunk = 16_384
    assert json.loads(reserved.read_text()) == {"first_seq": 10, "bound": 10 + chunk}
    for i in range(chunk + 5):  # one chunk sealed: the next one opens
        s.schedule(_noop, at=1e6 + i)
        assert s.log.next_seq <= json.loads(reserved.read_text())["bound"]
    assert json.loads(reserved.read_text())["bound"] == 10 + 2 * chunk
    s.shutdown()


def _killed_run(root: Path, rows: int) -> Scheduler:
    """A first run that flushed, then recorded more, then 'died' (its directory left open)."""
    first = continuing_scheduler(root, VirtualClock())
    for i in range(rows):
        first.schedule(_noop, delay=1 + i)
    assert first.log.flush()
    for i in range(7):  # in memory only: lost with the process
        first.schedule(_noop, delay=100 + i)
    _die(first)
    return first


def _die(scheduler: Scheduler) -> None:
    """What the OS does for a killed process: its spill root's lock is let go (its log
    stays open, its rows after the last flush only in its memory)."""
    lock = scheduler.log._spill.root_lock  # type: ignore[union-attr]
    lock.release()


def test_a_restarted_run_starts_after_the_reservation_and_names_the_gap(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = _killed_run(root, 30)
    lineage = Lineage.open(root)
    (run,) = lineage.runs
    assert (run.first_seq, run.on_disk, run.closed) == (0, 30, False)
    # 37 rows numbered (7 after the flush); numbered.bin said "up to 64" from row 0 on (a
    # STEP of 64 rows), within the chunk that the flush reserved (30 + 16,384): the gap is
    # the 34 numbers 30..63, at most STEP more than the 7 rows lost
    assert first.log.next_seq == 37
    assert run.end == 64 and lineage.next_seq == 64
    assert 0 <= run.end - first.log.next_seq <= STEP
    (gap,) = lineage.gaps
    assert (gap.first, gap.last) == (30, 63)
    assert "run-001) was killed" in gap.why and "up to 63 at most were given" in gap.why

    second = continuing_scheduler(lineage, VirtualClock())
    assert second.log.spill_directory == str(root / "run-002")
    restart = second.log.rows()[0]
    assert (restart["seq"], restart["kind"], restart["result"]) == (64, "shutdown", "restarted")
    assert "was killed" in restart["detail"] and "tasks are gone" in restart["detail"]
    assert describe_row(restart).startswith("restarted: the service restarted")
    assert Lineage.open(root).log_id == lineage.log_id  # one log, one name

    # the feed's reader: the killed run's rows from its disk, then the gap, then the new run
    second.schedule(_noop, delay=1.0)
    reader = LogReader(second.log, lineage=Lineage.of_run(second.log.spill_directory))
    batch = reader.read(0)
    assert [r["seq"] for r in batch.rows] == list(range(30))
    gap_batch = reader.read(30)
    assert gap_batch.gap is not None
    assert (gap_batch.gap.first, gap_batch.gap.last) == (30, 63)
    assert reader.read(35).gap is not None and reader.read(35).gap.first == 35  # (a cursor X > D)
    assert [r["seq"] for r in reader.read(64).rows] == [64, 65]
    second.shutdown()
    first.shutdown(wait=False)


def test_a_run_after_a_clean_shutdown_continues_without_a_gap(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = continuing_scheduler(root, VirtualClock())
    first.schedule(_noop, delay=1.0)
    first.shutdown()
    ended = first.log.next_seq
    lineage = Lineage.open(root)
    assert lineage.gaps == [] and lineage.next_seq == ended
    second = continuing_scheduler(lineage, VirtualClock())
    assert second.log.first_seq == ended
    assert "shut down" in second.log.rows()[0]["detail"]
    second.shutdown()
    with pytest.raises(TypeError, match="log_spill="):
        continuing_scheduler(lineage, VirtualClock(), log_spill=tmp_path / "x")


def test_a_replay_empties_the_queue_at_the_restart_row(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = _killed_run(root, 3)
    second = continuing_scheduler(root, VirtualClock())
    second.schedule(_noop, delay=5.0)  # task 0 again, in the new process
    frames = [first.log.to_frame(), second.log.to_frame()]
    replayer = Replayer(frames[0])
    replayer.advance_to(None)
    assert len(replayer.queue) == 10  # the killed process's pending tasks
    replayer.extend(frames[1])
    assert len(replayer.queue) == 1 and replayer.state().head == (0,)
    second.shutdown()
    first.shutdown(wait=False)


def test_audit_checks_each_process_of_a_restarted_log_on_its_own(tmp_path: Path) -> None:
    from tempsched_lab import audit
    from tempsched_lab.log.files import concat_frames

    root = tmp_path / "runs"
    first = _killed_run(root, 3)
    second = continuing_scheduler(root, VirtualClock())
    second.schedule(_noop, delay=1.0)  # task 0 again
    second.clock.advance(2.0)
    second.shutdown()
    alone = audit(read_log(second.log.spill_directory))
    assert alone.ok and alone.truncated == 0, str(alone)  # a log continued: nothing dropped
    both = audit(concat_frames([first.log.to_frame(), second.log.to_frame()]))
    assert both.ok and both.pending == [] and both.tasks == 11, str(both)
    first.shutdown(wait=False)
