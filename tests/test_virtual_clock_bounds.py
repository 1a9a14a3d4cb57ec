"""A virtual clock never holds its thread for hours, and a playing one can always be paused (R14).

``advance(1e9)`` with a 1 s periodic task is a billion groups: refused after a bounded
amount of work, with a message that says why, keeping what was fired. A clock played
at a rate it cannot keep lags behind instead of holding its lock forever, so
``pause()`` returns. Both fire exactly the rows stepping would.
"""

from __future__ import annotations

import threading
import time

import pytest

from tempsched_lab import LoopError, Scheduler, VirtualClock


def noop(*args):
    return None


def comparable(frame):
    return frame.drop(columns=["wall", "wall_time", "thread"]).reset_index(drop=True)


def periodic_scenario(clock: VirtualClock) -> Scheduler:
    s = Scheduler(clock)
    s.schedule(noop, period=1.0, label="tick")
    s.schedule(noop, period=7.5, label="slow tick")
    for i in range(20):
        s.schedule(noop, at=3.0 + i * 11.0, args=(i,))
    return s


def test_r14_advance_1e9_with_a_1s_periodic_task_is_refused_after_bounded_work():
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(noop, period=1.0)
    with pytest.raises(LoopError) as caught:
        clock.advance(1e9)
    message = str(caught.value)
    assert "periodic tasks alone would fire" in message and "max_steps=None" in message
    assert clock.now() == 10_000.0  # 10,000 groups fired, then the estimate refused the rest
    assert s.log.next_seq == 4 * 10_000 + 1  # schedule row, then 4 rows per run
    assert clock.advance(100) == 10_100.0  # the clock goes on from there
    assert s.log.audit().ok


def test_r14_a_window_beyond_max_steps_raises_once_it_reaches_them():
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(noop, period=1.0)
    with pytest.raises(LoopError, match=r"more than max_steps=500 groups"):
        clock.run_until(10_000.0, max_steps=500)
    assert clock.now() == 500.0
    assert clock.run_until(10_000.0, max_steps=None) == 10_000.0  # no limit: all of it
    assert s.status(0).runs == 10_000


def test_r14_a_burst_before_a_long_quiet_window_is_not_refused():
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule_many([(noop, 1.0 + i * 1e-4) for i in range(15_000)])
    assert clock.advance(1e9) == 1e9  # 15,000 groups, then nothing: no periodic task
    assert s.pending == 0


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "10"])
def test_r14_max_steps_is_checked(bad):
    clock = VirtualClock()
    with pytest.raises(ValueError, match="max_steps"):
        clock.advance(1.0, max_steps=bad)


def test_r14_a_refused_window_then_resumed_gives_the_rows_of_stepping():
    chunked = VirtualClock()
    a = periodic_scenario(chunked)
    with pytest.raises(LoopError):
        chunked.run_until(30_000.0, max_steps=15_000)
    while chunked.now() < 30_000.0:
        chunked.run_until(min(30_000.0, chunked.now() + 4_000.0))
    stepped = VirtualClock()
    b = periodic_scenario(stepped)
    while (nxt := stepped.next_time()) is not None and nxt <= 30_000.0:
        stepped.step()
    stepped.run_until(30_000.0)
    assert comparable(a.log.to_frame()).equals(comparable(b.log.to_frame()))


def _pause_within(clock: VirtualClock, seconds: float) -> bool:
    pauser = threading.Thread(target=clock.pause, daemon=True)
    pauser.start()
    pauser.join(seconds)
    return not pauser.is_alive()


def _wait_for(condition, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_r14_a_clock_played_far_faster_than_it_can_fire_stays_pausable_and_exact():
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(noop, period=0.001, label="1 kHz")
    clock.play(1e9)  # a billion virtual seconds per second: 1e12 runs a second to keep up
    try:
        assert _wait_for(lambda: s.log.next_seq > 20_000), "the player never fired"
    finally:
        assert _pause_within(clock, 30), "pause() did not return"
    assert clock.rate == 0 and clock.play_error is None
    reached = clock.now()
    assert reached < 1e6  # it lagged (never skipping a run) instead of jumping ahead
    stepped = VirtualClock()
    b = Scheduler(stepped)
    b.schedule(noop, period=0.001, label="1 kHz")
    stepped.run_until(reached, max_steps=None)
    assert comparable(s.log.to_frame()).equals(comparable(b.log.to_frame()))
    clock.run_until(reached + 1.0)  # and it still steps by hand afterwards


def test_a_scheduler_attached_during_a_window_fires_in_time_order_with_the_first():
    # A lone scheduler fires its window in one fire_next call; a run that attaches a second
    # scheduler to the clock hands the rest of the window back to the clock's loop.
    clock = VirtualClock()
    order: list[tuple[str, float]] = []
    first = Scheduler(clock)

    def attach_another() -> None:
        order.append(("first", clock.now()))
        other = Scheduler(clock)
        other.schedule(lambda: order.append(("other", clock.now())), at=2.5)

    first.schedule(attach_another, at=1.0)
    first.schedule(lambda: order.append(("first", clock.now())), at=3.0)
    first.schedule(lambda: order.append(("first", clock.now())), at=4.0)
    assert clock.run_until(10.0) == 10.0
    assert order == [("first", 1.0), ("other", 2.5), ("first", 3.0), ("first", 4.0)]


@pytest.mark.parametrize("how", ["shutdown", "same name"])
def test_a_window_goes_on_with_the_scheduler_that_replaced_the_lone_one(how):
    # Issue 32, finding 3: a run of the clock's only scheduler makes a second one, schedules
    # on it and ends the first (a shutdown, or a re-run cell's same name). The window must
    # notice that its lone target changed instead of returning as if nothing were left.
    for window in ("run_until", "run_until_idle"):
        clock = VirtualClock()
        fired: list[float] = []
        first = Scheduler(clock, name=f"cell-{how}-{window}")

        def replace(clock=clock, fired=fired, first=first, name=first.name) -> None:
            other = Scheduler(clock, name=name if how == "same name" else None)
            other.schedule(lambda: fired.append(clock.now()), delay=0.5)
            if how == "shutdown":
                first.shutdown(wait=False)

        first.schedule(replace, at=1.0)
        if how == "same name":
            with pytest.warns(UserWarning, match="a live scheduler named"):
                end = clock.run_until(10.0) if window == "run_until" else clock.run_until_idle()
        else:
            end = clock.run_until(10.0) if window == "run_until" else clock.run_until_idle()
        assert fired == [1.5], window  # on time, in this window
        assert end == (10.0 if window == "run_until" else 1.5)
        assert first.closed and first.log.audit().ok
