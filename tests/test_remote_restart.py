"""A service SIGKILLed and restarted on the same spill root: one log, resumed, the gap named.

The service is ``python -m tempsched_lab.serve.example --spill ROOT`` in a real second
process (a :class:`~tempsched_lab.log.files.Lineage`: each run spills to ``ROOT/run-NNN``
and continues the log of the runs before). The client (``attach``) resumes after the
last row it applied: the rows of the killed process that reached its disk come from
there, the numbers that exist nowhere come as one ``gap`` naming them, and the mirror
then equals ``read_log`` of the run directories for every row both have, every seq once.
Every wait is for the event it asserts, bounded in time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from tempsched_lab import attach, read_log
from tempsched_lab.log.files import Lineage, concat_frames
from tempsched_lab.reading.replay import replay
from tempsched_lab.remote.process import ExampleService

pytestmark = pytest.mark.slow

FAST = ("--tick", "0.05", "--burst-every", "1", "--burst-size", "20")


def _until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    start = time.monotonic()
    for _ in range(1_000_000):
        if condition():
            return
        if time.monotonic() - start > seconds:
            break
        time.sleep(0.01)
    raise AssertionError(f"not true within {seconds} s: {condition}")


def _stored(frame: pd.DataFrame) -> pd.DataFrame:
    columns = [c for c in frame.columns if c not in ("time", "wall_time")]
    return frame[columns].reset_index(drop=True)


@pytest.mark.parametrize("wait_for_disk", [False, True], ids=["killed-early", "killed-later"])
def test_a_killed_service_restarted_on_its_spill_root_resumes_and_names_the_missing_range(
    tmp_path: Path, wait_for_disk: bool
) -> None:
    root = tmp_path / "runs"
    # --spill-interval 0.2: a quiet tail reaches the disk within ~0.4 s, so the killed run has
    # segments; whether the client's last row is before or after the disk's end varies
    service = ExampleService.start(spill=root, args=(*FAST, "--spill-interval", "0.2"))
    again: ExampleService | None = None
    mirror = attach(service.url)
    try:
        _until(lambda: mirror.applied > 300)
        if wait_for_disk:  # later: often the client holds rows the disk has not got (X > D)
            applied = mirror.applied
            _until(lambda: mirror.applied > applied + 50)
        service.kill()
        _until(lambda: mirror.link.state == "reconnecting", 2.0)
        held = mirror.applied  # the client's last row: held - 1
        again = service.restart()
        lineage = Lineage.open(root)
        killed, second = lineage.runs
        assert second.first_seq == killed.end > held - 1  # no seq used twice
        assert killed.directory == service.spill and second.directory == again.spill

        _until(lambda: mirror.applied > second.first_seq + 100)
        # one gap, exactly: the numbers after the client's last row and after the disk's end
        # up to the reservation, which exist nowhere; rows before the disk's end came from it
        assert len(mirror.gaps) == 1
        gap = mirror.gaps[0]
        assert (gap.first, gap.last) == (max(held, killed.on_disk), second.first_seq - 1)
        assert "was killed" in gap.why and f"up to {second.first_seq - 1}" in gap.why
        # reserved numbers, not all used: the banner says "at most", not that many rows
        assert gap.at_most and f"(at most {gap.rows:,} rows) are missing" in gap.text()
        assert mirror.link.state in ("live", "gap") and not mirror.closed

        # the restart row: the queue shows only the new process's tasks (task IDs start
        # again at 0 there)
        moment = mirror.moment()
        new_rows = mirror.log.to_frame(second.first_seq, moment.seq)
        first_row = new_rows.iloc[0]
        assert (first_row["kind"], first_row["result"]) == ("shutdown", "restarted")
        state = replay(new_rows)
        assert moment.queue.state == state
        assert set(moment.queue.tasks) == {i for _, ids in state.points for i in ids}

        assert again.stop() == 0
        _until(lambda: mirror.link.state == "closed")
        again = None
    finally:
        mirror.close()
        service.kill()
        if again is not None:
            again.kill()

    # the mirror against the disk: every seq once, in order; equal where both have the row
    mine = mirror.history()
    seqs = mine["seq"].tolist()
    assert seqs == sorted(set(seqs))
    assert set(seqs) == set(range(gap.first)) | set(range(gap.last + 1, seqs[-1] + 1))
    # the killed run's directory is open (its rows up to the disk's end), the second closed
    disk = concat_frames([read_log(killed.directory), read_log(second.directory)])
    disk = disk.reset_index(drop=True)
    assert disk["seq"].is_monotonic_increasing and disk["seq"].is_unique
    both = sorted(set(seqs) & set(disk["seq"].tolist()))
    assert len(both) == len(disk) and seqs[-1] == int(disk["seq"].iloc[-1])
    pd.testing.assert_frame_equal(
        _stored(mine[mine["seq"].isin(both)]),
        _stored(disk[disk["seq"].isin(both)]),
        check_categorical=False,
    )
    # rows the mirror has that no disk has: the killed run's, received live, never written
    assert set(seqs) - set(both) == set(range(killed.on_disk, held))


def test_a_cleanly_stopped_service_restarted_continues_without_a_gap(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    service = ExampleService.start(spill=root, args=FAST)
    mirror = attach(service.url)
    again: ExampleService | None = None
    try:
        _until(lambda: mirror.applied > 100)
        assert service.stop() == 0
        _until(lambda: mirror.link.state == "closed")
        ended = mirror.applied
        again = service.restart()
        later = attach(again.url)  # the same log: from its first row, across both runs
        _until(lambda: later.applied > ended + 50)
        assert later.gaps == [] and later.link.state == "live"
        frame = later.log.to_frame()
        assert frame["seq"].tolist() == list(range(len(frame)))
        restart = frame[frame["seq"] == ended].iloc[0]
        assert (restart["kind"], restart["result"]) == ("shutdown", "restarted")
        assert "shut down" in restart["detail"]
        later.close()
    finally:
        mirror.close()
        service.kill()
        if again is not None:
            again.kill()
