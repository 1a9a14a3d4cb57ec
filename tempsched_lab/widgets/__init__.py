"""Jupyter widgets for watching and driving a scheduler: panels, a dashboard, a static export.

Each panel owns its widgets, shows them in ``panel.widget`` (and displays
itself in a notebook), and recomputes its display in ``panel.refresh()``:

* :class:`QueuePanel`: the head, the next time points and their tasks, with
  countdowns; the heap's or wheel's own picture.
* :class:`TimelinePanel`: the task timeline in a window that follows now, by task
  or by executor thread.
* :class:`DecisionTreePanel`: the decision tree, the last decision's path
  highlighted, per-case counts.
* :class:`LogPanel`: the newest log rows, filtered by kind, case or task.
* :class:`ControlsPanel`: step / advance / play a virtual clock; schedule a
  demo task; cancel by ID; each decision explained in words.
* :class:`HistoryPanel`: scrub through the log, the queue replayed at each row,
  what the row changed marked in a picture of the queue.
* :class:`TimelineWidget`: the interactive canvas timeline the timeline panel shows
  in a browser (zoom, pan, hover, click a task), fed only new rows.
* :class:`PredictPanel`: teaching mode, predict the case of the next request, then
  see it decided (``Dashboard(..., teaching=True)``).
* :class:`ExerciseWidget`: an exercise of :mod:`tempsched_lab.teach`: predict, check,
  then reveal what the scheduler did beside the answer; a score for the session.
* :class:`SideBySide`: one scenario on two queue designs (or executors), stepped together.

:class:`Dashboard` composes them (every panel registered with
:func:`register_panel`, laid out from the registry) for one scheduler and keeps them live with a
single :class:`Refresher` thread: each round renders every panel from one
moment of the scheduler (a :class:`Scene`), at most ~10 rounds per second, with
a full resync every few seconds; a :class:`PageWatch` notices when no browser
page shows the dashboard any more. See ``docs/widgets.md``.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> from tempsched_lab.widgets import Dashboard
>>> s = Scheduler(VirtualClock())
>>> dash = Dashboard(s, panels=("controls", "queue"), autostart=False)
>>> dash.close()
"""

from __future__ import annotations

from ._base import FigureRenderer, Panel, Part, Stage
from .changes import QueueChange, queue_change, queue_strip_html
from .controls import ControlsPanel, cancel_text, decision_text, demo_task
from .dashboard import DEFAULT_PANELS, PANELS, Dashboard, static_html
from .exercise import ExerciseWidget
from .figures import DecisionTreePanel, TimelinePanel
from .history import HistoryPanel
from .logview import LogPanel, describe_row, log_table_html
from .pagewatch import PageWatch, in_voila
from .panels import PanelSpec, register_panel, unregister_panel
from .queue import QueuePanel, queue_table_html
from .refresher import Refresher, active_refresher
from .scene import LogSource, Scene, last_decision
from .sidebyside import SideBySide
from .teaching import PredictPanel, craft_request
from .timeline_widget import TimelineWidget

__all__ = [
    "DEFAULT_PANELS",
    "PANELS",
    "ControlsPanel",
    "Dashboard",
    "DecisionTreePanel",
    "ExerciseWidget",
    "FigureRenderer",
    "HistoryPanel",
    "LogPanel",
    "LogSource",
    "PageWatch",
    "Panel",
    "PanelSpec",
    "Part",
    "PredictPanel",
    "QueueChange",
    "QueuePanel",
    "Refresher",
    "Scene",
    "SideBySide",
    "Stage",
    "TimelinePanel",
    "TimelineWidget",
    "active_refresher",
    "cancel_text",
    "craft_request",
    "decision_text",
    "demo_task",
    "describe_row",
    "in_voila",
    "last_decision",
    "log_table_html",
    "queue_change",
    "queue_strip_html",
    "queue_table_html",
    "register_panel",
    "static_html",
    "unregister_panel",
]
