"""The scheduler's behaviour: executors, periodic tasks, cancel, status, lifecycle, bad input."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from tempsched_lab import (
    CancelResult,
    LoopError,
    PastTimeError,
    RealClock,
    Scheduler,
    SchedulerClosedError,
    TaskState,
    VirtualClock,
    audit,
)
from tempsched_lab.core.ports import ClockPort
from tempsched_lab.time.clock import DEFAULT_SPIN


def noop(*args, **kwargs):
    return None


def square(x):  # module level: picklable for the process pool
    return x * x


@pytest.fixture
def vs():
    clock = VirtualClock()
    return clock, Scheduler(clock)


# -- clocks ------------------------------------------------------------------------------


def test_real_clock_is_epoch_like_and_monotonic():
    clock = RealClock()
    a = clock.now()
    b = clock.now()
    assert b >= a
    assert abs(a - time.time()) < 5
    aware = datetime.now(timezone.utc) + timedelta(seconds=10)
    assert abs(clock.from_datetime(aware) - (clock.now() + 10)) < 0.5


class _StuckClock(RealClock):
    """A real clock (worker thread and all) whose time stands still at ``t``."""

    def __init__(self, t: float, spin: float) -> None:
        super().__init__()
        self.t = t
        self.spin = spin  # beyond the checked range: the worker watches this clock for ever

    def now(self) -> float:
        return self.t


@pytest.mark.parametrize("spin", [-0.001, 0.02, float("nan"), "0.001", True, None])
def test_real_clock_spin_is_checked(spin):
    with pytest.raises(ValueError, match=r"spin=.*expected seconds between 0 and 0\.01"):
        RealClock(spin=spin)


def test_real_clock_spin_defaults_and_accepts_zero():
    assert RealClock().spin == DEFAULT_SPIN > 0
    assert RealClock(spin=0).spin == 0.0
    with Scheduler(RealClock(spin=0)) as s:  # always sleeps: still runs on time, never early
        ran = threading.Event()
        s.schedule(ran, delay=0.01)
        assert ran.wait(5)


def test_a_worker_watching_the_clock_still_takes_an_earlier_task():
    # The worker watches the clock in a loop for the last `spin` seconds before the head; an
    # earlier task scheduled meanwhile must end that loop (else it waits for the later head).
    clock = _StuckClock(100.0, spin=1_000.0)
    s = Scheduler(clock, executor="inline")
    try:
        later = threading.Event()
        s.schedule(later, at=150.0)  # within `spin`: the worker watches the clock for it
        time.sleep(0.05)
        now = threading.Event()
        s.schedule(now, at=100.0)  # due now: must run although the clock never reaches 150
        assert now.wait(5)
        assert not later.is_set()
    finally:
        done = threading.Thread(target=s.shutdown, kwargs={"timeout": 5})
        done.start()
        done.join(10)
        assert not done.is_alive(), "shutdown() hung while the worker watched the clock"


def test_shutdown_ends_a_worker_watching_the_clock():
    s = Scheduler(_StuckClock(100.0, spin=1_000.0), executor="inline")
    s.schedule(noop, at=150.0)
    time.sleep(0.05)
    stopper = threading.Thread(target=s.shutdown, kwargs={"timeout": 5})
    stopper.start()
    stopper.join(10)
    assert not stopper.is_alive(), "shutdown() hung while the worker watched the clock"
    assert not s._driver.thread.is_alive()


def test_virtual_clock_fires_each_group_at_its_own_time(vs):
    clock, s = vs
    seen = []
    for t in (3.0, 1.0, 2.0):
        s.schedule(lambda t=t: seen.append((t, clock.now())), at=t)
    assert clock.step() == 1.0
    assert clock.advance(5) == 6.0
    assert seen == [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]
    assert clock.step() is None


def test_zero_delay_work_runs_at_the_next_step(vs):
    clock, s = vs
    order = []

    def parent():
        order.append("parent")
        s.schedule(lambda: order.append("child"), delay=0)

    s.schedule(parent, at=1)
    clock.step()
    assert order == ["parent"]
    clock.step()
    assert order == ["parent", "child"]
    assert clock.now() == 1.0


def test_endless_zero_delay_loop_raises_instead_of_hanging():
    clock = VirtualClock(max_steps_at_same_time=50)
    s = Scheduler(clock)

    def again():
        s.schedule(again, delay=0)

    s.schedule(again, delay=0)
    with pytest.raises(LoopError, match="zero-delay"):
        clock.run_until(1)


def test_run_until_idle_guards_against_periodic_tasks(vs):
    clock, s = vs
    s.schedule(noop, period=1)
    with pytest.raises(LoopError, match="periodic"):
        clock.run_until_idle(max_steps=20)


def test_virtual_clock_rejects_going_backwards(vs):
    clock, _ = vs
    clock.advance(2)
    with pytest.raises(ValueError, match="backwards"):
        clock.run_until(1)
    with pytest.raises(ValueError, match="dt=-1"):
        clock.advance(-1)


def test_virtual_clock_plays_at_a_rate():
    clock = VirtualClock()
    s = Scheduler(clock)
    done = threading.Event()
    s.schedule(done, at=2.0)
    clock.rate = 50.0  # 2 virtual seconds in ~40 ms of real time
    try:
        assert done.wait(10)
        assert clock.now() >= 2.0
    finally:
        clock.pause()
    assert clock.rate == 0
    stopped_at = clock.now()
    time.sleep(0.05)
    assert clock.now() == stopped_at


# -- executors -------------------------------------------------------------------------------


@pytest.mark.parametrize("executor", ["pool", "thread", "inline"])
def test_real_clock_runs_in_order_and_never_early(executor):
    clock = RealClock()
    runs = []
    lock = threading.Lock()

    def record(i, due):
        with lock:
            runs.append((i, clock.now() - due))

    with Scheduler(clock, executor=executor) as s:
        base = clock.now() + 0.05
        for i in reversed(range(20)):
            due = base + i * 0.01
            s.schedule(record, at=due, args=(i, due))
        assert s.wait_idle(timeout=10)
    assert sorted(i for i, _ in runs) == list(range(20))
    assert all(late >= 0 for _, late in runs)
    if executor != "thread":  # thread start order is the OS's business
        assert [i for i, _ in runs] == list(range(20))
    assert audit(s.log.to_frame()).ok


def test_events_are_set_inline_and_never_cleared():
    with Scheduler() as s:
        ev = threading.Event()
        s.schedule(ev, delay=0.01)
        assert ev.wait(5)
        assert s.wait_idle(5)
        assert ev.is_set()
        frame = s.log.to_frame()
        row = frame.loc[frame["kind"] == "event_set"].iloc[0]
        assert row["thread"] == s.worker_thread.name  # set by the worker, not a runner thread


def test_process_pool_executor_runs_tasks():
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        with Scheduler(executor=pool) as s:
            ids = [s.schedule(square, delay=0.01, args=(i,)) for i in range(3)]
            assert s.wait_idle(timeout=60)
        frame = s.log.to_frame()
    finished = frame.loc[frame["kind"] == "finish"]
    assert sorted(finished["task_id"].astype(int)) == ids
    assert set(finished["result"].astype(str)) == {"int"}
    assert all(s.status(i).state is TaskState.DONE for i in ids)


def test_a_raising_task_does_not_stop_the_others(vs):
    clock, s = vs
    ran = []

    def boom():
        raise RuntimeError("bad task")

    bad = s.schedule(boom, at=1)
    good = s.schedule(ran.append, at=1, args=("after",))
    clock.run_until_idle()
    assert ran == ["after"]
    assert s.status(bad).state is TaskState.FAILED
    assert s.status(good).state is TaskState.DONE
    assert isinstance(s.exception(bad), RuntimeError)
    err = s.log.to_frame().query("kind == 'error'").iloc[0]
    assert err["error"] == "RuntimeError: bad task"
    assert "Traceback" in err["detail"] and "boom" in err["detail"]


def test_base_exceptions_in_tasks_do_not_kill_the_worker():
    with Scheduler(executor="inline") as s:
        s.schedule(lambda: (_ for _ in ()).throw(SystemExit(3)), delay=0.01)
        done = threading.Event()
        s.schedule(done, delay=0.05)
        assert done.wait(5)
        assert s.worker_error is None
        assert isinstance(s.exception(0), SystemExit)


# -- periodic tasks ----------------------------------------------------------------------------


def test_fixed_rate_periodic_keeps_its_id_and_grid(vs):
    clock, s = vs
    times = []
    tid = s.schedule(lambda: times.append(clock.now()), at=1.0, period=0.5)
    clock.run_until(3.0)
    assert times == [1.0, 1.5, 2.0, 2.5, 3.0]
    frame = s.log.to_frame()
    rearms = frame.loc[(frame["kind"] == "schedule") & (frame["origin"] == "periodic")]
    assert set(rearms["task_id"].astype(int)) == {tid}
    assert s.status(tid).next_due == 3.5


def test_fixed_rate_has_no_drift_under_slow_runs():
    clock = VirtualClock()
    s = Scheduler(clock)
    starts = []

    def slow():  # each run "takes" 0.3 s of a 1 s period
        starts.append(clock.now())
        clock.elapse(0.3)  # simulate run time passing on the virtual clock

    s.schedule(slow, at=1.0, period=1.0)
    clock.run_until(5.0)
    assert starts == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_fixed_delay_periodic_measures_from_the_end_of_a_run():
    clock = VirtualClock()
    s = Scheduler(clock)
    starts = []

    def slow():
        starts.append(clock.now())
        clock.elapse(0.25)

    s.schedule(slow, at=1.0, period=1.0, fixed_delay=True)
    clock.run_until(4.0)
    assert starts == [1.0, 2.25, 3.5]


@pytest.mark.parametrize(
    ("policy", "expected_starts", "expected_missed"),
    [
        ("skip", [1.0, 4.0, 5.0], 2),  # runs due at 2 and 3 are skipped
        ("run_once", [1.0, 3.5, 4.0, 5.0], 1),  # one late run (the slot of 3) now
        ("catch_up", [1.0, 3.5, 3.5, 4.0, 5.0], 0),  # both late runs back to back
    ],
)
def test_misfire_policies_after_an_overrun(policy, expected_starts, expected_missed):
    clock = VirtualClock()
    s = Scheduler(clock, misfire=policy)
    starts = []

    def run():
        starts.append(clock.now())
        if len(starts) == 1:
            clock.elapse(2.5)  # the first run overruns to t=3.5

    tid = s.schedule(run, at=1.0, period=1.0)
    clock.run_until(5.0)
    assert starts == expected_starts
    frame = s.log.to_frame()
    missed = frame.loc[frame["kind"] == "missed"]
    assert int(missed["missed"].sum()) == expected_missed
    if expected_missed:
        assert set(missed["result"].astype(str)) == {policy}
    assert s.status(tid).state is TaskState.PENDING
    assert audit(frame).ok


def test_a_periodic_task_can_cancel_itself(vs):
    clock, s = vs
    runs = []

    def run():
        runs.append(clock.now())
        if len(runs) == 3:
            assert s.cancel(tid) is CancelResult.RUNNING

    tid = s.schedule(run, at=1.0, period=1.0)
    clock.run_until(10)
    assert runs == [1.0, 2.0, 3.0]
    assert s.status(tid).state is TaskState.CANCELLED
    assert audit(s.log.to_frame()).ok


def test_real_clock_periodic_cancel_from_inside_stops_it():
    runs = []
    with Scheduler() as s:
        done = threading.Event()

        def run():
            runs.append(time.monotonic())
            if len(runs) == 3:
                s.cancel(tid)
                done.set()

        tid = s.schedule(run, delay=0.01, period=0.01)
        assert done.wait(5)
        time.sleep(0.1)
    assert len(runs) == 3
    assert s.status(tid).state is TaskState.CANCELLED


# -- cancel and status -------------------------------------------------------------------------


def test_cancel_reports_what_happened(vs):
    clock, s = vs
    a = s.schedule(noop, at=1)
    b = s.schedule(noop, at=2)
    assert s.cancel(a) is CancelResult.CANCELLED
    assert bool(CancelResult.CANCELLED) and not bool(CancelResult.NOT_FOUND)
    clock.run_until_idle()
    assert s.cancel(b) is CancelResult.ALREADY_DONE
    assert s.cancel(12345) is CancelResult.NOT_FOUND
    with pytest.raises(TypeError, match="task_id='x'"):
        s.cancel("x")
    frame = s.log.to_frame().query("kind == 'cancel'")
    assert frame["result"].astype(str).tolist() == ["cancelled", "already_done", "not_found"]
    assert frame["where"].astype(object).tolist()[0] == "head"


def test_cancelling_the_head_never_fires_another_task_early(vs):
    clock, s = vs
    seen = []
    a = s.schedule(seen.append, at=1, args=("a",))
    s.schedule(seen.append, at=5, args=("b",))
    s.cancel(a)
    clock.run_until(4.9)
    assert seen == []
    clock.run_until(5)
    assert seen == ["b"]


def test_status_through_a_task_life():
    clock = VirtualClock()
    s = Scheduler(clock)
    inside = {}

    def run():
        inside["status"] = s.status(tid)

    tid = s.schedule(run, at=2, label="my task")
    st = s.status(tid)
    assert (st.state, st.next_due, st.label) == (TaskState.PENDING, 2.0, "my task")
    clock.run_until_idle()
    assert inside["status"].state is TaskState.RUNNING
    assert s.status(tid).state is TaskState.DONE
    with pytest.raises(KeyError, match="no such task"):
        s.status(99)


# -- lifecycle ---------------------------------------------------------------------------------


def test_shutdown_is_idempotent_and_returns_dropped_tasks():
    s = Scheduler()
    a = s.schedule(noop, delay=60)
    b = s.schedule(noop, delay=120, period=5)
    dropped = s.shutdown()
    assert sorted(t.id for t in dropped) == [a, b]
    assert s.shutdown() == []
    assert s.status(a).state is TaskState.DROPPED
    with pytest.raises(SchedulerClosedError, match="shut down"):
        s.schedule(noop, delay=1)
    report = audit(s.log.to_frame())
    assert report.ok and report.ended == 2


def test_shutdown_from_inside_a_task_raises_instead_of_deadlocking():
    errors = []
    with Scheduler() as s:
        done = threading.Event()

        def task():
            try:
                s.shutdown()
            except RuntimeError as exc:
                errors.append(str(exc))
            done.set()

        s.schedule(task, delay=0.01)
        assert done.wait(5)
    assert errors and "deadlock" in errors[0]


def test_shutdown_wait_false_from_inside_a_task_works():
    s = Scheduler()
    done = threading.Event()

    def task():
        s.shutdown(wait=False)
        done.set()

    s.schedule(task, delay=0.01)
    s.schedule(noop, delay=30)
    assert done.wait(5)
    assert s.closed


def test_shutdown_without_cancel_lets_pending_tasks_run():
    ran = []
    s = Scheduler()
    s.schedule(ran.append, delay=0.05, args=(1,))
    s.schedule(ran.append, delay=0.1, args=(2,))
    assert s.shutdown(cancel_pending=False, timeout=10) == []
    assert ran == [1, 2]
    assert s.closed


def test_context_manager_shuts_down():
    with Scheduler() as s:
        s.schedule(noop, delay=30)
    assert s.closed
    assert not s.worker_thread.is_alive()


def test_a_dead_worker_makes_schedule_raise_with_the_cause():
    s = Scheduler()
    # what the worker calls, through the scheduler's clock port, if its loop ever fails
    ClockPort(s).driver_died(MemoryError("simulated"))
    with pytest.raises(SchedulerClosedError, match="worker died") as info:
        s.schedule(noop, delay=1)
    assert isinstance(info.value.__cause__, MemoryError)
    assert s.closed and s.worker_error is info.value.__cause__
    s.shutdown(wait=True, timeout=5)
    assert not s.worker_thread.is_alive()


def test_failed_thread_start_is_logged_and_the_worker_survives(monkeypatch):
    with Scheduler(executor="thread") as s:
        real_start = threading.Thread.start
        calls = {"n": 0}

        def flaky_start(self):
            if self.name.startswith("tempsched-run-") and calls["n"] == 0:
                calls["n"] += 1
                raise RuntimeError("can't start new thread")
            return real_start(self)

        monkeypatch.setattr(threading.Thread, "start", flaky_start)
        bad = s.schedule(noop, delay=0.01)
        done = threading.Event()
        s.schedule(done, delay=0.05)
        assert done.wait(5)
        assert s.wait_idle(5)
        assert s.status(bad).state is TaskState.FAILED
        assert s.worker_error is None


def test_named_scheduler_replaces_a_live_one_with_a_warning():
    first = Scheduler(name="cell-1")
    with pytest.warns(UserWarning, match="cell-1"):
        second = Scheduler(name="cell-1")
    assert first.closed and not second.closed
    second.shutdown()


# -- bad input -----------------------------------------------------------------------------


BAD = [
    ({"action": 42, "delay": 1}, TypeError, "action=42"),
    ({"action": noop, "at": 1.0, "delay": 1.0}, ValueError, "at=1.0 and delay=1.0"),
    ({"action": noop}, ValueError, "give a time"),
    ({"action": noop, "at": float("nan")}, ValueError, "at=nan"),
    ({"action": noop, "delay": float("inf")}, ValueError, "delay=inf"),
    ({"action": noop, "at": Decimal("1.5")}, TypeError, "at=Decimal"),
    ({"action": noop, "delay": True}, TypeError, "delay=True"),
    ({"action": noop, "at": 1e300}, ValueError, "at=1e\\+300"),
    ({"action": noop, "delay": 1e12}, ValueError, "delay=1000000000000"),
    ({"action": noop, "delay": 1, "period": 0}, ValueError, "period=0"),
    ({"action": noop, "delay": 1, "period": -1}, ValueError, "period=-1"),
    ({"action": noop, "delay": 1, "period": float("nan")}, ValueError, "period=nan"),
    ({"action": noop, "delay": 1, "args": "abc"}, TypeError, "args='abc'"),
    ({"action": noop, "delay": 1, "kwargs": [1, 2]}, TypeError, "kwargs=\\[1, 2\\]"),
    ({"action": noop, "delay": 1, "label": 5}, TypeError, "label=5"),
    ({"action": noop, "delay": 1, "period": 1, "misfire": "later"}, ValueError, "misfire"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD)
def test_bad_input_raises_at_the_call_and_stores_nothing(kwargs, error, message):
    clock = VirtualClock(start=100.0)
    s = Scheduler(clock)
    keep = s.schedule(noop, delay=1)
    action = kwargs.pop("action")
    with pytest.raises(error, match=message):
        s.schedule(action, **kwargs)
    assert len(s.queue) == 1 and s.status(keep).state is TaskState.PENDING
    assert s.schedule(noop, delay=2) == keep + 1  # still working, no burned ID
    frame = s.log.to_frame()
    reject = frame.loc[frame["kind"] == "reject"].iloc[0]
    assert pd.isna(reject["case"]) and error.__name__ in reject["error"]


def test_past_time_is_case_1_and_logged(vs):
    clock, s = vs
    clock.advance(10)
    with pytest.raises(PastTimeError, match="in the past"):
        s.schedule(noop, at=5)
    row = s.log.to_frame().iloc[-1]
    assert row["kind"] == "reject" and row["case"] == 1


def test_datetime_at_aware_and_naive():
    clock = RealClock()
    with Scheduler(clock) as s:
        aware = datetime.now(timezone.utc) + timedelta(seconds=30)
        naive = datetime.now() + timedelta(seconds=40)
        a = s.schedule(noop, at=aware)
        b = s.schedule(noop, at=naive)
        assert abs(s.status(a).next_due - (clock.now() + 30)) < 1
        assert abs(s.status(b).next_due - (clock.now() + 40)) < 1


def test_ambiguous_arguments_schedule_fine(vs):
    clock, s = vs
    got = []
    frame = pd.DataFrame({"x": [1, 2]})
    s.schedule(lambda df, arr: got.append((len(df), arr.sum())), at=1,
               args=(frame, np.arange(4)))  # fmt: skip
    s.schedule(lambda df, arr: got.append((len(df), arr.sum())), at=1,
               args=(frame.copy(), np.arange(4)))  # fmt: skip
    clock.run_until_idle()
    assert got == [(2, 6), (2, 6)]


def test_kwargs_and_labels_reach_the_log(vs):
    clock, s = vs
    got = {}
    s.schedule(lambda **kw: got.update(kw), at=1, kwargs={"a": 1}, label="updater")
    clock.run_until_idle()
    assert got == {"a": 1}
    assert set(s.log.to_frame()["label"].dropna().astype(str)) == {"updater"}


def test_a_second_shutdown_with_wait_still_waits_for_runs_in_flight():
    s = Scheduler(executor="thread")
    started = threading.Event()

    def slow():
        started.set()
        time.sleep(0.3)

    s.schedule(slow, delay=0.01)
    assert started.wait(5)
    s.shutdown(wait=False)
    s.shutdown(wait=True)
    assert s.running == 0


def test_status_of_a_periodic_run_in_flight_and_a_second_cancel():
    clock = VirtualClock()
    s = Scheduler(clock)
    seen = {}

    def run():
        seen["status"] = s.status(tid)
        seen["first"] = s.cancel(tid)
        seen["second"] = s.cancel(tid)

    tid = s.schedule(run, at=1.0, period=0.5)
    clock.run_until(2.0)
    st = seen["status"]
    assert (st.state, st.next_due, st.last_due) == (TaskState.RUNNING, 1.5, 1.0)
    assert seen["first"] is CancelResult.RUNNING
    assert seen["second"] is CancelResult.ALREADY_DONE  # already stopped
    assert s.status(tid).state is TaskState.CANCELLED


def test_fixed_rate_grid_does_not_accumulate_float_rounding_on_an_epoch_clock():
    start = 1_800_000_000.0  # an epoch-sized clock: each + 0.001 would round by ~0.07 us
    clock = VirtualClock(start=start)
    s = Scheduler(clock, log=False)
    dues = []
    s.schedule(lambda: dues.append(clock.now()), at=start + 0.001, period=0.001)
    clock.run_until(start + 2.0)
    assert len(dues) == 2000
    assert dues[-1] == start + 2000 * 0.001  # slot k is base + k * period, not a running sum
    assert abs(dues[-1] - (start + 2.0)) < 1e-6


def test_wait_idle_returns_when_the_last_pending_task_is_cancelled():
    with Scheduler() as s:
        tid = s.schedule(noop, delay=60)
        result = []
        waiter = threading.Thread(target=lambda: result.append(s.wait_idle(timeout=30)))
        waiter.start()
        time.sleep(0.05)
        s.cancel(tid)
        waiter.join(10)
        assert result == [True]


@pytest.mark.slow
def test_a_waiting_thread_never_swallows_the_workers_wake_up():
    # wait_idle() waits on the scheduler's lock too; an earlier task scheduled meanwhile
    # must still wake the worker (two conditions on one lock, see Scheduler.__init__)
    with Scheduler() as s:
        s.schedule(noop, delay=30)
        waiters = [threading.Thread(target=s.wait_idle, args=(2,)) for _ in range(3)]
        for w in waiters:
            w.start()
        time.sleep(0.05)
        ran = threading.Event()
        s.schedule(ran, delay=0.01)  # case 3: earlier than the head
        assert ran.wait(5)
        for w in waiters:
            w.join(10)


# -- calendar tasks and coroutine actions ----------------------------------------------------


def test_a_cron_task_runs_on_weekdays_at_nine_paris_time_for_a_virtual_week():
    pytest.importorskip("cronsim")
    from zoneinfo import ZoneInfo

    paris = ZoneInfo("Europe/Paris")
    start = datetime(2026, 3, 23, 0, 0, tzinfo=paris).timestamp()  # a Monday
    clock = VirtualClock(start=start)
    s = Scheduler(clock)
    runs: list[str] = []

    def note():
        runs.append(datetime.fromtimestamp(clock.now(), paris).strftime("%a %H:%M"))

    tid = s.schedule(note, cron="0 9 * * mon-fri", tz="Europe/Paris")
    st = s.status(tid)
    assert st.trigger == "At 09:00 on Monday through Friday (Europe/Paris)"
    assert len(st.upcoming) == 3 and st.upcoming[0] - st.next_due == 86400
    again = s.schedule_decision(noop, cron="0 9 * * mon-fri", tz="Europe/Paris")
    assert not again.case.is_duplicate  # another action
    same = s.schedule_decision(runs.append, at=st.next_due, cron="0 9 * * 1-5", tz="Europe/Paris")
    assert not same.case.is_duplicate  # another action again; the rule compares equal though
    s.cancel(same.task_id)
    s.cancel(again.task_id)
    clock.run_until(start + 7 * 86400)
    assert runs == ["Mon 09:00", "Tue 09:00", "Wed 09:00", "Thu 09:00", "Fri 09:00"]
    frame = s.log.to_frame()
    assert frame.loc[frame["task_id"] == tid, "trigger"].dropna().nunique() == 1
    assert audit(frame).ok


def test_calendar_arguments_are_checked_at_the_call():
    pytest.importorskip("cronsim")
    s = Scheduler(VirtualClock())
    with pytest.raises(ValueError, match="cron='0 25"):
        s.schedule(noop, cron="0 25 * * *")
    with pytest.raises(ValueError, match="period=5 with cron="):
        s.schedule(noop, cron="@hourly", period=5)
    with pytest.raises(ValueError, match="tz='Europe/Paris' without cron="):
        s.schedule(noop, delay=1, tz="Europe/Paris")


async def _double(x):
    import asyncio

    await asyncio.sleep(0)
    return 2 * x


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_coroutine_action_is_awaited_without_a_loop():
    clock = VirtualClock()
    s = Scheduler(clock)
    tid = s.schedule(_double, at=1.0, args=(21,))
    clock.run_until_idle()
    assert s.status(tid).state is TaskState.DONE
    frame = s.log.to_frame()
    assert frame.loc[frame["kind"] == "finish", "result"].tolist() == ["int"]


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_coroutine_action_runs_on_the_loop_the_scheduler_was_created_in():
    import asyncio

    seen: list[object] = []

    async def where():
        seen.append(asyncio.get_running_loop())

    async def main():
        with Scheduler() as s:
            s.schedule(where, delay=0.01)
            s.schedule(where, delay=0.02, period=0.01)
            for _ in range(200):
                await asyncio.sleep(0.01)
                if len(seen) >= 3:
                    break
            assert s.loop is asyncio.get_running_loop()
        return asyncio.get_running_loop()

    loop = asyncio.run(main())
    assert len(seen) >= 3 and all(x is loop for x in seen)


def test_equal_datetimes_give_one_due_time_so_duplicates_are_found():
    with Scheduler() as s:
        when = datetime.now() + timedelta(seconds=30)
        ids = {s.schedule(noop, at=when) for _ in range(200)}
        assert ids == {0}  # the wall-to-clock offset is read once, not per call
        s.cancel(0)


def test_wall_offset_maps_wall_clock_stamps_onto_the_schedulers_clock(monkeypatch):
    """A remote worker's time.time() stamps + the offset = the scheduler's clock.

    The offset is read with the wall clock bracketing the clock: a slow bracket (a thread
    switch between the reads) is discarded in favour of a tight one (whose first wall read
    counts: late-biased, as every wall conversion of the clocks).
    """
    clock = VirtualClock(start=1000.0)
    s = Scheduler(clock)
    walls = iter([50.0, 50.5, 60.0, 60.000002, 70.0, 70.1])  # brackets of 0.5, 2e-6, 0.1 s
    monkeypatch.setattr(time, "time", lambda: next(walls))
    offset = s._runner.wall_offset()
    monkeypatch.undo()
    assert offset == pytest.approx(1000.0 - 60.0, abs=1e-9)
    with Scheduler() as real:  # a real clock reads like time.time(), from a monotonic source
        offset = real._runner.wall_offset()
        assert abs(real.clock.now() - (time.time() + offset)) < 0.01
