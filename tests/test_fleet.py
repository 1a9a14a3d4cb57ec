"""``Fleet``: several served schedulers and spill directories mirrored as one log.

Served schedulers run in this process (``serve()``: a real HTTP server on loopback, a
real client) with different tokens; a spill directory is read from disk; a
header-recording server (Starlette under uvicorn, as the feed itself) that redirects
elsewhere shows that no token reaches a host it was not given for. The real-process
test (three example services, one SIGKILLed, one with its clock skewed) is in
``test_fleet_processes.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, RedirectResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from tempsched_lab import Fleet, Scheduler, VirtualClock, read_log  # noqa: E402
from tempsched_lab.serve import serve  # noqa: E402
from tempsched_lab.serve.server import _ThreadServer, bind_socket  # noqa: E402

TOKENS = {"a": "token-of-service-a-0123456789", "b": "token-of-service-b-9876543210"}


def _job(i: int) -> int:
    return i


def finished(n: int, start: float, **kwargs: Any) -> Scheduler:
    s = Scheduler(VirtualClock(start=start), **kwargs)
    s.schedule_many([(_job, start + 1 + i % 13, (i,)) for i in range(n)])
    s.clock.run_until_idle()
    s.shutdown()
    return s


def wait_closed(fleet: Fleet, names: list[str], timeout: float = 30.0) -> None:
    """Until every named mirror has read its service to the end (bounded)."""
    done = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if all(fleet.links[n].state == "closed" for n in names):
            return
        done.wait(0.02)
    raise AssertionError(f"links never closed: {fleet.links}")


class Recorder:
    """A server that records the headers it gets and answers every path with a redirect."""

    def __init__(self, redirect_to: str | None) -> None:
        self.seen: list[dict[str, str]] = []

        async def anything(request: Request) -> Response:
            self.seen.append(dict(request.headers))
            if redirect_to is None:
                return JSONResponse({"error": "nothing here"}, status_code=404)
            return RedirectResponse(redirect_to + request.url.path, status_code=307)

        app = Starlette(routes=[Route("/{path:path}", anything)])
        import uvicorn

        sock = bind_socket("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off")
        self.server = _ThreadServer(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                break
            threading.Event().wait(0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)


@pytest.fixture
def two_served() -> Iterator[tuple[Scheduler, Scheduler, Any, Any]]:
    a = finished(300, 1_000.0, name="a")
    b = finished(200, 5_000.0, name="b")
    with serve(a, token=TOKENS["a"]) as sa, serve(b, token=TOKENS["b"]) as sb:
        yield a, b, sa, sb


def test_the_fleet_frame_is_every_services_rows_by_service_then_seq(
    two_served: tuple[Scheduler, Scheduler, Any, Any], tmp_path: Path
) -> None:
    a, b, sa, sb = two_served
    c = finished(150, 0.0, log_spill=tmp_path / "c")
    with Fleet({"a": sa.url, "b": sb.url, "c": tmp_path / "c"}, tokens=TOKENS) as fleet:
        wait_closed(fleet, ["a", "b", "c"])
        frame = fleet.to_frame()
    assert list(frame["service"].cat.categories) == ["a", "b", "c"]
    for name, log in (
        ("a", a.log.to_frame()),
        ("b", b.log.to_frame()),
        ("c", read_log(tmp_path / "c")),
    ):
        own = frame[frame["service"] == name].reset_index(drop=True)
        assert own["seq"].tolist() == list(range(len(log)))  # gapless, in its own seq
        for column in ("kind", "task_id", "label"):
            assert own[column].astype(object).tolist() == log[column].astype(object).tolist()
        assert own["wall"].tolist() == log["wall"].tolist()
    assert frame.attrs["gaps"] == []
    assert len(frame) == a.log.next_seq + b.log.next_seq + c.log.next_seq


def test_no_token_crosses_to_another_host(
    two_served: tuple[Scheduler, Scheduler, Any, Any],
) -> None:
    _, _, sa, _ = two_served
    elsewhere = Recorder(None)
    redirector = Recorder(elsewhere.url)
    own = "token-of-the-redirector-000000"
    try:
        fleet = Fleet(
            {"a": sa.url, "r": redirector.url + "/scheduler"},
            tokens={"a": TOKENS["a"], "r": own},
        )
        with fleet:
            wait_closed(fleet, ["a"])
            assert fleet.links["r"].state == "closed"
            assert "307" in fleet.links["r"].why
        assert redirector.seen, "the redirector was asked"
        for headers in redirector.seen:
            assert headers.get("authorization") == f"Bearer {own}"
        everything = repr(elsewhere.seen) + repr(redirector.seen)
        assert TOKENS["a"] not in everything
        assert all("authorization" not in h for h in elsewhere.seen)
    finally:
        redirector.close()
        elsewhere.close()


def test_a_real_clock_service_gets_an_offset_by_the_midpoint_method() -> None:
    s = Scheduler(name="live")
    with (
        serve(s, token=TOKENS["a"]) as server,
        Fleet({"live": server.url}, tokens={"live": TOKENS["a"]}) as fleet,
    ):
        for _ in range(3):
            fleet.probe()
        offset = fleet.offsets["live"]
        assert offset is not None and offset.probes >= 3
        # one machine, one clock: the offset is 0 within the probe's half round trip (plus the
        # RealClock's monotonic drift from time.time() since the scheduler started: < 1 ms)
        assert abs(offset.offset) <= offset.uncertainty + 1e-3
        assert "probes" in offset.text()
    s.shutdown(wait=False)


def test_bad_arguments_name_themselves(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="sources"):
        Fleet({})
    with pytest.raises(ValueError, match=r"tokens: \['x'\]"):
        Fleet({"a": "http://127.0.0.1:1/"}, tokens={"x": "t" * 20})
    with pytest.raises(ValueError, match="probe_every=0"):
        Fleet({"a": "http://127.0.0.1:1/"}, probe_every=0)
    fleet = Fleet({"gone": "http://127.0.0.1:1/scheduler", "nodir": str(tmp_path / "none")})
    assert fleet.links["gone"].state == "closed" and "cannot connect" in fleet.links["gone"].why
    assert fleet.links["nodir"].state == "closed"
    assert len(fleet.to_frame()) == 0
