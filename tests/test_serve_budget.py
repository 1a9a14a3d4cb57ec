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
from tempsched_lab.serve.budget import BUSY_ROWS, ReaderBudget


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_quiet_scheduler_holds_no_reader_back() -> None:
    clock = _Clock()
    budget = ReaderBudget(0.1, clock=clock)
    seq = 0
    for _ in range(50):  # 1,000 rows a second: under BUSY_ROWS
        clock.now += 0.1
        seq += 100
        assert not budget.busy(seq)
        assert budget.spent(0.005, busy=False) == 0.0
    assert budget.pause() == 0.0 and budget.held_back == 0.0


def test_a_busy_scheduler_holds_the_readers_to_their_share() -> None:
    clock = _Clock()
    budget = ReaderBudget(0.1, clock=clock)
    budget.busy(0)
    clock.now += 0.1
    assert budget.busy(int(BUSY_ROWS))  # 2,000 rows in 0.1 s: 20,000 a second
    assert budget.spent(0.002, busy=True) == pytest.approx(0.018)  # 9x: 10 % of the time
    assert budget.spent(0.001, busy=True) == pytest.approx(0.009)  # readers share one budget
    assert budget.pause() == pytest.approx(0.027)
    clock.now += 0.027
    assert budget.pause() == 0.0
    # a burst is seen before a whole window has passed: its first read is already small
    quick = ReaderBudget(0.1, clock=clock)
    quick.busy(0)
    clock.now += 0.001
    assert quick.busy(1_000)


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
