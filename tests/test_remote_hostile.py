"""attach() and ``tempsched-lab tail`` against a hostile feed (tests/remotekit.py), a second
process on 127.0.0.1: every malformed, huge, endless or trickled event ends in a named link
state within seconds, the feed's thread lives on and backs off; an idle healthy feed whose
keep-alive is slower than the default read timeout stays live (issue 41, findings 9 and 14).
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time

import pytest
from remotekit import ROOT, HostileFeed, until

from tempsched_lab import attach
from tempsched_lab.remote import stream
from tempsched_lab.remote.stream import read_timeout

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("typeerror", "TypeError"),
        ("valueerror", "JSONDecodeError"),
        ("disorder", "do not follow each other"),
        ("huge", "event over 1,048,576 bytes"),
        ("endless", "event over 1,048,576 bytes"),
        ("trickle", "event not ended within 2 s"),
    ],
)
def test_an_event_the_mirror_cannot_read_is_named_on_its_link_and_the_thread_lives(
    mode: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "READ_TIMEOUT", 2.0)  # the trickle's bound: 2 s, not 20
    with HostileFeed.start(mode, ping=1.0) as feed:
        mirror = attach(feed.url, max_event_bytes=2**20)
        try:
            took = until(lambda: mirror.link.state == "failed", 10.0)
            link = mirror.link
            assert says in link.why, link.why
            assert "after seq 2" in link.why  # which event: the one after the rows held
            assert took < 8.0
            assert mirror.applied == 3  # the good rows before it are kept
            assert mirror.feed.thread.is_alive()  # it tries again later, never dies
            assert link.text().startswith("failed")
        finally:
            mirror.close()
        assert not mirror.feed.thread.is_alive()


def test_a_feed_that_keeps_sending_a_bad_event_is_retried_with_a_growing_backoff() -> None:
    with HostileFeed.start("valueerror", ping=1.0) as feed:
        mirror = attach(feed.url)
        try:
            until(lambda: mirror.link.state == "failed", 10.0)
            first = mirror.feed.connections
            time.sleep(4.0)  # the window the backoff is measured over
            tries = mirror.feed.connections - first
            # backoff 0.25, 0.5, 1, 2, 4 s (with jitter: at least half each): at most 5 tries
            # in 4 s; without it, 4 a second (16)
            assert 1 <= tries <= 6, tries
            assert mirror.link.state == "failed"
            assert mirror.link.attempts >= tries
        finally:
            mirror.close()


def test_an_idle_healthy_feed_pinging_slower_than_the_read_timeout_stays_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the real case is a ping of 25 s against the 20 s default; here both are scaled down
    monkeypatch.setattr(stream, "READ_TIMEOUT", 1.0)
    with HostileFeed.start("idle", ping=2.0) as feed:
        mirror = attach(feed.url)
        seen: list[str] = []
        mirror.on_link(lambda link: seen.append(link.state))
        try:
            until(lambda: mirror.applied == 3, 10.0)
            assert mirror.feed.read_timeout == pytest.approx(8 / 3)
            time.sleep(5.0)  # over two pings, five default read timeouts
            assert mirror.link.state == "live", mirror.link
            assert "reconnecting" not in seen
            assert mirror.feed.connections == 1
        finally:
            mirror.close()


def test_the_read_timeout_follows_the_ping() -> None:
    assert read_timeout(15.0) == 20.0  # the default keep-alive: the default timeout
    assert read_timeout(25.0) > 25.0
    assert read_timeout(60) == 80.0
    assert read_timeout(float("inf")) == read_timeout(3600.0)
    assert read_timeout(-1) == read_timeout("15") == read_timeout(True) == 20.0


def test_tail_says_the_failure_and_does_not_wait_silently() -> None:
    with HostileFeed.start("typeerror", ping=1.0) as feed:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tempsched_lab", "tail", feed.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line.rstrip("\n"))

        threading.Thread(target=read, daemon=True).start()
        said: list[str] = []
        try:
            deadline = time.monotonic() + 20.0
            while not any(line.startswith("-- failed") for line in said):
                left = deadline - time.monotonic()
                assert left > 0, f"tail said no failure within 20 s: {said}"
                try:
                    said.append(lines.get(timeout=left))
                except queue.Empty:
                    continue
        finally:
            proc.kill()
            proc.wait(30)
        failed = next(line for line in said if line.startswith("-- failed"))
        assert "TypeError" in failed and "after seq 2" in failed
