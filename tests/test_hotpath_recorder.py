"""The recorder's hot rows read the queue in place (issue 40): what they record must still be
what the queue says. ``ready_size`` of a ``schedule`` or ``dispatch`` row is read from the
default design's head list (``len(q.head_tasks)``) instead of ``q.head_size()``; these tests
drive a scheduler through random requests, cancels and firings, on every design and on a
subclass that counts its head its own way, and compare each row with the queue's own answer
at the moment the row was written."""

from __future__ import annotations

import threading
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.core.queues import SortedDictQueue, TimerQueue, make_queue
from tempsched_lab.core.recorder import Recorder
from tempsched_lab.core.task import Task
from tempsched_lab.log.eventlog import EventLog


class _OddHead(SortedDictQueue):
    """The default design, but its own ``head_size``: the recorder must ask it."""

    calls = 0

    def head_size(self) -> int:
        type(self).calls += 1
        return super().head_size()


class _Watching(Recorder):
    """Writes the rows as :class:`Recorder` does and keeps, for each ``schedule`` and
    ``dispatch`` row, the queue's own answers right after the row was written."""

    def __init__(self, log: EventLog, queue: TimerQueue) -> None:
        super().__init__(log, queue)
        self.truth: list[tuple[str, int, int]] = []

    def scheduled(self, *args: Any, **kwargs: Any) -> None:
        super().scheduled(*args, **kwargs)
        self.truth.append(("schedule", self._queue.head_size(), len(self._queue)))

    def dispatched(self, now: float, groups: Any, started: Task | None = None) -> None:
        super().dispatched(now, groups, started)
        n = sum(len(group.tasks) for group in groups)
        self.truth.extend([("dispatch", self._queue.head_size(), len(self._queue))] * n)


def job(*args: object) -> None:
    return None


# one step: ("at", time slot, argument) schedules job(argument) at 10 + slot (a repeated
# slot and argument is a duplicate), ("cancel", k) cancels the k-th ID handed out (if any),
# ("advance", dt) moves the virtual clock on, firing what falls due
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("at"), st.integers(0, 6), st.integers(0, 2)),
        st.tuples(st.just("cancel"), st.integers(0, 30)),
        st.tuples(st.just("advance"), st.sampled_from([0.5, 1.0, 2.5])),
    ),
    max_size=40,
)


def _run(queue: str | TimerQueue, steps: list[tuple[Any, ...]]) -> _Watching:
    made: list[_Watching] = []

    def factory(log: EventLog, q: TimerQueue) -> _Watching:
        made.append(_Watching(log, q))
        return made[-1]

    clock = VirtualClock()
    s = Scheduler(clock, queue=queue, recorder=factory)
    ids: list[int] = []
    for step in steps:
        if step[0] == "at":
            ids.append(s.schedule(job, at=clock.now() + 10 + step[1], args=(step[2],)))
        elif step[0] == "cancel":
            if step[1] < len(ids):
                s.cancel(ids[step[1]])
        else:
            clock.advance(step[1])
    rows = [r for r in s.log.rows() if r["kind"] in ("schedule", "dispatch")]
    rec = made[0]
    recorded = [(r["kind"], r["ready_size"], r["queue_size"]) for r in rows]
    assert recorded == rec.truth
    return rec


@settings(max_examples=60, deadline=None)
@given(steps=_steps, design=st.sampled_from(["sorteddict", "heap", "wheel"]))
def test_recorded_head_and_queue_sizes_are_the_queues(
    steps: list[tuple[Any, ...]], design: str
) -> None:
    rec = _run(design, steps)
    # the default design's head is read in place; the others through head_size()
    assert (rec._heads is not None) == (design == "sorteddict")


@settings(max_examples=30, deadline=None)
@given(steps=_steps)
def test_a_design_that_counts_its_head_otherwise_is_asked(steps: list[tuple[Any, ...]]) -> None:
    _OddHead.calls = 0
    queue = _OddHead()
    rec = _run(queue, steps)
    assert rec._heads is None
    rows = sum(1 for kind, _, _ in rec.truth if kind == "schedule")
    assert _OddHead.calls >= 2 * rows  # the recorder's reading and the test's, per row


def test_an_empty_head_reads_zero() -> None:
    """After the last task fired, the head list is empty (not absent): 0, as head_size()."""
    q = make_queue("sorteddict")
    assert isinstance(q, SortedDictQueue) and len(q.head_tasks) == q.head_size() == 0


def test_each_thread_is_named_in_its_rows() -> None:
    """Rows written from two threads carry each one's own name, also when the second thread
    starts after the first ended (a new thread may reuse a dead one's ident)."""
    clock = VirtualClock()
    s = Scheduler(clock)
    names = []
    for i in range(3):
        t = threading.Thread(target=s.schedule, args=(job,), kwargs={"at": 5.0 + i},
                             name=f"caller-{i}")  # fmt: skip
        t.start()
        t.join()
        names.append(t.name)
    s.schedule(job, at=9.0)
    got = [r["thread"] for r in s.log.rows() if r["kind"] == "schedule"]
    assert got == [*names, threading.current_thread().name]
