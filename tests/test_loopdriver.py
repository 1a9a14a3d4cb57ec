"""LoopDriver: rounds drawn on the kernel's event loop, in the thread while the loop is busy.

The "kernel" here is an asyncio loop run forever in a thread of its own (as ipykernel's and
marimo's loops run in the thread of the cells); a "cell" that blocks it is a callback waiting
on an Event. Every wait is for an event, bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from widgetkit import close_widgets, scenario  # noqa: F401 - the fixture closes widgets

from tempsched_lab.widgets import LogPanel
from tempsched_lab.widgets.loopdriver import LoopDriver, kernel_loop
from tempsched_lab.widgets.refresher import Refresher


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="kernel-loop", daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def in_worker(call):  # run call() in a worker thread, return what it returned
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(call()), name="worker")
    worker.start()
    worker.join(10)
    assert not worker.is_alive()
    return out[0]


def test_calls_run_on_a_free_loop(loop):
    driver = LoopDriver(loop)
    names = [in_worker(lambda: driver.run(lambda: threading.current_thread().name)) for _ in "abc"]
    assert names == ["kernel-loop"] * 3
    assert (driver.on_loop, driver.in_thread, driver.misses) == (3, 0, 0)
    assert len(driver.delays) == 3 and max(driver.delays) < driver.patience


def test_a_busy_loop_hands_calls_back_and_none_runs_twice(loop):
    driver = LoopDriver(loop, patience=0.05)
    gate, blocked = threading.Event(), threading.Event()
    loop.call_soon_threadsafe(lambda: (blocked.set(), gate.wait(10)))  # a cell runs
    assert blocked.wait(5)
    runs: list[str] = []

    def call() -> str:
        runs.append(threading.current_thread().name)
        return runs[-1]

    assert in_worker(lambda: driver.run(call)) == "worker"  # after patience
    assert driver.misses == 1 and driver.busy
    assert in_worker(lambda: driver.run(call)) == "worker"  # at once: the loop is still busy
    assert driver.misses == 1
    gate.set()  # the cell returns: the loop skips the call it was handed back
    answered = threading.Event()
    loop.call_soon_threadsafe(answered.set)
    assert answered.wait(5)
    assert not driver.busy
    assert in_worker(lambda: driver.run(call)) == "kernel-loop"
    assert runs == ["worker", "worker", "kernel-loop"]  # each call exactly once
    assert (driver.on_loop, driver.in_thread) == (1, 2)


def test_errors_reach_the_caller_and_a_closed_loop_means_the_thread():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    driver = LoopDriver(loop)

    def boom() -> None:
        raise KeyError("boom")

    error = in_worker(lambda: _catching(driver, boom))
    assert isinstance(error, KeyError) and driver.on_loop == 1  # raised on the loop, caught here
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()
    assert not driver.usable
    assert driver.run(lambda: 7) == 7 and driver.in_thread == 1


def _catching(driver: LoopDriver, call):
    try:
        driver.run(call)
    except KeyError as exc:
        return exc
    return None


def test_patience_and_loop_are_checked():
    with pytest.raises(ValueError, match="patience=0"):
        LoopDriver(None, patience=0)
    s, _ = scenario()
    with pytest.raises(ValueError, match="loop='yes'"):
        Refresher([], scheduler=s, loop="yes")


def test_kernel_loop_is_the_running_one():
    async def main() -> bool:
        return kernel_loop() is asyncio.get_running_loop()

    assert asyncio.run(main()) is True
    assert kernel_loop() is None


def test_a_refresher_draws_its_rounds_on_the_loop(loop):
    s, clock = scenario()
    panel = LogPanel(s)
    r = Refresher([panel], scheduler=s, loop=loop, max_rate=50)
    r.start()
    try:
        clock.advance(2.5)
        seq = s.log.next_seq
        done = threading.Event()
        while not done.wait(0.01):  # bounded below: the round that shows every row
            shown = panel.shown
            if shown is not None and shown.seq == seq:
                done.set()
            assert r.running
            if r.driver.on_loop > 500:
                break
        assert panel.shown is not None and panel.shown.seq == seq
        assert r.driver.on_loop > 0 and r.driver.misses == 0
    finally:
        r.close()
        panel.close()


def test_a_repeater_keeps_a_view_fed_through_the_loop(loop):
    s, clock = scenario()
    driver = LoopDriver(loop)
    pushed: list[tuple[str, int]] = []
    enough = threading.Event()

    def push() -> None:
        pushed.append((threading.current_thread().name, s.log.next_seq))
        if len(pushed) >= 3:
            enough.set()

    repeater = driver.repeat(push, every=0.01, stop_after=10)
    try:
        clock.advance(1.0)
        assert enough.wait(5)
    finally:
        assert repeater.stop()
    assert {name for name, _ in pushed} == {"kernel-loop"}
    assert repeater.errors == 0
    with pytest.raises(ValueError, match="every=0"):
        driver.repeat(push, every=0)
