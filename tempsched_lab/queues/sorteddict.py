"""The TemporalScheduler design: a sorted dict of time points plus a ready head list.

The head (the earliest time point and its tasks) is kept apart from the sorted
dict of later time points, exactly as in the reference design: a request
earlier than the head pushes the old head back into the dict (case 3).

Costs (n pending tasks, p time points, k tasks at one time point):

=================  ======================================================
insert             O(log p) for a new time point, O(1) joining one
remove by ID       O(log p + k)
pop_due            O(log p) per group popped
next_time          O(1)
=================  ======================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sortedcontainers import SortedDict

from ..task import Task
from .base import (
    DueGroup,
    InvariantError,
    TimePoint,
    TimerQueue,
    as_point,
    point_add,
    point_discard,
)

__all__ = ["SortedDictQueue"]


class SortedDictQueue(TimerQueue):
    """Sorted dict of time -> tasks behind a ready head list (the default design).

    >>> from tempsched_lab.task import make_task
    >>> q = SortedDictQueue()
    >>> q.insert(make_task(0, 5.0, print, (), None, None, None))
    >>> q.head_time(), len(q)
    (5.0, 1)
    """

    design = "sorteddict"

    def __init__(self) -> None:
        super().__init__()
        self._head_time: float | None = None
        self._head: TimePoint = TimePoint()
        self._later: SortedDict = SortedDict()

    def _add(self, task: Task) -> None:
        due = task.due
        head = self._head_time
        if head is None:
            self._head_time = due
            self._head = TimePoint((task,))
        elif due < head:
            self._later[head] = self._head if len(self._head) > 1 else self._head[0]
            self._head_time = due
            self._head = TimePoint((task,))
        elif due == head:
            self._head.add(task)
        else:
            point_add(self._later, due, task)

    def _discard(self, task: Task) -> None:
        due = task.due
        if due == self._head_time:
            self._head.discard(task)
            if not self._head:
                self._promote()
            return
        point_discard(self._later, due, task)

    def _promote(self) -> None:
        if self._later:
            self._head_time, point = self._later.popitem(0)
            self._head = as_point(point)  # type: ignore[assignment]
        else:
            self._head_time, self._head = None, TimePoint()

    def tasks_at(self, due: float) -> TimePoint | None:
        if due == self._head_time:
            return self._head
        return as_point(self._later.get(due))

    def head_time(self) -> float | None:
        return self._head_time

    def next_time(self) -> float | None:
        return self._head_time

    def head_size(self) -> int:
        return len(self._head)

    def pop_due(self, now: float) -> list[DueGroup]:
        groups: list[DueGroup] = []
        while self._head_time is not None and self._head_time <= now:
            groups.append(DueGroup(self._head_time, tuple(self._head)))
            self._promote()
        return self._forget(groups)

    def points(self) -> Iterator[tuple[float, TimePoint]]:
        if self._head_time is not None:
            yield self._head_time, self._head
        for t, point in self._later.items():
            yield t, as_point(point)  # type: ignore[misc]

    def picture(self) -> dict[str, Any]:
        return {
            "head_time": self._head_time,
            "head": [task.id for task in self._head],
            "time_points": [(t, [task.id for task in tp]) for t, tp in self.points()][
                1 if self._head_time is not None else 0 :
            ],
        }

    def check_invariants(self) -> None:
        if self._head_time is None:
            if self._head or self._later:
                raise InvariantError("no head time but tasks are stored")
        else:
            if not self._head:
                raise InvariantError("head time set but the head list is empty")
            if self._later and self._later.peekitem(0)[0] <= self._head_time:
                raise InvariantError("a queued time point is not later than the head")
        for t, tp in self.points():
            if not tp:
                raise InvariantError(f"empty time point at {t!r}")
            for task in tp:
                if task.due != t:
                    raise InvariantError(f"task {task.id} due {task.due!r} stored at {t!r}")
        self._check_index()
