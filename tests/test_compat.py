"""The reference API facade: tempsched_lab.compat.TemporalScheduler."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time

import pytest

from tempsched_lab import PastTimeError, Scheduler, SchedulerClosedError, TaskState, VirtualClock
from tempsched_lab.compat import TemporalScheduler

TIMEOUT = 5.0


@pytest.fixture
def clock():
    return VirtualClock(start=1000.0)


@pytest.fixture
def ts(clock):
    facade = TemporalScheduler(clock=clock)
    yield facade
    facade.shutdown()


@pytest.fixture
def real():
    facade = TemporalScheduler()
    yield facade
    facade.shutdown()


def noop(*args, **kwargs):
    return None


def other(*args, **kwargs):
    return None


def decisions(facade):
    frame = facade.log.to_frame()
    return frame[frame["kind"].isin(["schedule", "reject"])]


# -- the 8 cases ------------------------------------------------------------------------
def test_eight_cases_ids_and_log(ts):
    with pytest.raises(ValueError):  # 1: in the past
        ts.schedule_task(noop, absolute_time=999.0)
    ids = [
        ts.schedule_task(noop, absolute_time=1010.0),  # 2: nothing scheduled -> 0
        ts.schedule_task(noop, absolute_time=1005.0),  # 3: earlier than head -> 1
        ts.schedule_task(noop, absolute_time=1020.0, task_args=(1,)),  # 4: new point -> 2
        ts.schedule_task(noop, absolute_time=1005.0),  # 5: duplicate of head -> 1
        ts.schedule_task(noop, absolute_time=1005.0, task_args=(9,)),  # 6: joins head -> 3
        ts.schedule_task(noop, absolute_time=1020.0, task_args=(1,)),  # 7: dup in queue -> 2
        ts.schedule_task(other, absolute_time=1020.0, task_kwargs={"k": 1}),  # 8 -> 4
    ]
    assert ids == [0, 1, 2, 1, 3, 2, 4]  # no ID burned by case 5
    rows = decisions(ts)
    assert rows["case"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert (rows["origin"] == "compat").all()
    assert rows["kind"].tolist() == ["reject"] + ["schedule"] * 7
    dup = rows[rows["case"].isin([5, 7])]
    assert dup["dup_of"].tolist() == [1, 2]
    # runs in time order, same-time tasks in insertion order
    order = []
    for tid in range(5):
        assert ts.status(tid)["id"] == tid
    ts.scheduler.log.tap(lambda row: row["kind"] == "start" and order.append(row["task_id"]))
    ts.clock.run_until_idle()
    assert order == [1, 3, 0, 2, 4]


def test_ids_consecutive_after_duplicates(ts):
    first = ts.schedule_task(noop, absolute_time=1001.0)
    for _ in range(3):
        assert ts.schedule_task(noop, absolute_time=1001.0) == first  # case 5
    assert ts.schedule_task(noop, absolute_time=1002.0) == first + 1
    for _ in range(3):
        assert ts.schedule_task(noop, absolute_time=1002.0) == first + 1  # case 7
    assert ts.schedule_task(noop, absolute_time=1003.0) == first + 2


def test_period_is_part_of_the_duplicate_key(ts):
    one_shot = ts.schedule_task(noop, absolute_time=1001.0)
    periodic = ts.schedule_task(noop, absolute_time=1001.0, period=1.0)
    assert periodic != one_shot
    assert ts.status(periodic)["periodic"] and not ts.status(one_shot)["periodic"]


def test_unequal_when_comparison_raises(ts):
    class Touchy:
        def __eq__(self, other):
            raise ValueError("ambiguous")

        __hash__ = object.__hash__

    a = ts.schedule_task(noop, absolute_time=1001.0, task_args=(Touchy(),))
    b = ts.schedule_task(noop, absolute_time=1001.0, task_args=(Touchy(),))
    assert (a, b) == (0, 1)


# -- the reference's three ValueErrors -------------------------------------------------
def test_three_value_errors(ts):
    with pytest.raises(ValueError, match="no time"):
        ts.schedule_task(noop)
    with pytest.raises(ValueError, match="not both"):
        ts.schedule_task(noop, absolute_time=1001.0, delta_t=1.0)
    with pytest.raises(PastTimeError) as info:
        ts.schedule_task(noop, absolute_time=999.0)
    assert isinstance(info.value, ValueError)
    assert info.value.decision.case == 1
    assert ts.scheduler.pending == 0


def test_time_epsilon_validated_and_kept(clock):
    assert TemporalScheduler(clock=clock).time_epsilon is None
    facade = TemporalScheduler(0.05, clock=clock)
    assert facade.time_epsilon == 0.05
    assert TemporalScheduler(0, clock=clock).time_epsilon == 0.0
    for bad in (-0.01, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            TemporalScheduler(bad, clock=clock)
    for bad in ("0.01", True):
        with pytest.raises(TypeError):
            TemporalScheduler(bad, clock=clock)


def test_wraps_a_scheduler(ts, clock):
    assert isinstance(ts.scheduler, Scheduler)
    assert ts.log is ts.scheduler.log
    assert ts.clock is clock
    assert "compat" in repr(ts)


# -- timing ---------------------------------------------------------------------------
def test_delta_t_and_period_only(ts, clock):
    runs = []
    a = ts.schedule_task(lambda: runs.append(("a", clock.now())), delta_t=2.5)
    p = ts.schedule_task(lambda: runs.append(("p", clock.now())), period=1.5)
    assert ts.status(a)["scheduled_execution"] == 1002.5
    assert ts.status(p)["scheduled_execution"] == 1001.5  # first run: now + period
    clock.run_until(1003.0)
    assert runs == [("p", 1001.5), ("a", 1002.5), ("p", 1003.0)]


def test_delta_t_with_period_and_negative_delta_t(ts, clock):
    runs = []
    ts.schedule_task(lambda: runs.append(clock.now()), delta_t=5, period=2)
    clock.run_until(1009.0)
    assert runs == [1005.0, 1007.0, 1009.0]  # first run after delta_t (the reference ignores it)
    with pytest.raises(PastTimeError):  # the reference runs it at once
        ts.schedule_task(noop, delta_t=-1)
    zero = ts.schedule_task(noop, delta_t=0)
    assert ts.status(zero)["scheduled_execution"] == clock.now()


def test_invalid_period_rejected(ts):
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            ts.schedule_task(noop, period=bad)
    assert ts.scheduler.pending == 0


def test_periodic_fixed_rate_and_previous_execution(ts, clock):
    runs = []
    tid = ts.schedule_task(lambda: runs.append(clock.now()), absolute_time=1010.0, period=2.5)
    st = ts.status(tid)
    assert st == {
        "id": tid,
        "periodic": True,
        "period": 2.5,
        "scheduled_execution": 1010.0,
        "previous_execution": None,
    }
    clock.run_until(1020.0)
    assert runs == [1010.0, 1012.5, 1015.0, 1017.5, 1020.0]  # exact multiples: no drift
    st = ts.status(tid)
    assert st["scheduled_execution"] == 1022.5
    assert st["previous_execution"] == 1020.0
    assert ts.status(tid)["id"] == tid  # same ID across runs
    schedules = decisions(ts)
    assert schedules["origin"].tolist() == ["compat"] + ["periodic"] * 5


def test_status_inside_a_periodic_run(ts, clock):
    seen = []
    tid = ts.schedule_task(lambda: seen.append(ts.status(tid)), absolute_time=1001.0, period=2.0)
    clock.run_until(1003.0)
    assert [(s["previous_execution"], s["scheduled_execution"]) for s in seen] == [
        (1001.0, 1003.0),
        (1003.0, 1005.0),
    ]


def test_status_keys_and_one_shot(ts, clock):
    tid = ts.schedule_task(noop, absolute_time=1001.0, comment="hello")
    st = ts.status(tid)
    assert list(st) == ["id", "periodic", "period", "scheduled_execution", "previous_execution"]
    assert st == {
        "id": tid,
        "periodic": False,
        "period": None,
        "scheduled_execution": 1001.0,
        "previous_execution": None,
    }
    assert decisions(ts)["label"].tolist() == ["hello"]
    clock.run_until(1001.0)
    with pytest.raises(KeyError):  # fired
        ts.status(tid)
    for unknown in (99, -1, "0", None, 0.0, True):
        with pytest.raises(KeyError):
            ts.status(unknown)


def test_status_key_error_inside_one_shot_run(ts, clock):
    errors = []

    def probe():
        try:
            ts.status(tid)
        except KeyError as exc:
            errors.append(exc)

    tid = ts.schedule_task(probe, absolute_time=1001.0)
    clock.run_until_idle()
    assert len(errors) == 1


def test_events_are_set_never_cleared(ts, clock):
    once, every = threading.Event(), threading.Event()
    ts.schedule_task(once, absolute_time=1002.0)
    pid = ts.schedule_task(every, absolute_time=1001.0, period=1.0)
    clock.run_until(1001.5)
    assert every.is_set() and not once.is_set()
    clock.run_until(1004.0)
    assert once.is_set() and every.is_set()
    assert ts.status(pid)["previous_execution"] == 1004.0
    frame = ts.log.to_frame()
    assert (frame["kind"] == "event_set").sum() == 5
    assert (frame["kind"] == "start").sum() == 0  # set inline, no thread


def test_task_args_and_kwargs(ts, clock):
    got = []
    ts.schedule_task(
        lambda *a, **k: got.append((a, k)), delta_t=1, task_args=[1, 2], task_kwargs={"x": 3}
    )
    clock.run_until_idle()
    assert got == [((1, 2), {"x": 3})]


# -- cancel -----------------------------------------------------------------------------
def test_cancel_task(ts, clock):
    a = ts.schedule_task(noop, absolute_time=1001.0)
    b = ts.schedule_task(noop, absolute_time=1002.0)
    assert ts.cancel_task(b) is True
    assert ts.cancel_task(b) is False
    for bad in (99, -1, "a", None, 1.5, True, object()):
        assert ts.cancel_task(bad) is False
    with pytest.raises(KeyError):
        ts.status(b)
    clock.run_until_idle()
    assert ts.cancel_task(a) is False  # already fired
    results = ts.log.to_frame().query("kind == 'cancel'")["result"].tolist()
    assert results[:2] == ["cancelled", "already_done"]


def test_cancel_one_shot_in_flight_stops_nothing(ts, clock):
    answers = []
    tid = ts.schedule_task(lambda: answers.append(ts.cancel_task(tid)), delta_t=1)
    clock.run_until_idle()
    assert answers == [False]


def test_periodic_task_cancels_itself(ts, clock):
    runs, answers = [], []

    def tick():
        runs.append(clock.now())
        if len(runs) == 3:
            answers.append(ts.cancel_task(tid))
            answers.append(ts.cancel_task(tid))  # already stopped

    tid = ts.schedule_task(tick, absolute_time=1001.0, period=1.0)
    clock.run_until(1010.0)
    assert runs == [1001.0, 1002.0, 1003.0]
    assert answers == [True, False]
    with pytest.raises(KeyError):
        ts.status(tid)
    assert ts.scheduler.pending == 0


def test_concurrent_cancels_of_a_run_in_flight_stop_once(ts, clock):
    answers = []

    def tick():
        threads = [
            threading.Thread(target=lambda: answers.append(ts.cancel_task(tid))) for _ in range(4)
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join(TIMEOUT)

    tid = ts.schedule_task(tick, absolute_time=1001.0, period=1.0)
    clock.run_until(1005.0)
    assert sorted(answers) == [False, False, False, True]
    assert ts.cancel_task(tid) is False
    assert ts.scheduler.status(tid).state is TaskState.CANCELLED


def test_raising_periodic_task_keeps_running_and_is_logged(ts, clock):
    def boom():
        raise RuntimeError("boom")

    tid = ts.schedule_task(boom, absolute_time=1001.0, period=1.0)
    clock.run_until(1003.0)
    errors = ts.log.to_frame().query("kind == 'error'")
    assert errors["task_id"].tolist() == [tid] * 3
    assert errors["error"].str.contains("boom").all()
    assert ts.status(tid)["scheduled_execution"] == 1004.0


def test_periodic_self_cancel_real_clock(real):
    runs = []
    third = threading.Event()

    def tick():
        runs.append(1)
        if len(runs) == 3:
            assert real.cancel_task(tid) is True
            third.set()

    tid = real.schedule_task(tick, delta_t=0.01, period=0.02)
    assert third.wait(TIMEOUT)
    time.sleep(0.15)  # several periods: nothing else may run
    assert len(runs) == 3
    with pytest.raises(KeyError):
        real.status(tid)


# -- shutdown ---------------------------------------------------------------------------
def test_shutdown_drops_pending_and_closes(ts, clock):
    tid = ts.schedule_task(noop, absolute_time=1001.0)
    assert ts.shutdown() is None
    assert ts.scheduler.closed
    with pytest.raises(KeyError):
        ts.status(tid)
    assert ts.cancel_task(tid) is False
    with pytest.raises(SchedulerClosedError):
        ts.schedule_task(noop, absolute_time=1002.0)
    with pytest.raises(RuntimeError):  # SchedulerClosedError is a RuntimeError
        ts.schedule_task(noop, delta_t=1)
    ts.shutdown()  # idempotent
    ts.shutdown(wait_until_done=False)


def test_shutdown_waits_for_runs_in_flight(real):
    started, finished = threading.Event(), threading.Event()

    def slow():
        started.set()
        time.sleep(0.2)
        finished.set()

    real.schedule_task(slow, delta_t=0.01)
    assert started.wait(TIMEOUT)
    real.shutdown(wait_until_done=True)
    assert finished.is_set()


def test_shutdown_from_inside_a_task_real_clock(real):
    after, finished = threading.Event(), threading.Event()

    def stopper():
        real.shutdown()  # the reference deadlocks here
        after.set()
        time.sleep(0.1)
        finished.set()

    real.schedule_task(stopper, delta_t=0.01)
    real.schedule_task(noop, delta_t=60)
    assert after.wait(TIMEOUT)
    assert real.scheduler.closed
    assert real.scheduler.pending == 0
    real.shutdown()  # from outside: still waits for the run in flight
    assert finished.is_set()


def test_shutdown_from_inside_a_periodic_task_virtual(ts, clock):
    runs = []

    def tick():
        runs.append(clock.now())
        ts.shutdown(wait_until_done=True)

    ts.schedule_task(tick, absolute_time=1001.0, period=1.0)
    clock.run_until(1005.0)
    assert runs == [1001.0]
    assert ts.scheduler.closed


def test_shutdown_without_waiting(real):
    started, release = threading.Event(), threading.Event()

    def blocked():
        started.set()
        release.wait(TIMEOUT)

    real.schedule_task(blocked, delta_t=0.01)
    assert started.wait(TIMEOUT)
    real.shutdown(wait_until_done=False)  # returns while the run is in flight
    assert real.scheduler.closed and real.scheduler.running == 1
    threading.Timer(0.05, release.set).start()
    real.shutdown()  # waits for it
    assert real.scheduler.running == 0 and release.is_set()


def test_program_without_shutdown_exits():
    code = (
        "from tempsched_lab.compat import TemporalScheduler\n"
        "ts = TemporalScheduler()\n"
        "ts.schedule_task(print, delta_t=3600, period=1.0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=60, capture_output=True)
    assert done.returncode == 0, done.stderr


def test_keep_alive_thread_until_shutdown():
    facade = TemporalScheduler(keep_alive=True)
    try:
        keeper = facade._keeper
        assert keeper is not None and keeper.is_alive() and not keeper.daemon
    finally:
        facade.shutdown()
    keeper.join(TIMEOUT)
    assert not keeper.is_alive()


def test_worker_is_daemon(real):
    workers = [t for t in threading.enumerate() if t.name.startswith("tempsched-worker")]
    assert workers and all(t.daemon for t in workers)


# -- real clock: order and never before due --------------------------------------------
def test_real_clock_order_and_never_early(real):
    now = real.clock.now
    seen = []
    done = threading.Event()
    base = now()
    dues = {"b": base + 0.06, "a": base + 0.03, "c": base + 0.09}

    def run(name):
        seen.append((name, now(), time.time()))
        if len(seen) == 3:
            done.set()

    ids = {
        name: real.schedule_task(run, absolute_time=due, task_args=(name,))
        for name, due in dues.items()
    }
    late = real.schedule_task(run, delta_t=0.05, task_args=("d",))
    real.cancel_task(late)
    assert done.wait(TIMEOUT)
    # handed out in due order (each run then starts in a thread of its own, which the OS may
    # schedule out of order on a loaded machine: 'c' before 'b', 30 ms apart, seen in CI)
    frame = real.log.to_frame()
    dispatched = frame.query("kind == 'dispatch'")["task_id"].tolist()
    assert dispatched == [ids["a"], ids["b"], ids["c"]]
    assert sorted(name for name, _, _ in seen) == ["a", "b", "c"]
    for name, at, _ in seen:
        assert at >= dues[name]  # never before its due time
    starts = frame.query("kind == 'start'")
    assert (starts["lateness"] >= 0).all()


def test_real_clock_event_and_executor_pool():
    facade = TemporalScheduler(executor="pool", max_workers=2)
    try:
        ev = threading.Event()
        facade.schedule_task(ev, delta_t=0.01)
        assert ev.wait(TIMEOUT)
    finally:
        facade.shutdown()


def test_log_false_keeps_status_working(clock):
    facade = TemporalScheduler(clock=clock, log=False)
    try:
        tid = facade.schedule_task(noop, absolute_time=1001.0, period=1.0)
        clock.run_until(1003.0)
        assert facade.status(tid)["previous_execution"] == 1003.0
        assert len(facade.log) <= 1
    finally:
        facade.shutdown()


# -- side by side with the reference ----------------------------------------------------
def _program(sched, base):
    """A few calls whose times are far enough ahead that nothing fires."""
    out = {}
    out["ids"] = [
        sched.schedule_task(noop, absolute_time=base + 10),  # 2
        sched.schedule_task(noop, absolute_time=base + 5, task_args=(1,)),  # 3
        sched.schedule_task(other, absolute_time=base + 20, task_kwargs={"k": 1}),  # 4
        sched.schedule_task(other, absolute_time=base + 20, task_kwargs={"k": 1}),  # 7
        sched.schedule_task(noop, absolute_time=base + 5, task_args=(2,)),  # 6
        sched.schedule_task(noop, absolute_time=base + 30, period=60.0),  # 4, periodic
        sched.schedule_task(noop, absolute_time=base + 20, comment="x"),  # 8
    ]
    out["status"] = [sched.status(i) for i in range(6)]
    out["cancel"] = [
        sched.cancel_task(2),
        sched.cancel_task(2),
        sched.cancel_task(99),
        sched.cancel_task("x"),
        sched.cancel_task(1),
    ]
    missing = []
    for tid in (1, 2, 99):
        try:
            sched.status(tid)
        except KeyError:
            missing.append(tid)
    out["missing"] = missing
    out["after"] = [sched.status(i) for i in (0, 3, 4, 5)]
    errors = []
    for kwargs in ({}, {"absolute_time": base + 1, "delta_t": 1.0}, {"absolute_time": base - 7200}):
        try:
            sched.schedule_task(noop, **kwargs)
        except ValueError:
            errors.append("ValueError")
    out["errors"] = errors
    out["next_id"] = sched.schedule_task(other, absolute_time=base + 40)
    periodic = sched.schedule_task(other, period=100.0)
    out["period_only"] = sched.status(periodic)["scheduled_execution"] - time.time()
    return out


def test_side_by_side_with_reference():
    reference = pytest.importorskip("temporal_scheduler")
    base = time.time() + 3600.0
    ref = reference.TemporalScheduler()
    ours = TemporalScheduler()
    try:
        expected = _program(ref, base)
        got = _program(ours, base)
    finally:
        with contextlib.suppress(Exception):
            ref.shutdown(wait_until_done=True)
        ours.shutdown()
    assert got["period_only"] == pytest.approx(expected["period_only"], abs=5.0)
    del got["period_only"], expected["period_only"]
    assert got == expected
    assert got["ids"] == [0, 1, 2, 2, 3, 4, 5]
    assert got["missing"] == [1, 2, 99]
    assert got["errors"] == ["ValueError"] * 3
    for st_got, st_exp in zip(got["status"], expected["status"], strict=True):
        assert list(st_got) == list(st_exp)
        assert {k: type(v) for k, v in st_got.items()} == {k: type(v) for k, v in st_exp.items()}
    assert not ref.timer.is_alive()


def test_the_facade_refuses_a_period_below_the_tick_with_the_core_s_check():
    """One tick check (issue 35): the facade asks requests.py's, so its refusal names the
    remedy as schedule()'s does, and both refuse the same periods."""
    ts = TemporalScheduler(clock=VirtualClock(start=1000.0), queue="wheel")
    with pytest.raises(ValueError) as facade:
        ts.schedule_task(print, delta_t=1.0, period=0.001)
    core = Scheduler(VirtualClock(start=1000.0), queue="wheel")
    with pytest.raises(ValueError) as direct:
        core.schedule(print, delay=1.0, period=0.001)
    assert str(facade.value) == str(direct.value)
    assert "use a smaller tick" in str(facade.value)
    ts.scheduler.shutdown()
    core.shutdown()
