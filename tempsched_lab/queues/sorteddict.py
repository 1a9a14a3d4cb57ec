"""The TemporalScheduler design: sorted time points plus a ready head list.

The head (the earliest time point and its tasks) is kept apart from the sorted
time points behind it, exactly as in the reference design: a request earlier
than the head pushes the old head back among the time points (case 3).

The later time points are a ``dict`` (due time -> tasks) plus a
:class:`sortedcontainers.SortedList` of their times: the same structure as a
``SortedDict``, used directly, because ``SortedDict.__setitem__`` adds a Python
call per insert on the hot path (about 1,300 instructions of 10,000 per
``schedule``, counted with ``benchmarks/instructions.py``).

Costs (n pending tasks, p time points, k tasks at one time point):

=================  ======================================================
insert             O(log p) for a new time point, O(1) joining one
remove by ID       O(log p + k)
pop_due            O(log p) per group popped
next_time          O(1)
=================  ======================================================
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sortedcontainers import SortedList

from ..task import Task
from .base import (
    DueGroup,
    InvariantError,
    TimePoint,
    TimerQueue,
    as_point,
)

__all__ = ["SortedDictQueue"]


class SortedDictQueue(TimerQueue):
    """Sorted time points behind a ready head list (the default design).

    >>> from tempsched_lab.task import make_task
    >>> q = SortedDictQueue()
    >>> q.insert(make_task(0, 5.0))
    >>> q.head_time(), len(q)
    (5.0, 1)
    """

    design = "sorteddict"

    def __init__(self) -> None:
        super().__init__()
        self._head_time: float | None = None
        self._head: TimePoint = TimePoint()
        #: later time points: due -> the lone task due then, or a TimePoint of 2+
        self._later: dict[float, Task | TimePoint] = {}
        self._times = SortedList()  # the keys of _later, sorted
        self._deferred: list[float] | None = None  # new keys of _later during a batch()

    def insert(self, task: Task) -> None:
        due = task.due
        head = self._head_time
        if head is None:
            self._head_time = due
            self._head = TimePoint((task,))
        elif due < head:
            head_tasks = self._head
            self._later[head] = head_tasks if len(head_tasks) > 1 else head_tasks[0]
            if self._deferred is None:
                self._times.add(head)
            else:
                self._deferred.append(head)
            self._head_time = due
            self._head = TimePoint((task,))
        elif due == head:
            self._head.add(task)
        else:
            later = self._later
            point = later.get(due)
            if point is None:
                later[due] = task  # a lone task is stored bare: a list per task costs memory
                if self._deferred is None:
                    self._times.add(due)
                else:
                    self._deferred.append(due)
            elif isinstance(point, TimePoint):
                point.add(task)
            else:
                later[due] = TimePoint((point, task))
        self.index[task.id] = task

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Many inserts: new time points are sorted once, at the end (``SortedList.update``
        sorts the lot in C: about 3,000 instructions saved per new time point)."""
        if self._deferred is not None:  # nested: the outer batch sorts
            yield
            return
        self._deferred = []
        try:
            yield
        finally:
            deferred, self._deferred = self._deferred, None
            if deferred:
                self._times.update(deferred)

    def _add(self, task: Task) -> None:  # pragma: no cover - insert() is overridden
        raise NotImplementedError

    def _discard(self, task: Task) -> None:
        due = task.due
        if due == self._head_time:
            self._head.discard(task)
            if not self._head:
                self._promote()
            return
        point = self._later[due]
        if type(point) is not TimePoint:
            del self._later[due]
            self._times.remove(due)
            return
        point.discard(task)
        if len(point) == 1:
            self._later[due] = point[0]

    def _promote(self) -> None:
        if self._later:  # (the dict's truth is C; the SortedList's len() is a Python call)
            due = self._times.pop(0)
            self._head_time = due
            point = self._later.pop(due)
            self._head = point if isinstance(point, TimePoint) else TimePoint((point,))
        else:
            self._head_time, self._head = None, TimePoint()

    def point_at(self, due: float) -> Task | TimePoint | None:
        if due == self._head_time:
            return self._head
        return self._later.get(due)

    def head_time(self) -> float | None:
        return self._head_time

    def next_time(self) -> float | None:
        return self._head_time

    def head_size(self) -> int:
        return len(self._head)

    def pop_due(self, now: float) -> list[DueGroup]:
        groups: list[DueGroup] = []
        index = self.index
        while self._head_time is not None and self._head_time <= now:
            tasks = tuple(self._head)
            for task in tasks:
                del index[task.id]
            groups.append(DueGroup(self._head_time, tasks))
            self._promote()
        return groups

    def points(self) -> Iterator[tuple[float, TimePoint]]:
        if self._head_time is not None:
            yield self._head_time, self._head
        later = self._later
        for t in list(self._times):
            yield t, as_point(later[t])  # type: ignore[misc]

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
            if self._head or self._later or self._times:
                raise InvariantError("no head time but tasks are stored")
        else:
            if not self._head:
                raise InvariantError("head time set but the head list is empty")
            if self._times and self._times[0] <= self._head_time:
                raise InvariantError("a queued time point is not later than the head")
        if sorted(self._later) != list(self._times):
            raise InvariantError("the sorted times and the time points disagree")
        for t, tp in self.points():
            if not tp:
                raise InvariantError(f"empty time point at {t!r}")
            for task in tp:
                if task.due != t:
                    raise InvariantError(f"task {task.id} due {task.due!r} stored at {t!r}")
        for t, point in self._later.items():
            if type(point) is TimePoint and len(point) < 2:
                raise InvariantError(f"time point {t!r} holds {len(point)} task(s) as a list")
        self._check_index()
