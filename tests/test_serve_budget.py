"""The feed's readers on a CPU-time duty cycle (serve.budget.ReaderBudget, asgi_app(share=)).

While the scheduler is busy the readers take at most ``share`` of the time: they lag, then
catch up, and no row is lost or sent twice. Waits are for the event asserted, bounded.
"""

from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx_sse")

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.serve import asgi_app, serve
from tempsched_lab.serve.budget import BUSY_ROWS, HOLD, ReaderBudget


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_quiet_scheduler_holds_no_reader_back() -> None:
    clock = _Clock()
    budget = ReaderBudget(0.1, clock=clock)
    seq = 0
    assert budget.busy(seq)  # the first look: not known yet, so not idle
    for _ in range(50):  # 1,000 rows a second: under BUSY_ROWS
        clock.now += 0.1
        seq += 100
        if clock.now < HOLD:
            assert budget.busy(seq)  # quiet for less than HOLD: not idle yet
            continue
        assert not budget.busy(seq)
        assert budget.turn(seq) == 0.0
        assert budget.done(0.005, seq) == 0.0
    assert budget.pause() == 0.0 and budget.held_back == 0.0
    assert budget.cpu == pytest.approx(0.005 * 48) and budget.cpu_busy == 0.0


def test_a_busy_scheduler_holds_the_readers_to_their_share() -> None:
    clock = _Clock()
    budget = ReaderBudget(0.1, clock=clock)
    budget.busy(0)
    clock.now += 0.1
    assert budget.busy(int(BUSY_ROWS))  # 2,000 rows in 0.1 s: 20,000 a second
    assert budget.spent(0.002, busy=True) == pytest.approx(0.018)  # 9x: 10 % of the time
    assert budget.spent(0.001, busy=True) == pytest.approx(0.009)  # readers share one budget
    assert budget.pause() == pytest.approx(0.027)
    assert budget.turn(int(BUSY_ROWS)) == pytest.approx(0.027)  # no turn before the pause ends
    clock.now += 0.027
    assert budget.pause() == 0.0
    # a burst is seen before a whole window has passed: its first read is already small
    quick = ReaderBudget(0.1, clock=clock)
    quick.busy(0)
    clock.now += 0.001
    assert quick.busy(1_000)


def test_readers_asking_together_get_one_turn_and_its_charge_holds_them_all() -> None:
    """The root of issue 41's finding 8: ten readers all passed the check before any was
    charged. Now the check and the taking are one step: one turn, then one pause for all."""
    clock = _Clock()
    budget = ReaderBudget(0.1, clock=clock)
    budget.busy(0)
    clock.now += 0.1
    seq = 10_000  # 100,000 rows a second
    answers = [budget.turn(seq) for _ in range(10)]
    assert answers[0] == 0.0 and all(a > 0 for a in answers[1:])
    assert budget.turn_busy  # its reads are small
    assert budget.done(0.01, seq) == pytest.approx(0.09)
    assert all(budget.turn(seq) == pytest.approx(0.09) for _ in range(10))
    clock.now += 0.09
    seq += 9_000
    assert budget.turn(seq) == 0.0 and budget.turn(seq) > 0  # the next one, alone again
    budget.release()  # a turn that read nothing is not charged
    assert budget.pause() == 0.0 and budget.cpu_busy == pytest.approx(0.01)


def test_a_verdict_not_known_or_one_quiet_window_is_not_idle() -> None:
    clock = _Clock()
    budget = ReaderBudget(0.02, clock=clock)
    assert budget.turn(0) == 0.0 and budget.turn_busy  # not known: a small read, charged
    assert budget.done(0.001, 0) == pytest.approx(0.049)
    clock.now += 0.1
    seq = 10_000  # 100,000 rows a second: busy
    assert budget.busy(seq)
    clock.now += 0.03
    assert budget.busy(seq)  # one quiet window (the scheduler not given a core): still busy
    for _ in range(20):  # quiet for HOLD and more
        clock.now += 0.03
        budget.busy(seq)
    assert not budget.busy(seq) and budget.turn(seq) == 0.0 and not budget.turn_busy
    assert budget.done(0.3, seq) == 0.0  # idle: a reader takes what it needs
    # a look after a long quiet time starts a new window: an hour's average would hide
    # the burst of its last second
    clock.now += 3600.0
    assert budget.busy(seq + 50_000)


def test_a_turn_that_ends_busy_is_charged_though_it_began_idle() -> None:
    clock = _Clock()
    budget = ReaderBudget(0.5, clock=clock)
    for _ in range(20):
        clock.now += 0.03
        budget.busy(0)
    assert budget.turn(0) == 0.0 and not budget.turn_busy  # idle when it began
    clock.now += 0.05
    assert budget.done(0.04, 5_000) == pytest.approx(0.04)  # 100,000 rows a second now
    assert budget.cpu_busy == pytest.approx(0.04)


def test_share_is_checked_at_the_call() -> None:
    s = Scheduler(VirtualClock())
    for bad in (0, -0.5, 1.5, True, "0.1"):
        with pytest.raises(ValueError, match=r"share="):
            asgi_app(s, share=bad)  # type: ignore[arg-type]
    assert ReaderBudget(1.0).busy(10**9) is False  # share 1: never held back
    s.shutdown()


@pytest.mark.slow  # 7.9 s in the fast lane on the idle machine: the full run keeps it
def test_a_reader_of_a_busy_scheduler_lags_then_catches_up_with_every_row_once() -> None:
    import httpx
    from httpx_sse import connect_sse

    s = Scheduler(VirtualClock())
    got: list[int] = []
    done = threading.Event()

    def read(url: str) -> None:
        with (
            httpx.Client(timeout=httpx.Timeout(30.0)) as client,
            connect_sse(client, "GET", url + "/v1/rows?after=-1") as source,
        ):
            for event in source.iter_sse():
                if event.event == "rows":
                    got.extend(r["seq"] for r in json.loads(event.data))
                if event.event == "closed":
                    done.set()
                    return

    with serve(s, share=0.01) as server:
        reader = threading.Thread(target=read, args=(server.url,), daemon=True)
        reader.start()
        for i in range(40_000):  # tens of thousands of rows a second: busy
            s.schedule(print, delay=1e6 + i)
        s.shutdown(wait=False)
        assert done.wait(120), "the reader did not catch up within 120 s"
        reader.join(10)
        assert server.feed.budget.held_back > 0  # it was held back while the burst ran
    assert got == list(range(s.log.next_seq))  # every row once, in order
