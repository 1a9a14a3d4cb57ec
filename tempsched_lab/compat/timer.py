"""``ts.timer``: the reference's queue introspection, read-only, with its types and lengths."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sortedcontainers import SortedDict

    from ..core.ports import FacadeHost
    from ..core.task import Task
    from .facade import TemporalScheduler

__all__ = ["TimerView"]

#: the reference's default "don't wait" threshold (its ``time_epsilon``), in seconds
_REFERENCE_EPSILON = 0.01

_READ_ONLY = (
    "ts.timer is a read-only snapshot of the queue; change tasks with ts.schedule_task(), "
    "ts.cancel_task() and ts.shutdown(), or through ts.scheduler"
)

#: What to use instead of the reference's timer internals that are not mirrored.
_INSTEAD = {
    "executors": "the runs in flight: ts.scheduler.running (a count) and ts.scheduler.moment()",
    "executors_mutex": "the scheduler's lock is internal; ts.scheduler.moment() is consistent",
    "current_mutex": "the scheduler's lock is internal; ts.scheduler.moment() is consistent",
    "timer_event": "the worker is woken by the scheduler; nothing to set",
    "task_id": "task IDs are returned by ts.schedule_task()",
    "schedule_event": "ts.schedule_task()",
    "cancel_event": "ts.cancel_task()",
    "status": "ts.status()",
    "shutdown": "ts.shutdown()",
    "start": "the worker starts with the scheduler",
    "run": "the worker starts with the scheduler",
    "TimerExecutor": "runs are started by the executor (TemporalScheduler(executor=...))",
}


class TimerView:
    """The reference's ``ts.timer``, read-only: its queue as the reference shows it.

    Each attribute is read under the scheduler's lock, with the reference's
    types: :attr:`events` (a ``SortedDict`` of the later time points: time ->
    list of action dicts), :attr:`current_event_actions` (the action dicts at
    the head time), :attr:`current_time` (the head time or ``None``),
    :attr:`running` and :attr:`dontwait_threshold`; plus ``is_alive()`` and
    ``join()`` of the reference's timer thread. Times are on the ``time.time()``
    scale; a periodic task whose run is in flight is shown at its next due
    time, where the reference has already re-queued it. The containers are
    snapshots that refuse changes; so does the view.
    """

    __slots__ = ("_facade",)

    def __init__(self, facade: TemporalScheduler) -> None:
        object.__setattr__(self, "_facade", facade)

    @property
    def events(self) -> SortedDict:
        """The time points after the head: ``SortedDict`` time -> list of action dicts."""
        return _frozen_sorted_dict()(dict(self._points()[1:]))

    @property
    def current_event_actions(self) -> list[dict[str, Any]]:
        """The action dicts due at the head time (``[]`` when nothing is pending)."""
        points = self._points()
        return points[0][1] if points else _FrozenList()

    @property
    def current_time(self) -> float | None:
        """The head time (``time.time()`` scale), or ``None`` when nothing is pending."""
        points = self._points()
        return points[0][0] if points else None

    @property
    def running(self) -> bool:
        """``True`` until :meth:`TemporalScheduler.shutdown`."""
        return not self._facade.scheduler.closed

    @property
    def dontwait_threshold(self) -> float:
        """The ``time_epsilon`` given (the reference's default: 0.01 s); we never fire early."""
        given = self._facade._epsilon_given
        return _REFERENCE_EPSILON if given is None else given

    def is_alive(self) -> bool:
        """``True`` until shut down and every run in flight has finished (the timer thread)."""
        scheduler = self._facade.scheduler
        return not scheduler.closed or scheduler.running > 0

    def join(self, timeout: float | None = None) -> None:
        """Wait until :meth:`is_alive` is ``False`` (after a shutdown), or ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        facade = self._facade
        facade._done.wait(timeout)
        if facade.scheduler.has_worker and facade.scheduler.closed:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            facade.scheduler.wait_idle(left)

    def _points(self) -> list[tuple[float, list[dict[str, Any]]]]:
        """Every time point, head first, as the reference's (time, action dicts)."""
        facade = self._facade
        offset = 0.0 if facade._wall is None else facade._wall.offset
        return [
            (_wall_key(group[0], offset), _FrozenList(_action(f, offset) for f in group))
            for group in _grouped(_records(facade._port))
        ]

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "dontwait_threshold":
            raise AttributeError(
                f"ts.timer.dontwait_threshold: {_READ_ONLY}; pass TemporalScheduler("
                "time_epsilon=...) instead (the scheduler never fires early anyway)"
            )
        raise AttributeError(f"ts.timer.{name}: {_READ_ONLY}")

    def __getattr__(self, name: str) -> Any:
        instead = _INSTEAD.get(name)
        if instead is not None:
            raise AttributeError(
                f"ts.timer.{name}: the reference's timer internals are not mirrored; use {instead}"
            )
        raise AttributeError(
            f"ts.timer.{name}: not mirrored. ts.timer offers events, current_event_actions, "
            "current_time, running, dontwait_threshold, is_alive() and join(); the whole "
            "scheduler is ts.scheduler"
        )

    def __repr__(self) -> str:
        return f"<TimerView of {self._facade!r}>"


#: The fields of one task read under the lock: id, action, period, due, runs, last_due,
#: wall, comment, args, kwargs.
_Fields = tuple[int, Any, Any, float, int, Any, Any, Any, Any, Any]


def _records(port: FacadeHost) -> list[tuple[float, _Fields]]:
    """``(due, fields)`` of every pending task, and of every periodic task in flight at its
    next due time (the reference re-queues it when the run starts), read under the lock."""
    out: list[tuple[float, _Fields]] = port.read_records(_collect)
    out.sort(key=lambda item: item[0])  # stable: each time point keeps its insertion order
    return out


def _collect(points: Iterable[tuple[float, Iterable[Task]]], running: Iterable[Task]) -> Any:
    """The fields of the pending tasks and of the periodic runs in flight (lock held)."""
    out = [(due, _fields_of(task, due)) for due, point in points for task in point]
    for task in list(running):
        nxt = task.next_due() if task.periodic and task.period is not None else None
        if nxt is not None:
            out.append((nxt, _fields_of(task, nxt)))
    return out


def _fields_of(task: Task, due: float) -> _Fields:
    return (task.id, task.action, task.period, due, task.runs, task.last_due,
            getattr(task, "wall", None), getattr(task, "comment", None), task.args,
            task.kwargs)  # fmt: skip


def _grouped(records: list[tuple[float, _Fields]]) -> list[list[_Fields]]:
    """The records' fields grouped by due time (records sorted by due time)."""
    groups: list[list[_Fields]] = []
    last = None
    for due, fields in records:
        if groups and due == last:
            groups[-1].append(fields)
        else:
            groups.append([fields])
        last = due
    return groups


def _wall_key(fields: _Fields, offset: float) -> float:
    """The reference's time of a task: its ``absolute_time`` as given before its first run."""
    _, _, _, due, runs, _, wall, _, _, _ = fields
    return wall if wall is not None and runs == 0 else due - offset


def _action(fields: _Fields, offset: float) -> dict[str, Any]:
    """One task as the reference's action dict (same keys, same order), read-only."""
    task_id, action, period, due, runs, last_due, wall, comment, args, kwargs = fields
    if comment is None and period is not None and runs:
        comment = ""  # the reference re-queues a periodic task with comment "" after a run
    return _FrozenDict(
        action=action,
        period=period,
        current_execution=wall if wall is not None and runs == 0 else due - offset,
        last_execution=None if last_due is None or period is None else last_due - offset,
        id=task_id,
        running=False,  # the reference never sets it
        comment=comment,
        args=args,
        kwargs={} if kwargs is None else kwargs,
    )


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError(_READ_ONLY)


class _FrozenList(list):  # type: ignore[type-arg]
    """A list that refuses changes (copies and pickles are plain lists)."""

    __slots__ = ()
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (list(self),))


class _FrozenDict(dict):  # type: ignore[type-arg]
    """A dict that refuses changes (copies and pickles are plain dicts)."""

    __slots__ = ()
    pop = popitem = clear = update = setdefault = _refuse
    __setitem__ = __delitem__ = __ior__ = _refuse

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (dict, (dict(self),))


_SORTED_DICT_CLASS: list[type] = []


def _frozen_sorted_dict() -> type:
    """The read-only ``SortedDict`` subclass, built once (sortedcontainers imported lazily)."""
    if _SORTED_DICT_CLASS:
        return _SORTED_DICT_CLASS[0]
    from sortedcontainers import SortedDict

    class FrozenSortedDict(SortedDict):  # type: ignore[misc]
        """A ``SortedDict`` that refuses changes once built (copies are plain SortedDicts)."""

        def __init__(self, data: dict[float, Any]) -> None:
            super().__init__(data)  # filled through SortedDict's own update (class-bound)
            self._frozen = True

        def _guard(self) -> None:
            if getattr(self, "_frozen", False):
                raise TypeError(_READ_ONLY)

        def __setitem__(self, key: Any, value: Any) -> None:
            self._guard()
            super().__setitem__(key, value)

        def __delitem__(self, key: Any) -> None:
            self._guard()
            super().__delitem__(key)

        def update(self, *args: Any, **kwargs: Any) -> None:
            self._guard()
            super().update(*args, **kwargs)

        pop = popitem = clear = setdefault = __ior__ = _refuse

        def copy(self) -> SortedDict:
            return SortedDict(self)

        __copy__ = copy

        def __reduce_ex__(self, protocol: Any) -> Any:
            return (SortedDict, (dict(self),))

    FrozenSortedDict.__qualname__ = "SortedDict"
    _SORTED_DICT_CLASS.append(FrozenSortedDict)
    return FrozenSortedDict
