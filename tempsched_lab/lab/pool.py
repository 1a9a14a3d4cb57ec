"""A pool of threads simulated in virtual time: the lab's ``"pool"`` and ``"thread"`` executors.

On a :class:`~tempsched_lab.VirtualClock` the scheduler's own ``"pool"`` executor
would run tasks on real threads, whose timing belongs to the operating system:
a run would no longer be a pure function of its seed. :class:`VirtualPool`
plays the same part in virtual time. It is an ordinary launcher factory (the
``executor=`` of :class:`~tempsched_lab.Scheduler` takes any object with
``make_launcher``), built on the runner's hand-over API, the one the Dask
executor uses:

* a dispatched run starts (``runner.handed_over``: the ``start`` row) at once
  if one of the ``workers`` threads is free, else when the first one frees,
  in dispatch order;
* it ends ``duration_of(task)`` virtual seconds later
  (``runner.remote_ended``: the ``finish`` or ``error`` row), when its action
  is called: an action that raises is a failed run. The ends wait in the
  pool's :class:`Calendar`, which the virtual clock drives like a scheduler
  (it is attached to the clock through the clock protocol,
  :class:`~tempsched_lab.time.clock.Drivable`). It is attached before the
  scheduler, so at equal times a thread that frees at *t* takes work
  dispatched at *t*.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> clock = VirtualClock()
>>> pool = VirtualPool(clock, workers=1, duration_of=lambda task: 0.5)
>>> s = Scheduler(clock, executor=pool)
>>> for name in ("a", "b"):
...     _ = s.schedule(print, at=1.0, args=(name,))
>>> clock.run_until_idle()
a
b
2.0
>>> starts = s.log.to_frame().query("kind == 'start'")
>>> starts["t"].tolist(), starts["queue_delay"].tolist()
([1.0, 1.5], [0.0, 0.5])
"""

from __future__ import annotations

import collections
import heapq
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.executors import Launcher
from ..time.clock import Drivable

if TYPE_CHECKING:
    from ..core.runs import Run, Runner
    from ..core.task import Task
    from ..time.clock import VirtualClock

__all__ = ["Calendar", "VirtualPool"]


class Calendar(Drivable):
    """Calls waiting for virtual times, fired by the clock it is attached to (in time order).

    The clock sees it as one more thing to drive: it offers
    :class:`~tempsched_lab.time.clock.Drivable` (``next_fire_time``, ``fire_due``).
    Calls at equal times run in the order they were added; a call added for a
    time already reached runs in the same firing.

    >>> from tempsched_lab import VirtualClock
    >>> clock = VirtualClock()
    >>> calendar = Calendar()
    >>> driver = clock.attach(calendar, "calendar")
    >>> calendar.add(2.0, print, ("two",)); calendar.add(1.0, print, ("one",))
    >>> clock.run_until_idle()
    one
    two
    2.0
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._added = 0
        #: a call that raised (the clock's driving stops there: it is a bug of the caller)
        self.error: BaseException | None = None

    def add(self, t: float, fn: Callable[..., Any], args: tuple[Any, ...] = ()) -> None:
        """Call ``fn(*args)`` when the clock reaches ``t``."""
        heapq.heappush(self._heap, (t, self._added, fn, args))
        self._added += 1

    def __len__(self) -> int:
        return len(self._heap)

    def next_fire_time(self) -> float | None:
        heap = self._heap
        return heap[0][0] if heap else None

    def fire_due(self, now: float) -> None:
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, _, fn, args = heapq.heappop(heap)
            fn(*args)

    def woke(self, now: float, notified: bool, wait: float | None) -> None:
        return None

    def driver_died(self, error: BaseException) -> None:
        self.error = error


class VirtualPool:
    """``workers`` threads simulated on ``clock`` (``None``: a thread per run, no bound).

    Args:
        clock: the virtual clock of the scheduler that will use this pool.
        workers: how many runs may be in flight at once (``None``: no bound).
        duration_of: how many virtual seconds a run of ``task`` takes.
    """

    def __init__(
        self,
        clock: VirtualClock,
        workers: int | None,
        duration_of: Callable[[Task], float],
    ) -> None:
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise ValueError(f"workers={workers!r}: expected a positive int or None")
        self.workers = workers
        self.duration_of = duration_of
        #: the run ends to come, driven by the clock (attached before the scheduler is)
        self.calendar = Calendar()
        self._driver = clock.attach(self.calendar, "lab-pool-calendar")

    def make_launcher(self, runner: Runner, on_idle: Callable[[], None]) -> PoolLauncher:
        """The launcher of one scheduler (the ``executor=`` protocol)."""
        return PoolLauncher(self, runner)

    def close(self) -> None:
        """Detach the calendar from the clock (after the scheduler using the pool)."""
        self._driver.stop()

    def __repr__(self) -> str:
        size = "a thread per run" if self.workers is None else f"{self.workers} threads"
        return f"VirtualPool({size})"


class PoolLauncher(Launcher):
    """Starts runs on free simulated threads; keeps the others waiting in dispatch order."""

    kind = "virtual pool"

    def __init__(self, pool: VirtualPool, runner: Runner) -> None:
        self._pool = pool
        self._runner = runner
        self._waiting: collections.deque[Run] = collections.deque()
        self.in_flight = 0

    def launch(self, runs: Sequence[Run]) -> None:
        self._waiting.extend(runs)
        self._start_waiting()

    def _start_waiting(self) -> None:
        pool, waiting = self._pool, self._waiting
        limit = pool.workers
        while waiting and (limit is None or self.in_flight < limit):
            task, due, dispatched = waiting.popleft()
            started = self._runner.handed_over(task, due, dispatched)
            self.in_flight += 1
            end = started + float(pool.duration_of(task))
            pool.calendar.add(end, self._end, (task, due, started))

    def _end(self, task: Task, due: float, started: float) -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            action: Callable[..., Any] = task.action  # type: ignore[assignment]  # never an Event
            result = action(*task.args, **task.kwargs) if task.kwargs else action(*task.args)
        except BaseException as exc:  # the run failed (on purpose, in a workload)
            error = exc
        self.in_flight -= 1
        self._runner.remote_ended(task, due, started, result, error)
        self._start_waiting()

    def pending_since(self) -> float | None:
        return None  # waiting runs start from the calendar, not from the clock's driver

    def busy(self) -> bool:
        return False  # no thread: runs in flight are the scheduler's own bookkeeping

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None  # the calendar is closed by VirtualPool.close
