"""The dashboard: every panel for one scheduler, one refresher, and a static HTML export."""

from __future__ import annotations

import contextlib
import html
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import ipywidgets as W
from ipywidgets.embed import dependency_state, embed_minimal_html

# the built-in panels register themselves where they are defined (imported for that)
from . import controls as _controls  # noqa: F401
from . import figures as _figures  # noqa: F401
from . import history as _history  # noqa: F401
from . import queue as _queue  # noqa: F401
from . import teaching as _teaching  # noqa: F401
from ._base import Panel
from ._style import (
    PROJECTOR,
    PROJECTOR_CLASS,
    ZOOM,
    check_scale,
    off_page,
    on_page,
    projector_toggle,
    resolve_scale,
    show_scale,
    type_css,
)
from .lastframe import ShownOutputs, last_frame_html, leave_last_frame, static_html
from .linkbanner import link_banner, mirror_panels
from .liveview import LivePanel, in_marimo
from .logview import LogPanel
from .pagewatch import PageWatch, in_voila
from .panels import PANELS as _PANELS
from .panels import default_panels, layout_rows, panel_spec, panel_specs
from .refresher import Refresher
from .scene import LogSource

_LOG = logging.getLogger(__name__)

if TYPE_CHECKING:
    import asyncio

    from ..core.scheduler import Scheduler

__all__ = ["DEFAULT_PANELS", "PANELS", "Dashboard", "static_html"]

PageClose = Literal["auto", "shutdown", "pause", "ignore"]
_PAGE_CLOSE = ("auto", "shutdown", "pause", "ignore")

#: Panel name -> class, in layout order: the registry's (:mod:`.panels`), read only.
PANELS = _PANELS
#: The built-in panels a dashboard shows unless told otherwise (``teaching=True`` adds
#: "predict"); panels registered later are in :func:`~.panels.default_panels` too.
DEFAULT_PANELS = tuple(default_panels())


class Dashboard:
    """All panels for one scheduler, kept live by one :class:`~tempsched_lab.widgets.Refresher`.

    Works under a real clock (the scheduler's worker thread runs tasks; the
    dashboard follows) and under a :class:`~tempsched_lab.VirtualClock` (the
    controls step, advance or play it). Display it as the last expression of a
    cell, or ``display(dashboard)``; the cell returns at once.

    Every round of its refresher renders all panels from one moment of the
    scheduler (:meth:`Scheduler.moment <tempsched_lab.Scheduler.moment>`), so
    the panels never disagree; every time is written in the scheduler's time
    language (:attr:`Scheduler.time_scale <tempsched_lab.Scheduler.time_scale>`).

    Creating a new dashboard for the same scheduler (a re-run cell) closes the
    old one, so there is never more than one refresher per scheduler.

    The dashboard notices when no browser page shows it any more (a hidden
    ping-pong widget, :class:`~tempsched_lab.widgets.pagewatch.PageWatch`):

    * ``on_page_close="shutdown"``: close the dashboard and shut the scheduler
      down (``wait=False``) within ``page_timeout`` seconds. The default under
      Voila, where the kernel exists for that page alone.
    * ``"pause"``: stop rendering until a page answers again (the default
      elsewhere: a closed JupyterLab tab costs no CPU, and the scheduler, which
      is yours, goes on).
    * ``"ignore"``: no watch.

    Args:
        scheduler: the scheduler to show.
        panels: which panels, by name (the registered ones: :data:`PANELS`, see
            :func:`~tempsched_lab.widgets.panels.register_panel`); the default
            ones by default. The layout puts them in their registered order, two
            to a row where both have a width.
        max_rate: refresh rounds per second at most.
        cpu_budget: share of one core the refresher spends rendering, on average.
        resync_every: seconds between full re-sends of the output widgets.
        clock: time source of the refresher (injectable for tests).
        autostart: start the refresher thread now; with ``False`` call
            :meth:`refresh` (or ``dashboard.refresher.tick()``) yourself.
        stop_after: the refresher stops by itself after this many seconds.
        on_page_close: ``"auto"``, ``"shutdown"``, ``"pause"`` or ``"ignore"`` (above).
        page_timeout: seconds without an answer from any page before it counts as closed.
        title: heading shown above the panels.
        options: keyword arguments per panel, e.g. ``{"queue": {"max_points": 5}}``.
        teaching: add the *predict the case* panel
            (:class:`~tempsched_lab.widgets.PredictPanel`) beside the tree, and ask before
            the history's ▶ shows a request or a run (``HistoryPanel(predict=True)``;
            ``options={"history": {"predict": False}}`` turns that off).
        scale: (default: the session's, see ``tempsched_lab.set_scale``)
            the type scale: ``"default"`` (no text under 12 px) or
            ``"projector"`` (no text under 16 px, in the tables, the
            timeline's canvas and the pictures alike: for a class). The
            **projector** toggle in the page switches it too
            (:meth:`set_scale`).
        refresh_loop: the event loop the refresher draws its rounds on
            (:class:`~tempsched_lab.widgets.Refresher`'s ``loop``): ``"auto"``, the
            loop running in this thread (a notebook cell's, if any), with the
            refresher's thread drawing the rounds while a cell keeps it busy;
            ``None``, the refresher's thread draws every round.

    Clicking a task in the interactive timeline filters the log panel to that
    task's rows (its whole history); clicking it again clears the filter.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> from tempsched_lab.widgets import Dashboard
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=1.0, args=("hi",), label="hello")
    >>> dash = Dashboard(s, panels=("controls", "queue", "log"), autostart=False)
    >>> "hello" in dash.queue.table.value
    True
    >>> dash.controls.step_button.click()
    hi
    >>> _ = dash.refresh()
    >>> "the queue is empty" in dash.queue.table.value
    True
    >>> dash.close()
    """

    def __new__(cls, scheduler: Any = None, *args: Any, **kwargs: Any) -> Any:
        """``Dashboard(fleet)``: a :class:`~tempsched_lab.widgets.fleetview.FleetView`."""
        from ..remote.fleet import Fleet

        if isinstance(scheduler, Fleet):
            from .fleetview import FleetView

            return FleetView(scheduler, *args, **kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        panels: Sequence[str] | None = None,
        max_rate: float = 10.0,
        cpu_budget: float = 0.35,
        resync_every: float | None = 3.0,
        clock: Callable[[], float] = time.monotonic,
        autostart: bool = True,
        stop_after: float | None = None,
        on_page_close: PageClose = "auto",
        page_timeout: float = 5.0,
        title: str | None = "tempsched_lab dashboard",
        options: dict[str, dict[str, Any]] | None = None,
        teaching: bool = False,
        scale: str | None = None,
        refresh_loop: asyncio.AbstractEventLoop | str | None = "auto",
    ) -> None:
        names = mirror_panels(scheduler, self._panel_names(panels, teaching), panels is not None)
        if on_page_close not in _PAGE_CLOSE:
            raise ValueError(f"on_page_close={on_page_close!r}: expected one of {_PAGE_CLOSE}")
        scale = resolve_scale(scale)
        if on_page_close == "auto":
            # marimo shows no ipywidget, the watch's neither: no page would ever answer it
            on_page_close = "shutdown" if in_voila() else ("ignore" if in_marimo() else "pause")
        self.on_page_close: PageClose = on_page_close
        options = dict(options or {})
        if teaching:  # teaching mode: the history's ▶ asks for the next case or run first
            options["history"] = {"predict": True, **options.get("history", {})}
        self.scheduler = scheduler
        self.source = LogSource(scheduler)
        self.closed = False
        self.outputs = ShownOutputs()  # where it was shown: they become its last frame on close
        self.type_scale = scale
        self.panels: dict[str, Panel] = {}
        # refreshed (and written to the page) in layout order, the default panels first: a
        # panel added to them (teaching's predict) speaks of what they show, so its words
        # reach the page after their pictures, in the same frame
        placed = [name for row in layout_rows(names) for name in row]
        try:
            for name in sorted(placed, key=lambda n: not panel_spec(n).default):
                self.panels[name] = panel_spec(name).cls(
                    scheduler, source=self.source, **{"scale": scale, **options.get(name, {})}
                )
        except BaseException:
            for panel in self.panels.values():
                panel.close()
            raise
        self.watch: PageWatch | None = None
        if on_page_close != "ignore":
            self.watch = PageWatch(every=min(1.0, page_timeout / 4), timeout=page_timeout)
        self.refresher = Refresher(
            self.panels.values(),
            scheduler=scheduler,
            source=self.source,
            max_rate=max_rate,
            cpu_budget=cpu_budget,
            resync_every=resync_every,
            clock=clock,
            stop_after=stop_after,
            watch=self.watch,
            on_page_gone=self._page_gone if on_page_close == "shutdown" else None,
            on_replaced=self.close,
            loop=refresh_loop,
        )
        for panel in self.panels.values():
            panel.on_change(self.refresher.poke)
        self._link_selection()
        heading = "" if title is None else f"<h3 style='margin:4px 0'>{html.escape(title)}</h3>"
        about = f"<div style='color:var(--tsl-muted)'>{html.escape(_describe(scheduler))}</div>"
        self.title = title
        self.header = W.HTML(type_css() + heading + about)
        self.header.add_class("tsl-header")
        self.banner = link_banner(scheduler)  # a mirror's link, said at the top (else None)
        self.projector = projector_toggle(scale, self.set_scale)
        self._on_close: list[Callable[[], Any]] = []
        self.stop_button = W.Button(
            description="stop",
            tooltip="stop this view: it keeps its last frame (and runs what on_close() added)",
            layout=W.Layout(width="auto", flex="0 0 auto"),
        )
        self.stop_button.add_class("tsl-stop")
        self.stop_button.on_click(lambda _button: self.close())
        on_page(self)
        self.widget = self._layout()
        self.widget.add_class("tsl-dashboard")
        show_scale(self.widget, scale)
        self.refresher.tick(force=True)  # complete before the first display
        if autostart:
            self.refresher.start()

    @staticmethod
    def _panel_names(panels: Sequence[str] | None, teaching: bool) -> list[str]:
        """The panels asked for (registered ones only: an unknown name is an error naming it)."""
        if panels is None:
            return default_panels(teaching=teaching)
        if isinstance(panels, str):
            raise TypeError(f"panels={panels!r}: expected a sequence of panel names")
        names = list(dict.fromkeys(panels))
        if teaching:
            names += [s.name for s in panel_specs() if s.teaching and s.name not in names]
        unknown = [n for n in names if n not in _PANELS]
        if unknown:
            raise ValueError(
                f"panels={list(panels)!r}: unknown panel {unknown[0]!r}"
                + (f" (and {unknown[1:]!r})" if len(unknown) > 1 else "")
                + f"; registered: {list(_PANELS)}"
            )
        return names

    # -- panels by name ---------------------------------------------------------------------
    def __getattr__(self, name: str) -> Panel:
        panels = self.__dict__.get("panels", {})
        if name in panels:
            return panels[name]  # type: ignore[no-any-return]
        raise AttributeError(f"{type(self).__name__!s} has no attribute or panel {name!r}")

    def _link_selection(self) -> None:
        """A task clicked in the interactive timeline filters the log to its rows."""
        timeline, log = self.panels.get("timeline"), self.panels.get("log")
        live = getattr(timeline, "live", None)
        if live is None or not isinstance(log, LogPanel):
            return

        def selected(change: Any) -> None:
            log.task.value = "" if change["new"] < 0 else str(change["new"])

        live.observe(selected, names="selected")

    def _layout(self, widgets: dict[str, W.Widget] | None = None) -> W.VBox:
        """The view: the header, then the panels' rows as the registry lays them out."""
        p = widgets if widgets is not None else {n: pl.widget for n, pl in self.panels.items()}
        buttons = W.HBox([self.projector, self.stop_button], layout=W.Layout(flex="0 0 auto"))
        top = W.HBox(
            [self.header, buttons] if widgets is None else [self.header],
            layout=W.Layout(justify_content="space-between", align_items="flex-start"),
        )
        rows: list[W.Widget] = [top] if self.banner is None else [top, self.banner.widget]
        for names in layout_rows(p):
            shown = [p[n] for n in names]
            if len(shown) == 2:
                row = W.HBox(shown, layout=W.Layout(flex_flow="row wrap", align_items="flex-start"))
                row.add_class("tsl-row")
                rows.append(row)
            else:
                rows.append(shown[0])
        self._flex(p)
        if self.watch is not None and widgets is None:
            rows.append(self.watch.widget)
        return W.VBox(rows, layout=W.Layout(max_width="100%"))

    def _flex(self, widgets: dict[str, W.Widget]) -> None:
        """Each panel's CSS flex: in a row of two, its registered width (a third more in
        projector type, as its pictures), so the row wraps onto one column rather than
        squeeze a picture; alone in the column, its content's size.
        """
        for names in layout_rows(widgets):
            for name in names:
                width = panel_spec(name).width
                if len(names) == 2 and width is not None:
                    # a flex basis is a width in a row of two; alone in the column it would be
                    # a height (a 560 px queue panel cut its picture): then its content's
                    px = round(width * ZOOM[self.type_scale])
                    widgets[name].layout.flex = f"1 1 {px}px"
                else:
                    widgets[name].layout.flex = "0 0 auto"

    def _page_gone(self) -> None:
        """No page answered for ``page_timeout`` s: close, and shut the scheduler down."""
        self.close()
        self.scheduler.shutdown(wait=False)

    # -- the type scale ---------------------------------------------------------------------
    def set_scale(self, scale: str) -> None:
        """Switch every panel to type scale ``scale`` (``"default"`` or ``"projector"``).

        The tables and texts change at once (a class on the dashboard's box);
        pictures and the timeline's canvas in the next round (poked now).
        """
        scale = check_scale(scale)
        self.type_scale = scale
        for panel in self.panels.values():
            panel.set_scale(scale)
        self._flex({n: pl.widget for n, pl in self.panels.items()})
        show_scale(self.widget, scale, self.projector)
        self.refresher.poke()

    # -- refreshing and releasing ---------------------------------------------------------------
    def refresh(self) -> int:
        """Refresh every panel now, in this thread; returns the number of parts refreshed."""
        return self.refresher.tick(force=True)

    def on_close(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` once the dashboard is closed (by :meth:`close`, or its **stop**
        button): e.g. stop the scenario it shows. A callback that raises is reported, not fatal.

        >>> from tempsched_lab import Scheduler, VirtualClock
        >>> d = Dashboard(Scheduler(VirtualClock()), autostart=False, on_page_close="ignore")
        >>> d.on_close(lambda: print("stopped"))
        >>> d.close()
        stopped
        """
        self._on_close.append(callback)

    def close(self) -> None:
        """Stop the refresher, release the figures and close every widget. Idempotent.

        The dashboard's box stays in the page with its last frame (a static snapshot of what
        it showed, :mod:`~tempsched_lab.widgets.lastframe`), never an empty output.
        """
        if self.closed:
            return
        self.closed = True
        off_page(self)
        self.refresher.stop()  # no round of its own any more: the frame is taken in peace
        snapshot = self._last_frame()
        self.refresher.close()
        try:  # one moment per frame: the one its panels show
            scene = self.refresher.scene
            now = self.scheduler.clock.now() if scene is None else scene.now
            moment = self.scheduler.time_scale.at(now)
        except Exception:  # a closed mirror's clock: the frame says when without a time
            moment = ""
        old = list(self._containers())
        leave_last_frame(self.widget, snapshot, moment=moment)
        # the outputs it was shown in hold the frame itself (a saved notebook shows it
        # without a kernel)
        about = self.title or _describe(self.scheduler)
        self.outputs.freeze(last_frame_html(snapshot, moment=moment), f"<closed: {about}>")
        if self.banner is not None:
            self.banner.close()
        for panel in self.panels.values():
            panel.close()
        for widget in old:
            if widget is not self.widget:
                widget.close()
        if self.watch is not None:
            self.watch.close()
        for callback in list(self._on_close):
            try:
                callback()
            except Exception as exc:  # one failing callback must not keep the others from running
                _LOG.warning("Dashboard.on_close callback %r failed: %s", callback, exc)

    def _last_frame(self) -> str:
        """The HTML of what the dashboard shows now, for its last frame.

        Shown in a notebook output, it is the static export's (:meth:`to_html`) of this
        moment: the panels refreshed once more if the scheduler moved on since their last
        round, and the canvas timeline, which no static page can draw, as a picture of the
        whole run (~0.1-0.3 s of matplotlib, spent only for a dashboard that was shown).
        Never raises: closing must finish, so a failure leaves the frame as it was.
        """
        if not len(self.outputs):
            return static_html(self.widget)
        try:
            if not self._up_to_date():  # the frame shows the moment it was closed at
                self.refresh()
            with self._export_view() as view:
                return static_html(view)
        except Exception as exc:
            _LOG.warning("the last frame is left without its pictures: %s", exc)
            return static_html(self.widget)

    @contextlib.contextmanager
    def _export_view(self) -> Iterator[W.Box]:
        """The dashboard as a static export shows it: the panels' export widgets (a
        picture for the canvas timeline) in the dashboard's layout; the widgets made for it
        are closed afterwards."""
        scene = self.refresher.scene or self.source.scene()
        made: list[W.Widget] = []
        exported = {n: panel.export_widget(scene, made) for n, panel in self.panels.items()}
        view = self._layout(exported) if made else self.widget
        try:
            yield view
        finally:
            if view is not self.widget:
                kept = {id(self.header)} | {id(w) for w in exported.values() if w not in made}
                rows = [w for w in view.children if id(w) not in kept]  # the rows _layout made
                for widget in [*made, *rows, view]:
                    widget.close()

    def _containers(self) -> list[W.Widget]:
        out: list[W.Widget] = [self.header]
        todo: list[W.Widget] = [self.widget]
        owned = {id(w) for panel in self.panels.values() for w in panel._owned}
        while todo:
            w = todo.pop()
            if id(w) in owned:
                continue
            out.append(w)
            todo.extend(getattr(w, "children", ()))
        return out

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        # shown under a display id: on close() the output becomes the last frame's HTML
        self.outputs.show(self.widget)

    # -- marimo: anywidgets only (it renders no ipywidgets container) ---------------------------
    def marimo(self) -> Any:
        """The dashboard as marimo shows it: a :class:`~.liveview.LiveView` and the timeline.

        The view (queue, newest log rows, case counts) is one anywidget kept live
        by this dashboard's refresher, beside the interactive timeline; the
        panels it cannot show are named in it. A marimo cell that ends with the
        dashboard shows this by itself (``_display_``).
        """
        import marimo as mo

        live = self.__dict__.get("_live")
        if live is None:
            shown = ("queue", "log", "timeline")
            live = LivePanel(
                self.scheduler,
                source=self.source,
                title=self.title,
                missing=[name for name in self.panels if name not in shown],
                scale=self.type_scale,
            )
            live.refresh()
            self.refresher.add(live, own=True)
            self.__dict__["_live"] = live
        views = [mo.ui.anywidget(live.view)]
        timeline = getattr(self.panels.get("timeline"), "live", None)
        if timeline is not None:
            views.append(mo.ui.anywidget(timeline))
        return mo.vstack(views)

    def _display_(self) -> Any:
        """What marimo shows for the dashboard: :meth:`marimo`."""
        return self.marimo()

    # -- static export -----------------------------------------------------------------------
    def to_html(
        self, path: str | os.PathLike[str], *, title: str | None = None, widgets: bool = True
    ) -> Path:
        """Write a self-contained HTML snapshot of the dashboard; returns the path.

        The file embeds the widgets' state (``ipywidgets.embed.embed_minimal_html``),
        so it opens in a browser without a kernel: the widget manager script
        (from a CDN) renders the live widget views. A static copy of the same
        content (tables, texts, PNG images inlined) is shown until the widgets
        render, and stays when the page is opened offline.

        ``widgets=False`` writes the static copy alone: a plain page that
        fetches nothing (no script, no CDN), as ``tempsched-lab demo`` writes.

        >>> from tempsched_lab import Scheduler, VirtualClock
        >>> import tempfile
        >>> dash = Dashboard(Scheduler(VirtualClock()), panels=("queue",), autostart=False)
        >>> page = dash.to_html(Path(tempfile.mkdtemp()) / "d.html", widgets=False)
        >>> "<script" in page.read_text()
        False
        >>> dash.close()
        """
        if self.closed:
            raise RuntimeError("this dashboard is closed")
        if not self._up_to_date():
            self.refresh()
        path = Path(path)
        page_title = title or "tempsched_lab dashboard"
        # panels that show something else live (the canvas timeline) export a picture instead
        with self._export_view() as view:
            view.add_class("tsl-dashboard")
            if self.type_scale == PROJECTOR:
                view.add_class(PROJECTOR_CLASS)
            fallback = static_html(view)
            if not widgets:
                page = _STATIC_PAGE.replace("@TITLE@", html.escape(page_title))
                path.write_text(page.replace("@STATIC@", fallback), encoding="utf-8")
                return path
            template = _TEMPLATE.replace("@STATIC@", fallback.replace("{", "{{").replace("}", "}}"))
            embed_minimal_html(
                str(path),
                views=[view],
                title=page_title,
                template=template,
                state=dependency_state([view], drop_defaults=True),
                requirejs=False,
            )
        return path

    def _up_to_date(self) -> bool:
        scene = self.refresher.scene
        s = self.scheduler
        return (
            scene is not None
            and scene.seq == self.source.version
            and scene.now == s.clock.now()
            and scene.closed == s.closed
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else repr(self.refresher)
        return f"<Dashboard {list(self.panels)} for {self.scheduler!r}: {state}>"


def _describe(scheduler: Scheduler) -> str:
    clock = type(scheduler.clock).__name__
    name = f"{scheduler.name} · " if scheduler.name else ""
    return f"{name}{clock} · queue design: {scheduler.queue.design}"


# -- static export ---------------------------------------------------------------------------


# A plain page: the static copy alone, nothing fetched (to_html(..., widgets=False)).
_STATIC_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>@TITLE@</title>
<style>
body { font-family: sans-serif; margin: 12px; font-size: 14px; }
#tsl-static { padding: 8px; font-size: 14px; }
#tsl-static h3 { font-size: 18px; }
</style>
</head>
<body>
<div id="tsl-static">
<p style="color:#666"><i>Static snapshot of a tempsched_lab dashboard: a picture of the run,
no kernel and nothing to click (open the notebooks for the live view).</i></p>
@STATIC@
</div>
</body>
</html>
"""

# {title} and {snippet} are filled by embed_minimal_html; @STATIC@ by to_html (braces doubled).
_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 12px; font-size: 14px; }}
#tsl-static {{ border: 1px dashed #bbb; padding: 8px; font-size: 14px; }}
#tsl-static h3 {{ font-size: 18px; }}
</style>
</head>
<body>
<div id="tsl-static">
<p style="color:#666"><i>Static snapshot of a tempsched_lab dashboard (no kernel). The
interactive view replaces it when the widget manager script loads.</i></p>
@STATIC@
</div>
{snippet}
<script>
(function () {{
  var box = document.getElementById("tsl-static");
  function rendered() {{
    if (document.querySelector(".jupyter-widgets, .widget-box")) {{
      box.style.display = "none";
      return true;
    }}
    return false;
  }}
  if (!rendered()) {{
    var watch = new MutationObserver(function () {{ if (rendered()) watch.disconnect(); }});
    watch.observe(document.body, {{ childList: true, subtree: true }});
  }}
}})();
</script>
</body>
</html>
"""
