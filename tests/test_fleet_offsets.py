"""The fleet's clock probes (no network: an httpx mock transport plays the service)."""

from __future__ import annotations

import time

import pytest

httpx = pytest.importorskip("httpx")

from tempsched_lab.remote.fleet import _Prober  # noqa: E402


class Service:
    """Answers ``/v1/moment`` from a clock ``skew`` seconds ahead, after ``delay`` seconds."""

    def __init__(self) -> None:
        self.origin = 1_800_000_000.0
        self.skew = 0.0
        self.delay = 0.0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.delay:
            time.sleep(self.delay)  # the network's share of the round trip
        now = time.time() + self.skew
        return httpx.Response(
            200, json={"now": now - self.origin, "time_origin": {"origin": self.origin}}
        )


def test_a_restarted_service_is_measured_afresh() -> None:
    service = Service()
    prober = _Prober("http://127.0.0.1:1/scheduler", None, 60.0)
    prober.client.close()
    prober.client = httpx.Client(transport=httpx.MockTransport(service))
    try:
        for _ in range(4):
            prober.probe()
        offset = prober.offset
        assert offset is not None and abs(offset.offset) <= offset.uncertainty + 1e-3
        # the service restarts (a new clock origin) on a host 5 s ahead, its answers slower:
        # the earlier process's quick probes must not stand for the new one's clock
        service.origin += 100.0
        service.skew = 5.0
        service.delay = 0.05
        prober.probe()
        offset = prober.offset
        assert offset is not None and offset.probes == 5
        assert abs(offset.offset - 5.0) <= offset.uncertainty + 1e-3, offset
        assert offset.uncertainty >= 0.025  # the new probe's half round trip, not an old one's
    finally:
        prober.client.close()
