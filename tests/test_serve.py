"""The feed served from a thread (``serve``): real sockets on 127.0.0.1, a real HTTP client.

Covers the routes, tokens on every route, every bad input of issue 33, resuming without
gap or duplicate, named gaps (rows dropped without a spill; a deleted segment), the Arrow
range, and a third-party reader (plain ``urllib``). The service in its own process is
``tests/test_serve_process.py``.
"""

from __future__ import annotations

import json
import secrets
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sse_starlette")
httpx = pytest.importorskip("httpx")
httpx_sse = pytest.importorskip("httpx_sse")
pa = pytest.importorskip("pyarrow")

from tempsched_lab import RealClock, Scheduler, VirtualClock, read_log  # noqa: E402
from tempsched_lab.serve import serve  # noqa: E402
from tempsched_lab.serve.wire import moment_from_json, rows_from_json  # noqa: E402

TOKEN = secrets.token_urlsafe(32)
CONTROL = secrets.token_urlsafe(32)
READ_ROUTES = [("GET", "/v1/moment"), ("GET", "/v1/rows"), ("GET", "/v1/log")]
CONTROL_ROUTES = [("POST", "/v1/cancel"), ("POST", "/v1/pause"), ("POST", "/v1/resume")]
#: the most events a test reads from one stream before it must have seen what it waits for
MAX_EVENTS = 2_000


def bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def events(
    url: str, headers: dict[str, str] | None = None, *, stop: Any = None, limit: int = MAX_EVENTS
) -> Iterator[Any]:
    """The stream's events (bounded in count; 10 s without a byte fails the read)."""
    with (
        httpx.Client(timeout=httpx.Timeout(10.0)) as client,
        httpx_sse.connect_sse(client, "GET", url, headers=headers or {}) as source,
    ):
        assert source.response.status_code == 200, source.response.read()
        for i, event in enumerate(source.iter_sse()):
            assert i < limit, "the stream never gave what the test waits for"
            yield event
            if event.event == "closed" or (stop is not None and stop(event)):
                return


def read_all(url: str, headers: dict[str, str] | None = None) -> tuple[list[dict], list, dict]:
    """Rows, gaps and the closed event of a stream read to its end."""
    rows: list[dict] = []
    gaps: list[dict] = []
    closed: dict = {}
    for event in events(url, headers):
        if event.event == "rows":
            batch = json.loads(event.data)
            assert int(event.id) == batch[-1]["seq"]
            rows += batch
        elif event.event == "gap":
            gaps.append(json.loads(event.data))
            assert int(event.id) == gaps[-1]["to"]
        elif event.event == "closed":
            closed = json.loads(event.data)
    return rows, gaps, closed


def finished_scheduler(n: int = 200, **kwargs: Any) -> Scheduler:
    """A virtual-clock scheduler that ran ``n`` tasks and shut down."""
    s = Scheduler(VirtualClock(start=1_000.0), **kwargs)
    s.schedule_many([(_job, 1_001.0 + i % 17, (i,)) for i in range(n)])
    s.clock.run_until_idle()
    s.shutdown()
    return s


def _noop() -> None:
    return None


def _job(i: int) -> int:
    return i


@pytest.fixture
def finished() -> Iterator[Any]:
    s = finished_scheduler()
    with serve(s, poll=0.01) as server:
        yield s, server


# -- the stream --------------------------------------------------------------------------
def test_a_stream_read_to_its_end_gives_every_row_once_then_closed(finished: Any) -> None:
    s, server = finished
    rows, gaps, closed = read_all(server.url + "/v1/rows?after=-1")
    assert gaps == []
    assert [r["seq"] for r in rows] == list(range(s.log.next_seq))
    assert closed == {"seq": s.log.next_seq}
    frame = rows_from_json(rows, s.log.time_origin)
    import pandas as pd

    pd.testing.assert_frame_equal(frame, s.log.to_frame())


def test_times_on_the_wire_are_seconds_since_the_start(finished: Any) -> None:
    _s, server = finished
    rows, _, _ = read_all(server.url + "/v1/rows?after=-1")
    first = rows[0]
    assert first["kind"] == "schedule" and first["due"] == 1.0  # clock 1001.0, origin 1000.0
    moment = httpx.get(server.url + "/v1/moment").json()
    assert moment["time_origin"]["origin"] == 1_000.0
    assert moment_from_json(moment).time_scale.origin == 1_000.0


def test_resume_after_a_dropped_connection_has_no_gap_and_no_duplicate(finished: Any) -> None:
    s, server = finished
    server.feed.reader.batch = 50  # several events, so that the first connection can drop early
    seen: list[int] = []
    last = None
    for event in events(server.url + "/v1/rows?after=-1", stop=lambda e: e.event == "rows"):
        seen += [r["seq"] for r in json.loads(event.data)]
        last = event.id
    assert last is not None and len(seen) < s.log.next_seq  # dropped mid-stream
    rows, gaps, _ = read_all(server.url + "/v1/rows", {"Last-Event-ID": last})
    seen += [r["seq"] for r in rows]
    assert gaps == [] and seen == list(range(s.log.next_seq))
    # ?after= resumes the same way (and Last-Event-ID wins over it, as browsers send both)
    rows, _, _ = read_all(server.url + f"/v1/rows?after={last}")
    assert rows[0]["seq"] == int(last) + 1
    rows, _, _ = read_all(server.url + "/v1/rows?after=3", {"Last-Event-ID": last})
    assert rows[0]["seq"] == int(last) + 1


def test_without_a_cursor_the_stream_starts_at_the_live_end() -> None:
    s = Scheduler(VirtualClock())
    s.schedule(_noop, delay=1)
    with serve(s, poll=0.01) as server:
        before = s.log.next_seq
        got: list[dict] = []

        def more(event: Any) -> bool:
            got.extend(json.loads(event.data) if event.event == "rows" else [])
            return bool(got)

        stream = events(server.url + "/v1/rows", stop=more)
        # the connection is made by the first next(); rows made after it must arrive
        import threading

        reader = threading.Thread(target=lambda: list(stream), daemon=True)
        reader.start()
        while server.feed.streams == 0 and reader.is_alive():
            reader.join(0.01)
        s.clock.advance(2)
        reader.join(10)
        assert not reader.is_alive()
        assert got[0]["seq"] == before  # nothing older: live only
    s.shutdown()


def test_rows_dropped_without_a_spill_are_a_named_gap() -> None:
    s = finished_scheduler(3_000, max_log_rows=1_024)
    assert s.log.dropped > 0
    with serve(s, poll=0.01) as server:
        rows, gaps, closed = read_all(server.url + "/v1/rows?after=-1")
    first = rows[0]["seq"]
    assert gaps == [{"from": 0, "to": first - 1, "why": gaps[0]["why"]}]
    assert "no spill directory" in gaps[0]["why"] and "max_rows=1024" in gaps[0]["why"]
    assert [r["seq"] for r in rows] == list(range(first, s.log.next_seq))
    assert closed["seq"] == s.log.next_seq


@pytest.mark.slow
def test_a_deleted_segment_is_a_named_gap_and_the_others_are_read_from_disk(
    tmp_path: Path,
) -> None:
    s = Scheduler(VirtualClock(), max_log_rows=1_024, log_spill=tmp_path / "log")
    s.schedule_many([(_job, 1.0 + i % 97, (i,)) for i in range(20_000)])
    s.clock.run_until_idle()
    s.shutdown()
    segments = sorted((tmp_path / "log").glob("segment-*.parquet"))
    assert len(segments) >= 3
    whole = read_log(tmp_path / "log")
    second = pa.parquet.read_table(segments[1]).column("seq").to_pylist()
    segments[1].unlink()
    with serve(s, poll=0.01) as server:
        rows, gaps, _ = read_all(server.url + "/v1/rows?after=-1")
        assert (
            gaps == [{"from": second[0], "to": second[-1], "why": gaps[0]["why"]}]
            and "missing from the spill directory" in gaps[0]["why"]
        )
        expected = [q for q in whole["seq"].tolist() if not second[0] <= q <= second[-1]]
        assert [r["seq"] for r in rows] == expected
        # the range route names the same gap (409), and serves the ranges around it
        answer = httpx.get(server.url + f"/v1/log?start=0&stop={second[-1] + 10}")
        assert answer.status_code == 409
        assert answer.json()["gap"]["from"] == second[0]
        answer = httpx.get(server.url + f"/v1/log?start=0&stop={second[0]}")
        table = pa.ipc.open_stream(answer.content).read_all()
        assert table.column("seq").to_pylist() == list(range(second[0]))


def test_keep_alive_comments_on_an_idle_stream() -> None:
    s = Scheduler(VirtualClock())
    with (
        serve(s, ping=0.05) as server,
        httpx.Client(timeout=10) as client,
        client.stream("GET", server.url + "/v1/rows") as response,
    ):
        for i, line in enumerate(response.iter_lines()):
            assert i < 100
            if line.startswith(":"):
                break
    s.shutdown()


# -- the other read routes ---------------------------------------------------------------
def test_moment_json_matches_the_scheduler() -> None:
    s = Scheduler(VirtualClock(), name="served", queue="heap")
    for i in range(5):
        s.schedule(_noop, delay=1 + i)
    with serve(s) as server:
        answer = httpx.get(server.url + "/v1/moment")
    data = answer.json()
    assert answer.headers["x-tempsched-log-id"] == data["log_id"] == server.feed.log_id
    assert data["name"] == "served" and data["pending"] == 5 and data["seq"] == 5
    assert data["first_seq"] == 0 and data["closed"] is False and data["schema"] >= 2
    moment = moment_from_json(data)
    assert moment.queue == s.moment().queue
    s.shutdown()


def test_log_range_is_an_arrow_stream_pyarrow_reads(finished: Any) -> None:
    s, server = finished
    answer = httpx.get(server.url + "/v1/log?start=10&stop=60")
    assert answer.headers["content-type"] == "application/vnd.apache.arrow.stream"
    table = pa.ipc.open_stream(answer.content).read_all()
    assert table.column("seq").to_pylist() == list(range(10, 60))
    meta = table.schema.metadata
    assert float(meta[b"tempsched.time_origin"]) == 1_000.0
    frame = rows_from_json(table.to_pylist(), 1_000.0)
    import pandas as pd

    pd.testing.assert_frame_equal(frame, s.log.to_frame(10, 60).reset_index(drop=True))
    empty = pa.ipc.open_stream(httpx.get(server.url + "/v1/log?start=5&stop=5").content)
    assert empty.read_all().num_rows == 0


def test_plain_urllib_reads_the_stream(finished: Any) -> None:
    s, server = finished
    request = urllib.request.Request(server.url + "/v1/rows?after=-1")
    seqs: list[int] = []
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        event = None
        for i, raw in enumerate(response):
            assert i < 10_000
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "rows":
                seqs += [r["seq"] for r in json.loads(line[6:])]
            elif line.startswith("data: ") and event == "closed":
                break
    assert seqs == list(range(s.log.next_seq))


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("headers", "query", "fragment"),
    [
        ({"Last-Event-ID": "abc"}, "", "Last-Event-ID='abc'"),
        ({"Last-Event-ID": "-1"}, "", "at least 0"),
        ({"Last-Event-ID": str(10**30)}, "", "expected an integer"),
        ({"Last-Event-ID": "5000"}, "", "this log has"),
        ({"Last-Event-ID": "1.5"}, "", "expected an integer"),
        ({"Last-Event-ID": "٣".encode()}, "", "expected an integer"),  # a non-ASCII digit
        ({}, "?after=-2", "at least -1"),
        ({}, "?after=abc", "after='abc'"),
        ({}, "?after=99999", "this log has"),
    ],
)
def test_bad_cursors_get_400_with_a_reason(
    finished: Any, headers: dict[str, Any], query: str, fragment: str
) -> None:
    _s, server = finished
    answer = httpx.get(server.url + "/v1/rows" + query, headers=headers)
    assert answer.status_code == 400
    assert fragment in answer.json()["error"]


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("?start=50&stop=10", "expected start <= stop"),
        ("?start=-1&stop=10", "at least 0"),
        ("?start=0&stop=99999999", "this log has"),
        ("?start=x", "start='x'"),
        (f"?start=0&stop={10**30}", "expected an integer"),
    ],
)
def test_bad_ranges_get_400_with_a_reason(finished: Any, query: str, fragment: str) -> None:
    _s, server = finished
    answer = httpx.get(server.url + "/v1/log" + query)
    assert answer.status_code == 400
    assert fragment in answer.json()["error"]


def test_a_huge_range_is_refused(monkeypatch: pytest.MonkeyPatch, finished: Any) -> None:
    from tempsched_lab.serve import app

    _s, server = finished
    monkeypatch.setattr(app, "MAX_RANGE", 10)
    answer = httpx.get(server.url + "/v1/log?start=0&stop=100")
    assert answer.status_code == 400 and "at most 10" in answer.json()["error"]


def test_bad_control_input_gets_400_and_the_scheduler_keeps_going() -> None:
    clock = VirtualClock()
    s = Scheduler(clock)
    tid = s.schedule(_noop, delay=5)
    with serve(s, control_token=CONTROL) as server:
        url, auth = server.url, bearer(CONTROL)
        cases = [
            (b"{not json", "not valid JSON"),
            (b"[1, 2]", "JSON object"),
            (b'{"task_id": "3"}', "expected an integer"),
            (b'{"task_id": true}', "expected an integer"),
            (b'{"task_id": 10000000000000000000000000000000}', "no task has this ID"),
            (b'{"task_id": -1}', "no task has this ID"),
            (b'{"task_id": 999}', "no task has this ID"),
            (b"{}", "expected an integer"),
            (b"x" * 10_000, "larger than"),
        ]
        for body, fragment in cases:
            answer = httpx.post(url + "/v1/cancel", content=body, headers=auth)
            assert answer.status_code == 400, body
            assert fragment in answer.json()["error"], (body, answer.text)
        for rate in ("0", "-1", '"fast"', "1e400", "true"):
            answer = httpx.post(url + "/v1/resume", content=f'{{"rate": {rate}}}', headers=auth)
            assert answer.status_code == 400, rate
        # nothing of it reached the scheduler: it goes on, its log intact
        rows_before = s.log.next_seq
        assert httpx.post(url + "/v1/cancel", json={"task_id": tid}, headers=auth).json() == {
            "task_id": tid,
            "result": "cancelled",
        }
        assert s.log.next_seq == rows_before + 1
        s.schedule(_noop, delay=1)
        clock.run_until_idle()
        assert s.log.audit().ok
    s.shutdown()


def test_pause_and_resume_a_virtual_clock_and_409_for_a_real_one() -> None:
    clock = VirtualClock()
    s = Scheduler(clock)
    with serve(s, control_token=CONTROL) as server:
        auth = bearer(CONTROL)
        clock.play(5.0)
        answer = httpx.post(server.url + "/v1/pause", headers=auth)
        assert answer.json() == {"paused": True, "rate_before": 5.0} and clock.rate == 0
        answer = httpx.post(server.url + "/v1/resume", headers=auth)
        assert answer.json() == {"paused": False, "rate": 5.0} and clock.rate == 5.0
        answer = httpx.post(server.url + "/v1/resume", json={"rate": 2}, headers=auth)
        assert clock.rate == 2.0
        clock.pause()
    s.shutdown()
    real = Scheduler(RealClock())
    with serve(real, control_token=CONTROL) as server:
        answer = httpx.post(server.url + "/v1/pause", headers=bearer(CONTROL))
        assert answer.status_code == 409 and "RealClock" in answer.json()["error"]
    real.shutdown()


# -- tokens ----------------------------------------------------------------------------------
def _call(url: str, method: str, path: str, headers: dict[str, str]) -> int:
    with httpx.Client(timeout=10) as client:
        body = b'{"task_id": 0}' if path == "/v1/cancel" else b""
        with client.stream(method, url + path, headers=headers, content=body) as response:
            return response.status_code  # (a stream is left before its first event)


@pytest.mark.parametrize(("method", "path"), READ_ROUTES + CONTROL_ROUTES)
def test_tokens_on_every_route(method: str, path: str) -> None:
    s = Scheduler(VirtualClock())
    s.schedule(_noop, delay=1)
    with serve(s, token=TOKEN, control_token=CONTROL) as server:
        control_route = (method, path) in CONTROL_ROUTES
        for token, expected in [
            (None, 401),
            ("wrong-" + TOKEN, 401),
            (TOKEN, 403 if control_route else 200),
            (CONTROL, 200),
        ]:
            status = _call(server.url, method, path, bearer(token))
            assert status == expected, (path, token is TOKEN, token is CONTROL)
        with httpx.Client() as client:
            answer = client.request(method, server.url + path)
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert TOKEN not in answer.text and CONTROL not in answer.text
            answer = client.request(method, server.url + path + "?token=" + TOKEN)
            assert answer.status_code == 400 and TOKEN not in answer.text
            for scheme in ("Basic " + TOKEN, TOKEN, "Bearer"):
                answer = client.request(
                    method, server.url + path, headers={"Authorization": scheme}
                )
                assert answer.status_code in (401, 404) and TOKEN not in answer.text
    s.shutdown()


def test_control_routes_are_404_without_a_control_token() -> None:
    s = Scheduler(VirtualClock())
    with serve(s, token=TOKEN) as server:
        for method, path in CONTROL_ROUTES:
            assert _call(server.url, method, path, bearer(TOKEN)) == 404
    with serve(s) as server:
        for method, path in CONTROL_ROUTES:
            assert _call(server.url, method, path, {}) == 404
        for method, path in READ_ROUTES:  # no token: read routes are open on loopback
            assert _call(server.url, method, path, {}) == 200
    s.shutdown()


def test_a_non_loopback_bind_without_a_token_binds_no_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[Any] = []
    real = socket.socket

    def spy(*args: Any, **kwargs: Any) -> socket.socket:
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(socket, "socket", spy)
    s = Scheduler(VirtualClock())
    for host in ("0.0.0.0", "::", "192.0.2.7", "example.org"):
        with pytest.raises(ValueError, match="not a loopback address"):
            serve(s, host=host)
    assert made == []
    s.shutdown()


def test_bad_tokens_are_refused_without_showing_them() -> None:
    s = Scheduler(VirtualClock())
    secret = "short-secret"
    with pytest.raises(ValueError) as info:
        serve(s, token=secret)
    assert secret not in str(info.value)
    with pytest.raises(ValueError, match="letters, digits"):
        serve(s, token="has a space in it, 16+ chars")
    with pytest.raises(ValueError, match="the same"):
        serve(s, token=TOKEN, control_token=TOKEN)
    with pytest.raises(TypeError):
        serve(s, token=12345678901234567890)  # type: ignore[arg-type]
    s.shutdown()


def test_without_a_token_only_loopback_clients_are_answered() -> None:
    from tempsched_lab.serve import asgi_app

    s = Scheduler(VirtualClock())
    app = asgi_app(s)
    outside = httpx.ASGITransport(app=app, client=("192.0.2.7", 5000))
    inside = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    import asyncio

    async def get(transport: Any) -> int:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return (await client.get("/v1/moment")).status_code

    assert asyncio.run(get(outside)) == 403
    assert asyncio.run(get(inside)) == 200
    s.shutdown()


def test_mounted_under_a_prefix_in_a_service_app() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from tempsched_lab.serve import asgi_app

    s = Scheduler(VirtualClock())
    s.schedule(_noop, delay=1)
    service = Starlette(
        routes=[Mount("/scheduler", app=asgi_app(s, token=TOKEN, control_token=CONTROL))]
    )
    transport = httpx.ASGITransport(app=service, client=("127.0.0.1", 5000))
    import asyncio

    async def run() -> list[int]:
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            return [
                (await client.get("/scheduler/v1/moment", headers=bearer(TOKEN))).status_code,
                (await client.get("/scheduler/v1/moment")).status_code,
                (await client.post("/scheduler/v1/pause", headers=bearer(TOKEN))).status_code,
                (await client.post("/scheduler/v1/pause", headers=bearer(CONTROL))).status_code,
            ]

    assert asyncio.run(run()) == [200, 401, 403, 200]
    s.shutdown()


def test_close_is_bounded_with_a_stream_open_and_the_thread_is_a_daemon() -> None:
    s = Scheduler(VirtualClock())
    server = serve(s)
    assert server._thread.daemon
    import threading

    opened = threading.Event()

    def read() -> None:
        try:
            for _ in events(server.url + "/v1/rows", stop=lambda e: False):
                opened.set()
        except (httpx.HTTPError, AssertionError):
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    for _ in range(1_000):
        if server.feed.streams:
            break
        reader.join(0.01)
    assert server.feed.streams == 1
    assert server.close(timeout=5.0)
    reader.join(5)
    assert not reader.is_alive() and not server.running
    s.shutdown()
