"""The queue panel: the head, the upcoming time points and their tasks, and the design's view."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..plots.designs import PICTURES, picture_of, plot_queue
from ..time.scale import TimeScale
from ._base import (
    DPI,
    TABLE_STYLE,
    Panel,
    Part,
    esc,
    fmt_countdown,
    fmt_period,
    image_widget,
    scroller,
    stamp,
)
from .panels import register_panel

if TYPE_CHECKING:
    from ..core.queues import QueueSnapshot
    from ..core.scheduler import Scheduler
    from .scene import LogSource, Scene

__all__ = [
    "QueuePanel",
    "picture_size",
    "queue_picture",
    "queue_table_html",
    "shows_picture",
    "widest_picture_px",
]

HEAD_FILL = "#F7DDA6"  # as the plots' head colour (plots.designs.HEAD_FILL)


def picture_size(design: str) -> tuple[float, float]:
    """Figure size (inches, shown at 100 dpi) of a queue design's picture in a half column."""
    return picture_of(design).size


def shows_picture(design: str, picture: bool | None) -> bool:
    """Whether a panel shows ``design``'s picture: as asked, else as the picture registered."""
    return picture_of(design).in_panels if picture is None else bool(picture)


def queue_picture(snapshot: QueueSnapshot, ax: Any, scale: TimeScale) -> Any:
    """Draw ``snapshot``'s design picture into ``ax``, in ``scale``'s time language."""
    return plot_queue(snapshot, ax=ax, time_scale=scale)


def _recurs(view: Any, scale: Any) -> str:
    """How a task recurs: once, every period, or its calendar rule and next fire times."""
    if view is None:
        return fmt_period(None)
    if view.trigger is None:
        return fmt_period(view.period)
    later = ", ".join(scale.text(t) for t in view.upcoming)
    return f"{view.trigger}" + (f"; then {later}" if later else "")


def queue_table_html(
    snapshot: QueueSnapshot,
    now: float | None,
    *,
    scale: TimeScale | None = None,
    max_points: int = 8,
    max_tasks: int = 6,
    caption: str | None = None,
    args: Mapping[int, str] | None = None,
) -> str:
    """The queue as an HTML table: one row per task, time points in order, the head first.

    Shows the first ``max_points`` time points and at most ``max_tasks`` tasks
    of each; a last line counts what was left out. Head rows have the class
    ``tsl-head`` and a coloured background. Times are written in ``scale``'s
    language (default: seconds since 0). ``args`` overrides the arguments text
    per task ID (replayed snapshots do not carry arguments).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> for t in (1.0, 2.0, 2.0, 3.0):
    ...     _ = s.schedule(print, at=t, label="job")
    >>> text = queue_table_html(s.snapshot(), 0.0, max_points=2)
    >>> heads = text.count("class='tsl-head'")
    >>> heads, "1 more time point (1 task)" in text, "<td>1.000</td>" in text
    (1, True, True)
    """
    scale = scale if scale is not None else TimeScale(0.0)
    state = snapshot.state
    points = state.points
    n_tasks = state.size
    head = "" if caption is None else f"{esc(caption)} · "
    now_text = "" if now is None else f" · now {scale.text(now)}"
    summary = (
        f"<div class='tsl-queue-summary'>{head}<b>{esc(snapshot.design)}</b> queue · "
        f"<span class='tsl-pending'>{n_tasks} pending</span> in {len(points)} time point"
        f"{'s' * (len(points) != 1)}{now_text}</div>"
    )
    if not points:
        return summary + "<div class='tsl-queue-empty'><i>the queue is empty</i></div>"
    headers = ("", f"due {scale.column_header()}", "countdown", "ID", "label", "args", "period")
    rows = ["<tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr>"]
    for i, (due, ids) in enumerate(points[:max_points]):
        is_head = i == 0
        style = (
            "background:var(--tsl-head-bg);color:var(--tsl-head-fg);font-weight:bold"
            if is_head
            else ""
        )
        cls = "tsl-head" if is_head else "tsl-point"
        shown = ids[:max_tasks]
        for j, task_id in enumerate(shown):
            view = snapshot.tasks.get(task_id)
            first = j == 0
            badge = ("HEAD" if is_head else f"#{i}") if first else ""
            cells = (
                badge,
                scale.number(due) if first else "",
                (fmt_countdown(due, now) if now is not None else "") if first else "",
                str(task_id),
                "" if view is None else view.label,
                args[task_id] if args and task_id in args else ("" if view is None else view.args),
                _recurs(view, scale),
            )
            rows.append(
                f"<tr class='{cls}' style='{style}'>"
                + "".join(f"<td>{esc(c)}</td>" for c in cells)
                + "</tr>"
            )
        if len(ids) > max_tasks:
            rows.append(
                f"<tr class='{cls}' style='{style}'><td></td>"
                f"<td colspan='6'><i>… and {len(ids) - max_tasks} more "
                "task(s) at this time</i></td></tr>"
            )
    table = TABLE_STYLE + f"<table class='tsl-table'>{''.join(rows)}</table>"
    hidden = points[max_points:]
    more = ""
    if hidden:
        n_hidden = sum(len(ids) for _, ids in hidden)
        more = (
            f"<div class='tsl-queue-more'><i>… and {len(hidden)} more time point"
            f"{'s' * (len(hidden) != 1)} ({n_hidden} task{'s' * (n_hidden != 1)})</i></div>"
        )
    return summary + table + more


def widest_picture_px() -> int:
    """CSS pixels of the widest design picture (shown at 100 dpi): a queue panel's width."""
    return round(DPI * max(picture.size[0] for picture in PICTURES.values()))


@register_panel(order=20, width=widest_picture_px())  # its picture shown whole beside another
class QueuePanel(Panel):
    """The pending tasks: the head list, the next time points with their tasks, a countdown.

    For the designs whose picture is shown in panels (the heap and the wheel;
    on request for the sorted dict: ``picture=True``) the panel also shows the
    design's own picture (:func:`tempsched_lab.plots.plot_queue`), redrawn
    whenever the queue changes.

    Args:
        scheduler: the scheduler to show.
        source: a shared :class:`~tempsched_lab.widgets.scene.LogSource` (dashboards pass one).
        scale: (default: the session's, see ``tempsched_lab.set_scale``)
            the type scale, ``"default"`` (text of 12 px and up) or ``"projector"``
            (16 px and up); :meth:`set_scale` switches it.
        max_points: how many time points are listed (the rest are counted).
        max_tasks: how many tasks of one time point are listed.
        picture: show the design's picture; ``None``: as its registration says
            (:data:`tempsched_lab.plots.designs.PICTURES`: the heap and the wheel).
        countdown_every: least seconds between two redraws of the countdowns
            when only the clock moved.
        figsize: size of the picture in inches (shown at 100 dpi, unscaled).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock(), queue="heap")
    >>> _ = s.schedule(print, at=1.0, label="hello")
    >>> panel = QueuePanel(s)
    >>> panel.refresh()
    >>> "hello" in panel.table.value, panel.image.value[:4] == b"\\x89PNG"
    (True, True)
    >>> panel.close()
    """

    name = "queue"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        scale: str | None = None,
        max_points: int = 8,
        max_tasks: int = 6,
        picture: bool | None = None,
        countdown_every: float = 0.25,
        figsize: tuple[float, float] | None = None,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        self.max_points = max_points
        self.max_tasks = max_tasks
        self.countdown_every = countdown_every
        design = scheduler.queue.design
        self.show_picture = shows_picture(design, picture)
        self.table: W.HTML = self._own(W.HTML("<i>(not refreshed yet)</i>"), "tsl-queue-table")
        children: list[W.Widget] = [self.table]
        self.image: W.Image | None = None
        if self.show_picture:
            self._fig = self._renderer(figsize or picture_size(design))
            self.image = self._own(image_widget(), "tsl-queue-picture")
            children.append(self._own(scroller(self.image)))
        self.widget = self._box(children, f"Queue ({design})")

    def render_table(self, scene: Scene) -> None:
        """Recompute the table of pending tasks from ``scene``."""
        self.put(
            self.table,
            value=stamp(scene, self.name)
            + queue_table_html(
                scene.queue,
                scene.now,
                scale=scene.scale,
                max_points=self.max_points,
                max_tasks=self.max_tasks,
            ),
        )

    def render_picture(self, scene: Scene) -> None:
        """Redraw the design's picture from ``scene``."""
        if self.image is None:
            return
        png = self._fig.render(lambda ax: queue_picture(scene.queue, ax, scene.scale))
        self.show_png(self.image, png)

    def _table_key(self, scene: Scene) -> Hashable:
        return (scene.seq, scene.scale.style)

    def _now_key(self, scene: Scene) -> Hashable:
        return scene.now

    def _picture_key(self, scene: Scene) -> Hashable:
        return (scene.seq, scene.queue.state.size, scene.scale.style)

    def _make_parts(self) -> list[Part]:
        parts = [
            Part(
                "queue.table",
                self.render_table,
                self._table_key,
                drift=self._now_key,
                interval=self.countdown_every,
            )
        ]
        if self.image is not None:
            parts.append(Part("queue.picture", self.render_picture, self._picture_key))
        return parts
