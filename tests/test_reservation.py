"""The seq reservation of a spilled log (issue 41, findings 5 and 12).

``reserved.json`` bounds every ``seq`` the log may have handed out: a process restarted
after a kill starts there. A reservation that cannot be renewed (the file cannot be
written: a full disk) must stop the log numbering past it, loudly, or the next process
would number rows with numbers readers already hold. A bound no int64 column can hold is
refused, naming the file.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tempsched_lab import EventLog, Scheduler, VirtualClock, read_log
from tempsched_lab.log.files import Lineage, LogFileError
from tempsched_lab.restarts import continuing_scheduler

CHUNK = 16_384


def _noop() -> None:
    return None


def _bound(directory: Path) -> int:
    bound: int = json.loads((directory / "reserved.json").read_text())["bound"]
    return bound


def _fail_reservations(directory: Path) -> Path:
    """Make every write of ``reserved.json`` fail, as a full disk does (its temporary
    name is taken by a directory: opening it for writing raises ``IsADirectoryError``)."""
    blocker = directory / "reserved.json.tmp"
    blocker.mkdir()
    return blocker


def test_a_reservation_that_cannot_be_renewed_stops_the_numbering_loudly_and_says_so_in_a_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    s = Scheduler(VirtualClock(), log_spill=tmp_path)
    s.log._spill.writer.fsync = False  # type: ignore[union-attr]  # (speed only)
    blocker = _fail_reservations(tmp_path)
    for i in range(CHUNK + 500):  # a chunk is sealed: the next one's reservation fails
        s.schedule(_noop, at=1e6 + i)
        assert s.log.next_seq <= _bound(tmp_path)  # no number past what the file bounds
    assert s.log.next_seq == CHUNK == _bound(tmp_path)
    assert s.log.unrecorded > 0
    with caplog.at_level(logging.ERROR, logger="tempsched_lab"):
        assert not s.log.flush()  # every row numbered is on disk, but the log is paused
    (record,) = [r for r in caplog.records if "seq reservation" in r.getMessage()]
    assert record.levelno == logging.ERROR and "reserved.json" in record.getMessage()

    blocker.rmdir()  # the disk has room again
    assert s.log.flush()
    note = s.log.rows(CHUNK, CHUNK + 1)[0]
    assert (note["kind"], note["result"]) == ("shutdown", "unrecorded")
    assert f"{s.log.unrecorded:,} rows" in note["detail"] and "reserved.json" in note["detail"]
    assert _bound(tmp_path) > s.log.next_seq
    s.schedule(_noop, at=1.0)  # numbering goes on after the note
    s.shutdown()
    seqs = read_log(tmp_path)["seq"].tolist()
    assert seqs == list(range(s.log.next_seq))


def test_after_a_kill_the_restart_never_reuses_a_number_handed_out_while_renewals_failed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "runs"
    first = continuing_scheduler(root, VirtualClock())
    first.log._spill.writer.fsync = False  # type: ignore[union-attr]
    _fail_reservations(root / "run-001")
    for i in range(CHUNK + 500):
        first.schedule(_noop, at=1e6 + i)
    held = first.log.held_rows(0)  # what a reader of the feed holds
    handed_out = held.rows[-1]["seq"] + 1
    first.log._spill.root_lock.release()  # type: ignore[union-attr]  # killed: the OS lets go
    second = continuing_scheduler(root, VirtualClock())
    assert second.log.first_seq >= handed_out
    second.shutdown()
    first.shutdown(wait=False)


def test_a_reserved_bound_beyond_int64_is_refused_naming_the_file(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = continuing_scheduler(root, VirtualClock())
    first.shutdown()
    reserved = root / "run-001" / "reserved.json"
    for bad in (2**63, -1, "7", 1.5):
        reserved.write_text(json.dumps({"first_seq": 0, "bound": bad}))
        with pytest.raises(LogFileError, match="bound=") as refused:
            continuing_scheduler(root, VirtualClock())
        assert str(reserved) in str(refused.value)
        with pytest.raises(LogFileError, match=r"reserved\.json"):
            Lineage.open(root)
    assert sorted(p.name for p in root.iterdir() if p.name.startswith("run-")) == ["run-001"]
    reserved.write_text(json.dumps({"first_seq": 0, "bound": 2**63 - 1}))  # the largest
    assert Lineage.open(root).next_seq >= first.log.next_seq
    with pytest.raises(ValueError, match="first_seq=9223372036854775808"):
        EventLog(first_seq=2**63)
