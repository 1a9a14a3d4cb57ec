"""The compat facade as a drop-in: ts.timer, arguments as given, errors, wall-clock conversion.

Side-by-side checks against the reference are in ``test_compat_reference.py``; these
run on our facade alone (virtual clocks where time matters), fast.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta

import pytest
from sortedcontainers import SortedDict

from tempsched_lab import PastTimeError, RealClock, Scheduler, VirtualClock
from tempsched_lab.compat import TemporalScheduler, TimerView
from tempsched_lab.time.wall import WallScale

KEYS = [
    "action",
    "period",
    "current_execution",
    "last_execution",
    "id",
    "running",
    "comment",
    "args",
    "kwargs",
]


def noop(*args, **kwargs):
    return None


@pytest.fixture
def ts():
    """A facade on a virtual clock at 1000.0 (``ts.clock``)."""
    with TemporalScheduler(clock=VirtualClock(start=1000.0)) as facade:
        yield facade


def lengths(facade):
    return len(facade.timer.current_event_actions), len(facade.timer.events)


# -- ts.timer ----------------------------------------------------------------------------
def test_timer_lengths_over_the_eight_cases(ts):
    assert lengths(ts) == (0, 0) and ts.timer.current_time is None
    with pytest.raises(ValueError):
        ts.schedule_task(noop, absolute_time=999.0)  # 1
    steps = [
        (dict(absolute_time=1010.0), (1, 0)),  # 2: the head
        (dict(absolute_time=1005.0), (1, 1)),  # 3: the old head goes back to events
        (dict(absolute_time=1020.0, task_args=(1,)), (1, 2)),  # 4
        (dict(absolute_time=1005.0), (1, 2)),  # 5: duplicate of head
        (dict(absolute_time=1005.0, task_args=(9,)), (2, 2)),  # 6: joins head
        (dict(absolute_time=1020.0, task_args=(1,)), (2, 2)),  # 7: duplicate in queue
        (dict(absolute_time=1020.0, task_kwargs={"k": 1}), (2, 2)),  # 8: joins a time point
    ]
    for kwargs, expected in steps:
        ts.schedule_task(noop, **kwargs)
        assert lengths(ts) == expected, kwargs
    assert ts.timer.current_time == 1005.0
    assert list(ts.timer.events) == [1010.0, 1020.0]
    assert [len(v) for v in ts.timer.events.values()] == [1, 2]
    assert [a["id"] for a in ts.timer.current_event_actions] == [1, 3]


def test_timer_types_and_action_dicts(ts):
    tid = ts.schedule_task(noop, absolute_time=1002, comment="x", task_args=[1])
    ts.schedule_task(noop, absolute_time=1003.5, task_kwargs={"a": 1}, period=2.0)
    timer = ts.timer
    assert isinstance(timer, TimerView)
    assert isinstance(timer.events, SortedDict)
    assert type(timer.current_event_actions) is not tuple
    assert isinstance(timer.current_event_actions, list)
    (head,) = timer.current_event_actions
    assert list(head) == KEYS
    assert head == {
        "action": noop,
        "period": None,
        "current_execution": 1002,  # as given (an int stays an int)
        "last_execution": None,
        "id": tid,
        "running": False,
        "comment": "x",
        "args": [1],  # as given
        "kwargs": {},
    }
    assert type(timer.current_time) is int and timer.current_time == 1002
    (later,) = timer.events.values()
    assert later[0]["period"] == 2.0 and later[0]["kwargs"] == {"a": 1}
    assert timer.running is True and type(timer.running) is bool
    assert timer.dontwait_threshold == 0.01  # the reference's default
    assert TemporalScheduler(0.05, clock=VirtualClock()).timer.dontwait_threshold == 0.05


def test_timer_shows_a_periodic_task_in_flight_at_its_next_time(ts):
    seen = []

    def tick():
        seen.append((ts.timer.current_time, lengths(ts), ts.timer.current_event_actions[0]))

    pid = ts.schedule_task(tick, absolute_time=1001.0, period=2.0)
    ts.schedule_task(noop, absolute_time=1010.0)
    ts.clock.run_until(1003.0)
    # inside each run the reference has already re-queued the task at its next time
    assert [(t, n) for t, n, _ in seen] == [(1003.0, (1, 1)), (1005.0, (1, 1))]
    first, second = (action for _, _, action in seen)
    assert first["id"] == second["id"] == pid
    assert (first["last_execution"], second["last_execution"]) == (1001.0, 1003.0)
    assert first["comment"] == ""  # the reference re-queues with comment "" after a run
    assert ts.timer.current_time == 1005.0 and lengths(ts) == (1, 1)


def test_timer_after_cancel_and_shutdown(ts):
    a = ts.schedule_task(noop, absolute_time=1001.0)
    ts.schedule_task(noop, absolute_time=1002.0)
    assert ts.cancel_task(a)
    assert ts.timer.current_time == 1002.0 and lengths(ts) == (1, 0)
    ts.shutdown()
    assert lengths(ts) == (0, 0)  # dropped for good (the reference keeps showing them)
    assert ts.timer.running is False and ts.timer.is_alive() is False
    ts.timer.join(1.0)  # returns at once


def test_timer_is_read_only(ts):
    ts.schedule_task(noop, absolute_time=1001.0)
    ts.schedule_task(noop, absolute_time=1002.0)
    timer = ts.timer
    with pytest.raises(AttributeError, match="time_epsilon"):
        timer.dontwait_threshold = 0.1
    with pytest.raises(AttributeError, match=r"schedule_task\(\)"):
        timer.events = {}
    events, head = timer.events, timer.current_event_actions
    for change in (
        lambda: events.__setitem__(5.0, []),
        lambda: events.pop(1002.0),
        lambda: events.clear(),
        lambda: events.update({5.0: []}),
        lambda: events.__delitem__(1002.0),
        lambda: head.append({}),
        lambda: head.pop(),
        lambda: head.__setitem__(0, {}),
        lambda: head.clear(),
        lambda: head[0].__setitem__("period", 1.0),
        lambda: head[0].update(period=1.0),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert lengths(ts) == (1, 1)  # nothing changed
    # copies are plain, mutable containers
    assert type(copy.copy(head)) is list and type(copy.deepcopy(head[0])) is dict
    assert type(copy.copy(events)) is SortedDict
    assert pickle.loads(pickle.dumps(events[1002.0]))[0]["id"] == 1


def test_unmirrored_internals_say_what_to_use(ts):
    for name, hint in [
        ("executors", "ts.scheduler.running"),
        ("current_mutex", "moment()"),
        ("schedule_event", "ts.schedule_task()"),
        ("cancel_event", "ts.cancel_task()"),
        ("task_id", "ts.schedule_task()"),
    ]:
        with pytest.raises(AttributeError, match="not mirrored") as info:
            getattr(ts.timer, name)
        assert hint in str(info.value)
    with pytest.raises(AttributeError, match=r"ts\.scheduler"):
        ts.timer.something_else  # noqa: B018
    with pytest.raises(AttributeError, match=r"ts\.timer"):
        ts.TimerThread  # noqa: B018
    assert not hasattr(ts, "nope")


def test_is_alive_and_join_real_clock():
    facade = TemporalScheduler()
    release = threading.Event()
    started = threading.Event()

    def blocked():
        started.set()
        release.wait(5)

    facade.schedule_task(blocked, delta_t=0.01)
    assert started.wait(5)
    assert facade.timer.is_alive()
    facade.shutdown(wait_until_done=False)
    assert facade.timer.is_alive()  # its run is still in flight
    threading.Timer(0.05, release.set).start()
    facade.timer.join(5)
    assert not facade.timer.is_alive()


# -- arguments as given --------------------------------------------------------------------
def test_task_args_any_iterable_runs_with_those_values(ts):
    got = []

    def record(*args, **kwargs):
        got.append((args, kwargs))

    ts.schedule_task(record, absolute_time=1001.0, task_args="ab")
    ts.schedule_task(record, absolute_time=1002.0, task_args=range(2))
    ts.schedule_task(record, absolute_time=1003.0, task_args=[1, 2], task_kwargs={"x": 3})
    ts.schedule_task(record, absolute_time=1004.0, task_args={"k": 1})  # keys, as `*` gives
    ts.clock.run_until_idle()
    assert got == [(("a", "b"), {}), ((0, 1), {}), ((1, 2), {"x": 3}), (("k",), {})]


def test_duplicates_compare_arguments_as_given(ts):
    runs = []
    a = ts.schedule_task(runs.append, absolute_time=1001.0, task_args=[1])
    b = ts.schedule_task(runs.append, absolute_time=1001.0, task_args=(1,))
    c = ts.schedule_task(runs.append, absolute_time=1001.0, task_args=(1,))
    d = ts.schedule_task(runs.append, absolute_time=1001.0, task_args=(1.0,))  # 1 == 1.0
    assert (a, b) == (0, 1) and c == d == b
    ts.clock.run_until_idle()
    assert runs == [1, 1]  # [1] != (1,): two tasks, both run


def test_kwargs_as_given_fail_when_the_task_runs(ts):
    tid = ts.schedule_task(noop, absolute_time=1001.0, task_kwargs=(1,))  # accepted
    assert ts.status(tid)["id"] == tid
    ts.clock.run_until_idle()
    errors = ts.log.to_frame().query("kind == 'error'")
    assert errors["task_id"].tolist() == [tid]
    assert "must be a mapping" in errors["error"].iloc[0]
    assert isinstance(ts.scheduler.exception(tid), TypeError)


def test_core_api_keeps_its_strict_checks():
    s = Scheduler(VirtualClock(start=1000.0))
    with pytest.raises(TypeError, match="args="):
        s.schedule(noop, at=1001.0, args="ab")
    with pytest.raises(TypeError, match="kwargs="):
        s.schedule(noop, at=1001.0, kwargs=(1,))
    s.shutdown()


# -- errors name the facade's arguments --------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "named"),
    [
        (dict(delta_t="1"), TypeError, "delta_t='1'"),
        (dict(delta_t=-1.0), PastTimeError, "delta_t=-1.0"),
        (dict(delta_t=1e12), ValueError, "delta_t=1000000000000.0"),
        (dict(delta_t=float("nan")), ValueError, "delta_t=nan"),
        (dict(absolute_time="soon"), TypeError, "absolute_time='soon'"),
        (dict(absolute_time=999.0), PastTimeError, "absolute_time=999.0"),
        (dict(absolute_time=1e20), ValueError, "absolute_time=1e+20"),
        (dict(absolute_time=float("inf")), ValueError, "absolute_time=inf"),
        (dict(absolute_time=float("nan"), period=1.0), ValueError, "absolute_time=nan"),
        (dict(absolute_time=1001.0, delta_t=1.0), ValueError, "absolute_time=1001.0 and delta_t"),
        (dict(delta_t=1.0, task_args=5), TypeError, "task_args=5"),
        (dict(period=0), ValueError, "period=0"),
        (dict(), ValueError, "absolute_time=, delta_t= or period="),
    ],
)
def test_errors_name_the_facade_arguments(ts, kwargs, error, named):
    with pytest.raises(error) as info:
        ts.schedule_task(noop, **kwargs)
    message = str(info.value)
    assert named in message
    assert not message.startswith(("at=", "delay=", "args=")), message
    assert ts.scheduler.pending == 0


def test_bad_callback_and_rejection_rows(ts):
    with pytest.raises(TypeError, match="callback=5"):
        ts.schedule_task(5, delta_t=1.0)
    with pytest.raises(TypeError, match="task_args=5"):
        ts.schedule_task(noop, delta_t=1.0, task_args=5)
    with pytest.raises(PastTimeError):
        ts.schedule_task(noop, delta_t=-1.0)
    rejects = ts.log.to_frame().query("kind == 'reject'")
    assert rejects["origin"].tolist() == ["compat"] * 3
    assert rejects["error"].str.contains("callback=5").iloc[0]


# -- wall-clock times ------------------------------------------------------------------------
class WallClock:
    """``time.time`` with a settable step (the monotonic clock is left alone)."""

    def __init__(self, monkeypatch):
        self.step = 0.0
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() + self.step)


def test_absolute_time_follows_a_wall_clock_step(monkeypatch):
    wall = WallClock(monkeypatch)
    facade = TemporalScheduler()
    try:
        for step in (2.0, -2.0, 3600.0):
            wall.step = step
            requested = time.time() + 100.0
            tid = facade.schedule_task(noop, absolute_time=requested)
            due = facade.scheduler.status(tid).next_due
            assert due - facade.clock.now() == pytest.approx(100.0, abs=0.05), step
            assert facade.status(tid)["scheduled_execution"] == requested  # as given
            assert facade.timer.events.get(requested) or facade.timer.current_time == requested
        wall.step = -5.0
        soon = facade.schedule_task(noop, absolute_time=time.time() + 0.5)  # not "past"
        assert facade.scheduler.status(soon).next_due > facade.clock.now()
    finally:
        facade.shutdown()


def test_equal_absolute_times_stay_duplicates_on_a_real_clock():
    facade = TemporalScheduler()
    try:
        at = time.time() + 60.0
        ids = {facade.schedule_task(noop, absolute_time=at) for _ in range(2000)}
        assert ids == {0}
        assert len(facade.timer.current_event_actions) == 1
    finally:
        facade.shutdown()


def test_wall_scale_ignores_a_preemption_but_follows_a_step(monkeypatch):
    wall = WallClock(monkeypatch)
    scale = WallScale(RealClock())
    offset = scale.offset
    read = scale.read
    slow = [0.05]  # the next read only is 50 ms late, as if preempted between the two reads

    def preempted():
        return read() + (slow.pop() if slow else 0.0)

    scale.read = preempted
    scale.to_clock(0.0)
    assert not slow  # the slow read happened, then the careful one
    assert scale.offset == offset  # re-measured, not adopted
    wall.step = 1.0
    assert scale.to_clock(10.0) == pytest.approx(10.0 + offset - 1.0, abs=1e-3)
    assert scale.offset == pytest.approx(offset - 1.0, abs=1e-3)


def test_datetime_absolute_time(ts):
    when = datetime.fromtimestamp(1003.0) + timedelta(microseconds=500_000)
    tid = ts.schedule_task(noop, absolute_time=when)
    assert ts.status(tid)["scheduled_execution"] == 1003.5
    assert ts.timer.current_time == 1003.5


# -- a cheap import ------------------------------------------------------------------------
def test_import_loads_no_heavy_module():
    """``import tempsched_lab.compat`` loads none of the data-science stack (its time is a
    benchmark: benchmarks/bench_compat.py)."""
    heavy = ("pandas", "numpy", "matplotlib", "ipywidgets", "pyarrow")
    code = (
        "import sys, tempsched_lab.compat\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
