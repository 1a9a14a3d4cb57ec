"""A hostile feed for the mirror's tests: a tiny starlette app in a second process.

``HostileFeed.start(mode)`` runs this file as a script (uvicorn on 127.0.0.1, port 0)
and waits for the port it prints. ``GET /v1/moment`` answers a valid moment (with
``ping``); ``GET /v1/rows`` sends three valid rows, then what ``mode`` says:

* ``typeerror``: a ``rows`` event whose data is a JSON number (decoding raises TypeError);
* ``valueerror``: a ``rows`` event that is not JSON (ValueError);
* ``disorder``: rows whose ``seq`` go backwards;
* ``huge``: one complete event of 4 MiB;
* ``endless``: one event whose data lines never end (no blank line, ever);
* ``trickle``: one event sent a byte every 0.1 s, never ended;
* ``idle``: nothing more but keep-alive comments every ``ping`` seconds (a healthy idle feed).

>>> feed = HostileFeed.start("idle", ping=3.0)  # doctest: +SKIP
>>> feed.url  # doctest: +SKIP
'http://127.0.0.1:40187'
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

#: the example service, busy: rows every 50 ms, a burst of 20 each second
FAST = ("--tick", "0.05", "--burst-every", "1", "--burst-size", "20")


def until(condition: Callable[[], bool], seconds: float = 30.0) -> float:
    """Wait for ``condition`` (bounded in time and in count of looks); returns the seconds it
    took."""
    start = time.monotonic()
    for _ in range(1_000_000):
        if condition():
            return time.monotonic() - start
        if time.monotonic() - start > seconds:
            break
        time.sleep(0.01)
    raise AssertionError(f"not true within {seconds} s: {condition}")


MODES = ("typeerror", "valueerror", "disorder", "huge", "endless", "trickle", "idle")
ROOT = Path(__file__).resolve().parents[1]


class HostileFeed:
    """The running hostile feed: ``url``, ``mode``, ``proc`` (kill it with :meth:`stop`)."""

    def __init__(self, proc: subprocess.Popen[str], port: int, mode: str) -> None:
        self.proc = proc
        self.url = f"http://127.0.0.1:{port}"
        self.mode = mode

    @classmethod
    def start(cls, mode: str, *, ping: float = 15.0, timeout: float = 30.0) -> HostileFeed:
        """Start the feed in ``mode`` and wait (at most ``timeout`` s) for its port."""
        if mode not in MODES:
            raise ValueError(f"mode={mode!r}: expected one of {MODES}")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        proc = subprocess.Popen(
            [sys.executable, __file__, mode, str(ping)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line.strip())

        threading.Thread(target=read, daemon=True).start()
        try:
            port = int(lines.get(timeout=timeout))
        except queue.Empty:
            proc.kill()
            proc.wait(10)
            raise RuntimeError(f"the hostile feed ({mode}) did not start") from None
        feed = cls(proc, port, mode)
        feed._wait_ready(timeout)
        return feed

    def _wait_ready(self, timeout: float) -> None:
        """Wait until ``/v1/moment`` answers (a loaded machine starts uvicorn slowly)."""
        import httpx

        deadline = time.monotonic() + timeout
        for _ in range(10_000):
            try:
                if httpx.get(f"{self.url}/v1/moment", timeout=5.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the hostile feed ({self.mode}) did not answer within {timeout} s")

    def stop(self) -> None:
        """Kill the process (and wait for it)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)

    def __enter__(self) -> HostileFeed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _moment_and_rows(ping: float) -> tuple[dict[str, Any], str]:
    from tempsched_lab import Scheduler, VirtualClock
    from tempsched_lab.serve.wire import frame_to_json, moment_to_json

    s = Scheduler(VirtualClock(), name="hostile")
    for i in range(3):
        s.schedule(print, at=1.0 + i)
    moment = moment_to_json(s.moment(), name="hostile", first_seq=0, log_id="hostile-log")
    moment["ping"] = ping
    rows = json.dumps(frame_to_json(s.log.to_frame(), s.log.time_origin))
    s.shutdown(wait=False)
    return moment, rows


def _app(mode: str, ping: float) -> Any:
    import anyio
    from sse_starlette import EventSourceResponse, ServerSentEvent
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    moment, rows = _moment_and_rows(ping)

    async def moment_route(request: Request) -> Response:
        return JSONResponse(moment)

    async def raw(first: bytes, then: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        yield first
        async for piece in then:
            yield piece

    async def endless() -> AsyncIterator[bytes]:
        yield b"event: rows\n"
        line = b"data: " + b"x" * 8186 + b"\n"
        for _ in range(10**9):
            yield line
            await anyio.sleep(0)

    async def trickle() -> AsyncIterator[bytes]:
        yield b"event: rows\ndata: ["
        for _ in range(10**9):
            yield b" "
            await anyio.sleep(0.1)

    async def rows_route(request: Request) -> Response:
        good = f"event: rows\ndata: {rows}\nid: 2\n\n".encode()
        if mode == "endless":
            return StreamingResponse(raw(good, endless()), media_type="text/event-stream")
        if mode == "trickle":
            return StreamingResponse(raw(good, trickle()), media_type="text/event-stream")

        async def events() -> AsyncIterator[ServerSentEvent]:
            yield ServerSentEvent(data=rows, event="rows", id="2")
            if mode == "typeerror":
                yield ServerSentEvent(data="5", event="rows", id="3")
            elif mode == "valueerror":
                yield ServerSentEvent(data="[{not json", event="rows", id="3")
            elif mode == "disorder":
                later = json.loads(rows)
                for i, row in enumerate(later):
                    row["seq"] = 5 - i
                yield ServerSentEvent(data=json.dumps(later), event="rows", id="5")
            elif mode == "huge":
                yield ServerSentEvent(data="x" * (4 * 2**20), event="rows", id="3")
            for _ in range(10**9):  # then only keep-alives
                await anyio.sleep(3600)

        return EventSourceResponse(events(), ping=ping)

    return Starlette(
        routes=[Route("/v1/moment", moment_route), Route("/v1/rows", rows_route)],
    )


def main(mode: str, ping: float) -> None:
    """Serve ``mode`` on 127.0.0.1 (a free port, printed first) until killed."""
    import uvicorn

    app = _app(mode, ping)  # (the slow part: imports, a scheduler) before the port is said
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections wait in the backlog while uvicorn starts
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="critical", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
