"""A moment: one consistent picture of a scheduler, the unit a dashboard frame draws.

:meth:`Scheduler.moment <tempsched_lab.Scheduler.moment>` takes it under the
scheduler's lock, so its parts (how many log rows exist, the queue, the runs in
flight, the clock reading) all describe the same instant.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..time.scale import TimeScale
from .queues.base import QueueSnapshot
from .task import TaskView

__all__ = ["Moment"]


@dataclass(frozen=True, slots=True)
class Moment:
    """What a scheduler looked like at one instant.

    Attributes:
        serial: increases by one per moment taken from this scheduler.
        seq: rows recorded so far; the moment shows exactly the rows with ``seq < seq``.
        now: the clock reading; for a scheduler that was shut down, the reading at its
            shutdown (the clock may go on for others: the picture stops there).
        queue: the queue's snapshot (its state and its design's picture).
        running: runs dispatched and not finished, in dispatch order.
        closed: whether the scheduler was shut down (or its worker died).
        time_scale: how to show this scheduler's times to users.
    """

    serial: int
    seq: int
    now: float
    queue: QueueSnapshot
    running: tuple[TaskView, ...]
    closed: bool
    time_scale: TimeScale

    @property
    def pending(self) -> int:
        """Tasks waiting in the queue."""
        return self.queue.state.size
