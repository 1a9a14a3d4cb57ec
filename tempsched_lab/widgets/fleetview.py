"""The fleet's view: one timeline of several services, lanes grouped by service.

``Dashboard(fleet)`` (a :class:`~tempsched_lab.Fleet`) is a :class:`FleetView`:

* **a banner line per service**: its link (live, reconnecting, closed ...), its clock
  offset to this machine's with the uncertainty of the midpoint method
  (:class:`~tempsched_lab.remote.fleet.ClockOffset`), and its gaps (rows missing);
* **one timeline**: a group of lanes per service, in the fleet's order; in a group,
  one lane per task, the busiest (most rows) first. A service with more tasks than
  ``lanes`` shows its ``lanes - 1`` busiest and one lane aggregating all the others
  (``+ 37 other tasks``): nothing is dropped, every row is drawn somewhere;
* **one time language**: x is seconds since the fleet's first row, on this machine's
  clock (each service's ``local_wall``: its wall time minus its estimated offset, so a
  service with a skewed clock is drawn where its steps happened);
* **pan and zoom** (buttons, or :meth:`FleetView.show`) re-draw only from arrays kept
  sorted per lane (:class:`FleetLanes`): a window is two binary searches and one
  ``bincount`` per lane into the picture's columns, so it costs the same at 200,000 rows
  as at 2,000 (``benchmarks/bench_fleetview.py``).

Colours: runs (start, finish) in the plots' *finished* colour, trouble (error, missed,
reject, cancel) in *failed*, every other step in grey; a column with more rows is darker.

>>> import pandas as pd
>>> frame = pd.DataFrame({"service": ["a", "a", "b"], "task_id": [1, 1, 7],
...     "kind": ["start", "finish", "error"], "label": ["job", "job", "x"],
...     "local_wall": [100.0, 101.0, 100.5]})
>>> lanes = FleetLanes(frame, lanes=4)
>>> [lane.title for lane in lanes.lanes]
['job #1', 'x #7']
>>> [round(t, 6) for t in lanes.span]  # seconds since the fleet's first row
[0.0, 1.0]
"""

from __future__ import annotations

import base64
import html
import io
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import numpy as np

from ..log.kinds import Kind
from ..plots.colors import OUTCOME_COLORS
from ..time.scale import fmt_duration
from ._style import off_page, on_page, resolve_scale, show_scale, type_css
from .lastframe import ShownOutputs, last_frame_html, static_html

if TYPE_CHECKING:
    import pandas as pd

    from ..remote.fleet import Fleet

__all__ = ["FleetLanes", "FleetView", "Lane", "banner_lines"]

#: Lanes per service by default (the busiest tasks, the last one aggregating the rest).
LANES = 4
#: Columns of the picture (time bins of a window).
COLUMNS = 800
#: Pixels of one lane on the page (the picture has 4 rows a lane, scaled up).
LANE_PX = 16
#: Row kinds drawn as trouble and as runs; every other kind is grey.
TROUBLE = (Kind.ERROR, Kind.MISSED, Kind.REJECT, Kind.CANCEL)
RUNS = (Kind.START, Kind.FINISH)
_CATEGORIES = ("other", "runs", "trouble")


def _rgb(color: str) -> np.ndarray:
    color = color.lstrip("#")
    return np.array([int(color[i : i + 2], 16) for i in (0, 2, 4)], dtype=float)


_COLORS = {
    "other": _rgb("#8c8c8c"),
    "runs": _rgb(OUTCOME_COLORS["finished"]),
    "trouble": _rgb(OUTCOME_COLORS["failed"]),
}
_HEADER = _rgb("#d9d9d9")
#: Shades of each category's colour (a column's depth: its rows, on a log scale).
_LEVELS = 16


def _palette() -> np.ndarray:
    shades = [np.full(3, 255.0), _HEADER]
    for name in _CATEGORIES:
        for q in range(_LEVELS):
            depth = 0.45 + 0.55 * q / (_LEVELS - 1)
            shades.append(255.0 - depth * (255.0 - _COLORS[name]))
    return np.array(shades).round().astype(np.uint8)


#: The picture's colours by index: white, the service header's grey, then 16 shades of
#: each category (other, runs, trouble), lightest first.
PALETTE = _palette()


@dataclass
class Lane:
    """One lane: a task of a service (or the service's other tasks, aggregated)."""

    service: str
    #: what the lane says on the left (``label #task_id``, or ``+ N other tasks``)
    title: str
    #: tasks drawn in this lane
    tasks: int
    #: rows drawn in this lane
    rows: int
    #: category -> its rows' x (seconds since the fleet's first row), sorted
    x: dict[str, np.ndarray] = field(default_factory=dict)


class FleetLanes:
    """The fleet frame as lanes, with each lane's times sorted: what pan and zoom read.

    Args:
        frame: :meth:`Fleet.to_frame() <tempsched_lab.Fleet.to_frame>` (``service``,
            ``task_id``, ``kind``, ``label``, ``local_wall`` columns).
        lanes: lanes per service at most (>= 1); a service with more tasks gets its
            ``lanes - 1`` busiest and one lane for all the others.
        services: the services' order (default: the frame's ``service`` categories).
    """

    def __init__(
        self, frame: pd.DataFrame, *, lanes: int = LANES, services: Sequence[str] | None = None
    ) -> None:
        if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
            raise ValueError(f"lanes={lanes!r}: expected an int >= 1")
        if services is None:
            column = frame.get("service", None)
            cats = getattr(getattr(column, "cat", None), "categories", None)
            services = (
                [str(s) for s in cats]
                if cats is not None
                else ([] if column is None else list(dict.fromkeys(column.astype(str))))
            )
        self.services = list(services)
        self.lanes: list[Lane] = []
        #: the first lane of each service in :attr:`lanes` and how many it has
        self.groups: dict[str, tuple[int, int]] = {}
        #: local wall time (s, this machine's clock) that x counts from
        self.origin = 0.0
        n = len(frame)
        if n == 0 or "local_wall" not in frame:
            self.span = (0.0, 1.0)
            for name in self.services:
                self.groups[name] = (0, 0)
            return
        wall = frame["local_wall"].to_numpy(dtype=float)
        finite = np.isfinite(wall)
        self.origin = float(wall[finite].min()) if finite.any() else 0.0
        x = wall - self.origin
        service = frame["service"].astype(str).to_numpy()
        task = frame["task_id"].to_numpy(dtype=float)
        kind = frame["kind"].astype(str).to_numpy()
        category = np.zeros(n, dtype=np.int8)
        category[np.isin(kind, [str(k) for k in RUNS])] = 1
        category[np.isin(kind, [str(k) for k in TROUBLE])] = 2
        labels = frame["label"].astype(str).to_numpy() if "label" in frame else None
        for name in self.services:
            rows = np.flatnonzero((service == name) & finite)
            first = len(self.lanes)
            tasks_here = task[rows]
            ids, counts = np.unique(tasks_here[np.isfinite(tasks_here)], return_counts=True)
            order = np.argsort(-counts, kind="stable")  # busy first (ties: lower id first)
            ids, counts = ids[order], counts[order]
            own = ids if len(ids) <= lanes else ids[: lanes - 1]
            for task_id in own:
                pick = rows[tasks_here == task_id]
                label = labels[pick[0]] if labels is not None else "task"
                self.lanes.append(
                    self._lane(name, f"{label} #{int(task_id)}", 1, pick, x, category)
                )
            if len(ids) > len(own) or len(ids) == 0:
                rest = rows[~np.isin(tasks_here, own)]
                others = len(ids) - len(own)
                title = f"+ {others:,} other task{'s' if others != 1 else ''}" if others else "-"
                if len(rest) or not len(ids):
                    self.lanes.append(self._lane(name, title, others, rest, x, category))
            self.groups[name] = (first, len(self.lanes) - first)
        end = float(x[finite].max()) if finite.any() else 1.0
        # the window is [start, stop): the span's end is a hair past the last row, drawn too
        self.span = (0.0, end * (1 + 1e-9) + 1e-9 if end > 0 else 1.0)

    @staticmethod
    def _lane(
        service: str, title: str, tasks: int, rows: np.ndarray, x: np.ndarray, category: np.ndarray
    ) -> Lane:
        lane = Lane(service, title, tasks, len(rows))
        for code, name in enumerate(_CATEGORIES):
            lane.x[name] = np.sort(x[rows[category[rows] == code]])
        return lane

    def counts(self, start: float, stop: float, columns: int = COLUMNS) -> np.ndarray:
        """Rows per (lane, category, column) in the window ``[start, stop)``: an int array
        of shape ``(lanes, 3, columns)``. Two binary searches and a ``bincount`` per lane.
        """
        if not stop > start:
            raise ValueError(f"stop={stop!r}: expected more than start={start!r}")
        out = np.zeros((len(self.lanes), len(_CATEGORIES), columns), dtype=np.int64)
        per = columns / (stop - start)
        for i, lane in enumerate(self.lanes):
            for j, name in enumerate(_CATEGORIES):
                xs = lane.x[name]
                lo, hi = np.searchsorted(xs, (start, stop))
                if hi > lo:
                    bins = ((xs[lo:hi] - start) * per).astype(np.int64)
                    out[i, j] = np.bincount(np.minimum(bins, columns - 1), minlength=columns)
        return out

    def indexed(self, start: float, stop: float, columns: int = COLUMNS) -> np.ndarray:
        """The window as a picture of :data:`PALETTE` indices: a header row per service, 4
        pixel rows a lane (one blank above, two drawn, one blank below), ``columns`` wide.
        A column with more rows (of the lane's busiest in the window) is darker."""
        counts = self.counts(start, stop, columns)
        lanes = np.zeros((len(self.lanes), columns), dtype=np.uint8)
        for j in range(len(_CATEGORIES)):  # later categories drawn over earlier
            c = counts[:, j, :]
            top = np.log1p(np.maximum(c.max(axis=1, keepdims=True), 1))
            level = (np.log1p(c) / top * (_LEVELS - 1)).astype(np.uint8)
            hit = c > 0
            lanes[hit] = (2 + j * _LEVELS + level)[hit]
        # where each lane's two drawn rows go: after its service's header row and the lanes
        # before it in its group
        place = np.empty(len(self.lanes), dtype=np.int64)
        row = 0
        headers = []
        for name in self.services:
            first, many = self.groups.get(name, (0, 0))
            headers.append(row)
            place[first : first + many] = row + 4 + 4 * np.arange(many)
            row += 4 * (many + 1)
        img = np.zeros((row, columns), dtype=np.uint8)
        for top_row in headers:
            img[top_row + 1 : top_row + 3] = 1
        img[place + 1] = lanes
        img[place + 2] = lanes
        return img

    def picture(self, start: float, stop: float, columns: int = COLUMNS) -> np.ndarray:
        """:meth:`indexed` in RGB (``(rows, columns, 3)`` bytes)."""
        out: np.ndarray = PALETTE[self.indexed(start, stop, columns)]
        return out

    def png(self, start: float, stop: float, columns: int = COLUMNS) -> bytes:
        """:meth:`indexed` as a palette PNG (Pillow): a byte a pixel to compress."""
        from PIL import Image

        image = Image.fromarray(self.indexed(start, stop, columns), mode="P")
        image.putpalette(PALETTE.reshape(-1).tolist())
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=1)
        return buffer.getvalue()


def banner_lines(fleet: Fleet, frame: pd.DataFrame | None = None) -> dict[str, str]:
    """Each service's banner line: its link, its clock offset, its gaps.

    ``frame``: the fleet's frame (its ``attrs["gaps"]`` name the gaps); read if not given.
    """
    frame = fleet.to_frame() if frame is None else frame
    gaps: dict[str, list[tuple[int, int, str]]] = {}
    for name, first, last, why in frame.attrs.get("gaps", []):
        gaps.setdefault(name, []).append((first, last, why))
    rows = frame["service"].astype(str).value_counts() if len(frame) else None
    out: dict[str, str] = {}
    offsets, links = fleet.offsets, fleet.links
    for name in fleet.names:
        link = links[name]
        offset = offsets[name]
        if offset is not None:
            clock = f"clock {offset.text()}"
        elif fleet.sources[name].startswith(("http://", "https://")):
            clock = "clock offset not known (no probe answered, or a virtual clock)"
        else:
            clock = "clock as recorded (a spill directory)"
        own = gaps.get(name, [])
        if own:
            missing = sum(last - first + 1 for first, last, _ in own)
            where = ", ".join(f"{first}..{last}" for first, last, _ in own[:3])
            more = f" and {len(own) - 3} more" if len(own) > 3 else ""
            gap_text = (
                f"{len(own)} gap{'s' if len(own) != 1 else ''} (rows {where}{more}: "
                f"at most {missing:,} rows missing)"
            )
        else:
            gap_text = "no gaps"
        n = 0 if rows is None else int(rows.get(name, 0))
        out[name] = f"{name}: {link.text()} · {clock} · {gap_text} · {n:,} rows"
    return out


class FleetView:
    """One view of a :class:`~tempsched_lab.Fleet`: banner lines and one timeline (see the
    module). ``Dashboard(fleet)`` makes one.

    Args:
        fleet: the fleet to show (its mirrors are yours: :meth:`close` leaves them open).
        lanes: lanes per service at most (the last one aggregates the other tasks).
        title: heading shown above the banner.
        refresh_every: seconds between looks for new rows (a look that finds none
            draws nothing); ``None``: only when :meth:`refresh` is called.
        autostart: start the looking thread now.
        scale: the type scale (``"default"`` or ``"projector"``).

    >>> from tempsched_lab import Fleet  # doctest: +SKIP
    >>> view = Dashboard(Fleet({"api": url_api, "batch": "runs/run-003"}))  # doctest: +SKIP
    >>> view.zoom(2.0); view.pan(-0.25)  # doctest: +SKIP
    """

    def __init__(
        self,
        fleet: Fleet,
        *,
        lanes: int = LANES,
        title: str | None = "tempsched_lab fleet",
        refresh_every: float | None = 1.0,
        autostart: bool = True,
        scale: str | None = None,
    ) -> None:
        if refresh_every is not None and not 0.05 <= refresh_every <= 3600:
            raise ValueError(f"refresh_every={refresh_every!r}: expected 0.05 to 3600 seconds")
        self.fleet = fleet
        self.lanes_per_service = lanes
        self.refresh_every = refresh_every
        self.type_scale = resolve_scale(scale)
        self.closed = False
        self.outputs = ShownOutputs()  # where it was shown: they become its last frame on close
        self.data = FleetLanes(fleet.to_frame().iloc[0:0], lanes=lanes, services=fleet.names)
        self.window: tuple[float, float] = (0.0, 1.0)
        self._whole = True  # the window follows the whole span until panned or zoomed
        self._seen: object = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        heading = "" if title is None else f"<h3 style='margin:4px 0'>{html.escape(title)}</h3>"
        self.header = W.HTML(type_css() + heading)
        self.banner = W.HTML()
        self.banner.add_class("tsl-fleet-banner")
        self.timeline = W.HTML()
        self.timeline.add_class("tsl-fleet-timeline")
        buttons = {
            "◀ earlier": lambda _: self.pan(-0.25),
            "later ▶": lambda _: self.pan(0.25),
            "zoom in": lambda _: self.zoom(2.0),
            "zoom out": lambda _: self.zoom(0.5),
            "whole": lambda _: self.reset(),
        }
        self.buttons: dict[str, W.Button] = {}
        for text, act in buttons.items():
            button = W.Button(description=text, layout=W.Layout(width="auto"))
            button.on_click(act)
            self.buttons[text] = button
        self.widget = W.VBox(
            [self.header, self.banner, W.HBox(list(self.buttons.values())), self.timeline],
            layout=W.Layout(max_width="100%"),
        )
        self.widget.add_class("tsl-fleet")
        show_scale(self.widget, self.type_scale)
        on_page(self)
        self.refresh(force=True)
        self._thread: threading.Thread | None = None
        if autostart and refresh_every is not None:
            self._thread = threading.Thread(
                target=self._run, name="tempsched-fleetview", daemon=True
            )
            self._thread.start()

    # -- reading the fleet ------------------------------------------------------------------
    def _signature(self) -> object:
        mirrors = self.fleet.mirrors
        return tuple(
            (n, m.log.next_seq, len(m.earlier), m.link) for n, m in sorted(mirrors.items())
        ), tuple(sorted((n, str(o)) for n, o in self.fleet.offsets.items()))

    def refresh(self, *, force: bool = False) -> bool:
        """Read the fleet again and redraw if anything changed; returns whether it redrew."""
        with self._lock:
            seen = self._signature()
            if not force and seen == self._seen:
                return False
            self._seen = seen
            frame = self.fleet.to_frame()
            self.data = FleetLanes(frame, lanes=self.lanes_per_service, services=self.fleet.names)
            lines = banner_lines(self.fleet, frame)
            self.banner.value = "".join(
                f"<div class='tsl-fleet-line' data-service='{html.escape(name)}'>"
                f"{html.escape(line)}</div>"
                for name, line in lines.items()
            )
            if self._whole:
                self.window = self.data.span
            self._draw()
            return True

    def _run(self) -> None:
        assert self.refresh_every is not None
        while not self._stop.wait(self.refresh_every):
            try:
                self.refresh()
            except Exception as exc:  # a view never kills its thread over one bad read
                self.banner.value += f"<div>refresh failed: {html.escape(repr(exc))}</div>"

    # -- pan and zoom -----------------------------------------------------------------------
    def show(self, start: float, stop: float) -> None:
        """Show the window ``[start, stop)`` (seconds since the fleet's first row)."""
        if not (math.isfinite(start) and math.isfinite(stop) and stop > start):
            raise ValueError(f"show({start!r}, {stop!r}): expected finite start < stop")
        with self._lock:
            self.window = (float(start), float(stop))
            self._whole = False
            self._draw()

    def zoom(self, factor: float, center: float | None = None) -> None:
        """Zoom by ``factor`` (2: twice as close) around ``center`` (default: the middle)."""
        if not factor > 0:
            raise ValueError(f"factor={factor!r}: expected > 0")
        start, stop = self.window
        mid = (start + stop) / 2 if center is None else center
        half = (stop - start) / 2 / factor
        self.show(mid - half, mid + half)

    def pan(self, fraction: float) -> None:
        """Move the window by ``fraction`` of its width (negative: earlier)."""
        start, stop = self.window
        step = (stop - start) * fraction
        self.show(start + step, stop + step)

    def reset(self) -> None:
        """Show the whole span again (and follow it as rows come)."""
        with self._lock:
            self._whole = True
            self.window = self.data.span
            self._draw()

    def _draw(self) -> None:
        start, stop = self.window
        self.timeline.value = render(self.data, start, stop)

    # -- display and release ------------------------------------------------------------------
    def set_scale(self, scale: str) -> None:
        """Switch the type scale (``"default"`` or ``"projector"``)."""
        self.type_scale = resolve_scale(scale)
        show_scale(self.widget, self.type_scale)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        # shown under a display id: on close() the output becomes the last frame's HTML
        self.outputs.show(self.widget)

    def close(self) -> None:
        """Stop looking for rows and close the widgets (the fleet stays open). Idempotent.

        The outputs the view was shown in keep its last frame (static HTML: banner lines and
        the timeline's picture, :mod:`~tempsched_lab.widgets.lastframe`), never an empty one.
        """
        if self.closed:
            return
        self.closed = True
        off_page(self)
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        self.outputs.freeze(last_frame_html(static_html(self.widget)), "<closed: a fleet view>")
        for widget in [*self.buttons.values(), self.header, self.banner, self.timeline]:
            widget.close()
        self.widget.close()


def render(data: FleetLanes, start: float, stop: float, columns: int = COLUMNS) -> str:
    """The timeline's HTML for the window ``[start, stop)``: the lane titles, the picture
    (a PNG scaled up, pixels kept sharp) and a time axis in seconds since the first row."""
    png = base64.b64encode(data.png(start, stop, columns)).decode("ascii")
    titles: list[str] = []
    for name in data.services:
        first, many = data.groups.get(name, (0, 0))
        titles.append(
            f"<div class='tsl-fleet-service' style='height:{LANE_PX}px;font-weight:bold'>"
            f"{html.escape(name)}</div>"
        )
        for lane in data.lanes[first : first + many]:
            titles.append(
                f"<div class='tsl-fleet-lane' data-service='{html.escape(name)}' "
                f"style='height:{LANE_PX}px;overflow:hidden;white-space:nowrap'>"
                f"{html.escape(lane.title)}</div>"
            )
    height = LANE_PX * (len(data.lanes) + len(data.services))
    ticks = "".join(
        f"<span style='position:absolute;left:{100 * k / 4:.0f}%;"
        f"transform:translateX(-{25 * k:.0f}%)'>"
        f"{html.escape(fmt_duration(start + (stop - start) * k / 4))}</span>"
        for k in range(5)
    )
    return (
        "<div style='display:flex;font-size:12px;line-height:16px'>"
        f"<div style='flex:0 0 14em;padding-right:6px'>{''.join(titles)}</div>"
        "<div style='flex:1 1 auto;min-width:300px'>"
        f"<img alt='fleet timeline' src='data:image/png;base64,{png}' "
        f"style='width:100%;height:{height}px;image-rendering:pixelated;display:block'>"
        f"<div style='position:relative;height:18px'>{ticks}</div>"
        "<div style='color:#555'>seconds since the fleet's first row, on this machine's clock"
        "</div></div></div>"
    )
