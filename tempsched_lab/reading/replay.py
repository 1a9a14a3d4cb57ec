"""Rebuild the queue state at any row of an event log, without a scheduler.

The log records every step that changes the queue (schedule decisions that add
a task, dispatches, cancels, shutdown drops), so feeding those steps to an
empty queue of any design reproduces the live state row by row. This is the
history scrubber's engine and the log's completeness test.

>>> from tempsched_lab import Scheduler, VirtualClock, replay
>>> s = Scheduler(VirtualClock())
>>> a = s.schedule(print, at=2.0)
>>> b = s.schedule(print, at=1.0)
>>> replay(s.log.to_frame(), upto=0).head_time
2.0
>>> replay(s.log.to_frame()).head
(1,)
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING

from ..core.decision import Case
from ..core.queues import QueueSnapshot, QueueState, TimerQueue, make_queue
from ..core.task import make_task
from ..log.kinds import Kind

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Replayer", "replay", "replay_snapshot"]

_ADDS = frozenset(int(c) for c in Case if c.adds_task)


#: the per-row arrays a replayer holds
_COLUMNS = (
    "_seq", "_kind", "_case", "_task", "_due", "_t", "_label", "_period", "_result", "_dup",
    "_fire_at",
)  # fmt: skip


def _noop() -> None:  # the action of replayed task stubs
    return None


class Replayer:
    """Steps through a log frame row by row, keeping a queue in the state after each row.

    Moving backwards restarts from the first row. ``queue`` picks the design
    whose picture :meth:`snapshot` shows (``"sorteddict"``, ``"heap"``,
    ``"wheel"`` or an empty queue instance).
    """

    def __init__(self, frame: pd.DataFrame, queue: str | TimerQueue = "sorteddict") -> None:
        import numpy as np

        frame = frame.sort_values("seq", kind="stable")
        self._seq = frame["seq"].to_numpy()
        self._kind = frame["kind"].astype(object).to_numpy()
        self._case = frame["case"].to_numpy(dtype="float64", na_value=math.nan)
        self._task = frame["task_id"].to_numpy(dtype="float64", na_value=math.nan)
        self._due = frame["due"].to_numpy(dtype="float64")
        self._t = frame["t"].to_numpy(dtype="float64")
        self._label = frame["label"].astype(object).to_numpy()
        self._period = frame["period"].to_numpy(dtype="float64")
        self._result = frame["result"].astype(object).to_numpy()
        self._dup = frame["dup_of"].to_numpy(dtype="float64", na_value=math.nan)
        fire_at = frame["fire_at"].to_numpy(dtype="float64")
        self._fire_at = np.where(np.isnan(fire_at), self._due, fire_at)
        self._design = queue
        self._extended = False
        origin = frame.attrs.get("time_origin")
        self._origin: float | None = float(origin) if origin is not None else None
        self._reset()

    def extend(self, frame: pd.DataFrame) -> None:
        """Apply the rows of ``frame`` (later ``seq`` than the rows held), going on from here.

        For a log that grows (a mirror of a served scheduler): the queue goes on from where
        it is instead of replaying from the first row, and the rows applied before are let
        go (memory stays that of the queue): a replay that was extended cannot rewind.
        """
        if not len(frame):
            return
        self.advance_to(None)
        frame = frame.sort_values("seq", kind="stable")
        if len(self._seq) and int(frame["seq"].iloc[0]) <= int(self._seq[-1]):
            raise ValueError(
                f"frame starts at seq {int(frame['seq'].iloc[0])}: expected rows after seq "
                f"{int(self._seq[-1])}"
            )
        new = Replayer(frame, self._design if isinstance(self._design, str) else "sorteddict")
        for name in _COLUMNS:
            setattr(self, name, getattr(new, name))
        self.position = -1
        self._extended = True
        self.advance_to(None)

    def _reset(self) -> None:
        design = self._design
        if isinstance(design, TimerQueue):
            if len(design):
                raise ValueError("replay needs an empty queue instance")
            self.queue = design
        else:
            self.queue = make_queue(design)
        self.position = -1  # index of the last applied row
        self._fire: dict[int, float] = {}  # pending task -> when the live queue fires it
        self._by_fire: list[tuple[float, int]] = []  # heap of (fire time, task); stale allowed

    @property
    def seq(self) -> int | None:
        """``seq`` of the last applied row (``None`` before the first)."""
        return None if self.position < 0 else int(self._seq[self.position])

    def advance_to(self, seq: int | None) -> None:
        """Apply rows up to and including ``seq`` (``None``: every row)."""
        import numpy as np

        if seq is None:
            last = len(self._seq) - 1
        else:
            last = int(np.searchsorted(self._seq, seq, "right")) - 1
        if last < self.position:
            if self._extended:
                raise ValueError("cannot rewind a replay that was extended")
            if isinstance(self._design, TimerQueue):
                raise ValueError("cannot rewind a replay on a queue instance; pass a design name")
            self._reset()
        while self.position < last:
            self.position += 1
            self._apply(self.position)

    def _apply(self, i: int) -> None:
        kind = self._kind[i]
        queue = self.queue
        if kind == Kind.SCHEDULE:
            case = self._case[i]
            if case in _ADDS and math.isnan(self._dup[i]):  # duplicates add nothing
                period = self._period[i]
                label = self._label[i]
                tid = int(self._task[i])
                task = make_task(
                    tid,
                    float(self._due[i]),
                    _noop,
                    (),
                    None,
                    None if math.isnan(period) else float(period),
                    None if label is None or label != label else str(label),
                )
                queue.insert(task)
                fire = float(self._fire_at[i])
                self._fire[tid] = fire
                heapq.heappush(self._by_fire, (fire, tid))
            return
        if kind == Kind.DISPATCH:
            tid = int(self._task[i])
            if tid in queue:
                # The first dispatch row of a batch: the live queue popped the whole batch
                # at once (every task whose fire time had come), before writing these rows.
                # Fire times come from the log, so a log replays the same on any design.
                t = float(self._t[i])
                queue.advance_to(t)  # a wheel's hand stood here when the live queue popped
                by_fire, fires = self._by_fire, self._fire
                while by_fire and by_fire[0][0] <= t:
                    fire, other = heapq.heappop(by_fire)
                    if fires.get(other) == fire:  # else stale: cancelled or re-armed since
                        queue.remove(other)
                        del fires[other]
            return
        if kind == Kind.SHUTDOWN and self._result[i] == "restarted":
            # a service's next process continues its log (log.files.Lineage): the previous
            # process's tasks are gone with it, and task IDs start again at 0
            for tid in list(self._fire):
                queue.remove(tid)
            self._fire.clear()
            self._by_fire.clear()
            return
        if (kind == Kind.CANCEL and self._result[i] == "cancelled") or (
            kind == Kind.SHUTDOWN and self._result[i] == "dropped"
        ):
            tid = int(self._task[i])
            if queue.remove(tid) is not None:
                del self._fire[tid]

    def state(self) -> QueueState:
        """The design-independent state after the last applied row."""
        return self.queue.state()

    def snapshot(self) -> QueueSnapshot:
        """The replayed queue's snapshot (its design's picture included)."""
        return self.queue.snapshot(self._origin)


def replay(frame: pd.DataFrame, upto: int | None = None) -> QueueState:
    """The queue state (head time, head tasks, time points) right after row ``upto``.

    ``upto=None`` replays the whole log. The state is the same for every queue
    design; :func:`replay_snapshot` gives a design's own picture.
    """
    replayer = Replayer(frame)
    replayer.advance_to(upto)
    return replayer.state()


def replay_snapshot(
    frame: pd.DataFrame, upto: int | None = None, queue: str | TimerQueue = "sorteddict"
) -> QueueSnapshot:
    """Like :func:`replay`, with the picture of the chosen queue design."""
    replayer = Replayer(frame, queue)
    replayer.advance_to(upto)
    return replayer.snapshot()
