"""Queue designs behind one interface: sorted dict (default), binary heap, timing wheel."""

from __future__ import annotations

from typing import Any

from .base import DueGroup, InvariantError, QueueSnapshot, QueueState, TimePoint, TimerQueue
from .heap import HeapQueue
from .sorteddict import SortedDictQueue
from .wheel import TimingWheelQueue

__all__ = [
    "DESIGNS",
    "DueGroup",
    "HeapQueue",
    "InvariantError",
    "QueueSnapshot",
    "QueueState",
    "SortedDictQueue",
    "TimePoint",
    "TimerQueue",
    "TimingWheelQueue",
    "make_queue",
]

#: Design name -> class.
DESIGNS: dict[str, type[TimerQueue]] = {
    "sorteddict": SortedDictQueue,
    "heap": HeapQueue,
    "wheel": TimingWheelQueue,
}


def make_queue(queue: str | TimerQueue = "sorteddict", **options: Any) -> TimerQueue:
    """A queue from a design name (``"sorteddict"``, ``"heap"``, ``"wheel"``) or an instance.

    >>> make_queue("sorteddict").design
    'sorteddict'
    """
    if isinstance(queue, TimerQueue):
        if options:
            raise TypeError(f"queue options {sorted(options)} given with a queue instance")
        return queue
    if not isinstance(queue, str) or queue not in DESIGNS:
        raise ValueError(f"queue={queue!r}: expected one of {sorted(DESIGNS)} or a TimerQueue")
    return DESIGNS[queue](**options)
