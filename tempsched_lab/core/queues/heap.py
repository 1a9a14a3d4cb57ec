"""The Reason Scheduler design: a binary min-heap of jobs with removal by ID.

The heap is a plain Python list of :class:`~tempsched_lab.core.task.Task` objects
managed here (not :mod:`heapq`, which cannot remove from the middle). Entry
``i`` has its parent at ``(i - 1) // 2`` and its children at ``2i + 1`` and
``2i + 2``; entries are ordered by ``task.due``. Each task's position in the
array is kept in ``task.queue_pos``, so removal by ID finds its entry in O(1).

Removing entry ``i`` moves the last entry into the hole. That entry came from
another subtree, so it may be *smaller* than its new parent as well as larger
than its new children: it must sift up in the first case and down in the
second. (The published design only sifts down, which leaves the heap broken
whenever the moved entry belongs above its new parent; see ``docs/queues.md``.)

A dict of exact due time -> tasks answers the decision tree's "is this time
point queued, and is the request a duplicate there?" in O(1), like the other
designs. It also fixes the order of tasks due at the same instant, so the heap
needs no tie-breaker: :meth:`HeapQueue.pop_due` takes a whole time point at
once (it removes as many root entries as the time point holds, in whatever
order equal dues sit in the array) and reports the tasks in the time point's
insertion order. The heap entries are therefore the bare tasks, with no
``(due, seq, task)`` tuple and no sequence number per entry. Likewise a time
point holding a single task stores that :class:`~tempsched_lab.core.task.Task`
itself; it becomes a :class:`~tempsched_lab.core.queues.base.TimePoint` list when a
second task joins, and a bare task again when it drops back to one
(:meth:`HeapQueue.tasks_at` wraps a lone task on demand).

Costs (n pending tasks, p time points, k tasks at one time point):

=================  ======================================================
insert             O(log n) sift-up (+ O(1) in the time-point dict)
remove by ID       O(log n) sift up *or* down (+ O(k) in the time point)
pop_due            O(log n) per task popped
next_time          O(1) (the root)
=================  ======================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter
from typing import Any

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

__all__ = ["HeapQueue"]

_first = itemgetter(0)


class HeapQueue(TimerQueue):
    """Binary min-heap of tasks keyed by due time, with an O(1) position index.

    Costs: insert O(log n), remove by ID O(log n), pop_due O(log n) per task,
    next_time O(1).

    >>> from tempsched_lab.core.task import make_task
    >>> q = HeapQueue()
    >>> for i, due in enumerate([5.0, 1.0, 3.0]):
    ...     q.insert(make_task(i, due, print, (), None, None, None))
    >>> q.head_time(), [due for _, due in q.picture()["heap"]]
    (1.0, [1.0, 5.0, 3.0])
    >>> q.remove(1).due, q.head_time()
    (1.0, 3.0)
    >>> [(g.due, [t.id for t in g.tasks]) for g in q.pop_due(10.0)]
    [(3.0, [2]), (5.0, [0])]
    """

    design = "heap"

    def __init__(self) -> None:
        super().__init__()
        #: the heap array: tasks, ordered by ``task.due`` (ties in no particular order)
        self._heap: list[Task] = []
        #: due time -> the lone task due then, or a TimePoint of 2+ in insertion order
        self._points: dict[float, Task | TimePoint] = {}

    # -- heap primitives ----------------------------------------------------------------
    def _sift_up(self, pos: int) -> None:
        """Move the entry at ``pos`` towards the root while it is earlier than its parent."""
        heap = self._heap
        task = heap[pos]
        due = task.due
        while pos > 0:
            parent_pos = (pos - 1) >> 1
            parent = heap[parent_pos]
            if not due < parent.due:
                break
            heap[pos] = parent
            parent.queue_pos = pos
            pos = parent_pos
        heap[pos] = task
        task.queue_pos = pos

    def _sift_down(self, pos: int) -> None:
        """Move the entry at ``pos`` towards the leaves while a child is earlier."""
        heap = self._heap
        size = len(heap)
        task = heap[pos]
        due = task.due
        child_pos = 2 * pos + 1
        while child_pos < size:
            child = heap[child_pos]
            right_pos = child_pos + 1
            if right_pos < size:
                right = heap[right_pos]
                if right.due < child.due:
                    child, child_pos = right, right_pos
            if not child.due < due:
                break
            heap[pos] = child
            child.queue_pos = pos
            pos = child_pos
            child_pos = 2 * pos + 1
        heap[pos] = task
        task.queue_pos = pos

    def _remove_at(self, pos: int) -> Task:
        """Remove the entry at ``pos``, restoring the heap in both directions (O(log n))."""
        heap = self._heap
        task = heap[pos]
        last = heap.pop()
        if pos < len(heap):
            heap[pos] = last
            last.queue_pos = pos
            if pos > 0 and last.due < heap[(pos - 1) >> 1].due:
                self._sift_up(pos)  # the moved entry belongs above its new parent
            else:
                self._sift_down(pos)
        task.queue_pos = None
        return task

    # -- TimerQueue ---------------------------------------------------------------------
    def _add(self, task: Task) -> None:
        heap = self._heap
        heap.append(task)
        self._sift_up(len(heap) - 1)
        point_add(self._points, task.due, task)

    def _discard(self, task: Task) -> None:
        pos = task.queue_pos
        heap = self._heap
        if not isinstance(pos, int) or not 0 <= pos < len(heap) or heap[pos] is not task:
            raise InvariantError(f"task {task.id} has no valid heap position ({pos!r})")
        self._remove_at(pos)
        point_discard(self._points, task.due, task)

    def point_at(self, due: float) -> Task | TimePoint | None:
        return self._points.get(due)

    def head_time(self) -> float | None:
        heap = self._heap
        return heap[0].due if heap else None

    def next_time(self) -> float | None:
        heap = self._heap
        return heap[0].due if heap else None

    def head_size(self) -> int:
        heap = self._heap
        if not heap:
            return 0
        point = self._points[heap[0].due]
        return len(point) if isinstance(point, TimePoint) else 1

    def pop_due(self, now: float) -> list[DueGroup]:
        groups: list[DueGroup] = []
        heap = self._heap
        points = self._points
        remove_at = self._remove_at
        while heap and heap[0].due <= now:
            due = heap[0].due
            point = points.pop(due)
            if isinstance(point, TimePoint):
                # The k entries due now are the k smallest: popping the root k times
                # takes exactly them; the time point gives their insertion order.
                for _ in range(len(point)):
                    remove_at(0)
                groups.append(DueGroup(due, tuple(point)))
            else:
                remove_at(0)
                groups.append(DueGroup(due, (point,)))
        return self._forget(groups)

    def points(self) -> Iterator[tuple[float, TimePoint]]:
        for due, point in sorted(self._points.items(), key=_first):
            yield due, as_point(point)  # type: ignore[misc]

    def picture(self) -> dict[str, Any]:
        """The heap in array order with parent links, for drawing it as a tree.

        ``heap[i]`` is ``(task_id, due)``; ``parent[i]`` is the index of its
        parent (``None`` for the root).
        """
        heap = self._heap
        return {
            "heap": [(task.id, task.due) for task in heap],
            "parent": [None if i == 0 else (i - 1) >> 1 for i in range(len(heap))],
        }

    def check_invariants(self) -> None:
        heap = self._heap
        by_due: dict[float, list[Task]] = {}
        for i, task in enumerate(heap):
            if task.queue_pos != i:
                raise InvariantError(
                    f"task {task.id} at heap[{i}] records position {task.queue_pos!r}"
                )
            if i > 0:
                parent = heap[(i - 1) >> 1]
                if task.due < parent.due:
                    raise InvariantError(
                        f"heap property broken: heap[{i}]={task.due!r} (task {task.id}) is "
                        f"earlier than its parent heap[{(i - 1) >> 1}]={parent.due!r}"
                    )
            by_due.setdefault(task.due, []).append(task)
        if set(by_due) != set(self._points):
            raise InvariantError("the heap's due times and the time-point dict disagree")
        for due, point in self._points.items():
            if isinstance(point, TimePoint):
                if len(point) < 2:
                    raise InvariantError(f"time point {due!r} holds {len(point)} task(s) as a list")
                tasks = list(point)
            elif isinstance(point, Task):
                tasks = [point]
            else:
                raise InvariantError(f"time point {due!r} holds {type(point).__name__}")
            in_heap = by_due[due]
            if len(in_heap) != len(tasks) or {id(t) for t in in_heap} != {id(t) for t in tasks}:
                raise InvariantError(f"time point {due!r} disagrees with the heap's entries")
            for task in tasks:
                if task.due != due:
                    raise InvariantError(f"task {task.id} due {task.due!r} stored at {due!r}")
        self._check_index()
