"""LiveView: the dashboard's texts as one anywidget, the form a marimo notebook shows."""

from __future__ import annotations

import pytest
from widgetkit import close_widgets, scenario  # noqa: F401 - the fixture closes widgets

from tempsched_lab.widgets import Dashboard
from tempsched_lab.widgets.liveview import LivePanel, in_marimo, live_state


def test_live_state_follows_the_scheduler():
    s, clock = scenario()
    panel = LivePanel(s, title="demo", missing=("controls",))
    panel.refresh()
    state = panel.view.state
    assert [q["label"] for q in state["queue"]][:1] == ["heartbeat"]  # due first, at 0.5
    assert state["queue"][0]["head"] and state["pending"] == 5 and state["missing"] == ["controls"]
    clock.advance(2.5)
    panel.refresh()
    after = panel.view.state
    assert after["seq"] == s.log.next_seq and after["seq"] > state["seq"]
    assert after["log"][0]["seq"] == s.log.next_seq - 1  # the newest row first
    assert sum(after["counts"].values()) > 0 and "2.500" in after["now"]
    assert "1.7" not in after["now"][:4]  # seconds since start, never an epoch reading
    panel.close()


def test_dashboard_offers_its_marimo_view_driven_by_its_refresher():
    pytest.importorskip("marimo")
    s, clock = scenario()
    dash = Dashboard(s, panels=("controls", "queue", "log", "timeline"), autostart=False)
    assert not in_marimo() and dash.on_page_close == "pause"
    view = dash.marimo()
    live = dash._live
    assert live in dash.refresher.panels and "controls" in live.missing
    assert "queue" not in live.missing
    clock.advance(1.2)
    dash.refresh()
    assert live.view.state["seq"] == s.log.next_seq
    assert view is not None and dash._display_() is not None
    assert dash._live is live  # one view, however often shown
    dash.close()
    assert live.closed


def test_live_state_without_a_log():
    from tempsched_lab import Scheduler, VirtualClock

    s = Scheduler(VirtualClock(), log=False)
    panel = LivePanel(s)
    scene = panel.source.scene()
    state = live_state(scene)
    assert state["logging"] is False and state["log"] == []
    panel.close()
