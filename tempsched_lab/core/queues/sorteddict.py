"""The TemporalScheduler design: sorted time points plus a ready head list.

The head (the earliest time point and its tasks) is kept apart from the sorted
time points behind it, exactly as in the reference design: a request earlier
than the head pushes the old head back among the time points (case 3).

The later time points are a ``dict`` (due time -> tasks) plus a
:class:`sortedcontainers.SortedList` of their times: the same structure as a
``SortedDict``, used directly, because ``SortedDict.__setitem__`` adds a Python
call per insert on the hot path (about 1,300 instructions of 10,000 per
``schedule``, counted with ``benchmarks/instructions.py``).

New later times are sorted lazily: an insert appends the time to a plain list,
and the list is merged into the sorted times (``SortedList.update``, which sorts
in C) the first time the order is needed: when the head moves on, a time point is
removed, or the points are read. A burst of requests then costs one C sort instead
of a Python bisect-and-insert per request (``SortedList.add`` is ~4,000
instructions, a list append ~100; ``schedule`` at 5,000 distinct times went from
33,124 to 29,712 instructions per call, counted with ``benchmarks/instructions.py``).
When requests and firings alternate, the merge adds the one waiting time with
``add``, as the eager insert did.

Costs (n pending tasks, p time points, k tasks at one time point, u times not yet
merged):

=================  ======================================================
insert             O(1) (a new time point waits unsorted), O(1) joining one
remove by ID       O(log p + k), after merging the u unsorted times
pop_due            O(log p) per group popped, after merging (O(u log u))
next_time          O(1)
=================  ======================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sortedcontainers import SortedList

from ..task import Task
from .base import DueGroup, InvariantError, TimePoint, TimerQueue, as_point

__all__ = ["SortedDictQueue"]

_new_tuple = tuple.__new__


class _Times(SortedList):  # type: ignore[misc]  # (sortedcontainers is untyped)
    """The later times, sorted: a ``SortedList`` with sublists of 64 values, not 1,000.

    Each group fired takes the first time (``pop(0)``), and a re-arm or an earlier request
    puts one back at the front (``add``): both shift the first sublist in C, ~1,000 values
    at the default load factor, ~2,000 instructions a shift. At 64 (32 and 128 measure
    within 0.6 %): the simulation, log off, 56,383 -> 52,219 instructions per task (-7.4 %),
    the periodic run 74,363 -> 70,768 (-4.8 %), ``cancel`` (log on) 51,598 -> 50,829 (-1.5 %),
    ``schedule`` unchanged (benchmarks/instructions.py).
    """

    DEFAULT_LOAD_FACTOR = 64


class SortedDictQueue(TimerQueue):
    """Sorted time points behind a ready head list (the default design).

    >>> from tempsched_lab.core.task import make_task
    >>> q = SortedDictQueue()
    >>> q.insert(make_task(0, 5.0))
    >>> q.head_time(), len(q)
    (5.0, 1)
    """

    design = "sorteddict"

    def __init__(self) -> None:
        super().__init__()
        self._head_time: float | None = None
        #: the tasks at the head time (empty: none), in insertion order; read-only outside
        #: this class: the recorder takes ``len()`` of it in place of :meth:`head_size`, one
        #: Python call fewer per ``schedule`` row (log on 29,361 -> 29,169 instructions a
        #: call; callgrind, ``benchmarks/instructions.py``, n = 5,000)
        self.head_tasks: TimePoint = TimePoint()
        #: later time points: due -> the lone task due then, or a TimePoint of 2+
        self._later: dict[float, Task | TimePoint] = {}
        self._times = _Times()  # the keys of _later, sorted, but for those in _unsorted
        self._unsorted: list[float] = []  # keys of _later not yet merged into _times

    def insert(self, task: Task) -> None:
        due = task.due
        head = self._head_time
        if head is None:
            self._head_time = due
            self.head_tasks = TimePoint((task,))
        elif due < head:
            head_tasks = self.head_tasks
            self._later[head] = head_tasks if len(head_tasks) > 1 else head_tasks[0]
            self._unsorted.append(head)
            self._head_time = due
            self.head_tasks = TimePoint((task,))
        elif due == head:
            self.head_tasks.add(task)
        else:
            later = self._later
            point = later.get(due)
            if point is None:
                later[due] = task  # a lone task is stored bare: a list per task costs memory
                self._unsorted.append(due)
            elif isinstance(point, TimePoint):
                point.add(task)
            else:
                later[due] = TimePoint((point, task))
        self.index[task.id] = task

    def _sorted_times(self) -> SortedList:
        """The later times in order: merges the times inserted since the last call."""
        unsorted = self._unsorted
        if len(unsorted) == 1:  # requests and firings alternating: add() skips update()'s
            self._times.add(unsorted[0])  # sort and size checks (~4,000 instructions)
            self._unsorted = []
        elif unsorted:
            self._times.update(unsorted)
            self._unsorted = []
        return self._times

    def _add(self, task: Task) -> None:  # pragma: no cover - insert() is overridden
        raise NotImplementedError

    def _discard(self, task: Task) -> None:
        due = task.due
        if due == self._head_time:
            self.head_tasks.discard(task)
            if not self.head_tasks:
                self._promote()
            return
        point = self._later[due]
        if type(point) is not TimePoint:
            del self._later[due]
            self._sorted_times().remove(due)
            return
        point.discard(task)
        if len(point) == 1:
            self._later[due] = point[0]

    def _promote(self) -> None:
        if self._later:  # (the dict's truth is C; the SortedList's len() is a Python call)
            if self._unsorted:  # (checked here, not in a call: once per group popped)
                self._sorted_times()
            due = self._times.pop(0)
            self._head_time = due
            point = self._later.pop(due)
            self.head_tasks = point if isinstance(point, TimePoint) else TimePoint((point,))
        else:
            self._head_time, self.head_tasks = None, TimePoint()

    def point_at(self, due: float) -> Task | TimePoint | None:
        if due == self._head_time:
            return self.head_tasks
        return self._later.get(due)

    def head_time(self) -> float | None:
        return self._head_time

    def next_time(self) -> float | None:
        return self._head_time

    def head_size(self) -> int:
        return len(self.head_tasks)

    def pop_due(self, now: float) -> list[DueGroup]:
        due = self._head_time
        if due is None or due > now:
            return []
        groups: list[DueGroup] = []
        index = self.index
        while True:
            tasks = tuple(self.head_tasks)
            for task in tasks:
                del index[task.id]
            # tuple.__new__ skips the named tuple's Python-level __new__ (saves ~1,100 of
            # ~3,100 instructions per group built, counted with callgrind)
            groups.append(_new_tuple(DueGroup, (due, tasks)))
            self._promote()
            due = self._head_time
            if due is None or due > now:
                return groups

    def points(self) -> Iterator[tuple[float, TimePoint]]:
        if self._head_time is not None:
            yield self._head_time, self.head_tasks
        later = self._later
        for t in list(self._sorted_times()):
            yield t, as_point(later[t])  # type: ignore[misc]

    def picture(self) -> dict[str, Any]:
        return {
            "head_time": self._head_time,
            "head": [task.id for task in self.head_tasks],
            "time_points": [(t, [task.id for task in tp]) for t, tp in self.points()][
                1 if self._head_time is not None else 0 :
            ],
        }

    def check_invariants(self) -> None:
        if self._head_time is None:
            if self.head_tasks or self._later or self._times or self._unsorted:
                raise InvariantError("no head time but tasks are stored")
        else:
            if not self.head_tasks:
                raise InvariantError("head time set but the head list is empty")
            if self._later and min(self._later) <= self._head_time:
                raise InvariantError("a queued time point is not later than the head")
        if len(set(self._unsorted)) != len(self._unsorted):
            raise InvariantError("a time waits twice to be merged")
        if sorted(self._later) != sorted([*self._times, *self._unsorted]):
            raise InvariantError("the sorted times and the time points disagree")
        # the stored points, read without merging the unsorted times (points() would merge)
        points = [] if self._head_time is None else [(self._head_time, self.head_tasks)]
        for t, point in self._later.items():
            points.append((t, point if isinstance(point, TimePoint) else TimePoint((point,))))
        for t, tp in points:
            if not tp:
                raise InvariantError(f"empty time point at {t!r}")
            for task in tp:
                if task.due != t:
                    raise InvariantError(f"task {task.id} due {task.due!r} stored at {t!r}")
        for t, point in self._later.items():
            if type(point) is TimePoint and len(point) < 2:
                raise InvariantError(f"time point {t!r} holds {len(point)} task(s) as a list")
        self._check_index(points)
