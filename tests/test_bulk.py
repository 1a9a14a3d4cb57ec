"""schedule_many: the decisions and log rows of the same requests made one by one."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab import PastTimeError, Scheduler, VirtualClock
from tempsched_lab.reading.replay import Replayer


def job(*args):
    return None


def other(*args):
    return None


ACTIONS = {"job": job, "other": other}
TIMES = st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.0, 3.0, 4.5])
REQUEST = st.one_of(
    st.tuples(st.sampled_from(list(ACTIONS)), TIMES, st.sampled_from([(), (1,), (2,)])),
    st.fixed_dictionaries(
        {"name": st.sampled_from(list(ACTIONS)), "delay": st.sampled_from([0.5, 1.0, 2.5])},
        optional={"period": st.sampled_from([1.0, 2.0]), "label": st.just("named")},
    ),
)


def _as_request(item):
    if isinstance(item, tuple):
        name, at, args = item
        return (ACTIONS[name], at, args) if args else (ACTIONS[name], at)
    request = {k: v for k, v in item.items() if k != "name"}
    request["action"] = ACTIONS[item["name"]]
    return request


def _one_by_one(s: Scheduler, request) -> int:
    if isinstance(request, tuple):
        args = request[2] if len(request) == 3 else ()
        return s.schedule(request[0], at=request[1], args=args)
    kwargs = dict(request)
    return s.schedule(kwargs.pop("action"), **kwargs)


def _comparable(s: Scheduler):
    return s.log.to_frame().drop(columns=["wall", "wall_time", "thread"])


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(REQUEST, max_size=25),
    existing=st.lists(st.tuples(st.sampled_from(list(ACTIONS)), TIMES), max_size=5),
    design=st.sampled_from(["sorteddict", "heap", "wheel"]),
)
def test_schedule_many_decides_and_logs_exactly_like_one_by_one(items, existing, design):
    options = {"tick": 0.25, "slots": 8} if design == "wheel" else {}
    requests = [_as_request(item) for item in items]
    runs = []
    for bulk in (False, True):
        s = Scheduler(VirtualClock(start=0.25), queue=design, queue_options=options)
        for name, at in existing:  # a queue that already holds time points
            s.schedule(ACTIONS[name], at=at)
        if bulk:
            ids = s.schedule_many(requests)
        else:
            ids = [_one_by_one(s, request) for request in requests]
        s.queue.check_invariants()
        runs.append((ids, _comparable(s), s.queue.state()))
    (ids_a, frame_a, state_a), (ids_b, frame_b, state_b) = runs
    assert ids_a == ids_b
    assert state_a == state_b
    assert frame_a.equals(frame_b)


@settings(max_examples=100, deadline=None)
@given(
    items=st.lists(REQUEST, min_size=1, max_size=25),
    existing=st.lists(st.tuples(st.sampled_from(list(ACTIONS)), TIMES), max_size=5),
    design=st.sampled_from(["sorteddict", "heap", "wheel"]),
)
def test_a_tap_sees_the_queue_right_after_each_row_of_schedule_many(items, existing, design):
    """#24 R16: each row of a batch is written when its request is applied, so a tap sees
    the queue as it is right after that row (and replaying the log up to it agrees)."""
    options = {"tick": 0.25, "slots": 8} if design == "wheel" else {}
    s = Scheduler(VirtualClock(start=0.25), queue=design, queue_options=options)
    for name, at in existing:
        s.schedule(ACTIONS[name], at=at)
    first = s.log.next_seq
    live: dict[int, object] = {}
    s.log.tap(lambda row: live.__setitem__(row["seq"], s.queue.state()))
    s.schedule_many([_as_request(item) for item in items])
    replayer = Replayer(s.log.to_frame())
    assert sorted(live) == list(range(first, s.log.next_seq))
    for seq, state in sorted(live.items()):
        replayer.advance_to(seq)
        assert replayer.state() == state, seq


def test_a_past_request_stops_the_batch_where_one_by_one_would():
    s = Scheduler(VirtualClock(start=5.0))
    with pytest.raises(PastTimeError) as info:
        s.schedule_many([(job, 6.0), (job, 7.0), (job, 1.0), (job, 8.0)])
    assert info.value.index == 2 and info.value.scheduled_ids == [0, 1]
    assert len(s.queue) == 2
    assert s.log.to_frame()["kind"].tolist() == ["schedule", "schedule", "reject"]


def test_an_invalid_request_names_itself_after_the_valid_ones_are_stored():
    s = Scheduler(VirtualClock())
    with pytest.raises(TypeError, match="request=") as info:
        s.schedule_many([(job, 1.0), "not a request", (job, 2.0)])
    assert info.value.index == 1 and info.value.scheduled_ids == [0]
    with pytest.raises(TypeError, match="unknown keys"):
        s.schedule_many([{"action": job, "at": 1.0, "when": 3}])
    with pytest.raises(ValueError, match="period="):
        s.schedule_many([{"action": job, "delay": 1.0, "period": -1}])


def test_schedule_many_on_a_real_clock_wakes_the_worker_and_runs_in_order():
    with Scheduler() as s:
        order: list[int] = []
        now = s.clock.now()
        done = threading.Event()
        ids = s.schedule_many([(order.append, now + 0.05 - 0.01 * i, (i,)) for i in range(5)])
        s.schedule(done.set, delay=0.1)
        assert done.wait(5) and s.wait_idle(5)
    assert order == [4, 3, 2, 1, 0] and ids == [0, 1, 2, 3, 4]
    assert s.log.audit().ok


def _scenario(extra_scheduler: bool):
    clock = VirtualClock()
    s = Scheduler(clock)
    if extra_scheduler:  # a second scheduler on the clock: the clock steps group by group
        Scheduler(clock)
    order: list[str] = []

    def chain(n):
        order.append(f"chain{n}")
        if n < 3:
            s.schedule(chain, delay=0.0, args=(n + 1,))  # zero delay: runs at the next step

    s.schedule(order.append, at=1.0, args=("a",))
    s.schedule(order.append, at=1.0, args=("b",))
    s.schedule(order.append, at=0.5, args=("tick",), period=0.75)
    s.schedule(threading.Event(), at=1.25)
    s.schedule(chain, at=2.0, args=(0,))
    clock.run_until(4.0)
    s.cancel(2)
    clock.run_until_idle()
    return order, _comparable(s)


def test_the_virtual_fast_path_fires_exactly_like_stepping():
    fast_order, fast = _scenario(extra_scheduler=False)
    slow_order, slow = _scenario(extra_scheduler=True)
    assert fast_order == slow_order
    assert fast.equals(slow)
    assert "chain3" in fast_order


@pytest.mark.parametrize("sizes", [[2_500], [700, 700, 700], [1_023, 1, 1_500]])
def test_batches_fill_and_trim_chunks_like_rows_one_by_one(sizes):
    """A batch fills the log's chunks as the same rows one by one do: chunks sealed, the
    oldest trimmed and the row numbers kept alike."""
    bulk = Scheduler(VirtualClock(), max_log_rows=1_500)
    single = Scheduler(VirtualClock(), max_log_rows=1_500)
    at = 1.0
    for size in sizes:
        batch = [(job, at + i) for i in range(size)]
        at += size
        bulk.schedule_many(batch)
        for action, t in batch:
            single.schedule(action, at=t)
    a, b = bulk.log.to_frame(), single.log.to_frame()
    assert len(bulk.log) == len(single.log) < sum(sizes)  # the bound trimmed both alike
    assert bulk.log.next_seq == single.log.next_seq == sum(sizes)
    assert a.index.tolist() == b.index.tolist()
    assert a["task_id"].tolist() == b["task_id"].tolist()
    assert a["queue_size"].tolist() == b["queue_size"].tolist()
