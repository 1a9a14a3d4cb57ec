"""Pieces every panel shares: the panel base class, refresh parts, PNG rendering, log reads.

A panel owns its widgets and exposes one :attr:`Panel.widget`. Its display is
computed in :meth:`Panel.refresh`, never in the constructor's callers, so it can
be tested without a browser. A refresher (:class:`~tempsched_lab.widgets.Refresher`)
drives panels through their :meth:`Panel.parts`: each part has a cheap change
key and a minimum interval, so slow parts (plots) are redrawn less often than
fast ones (HTML tables).
"""

from __future__ import annotations

import html
import io
import math
import threading
from collections.abc import Callable, Hashable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..plots import case_color as plots_case_color

if TYPE_CHECKING:
    from ..queues import QueueSnapshot
    from ..scheduler import Scheduler

__all__ = ["FigureRenderer", "LogSource", "Panel", "Part", "fmt_countdown", "fmt_time"]

#: Values of ``t`` at least this large are read as epoch seconds (a real clock).
_EPOCH_LIKE = 1e6


def case_color(case: int) -> str:
    """The plots' colour of a decision case."""
    return str(plots_case_color(case))


#: The CSS of the panels' HTML tables, sent with each table (an HTML widget has no stylesheet).
TABLE_STYLE = (
    "<style>.tsl-table{border-collapse:collapse;font-size:12px;font-family:monospace}"
    ".tsl-table th,.tsl-table td{padding:1px 6px;border-bottom:1px solid #ddd;"
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


def fmt_time(t: float | None) -> str:
    """A clock time: seconds with 3 decimals, or local ``HH:MM:SS.mmm`` for epoch-like values.

    >>> fmt_time(2.5), fmt_time(None)
    ('2.500', '')
    """
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return ""
    t = float(t)
    if abs(t) >= _EPOCH_LIKE:
        return datetime.fromtimestamp(t).strftime("%H:%M:%S.%f")[:-3]
    return f"{t:.3f}"


def fmt_countdown(due: float, now: float) -> str:
    """How long until ``due``: ``in 1.250 s``, ``due now`` or ``late 0.100 s``.

    >>> fmt_countdown(3.25, 2.0), fmt_countdown(2.0, 2.0), fmt_countdown(1.9, 2.0)
    ('in 1.250 s', 'due now', 'late 0.100 s')
    """
    left = due - now
    if abs(left) < 5e-4:
        return "due now"
    return f"in {left:.3f} s" if left > 0 else f"late {-left:.3f} s"


def fmt_period(period: float | None) -> str:
    """``every 0.5 s`` for a periodic task, ``once`` otherwise."""
    if period is None or (isinstance(period, float) and math.isnan(period)):
        return "once"
    return f"every {period:g} s"


# -- parts and panels ------------------------------------------------------------------------


class Part:
    """One independently refreshed piece of a panel.

    ``key()`` is cheap and changes whenever the display would; ``refresh()``
    recomputes the display; ``interval`` is the least time between two
    refreshes by a refresher (0: as often as its rate allows).
    """

    __slots__ = ("interval", "key", "name", "refresh")

    def __init__(
        self,
        name: str,
        refresh: Callable[[], None],
        key: Callable[[], Hashable],
        interval: float = 0.0,
    ) -> None:
        self.name = name
        self.refresh = refresh
        self.key = key
        self.interval = float(interval)

    def __repr__(self) -> str:
        return f"Part({self.name!r}, interval={self.interval})"


class Panel:
    """Base class: a panel owns its widgets, shows them in :attr:`widget`, refreshes on demand.

    Subclasses create widgets with :meth:`_own` (so :meth:`close` releases them),
    set :attr:`widget` and return their refresh units from :meth:`parts`.
    Every refresh runs under the panel's lock, so a button callback (main
    thread) and the refresher (its own thread) never interleave on one panel.
    """

    #: Short name used by dashboards and in CSS classes (``tsl-<name>``).
    name = "panel"
    #: The panel's top widget (set by each subclass's constructor).
    widget: W.Box

    def __init__(self, scheduler: Scheduler, *, source: LogSource | None = None) -> None:
        self.scheduler = scheduler
        self.source = source if source is not None else LogSource(scheduler)
        self._lock = threading.RLock()
        self._owned: list[W.Widget] = []
        self._renderers: list[FigureRenderer] = []
        self._listeners: list[Callable[[], Any]] = []
        self.closed = False

    # -- building ----------------------------------------------------------------------
    def _own(self, widget: W.Widget, *classes: str) -> Any:
        """Remember ``widget`` (closed with the panel) and add CSS classes to it."""
        for cls in classes:
            widget.add_class(cls)
        self._owned.append(widget)
        return widget

    def _renderer(self, figsize: tuple[float, float], dpi: int) -> FigureRenderer:
        renderer = FigureRenderer(figsize, dpi)
        self._renderers.append(renderer)
        return renderer

    def _title(self, text: str) -> W.HTML:
        return self._own(W.HTML(f"<b style='font-size:1.05em'>{esc(text)}</b>"), "tsl-title")  # type: ignore[no-any-return]

    def _box(self, children: list[W.Widget], title: str) -> W.VBox:
        box = W.VBox([self._title(title), *children], layout=W.Layout(margin="0 8px 8px 0"))
        return self._own(box, "tsl-panel", f"tsl-{self.name}")  # type: ignore[no-any-return]

    # -- refreshing --------------------------------------------------------------------
    def parts(self) -> list[Part]:
        """The panel's refresh units (see :class:`Part`)."""
        return []

    def _locked(self, fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            with self._lock:
                if not self.closed:
                    fn()

        run.__name__ = getattr(fn, "__name__", "refresh")
        return run

    def refresh(self) -> None:
        """Recompute every part of the display now (synchronously, in this thread)."""
        for part in self.parts():
            part.refresh()

    def display_widgets(self) -> list[W.Widget]:
        """The output-only widgets (HTML, labels, images): safe to re-send at any time."""
        return [w for w in self._owned if isinstance(w, (W.HTML, W.HTMLMath, W.Label, W.Image))]

    def on_change(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` after each user action of this panel that changed the scheduler."""
        self._listeners.append(callback)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            callback()

    # -- releasing ---------------------------------------------------------------------
    def close(self) -> None:
        """Release the figures and close every widget of the panel. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            for renderer in self._renderers:
                renderer.close()
            self._renderers.clear()
            self._listeners.clear()
            for widget in reversed(self._owned):
                widget.close()
            self._owned.clear()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<{type(self).__name__} {state} for {self.scheduler!r}>"


def image_widget() -> W.Image:
    """An empty PNG ``Image`` shown at its natural size (never stretched), at most full width."""
    return W.Image(format="png", layout=W.Layout(max_width="100%", align_self="flex-start"))


def picture_size(design: str) -> tuple[float, float]:
    """Figure size (inches) for a queue design's picture: the wheel needs a squarer one."""
    return (5.4, 4.4) if design == "wheel" else (6.4, 2.8)


# -- rendering -------------------------------------------------------------------------------


class FigureRenderer:
    """One reused matplotlib Figure (Agg, no pyplot) that turns drawings into PNG bytes.

    >>> r = FigureRenderer((2, 1), dpi=50)
    >>> png = r.render(lambda ax: ax.plot([0, 1]))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", r.renders
    (True, 1)
    >>> r.close()
    """

    def __init__(self, figsize: tuple[float, float], dpi: int = 72) -> None:
        self.figure: Figure | None = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.renders = 0

    def render(self, draw: Callable[[Axes], Any]) -> bytes:
        """Clear the figure, call ``draw(ax)`` on a fresh Axes, return the PNG bytes."""
        fig = self.figure
        if fig is None:
            raise RuntimeError("this renderer is closed")
        fig.clear()
        draw(fig.add_subplot())
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        self.renders += 1
        return buf.getvalue()

    def close(self) -> None:
        """Drop the figure (its memory is freed with it; there is no pyplot registry)."""
        if self.figure is not None:
            self.figure.clear()
            self.figure = None


# -- reading the scheduler -------------------------------------------------------------------


class LogSource:
    """Shared, cached reads of one scheduler's event log for the panels of a dashboard.

    :meth:`frame` builds the log's DataFrame at most once per new row count,
    however many panels ask for it in one refresh.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> src = LogSource(s)
    >>> _ = s.schedule(print, at=1.0)
    >>> src.version, len(src.frame()), src.frame() is src.frame()
    (1, 1, True)
    """

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self._frame_version = -2
        self._snapshot: QueueSnapshot | None = None
        self._snapshot_version = -2

    @property
    def version(self) -> int:
        """Rows ever recorded (``log.next_seq``); -1 when logging is off."""
        log = self.scheduler.log
        return log.next_seq if log.enabled else -1

    @property
    def first_seq(self) -> int:
        """``seq`` of the oldest row kept (above 0 when a bounded log dropped rows)."""
        return self.scheduler.log.dropped

    def frame(self) -> pd.DataFrame:
        """The event log as a DataFrame (cached until a new row arrives)."""
        with self._lock:
            version = self.version
            if self._frame is None or version != self._frame_version:
                self._frame = self.scheduler.log.to_frame()
                self._frame_version = version
            return self._frame

    def snapshot(self) -> QueueSnapshot:
        """The queue's snapshot, cached until a new row arrives.

        Every change of the queue (schedule, dispatch, cancel, drop) is a log
        row, so with logging on the row count is a complete change marker.
        Without a log, a fresh snapshot is taken each time.
        """
        with self._lock:
            version = self.version
            if self._snapshot is None or version < 0 or version != self._snapshot_version:
                self._snapshot = self.scheduler.snapshot()
                self._snapshot_version = version
            return self._snapshot

    def tail(self, n: int) -> pd.DataFrame:
        """The last ``n`` rows, without building the whole frame."""
        return self.scheduler.log.tail(n)
