"""Matplotlib figures of an event log and of the queue designs, for teaching.

Every function builds on a :class:`matplotlib.figure.Figure` directly (no
``pyplot``, no global state, any backend), takes an optional ``ax=`` to draw
into, and returns the Axes (or, for :func:`plot_summary`, the Figure). Logs
may come live (``scheduler.log.to_frame()``, an ``EventLog``, the
``Scheduler`` itself) or from disk (:func:`tempsched_lab.read_log`).

Figures made here are :class:`LabFigure` objects: a notebook cell that ends with
one (``ax.figure``) shows it as a PNG, with or without ``%matplotlib inline``
and without the package touching IPython. :func:`new_figure` makes one to
compose several plots on a page.

=========================  ======================================================
:func:`plot_timeline`      one lane per task: scheduled, due, started, finished
:func:`plot_decision_tree` the 8-case tree, a decision's path, counts per case
:func:`plot_lateness`      due -> start, due -> dispatch, dispatch -> start
:func:`plot_queue_depth`   queue size and head-list size over time
:func:`plot_queue`         a snapshot in its design's picture (sorted dict,
                           heap, wheel: :func:`plot_sorteddict`,
                           :func:`plot_heap`, :func:`plot_wheel`)
:func:`plot_summary`       timeline, queue depth, tree counts, lateness: one page
=========================  ======================================================

Colours are fixed per decision case and per outcome (:mod:`.colors`).

>>> from tempsched_lab.plots import example_frame, plot_timeline
>>> ax = plot_timeline(example_frame())
>>> ax.figure.savefig(__import__("io").BytesIO(), format="png")
"""

from __future__ import annotations

from ._axes import LabFigure, new_figure
from ._data import task_runs
from .colors import CASE_COLORS, OUTCOME_COLORS, OUTCOMES, case_color, outcome_color
from .depth import plot_queue_depth, queue_depth
from .designs import plot_heap, plot_queue, plot_sorteddict, plot_wheel
from .examples import example_frame, example_scheduler
from .lateness import lateness_values, plot_lateness
from .summary import plot_summary
from .timeline import plot_timeline
from .tree import plot_decision_tree, tree_layout

__all__ = [
    "CASE_COLORS",
    "OUTCOMES",
    "OUTCOME_COLORS",
    "LabFigure",
    "case_color",
    "example_frame",
    "example_scheduler",
    "lateness_values",
    "new_figure",
    "outcome_color",
    "plot_decision_tree",
    "plot_heap",
    "plot_lateness",
    "plot_queue",
    "plot_queue_depth",
    "plot_sorteddict",
    "plot_summary",
    "plot_timeline",
    "plot_wheel",
    "queue_depth",
    "task_runs",
    "tree_layout",
]
