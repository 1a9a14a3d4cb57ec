"""The Reason Scheduler design: a binary min-heap of jobs with removal by ID.

The heap is a plain Python list managed here (not :mod:`heapq`, which cannot
remove from the middle). Entry ``i`` has its parent at ``(i - 1) // 2`` and its
children at ``2i + 1`` and ``2i + 2``; entries are ordered by ``(due, seq)``
where ``seq`` is an insertion counter, so tasks due at the same instant come
out in insertion order. Each task's position in the array is kept in
``task.slot``, so removal by ID finds its entry in O(1).

Removing entry ``i`` moves the last entry into the hole. That entry came from
another subtree, so it may be *smaller* than its new parent as well as larger
than its new children: it must sift up in the first case and down in the
second. (The published design only sifts down, which leaves the heap broken
whenever the moved entry belongs above its new parent; see ``docs/queues.md``.)

A dict of exact due time -> :class:`~tempsched_lab.queues.base.TimePoint`
answers the decision tree's "is this time point queued, and is the request a
duplicate there?" in O(1), like the other designs.

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
from .base import DueGroup, InvariantError, TimePoint, TimerQueue

__all__ = ["HeapQueue"]

#: One heap entry: (due, insertion sequence, task). ``seq`` is unique, so tuple
#: comparison never reaches the task.
_Entry = tuple[float, int, Task]

_first = itemgetter(0)


class HeapQueue(TimerQueue):
    """Binary min-heap of ``(due, seq, task)`` entries with an O(1) position index.

    Costs: insert O(log n), remove by ID O(log n), pop_due O(log n) per task,
    next_time O(1).

    >>> from tempsched_lab.task import Task
    >>> q = HeapQueue()
    >>> for i, due in enumerate([5.0, 1.0, 3.0]):
    ...     q.insert(Task(i, due, print, (), None, None, None))
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
        self._heap: list[_Entry] = []
        self._points: dict[float, TimePoint] = {}
        self._seq = 0

    # -- heap primitives ----------------------------------------------------------------
    def _sift_up(self, pos: int) -> None:
        """Move the entry at ``pos`` towards the root while it is smaller than its parent."""
        heap = self._heap
        entry = heap[pos]
        while pos > 0:
            parent_pos = (pos - 1) >> 1
            parent = heap[parent_pos]
            if not entry < parent:
                break
            heap[pos] = parent
            parent[2].slot = pos
            pos = parent_pos
        heap[pos] = entry
        entry[2].slot = pos

    def _sift_down(self, pos: int) -> None:
        """Move the entry at ``pos`` towards the leaves while a child is smaller."""
        heap = self._heap
        size = len(heap)
        entry = heap[pos]
        child_pos = 2 * pos + 1
        while child_pos < size:
            right_pos = child_pos + 1
            if right_pos < size and heap[right_pos] < heap[child_pos]:
                child_pos = right_pos
            child = heap[child_pos]
            if not child < entry:
                break
            heap[pos] = child
            child[2].slot = pos
            pos = child_pos
            child_pos = 2 * pos + 1
        heap[pos] = entry
        entry[2].slot = pos

    def _remove_at(self, pos: int) -> Task:
        """Remove the entry at ``pos``, restoring the heap in both directions (O(log n))."""
        heap = self._heap
        task = heap[pos][2]
        last = heap.pop()
        if pos < len(heap):
            heap[pos] = last
            last[2].slot = pos
            if pos > 0 and last < heap[(pos - 1) >> 1]:
                self._sift_up(pos)  # the moved entry belongs above its new parent
            else:
                self._sift_down(pos)
        task.slot = None
        return task

    # -- TimerQueue ---------------------------------------------------------------------
    def _add(self, task: Task) -> None:
        due = task.due
        self._heap.append((due, self._seq, task))
        self._seq += 1
        self._sift_up(len(self._heap) - 1)
        point = self._points.get(due)
        if point is None:
            self._points[due] = TimePoint((task,))
        else:
            point.add(task)

    def _discard(self, task: Task) -> None:
        pos = task.slot
        if not isinstance(pos, int) or pos >= len(self._heap) or self._heap[pos][2] is not task:
            raise InvariantError(f"task {task.id} has no valid heap position ({pos!r})")
        self._remove_at(pos)
        point = self._points[task.due]
        point.discard(task)
        if not point:
            del self._points[task.due]

    def tasks_at(self, due: float) -> TimePoint | None:
        return self._points.get(due)

    def head_time(self) -> float | None:
        heap = self._heap
        return heap[0][0] if heap else None

    def next_time(self) -> float | None:
        heap = self._heap
        return heap[0][0] if heap else None

    def head_size(self) -> int:
        heap = self._heap
        return len(self._points[heap[0][0]]) if heap else 0

    def pop_due(self, now: float) -> list[DueGroup]:
        groups: list[DueGroup] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            due = heap[0][0]
            point = self._points.pop(due)
            # The heap yields the same tasks in (due, seq) order = the point's order.
            for _ in range(len(point)):
                self._remove_at(0)
            groups.append(DueGroup(due, tuple(point)))
        return self._forget(groups)

    def points(self) -> Iterator[tuple[float, TimePoint]]:
        yield from sorted(self._points.items(), key=_first)

    def picture(self) -> dict[str, Any]:
        """The heap in array order with parent links, for drawing it as a tree.

        ``heap[i]`` is ``(task_id, due)``; ``parent[i]`` is the index of its
        parent (``None`` for the root); ``seq[i]`` the tie-breaking insertion number.
        """
        heap = self._heap
        return {
            "heap": [(task.id, due) for due, _, task in heap],
            "parent": [None if i == 0 else (i - 1) >> 1 for i in range(len(heap))],
            "seq": [seq for _, seq, _ in heap],
        }

    def check_invariants(self) -> None:
        heap = self._heap
        seen_seq: set[int] = set()
        by_due: dict[float, list[tuple[int, Task]]] = {}
        for i, entry in enumerate(heap):
            due, seq, task = entry
            if task.slot != i:
                raise InvariantError(f"task {task.id} at heap[{i}] records slot {task.slot!r}")
            if due != task.due:
                raise InvariantError(f"heap[{i}] keyed {due!r} but task {task.id} due {task.due!r}")
            if seq in seen_seq:
                raise InvariantError(f"sequence number {seq} used twice")
            seen_seq.add(seq)
            if i > 0:
                parent = heap[(i - 1) >> 1]
                if entry < parent:
                    raise InvariantError(
                        f"heap property broken: heap[{i}]={due!r} (task {task.id}) is smaller "
                        f"than its parent heap[{(i - 1) >> 1}]={parent[0]!r}"
                    )
            by_due.setdefault(due, []).append((seq, task))
        if set(by_due) != set(self._points):
            raise InvariantError("the heap's due times and the time-point dict disagree")
        for due, point in self._points.items():
            if not point:
                raise InvariantError(f"empty time point at {due!r}")
            expected = [task for _, task in sorted(by_due[due], key=_first)]
            if len(expected) != len(point) or any(
                a is not b for a, b in zip(expected, point, strict=True)
            ):
                raise InvariantError(f"time point {due!r} disagrees with the heap's order")
        self._check_index()
