"""The log panel: the newest event-log rows as an HTML table, filtered by kind, case or task."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from ..core.decision import Case
from ..log.schema import KINDS
from ..plots.colors import KIND_FILL
from ..reading.sentences import describe_row, row_float, row_int, row_text
from ..time.scale import TimeScale, time_scale_of
from ._base import TABLE_STYLE, Panel, Part, case_color, esc, stamp
from .panels import register_panel

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler
    from .scene import LogSource, Scene

__all__ = ["LogPanel", "describe_row", "log_table_html"]


def log_table_html(rows: pd.DataFrame, scale: TimeScale | None = None) -> str:
    """Rows of an event-log frame as an HTML table (seq, time, kind, task, case, label, what).

    Times are written in ``scale``'s language (default: the frame's own origin).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=1.0, label="hello")
    >>> "hello" in log_table_html(s.log.to_frame())
    True
    """
    if not len(rows):
        return "<div class='tsl-log-empty'><i>no rows</i></div>"
    scale = scale if scale is not None else time_scale_of(rows)
    headers = ("seq", scale.column_header(), "kind", "task", "case", "label", "what happened")
    out = ["<tr>" + "".join(f"<th>{h}</th>" for h in headers) + "</tr>"]
    for _, row in rows.iterrows():
        kind = row_text(row["kind"])
        case = row_int(row["case"])
        fill = KIND_FILL.get(kind, "")
        case_style = ""
        if case:
            color = case_color(case)
            if color:
                case_style = f" style='border-left:4px solid {color}'"
        cells = (
            (str(int(row["seq"])), ""),
            (scale.number(row_float(row["t"])), ""),
            (kind, ""),
            ("" if row_int(row["task_id"]) is None else f"#{row_int(row['task_id'])}", ""),
            ("" if not case else str(case), case_style),
            (row_text(row["label"]), ""),
            (describe_row(row, scale), ""),
        )
        out.append(
            # the kind's tint over the theme's background: the theme's text reads on it
            f"<tr class='tsl-row tsl-kind-{esc(kind)}' style='color:var(--tsl-fg);"
            f"background:color-mix(in srgb, {fill} var(--tsl-tint), var(--tsl-bg))'>"
            + "".join(f"<td{style}>{esc(text)}</td>" for text, style in cells)
            + "</tr>"
        )
    return TABLE_STYLE + f"<table class='tsl-table'>{''.join(out)}</table>"


# 700 px: its rows on one line; beside the tree (720 px) only on pages of about 1,450 px and
# more. At 440 px it stood beside the tree at 1,400 px squeezed to 537 px (rows of 2-3 lines)
# beside an empty area under the tree; now it wraps under the tree, the page's full width.
@register_panel(order=60, width=700)
class LogPanel(Panel):
    """The newest rows of the event log, filtered by kind, case and task ID.

    Filters apply to the last ``window`` rows (5000 by default), of which the
    newest ``rows`` matching rows are shown, newest last.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> a = s.schedule(print, at=1.0)
    >>> _ = s.cancel(a)
    >>> panel = LogPanel(s)
    >>> panel.kind.value = "cancel"
    >>> panel.table.value.count("tsl-row")
    1
    >>> panel.close()
    """

    name = "log"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        scale: str | None = None,
        rows: int = 12,
        window: int = 5000,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        self.window = window
        small = W.Layout(width="150px")
        self.kind: W.Dropdown = self._own(
            W.Dropdown(options=["all", *KINDS], value="all", description="kind", layout=small),
            "tsl-log-kind",
        )
        self.case: W.Dropdown = self._own(
            W.Dropdown(
                options=[("all", 0)] + [(f"{int(c)} {c.short}", int(c)) for c in Case],
                value=0,
                description="case",
                layout=W.Layout(width="210px"),
            ),
            "tsl-log-case",
        )
        self.task: W.Text = self._own(
            W.Text(value="", placeholder="any", description="task ID", layout=small),
            "tsl-log-task",
        )
        self.rows: W.BoundedIntText = self._own(
            W.BoundedIntText(value=rows, min=1, max=500, description="rows", layout=small),
            "tsl-log-rows",
        )
        for control in (self.kind, self.case, self.task, self.rows):
            control.style.description_width = "50px"
            control.observe(self._on_filter, names="value")
        self.summary: W.HTML = self._own(W.HTML(), "tsl-log-summary")
        self.table: W.HTML = self._own(W.HTML("<i>(not refreshed yet)</i>"), "tsl-log-table")
        filters = W.HBox(
            [self.kind, self.case, self.task, self.rows], layout=W.Layout(flex_flow="row wrap")
        )
        self._own(filters)
        self.widget = self._box([filters, self.summary, self.table], "Event log")

    def _on_filter(self, _change: Any) -> None:
        self._changed()  # a dashboard's next round (or this panel alone) shows the new filter

    def _task_filter(self) -> int | None:
        text = self.task.value.strip().lstrip("#")
        try:
            return int(text) if text else None
        except ValueError:
            return -1  # matches nothing; the summary says why

    def filtered(self, scene: Scene | None = None) -> pd.DataFrame:
        """The rows shown: the newest matches of the filters before ``scene``'s moment."""
        scene = scene if scene is not None else self.source.scene()
        frame = scene.tail(self.window)
        mask = pd.Series(True, index=frame.index)
        if self.kind.value != "all":
            mask &= (frame["kind"] == self.kind.value).to_numpy()
        if self.case.value:
            mask &= (frame["case"] == self.case.value).fillna(False).to_numpy(dtype=bool)
        task = self._task_filter()
        if task is not None:
            mask &= (frame["task_id"] == task).fillna(False).to_numpy(dtype=bool)
        return frame[mask.to_numpy()].tail(int(self.rows.value))

    def render(self, scene: Scene) -> None:
        """Recompute the table from the rows before ``scene``'s moment and the filters."""
        mark = stamp(scene, self.name)
        if not scene.logging:
            off = "<i>logging is off for this scheduler (log=False)</i>"
            self.put(self.summary, value=mark + off)
            self.put(self.table, value="")
            return
        shown = self.filtered(scene)
        note = ""
        if self._task_filter() == -1:
            note = " · <b>task ID must be a number</b>"
        dropped = self.source.first_seq
        self.put(
            self.summary,
            value=mark + f"<div class='tsl-log-count'>{scene.seq} rows recorded"
            f"{f', {dropped} dropped (bounded log)' if dropped else ''}"
            f" · showing {len(shown)}{note}</div>",
        )
        self.put(self.table, value=log_table_html(shown, scene.scale))

    def _key(self, scene: Scene) -> Hashable:
        return (
            scene.seq,
            scene.scale.style,
            self.kind.value,
            self.case.value,
            self.task.value,
            self.rows.value,
        )

    def _make_parts(self) -> list[Part]:
        return [Part("log", self.render, self._key)]
