"""Panels that show plots as PNG images: the timeline and the decision tree.

Each panel owns one reused matplotlib ``Figure`` (Agg, no pyplot) and puts the
PNG bytes into an ``ipywidgets.Image``: fewer messages than an interactive
canvas, testable without a front end, and embeddable in a static export.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from ..decision import Case
from ..plots import plot_decision_tree, plot_timeline
from ._base import LogSource, Panel, Part, esc, fmt_time, image_widget

if TYPE_CHECKING:
    from ..scheduler import Scheduler

__all__ = ["DecisionTreePanel", "TimelinePanel", "last_decision"]


class TimelinePanel(Panel):
    """The task timeline (:func:`tempsched_lab.plots.plot_timeline`) with a "now" line.

    Args:
        scheduler: the scheduler to show.
        source: a shared :class:`~tempsched_lab.widgets.LogSource`.
        interval: least seconds between two redraws by a refresher.
        max_lanes: the most task lanes drawn one by one.
        figsize, dpi: size of the image.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> clock = VirtualClock()
    >>> s = Scheduler(clock)
    >>> _ = s.schedule(len, at=1.0, args=("ab",))
    >>> _ = clock.step()
    >>> panel = TimelinePanel(s)
    >>> panel.refresh()
    >>> panel.image.value[:4] == b"\\x89PNG"
    True
    >>> panel.close()
    """

    name = "timeline"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        interval: float = 1.0,
        max_lanes: int = 24,
        figsize: tuple[float, float] = (10.0, 3.6),
        dpi: int = 80,
    ) -> None:
        super().__init__(scheduler, source=source)
        self.interval = interval
        self.max_lanes = max_lanes
        self._fig = self._renderer(figsize, dpi)
        self.image: W.Image = self._own(image_widget(), "tsl-timeline-image")
        self.widget = self._box([self.image], "Timeline")

    @property
    def figure(self) -> Any:
        """The reused matplotlib Figure (``None`` once closed)."""
        return self._fig.figure

    def refresh(self) -> None:
        """Redraw the timeline up to the clock's current time."""
        with self._lock:
            if self.closed:
                return
            frame = self.source.frame()
            now = self.scheduler.clock.now()
            self.image.value = self._fig.render(
                lambda ax: plot_timeline(frame, ax=ax, now=now, max_lanes=self.max_lanes)
            )

    def _key(self) -> Hashable:
        return (self.source.version, round(self.scheduler.clock.now(), 2))

    def parts(self) -> list[Part]:
        return [Part("timeline", self.refresh, self._key, self.interval)]


def last_decision(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The newest row of ``frame`` that took a decision (a case 1-8), as a dict.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=2.0)
    >>> _ = s.schedule(print, at=1.0)
    >>> last_decision(s.log.to_frame())["case"]
    3
    """
    cases = frame["case"]
    decided = cases.notna().to_numpy()
    if not decided.any():
        return None
    row = frame.iloc[int(decided.nonzero()[0][-1])]
    return {
        "seq": int(row["seq"]),
        "t": float(row["t"]),
        "kind": str(row["kind"]),
        "case": int(row["case"]),
        "task_id": None if pd.isna(row["task_id"]) else int(row["task_id"]),
        "label": None if pd.isna(row["label"]) else str(row["label"]),
        "origin": None if pd.isna(row["origin"]) else str(row["origin"]),
        "due": float(row["due"]),
    }


def case_counts_of(frame: pd.DataFrame) -> dict[int, int]:
    """``{case: count}`` for cases 1-8 (zeros included) from an event-log frame."""
    decided = frame["case"].dropna()
    counts = decided.astype(int).value_counts()
    return {int(c): int(counts.get(int(c), 0)) for c in Case}


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
    """

    name = "tree"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        interval: float = 2.0,
        figsize: tuple[float, float] = (8.0, 4.6),
        dpi: int = 80,
    ) -> None:
        super().__init__(scheduler, source=source)
        self.interval = interval
        self._fig = self._renderer(figsize, dpi)
        self.image: W.Image = self._own(image_widget(), "tsl-tree-image")
        self.caption: W.HTML = self._own(W.HTML(), "tsl-tree-caption")
        self.counts: dict[int, int] = {int(c): 0 for c in Case}
        self.last: dict[str, Any] | None = None
        self.widget = self._box([self.image, self.caption], "Decision tree")
        self.widget.layout.max_width = f"{int(figsize[0] * dpi) + 20}px"

    def refresh(self) -> None:
        """Redraw the tree for the newest decision in the log."""
        with self._lock:
            if self.closed:
                return
            frame = self.source.frame()
            self.last = last = last_decision(frame)
            self.counts = counts = case_counts_of(frame)
            case = None if last is None else last["case"]
            self.image.value = self._fig.render(
                lambda ax: plot_decision_tree(case, counts=counts, ax=ax, explain=False)
            )
            self.caption.value = _caption(last, counts)

    def _key(self) -> Hashable:
        return self.source.version

    def parts(self) -> list[Part]:
        return [Part("tree", self.refresh, self._key, self.interval)]


def _caption(last: dict[str, Any] | None, counts: dict[int, int]) -> str:
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
        f"<b>Last decision</b> (row "
        f"{last['seq']}, t={fmt_time(last['t'])}{origin}): {who}{label} → "
        f"<b>case {int(case)}, {esc(case.short)}</b>. {esc(case.explanation)}</div>" + count_line
    )
