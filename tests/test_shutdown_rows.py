"""Every row recorded before a shutdown's timeout is on disk (issue 41, finding 4).

``shutdown(wait=True, timeout=T)`` whose ``T`` a run outlives used to close the spill
directory with no time left for the writer: closed incomplete, every row missing.
The promise: the rows recorded before the close are written (the close has a bounded
grace, ``CLOSE_GRACE_S``), and the runs still going, whose later rows cannot be in the
directory, are named in its manifest as ``outliving_runs`` and in a warning.
A real clock; the outliving run waits on an event, never on a sleep.
"""

from __future__ import annotations

import json
import threading
import time
import warnings

import pytest

from tempsched_lab import RealClock, Scheduler, read_log
from tempsched_lab.log.compactor import wait_compacted
from tempsched_lab.log.eventlog import CLOSE_GRACE_S
from tempsched_lab.log.files import IncompleteLogWarning

pytest.importorskip("pyarrow")


@pytest.fixture(autouse=True)
def settled():
    """Leave no spill work to the shared compactor thread: it would run into the next test."""
    yield
    assert wait_compacted(60)


def manifest_of(directory):
    return json.loads((directory / "log.json").read_text())


def test_a_run_that_outlives_the_shutdown_timeout_leaves_every_earlier_row_on_disk(tmp_path):
    spill = tmp_path / "spill"
    s = Scheduler(RealClock(), log_spill=spill)
    started, release, quick = threading.Event(), threading.Event(), threading.Event()
    try:
        s.schedule(quick.set, delay=0.0, label="quick")
        assert quick.wait(10)

        def slow() -> None:
            started.set()
            release.wait(30)

        s.schedule(slow, delay=0.0, label="slow")
        assert started.wait(10)
        t0 = time.monotonic()
        with pytest.warns(IncompleteLogWarning, match=r"1 run\(s\) were still going: task 1 "):
            s.shutdown(wait=True, timeout=0.2)
        took = time.monotonic() - t0
        recorded = s.log.next_seq  # the slow run is still going: nothing more recorded
        manifest = manifest_of(spill)
        assert manifest["closed"] and manifest["complete"], manifest
        assert manifest["rows"] == recorded >= 7  # was: 0 rows, "7 rows missing"
        assert manifest["outliving_runs"] == [{"task_id": 1, "name": "slow"}]
        on_disk = read_log(spill)
        assert on_disk["seq"].tolist() == list(range(recorded))
        assert on_disk.attrs["outliving_runs"] == [{"task_id": 1, "name": "slow"}]
        assert on_disk["kind"].iloc[-1] == "shutdown"  # the stop itself is on disk
        assert 0.2 <= took < 0.2 + CLOSE_GRACE_S, took
    finally:
        release.set()
    deadline = time.monotonic() + 30  # the slow run's finish row: in memory, not on disk
    while s.log.next_seq == recorded and time.monotonic() < deadline:
        time.sleep(0.005)
    history = s.log.history()
    late = history[history["seq"] >= recorded]
    assert late["kind"].tolist() == ["finish"] and late["task_id"].tolist() == [1]
    assert len(read_log(spill)) == recorded  # the directory claims no more than it has


def test_a_shutdown_whose_runs_end_in_time_names_no_outliving_run(tmp_path):
    spill = tmp_path / "spill"
    s = Scheduler(RealClock(), log_spill=spill)
    done = threading.Event()
    s.schedule(done.set, delay=0.0)
    assert done.wait(10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.shutdown(wait=True, timeout=10)
    manifest = manifest_of(spill)
    assert manifest["complete"] and "outliving_runs" not in manifest
    frame = read_log(spill)
    assert len(frame) == s.log.next_seq and "outliving_runs" not in frame.attrs
