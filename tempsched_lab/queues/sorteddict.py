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
from .base import DueGroup, InvariantError, TimePoint, TimerQueue

__all__ = ["SortedDictQueue"]


class SortedDictQueue(TimerQueue):
    """Sorted dict of time -> tasks behind a ready head list (the default design).

    >>> from tempsched_lab.task import Task
    >>> q = SortedDictQueue()
    >>> q.insert(Task(0, 5.0, print, (), None, None, None))
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
            later = self._later
            point = later.get(due)
            if point is None:
                later[due] = task  # a lone task is stored bare: a list per task costs memory
            elif type(point) is Task:
                later[due] = TimePoint((point, task))
            else:
                point.add(task)

    def _discard(self, task: Task) -> None:
        due = task.due
        if due == self._head_time:
            self._head.discard(task)
            if not self._head:
                self._promote()
            return
        point = self._later[due]
        if type(point) is Task:
            del self._later[due]
            return
        point.discard(task)
        if len(point) == 1:
            self._later[due] = point[0]

    def _promote(self) -> None:
        if self._later:
            self._head_time, point = self._later.popitem(0)
            self._head = TimePoint((point,)) if type(point) is Task else point
        else:
            self._head_time, self._head = None, TimePoint()

    def tasks_at(self, due: float) -> TimePoint | None:
        if due == self._head_time:
            return self._head
        point = self._later.get(due)
        return TimePoint((point,)) if type(point) is Task else point

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
            yield t, (TimePoint((point,)) if type(point) is Task else point)

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
