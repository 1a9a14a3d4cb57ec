"""A feed without a token answers this machine only: its Host, its own page; no token in a
query, none in an access log (issue 41, findings 3 and 13).

Each test uses a real server on 127.0.0.1 (port 0) and httpx with the header set by hand,
as a DNS-rebinding page's browser or a careless client would send it.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from tempsched_lab import Scheduler, VirtualClock  # noqa: E402
from tempsched_lab.serve import serve  # noqa: E402

TOKEN = secrets.token_urlsafe(32)
READ_PATHS = ["/v1/moment", "/v1/rows?after=-1", "/v1/log?start=0&stop=1"]
#: ways of putting a token in a query that a parser of names alone misses or finds
QUERY_TOKENS = [
    "token={t}",
    "%74oken={t}",
    "a=1;token={t}",
    "+token={t}",
    "after=0&ACCESS_TOKEN={t}",
]


def _job() -> None:
    return None


def _finished() -> Scheduler:
    s = Scheduler(VirtualClock(start=10.0))
    for i in range(5):
        s.schedule(_job, delay=i)
    s.clock.run_until_idle()
    s.shutdown()
    return s


@pytest.fixture(scope="module")
def open_feed() -> Iterator[Any]:
    with serve(_finished(), poll=0.01) as server:
        yield server


@pytest.fixture(scope="module")
def token_feed() -> Iterator[Any]:
    with serve(_finished(), token=TOKEN, poll=0.01) as server:
        yield server


def _get(url: str, headers: dict[str, str]) -> httpx.Response:
    with httpx.Client(timeout=10.0) as client:
        return client.get(url, headers=headers)


def _port(server: Any) -> int:
    return int(server.url.rsplit(":", 1)[1])


@pytest.mark.parametrize("path", READ_PATHS)
@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.nip.io:{port}"])
def test_a_feed_without_a_token_refuses_a_foreign_host(
    open_feed: Any, path: str, host: str
) -> None:
    answer = _get(open_feed.url + path, {"Host": host.format(port=_port(open_feed))})
    assert answer.status_code == 403
    assert answer.headers["content-type"] == "application/json"
    error = answer.json()["error"]
    assert error.startswith("Host ") and host.split(":")[0] in error
    assert "DNS rebinding" in error


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"])
def test_a_feed_without_a_token_answers_its_loopback_names(open_feed: Any, host: str) -> None:
    port = _port(open_feed)
    for path in READ_PATHS:
        answer = _get(open_feed.url + path, {"Host": host.format(port=port)})
        assert answer.status_code == 200, (path, answer.text)


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "null", "http://localhost:1", "file://", "http://127.0.0.1:{port}/x"],
)
def test_a_feed_without_a_token_refuses_a_foreign_page(open_feed: Any, origin: str) -> None:
    port = _port(open_feed)
    headers = {"Host": f"127.0.0.1:{port}", "Origin": origin.format(port=port)}
    answer = _get(open_feed.url + "/v1/moment", headers)
    assert answer.status_code == 403
    assert "Origin" in answer.json()["error"]


def test_a_feed_without_a_token_answers_its_own_page(open_feed: Any) -> None:
    port = _port(open_feed)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        answer = _get(open_feed.url + "/v1/moment", {"Host": host, "Origin": f"http://{host}"})
        assert answer.status_code == 200


def test_with_a_token_any_host_and_origin_are_answered(token_feed: Any) -> None:
    headers = {
        "Host": "scheduler.example.org",
        "Origin": "https://dashboard.example.org",
        "Authorization": f"Bearer {TOKEN}",
    }
    for path in READ_PATHS:
        assert _get(token_feed.url + path, headers).status_code == 200, path
    assert _get(token_feed.url + "/v1/moment", {"Host": "x.example"}).status_code == 401


@pytest.mark.parametrize("query", QUERY_TOKENS)
def test_every_spelling_of_a_token_in_the_query_is_refused(
    open_feed: Any, token_feed: Any, query: str
) -> None:
    for server in (open_feed, token_feed):
        url = f"{server.url}/v1/moment?{query.format(t=TOKEN)}"
        answer = _get(url, {"Authorization": f"Bearer {TOKEN}"} if server is token_feed else {})
        assert answer.status_code == 400, (query, answer.text)
        assert "query string" in answer.json()["error"]
        assert TOKEN not in answer.text


def test_no_token_spelling_reaches_the_access_log() -> None:
    """A host service runs uvicorn with its access log on: the lines it writes carry no query
    but the feed's numeric cursors."""
    import uvicorn

    from tempsched_lab.serve import asgi_app
    from tempsched_lab.serve.server import _ThreadServer, bind_socket

    app = asgi_app(_finished(), token=TOKEN)
    sock = bind_socket("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    lines: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("uvicorn.access")
    handler, level = Capture(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    config = uvicorn.Config(app, log_config=None, access_log=True, lifespan="off", ws="none")
    server = _ThreadServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.started
        auth = {"Authorization": f"Bearer {TOKEN}"}
        queries = [q.format(t=TOKEN) for q in QUERY_TOKENS] + [f"x={TOKEN}", "after=3"]
        for query in queries:
            _get(f"{url}/v1/moment?{query}", auth)
        _get(f"{url}/v1/rows%3Ftoken={TOKEN}", auth)  # a '?' in the path, encoded
        for _ in range(500):  # the server logs after the answer is sent
            if len(lines) >= len(queries) + 1:
                break
            time.sleep(0.01)
    finally:
        server.should_exit = True
        thread.join(5)
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert len(lines) == len(queries) + 1, lines
    assert not [line for line in lines if TOKEN in line or TOKEN[:8] in line]
    assert sum("?[redacted]" in line for line in lines) == len(queries)
    assert any("/v1/moment?after=3 " in line for line in lines), lines
