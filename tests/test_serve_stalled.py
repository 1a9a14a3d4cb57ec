"""A reader that connects and never reads holds at most one encoded event (issue 41,
finding 7).

A second process serves a finished log of 100,000 rows; one reader reads it all (the
catch-up frames readers share are then built), then 40 real sockets ask for the
stream from rows spread over the log, with a small receive buffer, and never read; once
every one has begun to receive its first event, the service's
RSS is sampled: it stays flat (a few hundred KiB an event, not the batch's row
objects, their JSON text and the event: ~9 MiB a reader before).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httpx")

pytestmark = pytest.mark.slow

ROWS = 100_000
READERS = 40
SCRIPT = f"""
import sys, time
from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.serve import serve

def job():
    return None

s = Scheduler(VirtualClock(start=0.0))
s.schedule_many([(job, 1.0 + i * 1e-3, ()) for i in range({ROWS} // 3)])
s.clock.run_until_idle()
s.shutdown()
server = serve(s, poll=0.01)
print(server.url, s.log.next_seq, flush=True)
sys.stdin.read()  # until the test closes it
server.close()
"""


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _settled_rss_kib(pid: int) -> int:
    """The RSS once it changed by under 256 KiB over 200 ms (at most 10 s of looking)."""
    last = _rss_kib(pid)
    for _ in range(50):
        time.sleep(0.2)
        now = _rss_kib(pid)
        if abs(now - last) < 256:
            return now
        last = now
    raise AssertionError("the service's RSS never settled")


def _stalled(port: int, after: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4_096)
    sock.connect(("127.0.0.1", port))
    request = f"GET /v1/rows?after={after} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    sock.sendall(request.encode())
    return sock  # never read


def _answered(sock: socket.socket) -> bool:
    """The service began sending this reader a rows event (peeked: the socket stays full)."""
    try:
        head = sock.recv(4_096, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    return b"event: rows" in head


def _read_to_the_end(port: int) -> int:
    """Read the whole stream of the finished log, to its ``closed`` event; the bytes read."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        request = f"GET /v1/rows?after=-1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        sock.sendall(request.encode())
        received, tail = 0, b""
        while b"event: closed" not in tail:
            chunk = sock.recv(1 << 20)
            assert chunk, f"the stream ended without its closed event ({received:,} bytes)"
            received += len(chunk)
            tail = tail[-64:] + chunk
        return received


def test_forty_stalled_readers_leave_the_services_memory_flat() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    sockets: list[socket.socket] = []
    try:
        assert process.stdout is not None
        url, rows = process.stdout.readline().split()
        assert int(rows) >= ROWS
        port = int(url.rsplit(":", 1)[1])
        # one reader first, read to the end: the catch-up frames the readers share are then
        # built (a first reader read only to a stall measured before the service answered
        # it on a loaded machine, and counted ~110 MiB of shared frames as the 40's growth)
        assert _read_to_the_end(port) > ROWS * 100
        before = _settled_rss_kib(process.pid)
        for i in range(READERS):
            sockets.append(_stalled(port, (i * 2_400) % (ROWS - 5_000)))
        # the service hands each reader its first event in turn (slower on a loaded machine):
        # wait until every one has begun to receive it (at most 120 s), then until the RSS
        # holds still for 1 s (at most 30 s), then watch 1.5 s more; readers that kept
        # growing the service would never let it settle
        deadline = time.monotonic() + 120
        waiting = sockets[:]
        while waiting and time.monotonic() < deadline:
            waiting = [sock for sock in waiting if not _answered(sock)]
            time.sleep(0.05)
        assert not waiting, f"{len(waiting)} of {READERS} readers got no event in 120 s"
        samples = [_rss_kib(process.pid)]
        for _ in range(300):
            time.sleep(0.1)
            samples.append(_rss_kib(process.pid))
            if len(samples) > 10 and abs(samples[-1] - samples[-11]) < 1_024:
                break
        settled = len(samples)
        for _ in range(15):
            time.sleep(0.1)
            samples.append(_rss_kib(process.pid))
        growth_mib = (max(samples) - before) / 1024
        late_mib = (samples[-1] - samples[settled - 1]) / 1024
        print(
            f"{READERS} stalled readers: RSS {before / 1024:.0f} MiB, +{growth_mib:.1f} MiB "
            f"(settled after {settled / 10:.1f} s; the next 1.5 s: {late_mib:+.1f} MiB)"
        )
        # one encoded event (<= 2,048 rows of JSON, under 1 MiB) per stalled reader, a few
        # batches being read: was ~9 MiB a reader
        assert growth_mib < 60, samples
        assert abs(late_mib) < 10, samples  # flat: nothing grows while they stall
    finally:
        for sock in sockets:
            sock.close()
        if process.stdin is not None:
            process.stdin.close()
        process.wait(30)
