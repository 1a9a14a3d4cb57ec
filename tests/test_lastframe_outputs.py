"""A closed view's outputs hold its last frame (issue 44, item 5: a saved notebook reopened
without a kernel shows each view's last frame, not "Loading widget..." or "model not found").

A view shows itself under an IPython display id; on close, every output it was shown in is
updated to the frame's HTML. Checked here on the kernel's side: with stand-in display handles
(what is sent, once, whatever fails), and in a real kernel through nbclient, which applies the
update to the notebook's outputs as JupyterLab does: the executed notebook file holds the frame
as ``text/html``, no widget reference. tests/test_hosts_browser.py reopens such a file in
JupyterLab with no kernel.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tempsched_lab import Fleet, Scheduler, VirtualClock
from tempsched_lab.widgets import Dashboard
from tempsched_lab.widgets.lastframe import LASTFRAME_CLASS, ShownOutputs

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class Handle:
    """Stands in for IPython's DisplayHandle: records what each update sent."""

    def __init__(self, fails: bool = False) -> None:
        self.sent: list[tuple[dict[str, str], bool]] = []
        self.fails = fails

    def update(self, obj: Any, raw: bool = False) -> None:
        if self.fails:
            raise RuntimeError("the kernel is going away")
        self.sent.append((obj, raw))


def test_freeze_replaces_each_output_once_and_survives_a_failing_one() -> None:
    outputs = ShownOutputs()
    good, bad, other = Handle(), Handle(fails=True), Handle()
    outputs._handles = [good, bad, other]
    assert outputs.freeze("<b>12 rows</b>", "<closed: x>") == 2
    for handle in (good, other):
        [(bundle, raw)] = handle.sent
        assert raw is True and bundle["text/plain"] == "<closed: x>"
        assert bundle["text/html"] == f"<div class='{LASTFRAME_CLASS}'><b>12 rows</b></div>"
    assert outputs.freeze("<b>later</b>", "again") == 0  # forgotten once replaced
    assert len(good.sent) == 1


def test_closing_a_dashboard_turns_its_outputs_into_its_last_frame() -> None:
    s = Scheduler(VirtualClock(), name="frames")
    s.schedule(lambda: None, at=2.0, label="sms")
    dash = Dashboard(s, panels=("queue", "log"), autostart=False, on_page_close="ignore")
    shown = Handle()
    dash.outputs._handles.append(shown)
    dash.refresh()
    dash.close()
    [(bundle, _)] = shown.sent
    assert "This view was closed" in bundle["text/html"] and "sms" in bundle["text/html"]
    assert bundle["text/plain"].startswith("<closed: ")
    s.shutdown()


def test_a_shown_dashboards_last_frame_pictures_its_canvas_timeline() -> None:
    dashboards = []
    for name in ("shown", "quiet"):
        s = Scheduler(VirtualClock(), name=name)
        s.schedule(lambda: None, at=2.0, label="sms")
        s.clock.advance(3.0)
        panels = ("queue", "timeline")
        dashboards.append(Dashboard(s, panels=panels, autostart=False, on_page_close="ignore"))
    shown_dash, quiet_dash = dashboards
    shown = Handle()
    shown_dash.outputs._handles.append(shown)
    for dash in dashboards:
        dash.scheduler.clock.advance(2.0)  # the scheduler moved on since the last round
        live = dash.panels["timeline"].live
        live._on_msg(live, {"type": "hello", "token": "t"}, [])  # a page drew the canvas: no PNG
        dash.refresh()
        assert not dash.panels["timeline"].image.value
        dash.scheduler.clock.advance(2.0)
        dash.close()
        dash.scheduler.shutdown()
    [(bundle, _)] = shown.sent
    page = bundle["text/html"]
    # one moment: the frame is of the moment it was closed at, not of the last round before
    text = re.sub(r"<[^>]+>", "", page)
    assert "last frame, at t = 7.000 s," in text and "now 7.000 s" in text, text[:400]
    assert "5.000 s" not in text  # the last round before the close
    # the canvas, which no static page draws, as a picture of the whole run
    assert "<img" in page and "data:image/png;base64," in page and "the whole run" in page
    assert "<img" in shown_dash.widget.children[0].value  # and in the box a live page still shows
    # never shown in an output: the frame is made without the picture (no matplotlib spent)
    assert "<img" not in quiet_dash.widget.children[0].value
    assert "This view was closed" in quiet_dash.widget.children[0].value


def test_closing_a_fleet_view_leaves_its_banner_and_timeline_in_its_outputs(
    tmp_path: Path,
) -> None:
    from test_fleetview import finished

    finished(12, 0.0, tmp_path / "a")
    with Fleet({"a": tmp_path / "a"}) as fleet:
        view = Dashboard(fleet, autostart=False)
        shown = Handle()
        view.outputs._handles.append(shown)
        view.close()
    [(bundle, _)] = shown.sent
    page = bundle["text/html"]
    assert "tsl-fleet-line" in page and "<img" in page and "This view was closed" in page


@pytest.mark.slow
@pytest.mark.notebooks
def test_a_notebook_saved_after_close_holds_the_frame_not_a_widget(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "from tempsched_lab.widgets import Dashboard\n"
        "s = Scheduler(VirtualClock(), name='saved')\n"
        "s.schedule(print, at=3.0, label='sms')\n"
        "dash = Dashboard(s, panels=('queue', 'log'), autostart=False, on_page_close='ignore')\n"
        "dash.refresh()\n"
        "dash",
        "dash.close()\ns.shutdown()",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, path)
    [output] = nbformat.read(path, as_version=4).cells[0].outputs
    assert output["output_type"] == "display_data"
    assert WIDGET_VIEW not in output["data"], output["data"].keys()  # nothing to load
    page = output["data"]["text/html"]
    assert LASTFRAME_CLASS in page and "This view was closed" in page and "sms" in page
