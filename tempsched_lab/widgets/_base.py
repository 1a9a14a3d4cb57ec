"""Pieces every panel shares: the panel base class, refresh parts, staged writes, PNG rendering.

A panel owns its widgets and exposes one :attr:`Panel.widget`. Its display is
computed from a :class:`~tempsched_lab.widgets.scene.Scene` (one moment of the
scheduler) in :meth:`Panel.refresh`, never in its constructor, so it can be
tested without a browser. A refresher drives panels through their
:meth:`Panel.parts`: each part has a cheap change key (whatever it shows from
the scene) and optionally a *drift* key for changes that only follow the clock
(countdowns, a window sliding with "now"), which may wait ``interval`` seconds.

During a refresher round, panels *stage* their output writes (:meth:`Panel.put`)
and the refresher applies them all at the end, so the browser receives one
frame's messages together and never shows half of one frame beside half of
another.
"""

from __future__ import annotations

import html
import io
import math
import struct
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from ..plots import case_color as plots_case_color
from ..plots.style import rc_params, type_scale
from ..time.scale import fmt_duration
from ._style import (
    MIN_PX,
    ZOOM,
    check_scale,
    off_page,
    on_page,
    resolve_scale,
    show_scale,
    type_css,
)
from .scene import LogSource, Scene

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler

__all__ = [
    "MIN_TEXT_PX",
    "FigureRenderer",
    "Panel",
    "Part",
    "Stage",
    "fmt_countdown",
    "png_size",
    "stamp",
]

#: The smallest text, in CSS pixels, anywhere in the dashboard (tables and pictures) in the
#: default type scale; 16 px in projector type (``_style.MIN_PX``).
MIN_TEXT_PX = 12.0
#: Pictures are rendered at this many dots per inch and shown at their natural size.
DPI = 100


def case_color(case: int) -> str:
    """The plots' colour of a decision case."""
    return str(plots_case_color(case))


#: The CSS of the panels' HTML tables, sent with each table (an HTML widget has no stylesheet).
TABLE_STYLE = (
    "<style>.tsl-table{border-collapse:collapse;font-size:12px;font-family:monospace}"
    ".tsl-table th,.tsl-table td{padding:1px 6px;border-bottom:1px solid var(--tsl-grid);"
    "text-align:left;vertical-align:top}</style>"
)

# -- formatting ------------------------------------------------------------------------------


def esc(value: Any) -> str:
    """HTML-escaped text of ``value``; missing values (None, NaN, NA) become ``""``.

    >>> esc("<b>"), esc(None), esc(float("nan"))
    ('&lt;b&gt;', '', '')
    """
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    return html.escape(str(value))


def fmt_countdown(due: float, now: float) -> str:
    """How long until ``due``: ``in 1.250 s``, ``due now`` or ``late 100.00 ms``.

    >>> fmt_countdown(3.25, 2.0), fmt_countdown(2.0, 2.0), fmt_countdown(1.9, 2.0)
    ('in 1.250 s', 'due now', 'late 100.00 ms')
    """
    left = due - now
    if abs(left) < 5e-4:
        return "due now"
    return f"in {fmt_duration(left)}" if left > 0 else f"late {fmt_duration(-left)}"


def fmt_period(period: float | None) -> str:
    """``every 0.5 s`` for a periodic task, ``once`` otherwise (as the user gave it)."""
    if period is None or (isinstance(period, float) and math.isnan(period)):
        return "once"
    return f"every {period:g} s"


def stamp(scene: Scene, panel: str) -> str:
    """An invisible marker of the moment a panel's HTML was rendered from.

    Every panel's main text carries one, so a test (or a curious user with the
    browser's inspector) can check that all panels show the same moment: the
    log's row count (``data-seq``) and the clock (``data-t``, seconds since
    the clock's origin: comparable between the sides of a side by side).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> stamp(LogSource(Scheduler(VirtualClock())).scene(), "log")
    "<span class='tsl-stamp' data-panel='log' data-seq='0' data-t='0.000000' hidden></span>"
    """
    t = scene.scale.rel(scene.now)
    return (
        f"<span class='tsl-stamp' data-panel='{esc(panel)}' data-seq='{scene.seq}' "
        f"data-t='{t:.6f}' hidden></span>"
    )


# -- staged writes -------------------------------------------------------------------------------

_STAGING = threading.local()


class Stage:
    """Widget writes collected during one refresher round, applied together by :meth:`apply`.

    >>> label = W.HTML("old")
    >>> with Stage().collect() as stage:
    ...     Panel.put(label, value="new")
    ...     label.value
    'old'
    >>> stage.apply(), label.value
    (1, 'new')
    """

    def __init__(self) -> None:
        self.writes: dict[int, tuple[W.Widget, dict[str, Any]]] = {}
        self.calls: list[Callable[[], Any]] = []

    def put(self, widget: W.Widget, traits: dict[str, Any]) -> None:
        """Remember ``traits`` for ``widget`` (later writes of a trait win)."""
        entry = self.writes.setdefault(id(widget), (widget, {}))
        entry[1].update(traits)

    @contextmanager
    def collect(self) -> Iterator[Stage]:
        """Within the block, :meth:`Panel.put` in this thread stages instead of writing."""
        before = getattr(_STAGING, "stage", None)
        _STAGING.stage = self
        try:
            yield self
        finally:
            _STAGING.stage = before

    def later(self, call: Callable[[], Any]) -> None:
        """Remember ``call`` (it sends a message): :meth:`apply` makes it before the writes."""
        self.calls.append(call)

    def absorb(self, other: Stage) -> None:
        """Take ``other``'s staged calls and writes: they are applied with this stage's."""
        self.calls.extend(other.calls)
        for widget, traits in other.writes.values():
            self.put(widget, traits)
        other.calls, other.writes = [], {}

    @staticmethod
    def current() -> Stage | None:
        """The stage collecting this thread's writes, if any."""
        return getattr(_STAGING, "stage", None)

    def apply(self) -> int:
        """Make the staged calls, then write every staged trait (one message per widget).

        Returns how many widgets were written.
        """
        calls, self.calls = self.calls, []
        for call in calls:
            call()
        done = 0
        for widget, traits in self.writes.values():
            if _closed(widget):
                continue
            _write(widget, traits)
            done += 1
        self.writes.clear()
        return done


def _closed(widget: W.Widget) -> bool:
    return getattr(widget, "_tsl_closed", False)


def _write(widget: W.Widget, traits: dict[str, Any]) -> None:
    changed = {k: v for k, v in traits.items() if getattr(widget, k) != v}
    if not changed:
        return
    if len(changed) == 1:
        ((name, value),) = changed.items()
        setattr(widget, name, value)
        return
    with widget.hold_sync():
        for name, value in changed.items():
            setattr(widget, name, value)


# -- parts and panels ------------------------------------------------------------------------


class Part:
    """One independently refreshed piece of a panel.

    ``render(scene)`` recomputes the display from a scene; ``key(scene)`` is
    cheap and changes whenever the display's *content* would (a refresher
    renders the part in the same round); ``drift(scene)``, optional, changes
    when only the clock moved the display (countdowns, a sliding window), and
    such a change waits at least ``interval`` seconds. An ``idle`` part is
    work done ahead of time (it changes no widget): the refresher renders it
    only in rounds with nothing else to draw and no click waiting, one per round.
    """

    __slots__ = ("drift", "idle", "interval", "key", "name", "render")

    def __init__(
        self,
        name: str,
        render: Callable[[Scene], None],
        key: Callable[[Scene], Hashable],
        *,
        drift: Callable[[Scene], Hashable] | None = None,
        interval: float = 0.0,
        idle: bool = False,
    ) -> None:
        self.name = name
        self.render = render
        self.key = key
        self.drift = drift
        self.interval = float(interval)
        self.idle = idle

    def __repr__(self) -> str:
        return f"Part({self.name!r}, interval={self.interval})"


class Panel:
    """Base class: a panel owns its widgets, shows them in :attr:`widget`, renders a scene.

    Subclasses create widgets with :meth:`_own` (so :meth:`close` releases
    them), set :attr:`widget` and build their refresh units in
    :meth:`_make_parts`. Rendering runs under the panel's lock, so a user
    action (the kernel's main thread) and the refresher (its own thread) never
    interleave on one panel. :attr:`shown` is the scene the panel shows.
    """

    #: Short name used by dashboards and in CSS classes (``tsl-<name>``).
    name = "panel"
    #: The panel's top widget (set by each subclass's constructor).
    widget: W.Box

    def __init__(
        self, scheduler: Scheduler, *, source: LogSource | None = None, scale: str | None = None
    ) -> None:
        self.scheduler = scheduler
        self.source = source if source is not None else LogSource(scheduler)
        #: the type scale: "default" (text of 12 px and more) or "projector" (16 px and more)
        self.type_scale = resolve_scale(scale)
        self._lock = threading.RLock()
        self._owned: list[W.Widget] = []
        self._renderers: list[FigureRenderer] = []
        self._listeners: list[Callable[[], Any]] = []
        self._parts: list[Part] | None = None
        self.shown: Scene | None = None
        self.closed = False
        if source is None:  # shown alone (a dashboard's panels follow their dashboard)
            on_page(self, _switch_alone)

    # -- building ----------------------------------------------------------------------
    def _own(self, widget: W.Widget, *classes: str) -> Any:
        """Remember ``widget`` (closed with the panel) and add CSS classes to it."""
        for cls in classes:
            widget.add_class(cls)
        self._owned.append(widget)
        return widget

    def _renderer(self, figsize: tuple[float, float], dpi: int = DPI) -> FigureRenderer:
        renderer = FigureRenderer(figsize, dpi, scale=self.type_scale)
        self._renderers.append(renderer)
        return renderer

    def _title(self, text: str) -> W.HTML:
        # the type scale's style sheet travels with every panel (a panel may be shown alone)
        title = W.HTML(f"{type_css()}<b style='font-size:14px'>{esc(text)}</b>")
        return self._own(title, "tsl-title")

    def _box(self, children: list[W.Widget], title: str) -> W.VBox:
        box = W.VBox(
            [self._title(title), *children],
            layout=W.Layout(margin="0 8px 8px 0", min_width="0", overflow="hidden"),
        )
        show_scale(box, self.type_scale)
        return self._own(box, "tsl-panel", f"tsl-{self.name}")

    # -- the type scale ----------------------------------------------------------------
    def set_scale(self, scale: str) -> None:
        """Switch the panel's type scale (``"default"`` or ``"projector"``); redrawn next round.

        Pictures are drawn a third larger in projector type, with the figures'
        type scale (:mod:`tempsched_lab.plots.style`); the HTML follows the
        ``tsl-projector`` class of the panel's box.
        """
        scale = check_scale(scale)
        with self._lock:
            if self.closed or scale == self.type_scale:
                return
            self.type_scale = scale
            for renderer in self._renderers:
                renderer.set_scale(scale)
            box = getattr(self, "widget", None)
            if box is not None:
                show_scale(box, scale)
            self._scale_changed(scale)

    def _scale_changed(self, scale: str) -> None:
        """A subclass's widgets that follow the scale by other means (the timeline's canvas)."""

    # -- writing -----------------------------------------------------------------------
    @staticmethod
    def put(widget: W.Widget, **traits: Any) -> None:
        """Write output traits: staged during a refresher round, at once otherwise."""
        stage: Stage | None = getattr(_STAGING, "stage", None)
        if stage is not None:
            stage.put(widget, traits)
        else:
            _write(widget, traits)

    @staticmethod
    def later(call: Callable[[], Any]) -> None:
        """Run ``call`` (which sends messages): with the round's writes during a round, else now."""
        stage: Stage | None = getattr(_STAGING, "stage", None)
        if stage is not None:
            stage.later(call)
        else:
            call()

    @staticmethod
    @contextmanager
    def one_frame() -> Iterator[None]:
        """Writes made in the block reach the page together (staged, then applied at its end).

        Inside a refresher round the round's own stage collects them already;
        outside one (a button's callback) the block gets a stage of its own, so
        a slow picture never lands after the texts drawn beside it.
        """
        if getattr(_STAGING, "stage", None) is not None:
            yield
            return
        stage = Stage()
        with stage.collect():
            yield
        stage.apply()

    def mark_row(self, widget: W.Widget, row: int | None) -> None:
        """Say which log row a picture shows, as its class ``tsl-row-<seq>`` (staged like a write).

        The page (and a test) can then check that a picture and the texts beside
        it show the same row. (A class, not a tooltip: this Voila's widget manager
        cannot render an image that has one.)
        """
        kept = tuple(c for c in widget._dom_classes if not c.startswith("tsl-row-"))
        self.put(widget, _dom_classes=kept if row is None else (*kept, f"tsl-row-{row}"))

    def show_png(self, image: W.Image, png: bytes) -> None:
        """Put PNG bytes in ``image``, shown at exactly their pixel size (never scaled)."""
        width, height = png_size(png)
        self.put(image, value=png)
        self.put(image.layout, width=f"{width}px", height=f"{height}px", display="")

    # -- refreshing --------------------------------------------------------------------
    def _make_parts(self) -> list[Part]:
        return []

    def parts(self) -> list[Part]:
        """The panel's refresh units (see :class:`Part`), the same objects at every call."""
        if self._parts is None:
            self._parts = self._make_parts()
        return self._parts

    def refresh(self, scene: Scene | None = None) -> None:
        """Render every part from ``scene`` (default: a moment taken now), in this thread."""
        scene = scene if scene is not None else self.source.scene()
        with self._lock:
            if self.closed:
                return
            for part in self.parts():
                part.render(scene)
            self.shown = scene

    def export_widget(self, scene: Scene, made: list[W.Widget]) -> W.Widget:
        """The widget a static export shows for this panel (default: :attr:`widget`).

        A panel that shows something a static page cannot (a canvas fed by the
        kernel) returns new widgets instead, and appends each one it makes to
        ``made`` (the export closes them).
        """
        return self.widget

    def display_widgets(self) -> list[W.Widget]:
        """The output-only widgets (HTML, labels, images): safe to re-send at any time."""
        return [w for w in self._owned if isinstance(w, (W.HTML, W.HTMLMath, W.Label, W.Image))]

    def on_change(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` after each user action of this panel (dashboards poke a refresher).

        A panel without listeners refreshes itself after a user action.
        """
        self._listeners.append(callback)

    def _changed(self) -> None:
        if not self._listeners:
            self.refresh()
            return
        for callback in list(self._listeners):
            callback()

    # -- releasing ---------------------------------------------------------------------
    def close(self) -> None:
        """Release the figures and close every widget of the panel. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            off_page(self)
            for renderer in self._renderers:
                renderer.close()
            self._renderers.clear()
            self._listeners.clear()
            for widget in reversed(self._owned):
                widget._tsl_closed = True
                widget.close()
            self._owned.clear()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<{type(self).__name__} {state} for {self.scheduler!r}>"


def _switch_alone(panel: Panel, scale: str) -> None:
    """A panel shown alone, switched by the page's projector toggle: its texts and pictures."""
    panel.set_scale(scale)
    panel.refresh()  # no refresher draws it again: its pictures at the new size now


def image_widget() -> W.Image:
    """An empty PNG ``Image``, hidden until :meth:`Panel.show_png` gives it a picture.

    (An ``<img>`` without a picture shows as a broken image in a browser.)
    """
    return W.Image(format="png", layout=W.Layout(max_width="none", flex="0 0 auto", display="none"))


def scroller(child: W.Widget) -> W.Box:
    """A box that scrolls sideways when ``child`` (a picture) is wider than the column."""
    layout = W.Layout(overflow="auto hidden", max_width="100%", flex="0 0 auto")
    return W.Box([child], layout=layout)


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels of PNG bytes (read from the header).

    >>> r = FigureRenderer((2, 1), dpi=50)
    >>> png_size(r.render(lambda ax: None))
    (100, 50)
    """
    if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) < 24:
        raise ValueError("png: not PNG bytes")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


# -- rendering -------------------------------------------------------------------------------


class FigureRenderer:
    """One reused matplotlib Figure (Agg, no pyplot) that turns drawings into PNG bytes.

    The picture is shown at its natural size, so its pixel size is fixed by
    ``figsize`` and ``dpi``; no text in it is drawn smaller than
    :data:`MIN_TEXT_PX` pixels (smaller fonts are raised to that size).

    >>> r = FigureRenderer((2, 1), dpi=50)
    >>> png = r.render(lambda ax: ax.plot([0, 1]))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", r.renders
    (True, 1)
    >>> r.close()
    """

    def __init__(
        self,
        figsize: tuple[float, float],
        dpi: int = DPI,
        *,
        min_text_px: float | None = None,
        scale: str | None = None,
    ) -> None:
        self.scale = resolve_scale(scale)
        #: dots per inch at the default type scale; projector type draws the same picture
        #: ``ZOOM`` times denser: every text and mark a third larger, the layout unchanged
        self.base_dpi = float(dpi)
        self.figure: Figure | None = Figure(
            figsize=figsize, dpi=self.base_dpi * ZOOM[self.scale], layout="constrained"
        )
        self.canvas: Any = FigureCanvasAgg(self.figure)  # Any: the Agg canvas has no type hints
        self._fixed_min = min_text_px
        self.min_text_px = float(min_text_px if min_text_px is not None else MIN_PX[self.scale])
        #: pictures rendered, and how many of them redrew only their changing texts
        self.renders = 0
        self.text_redraws = 0
        #: the font sizes (px) raised to the minimum in the last render
        self.raised: list[float] = []
        self._reuse: Hashable | None = None
        self._texts: dict[str, Text] = {}
        self._background: Any = None
        self._scratch: Figure | None = None

    def resize(self, figsize: tuple[float, float]) -> None:
        """Change the picture's size in inches (the next render uses it)."""
        if self.figure is not None and tuple(self.figure.get_size_inches()) != tuple(figsize):
            self.figure.set_size_inches(figsize, forward=False)

    def set_scale(self, scale: str) -> None:
        """Draw for type scale ``scale`` from the next render on (projector: a third denser)."""
        self.scale = check_scale(scale)
        if self._fixed_min is None:
            self.min_text_px = float(MIN_PX[self.scale])
        self._reuse, self._scratch = None, None
        if self.figure is not None:
            self.figure.set_dpi(self.base_dpi * ZOOM[self.scale])

    def render(
        self,
        draw: Callable[[Axes], Any],
        *,
        reuse: Hashable | None = None,
        texts: Callable[[Figure], dict[str, Text]] | None = None,
    ) -> bytes:
        """Clear the figure, call ``draw(ax)`` on a fresh Axes, return the PNG bytes.

        With ``reuse`` (a key) and ``texts`` (the drawing's changing texts by
        name): when the last drawing had the same ``reuse`` key, only those
        texts are redrawn over the last picture's background. The drawing is
        still built (on a scratch figure: about 25 ms for the decision tree)
        to read the new texts, but not drawn: redrawing the tree for new counts
        costs about 60 ms of CPU instead of 190 ms. If the texts do not match
        by name, everything is drawn again.
        """
        fig = self.figure
        if fig is None:
            raise RuntimeError("this renderer is closed")
        if reuse is not None and texts is not None and reuse == self._reuse:
            png = self._redraw_texts(draw, texts)
            if png is not None:
                self.renders += 1
                self.text_redraws += 1
                return png
        fig.clear()
        with self._typeset():
            draw(fig.add_subplot())
            self.raised = raise_small_text(fig, self.min_text_px)
            changing = texts(fig) if texts is not None and reuse is not None else {}
            for text in changing.values():
                text.set_animated(True)  # left out of the background
            canvas = self.canvas
            canvas.draw()
        if changing:
            self._background = canvas.copy_from_bbox(fig.bbox)
            for text in changing.values():
                fig.draw_artist(text)
        self._texts, self._reuse = changing, (reuse if changing else None)
        self.renders += 1
        return self._png()

    def _redraw_texts(
        self, draw: Callable[[Axes], Any], texts: Callable[[Figure], dict[str, Text]]
    ) -> bytes | None:
        fig = self.figure
        assert fig is not None
        if self._scratch is None:  # laid out like the figure, so plots measure the same Axes
            width, height = (float(x) for x in fig.get_size_inches())
            self._scratch = Figure(figsize=(width, height), dpi=fig.dpi, layout="constrained")
        elif self._scratch.dpi != fig.dpi:
            self._scratch.set_dpi(fig.dpi)
        scratch = self._scratch
        scratch.clear()
        with self._typeset():
            draw(scratch.add_subplot())
            raise_small_text(scratch, self.min_text_px)
        new = texts(scratch)
        if new.keys() != self._texts.keys() or any(
            new[name].get_text().count("\n") != text.get_text().count("\n")
            for name, text in self._texts.items()
        ):
            return None  # another shape (a title wrapped on one more line): draw it all
        self.canvas.restore_region(self._background)
        for name, text in self._texts.items():
            source = new[name]
            text.set_text(source.get_text())
            text.set_fontsize(source.get_fontsize())
            text.set_color(source.get_color())
            text.set_fontweight(source.get_fontweight())
            fig.draw_artist(text)
        return self._png()

    @contextmanager
    def _typeset(self) -> Iterator[None]:
        """Draw with the plots' default type (points): a denser picture makes it larger in px.

        A picture laid out in the default type and drawn ``ZOOM`` times denser
        keeps its layout exactly (nothing overlaps or is cut that was not), so
        projector pictures change only in size.
        """
        import matplotlib

        params: Any = rc_params("default")  # matplotlib types its keys as literals
        with type_scale("default"), matplotlib.rc_context(params):
            yield

    def _png(self) -> bytes:
        from PIL import Image  # matplotlib's own PNG writer uses Pillow as well

        canvas = self.canvas
        image = Image.frombuffer(
            "RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1
        )
        buf = io.BytesIO()
        # zlib level 1: the decision tree's 720x500 picture encodes in 9 ms instead of 13 ms
        # (level 6, Pillow's default) and is 3 % smaller, not larger (flat colours)
        image.save(buf, format="png", compress_level=1)
        return buf.getvalue()

    def close(self) -> None:
        """Drop the figure (its memory is freed with it; there is no pyplot registry)."""
        if self.figure is not None:
            self.figure.clear()
            self.figure = None
        self._scratch = None
        self._background = None
        self._texts = {}


def text_px(text: Text, dpi: float) -> float:
    """The height of ``text``'s font in pixels at ``dpi``."""
    return float(text.get_fontsize()) * dpi / 72.0


def raise_small_text(fig: Figure, min_px: float) -> list[float]:
    """Raise every visible text of ``fig`` smaller than ``min_px`` pixels to that size.

    Returns the sizes (px) that were raised, so a test can tell when a plot
    draws text too small for its default size.
    """
    dpi = float(fig.dpi)
    raised = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text():
            continue
        px = text_px(text, dpi)
        if px < min_px - 1e-6:
            raised.append(px)
            text.set_fontsize(min_px * 72.0 / dpi)
    return raised
