"""attach(): a mirror of a served scheduler in a real second process, over loopback.

The service is ``python -m tempsched_lab.serve.example`` (tests/servicekit.py); every wait
is for the event it asserts, bounded in time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from tempsched_lab import attach, read_log
from tempsched_lab.remote import RemoteScheduler
from tempsched_lab.remote.process import ExampleService
from tempsched_lab.remote.stream import AttachError

pytestmark = pytest.mark.slow

#: the link turns ``reconnecting`` within this many seconds of the service's death (the
#: kernel closes its sockets at once; the client sees the end of its stream)
RECONNECTING_WITHIN = 2.0
FAST = ("--tick", "0.05", "--burst-every", "1", "--burst-size", "20")


def _until(condition: Callable[[], bool], seconds: float = 30.0) -> float:
    """Wait for ``condition`` (bounded); returns the seconds it took."""
    start = time.monotonic()
    for _ in range(1_000_000):
        if condition():
            return time.monotonic() - start
        if time.monotonic() - start > seconds:
            break
        time.sleep(0.01)
    raise AssertionError(f"not true within {seconds} s: {condition}")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[ExampleService]:
    svc = ExampleService.start(spill=tmp_path / "runs", args=FAST)
    yield svc
    svc.kill()


def _stored(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[[c for c in frame.columns if c not in ("time", "wall_time")]].reset_index(
        drop=True
    )


def _same_rows(mirror: RemoteScheduler, spill: Path) -> None:
    """The mirror equals the service's own log (as spilled, closed complete) frame for frame."""
    disk = read_log(spill)
    mine = mirror.log.to_frame()
    assert mine["seq"].tolist() == list(range(len(disk)))  # every seq once, in order
    pd.testing.assert_frame_equal(_stored(mine), _stored(disk), check_categorical=False)


def test_the_mirror_equals_the_services_log_after_shutdown(service: ExampleService) -> None:
    mirror = attach(service.url)
    _until(lambda: mirror.applied > 200)
    assert mirror.link.state == "live" and mirror.name
    assert service.stop() == 0
    _until(lambda: mirror.link.state == "closed")
    assert "shut down" in mirror.link.why and mirror.gaps == []
    _same_rows(mirror, service.spill)
    assert mirror.moment().closed


def test_a_dropped_connection_resumes_with_no_gap_and_no_duplicate(service: ExampleService) -> None:
    mirror = attach(service.url)
    seen: list[str] = []
    mirror.on_link(lambda link: seen.append(link.state))
    for n in range(3):  # cut it mid-stream, three times
        _until(lambda n=n: mirror.applied > 100 * (n + 1))
        mirror.feed.drop()
        _until(lambda n=n: mirror.feed.connections == n + 2)
    _until(lambda: mirror.link.state == "live")
    assert service.stop() == 0
    _until(lambda: mirror.link.state == "closed")
    assert seen.count("reconnecting") >= 3 and mirror.gaps == []
    _same_rows(mirror, service.spill)


def test_sigkill_turns_the_link_reconnecting_in_bounded_time_and_nothing_hangs(
    service: ExampleService,
) -> None:
    mirror = attach(service.url)
    _until(lambda: mirror.applied > 50)
    service.kill()
    took = _until(lambda: mirror.link.state == "reconnecting", RECONNECTING_WITHIN)
    assert took < RECONNECTING_WITHIN
    _until(lambda: mirror.link.attempts >= 2)  # it goes on trying, with backoff
    frozen = mirror.clock.now()
    assert mirror.moment().now == frozen  # the clock stays where it was last heard
    start = time.monotonic()
    mirror.close()
    assert time.monotonic() - start < 6.0 and not mirror.feed.thread.is_alive()
    assert mirror.link.state == "closed"


def _elsewhere(service: ExampleService, root: Path) -> ExampleService:
    """The service started again on its port with another spill root: a new log (a service
    restarted on its own spill root continues its log: tests/test_remote_restart.py)."""
    return ExampleService.start(spill=root, port=service.port, args=FAST)


def test_a_service_restarted_with_a_new_log_is_reported_with_what_the_mirror_holds(
    service: ExampleService, tmp_path: Path
) -> None:
    mirror = attach(service.url)
    _until(lambda: mirror.applied > 50)
    service.kill()
    _until(lambda: mirror.link.state == "reconnecting", RECONNECTING_WITHIN)
    held = mirror.applied
    again = _elsewhere(service, tmp_path / "other")
    try:
        _until(lambda: mirror.link.state == "closed")
        link = mirror.link
        assert link.restarted and f"up to seq {held - 1}" in link.why
        assert mirror.applied == held  # nothing of the new log mixed in
        fresh = attach(again.url)  # the new log, from its first row
        _until(lambda: fresh.applied > 10)
        assert fresh.log.to_frame()["seq"].iloc[0] == 0
        fresh.close()
        # what the mirror holds of the killed run agrees with that run's spill, row for row
        disk = read_log(service.spill, on_incomplete="warn") if service.spill.exists() else None
        if disk is not None and len(disk):
            n = min(len(disk), held)
            pd.testing.assert_frame_equal(
                _stored(mirror.log.to_frame(0, n)), _stored(disk.iloc[:n]), check_categorical=False
            )
    finally:
        again.kill()


def test_bad_tokens_and_unreachable_services_fail_at_the_call(tmp_path: Path) -> None:
    svc = ExampleService.start(spill=tmp_path / "runs", args=FAST)
    try:
        with pytest.raises(ValueError, match="url="):
            attach("ftp://x")
        with pytest.raises(ValueError, match="token"):
            attach(svc.url, token="")
    finally:
        svc.kill()
    with pytest.raises(AttachError, match="cannot connect"):
        attach(svc.url)


def test_a_token_is_needed_when_the_service_has_one(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-read-token-0123456789")
    svc = ExampleService.start(spill=tmp_path / "runs", args=(*FAST, "--token-file", str(token)))
    try:
        with pytest.raises(AttachError, match="HTTP 401") as err:
            attach(svc.url)
        assert "s3cret" not in str(err.value)
        with pytest.raises(AttachError, match="HTTP 401"):
            attach(svc.url, token="wrong")
        mirror = attach(svc.url, token="s3cret-read-token-0123456789")
        _until(lambda: mirror.applied > 10)
        with pytest.raises(TypeError, match="read-only"):
            mirror.cancel(0)
        mirror.close()
    finally:
        svc.kill()


def test_a_service_watch_shows_a_new_dashboard_after_a_restart_with_a_new_log(
    service: ExampleService, tmp_path: Path
) -> None:
    from tempsched_lab.widgets.servicewatch import ServiceWatch

    watch = ServiceWatch(service.url, autostart=False, on_page_close="ignore")
    again: ExampleService | None = None
    try:
        first = watch.mirror
        assert first is not None and watch.dashboard is not None
        _until(lambda: first.applied > 20)
        service.kill()
        _until(lambda: first.link.state == "reconnecting", RECONNECTING_WITHIN)
        watch.dashboard.refresh()
        assert "reconnecting since" in watch.dashboard.banner.widget.value
        again = _elsewhere(service, tmp_path / "other")
        _until(lambda: watch.restarts == 1)
        assert watch.previous == [first] and watch.mirror is not first
        assert "restarted with a new log" in watch.note.value
        assert watch.widget.children[1] is watch.dashboard.widget
        _until(lambda: watch.mirror.applied > 10)
        shown: list[dict[str, str]] = []  # an output it was shown in (a display handle)
        watch.outputs._handles.append(
            type("Handle", (), {"update": lambda self, bundle, raw: shown.append(bundle)})()
        )
    finally:
        watch.close()
        if again is not None:
            again.kill()
    # closed: the output holds the last frame (the note and the dashboard as they were)
    [bundle] = shown
    assert "restarted with a new log" in bundle["text/html"]
    assert "This view was closed" in bundle["text/html"] and "tsl-lastframe" in bundle["text/html"]
