"""The dashboard's texts as one anywidget: queue, newest log rows and case counts, for marimo.

marimo renders anywidgets (``mo.ui.anywidget``) but not ipywidgets containers
(marimo-team/marimo#5099), so a :class:`~tempsched_lab.widgets.Dashboard`
shows itself there as a :class:`LiveView`: one ES module (``static/liveview.js``)
drawing one JSON ``state`` trait, written once per refresher round, beside the
interactive timeline. The panels it cannot show (controls, pictures, history)
are named in one line of the view, never left blank.

Colours come from the theme's CSS variables (``--tsl-fg``, ``--tsl-bg``, ...),
each with a light fallback.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, at=1.0, label="hello")
>>> panel = LivePanel(s)
>>> panel.refresh()
>>> state = panel.view.state
>>> state["queue"][0]["label"], state["pending"], state["seq"]
('hello', 1, 1)
>>> panel.close()
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as T

from ..reading.sentences import describe_row
from ._base import Panel, Part, fmt_countdown, fmt_period
from .scene import LogSource, Scene

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler

__all__ = ["LivePanel", "LiveView", "in_marimo", "live_state"]

STATIC = Path(__file__).with_name("static")


def in_marimo() -> bool:
    """Whether this code runs in a marimo notebook or app (``marimo edit`` / ``marimo run``).

    >>> in_marimo()
    False
    """
    import sys

    if "marimo" not in sys.modules:  # never imported: not in marimo (and no import cost)
        return False
    try:
        import marimo as mo

        return bool(mo.running_in_notebook())
    except Exception:  # an old or broken marimo: not a host we can use
        return False


class LiveView(anywidget.AnyWidget):
    """One anywidget drawing a scheduler's moment from its ``state`` trait (:func:`live_state`)."""

    _esm = STATIC / "liveview.js"
    state = T.Dict().tag(sync=True)
    type_scale = T.Unicode("default").tag(sync=True)


def live_state(
    scene: Scene,
    *,
    title: str | None = None,
    max_points: int = 8,
    max_rows: int = 12,
    missing: Sequence[str] = (),
) -> dict[str, Any]:
    """What a :class:`LiveView` draws of ``scene``: plain JSON, times in its time language.

    Keys: ``title``, ``now`` (text), ``seq`` (rows shown), ``closed``,
    ``pending``, ``queue`` (the first ``max_points`` time points' tasks:
    ``due``, ``countdown``, ``id``, ``label``, ``period``, ``head``),
    ``more`` (tasks left out), ``running`` (labels of runs in flight),
    ``log`` (the newest ``max_rows`` rows: ``seq``, ``t``, ``kind``, ``text``),
    ``counts`` (``{case: n}``) and ``missing`` (panels this view cannot show).
    """
    scale = scene.scale
    queue: list[dict[str, Any]] = []
    points = scene.queue.state.points
    for i, (due, ids) in enumerate(points[:max_points]):
        for task_id in ids:
            view = scene.queue.tasks.get(task_id)
            queue.append(
                {
                    "due": scale.number(due),
                    "countdown": fmt_countdown(due, scene.now),
                    "id": int(task_id),
                    "label": "" if view is None else str(view.label or ""),
                    "period": fmt_period(None if view is None else view.period),
                    "head": i == 0,
                }
            )
    shown = len(queue)
    log: list[dict[str, Any]] = []
    if scene.logging:
        for row in scene.tail(max_rows).to_dict("records"):
            log.append(
                {
                    "seq": int(row["seq"]),
                    "t": scale.number(float(row["t"])),
                    "kind": str(row["kind"]),
                    "text": describe_row(row, scale),
                }
            )
        log.reverse()  # the newest first
        _, counts = scene.decisions()
    else:
        counts = {}
    return {
        "title": title or "",
        "now": scale.at(scene.now),
        "unit": scale.column_header(),
        "seq": int(scene.seq),
        "closed": bool(scene.closed),
        "pending": int(scene.queue.state.size),
        "queue": queue,
        "more": int(scene.queue.state.size) - shown,
        "running": [str(v.label or f"#{v.id}") for v in scene.moment.running],
        "log": log,
        "logging": bool(scene.logging),
        "counts": {str(k): int(v) for k, v in counts.items()},
        "missing": list(missing),
    }


class LivePanel(Panel):
    """A panel whose widget is a :class:`LiveView` (no ipywidgets container: marimo shows it).

    Args:
        scheduler: the scheduler to show.
        source: the dashboard's shared log reader.
        title: heading of the view.
        missing: names of the panels this view stands in for but cannot show
            (one line says so, and where to see them).
        scale: the type scale (``"default"`` or ``"projector"``).
    """

    name = "live"
    widget: Any

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        title: str | None = None,
        missing: Sequence[str] = (),
        scale: str | None = None,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        self.title = title
        self.missing = tuple(missing)
        self.view: LiveView = self._own(LiveView(type_scale=self.type_scale))
        self.widget = self.view

    def _make_parts(self) -> list[Part]:
        return [Part("live", self._render, self._key, drift=self._drift, interval=0.5)]

    def _key(self, scene: Scene) -> Hashable:
        return (scene.seq, scene.queue.state.size, scene.closed, len(scene.moment.running))

    def _drift(self, scene: Scene) -> Hashable:
        return round(scene.now, 1)  # the countdowns

    def _render(self, scene: Scene) -> None:
        state = live_state(scene, title=self.title, missing=self.missing)
        self.put(self.view, state=state, type_scale=self.type_scale)

    def display_widgets(self) -> list[Any]:
        """Its one view (a resync re-sends its state)."""
        return [self.view]
