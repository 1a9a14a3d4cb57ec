"""The interactive timeline: a canvas in the browser, fed only the event-log rows it lacks.

:class:`TimelineWidget` is an `anywidget <https://anywidget.dev>`_ whose front
end is one small ES module shipped in this package (``static/timeline.js``: no
npm build step, no CDN, so it works offline in JupyterLab, Notebook 7, VS Code
and Voila). It draws the same marks as :func:`tempsched_lab.plots.plot_timeline`
(the same palette and glyphs, sent from :mod:`tempsched_lab.plots.colors` and
the plot's mark table) on a ``<canvas>``, with wheel zoom, drag pan, a
*follow now* toggle, reset, hover text and click-to-highlight a task's history.

**The feed.** :meth:`TimelineWidget.push` sends the rows logged since the last
push, packed by :class:`~tempsched_lab.widgets.timeline_feed.TimelineFeed` (33
bytes a row, one binary buffer per batch). A page that connects (or reconnects)
says *hello* and receives everything once; a page that notices a gap (a lost
message) asks for the missing rows. A refresher pushes at most ~10 times a
second, so at 1000 new rows a second each push carries about 100 rows (3.3 kB).

**Hover** asks the kernel for the row's sentence, so the tooltip says exactly
what the log panel says (:func:`~tempsched_lab.widgets.describe_row`).

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, at=1.0, label="hello")
>>> timeline = TimelineWidget(s)
>>> timeline.push()
1
>>> timeline.push()  # nothing new: nothing sent
0
>>> timeline.rows_sent, timeline.bytes_sent
(1, 33)
>>> timeline.close()
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as T

from ..core.decision import Case
from ..log.kinds import Kind
from ..log.schema import KINDS
from ..plots.colors import CASE_COLORS, NEUTRAL, OUTCOME_COLORS
from ..plots.timeline.marks import MARKS
from ..reading.sentences import describe_row
from ..time.scale import fmt_duration
from ._style import check_scale, on_page, resolve_scale
from .timeline_feed import FLAGS, NO_LANE, TimelineFeed

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler
    from ..time.scale import TimeScale

__all__ = ["MAX_BATCH", "TimelineWidget", "mark_table", "palette"]

STATIC = Path(__file__).with_name("static")
#: The most rows in one message: a resync of a long log goes in several (each ~1.6 MB).
MAX_BATCH = 50_000
#: Until a page says hello, a push re-sends every row (at most once a second) while the log holds
#: at most this many rows (330 kB): a page that missed the first pushes still fills while the
#: kernel runs later cells (JupyterLab's Run All), where a hello is answered only between cells.
BLIND_ROWS = 10_000
BLIND_EVERY_S = 1.0


def palette() -> dict[str, Any]:
    """The colours the browser draws with: the plots' palette, unchanged.

    >>> palette()["case"]["3"] == CASE_COLORS[3]
    True
    """
    return {
        "case": {str(c): color for c, color in CASE_COLORS.items()},
        "outcome": dict(OUTCOME_COLORS),
        "neutral": dict(NEUTRAL),
    }


def mark_table() -> dict[str, dict[str, Any]]:
    """The plot's glyphs (:data:`~tempsched_lab.plots.timeline.marks.MARKS`) as plain data.

    ``size`` is matplotlib's marker area in points²; the browser draws a glyph
    ``sqrt(size)`` points wide at 100 dpi, as the PNG timeline does.

    >>> mark_table()["due"]["marker"], mark_table()["due"]["face"]
    ('v', 'white')
    """
    return {
        gid: {
            "label": mark.label,
            "marker": mark.marker,
            "size": mark.size,
            "face": mark.face,
            "edge": mark.edge,
            "linewidth": mark.linewidth,
            "y_offset": mark.y_offset,
        }
        for gid, mark in MARKS.items()
    }


class TimelineWidget(anywidget.AnyWidget):
    """A scheduler's timeline drawn in the browser, fed incrementally from its event log.

    Args:
        scheduler: whose log to show.
        lanes: ``"task"`` (one lane per task) or ``"thread"`` (one per executor
            thread, or per Dask worker when the log names one).
        window: seconds shown while following now (0: the whole run).
        follow: keep the right edge at now as rows arrive.
        height: the most the canvas may grow to, in CSS pixels: it fits its
            lanes (26 px each, 34 px in projector type) up to this height,
            then scrolls them.
        scale: (default: the session's, see ``tempsched_lab.set_scale``)
            the type scale, ``"default"`` (no text under 12 px) or
            ``"projector"`` (none under 16 px, larger lanes and marks).

    Lanes by task follow activity: first the tasks running or due in the
    visible time range (a recurring task keeps its lane while it keeps
    running), then those with anything else in view, each group in order of
    first appearance; the others fold into one last row (``+ 12 tasks,
    nothing in view``). The view opens on the first lane and stays there
    until lanes are scrolled by hand, so the busy lanes are never scrolled
    away. **reset** shows the whole run (window 0) from its first lane,
    follows now and clears the selection; zooming out stops at the run's
    extent plus a small margin.

    Traits synchronised with the page: ``lanes``, ``follow``, ``window``,
    ``view`` (the visible ``[start, end]``, seconds since the origin: the page
    writes it when the user zooms or pans), ``selected`` (the clicked task ID,
    -1 for none), ``now`` and ``seq`` (the moment the page should show).
    """

    #: What a periodic resync re-sends (the refresher's): the moment, not the module or palette.
    resync_keys = ("seq", "now", "follow", "lanes", "window", "time_style", "type_scale")

    _esm = STATIC / "timeline.js"
    # the theme's colours first (static/theme.css), then the timeline's own rules that use them
    _css = (STATIC / "theme.css").read_text(encoding="utf-8") + (STATIC / "timeline.css").read_text(
        encoding="utf-8"
    )

    lanes = T.Unicode("task").tag(sync=True)
    follow = T.Bool(True).tag(sync=True)
    window = T.Float(0.0).tag(sync=True)
    view = T.List(T.Float(), default_value=[0.0, 0.0]).tag(sync=True)
    selected = T.Int(-1).tag(sync=True)
    now = T.Float(0.0).tag(sync=True)
    seq = T.Int(0).tag(sync=True)
    origin = T.Float(0.0).tag(sync=True)
    time_style = T.Unicode("seconds").tag(sync=True)
    height = T.Int(340).tag(sync=True)
    type_scale = T.Unicode("default").tag(sync=True)
    palette = T.Dict().tag(sync=True)
    marks = T.Dict().tag(sync=True)
    case_names = T.Dict().tag(sync=True)
    #: the schema's row kinds in code order: the page reads each row's kind code through it
    kinds: T.List[str] = T.List(T.Unicode()).tag(sync=True)
    #: the decision cases that store a task (a run starts with their schedule rows)
    adding_cases: T.List[int] = T.List(T.Int()).tag(sync=True)
    flags = T.Dict().tag(sync=True)
    no_lane = T.Int(NO_LANE).tag(sync=True)
    uid = T.Unicode().tag(sync=True)

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        lanes: str = "task",
        window: float = 0.0,
        follow: bool = True,
        height: int = 340,
        scale: str | None = None,
        **kwargs: Any,
    ) -> None:
        if lanes not in ("task", "thread"):
            raise ValueError(f"lanes={lanes!r}: expected 'task' or 'thread'")
        if not (isinstance(window, (int, float)) and math.isfinite(window) and window >= 0):
            raise ValueError(f"window={window!r}: expected seconds >= 0 (0: the whole run)")
        if isinstance(height, bool) or not isinstance(height, int) or height < 120:
            raise ValueError(f"height={height!r}: expected an int of at least 120 (pixels)")
        type_scale = resolve_scale(scale)
        time_scale = scheduler.time_scale
        super().__init__(
            lanes=lanes,
            window=float(window),
            follow=bool(follow),
            height=height,
            type_scale=type_scale,
            origin=float(time_scale.origin),
            time_style=time_scale.style,
            palette=palette(),
            marks=mark_table(),
            case_names={str(int(c)): c.short for c in Case},
            kinds=list(KINDS),
            adding_cases=[int(c) for c in Case if c.adds_task],
            flags=dict(FLAGS),
            uid=uuid.uuid4().hex,
            **kwargs,
        )
        self.scheduler = scheduler
        on_page(self, _switch_timeline)  # the page's projector toggles size its canvas too
        self.feed = TimelineFeed()
        self._lock = threading.RLock()
        #: rows sent so far (``seq`` below this have been sent in order since the last reset)
        self.sent = 0
        #: totals over the widget's life: rows and bytes of row data, messages sent
        self.rows_sent = 0
        self.bytes_sent = 0
        self.messages = 0
        #: pages that said hello (a page that renders the module says it once per connection)
        self.hellos = 0
        self.hover_requests = 0
        #: full re-sends made before any page said hello (see :meth:`push`)
        self.blind_resyncs = 0
        self._blind_at: float | None = None
        self._hello_callbacks: list[Callable[[], Any]] = []
        self.on_msg(self._on_msg)

    # -- validation: traits set from Python (or the page) get a clear error, never a loop ----
    @T.validate("window")
    def _check_window(self, proposal: Any) -> float:
        value = proposal["value"]
        if not (math.isfinite(value) and value >= 0):
            raise T.TraitError(f"window={value!r}: expected seconds >= 0 (0: the whole run)")
        return float(value)

    @T.validate("lanes")
    def _check_lanes(self, proposal: Any) -> str:
        value = proposal["value"]
        if value not in ("task", "thread"):
            raise T.TraitError(f"lanes={value!r}: expected 'task' or 'thread'")
        return str(value)

    @T.validate("view")
    def _check_view(self, proposal: Any) -> list[float]:
        value = proposal["value"]
        if len(value) != 2 or not all(math.isfinite(x) for x in value) or value[1] < value[0]:
            raise T.TraitError(f"view={value!r}: expected [start, end], finite, start <= end")
        return [float(x) for x in value]

    @T.validate("height")
    def _check_height(self, proposal: Any) -> int:
        value = proposal["value"]
        if value < 120:
            raise T.TraitError(f"height={value!r}: expected an int of at least 120 (pixels)")
        return int(value)

    @T.validate("type_scale")
    def _check_type_scale(self, proposal: Any) -> str:
        try:
            return check_scale(proposal["value"])
        except ValueError as exc:
            raise T.TraitError(str(exc)) from None

    @T.validate("now")
    def _check_now(self, proposal: Any) -> float:
        value = proposal["value"]
        if not math.isfinite(value):
            raise T.TraitError(f"now={value!r}: expected a finite time (seconds since the origin)")
        return float(value)

    # -- the feed ----------------------------------------------------------------------------
    @property
    def scale(self) -> TimeScale:
        """The time language of the page (the scheduler's)."""
        return self.scheduler.time_scale

    def push(self, upto: int | None = None, *, now: float | None = None) -> int:
        """Send the rows with ``self.sent <= seq < upto`` (default: every row logged).

        Also sets ``now`` (a clock reading, default the scheduler's) and ``seq``.
        Returns how many rows were sent.
        """
        log = self.scheduler.log
        with self._lock:
            stop = log.next_seq if upto is None else int(upto)
            if self._blind_due(stop):
                # no page has said hello yet: the kernel may be running later cells (Run All),
                # and answers a hello only between them; a page that missed the first pushes
                # (sent before its module loaded) gets everything again, unasked
                self.sent = max(self.sent, stop)
                self.blind_resyncs += 1
                self._blind_at = time.monotonic()
                sent = self.resync(None)
            else:
                sent = self._send_rows(self.sent, stop)
                self.sent = max(self.sent, stop)
            reading = self.scheduler.clock.now() if now is None else float(now)
            scale = self.scale
            with self.hold_sync():
                self.now = float(scale.rel(reading))
                self.seq = self.sent
                if self.time_style != scale.style:
                    self.time_style = scale.style
        return sent

    def _blind_due(self, stop: int) -> bool:
        """Whether this push re-sends every row unasked (no hello yet, a small log, 1 s on)."""
        if self.hellos or stop <= self.sent or stop - self.scheduler.log.first_seq > BLIND_ROWS:
            return False
        return self._blind_at is None or time.monotonic() - self._blind_at >= BLIND_EVERY_S

    def _send_rows(self, start: int, stop: int, to: str | None = None) -> int:
        """Send rows ``start <= seq < stop`` in batches; returns how many rows went out."""
        log = self.scheduler.log
        # the oldest row held: rows a bounded log dropped, or rows before a mirror's gap (its
        # log then starts after the gap), are not sent
        start = max(start, log.first_seq)
        total = 0
        origin = self.origin
        while start < stop:
            end = min(stop, start + MAX_BATCH)
            frame = log.to_frame(start, end)
            if not len(frame):
                break
            header, block = self.feed.encode(frame, origin)
            header["type"] = "rows"
            # the tables' sizes before this batch's new entries: a page that holds exactly these
            # takes pushed rows before its own resync has come (the kernel busy in later cells)
            header["labels_at"] = len(self.feed.labels) - len(header["labels"])
            header["lanes_at"] = len(self.feed.lanes) - len(header["lanes"])
            if to is not None:
                header["to"] = to
            self.send(header, buffers=[block])
            self.rows_sent += header["count"]
            self.bytes_sent += len(block)
            self.messages += 1
            total += header["count"]
            start = header["first"] + header["count"]
        return total

    def resync(self, token: str | None = None) -> int:
        """Send every kept row up to the last push again, from scratch, to the page ``token``."""
        with self._lock:
            # the tables are kept (other pages hold the same numbering): the page gets them whole
            self.send(
                {
                    "type": "reset",
                    "to": token,
                    "first": self.scheduler.log.first_seq,
                    "labels": list(self.feed.labels),
                    "lanes": list(self.feed.lanes),
                }
            )
            self.messages += 1
            return self._send_rows(0, self.sent, to=token)

    def on_hello(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` whenever a page has loaded the module and asked for the rows."""
        self._hello_callbacks.append(callback)

    # -- messages from the page -------------------------------------------------------------
    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        token = str(content.get("token", ""))
        if kind == "hello":
            self.hellos += 1
            self.resync(token)
            for callback in list(self._hello_callbacks):
                callback()
        elif kind == "need":
            with self._lock:
                # the page lost a message: simplest and always right is to start it afresh
                self.resync(token)
        elif kind == "hover":
            self.hover_requests += 1
            self.send(self.hover_text(content))

    def hover_text(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to a hover: the row's sentence (as the log panel says it) and details.

        ``request`` holds ``seq`` (the row under the pointer) and optionally
        ``run`` (the seqs of that run's schedule, dispatch, start and end rows).
        """
        seq = int(request.get("seq", -1))
        run = [int(x) for x in request.get("run", []) if isinstance(x, (int, float)) and x >= 0]
        scale = self.scale
        row = self._row(seq)
        if row is None:
            gone = "(this row is no longer in the log)"
            return {"type": "hover", "seq": seq, "text": gone, "details": ""}
        text = f"row {seq}, {scale.at(float(row['t']))}: {describe_row(row, scale)}"
        return {"type": "hover", "seq": seq, "text": text, "details": self._details(row, run)}

    def _row(self, seq: int) -> Any:
        log = self.scheduler.log
        if seq < log.first_seq or seq >= log.next_seq:
            return None
        frame = log.to_frame(seq, seq + 1)
        return frame.iloc[0] if len(frame) else None

    def _details(self, row: Any, run: list[int]) -> str:
        rows = [r for r in (self._row(s) for s in run) if r is not None]
        label = next((str(r["label"]) for r in [row, *rows] if _present(r["label"])), "")
        task = next((int(r["task_id"]) for r in [row, *rows] if _present(r["task_id"])), None)
        case = next((int(r["case"]) for r in [row, *rows] if _present(r["case"])), None)
        parts = []
        if label:
            parts.append(label)
        if task is not None:
            parts.append(f"task #{task}")
        if case:
            parts.append(f"case {case} ({Case(case).short})")
        late = [r for r in rows if str(r["kind"]) in (Kind.START, Kind.DISPATCH, Kind.EVENT_SET)]
        if late:
            first = late[-1]
            parts.append(f"late {fmt_duration(float(first['t']) - float(first['due']))}")
        return " · ".join(parts)


def _present(value: Any) -> bool:
    try:
        return value is not None and value == value and str(value) != "<NA>"
    except (TypeError, ValueError):
        return False


def _switch_timeline(widget: TimelineWidget, scale: str) -> None:
    """The page's projector toggle switched: the canvas draws in ``scale``'s type."""
    if widget.comm is not None:  # not closed
        widget.type_scale = check_scale(scale)
