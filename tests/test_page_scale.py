"""One projector toggle sizes everything the toolkit drew on the page (issue 34, item 3).

Notebook 09 shows a standalone timeline, a practice panel, a history panel, a side-by-side
pair and a dashboard: a click on any of their **projector** toggles switches them all.
"""

from __future__ import annotations

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.widgets import Dashboard, HistoryPanel, SideBySide, TimelineWidget, demo_task
from tempsched_lab.widgets._base import png_size


def lesson(s: Scheduler) -> None:
    s.schedule(demo_task, at=1.0, label="a")
    s.schedule(demo_task, at=2.0, label="b")


def test_one_toggle_switches_every_view_of_the_page_and_back() -> None:
    s1, s2 = Scheduler(VirtualClock(), queue="heap"), Scheduler(VirtualClock(), queue="heap")
    lesson(s1)
    lesson(s2)
    timeline = TimelineWidget(s1)
    history = HistoryPanel(s1)
    history.refresh()
    pair = SideBySide(lesson, panels=("queue", "timeline"), autostart=False)
    dash = Dashboard(s2, autostart=False)
    before = png_size(bytes(history.image.value))[0]

    dash.projector.value = True  # the page's toggle of one view
    assert timeline.type_scale == "projector"
    assert history.type_scale == "projector" and "tsl-projector" in history.widget._dom_classes
    assert png_size(bytes(history.image.value))[0] > before  # redrawn at once, a third larger
    assert pair.projector.value and all(d.type_scale == "projector" for d in pair.dashboards)

    pair.projector.value = False  # and another view's toggle brings everything back
    assert not dash.projector.value and dash.type_scale == "default"
    assert timeline.type_scale == "default" and history.type_scale == "default"

    dash.close()
    pair.close()
    history.close()
    history.set_scale("default")  # closed views are left out, and keep working
    dash2 = Dashboard(s2, autostart=False)
    dash2.projector.value = True
    assert history.type_scale == "default" and not dash.projector.value
    dash2.close()
    timeline.close()
    for s in (s1, s2):
        s.shutdown()
