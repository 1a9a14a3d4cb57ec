"""Any task ID a user can type keeps the log usable (issue 24, R6).

``cancel()`` answers NOT_FOUND for an ID no task has, whatever its size, and
records the question; an ID outside int64 (the log's ID column) is recorded as
missing. Before, one ``cancel(2**63)`` made every ``to_frame()``, ``audit()``,
``to_csv()``, ``tail()`` and ``history()`` raise ``OverflowError`` for good.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempsched_lab import CancelResult, Scheduler, VirtualClock, read_log
from tempsched_lab.compat import TemporalScheduler

INT64 = (-(2**63), 2**63 - 1)
EDGES = [
    2**63,
    2**63 - 1,
    -(2**63),
    -(2**63) - 1,
    2**64,
    10**30,
    -(10**30),
    10**400,
    -1,
    0,
]
NUMPY = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def noop(*args):
    return None


def numpy_ints():
    return st.sampled_from(NUMPY).flatmap(
        lambda kind: st.integers(int(np.iinfo(kind).min), int(np.iinfo(kind).max)).map(kind)
    )


task_ids = st.one_of(
    st.sampled_from(EDGES), st.integers(), st.integers(-(2**70), 2**70), numpy_ints()
)


def assert_log_usable(s: Scheduler, tmp_path) -> None:
    frame = s.log.to_frame()
    assert frame["seq"].tolist() == list(range(len(frame)))
    assert s.log.audit().ok
    assert len(s.log.tail(5)) <= 5
    assert len(s.log.history()) == len(frame)
    s.log.to_csv(tmp_path / "log.csv")
    assert len(read_log(tmp_path / "log.csv")) == len(frame)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ids=st.lists(task_ids, min_size=1, max_size=4))
def test_r6_cancel_of_any_integer_id_keeps_every_reader_working(ids, tmp_path):
    s = Scheduler(VirtualClock())
    kept = s.schedule(noop, delay=1)
    for task_id in ids:
        issued = int(task_id) == kept
        result = s.cancel(task_id)
        assert (
            result in (CancelResult.CANCELLED, CancelResult.ALREADY_DONE)
            if issued
            else (result is CancelResult.NOT_FOUND)
        )
    assert_log_usable(s, tmp_path)
    rows = s.log.to_frame()
    cancels = rows[rows["kind"] == "cancel"]
    for task_id, recorded in zip(ids, cancels["task_id"], strict=True):
        value = int(task_id)
        if INT64[0] <= value <= INT64[1] and value != -1:
            assert recorded == value  # the ID asked for, as asked
        else:
            assert recorded is pd_na()  # missing: no int64 can hold it


def pd_na():
    import pandas as pd

    return pd.NA


@pytest.mark.parametrize("flag", [True, False])
def test_r6_a_bool_is_not_a_task_id(flag, tmp_path):
    s = Scheduler(VirtualClock())
    with pytest.raises(TypeError, match=rf"task_id={flag}: expected an int task ID"):
        s.cancel(flag)
    ts = TemporalScheduler(clock=VirtualClock())
    assert ts.cancel_task(flag) is False
    ts.shutdown()
    assert_log_usable(s, tmp_path)


@pytest.mark.parametrize(
    "task_id",
    [*EDGES, np.uint64(2**64 - 1), np.int64(-(2**63))],
    ids=lambda v: f"{type(v).__name__}-{str(v)[:24]}",
)
def test_r6_the_compat_facade_never_raises_and_its_log_stays_usable(task_id, tmp_path):
    ts = TemporalScheduler(clock=VirtualClock())
    tid = ts.schedule_task(noop, delta_t=1)
    assert ts.cancel_task(task_id) is (int(task_id) == tid)
    with pytest.raises(KeyError):
        ts.status(task_id + 1 if int(task_id) == tid else task_id)
    assert ts.scheduler.exception(task_id) is None
    assert_log_usable(ts.scheduler, tmp_path)
    ts.shutdown()


def test_r6_a_huge_id_in_a_spilled_segment_and_in_status(tmp_path):
    pytest.importorskip("pyarrow")
    s = Scheduler(VirtualClock(), max_log_rows=2_000, log_spill=tmp_path / "spill")
    s.schedule(noop, delay=1)
    for i in range(40_000):  # the huge IDs land in written segments and in memory
        s.cancel(2**63 + i if i % 2 else -(10**30) - i)
    with pytest.raises(KeyError, match=r"task_id=9223372036854775808: no such task"):
        s.status(2**63)
    assert s.exception(2**63) is None
    assert s.log.flush()
    frame = s.log.history()
    assert len(frame) == s.log.next_seq and frame["task_id"].isna().sum() == 40_000
    s.shutdown()
    assert len(read_log(tmp_path / "spill")) == s.log.next_seq
