"""A half-sent request is closed within a stated time (issue 41: uvicorn kept them open
indefinitely, 1,000 held 20 s took +66 MiB).

Raw sockets send half a request line (or trickle it a byte at a time) to a real server on
127.0.0.1 and wait, bounded, for the server to close them; a whole request and a long
stream on the same server are not cut.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.serve import serve

HEAD_TIMEOUT = 0.5
SOCKETS = 50


@pytest.fixture
def server() -> Iterator[Any]:
    s = Scheduler(VirtualClock())
    with serve(s, head_timeout=HEAD_TIMEOUT, ping=0.1) as handle:
        yield handle
    s.shutdown()


def _connect(server: Any) -> socket.socket:
    port = int(server.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=5.0)
    return sock


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``sock`` (reads its answer to the end), or None."""
    began = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4_096):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - began


def test_half_sent_request_lines_are_closed_within_the_head_timeout(server: Any) -> None:
    sockets = [_connect(server) for _ in range(SOCKETS)]
    began = time.monotonic()
    try:
        for sock in sockets:
            sock.sendall(b"GET /v1/mom")
        waits = [_closed_within(sock, HEAD_TIMEOUT + 5.0) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
    assert None not in waits, "a half-sent request was still open"
    assert time.monotonic() - began < HEAD_TIMEOUT + 5.0


def test_a_trickled_head_does_not_extend_its_time(server: Any) -> None:
    sock = _connect(server)
    began = time.monotonic()
    try:
        closed = False
        for byte in b"GET /v1/moment HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.05)
            if time.monotonic() - began > HEAD_TIMEOUT + 5.0:
                break
        if not closed:
            closed = _closed_within(sock, 1.0) is not None
    finally:
        sock.close()
    assert closed
    assert time.monotonic() - began < HEAD_TIMEOUT + 5.0


def test_whole_requests_and_long_streams_are_not_cut(server: Any) -> None:
    sock = _connect(server)
    try:
        sock.sendall(b"GET /v1/rows HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(5.0)
        received = b""
        began = time.monotonic()
        # keep-alive pings every 0.1 s: read them for 4 head timeouts
        while time.monotonic() - began < 4 * HEAD_TIMEOUT:
            chunk = sock.recv(4_096)
            assert chunk, "the stream was cut"
            received += chunk
        assert received.startswith(b"HTTP/1.1 200")
        assert received.count(b": ping") >= 3
    finally:
        sock.close()
    # a second request on a kept-alive connection, sent whole, is answered
    sock = _connect(server)
    try:
        for _ in range(2):
            sock.sendall(b"GET /v1/moment HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            sock.settimeout(5.0)
            answer = sock.recv(65_536)
            while not answer.endswith(b"}"):  # the JSON body's end
                chunk = sock.recv(65_536)
                assert chunk, "the kept-alive connection was closed"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer[:100]
            time.sleep(2 * HEAD_TIMEOUT)  # idle between requests: keep-alive's time, not ours
    finally:
        sock.close()
