"""Dashboard(mirror): panels read a RemoteScheduler like a Scheduler; a banner tells the link."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tempsched_lab import CancelResult, Scheduler, VirtualClock
from tempsched_lab.log.files import SegmentWriter
from tempsched_lab.remote import RemoteScheduler, attach_dir
from tempsched_lab.remote.link import Link
from tempsched_lab.widgets import Dashboard

pytest.importorskip("ipywidgets")


def _frame():
    s = Scheduler(VirtualClock())
    for i in range(12):
        s.schedule(lambda: None, at=1.0 + i, label=f"job{i}")
    s.schedule(lambda: None, at=0.5, period=2.0, label="tick")
    s.clock.advance(4.2)
    frame = s.log.to_frame()
    s.shutdown()
    return frame


def _spill(directory: Path, frame, cuts: list[int]) -> SegmentWriter:
    writer = SegmentWriter(directory, 0.0)
    bounds = [0, *cuts, len(frame)]
    for a, b in itertools.pairwise(bounds):
        writer.write(frame.iloc[a:b])
    return writer


def test_a_dashboard_of_a_mirror_shows_its_rows_read_only_with_a_banner(tmp_path: Path) -> None:
    frame = _frame()
    writer = _spill(tmp_path / "spill", frame, [10])
    mirror = attach_dir(tmp_path / "spill", follow=False)
    dash = Dashboard(mirror, autostart=False, on_page_close="ignore")
    try:
        assert "controls" not in dash.panels  # read-only: nothing there may change the service
        assert {"queue", "log", "tree"} <= set(dash.panels)
        dash.refresh()
        scene = dash.refresher.scene
        assert scene is not None and scene.seq == len(frame)
        assert "job10" in dash.queue.table.value  # the queue replayed from the rows
        assert dash.banner is not None
        assert "closed" in dash.banner.widget.value
        assert "spill" in dash.header.value  # the header names the mirror's source
    finally:
        dash.close()
        writer.close()


def test_the_banner_says_each_state_of_the_link() -> None:
    mirror = RemoteScheduler("http://127.0.0.1:9/scheduler", time_origin=100.0)
    dash = Dashboard(mirror, autostart=False, on_page_close="ignore")
    try:
        banner = dash.banner
        assert banner is not None and "connecting" in banner.widget.value
        mirror.set_link(Link("live", since=100.0))
        assert "<b>live</b> · following http://127.0.0.1:9/scheduler" in banner.widget.value
        mirror.set_link(Link("reconnecting", since=112.5, why="ConnectError", attempts=3))
        assert "reconnecting since t = 12.500 s (attempt 3)" in banner.widget.value
        assert "tsl-link-is-reconnecting" in banner.widget._dom_classes
        mirror.gap(0, 41, "rows gone from memory and disk")
        assert "rows 0..41 (42 rows) are missing: rows gone from memory and disk" in (
            banner.widget.value
        )
        mirror.end("the service shut down")
        assert "closed" in banner.widget.value and "the service shut down" in banner.widget.value
    finally:
        dash.close()
    assert mirror.on_link(lambda link: None)  # the banner no longer listens; others may


def test_a_control_token_brings_the_controls_and_cancel_reaches_the_service() -> None:
    asked: list[int] = []

    def cancel(task_id: int) -> CancelResult:
        asked.append(task_id)
        return CancelResult.CANCELLED

    mirror = RemoteScheduler("svc", canceller=cancel)
    dash = Dashboard(mirror, autostart=False, on_page_close="ignore")
    try:
        assert "controls" in dash.panels
        dash.controls.cancel_id.value = 7
        dash.controls.cancel_button.click()
        assert asked == [7]
        dash.controls.schedule_button.click()  # refused in words, not an exception
        assert "read-only mirror" in dash.controls.result.value
    finally:
        dash.close()
