"""A read-only mirror of a scheduler that runs elsewhere: what a dashboard reads, fed with rows.

:class:`RemoteScheduler` offers the read surface of a
:class:`~tempsched_lab.Scheduler` that the panels use (``log``, ``moment()``,
``clock``, ``time_scale``, ``queue``, ``closed``, ``name``), so
``Dashboard(remote)`` works unchanged. A feed (a served scheduler's stream,
:func:`~tempsched_lab.remote.attach`, or a spill directory,
:func:`~tempsched_lab.remote.attach_dir`) hands it rows in ``seq`` order from one
thread; it stores them in an ordinary :class:`~tempsched_lab.EventLog` (the
frames are built by the log's own code) and replays them on a queue of the
service's design (:class:`~tempsched_lab.Replayer`), so every
:meth:`~RemoteScheduler.moment` holds the queue exactly as it was after the rows it
shows: one moment per frame, as for a local scheduler.

Rows are applied once, in order: a row already held is skipped (a resumed stream
that repeats one), rows that never come are a named :class:`~.link.Gap`.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, at=1.0, label="hi")
>>> mirror = RemoteScheduler("example")
>>> mirror.apply(s.log.to_frame())
1
>>> m = mirror.moment()
>>> m.seq, m.queue.head_time, mirror.log.to_frame().equals(s.log.to_frame())
(1, 1.0, True)
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.moment import Moment
from ..core.task import CancelResult, TaskView
from ..log.eventlog import EventLog
from ..log.kinds import Kind
from ..reading.replay import Replayer
from ..time.scale import TimeScale
from .link import Gap, Link, LinkState
from .rows import Row, frame_rows, json_row

if TYPE_CHECKING:
    import pandas as pd

    from ..core.queues import TimerQueue

__all__ = ["MirrorClock", "ReadOnlyMirrorError", "RemoteScheduler"]


class ReadOnlyMirrorError(TypeError):
    """A call that changes a scheduler, made on a read-only mirror of it."""


class MirrorClock:
    """The mirrored scheduler's clock as last heard: it runs on from there while the link is live.

    ``now()`` is a reading on the service's scale (``t`` of its rows). While the
    link is down it stays at the last reading heard (the mirror cannot know more).

    >>> clock = MirrorClock(100.0)
    >>> clock.hear(102.5, running=False)
    >>> clock.now()
    102.5
    """

    #: a mirror's clock is never stepped from here
    virtual = False

    def __init__(self, origin: float = 0.0) -> None:
        self.origin = float(origin)
        self._at = self.origin
        self._local: float | None = None  # time.monotonic() when heard, while it runs on
        self._lock = threading.Lock()

    def hear(self, t: float, *, running: bool) -> None:
        """The service's clock read ``t`` just now; it runs on from there if ``running``."""
        with self._lock:
            self._at = max(self._at if self._local is None else self._reading(), float(t))
            self._local = time.monotonic() if running else None

    def stop(self) -> None:
        """Stay at the current reading (the link went down, or the scheduler shut down)."""
        with self._lock:
            self._at = self._reading()
            self._local = None

    def _reading(self) -> float:
        if self._local is None:
            return self._at
        return self._at + (time.monotonic() - self._local)

    def now(self) -> float:
        """The service's clock now, as far as the mirror knows."""
        with self._lock:
            return self._reading()

    def __repr__(self) -> str:
        return f"<MirrorClock at {TimeScale(self.origin).at(self.now())}>"


class RemoteScheduler:
    """A read-only mirror of a scheduler elsewhere; see the module docstring.

    Made by :func:`~tempsched_lab.remote.attach` (a served scheduler) and
    :func:`~tempsched_lab.remote.attach_dir` (a spill directory), which start a
    feed thread that calls :meth:`apply`, :meth:`gap` and :meth:`set_link`.

    Args:
        source: where the rows come from (a URL or a directory), for messages.
        name: the mirrored scheduler's name.
        time_origin: its clock's origin (shown as ``0.000 s``).
        design: its queue's design (the picture the queue panel draws).
        canceller: sends a cancel to the service (given with a control token);
            without it :meth:`cancel` raises :class:`ReadOnlyMirrorError`.
        live_clock: the clock runs on between rows while the link is live (a served
            scheduler); otherwise it stays at the last row's time (a spill directory).
        max_rows: hold only the newest ``max_rows`` rows (``None``: every row): older
            ones are dropped as new ones come, and named (:attr:`dropped_rows`, the
            first range of ``history().attrs["gaps"]``).

    >>> m = RemoteScheduler("example", max_rows=0)
    Traceback (most recent call last):
    ...
    ValueError: max_rows=0: expected a positive integer or None
    """

    def __init__(
        self,
        source: str,
        *,
        name: str | None = None,
        time_origin: float = 0.0,
        design: str = "sorteddict",
        canceller: Callable[[int], CancelResult] | None = None,
        live_clock: bool = False,
        max_rows: int | None = None,
    ) -> None:
        if max_rows is not None and (
            isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1
        ):
            raise ValueError(f"max_rows={max_rows!r}: expected a positive integer or None")
        #: the most rows held (``None``: every row)
        self.max_rows = max_rows
        self.source = source
        self.name = name
        self.time_origin = float(time_origin)
        self.clock = MirrorClock(self.time_origin)
        self._lock = threading.Lock()
        self._log_lock = threading.Lock()
        self.log = self._new_log(0)
        #: the logs held before each gap (the rows before it), oldest first
        self.earlier: list[EventLog] = []
        #: every gap met, oldest first
        self.gaps: list[Gap] = []
        self._design = design
        self._replayer = Replayer(self.log.to_frame(), queue=design)
        self._running: dict[int, TaskView] = {}
        self._applied = 0
        self._received_from = 0  # the first seq the mirror held (or would have)
        self._trimmed = 0  # the seq after the rows of the logs dropped whole (_trim)
        self._replayed = 0  # rows the queue has been replayed up to (before _applied)
        self._moments = 0
        self._closed_at: float | None = None
        self._link = Link("connecting")
        self._observers: list[Callable[[Link], Any]] = []
        #: exceptions raised by link observers (each observer that raised is removed)
        self.observer_errors: list[BaseException] = []
        self._canceller = canceller
        self._live_clock = live_clock
        self._stoppers: list[Callable[[], Any]] = []
        #: the feed that fills the mirror (a stream's or a directory's), for tests and tools
        self.feed: Any = None

    # -- what the panels read -------------------------------------------------------------
    @property
    def time_scale(self) -> TimeScale:
        """How this scheduler's times are shown (seconds since its clock's origin)."""
        return TimeScale(self.time_origin)

    @property
    def queue(self) -> TimerQueue:
        """The mirrored queue, as replayed from the rows applied (do not change it)."""
        return self._replayer.queue

    @property
    def closed(self) -> bool:
        """Whether the mirrored scheduler shut down (or the mirror was closed)."""
        return self._closed_at is not None

    @property
    def read_only(self) -> bool:
        """True unless a control token lets :meth:`cancel` reach the service."""
        return self._canceller is None

    @property
    def link(self) -> Link:
        """The link's state now (see :class:`~.link.Link`)."""
        return self._link

    @property
    def applied(self) -> int:
        """``seq`` after the last row applied (rows and gaps): the next row it expects."""
        return self._applied

    def moment(self) -> Moment:
        """One consistent picture: the rows applied so far and the queue right after them."""
        with self._lock:
            self._moments += 1
            self._catch_up()
            return Moment(
                serial=self._moments,
                seq=self._applied,
                now=self.clock.now() if self._closed_at is None else self._closed_at,
                queue=self._replayer.snapshot(),
                running=tuple(self._running.values()),
                closed=self._closed_at is not None,
                time_scale=self.time_scale,
            )

    @property
    def dropped_rows(self) -> Gap | None:
        """The rows dropped to keep at most :attr:`max_rows` (from the first row received to
        the one before the oldest held), or ``None`` while none was dropped."""
        with self._lock:
            oldest = self._trimmed
            for log in [*self.earlier, self.log]:
                if log.dropped:
                    oldest = max(oldest, log.next_seq - len(log))
            if oldest <= self._received_from:
                return None
            return Gap(
                self._received_from,
                oldest - 1,
                f"dropped from the mirror, which keeps the newest {self.max_rows:,} rows "
                "(max_rows)",
            )

    def history(self) -> pd.DataFrame:
        """Every row the mirror holds, across its gaps, as one frame (gaps in ``attrs["gaps"]``,
        the rows :attr:`dropped_rows` first)."""
        from ..log.files.normalize import concat_frames

        frames = [log.to_frame() for log in [*self.earlier, self.log]]
        out = concat_frames(frames)
        out.attrs = dict(frames[-1].attrs)
        dropped = self.dropped_rows
        gaps = ([] if dropped is None else [dropped]) + list(self.gaps)
        out.attrs["gaps"] = [(g.first, g.last, g.why) for g in gaps]
        return out

    # -- what a feed calls ----------------------------------------------------------------
    def apply(self, frame: pd.DataFrame) -> int:
        """Apply the rows of ``frame`` (a log frame: consecutive ``seq``, clock times on the
        service's scale); returns how many were new.

        Rows already applied are skipped; rows between the last applied and the frame's
        first are a gap (``rows never received``).
        """
        if not len(frame):
            return 0
        first = int(frame["seq"].iloc[0])
        skip = max(self._applied - first, 0)
        return self.apply_rows(first + skip, frame_rows(frame.iloc[skip:]))

    def apply_json(self, rows: Sequence[Mapping[str, Any]], time_origin: float) -> int:
        """Apply row objects of the wire (clock times in seconds since ``time_origin``)."""
        if not rows:
            return 0
        first = int(rows[0]["seq"])
        if [row["seq"] for row in rows] != list(range(first, first + len(rows))):
            raise ValueError(f"rows from seq {first}: their seq numbers do not follow each other")
        skip = max(self._applied - first, 0)
        return self.apply_rows(first + skip, [json_row(r, time_origin) for r in rows[skip:]])

    def apply_rows(self, first: int, rows: Sequence[Row]) -> int:
        """Apply stored rows (:func:`~.rows.stored_row`'s tuples), the first with ``seq``
        ``first``; returns how many were new.

        Only stored here: the queue is replayed up to them when a moment is taken
        (:meth:`moment`, at most a dashboard's rate), not per row (a frame per batch of
        rows cost ~100 ms here; the stream then fell behind a service at 200 rows/s).
        """
        if first > self._applied:
            self.gap(self._applied, first - 1, "rows never received")
        with self._lock:
            skip = self._applied - first
            if skip >= len(rows):
                return 0
            new = rows[max(skip, 0) :]
            step = len(new) if self.max_rows is None else max(1, self.max_rows // 2)
            for at in range(0, len(new), step):
                piece = new[at : at + step]
                if self.max_rows is not None and (
                    self._applied + len(piece) - self._replayed > self.max_rows
                ):
                    self._catch_up()  # replayed before the log may drop them
                with self._log_lock:
                    for row in piece:
                        self.log.append(row)
                self._applied += len(piece)
            self._trim()
        last_t = new[-1][1]  # COMMON: t, wall, thread
        self.clock.hear(last_t, running=self._live_clock and self._link.state in ("live", "gap"))
        return len(new)

    def _catch_up(self) -> None:
        """Replay the queue (and the runs in flight) up to the last row applied (lock held)."""
        if self._replayed >= self._applied:
            return
        frame = self.log.to_frame(self._replayed, self._applied)
        self._replayer.extend(frame)
        self._track_runs(frame)
        self._replayed = self._applied

    def _track_runs(self, frame: pd.DataFrame) -> None:
        """Runs in flight: dispatched, not yet finished (a dispatch row adds, an end removes)."""
        import numpy as np

        kinds = frame["kind"].astype(str).to_numpy()
        for i in np.flatnonzero(np.isin(kinds, list(_RUN_KINDS))).tolist():
            kind = kinds[i]
            if kind == Kind.SHUTDOWN:
                if frame["result"].iloc[i] == "restarted":  # the previous process's runs: gone
                    self._running.clear()
                continue
            tid = frame["task_id"].iloc[i]
            if tid is None or tid != tid:
                continue
            tid = int(tid)
            if kind == Kind.DISPATCH:
                label = frame["label"].iloc[i]
                period = frame["period"].iloc[i]
                self._running[tid] = TaskView(
                    tid,
                    float(frame["due"].iloc[i]),
                    "" if label is None or label != label else str(label),
                    "",
                    None if period is None or math.isnan(period) else float(period),
                )
            else:
                self._running.pop(tid, None)

    def _trim(self) -> None:
        """Drop the oldest logs held before gaps while more than :attr:`max_rows` rows are held
        (the current log bounds itself: lock held)."""
        if self.max_rows is None:
            return
        while self.earlier and sum(len(log) for log in [*self.earlier, self.log]) > self.max_rows:
            self._trimmed = self.earlier.pop(0).next_seq

    def begin_at(self, seq: int) -> None:
        """Hold no row before ``seq`` (a mirror attached from now on, not from the first row):
        the queue it replays holds only the tasks scheduled from there."""
        with self._lock:
            if self._applied:
                raise ValueError(f"seq={seq!r}: the mirror holds rows already")
            self.log = self._new_log(seq)
            self._applied = self._replayed = self._received_from = seq

    def gap(self, first: int, last: int, why: str, *, at_most: bool = False) -> None:
        """Rows ``first..last`` will never come: name them and go on after them
        (``at_most``: not every number of the range was a row)."""
        with self._lock:
            first = max(first, self._applied)
            if last < first:
                return
            gap = Gap(first, last, why, at_most)
            self.gaps.append(gap)
            self._catch_up()  # the rows before the gap, while their log is the current one
            if len(self.log):
                self.earlier.append(self.log)
            self.log = self._new_log(last + 1)
            self._applied = self._replayed = last + 1
            self._trim()
        self.set_link(Link("gap", since=self.clock.now(), gap=gap))

    def set_link(self, link: Link) -> None:
        """The link changed: keep ``link`` and tell the observers (errors are kept, not raised)."""
        if link.gap is None and link.state != "gap" and self.gaps:
            link = Link(
                link.state, link.since, self.gaps[-1], link.why, link.attempts, link.restarted
            )
        if link.state in ("reconnecting", "failed"):
            self.clock.stop()
        self._link = link
        for observer in list(self._observers):
            try:
                observer(link)
            except Exception as exc:  # an observer's bug must not stop the feed
                self.observer_errors.append(exc)
                self._observers.remove(observer)

    def end(self, why: str, *, restarted: bool = False, failed: bool = False) -> None:
        """The mirrored scheduler shut down (or the replay ended, or the service restarted
        with a new log: ``restarted``): the mirror is closed (its link ``closed``, or
        ``failed`` when what it read cannot be followed: ``failed``)."""
        self.clock.stop()
        with self._lock:
            if self._closed_at is not None:
                return  # the first reason stays
            self._closed_at = self.clock.now()
            self._running.clear()
        state: LinkState = "failed" if failed else "closed"
        self.set_link(Link(state, since=self._closed_at, why=why, restarted=restarted))

    def on_link(self, callback: Callable[[Link], Any]) -> Callable[[], None]:
        """Call ``callback(link)`` (from the feed's thread) at each change; returns a remover."""
        self._observers.append(callback)

        def remove() -> None:
            if callback in self._observers:
                self._observers.remove(callback)

        return remove

    def add_stopper(self, stop: Callable[[], Any]) -> None:
        """Something :meth:`close` stops (a feed thread)."""
        self._stoppers.append(stop)

    def _new_log(self, first: int) -> EventLog:
        return EventLog(
            self.max_rows, lock=self._log_lock, time_origin=self.time_origin, first_seq=first
        )

    # -- what a mirror does not do ---------------------------------------------------------
    def _refuse(self, what: str) -> ReadOnlyMirrorError:
        return ReadOnlyMirrorError(
            f"{what}: this is a read-only mirror of {self.source}; "
            + (
                "only cancel reaches the service"
                if self._canceller is not None
                else "attach with control_token= to cancel"
            )
        )

    def schedule(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: a mirror does not schedule (schedule in the service itself)."""
        raise self._refuse("schedule")

    def schedule_decision(self, *args: Any, **kwargs: Any) -> Any:
        """Refused, like :meth:`schedule`."""
        raise self._refuse("schedule_decision")

    def cancel(self, task_id: int) -> CancelResult:
        """Cancel task ``task_id`` in the service (needs a control token)."""
        if isinstance(task_id, bool) or not isinstance(task_id, int):
            raise TypeError(f"task_id={task_id!r}: expected an int")
        if self._canceller is None:
            raise self._refuse("cancel")
        return self._canceller(task_id)

    def close(self) -> None:
        """Stop following (the service goes on); the mirror keeps what it holds."""
        for stop in list(self._stoppers):
            stop()
        self.end("the mirror was closed")

    def shutdown(self, wait: bool = True) -> None:
        """Close the mirror (what a dashboard calls when its page goes): the service goes on."""
        self.close()

    def __enter__(self) -> RemoteScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<RemoteScheduler of {self.source}: {self._applied:,} rows, "
            f"{self._link.text(self.time_scale)}>"
        )


_RUN_KINDS = frozenset((Kind.DISPATCH, Kind.FINISH, Kind.ERROR, Kind.EVENT_SET, Kind.SHUTDOWN))
