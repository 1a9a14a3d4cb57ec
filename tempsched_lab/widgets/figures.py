"""Panels that show plots as PNG images: the timeline and the decision tree.

Each panel owns one reused matplotlib ``Figure`` (Agg, no pyplot) and puts the
PNG bytes into an ``ipywidgets.Image`` shown at its natural pixel size: fewer
messages than an interactive canvas, testable without a front end, and
embeddable in a static export.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Literal

import ipywidgets as W
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

from ..core.decision import Case
from ..log.kinds import Kind
from ..plots import plot_decision_tree, plot_timeline
from ._base import DPI, FigureRenderer, Panel, Part, esc, image_widget, png_size, scroller, stamp
from ._style import PROJECTOR
from .pagewatch import in_voila
from .panels import register_panel
from .scene import case_counts_of, last_decision
from .timeline_widget import TimelineWidget

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from ..core.scheduler import Scheduler
    from .scene import LogSource, Scene

__all__ = ["DecisionTreePanel", "TimelinePanel", "case_counts_of", "last_decision"]

Lanes = Literal["task", "thread"]

#: Width in inches of the timeline in a static export (room for the plot and its legend).
EXPORT_WIDTH = 13.0
#: Seconds a timeline under Voila waits for its page to load the canvas before drawing a PNG.
PAGE_GRACE = 10.0

#: The keyword arguments this version of ``plot_timeline`` takes (newer ones add
#: ``window``, ``lanes`` and ``time_scale``; the panel uses them when present).
_TIMELINE_ARGS = frozenset(inspect.signature(plot_timeline).parameters)


def timeline_supports(name: str) -> bool:
    """Whether :func:`~tempsched_lab.plots.plot_timeline` takes the keyword ``name``."""
    return name in _TIMELINE_ARGS


@register_panel(order=30)
class TimelinePanel(Panel):
    """The task timeline in a window that follows now: interactive in a browser, a PNG elsewhere.

    With ``interactive=True`` (the default) the panel holds a
    :class:`~tempsched_lab.widgets.TimelineWidget`: a canvas in the page with
    wheel zoom, drag pan, follow now, hover text and click-to-highlight, fed
    only the rows new since the last frame. Until a page has loaded its
    module (and always with ``interactive=False``, in a headless run, or in a
    front end that cannot load it) the panel draws
    :func:`tempsched_lab.plots.plot_timeline` as a PNG instead; once a page
    says hello the PNG is hidden and no longer drawn. Exports
    (:meth:`Dashboard.to_html <tempsched_lab.widgets.Dashboard.to_html>`) always
    carry the PNG.

    The picture shows the last ``window`` seconds up to the scene's "now" (a
    sliding window), or the whole run with ``window=0``. **pause** freezes the
    window where it is (new runs inside it still appear); **lanes** switches
    between one lane per task and one lane per executor thread (which worker
    ran what, when: the Gantt view of CPU-scheduling courses). Lanes beyond
    ``max_lanes`` are aggregated by the plot, which says so.

    Args:
        scheduler: the scheduler to show.
        source: a shared :class:`~tempsched_lab.widgets.scene.LogSource`.
        scale: (default: the session's, see ``tempsched_lab.set_scale``)
            the type scale, ``"default"`` (text of 12 px and up) or ``"projector"``
            (16 px and up); :meth:`set_scale` switches it.
        window: seconds shown, ending at now (0: everything). Default: 30 s
            on a real clock, everything on a virtual one.
        lanes: ``"task"`` or ``"thread"``.
        max_lanes: the most lanes drawn one by one.
        slide_every: least seconds between two redraws when only "now" moved.
        width: picture width in inches (shown at 100 dpi, unscaled); the
            height follows the number of lanes.
        interactive: show the browser-side timeline (PNG until a page loads it).
            Under Voila the page always loads it, so no PNG is drawn for the
            first :data:`PAGE_GRACE` seconds (the first paint is not kept waiting
            for a picture the page would hide); a page that has not said hello
            by then gets the PNG.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> clock = VirtualClock()
    >>> s = Scheduler(clock)
    >>> _ = s.schedule(len, at=1.0, args=("ab",))
    >>> _ = clock.step()
    >>> panel = TimelinePanel(s, window=30)
    >>> panel.refresh()
    >>> panel.image.value[:4] == b"\\x89PNG", "30 s window" in panel.caption.value
    (True, True)
    >>> panel.close()
    """

    name = "timeline"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        scale: str | None = None,
        window: float | None = None,
        lanes: Lanes = "task",
        max_lanes: int = 16,
        slide_every: float = 1.0,
        width: float = 8.4,
        interactive: bool = True,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        if lanes not in ("task", "thread"):
            raise ValueError(f"lanes={lanes!r}: expected 'task' or 'thread'")
        if window is None:  # a real clock runs on; a virtual run is short: show all of it
            window = 0.0 if scheduler.clock.virtual else 30.0
        if not (isinstance(window, (int, float)) and window >= 0 and math.isfinite(window)):
            raise ValueError(f"window={window!r}: expected seconds >= 0 (0: the whole run)")
        if isinstance(max_lanes, bool) or not isinstance(max_lanes, int) or max_lanes < 2:
            raise ValueError(f"max_lanes={max_lanes!r}: expected an int >= 2")
        self.max_lanes = max_lanes
        self.slide_every = slide_every
        self.width = width
        self.paused_at: float | None = None
        self._fig = self._renderer((width, 3.4))
        self.window: W.BoundedFloatText = self._own(
            W.BoundedFloatText(
                value=float(window),
                min=0.0,
                max=86_400.0,
                step=5.0,
                description="window (s)",
                tooltip="seconds shown, ending at now; 0 shows the whole run",
                layout=W.Layout(width="170px"),
            ),
            "tsl-timeline-window",
        )
        self.window.style.description_width = "75px"
        self.pause: W.ToggleButton = self._own(
            W.ToggleButton(
                value=False,
                description="pause",
                tooltip="freeze the window where it is; the other panels go on",
                layout=W.Layout(width="auto"),
            ),
            "tsl-timeline-pause",
        )
        self.lanes: W.ToggleButtons = self._own(
            W.ToggleButtons(
                options=[("by task", "task"), ("by thread", "thread")],
                value=lanes,
                tooltips=["one lane per task", "one lane per executor thread (who ran what)"],
                style={"button_width": "80px"},
            ),
            "tsl-timeline-lanes",
        )
        if not timeline_supports("lanes"):  # an older plots module: task lanes only
            self.lanes.value = "task"
            self.lanes.disabled = True
        self.caption: W.HTML = self._own(W.HTML(), "tsl-timeline-caption")
        self.image: W.Image = self._own(image_widget(), "tsl-timeline-image")
        for control in (self.window, self.lanes):
            control.observe(self._on_option, names="value")
        self.pause.observe(self._on_pause, names="value")
        self.tools: W.HBox = self._own(
            W.HBox(
                [self.window, self.pause, self.lanes],
                layout=W.Layout(flex_flow="row wrap", align_items="center"),
            )
        )
        self.picture: W.Box = self._own(scroller(self.image))
        self.live: TimelineWidget | None = None
        self._made_at = time.monotonic()
        self._page_expected = interactive and in_voila()
        children: list[W.Widget] = [self.tools, self.caption]
        if interactive:
            self.live = self._own(
                TimelineWidget(
                    scheduler,
                    lanes=lanes,
                    window=float(window),
                    follow=True,
                    scale=scale,
                    layout=W.Layout(width="100%", min_width="320px"),
                ),
                "tsl-timeline-live",
            )
            self._link_live(self.live)
            children.append(self.live)
        children.append(self.picture)
        self.widget = self._box(children, "Timeline")

    # -- the interactive timeline ------------------------------------------------------------
    @property
    def page_has_canvas(self) -> bool:
        """Whether a page has loaded the interactive timeline (then no PNG is drawn)."""
        return self.live is not None and self.live.hellos > 0

    def awaiting_page(self) -> bool:
        """Under Voila, in the first seconds before the page has loaded the canvas: no PNG yet."""
        return (
            self._page_expected
            and not self.page_has_canvas
            and time.monotonic() - self._made_at < PAGE_GRACE
        )

    def _link_live(self, live: TimelineWidget) -> None:
        """Keep the panel's controls and the canvas's own toolbar saying the same thing."""

        # One direction at a time: a change made while copying the other way is not copied
        # back (a value one side rounds or clamps would otherwise bounce between the two).
        copying: list[bool] = [False]

        def from_panel(_change: Any) -> None:
            if copying[0]:
                return
            copying[0] = True
            try:
                with live.hold_sync():
                    live.window = float(self.window.value or 0.0)
                    live.lanes = str(self.lanes.value)
                    live.follow = not self.pause.value
            finally:
                copying[0] = False

        def from_live(change: Any) -> None:
            if copying[0]:
                return
            copying[0] = True
            try:
                if change["name"] == "lanes" and self.lanes.value != change["new"]:
                    self.lanes.value = change["new"]
                elif change["name"] == "follow" and self.pause.value == change["new"]:
                    self.pause.value = not change["new"]
                elif change["name"] == "window" and self.window.value != change["new"]:
                    self.window.value = round(float(change["new"]), 3)
            finally:
                copying[0] = False

        for control in (self.window, self.lanes, self.pause):
            control.observe(from_panel, names="value")
        live.observe(from_live, names=["lanes", "follow", "window"])
        live.on_hello(self._page_has_canvas)

    def _scale_changed(self, scale: str) -> None:
        if self.live is not None:
            self.live.type_scale = scale

    def _page_has_canvas(self) -> None:
        # the canvas has its own toolbar and draws the same marks: hide the PNG and its tools
        self.picture.layout.display = "none"
        self.tools.layout.display = "none"
        self.image.value = b""  # no stale picture kept in the page (nor counted as shown)
        self._changed()

    @property
    def figure(self) -> Any:
        """The reused matplotlib Figure (``None`` once closed)."""
        return self._fig.figure

    # -- user actions ------------------------------------------------------------------
    def _on_option(self, _change: Any) -> None:
        self._changed()

    def _on_pause(self, change: Any) -> None:
        shown = self.shown
        self.paused_at = (shown.now if shown is not None else None) if change["new"] else None
        self.pause.description = "resume" if change["new"] else "pause"
        self._changed()

    # -- what to draw ------------------------------------------------------------------
    def span(self, scene: Scene) -> tuple[float, float] | None:
        """The clock interval shown, ``(start, end)``, or None for the whole run.

        The window ends at now (or where it was paused); while the scheduler
        is younger than the window, it starts at the clock's origin instead, so
        "now" walks from left to right before the window starts sliding.
        """
        seconds = float(self.window.value or 0.0)
        if seconds <= 0:
            return None
        end = self.paused_at if self.paused_at is not None else scene.now
        origin = scene.scale.origin
        if end - seconds < origin:
            return (origin, origin + seconds)
        return (end - seconds, end)

    def _lanes_wanted(self, frame: pd.DataFrame, lanes: str) -> int:
        if not len(frame):
            return 1
        if lanes == "thread":
            starts = frame["kind"].to_numpy() == Kind.START
            return max(int(frame.loc[starts, "thread"].nunique()), 1)
        return int(frame["task_id"].nunique()) + 1

    def _draw(
        self, ax: Axes, scene: Scene, frame: pd.DataFrame, span: tuple[float, float] | None
    ) -> None:
        lanes = str(self.lanes.value)
        # a scheduler that is shut down has no "now" to follow: its run ends at its last row
        now = None if scene.closed and span is None else scene.now
        kwargs: dict[str, Any] = {"ax": ax, "now": now, "max_lanes": self.max_lanes}
        if timeline_supports("time_scale"):
            kwargs["time_scale"] = scene.scale
        if timeline_supports("lanes"):
            kwargs["lanes"] = lanes
        if span is not None and timeline_supports("window"):
            kwargs["window"] = span  # (start, end): also right while the scheduler is young
        plot_timeline(frame, **kwargs)
        if span is not None and not timeline_supports("window"):
            _set_window(ax, frame, span)  # an older plots module: cut the axis here

    def render(self, scene: Scene) -> None:
        """Redraw the timeline from the rows before ``scene``'s moment, in the window.

        Feeds the interactive timeline the rows it lacks; draws the PNG only
        while no page shows the interactive one.
        """
        if self.live is not None:
            live = self.live
            self.later(lambda: live.push(scene.seq, now=scene.now))
        if self.page_has_canvas or self.awaiting_page():
            if self.image.value:  # a round drawn while the page said hello left its PNG
                self.put(self.image, value=b"")
            self.put(self.caption, value=stamp(scene, self.name) + self._live_caption(scene))
            return
        self.render_png(scene)

    def render_png(self, scene: Scene) -> None:
        """Draw the PNG timeline of ``scene`` (the fallback, and what exports carry)."""
        self.show_png(self.image, self.png(scene))
        lanes = str(self.lanes.value)
        self.put(self.caption, value=stamp(scene, self.name) + self._caption(scene, lanes))

    def png(self, scene: Scene, *, whole: bool = False) -> bytes:
        """The PNG timeline of ``scene``, in the panel's window and lanes.

        ``whole``: the whole run instead of the window, :data:`EXPORT_WIDTH`
        inches wide (what a static export shows: a finished run, all of it,
        with room for the legend beside the plot).
        """
        frame = scene.frame()
        lanes = str(self.lanes.value)
        rows = min(self._lanes_wanted(frame, lanes), self.max_lanes + 1)
        # about 0.26 in (26 px) per lane keeps the lane labels at least 12 px apart
        height = float(np.clip(1.5 + 0.26 * rows, 3.0, 7.5))
        span = None if whole else self.span(scene)
        if whole:
            renderer = FigureRenderer((max(self.width, EXPORT_WIDTH), height))
            try:
                return renderer.render(lambda ax: self._draw(ax, scene, frame, span))
            finally:
                renderer.close()
        self._fig.resize((self.width, height))
        return self._fig.render(lambda ax: self._draw(ax, scene, frame, span))

    def export_widget(self, scene: Scene, made: list[W.Widget]) -> W.Widget:
        """For a static export: the title, the caption and the PNG of the whole run (no canvas).

        An export is read after the run: it shows all of it (not the live
        window, where a short run would fill a tenth of the picture).
        """
        image = image_widget()
        png = self.png(scene, whole=True)
        width, height = png_size(png)
        image.value = png
        image.layout.width, image.layout.height = f"{width}px", f"{height}px"
        image.layout.display = ""
        by = "one lane per executor thread" if self.lanes.value == "thread" else "one lane per task"
        end = (
            "until the scheduler shut down"
            if scene.closed
            else f"up to {scene.scale.at(scene.now)}"
        )
        text = f"the whole run, {end} · {by}"
        caption = W.HTML(
            stamp(scene, self.name)
            + f"<div class='tsl-timeline-text' style='color:var(--tsl-muted)'>{esc(text)}</div>"
        )
        title = W.HTML("<b style='font-size:14px'>Timeline</b>")
        box = W.VBox([title, caption, scroller(image)])
        made.extend([image, caption, title, box.children[-1], box])
        return box

    def _live_caption(self, scene: Scene) -> str:
        by = "executor thread" if self.lanes.value == "thread" else "task"
        return (
            "<div class='tsl-timeline-text' style='color:var(--tsl-muted)'>"
            f"now {esc(scene.scale.at(scene.now))} · one lane per {by} · wheel: zoom, drag: pan, "
            "hover: what happened, click: a task's whole history</div>"
        )

    def _caption(self, scene: Scene, lanes: str) -> str:
        scale = scene.scale
        span = self.span(scene)
        if span is None:
            shown = f"the whole run up to {scale.at(scene.now)}"
        elif self.paused_at is not None:
            shown = f"paused: {scale.text(span[0])} to {scale.text(span[1])}"
        else:
            shown = f"{span[1] - span[0]:g} s window, now {scale.at(scene.now)}"
        by = "one lane per executor thread" if lanes == "thread" else "one lane per task"
        muted = "style='color:var(--tsl-muted)'"
        return f"<div class='tsl-timeline-text' {muted}>{esc(shown)} · {esc(by)}</div>"

    def _key(self, scene: Scene) -> Hashable:
        return (
            scene.seq,
            scene.scale.style,
            self.window.value,
            self.lanes.value,
            self.paused_at,
            self.page_has_canvas,
            self.awaiting_page(),
        )

    def _now_key(self, scene: Scene) -> Hashable:
        return None if self.paused_at is not None else scene.now

    def display_widgets(self) -> list[W.Widget]:
        """The output widgets, and the interactive timeline (its moment only is re-sent)."""
        widgets = super().display_widgets()
        return [*widgets, self.live] if self.live is not None else widgets

    def _make_parts(self) -> list[Part]:
        return [
            Part(
                "timeline",
                self.render,
                self._key,
                drift=self._now_key,
                interval=self.slide_every,
            )
        ]


def _set_window(ax: Axes, frame: pd.DataFrame, span: tuple[float, float]) -> None:
    """Cut the x axis of an older ``plot_timeline`` (which draws ``t - its own origin``)."""
    times = frame["t"].to_numpy(dtype="float64") if len(frame) else np.empty(0)
    finite = times[np.isfinite(times)]
    first = float(finite.min()) if len(finite) else 0.0
    origin = first if abs(first) > 1e6 else 0.0
    ax.set_xlim(span[0] - origin, span[1] - origin)


#: The decision tree picture's size in inches (shown at 100 dpi) unless a panel is given one.
TREE_FIGSIZE = (7.2, 5.0)
#: Its width in projector type (drawn a third denser): 6.3 in = 840 px, whole in a one-column
#: dashboard on a 900 px page (7.2 in was 960 px in a 862 px panel, and scrolled sideways).
PROJECTOR_TREE_WIDTH = 6.3


@register_panel(order=50, width=round(DPI * TREE_FIGSIZE[0]))  # its picture shown whole
class DecisionTreePanel(Panel):
    """The decision tree with the last decision's path highlighted and per-case counts.

    The drawing is :func:`tempsched_lab.plots.plot_decision_tree`; the caption
    under it explains the last decision in words (the case's teaching text) and
    lists the counts, so both are also readable as text.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=2.0)
    >>> _ = s.schedule(print, at=2.0, args=("b",))
    >>> panel = DecisionTreePanel(s)
    >>> panel.refresh()
    >>> "case 6" in panel.caption.value, panel.counts[6]
    (True, 1)
    >>> panel.close()

    Args:
        scheduler: the scheduler to show.
        source: a shared :class:`~tempsched_lab.widgets.scene.LogSource`.
        scale: (default: the session's, see ``tempsched_lab.set_scale``)
            the type scale, ``"default"`` (text of 12 px and up) or ``"projector"``
            (16 px and up); :meth:`set_scale` switches it.
        picture: draw the tree (about 150 ms of CPU per new decision); with
            ``False`` the panel is its caption alone.
        figsize: size of the picture in inches (shown at 100 dpi, unscaled).
    """

    name = "tree"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        scale: str | None = None,
        picture: bool = True,
        figsize: tuple[float, float] = TREE_FIGSIZE,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        self.caption: W.HTML = self._own(W.HTML(), "tsl-tree-caption")
        self.counts: dict[int, int] = {int(c): 0 for c in Case}
        self.last: dict[str, Any] | None = None
        self.image: W.Image | None = None
        children: list[W.Widget] = [self.caption]
        self._figsize = figsize
        # One reused figure per highlighted case: a new decision of a case seen before only
        # redraws its counts (~55 ms of CPU) instead of the whole tree (~190 ms), which keeps a
        # click's effect on the page fast whatever case it lands in.
        self._figs: dict[int | None, FigureRenderer] = {}
        if picture:
            self.image = self._own(image_widget(), "tsl-tree-image")
            children.insert(0, self._own(scroller(self.image)))
        self.widget = self._box(children, "Decision tree")

    def render_picture(self, scene: Scene) -> None:
        """Redraw the tree for the newest decision before ``scene``'s moment."""
        if self.image is None:
            return
        last, counts = scene.decisions()
        self.show_png(self.image, self._tree_png(None if last is None else last["case"], counts))
        self.mark_row(self.image, None if last is None else int(last["seq"]))  # the decision

    def warm_picture(self, scene: Scene) -> None:
        """Draw the tree of one case not drawn yet, ahead of time (in the refresher's quiet rounds).

        A first decision of that case then redraws only its counts (~55 ms of CPU
        instead of ~190 ms), so a click's effect reaches the page as fast whatever
        case it lands in. Eight cases, eight figures: about 2.9 MB of pixels each.
        """
        if self.image is None:
            return
        waiting = [case for case in map(int, Case) if case not in self._figs]
        if waiting:
            self._tree_png(waiting[0], scene.decisions()[1])

    def _tree_png(self, case: int | None, counts: dict[int, int]) -> bytes:
        """The tree with ``case``'s path highlighted, on that case's own reused figure."""
        renderer = self._figs.get(case)
        if renderer is None:
            renderer = self._figs[case] = self._renderer(self._size(self.type_scale))
        return renderer.render(
            lambda ax: plot_decision_tree(case, counts=counts, ax=ax, explain=False),
            reuse=("tree", case),  # the same path highlighted: only counts and title change
            texts=_tree_texts,
        )

    def _size(self, scale: str) -> tuple[float, float]:
        """The picture's size in inches in type scale ``scale`` (narrower in projector type)."""
        if scale == PROJECTOR and self._figsize == TREE_FIGSIZE:
            return (PROJECTOR_TREE_WIDTH, TREE_FIGSIZE[1])
        return self._figsize

    def _scale_changed(self, scale: str) -> None:
        for renderer in self._figs.values():
            renderer.resize(self._size(scale))

    @property
    def drawn_cases(self) -> frozenset[int | None]:
        """Cases whose tree is drawn, ahead of time or for a decision (``None``: no decision)."""
        return frozenset(self._figs)

    def renderer_for(self, case: int | None) -> FigureRenderer | None:
        """The reused figure of ``case``'s tree (its render counts), if drawn yet."""
        return self._figs.get(case)

    def _warm_key(self, _scene: Scene) -> Hashable:
        return len(self._figs)

    def render_caption(self, scene: Scene) -> None:
        """Explain the newest decision before ``scene``'s moment in words, with the counts."""
        self.last, self.counts = scene.decisions()
        text = _caption(scene, self.last, self.counts)
        self.put(self.caption, value=stamp(scene, self.name) + text)

    def _picture_key(self, scene: Scene) -> Hashable:
        last, counts = scene.decisions()
        if last is None:
            return None
        return (last["case"], last["seq"], tuple(counts.values()))

    def _caption_key(self, scene: Scene) -> Hashable:
        return (scene.seq, scene.scale.style)

    def _make_parts(self) -> list[Part]:
        parts = [Part("tree.caption", self.render_caption, self._caption_key)]
        if self.image is not None:
            parts.insert(0, Part("tree.picture", self.render_picture, self._picture_key))
            parts.append(Part("tree.warm", self.warm_picture, self._warm_key, idle=True))
        return parts


def _tree_texts(fig: Figure) -> dict[str, Text]:
    """The texts of a decision tree that change with the counts: ``count:<case>`` and the title."""
    found: dict[str, Text] = {}
    for i, ax in enumerate(fig.axes):
        # ax.texts, not fig.findobj(Text): walking the axes' children creates 250 tick
        # objects each time (~12 ms of the ~55 ms a counts-only redraw took)
        for text in ax.texts:
            gid = text.get_gid() or ""
            if gid.startswith("count:"):
                found[gid] = text
        found[f"title:{i}"] = ax.title
    return found


def _caption(scene: Scene, last: dict[str, Any] | None, counts: dict[int, int]) -> str:
    total = sum(counts.values())
    listed = " · ".join(f"{c}: {n}" for c, n in counts.items())
    count_line = f"<div class='tsl-tree-counts'>{total} decisions by case — {listed}</div>"
    if last is None:
        return "<div><i>no decision yet</i></div>" + count_line
    case = Case(last["case"])
    who = f"task #{last['task_id']}" if last["task_id"] is not None else "a request"
    label = f" ({esc(last['label'])})" if last["label"] else ""
    origin = f", origin {esc(last['origin'])}" if last["origin"] else ""
    return (
        "<div class='tsl-tree-last' style='max-width:600px;line-height:1.4'>"
        f"<b>Last decision</b> (row {last['seq']}, {esc(scene.scale.at(last['t']))}{origin}): "
        f"{who}{label} → <b>case {int(case)}, {esc(case.short)}</b>. "
        f"{esc(case.explanation)}</div>" + count_line
    )
