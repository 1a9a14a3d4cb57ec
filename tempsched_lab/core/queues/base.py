"""The interface every queue design implements, and the pieces they share.

A queue is a pure data structure: no threads, no clock, no logging. It holds
pending :class:`~tempsched_lab.core.task.Task` records keyed by due time and answers
the questions the shared decision tree asks (:func:`~tempsched_lab.core.decision.classify`),
so every design makes the same decisions; they differ in cost and in how their
state looks (:meth:`TimerQueue.snapshot`).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..decision import Case, classify, request_key, same_request
from ..task import Task, TaskView, make_task

__all__ = [
    "DueGroup",
    "InvariantError",
    "QueueSnapshot",
    "QueueState",
    "TimePoint",
    "TimerQueue",
    "as_point",
    "point_add",
    "point_discard",
]

# A time point with more tasks than this gets a hash index for duplicate look-ups: below it,
# a scan of a few equality tests is cheaper than building and hashing keys.
_INDEX_FROM = 8


class InvariantError(AssertionError):
    """A queue's internal structure is inconsistent (raised by ``check_invariants``)."""


def _key_of(task: Task) -> Any:
    return request_key(task.action, task.args, task.kwargs, task.repeat)


class TimePoint(list[Task]):
    """The tasks due at one instant, in insertion order.

    Duplicate look-ups scan the list while it is short and switch to a hash
    index of the (hashable) duplicate keys once it grows, so same-time inserts
    stay O(1) on average.
    """

    # No __init__ and no __slots__: list's own constructor builds one in C (a Python
    # __init__ doubled the cost of every group fired); the index attributes are class
    # defaults, set per instance only once a time point grows past _INDEX_FROM.
    _index: dict[tuple[Any, ...], Task] | None = None
    _unhashable = 0

    def add(self, task: Task) -> None:
        """Append ``task`` (O(1)); never raises, so it is safe after other structures changed."""
        self.append(task)
        if self._index is not None:
            self._index_one(task)

    def discard(self, task: Task) -> None:
        """Remove ``task`` by identity (O(k) in this time point's size, done in C)."""
        for i, other in enumerate(self):
            if other is task:
                del self[i]
                break
        else:
            raise KeyError(task.id)
        self._index = None  # rebuilt lazily: cheaper than keeping counts of equal keys

    def _index_one(self, task: Task) -> None:
        key = _key_of(task)
        if key is None:
            self._unhashable += 1
            return
        try:
            self._index.setdefault(key, task)  # type: ignore[union-attr]
        except Exception:  # an __eq__ that raises while resolving a hash collision
            self._unhashable += 1

    def find_duplicate(self, action: Any, args: Any, kwargs: Any, repeat: Any) -> Task | None:
        """The first task here equal to the request, or ``None``; never raises.

        Equality that raises or is ambiguous (numpy arrays, DataFrames) counts as
        "not equal". In a large time point with every key hashable, the look-up
        is one dict probe; otherwise the time point is scanned.
        """
        key = request_key(action, args, kwargs, repeat) if len(self) > _INDEX_FROM else None
        if key is not None:
            if self._index is None:
                self._index = {}
                self._unhashable = 0
                for task in self:
                    self._index_one(task)
            if self._unhashable == 0:
                try:
                    found: Task | None = self._index.get(key)
                    return found
                except Exception:
                    pass  # an __eq__ that raises on a collision: fall through to the scan
        for task in self:
            if (
                same_request(task.action, action)
                and same_request(task.repeat, repeat)
                and same_request(task.args, args)
                and same_request(task.kwargs or None, kwargs or None)
            ):
                return task
        return None


# -- time points stored compactly ----------------------------------------------------------
# Every design keeps a mapping of due time -> tasks. Most time points hold a single task, and a
# list per task would cost ~100 bytes, so a lone task is stored bare and becomes a TimePoint only
# when a second task joins (and goes back to bare when one is left).

Points = MutableMapping[float, "Task | TimePoint"]


def point_add(points: Points, due: float, task: Task) -> None:
    """Add ``task`` to the time point at ``due`` (O(1) plus the mapping's insert)."""
    point = points.get(due)
    if point is None:
        points[due] = task
    elif isinstance(point, TimePoint):
        point.add(task)
    else:
        points[due] = TimePoint((point, task))


def point_discard(points: Points, due: float, task: Task) -> bool:
    """Remove ``task`` from the time point at ``due``; True when the time point is gone."""
    point = points[due]
    if type(point) is not TimePoint:
        del points[due]
        return True
    point.discard(task)
    if len(point) == 1:
        points[due] = point[0]
    return False


def as_point(value: Task | TimePoint | None) -> TimePoint | None:
    """A stored time point as a :class:`TimePoint` (a bare task is wrapped)."""
    if value is None or isinstance(value, TimePoint):
        return value
    return TimePoint((value,))


class DueGroup(NamedTuple):
    """Tasks due at one instant, popped together, in insertion order.

    A named tuple: one is built per group fired, and a frozen dataclass costs
    about three times as many instructions to create.
    """

    due: float
    tasks: tuple[Task, ...]


@dataclass(frozen=True, slots=True)
class QueueState:
    """The design-independent state: head time, head task IDs, and every time point.

    ``points`` includes the head as its first entry. Two queues (or a queue and
    a replayed log) are in the same state exactly when their ``QueueState`` s
    are equal.
    """

    head_time: float | None
    head: tuple[int, ...]
    points: tuple[tuple[float, tuple[int, ...]], ...]

    @property
    def size(self) -> int:
        """Number of pending tasks."""
        return sum(len(ids) for _, ids in self.points)

    @classmethod
    def from_points(cls, points: Iterator[tuple[float, Any]] | Any) -> QueueState:
        """Build from ``(time, task_ids)`` pairs sorted by time."""
        pts = tuple((t, tuple(ids)) for t, ids in points if ids)
        if not pts:
            return cls(None, (), ())
        return cls(pts[0][0], pts[0][1], pts)


@dataclass(frozen=True, slots=True)
class QueueSnapshot:
    """A queue's state at one moment: the shared picture plus the design's own.

    ``picture`` holds what is particular to the design (time points, the heap
    array with parent links, the wheel's buckets and cursor) for plots and widgets.
    """

    design: str
    state: QueueState
    tasks: Mapping[int, TaskView] = field(default_factory=dict)
    picture: Mapping[str, Any] = field(default_factory=dict)
    #: the clock value shown to users as ``0.000 s`` (``None``: unknown, e.g. a bare queue)
    time_origin: float | None = None

    @property
    def head_time(self) -> float | None:
        """Due time of the head, or ``None`` when empty."""
        return self.state.head_time


class TimerQueue(abc.ABC):
    """A queue of pending tasks ordered by due time.

    Subclasses implement the structure; the decision tree, the ID index and the
    snapshot's shared part live here. Costs are stated per design, with ``n``
    pending tasks and ``k`` tasks sharing one time point.
    """

    #: Short design name used by ``Scheduler(queue=...)`` and in the log.
    design: str = "abstract"
    #: True when :meth:`check_time` can refuse a time (the scheduler calls it only then).
    checks_times: bool = False
    #: True when :meth:`fire_time` differs from the due time (a wheel rounds it up).
    rounds_times: bool = False

    def __init__(self) -> None:
        #: every pending task by ID (read it, never change it from outside the queue)
        self.index: dict[int, Task] = {}

    # -- the structure (per design) -------------------------------------------------
    @abc.abstractmethod
    def _add(self, task: Task) -> None:
        """Store ``task`` at ``task.due``."""

    @abc.abstractmethod
    def _discard(self, task: Task) -> None:
        """Remove a stored ``task``."""

    @abc.abstractmethod
    def point_at(self, due: float) -> Task | TimePoint | None:
        """What is stored at exactly ``due``: a lone task, a :class:`TimePoint`, or ``None``."""

    def tasks_at(self, due: float) -> TimePoint | None:
        """The tasks pending at exactly ``due``, in insertion order, or ``None``."""
        return as_point(self.point_at(due))

    @abc.abstractmethod
    def head_time(self) -> float | None:
        """The earliest pending due time, or ``None`` when empty."""

    @abc.abstractmethod
    def next_time(self) -> float | None:
        """When the earliest group will fire (>= ``head_time()``), or ``None``."""

    @abc.abstractmethod
    def pop_due(self, now: float) -> list[DueGroup]:
        """Remove and return every group whose fire time is <= ``now``, earliest first."""

    @abc.abstractmethod
    def points(self) -> Iterator[tuple[float, TimePoint]]:
        """Every time point, earliest first."""

    @abc.abstractmethod
    def check_invariants(self) -> None:
        """Raise :class:`InvariantError` if the structure is inconsistent."""

    def picture(self) -> dict[str, Any]:
        """The design's own view for plots; overridden per design."""
        return {}

    def compact(self) -> None:
        """Release memory held for removed tasks (designs that clean up lazily override it)."""
        return None

    # -- shared -------------------------------------------------------------------------
    def classify(
        self,
        due: float,
        now: float,
        action: Any = None,
        args: Any = (),
        kwargs: Any = None,
        period: float | None = None,
        *,
        reject_past: bool = True,
        dedupe: bool = True,
    ) -> tuple[Case, Task | None]:
        """Run the shared decision tree for a request; returns the case and any duplicate.

        ``dedupe=False`` (periodic re-arms) never reports a duplicate. Never raises
        for any arguments: a comparison that fails counts as "not equal".
        """
        request = make_task(-1, due, action, args, kwargs, period) if dedupe else None
        return classify(
            due, now, self.head_time(), self.point_at(due), request, reject_past=reject_past
        )

    def fire_time(self, due: float) -> float:
        """When a task due at ``due`` fires (a wheel rounds it up to its tick)."""
        return due

    @property
    def min_period(self) -> float:
        """The shortest period this design can honour (a wheel cannot fire twice per tick)."""
        return 0.0

    def check_time(self, due: float) -> None:
        """Raise ``ValueError`` if ``due`` cannot be stored (before anything is changed)."""
        return None

    def insert(self, task: Task) -> None:
        """Store a task at ``task.due`` (the decision was taken by :meth:`classify`).

        Either the task is stored everywhere or, if this raises, nowhere.
        """
        self._add(task)  # each design checks what can fail before it changes anything
        self.index[task.id] = task

    def remove(self, task_id: int) -> Task | None:
        """Remove the pending task with this ID; returns it, or ``None`` if not pending."""
        task = self.index.pop(task_id, None)
        if task is not None:
            self._discard(task)
        return task

    def get(self, task_id: int) -> Task | None:
        """The pending task with this ID, or ``None`` (O(1))."""
        return self.index.get(task_id)

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.index

    def head_size(self) -> int:
        """Number of tasks at the head time point."""
        head = self.head_time()
        if head is None:
            return 0
        tasks = self.tasks_at(head)
        return len(tasks) if tasks else 0

    def _forget(self, groups: list[DueGroup]) -> list[DueGroup]:
        for group in groups:
            for task in group.tasks:
                del self.index[task.id]
        return groups

    def state(self) -> QueueState:
        """The design-independent state (see :class:`QueueState`)."""
        return QueueState.from_points((t, [task.id for task in tp]) for t, tp in self.points())

    def advance_to(self, now: float) -> None:
        """Move the design's notion of now forward without firing (a replayed wheel's hand)."""
        return None

    def snapshot(self, time_origin: float | None = None) -> QueueSnapshot:
        """A frozen copy of the state and the design's picture, for plots and replay checks."""
        return QueueSnapshot(
            design=self.design,
            state=self.state(),
            tasks={tid: task.view() for tid, task in self.index.items()},
            picture=self.picture(),
            time_origin=time_origin,
        )

    def _check_index(self, points: Iterable[tuple[float, TimePoint]] | None = None) -> None:
        """Every stored task is indexed and vice versa (``points``: the stored points, if
        reading :meth:`points` would change the structure)."""
        stored = [task for _, tp in (self.points() if points is None else points) for task in tp]
        if len(stored) != len(self.index):
            raise InvariantError(f"{len(stored)} stored tasks but {len(self.index)} indexed")
        for task in stored:
            if self.index.get(task.id) is not task:
                raise InvariantError(f"task {task.id} stored but not indexed")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self)} pending, head={self.head_time()!r}>"
