"""tempsched_lab: explore, teach and run temporal scheduling.

The core is :class:`Scheduler`: schedule a callable or a ``threading.Event`` at
an absolute time or after a delay, once or periodically; cancel by ID; every
decision (cases 1-8 of the TemporalScheduler decision tree) and every step is
recorded in an :class:`EventLog` that becomes a pandas DataFrame.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> clock = VirtualClock()
>>> s = Scheduler(clock)
>>> s.schedule_decision(print, delay=1, args=("hello",)).case.short
'nothing scheduled'
>>> clock.run_until_idle()
hello
1.0
"""

from __future__ import annotations

from ._version import __version__
from .core.decision import TREE, Case, Decision
from .core.moment import Moment
from .core.queues import QueueSnapshot, QueueState, TimerQueue, make_queue
from .core.scheduler import PastTimeError, Scheduler, SchedulerClosedError, live_schedulers
from .core.task import CancelResult, Origin, TaskState, TaskStatus, TaskView
from .log.audit import AuditReport, audit
from .log.eventlog import EventLog, Subscription, read_log
from .reading.analysis import case_counts, lateness_summary, periodic_runs, task_history
from .reading.replay import Replayer, replay, replay_snapshot
from .time.clock import Clock, LoopError, RealClock, VirtualClock
from .time.scale import TimeScale, fmt_duration, get_time_style, set_time_style, time_style

__all__ = [
    "TREE",
    "AsyncScheduler",
    "AsyncioClock",
    "AuditReport",
    "CancelResult",
    "Case",
    "Clock",
    "Decision",
    "EventLog",
    "Fleet",
    "LoopError",
    "Moment",
    "Origin",
    "PastTimeError",
    "QueueSnapshot",
    "QueueState",
    "RealClock",
    "RemoteScheduler",
    "Replayer",
    "Scheduler",
    "SchedulerClosedError",
    "Subscription",
    "TaskState",
    "TaskStatus",
    "TaskView",
    "TimeScale",
    "TimerQueue",
    "VirtualClock",
    "__version__",
    "attach",
    "attach_dir",
    "audit",
    "case_counts",
    "fmt_duration",
    "get_time_style",
    "lateness_summary",
    "live_schedulers",
    "make_queue",
    "periodic_runs",
    "read_log",
    "replay",
    "replay_snapshot",
    "set_scale",
    "set_time_style",
    "task_history",
    "time_style",
]


def set_scale(name: str) -> None:
    """Make every widget and figure made from now on ``name`` size, beside :func:`set_time_style`.

    ``"default"`` (no text under 12 px) or ``"projector"`` (none under 16 px, for a class at
    the back of a room). A widget given ``scale=`` keeps its own; the projector toggle of a
    dashboard still switches it.

    >>> set_scale("projector")
    >>> from tempsched_lab.plots.style import current_scale
    >>> current_scale()
    'projector'
    >>> set_scale("default")
    """
    from .plots.style import set_type_scale  # matplotlib only when a notebook asks for it

    set_type_scale(name)


def __getattr__(name: str) -> object:
    # The asyncio pieces load asyncio (~25 ms); a script that never uses them does not pay.
    if name in ("AsyncScheduler", "AsyncioClock"):
        from . import aio

        return getattr(aio, name)
    # attaching to a served scheduler loads httpx (~100 ms) only when asked for
    if name in ("attach", "attach_dir", "Fleet", "RemoteScheduler"):
        from . import remote

        return getattr(remote, name)
    raise AttributeError(f"module 'tempsched_lab' has no attribute {name!r}")
