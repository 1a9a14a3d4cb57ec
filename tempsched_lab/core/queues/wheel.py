"""A hashed timing wheel (Varghese & Lauck 1987; the FreeBSD callout wheel).

Time is cut into ticks of length ``tick`` counted from ``origin``. A job due at
``due`` fires at the first tick not earlier than it,

    ``idx = ceil((due - origin) / tick)``, fire time ``origin + idx * tick`` (>= due),

(the index is then corrected for float rounding, see
:meth:`~TimingWheelQueue.fire_index`) and is stored in bucket ``idx % slots``
of a fixed list of ``slots`` buckets, remembering its *round* ``idx // slots``
(how many full turns of the wheel lie ahead of it). Several rounds share a
bucket: when the hand visits a bucket only the jobs of the current round fire,
later rounds stay in place.

The hand (``cursor``, the next tick to process) moves forward in
:meth:`TimingWheelQueue.pop_due`: every tick from the cursor up to
``floor((now - origin) / tick)`` is processed, so after an oversleep every
skipped bucket is handled at once and nothing waits an extra revolution. Empty
ticks are skipped rather than visited one by one, using a small heap of the
*occupied* ticks (the way a tickless kernel computes its next timer event), so a
jump of a million revolutions costs no more than the jobs it fires.

Each bucket keeps its jobs grouped by round (``{round: jobs}``), so a visit
touches only the jobs firing at that tick; the textbook wheel keeps one
unsorted list per bucket and re-checks every job of every later round at each
visit. To save memory, the jobs of one round are the bare
:class:`~tempsched_lab.core.task.Task` when the tick holds a single job, and a
``{task_id: task}`` dict only once a second job shares the tick (it turns back
into the bare task when it drops to one). ``task.queue_pos`` holds the job's tick
index; the jobs of one tick share a single int object.

A job inserted for a tick the hand has already passed (a late insert) is still
found by the next ``pop_due``: the walk follows the occupied ticks.

Firing is per tick, but groups are reported per *exact* due time, earliest
first and in insertion order, so the firing order is the same as the other
designs'; only the firing *time* is rounded up to the tick
(:meth:`~TimingWheelQueue.fire_time`).

A dict of exact due time -> tasks answers the decision tree's questions in
O(1), like the other designs. As in the sorted dict, a time point holding one
task stores the :class:`~tempsched_lab.core.task.Task` itself, not a
:class:`~tempsched_lab.core.queues.base.TimePoint` list of one;
:meth:`~TimingWheelQueue.tasks_at` wraps it on demand.

Costs (n pending tasks, k tasks at one time point, T occupied ticks, m jobs firing):

=================  ======================================================
insert             O(1) joining an occupied tick, O(log T) opening a new tick
remove by ID       O(1) in the bucket (+ O(k) in the time point)
pop_due            O(m + ticks fired x log T) (+ sorting the dues within a tick)
next_time          O(1) amortised: the top of the occupied-tick heap
=================  ======================================================

``head_time()`` (the exact earliest due, used by the decision tree) is cached;
after the head time point empties it is recomputed as the minimum over the jobs
of the first occupied tick (O(jobs in that tick)).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from numbers import Real
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

__all__ = ["MIN_TICK", "TimingWheelQueue"]

#: The finest tick accepted (1 µs): an epoch-sized clock value (~1.8e9 s) has a float
#: resolution of ~0.24 µs, so finer ticks would round onto each other.
MIN_TICK = 1e-6

_first = itemgetter(0)


def _check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name}={value!r}: expected a real number")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name}={value!r}: expected a finite number")
    return result


class TimingWheelQueue(TimerQueue):
    """Hashed timing wheel: ``slots`` buckets of ``tick`` seconds, jobs keep their round.

    Costs: insert O(1) (O(log T) when it opens a new tick, T occupied ticks),
    remove by ID O(1) (+ O(k) in its time point), pop_due O(jobs fired) plus
    O(log T) per occupied tick fired (empty ticks are skipped), next_time O(1)
    amortised.

    >>> from tempsched_lab.core.task import make_task
    >>> q = TimingWheelQueue(slots=4, tick=1.0)
    >>> for i, due in enumerate([2.5, 0.5, 6.0]):
    ...     q.insert(make_task(i, due, print, (), None, None, None))
    >>> q.head_time(), q.next_time(), q.fire_time(2.5)
    (0.5, 1.0, 3.0)
    >>> q.picture()["buckets"]
    [[], [(1, 0)], [(2, 1)], [(0, 0)]]
    >>> [(g.due, [t.id for t in g.tasks]) for g in q.pop_due(3.0)]
    [(0.5, [1]), (2.5, [0])]
    >>> q.pop_due(5.9), q.next_time()
    ([], 6.0)
    """

    design = "wheel"
    checks_times = True
    rounds_times = True

    def __init__(self, slots: int = 256, tick: float = 0.01, origin: float = 0.0) -> None:
        if isinstance(slots, bool) or not isinstance(slots, int):
            raise ValueError(f"slots={slots!r}: expected an int >= 1")
        if slots < 1:
            raise ValueError(f"slots={slots!r}: expected an int >= 1")
        tick_f = _check_real("tick", tick)
        if not tick_f >= MIN_TICK:
            raise ValueError(
                f"tick={tick!r}: expected at least {MIN_TICK:g} s (finer ticks cannot be told "
                "apart on an epoch-sized clock, and a tick of 0 would never advance)"
            )
        origin_f = _check_real("origin", origin)
        super().__init__()
        self.slots = slots
        self.tick = tick_f
        self.origin = origin_f
        #: bucket b holds {round: jobs} for the ticks idx with idx % slots == b; the
        #: jobs of one tick are a bare Task (one job) or a {task_id: task} dict (2+)
        self._buckets: list[dict[int, Task | dict[int, Task]]] = [{} for _ in range(slots)]
        #: due time -> the lone task due then, or a TimePoint of 2+ in insertion order
        self._points: dict[float, Task | TimePoint] = {}
        #: occupied ticks (may contain ticks emptied by removals: cleaned lazily)
        self._ticks: list[int] = []
        self._queued: set[int] = set()
        self._cursor = 0
        self._head: float | None = None
        self._head_valid = True
        self._stale = 0  # ticks emptied by removals since the last compaction

    # -- ticks ----------------------------------------------------------------------------
    @property
    def cursor(self) -> int:
        """The hand: index of the next tick to process (every earlier tick was processed)."""
        return self._cursor

    def _time_of(self, idx: int) -> float:
        return self.origin + idx * self.tick

    def fire_index(self, due: float) -> int:
        """The tick a job due at ``due`` fires at: the first ``idx`` with fire time >= ``due``.

        Computed as ``ceil((due - origin) / tick)`` and corrected for float rounding
        so that ``origin + idx * tick >= due`` and ``idx`` is the smallest such tick.
        """
        origin, tick = self.origin, self.tick
        try:
            idx = math.ceil((due - origin) / tick)
            while origin + idx * tick < due:
                idx += 1
            while origin + (idx - 1) * tick >= due:
                idx -= 1
        except (ValueError, OverflowError, TypeError) as exc:
            raise ValueError(f"due={due!r}: cannot be placed on the wheel ({exc})") from None
        return idx

    @property
    def min_period(self) -> float:
        """The tick: a periodic task cannot fire more often than once per tick."""
        return self.tick

    def check_time(self, due: float) -> None:
        """Raise ``ValueError`` if ``due`` cannot be placed on the wheel."""
        self.fire_index(due)

    def advance_to(self, now: float) -> None:
        """Move the hand to the first tick after ``now`` (replay: where the live hand was).

        Only an empty stretch of the wheel can be passed this way: ticks still holding
        jobs stop the hand before them, as ``pop_due`` would fire them.
        """
        last = self._last_tick(now)
        first = self._first_tick()
        if last is None:
            return
        if first is not None:
            last = min(last, first - 1)
        if last + 1 > self._cursor:
            self._cursor = last + 1

    def compact(self) -> None:
        """Drop occupied-tick entries left behind by removals (O(T)); done by itself when
        they outnumber the live ticks, so cancelled work never accumulates."""
        buckets, slots = self._buckets, self.slots
        live = [idx for idx in self._ticks if idx // slots in buckets[idx % slots]]
        heapq.heapify(live)
        self._ticks = live
        self._queued = set(live)

    def fire_time(self, due: float) -> float:
        """When a job due at ``due`` fires: ``due`` rounded up to the tick (never earlier).

        >>> TimingWheelQueue(tick=0.25).fire_time(1.1)
        1.25
        """
        return self._time_of(self.fire_index(due))

    def _last_tick(self, now: float) -> int | None:
        """The last tick whose fire time is <= ``now``, or ``None`` if ``now`` is off the scale."""
        time_of = self._time_of
        try:
            idx = math.floor((now - self.origin) / self.tick)
            while time_of(idx + 1) <= now:
                idx += 1
            while time_of(idx) > now:
                idx -= 1
        except (ValueError, OverflowError):
            return None
        return idx

    def _first_tick(self) -> int | None:
        """The earliest occupied tick (dropping ticks emptied by removals), or ``None``."""
        ticks = self._ticks
        buckets = self._buckets
        slots = self.slots
        while ticks:
            idx = ticks[0]
            if idx // slots in buckets[idx % slots]:
                return idx
            heapq.heappop(ticks)
            self._queued.discard(idx)
        return None

    # -- TimerQueue -----------------------------------------------------------------------
    def _add(self, task: Task) -> None:
        due = task.due
        idx = self.fire_index(due)  # may raise: nothing has been changed yet
        slots = self.slots
        bucket = self._buckets[idx % slots]
        rnd = idx // slots
        jobs = bucket.get(rnd)
        if jobs is None:
            bucket[rnd] = task  # a lone job is stored bare: a dict per tick costs memory
            task.queue_pos = idx
            if idx not in self._queued:
                self._queued.add(idx)
                heapq.heappush(self._ticks, idx)
        elif isinstance(jobs, dict):
            task.queue_pos = next(iter(jobs.values())).queue_pos  # share the tick's int object
            jobs[task.id] = task
        else:
            task.queue_pos = jobs.queue_pos
            bucket[rnd] = {jobs.id: jobs, task.id: task}
        point_add(self._points, due, task)
        if self._head_valid and (self._head is None or due < self._head):
            self._head = due

    def _discard(self, task: Task) -> None:
        idx = task.queue_pos
        if not isinstance(idx, int):
            raise InvariantError(f"task {task.id} has no wheel tick ({idx!r})")
        bucket = self._buckets[idx % self.slots]
        rnd = idx // self.slots
        jobs = bucket.get(rnd)
        if jobs is task:
            del bucket[rnd]  # its tick stays in the heap and is dropped lazily
            self._stale += 1
            if self._stale > 1024 and self._stale > len(self._ticks) // 2:
                self._stale = 0
                self.compact()  # amortised O(1): at most once per len(ticks)/2 removals
        elif isinstance(jobs, dict) and jobs.get(task.id) is task:
            del jobs[task.id]
            if len(jobs) == 1:
                bucket[rnd] = next(iter(jobs.values()))
        else:
            raise InvariantError(f"task {task.id} not found at tick {idx}")
        task.queue_pos = None
        due = task.due
        if not point_discard(self._points, due, task):
            return
        if not self._points:
            self._head, self._head_valid = None, True
        elif due == self._head:
            self._head_valid = False

    def point_at(self, due: float) -> Task | TimePoint | None:
        return self._points.get(due)

    def head_time(self) -> float | None:
        if not self._head_valid:
            idx = self._first_tick()
            if idx is None:
                self._head = None
            else:
                jobs = self._buckets[idx % self.slots][idx // self.slots]
                if isinstance(jobs, dict):
                    self._head = min(task.due for task in jobs.values())
                else:
                    self._head = jobs.due
            self._head_valid = True
        return self._head

    def next_time(self) -> float | None:
        idx = self._first_tick()
        return None if idx is None else self._time_of(idx)

    def head_size(self) -> int:
        head = self.head_time()
        if head is None:
            return 0
        point = self._points[head]
        return len(point) if isinstance(point, TimePoint) else 1

    def pop_due(self, now: float) -> list[DueGroup]:
        groups: list[DueGroup] = []
        if not now > -math.inf:  # -inf or NaN: no tick is <= now
            return groups
        buckets = self._buckets
        slots = self.slots
        points = self._points
        ticks = self._ticks
        time_of = self._time_of
        fired_to: int | None = None
        while True:
            idx = self._first_tick()  # jump the hand over empty ticks
            if idx is None or time_of(idx) > now:
                break
            heapq.heappop(ticks)
            self._queued.discard(idx)
            # Only this tick's round fires; later rounds in the same bucket stay.
            jobs = buckets[idx % slots].pop(idx // slots)
            if isinstance(jobs, dict):
                dues: Any = sorted({task.due for task in jobs.values()})
            else:
                dues = (jobs.due,)
            for due in dues:
                point = points.pop(due)
                if isinstance(point, TimePoint):
                    for task in point:
                        task.queue_pos = None
                    groups.append(DueGroup(due, tuple(point)))
                else:
                    point.queue_pos = None
                    groups.append(DueGroup(due, (point,)))
            fired_to = idx
        last = self._last_tick(now)  # every tick up to here has now been processed
        if last is None:
            last = fired_to
        if last is not None and last + 1 > self._cursor:
            self._cursor = last + 1
        if groups:
            if points:
                self._head_valid = False
            else:
                self._head, self._head_valid = None, True
        return self._forget(groups)

    def points(self) -> Iterator[tuple[float, TimePoint]]:
        for due, point in sorted(self._points.items(), key=_first):
            yield due, as_point(point)  # type: ignore[misc]

    def picture(self) -> dict[str, Any]:
        """The wheel: ``buckets[b]`` lists ``(task_id, round)`` by round, then insertion order."""
        return {
            "slots": self.slots,
            "tick": self.tick,
            "origin": self.origin,
            "cursor": self._cursor,
            "buckets": [
                [(task.id, rnd) for rnd in sorted(bucket) for task in _jobs(bucket[rnd])]
                for bucket in self._buckets
            ],
        }

    def check_invariants(self) -> None:
        if len(self._buckets) != self.slots:
            raise InvariantError(f"{len(self._buckets)} buckets for slots={self.slots}")
        slots = self.slots
        stored = 0
        occupied: set[int] = set()
        for b, bucket in enumerate(self._buckets):
            for rnd, jobs in bucket.items():
                if isinstance(jobs, dict):
                    if len(jobs) < 2:
                        raise InvariantError(
                            f"round {rnd} of bucket {b} holds a dict of {len(jobs)}"
                        )
                    for task_id, task in jobs.items():
                        if task.id != task_id:
                            raise InvariantError(f"task {task.id} filed under ID {task_id}")
                elif not isinstance(jobs, Task):
                    raise InvariantError(f"round {rnd} of bucket {b} holds {type(jobs).__name__}")
                idx = rnd * slots + b
                occupied.add(idx)
                for task in _jobs(jobs):
                    stored += 1
                    if task.queue_pos != idx:
                        raise InvariantError(
                            f"task {task.id} in tick {idx} records tick {task.queue_pos!r}"
                        )
                    if self.fire_index(task.due) != idx:
                        raise InvariantError(
                            f"task {task.id} due {task.due!r} filed at tick {idx}, "
                            f"expected {self.fire_index(task.due)}"
                        )
                    point = self._points.get(task.due)
                    if point is None or not any(t is task for t in _tasks(point)):
                        raise InvariantError(f"task {task.id} missing from its time point")
        in_points = 0
        for due, point in self._points.items():
            if isinstance(point, TimePoint):
                if len(point) < 2:
                    raise InvariantError(f"time point {due!r} holds {len(point)} task(s) as a list")
            elif not isinstance(point, Task):
                raise InvariantError(f"time point {due!r} holds {type(point).__name__}")
            for task in _tasks(point):
                if task.due != due:
                    raise InvariantError(f"task {task.id} due {task.due!r} stored at {due!r}")
                in_points += 1
        if in_points != stored:
            raise InvariantError(f"{stored} tasks in buckets but {in_points} in time points")
        if set(self._ticks) != self._queued or len(self._ticks) != len(self._queued):
            raise InvariantError("the occupied-tick heap and its set disagree")
        if not occupied <= self._queued:
            raise InvariantError(f"occupied ticks {sorted(occupied - self._queued)} not queued")
        ticks = self._ticks
        for i in range(1, len(ticks)):
            if ticks[i] < ticks[(i - 1) >> 1]:
                raise InvariantError(f"occupied-tick heap broken at {i}")
        if self._head_valid:
            expected = min(self._points) if self._points else None
            if self._head != expected:
                raise InvariantError(f"cached head {self._head!r} but earliest due {expected!r}")
        self._check_index()


def _jobs(jobs: Task | dict[int, Task]) -> Any:
    """The tasks of one tick: a bare task, or the values of its ``{task_id: task}`` dict."""
    return jobs.values() if isinstance(jobs, dict) else (jobs,)


def _tasks(point: Task | TimePoint) -> Any:
    """The tasks of one time point: a bare task, or its :class:`TimePoint` list."""
    return point if isinstance(point, TimePoint) else (point,)
