"""The example service as a real second process, read over loopback by real clients.

``python -m tempsched_lab.serve.example`` runs as a subprocess (its own interpreter,
its own scheduler on a real clock); the tests read its feed with httpx, ``curl -N``
and Chromium's ``EventSource``, stop it with SIGTERM, and compare what they received
with its own log on disk. Every wait is bounded in count and time and waits for the
event it asserts.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
httpx_sse = pytest.importorskip("httpx_sse")
pytest.importorskip("pyarrow")

from tempsched_lab import read_log  # noqa: E402
from tempsched_lab.serve.wire import frame_to_json  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 60.0


@dataclass
class Service:
    """A running example service: its process, feed URL, spill directory and stderr file."""

    process: subprocess.Popen[str]
    url: str
    spill: Path | None
    stderr: Path
    token: str | None
    headers: dict[str, str] = field(default_factory=dict)

    def stop(self, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


def start_service(tmp_path: Path, *args: str, token: bool = True) -> Service:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "tempsched_lab.serve.example", "--port", "0"]
    secret = None
    if token:
        secret = secrets.token_urlsafe(32)
        (tmp_path / "token").write_text(secret + "\n")
        command += ["--token-file", str(tmp_path / "token")]
    command += list(args)
    stderr = tmp_path / "service.err"
    with stderr.open("w") as err:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=tmp_path
        )
    assert process.stdout is not None
    lines: list[str] = []

    def first_lines() -> None:
        for line in process.stdout:  # type: ignore[union-attr]
            lines.append(line.strip())
            if len(lines) == (2 if "--spill" in args else 1):
                return

    reader = threading.Thread(target=first_lines, daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    if not lines or not lines[0].startswith("http://127.0.0.1:"):
        process.kill()
        raise AssertionError(f"the service did not print its URL: {stderr.read_text()[-2000:]}")
    spill = Path(lines[1].split(" ", 1)[1]) if len(lines) > 1 else None
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    return Service(process, lines[0], spill, stderr, secret, headers)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = start_service(
        tmp_path, "--spill", str(tmp_path / "runs"), "--access-log", "--burst-every", "0.5"
    )
    try:
        yield svc
    finally:
        if svc.process.poll() is None:
            svc.process.kill()
            svc.process.wait(10)


def stream(svc: Service, path: str, headers: dict[str, str] | None = None) -> Iterator[Any]:
    with (
        httpx.Client(timeout=httpx.Timeout(20.0)) as client,
        httpx_sse.connect_sse(client, "GET", svc.url + path, headers=headers or svc.headers) as src,
    ):
        assert src.response.status_code == 200
        yield from src.iter_sse()


def test_the_rows_a_client_receives_equal_the_services_own_log(service: Service) -> None:
    rows: list[dict[str, Any]] = []
    closed: list[dict[str, Any]] = []
    enough = threading.Event()

    def read() -> None:
        for i, event in enumerate(stream(service, "/v1/rows?after=-1")):
            assert i < 100_000
            if event.event == "rows":
                rows.extend(json.loads(event.data))
                if len(rows) >= 300:
                    enough.set()
            elif event.event == "closed":
                closed.append(json.loads(event.data))
                return
            else:
                raise AssertionError(f"unexpected event {event.event}: {event.data}")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert enough.wait(START_TIMEOUT_S), "the service produced no rows"
    assert service.stop() == 0
    reader.join(30)
    assert not reader.is_alive() and closed
    assert service.spill is not None
    on_disk = read_log(service.spill)  # closed complete by the service's shutdown
    assert [r["seq"] for r in rows] == list(range(len(on_disk))) == list(range(closed[0]["seq"]))
    assert rows == frame_to_json(on_disk, on_disk.attrs["time_origin"])  # frame for frame
    kinds = {r["kind"] for r in rows}
    assert {"schedule", "dispatch", "start", "finish", "shutdown"} <= kinds
    assert {"heartbeat", "sync", "burst", "job"} <= {r["label"] for r in rows}


def test_the_token_appears_in_no_log_line(service: Service) -> None:
    token = service.token
    assert token is not None
    wrong = {"Authorization": "Bearer " + secrets.token_urlsafe(32)}
    with httpx.Client(timeout=10) as client:
        for path in ("/v1/moment", "/v1/log?start=0&stop=5", "/v1/cancel", "/v1/pause"):
            client.get(service.url + path, headers=service.headers)
            client.get(service.url + path, headers=wrong)
            client.get(service.url + path + ("&" if "?" in path else "?") + "token=" + token)
            client.get(service.url + path + "?access_token=" + token)
        answer = client.get(service.url + "/v1/moment", headers=service.headers)
        assert answer.status_code == 200
    for event in stream(service, "/v1/rows?after=-1"):
        if event.event == "rows":
            break
    assert service.stop() == 0
    text = service.stderr.read_text()
    assert "GET /scheduler/v1/moment" in text  # the access log was on
    assert "?[redacted]" in text  # the whole query, however the token was spelled
    assert token not in text


def test_curl_reads_the_stream(service: Service) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    auth = f"Authorization: Bearer {service.token}"
    process = subprocess.Popen(
        [curl, "-sN", "-H", auth, service.url + "/v1/rows?after=-1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    seen: list[int] = []
    event = None
    try:
        for i, line in enumerate(process.stdout):
            assert i < 10_000
            line = line.rstrip("\r\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "rows":
                seen += [r["seq"] for r in json.loads(line[6:])]
                if len(seen) >= 50:
                    break
    finally:
        process.kill()
        process.wait(10)
    assert seen[:50] == list(range(50))


def test_a_stalled_reader_costs_the_service_no_memory(tmp_path: Path) -> None:
    svc = start_service(
        tmp_path,
        "--spill",
        str(tmp_path / "runs"),
        "--load",
        "1000",
        "--max-log-rows",
        "20000",
        token=False,
    )
    try:
        host, port = svc.url.split("//")[1].split("/")[0].split(":")
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect((host, int(port)))
        stalled.sendall(
            f"GET /scheduler/v1/rows?after=-1 HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        )
        # wait until the log has moved well past what the stalled socket can hold
        samples: list[int] = []
        with httpx.Client(timeout=10) as client:
            for _ in range(400):
                seq = client.get(svc.url + "/v1/moment").json()["seq"]
                samples.append(svc.rss_kb())
                if seq > 60_000:
                    break
                threading.Event().wait(0.1)
            else:
                raise AssertionError("the service did not record 60,000 rows in 40 s")
        # past the first ~16k-row chunks, memory must be flat: the reader is a cursor
        settled = samples[len(samples) // 3 :]
        assert max(settled) - min(settled) < 40_000, samples  # kB
        stalled.close()
    finally:
        svc.stop()


def test_a_browser_eventsource_reads_the_feed(tmp_path: Path) -> None:
    voilakit = pytest.importorskip("voilakit")
    reason = voilakit.missing()
    if reason is not None:
        voilakit.unavailable(reason)
    from playwright.sync_api import sync_playwright

    # EventSource cannot send an Authorization header: this service has no token (loopback
    # only); a browser reaches a token-protected feed through a same-origin proxy instead.
    svc = start_service(tmp_path, token=False)
    origin = svc.url.rsplit("/", 1)[0]
    try:
        with sync_playwright() as p:
            browser = voilakit.launch_chromium(p)
            page = browser.new_page()
            blocked: list[str] = []

            def only_loopback(route: Any) -> None:
                if route.request.url.startswith("http://127.0.0.1:"):
                    route.continue_()
                else:
                    blocked.append(route.request.url)
                    route.abort()

            page.route("**/*", only_loopback)
            page.goto(origin + "/")
            seqs = page.evaluate(
                """() => new Promise((resolve, reject) => {
                    const seen = [];
                    const source = new EventSource("/scheduler/v1/rows?after=-1");
                    source.addEventListener("rows", (e) => {
                        for (const row of JSON.parse(e.data)) seen.push(row.seq);
                        if (seen.length >= 100) { source.close(); resolve(seen); }
                    });
                    source.onerror = () => { source.close(); reject(new Error("stream error")); };
                    setTimeout(() => reject(new Error("no rows in 30 s")), 30000);
                })"""
            )
            browser.close()
        assert seqs[:100] == list(range(100))
        assert blocked == []
    finally:
        svc.stop()
