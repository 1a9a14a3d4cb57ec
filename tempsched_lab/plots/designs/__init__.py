"""Pictures of the queue designs, one module each (mirroring :mod:`tempsched_lab.core.queues`).

Each takes a :class:`~tempsched_lab.core.queues.QueueSnapshot`: from a live scheduler
(``scheduler.snapshot()``, or the scheduler itself), a queue (``queue.snapshot()``)
or a log at any row (:func:`tempsched_lab.replay_snapshot`). Times are written
in the time language (:mod:`tempsched_lab.time.scale`); big queues are summarised
rather than drawn task by task. Each picture is registered once, under its
design's name (:func:`design_picture`, :data:`PICTURES`), and found by that name
by :func:`plot_queue`, the widgets and the figure catalog.
"""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes

from ._common import scale_of, snapshot_of
from ._registry import PICTURES, DesignPicture, design_picture, picture_of, queue_designs
from .heap import plot_heap
from .sorteddict import plot_sorteddict
from .wheel import plot_wheel

__all__ = [
    "PICTURES",
    "DesignPicture",
    "design_picture",
    "picture_of",
    "plot_heap",
    "plot_queue",
    "plot_sorteddict",
    "plot_wheel",
    "queue_designs",
]


def plot_queue(snapshot: Any, *, ax: Axes | None = None, **options: Any) -> Axes:
    """The picture of the snapshot's own design (``snapshot.design``), from :data:`PICTURES`.

    ``"heap"`` -> :func:`plot_heap`, ``"wheel"`` -> :func:`plot_wheel`, and the
    sorted dict or any design without a picture of its own -> :func:`plot_sorteddict`
    (time points). ``options`` go to that function (``time_scale=``, ``highlight=``...).
    Given a scheduler, its own time scale is used (and its clock's time, for a
    picture that takes ``now=``).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock(), queue="heap")
    >>> _ = s.schedule(print, at=1.0)
    >>> plot_queue(s).get_title()
    'Binary heap: 1 entry, root = earliest due'
    """
    snap = snapshot_of(snapshot)
    picture = picture_of(snap.design)
    if "time_scale" not in options and snap is not snapshot:
        options["time_scale"] = scale_of(snapshot, snap, None)
    now = getattr(getattr(snapshot, "clock", None), "now", None)
    if picture.takes_now and "now" not in options and callable(now):
        options["now"] = float(now())
    return picture.draw(snap, ax=ax, **options)
