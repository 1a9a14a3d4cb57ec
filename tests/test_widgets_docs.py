"""The registries the widgets and plots read: dashboard panels, queue design pictures, row kinds.

Also runs ``docs/widgets.md``'s worked example (*Adding a dashboard panel*): the panel it
registers must be built, laid out and refreshed by a dashboard that was told nothing of it.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import ipywidgets as W
import pytest
from widgetkit import close_widgets, scenario  # noqa: F401 - the fixture closes widgets

from tempsched_lab.widgets import Dashboard, Panel, Part, register_panel, unregister_panel
from tempsched_lab.widgets.panels import (
    PANELS,
    default_panels,
    layout_rows,
    panel_spec,
    panel_specs,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "widgets.md"


def descendants(widget: W.Widget) -> list[W.Widget]:
    """Every widget under ``widget`` (itself included), through the boxes' children."""
    out, todo = [], [widget]
    while todo:
        w = todo.pop()
        out.append(w)
        todo.extend(getattr(w, "children", ()))
    return out


def section(title: str) -> str:
    text = DOCS.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


@pytest.fixture
def registry_kept():
    """The panel registry as it was before the test (a test may register panels)."""
    before = list(PANELS)
    yield
    for name in [n for n in PANELS if n not in before]:
        unregister_panel(name)
    assert list(PANELS) == before


# -- the docs' worked example ----------------------------------------------------------------------


def test_the_docs_example_adds_a_panel_that_a_dashboard_shows(registry_kept):
    text = section("Adding a dashboard panel")
    code, shown = re.findall(r"```(?:python|text)\n(.*?)```", text, re.S)
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOCS), "exec"), namespace)
    dash = namespace["dashboard"]
    assert out.getvalue() == shown  # the page shows what the code prints
    assert "pending" in PANELS and "pending" in default_panels()
    pending = dash.pending
    assert type(pending).__name__ == "PendingPanel" and dash.panels["pending"] is pending
    assert pending.widget in descendants(dash.widget)  # in the page's layout: shown
    # where the docs say: between the log and the history, on a row of its own
    rows = layout_rows(dash.panels)
    assert rows[-2:] == [["pending"], ["history"]] and ["tree", "log"] in rows
    # refreshed with every other panel: a step shows the new moment
    namespace["clock"].step()
    dash.refresh()
    assert pending.count.value.startswith("<b>0</b> pending · nothing due")
    assert pending.shown is dash.log.shown  # one moment for every panel
    dash.close()


# -- the panel registry ----------------------------------------------------------------------------


def test_every_registered_panel_is_in_the_layout():
    s, _ = scenario("heap")
    dash = Dashboard(s, panels=list(PANELS), autostart=False, on_page_close="ignore")
    shown = descendants(dash.widget)
    assert list(dash.panels) == [n for n in PANELS if panel_spec(n).default] + ["predict"]
    for name, panel in dash.panels.items():
        assert panel.widget in shown, name
    rows = [r for r in layout_rows(PANELS)]
    assert sorted(n for r in rows for n in r) == sorted(PANELS)
    assert rows == [
        ["controls", "queue"],
        ["timeline"],
        ["predict", "tree"],
        ["log"],
        ["history"],
    ]
    dash.close()


def test_the_default_and_teaching_layouts_come_from_the_registry():
    assert layout_rows(default_panels()) == [
        ["controls", "queue"],
        ["timeline"],
        ["tree", "log"],
        ["history"],
    ]
    assert "predict" not in default_panels() and "predict" in default_panels(teaching=True)
    s, _ = scenario("heap")
    dash = Dashboard(s, panels=("log", "queue"), teaching=True, autostart=False)
    assert set(dash.panels) == {"log", "queue", "predict"}
    # in the registered order whatever the order asked, two with a width to a row
    assert layout_rows(dash.panels) == [["queue", "predict"], ["log"]]
    assert layout_rows(["log", "queue", "predict"]) == layout_rows(dash.panels)
    dash.close()


def test_an_unknown_panel_name_is_refused_with_its_name():
    s, _ = scenario()
    with pytest.raises(ValueError, match=r"unknown panel 'pendng'; registered: \['controls'"):
        Dashboard(s, panels=("controls", "pendng"), autostart=False)
    with pytest.raises(ValueError, match=r"panel 'clock': no panel of that name"):
        panel_spec("clock")
    with pytest.raises(ValueError, match=r"panel 'clock': no panel of that name"):
        layout_rows(["queue", "clock"])
    with pytest.raises(TypeError, match="panels='queue': expected a sequence"):
        Dashboard(s, panels="queue", autostart=False)


def test_a_panel_is_registered_once_per_name(registry_kept):
    with pytest.raises(ValueError, match="panel 'queue': registered already"):

        @register_panel(order=1)
        class Another(Panel):
            name = "queue"

    with pytest.raises(ValueError, match="give the panel class a name"):

        @register_panel(order=1)
        class Nameless(Panel):
            pass

    with pytest.raises(ValueError, match="width=0"):
        register_panel(order=1, width=0)

    def define(text: str) -> type[Panel]:
        @register_panel(order=99, default=False)
        class Note(Panel):  # the same class each time: a notebook cell run again
            name = "note"

            def __init__(self, scheduler, *, source=None, scale="default"):
                super().__init__(scheduler, source=source, scale=scale)
                self.text = self._own(W.HTML(text))
                self.widget = self._box([self.text], "Note")

            def _make_parts(self) -> list[Part]:
                return []

        return Note

    define("first")
    second = define("second")
    assert PANELS["note"] is second and [s.name for s in panel_specs()][-1] == "note"
    s, _ = scenario()
    dash = Dashboard(s, autostart=False)
    assert "note" not in dash.panels  # not a default panel
    dash.close()
    dash = Dashboard(s, panels=("controls", "note"), autostart=False)
    assert dash.note.text.value == "second" and dash.note.widget in descendants(dash.widget)
    dash.close()
    unregister_panel("note")
    with pytest.raises(ValueError, match="unknown panel 'note'"):
        Dashboard(s, panels=("note",), autostart=False)


# -- the queue design pictures ---------------------------------------------------------------------


def test_every_queue_design_has_its_picture_registered_once():
    from tempsched_lab.core.queues import DESIGNS
    from tempsched_lab.plots import plot_queue
    from tempsched_lab.plots.catalog import DESIGNS as FIGURE_DESIGNS
    from tempsched_lab.plots.designs import PICTURES, design_picture, picture_of, queue_designs

    assert set(PICTURES) == set(DESIGNS) == set(queue_designs())
    assert list(FIGURE_DESIGNS.values()) == list(DESIGNS)  # the catalog draws every design
    assert [p.fallback for p in PICTURES.values()].count(True) == 1
    with pytest.raises(ValueError, match=r"design='splay': not a queue design"):
        design_picture("splay", title="splay tree", size=(5.0, 3.0), in_panels=True)
    with pytest.raises(ValueError, match=r"design='heap': a picture is registered already"):
        design_picture("heap", title="heap", size=(5.0, 3.0), in_panels=True)
    # a design without a picture of its own is drawn from its time points (the fallback)
    assert picture_of("splay").fallback
    s, _ = scenario("wheel")
    assert plot_queue(s).get_title().startswith("Timing wheel")


@pytest.mark.parametrize("design", ["sorteddict", "heap", "wheel"])
def test_panels_show_a_design_picture_as_registered(design):
    from tempsched_lab.plots.designs import picture_of

    s, _ = scenario(design)
    dash = Dashboard(s, panels=("queue", "history"), autostart=False)
    expected = picture_of(design).in_panels
    assert (dash.queue.image is not None) == expected
    assert (dash.history.image is not None) == expected
    if expected:
        width, height = picture_of(design).size  # inches, shown at 100 dpi
        assert dash.queue.image.layout.width == f"{round(width * 100)}px"
        assert dash.queue.image.layout.height == f"{round(height * 100)}px"
    dash.close()


def test_a_panel_s_registered_width_holds_its_pictures(design):
    """A panel beside another gets its registered width: every picture it draws fits in it
    (wider, it would scroll sideways in its column)."""
    s, _ = scenario(design)
    dash = Dashboard(s, panels=list(PANELS), autostart=False, on_page_close="ignore")
    dash.refresh()
    checked = 0
    for name, panel in dash.panels.items():
        width = panel_spec(name).width
        for renderer in panel._renderers:
            assert renderer.figure is not None
            px = renderer.figure.get_figwidth() * renderer.base_dpi
            assert width is None or px <= width, (name, px, width)
            checked += width is not None
    assert checked >= 1 + (design != "sorteddict")  # the tree, and the queue's picture
    dash.close()
