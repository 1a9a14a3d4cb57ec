"""One frame of a scheduler: a :class:`~tempsched_lab.Moment` and what panels derive from it.

A dashboard frame never mixes two instants. The refresher takes one
:meth:`Scheduler.moment <tempsched_lab.Scheduler.moment>` per round (under the
scheduler's lock: log position, queue, runs in flight, clock reading) and wraps
it in a :class:`Scene`. Every panel renders from that scene: the queue from
``scene.queue``, times through ``scene.scale``, and log rows from
:meth:`Scene.frame` / :meth:`Scene.tail`, which hold exactly the rows with
``seq < scene.seq`` even when the scheduler has logged more since.

:class:`LogSource` is the shared, cached reader behind the scenes of one
dashboard: it converts the log to a DataFrame at most once per new row count,
however many panels ask.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..core.decision import Case

if TYPE_CHECKING:
    from ..core.moment import Moment
    from ..core.queues import QueueSnapshot
    from ..core.scheduler import Scheduler
    from ..time.scale import TimeScale

__all__ = ["LogSource", "Scene", "last_decision"]

#: A tail this much longer than asked is cut from the whole frame instead (a flood since then).
_TAIL_SLACK = 5000


class LogSource:
    """Shared, cached reads of one scheduler's event log for the panels of a dashboard.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> src = LogSource(s)
    >>> _ = s.schedule(print, at=1.0)
    >>> scene = src.scene()
    >>> scene.seq, len(scene.frame()), scene.frame() is scene.frame()
    (1, 1, True)
    """

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self._frame_version = -1

    @property
    def version(self) -> int:
        """Rows ever recorded (``log.next_seq``); -1 when logging is off."""
        log = self.scheduler.log
        return log.next_seq if log.enabled else -1

    @property
    def first_seq(self) -> int:
        """``seq`` of the oldest row kept (above 0 when a bounded log dropped rows, or a
        mirror's log starts after a gap)."""
        return self.scheduler.log.first_seq

    def scene(self) -> Scene:
        """A new :class:`Scene`: one moment of the scheduler, taken now."""
        return Scene(self.scheduler.moment(), self)

    def frame(self, at_least: int = 0) -> pd.DataFrame:
        """The event log as a DataFrame, rebuilt only when it holds fewer than ``at_least`` rows.

        The frame may hold more rows than ``at_least`` (rows logged since);
        :meth:`Scene.frame` cuts it at its moment.
        """
        with self._lock:
            if self._frame is None or self._frame_version < max(at_least, 0):
                version = self.scheduler.log.next_seq
                self._frame = self.scheduler.log.to_frame()
                self._frame_version = version
            return self._frame

    def tail(self, n: int) -> pd.DataFrame:
        """The last ``n`` rows logged so far, without building the whole frame."""
        return self.scheduler.log.tail(n)


class Scene:
    """What one dashboard frame draws: a moment, and the log rows before it (computed once).

    ``scene.moment`` is the :class:`~tempsched_lab.Moment` taken under the
    scheduler's lock; ``serial``, ``seq``, ``now``, ``queue`` and ``closed`` are
    the moment's (rows shown are those with ``seq < scene.seq``); ``scale`` is
    the :class:`~tempsched_lab.TimeScale` every text of the frame uses.
    """

    __slots__ = ("_decisions", "_frame", "moment", "source")

    def __init__(self, moment: Moment, source: LogSource) -> None:
        self.moment = moment
        self.source = source
        self._frame: pd.DataFrame | None = None
        self._decisions: tuple[dict[str, Any] | None, dict[int, int]] | None = None

    @property
    def serial(self) -> int:
        """The moment's serial number (one per moment taken from the scheduler)."""
        return self.moment.serial

    @property
    def seq(self) -> int:
        """Rows recorded at the moment: the frame shows the rows with a smaller ``seq``."""
        return self.moment.seq

    @property
    def now(self) -> float:
        """The clock reading at the moment."""
        return self.moment.now

    @property
    def queue(self) -> QueueSnapshot:
        """The queue at the moment."""
        return self.moment.queue

    @property
    def scale(self) -> TimeScale:
        """How this frame shows times (seconds since the clock's origin, or wall clock)."""
        return self.moment.time_scale

    @property
    def closed(self) -> bool:
        """Whether the scheduler was shut down at the moment."""
        return self.moment.closed

    @property
    def logging(self) -> bool:
        """Whether the scheduler keeps a log at all."""
        return bool(self.source.scheduler.log.enabled)

    def frame(self) -> pd.DataFrame:
        """The log rows with ``seq < self.seq``, as a DataFrame (built once per scene)."""
        if self._frame is None:
            full = self.source.frame(at_least=self.seq)
            self._frame = _cut(full, self.seq)
        return self._frame

    def tail(self, n: int) -> pd.DataFrame:
        """The last ``n`` rows before the moment."""
        if self._frame is not None:
            return self._frame.tail(n)
        newer = max(self.source.version - self.seq, 0)
        if newer > _TAIL_SLACK:
            return self.frame().tail(n)
        return _cut(self.source.tail(n + newer), self.seq).tail(n)

    def decisions(self) -> tuple[dict[str, Any] | None, dict[int, int]]:
        """The last decision before the moment (a dict, or None) and ``{case: count}``."""
        if self._decisions is None:
            frame = self.frame()
            self._decisions = (last_decision(frame), case_counts_of(frame))
        return self._decisions

    def __repr__(self) -> str:
        return f"<Scene #{self.serial}: {self.seq} rows, {self.scale.at(self.now)}>"


def _cut(frame: pd.DataFrame, seq: int) -> pd.DataFrame:
    if not len(frame) or int(frame["seq"].iloc[-1]) < seq:
        return frame
    cut = frame[frame["seq"].to_numpy() < seq]
    cut.attrs = dict(frame.attrs)
    return cut


def last_decision(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The newest row of ``frame`` that took a decision (a case 1-8), as a dict.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=2.0)
    >>> _ = s.schedule(print, at=1.0)
    >>> last_decision(s.log.to_frame())["case"]
    3
    """
    if not len(frame):
        return None
    decided = frame["case"].notna().to_numpy()
    if not decided.any():
        return None
    row = frame.iloc[int(decided.nonzero()[0][-1])]
    return {
        "seq": int(row["seq"]),
        "t": float(row["t"]),
        "kind": str(row["kind"]),
        "case": int(row["case"]),
        "task_id": None if pd.isna(row["task_id"]) else int(row["task_id"]),
        "label": None if pd.isna(row["label"]) else str(row["label"]),
        "origin": None if pd.isna(row["origin"]) else str(row["origin"]),
        "due": float(row["due"]),
    }


def case_counts_of(frame: pd.DataFrame) -> dict[int, int]:
    """``{case: count}`` for cases 1-8 (zeros included) from an event-log frame."""
    if not len(frame):
        return {int(c): 0 for c in Case}
    counts = frame["case"].dropna().astype(int).value_counts()
    return {int(c): int(counts.get(int(c), 0)) for c in Case}
